// SPDX-License-Identifier: MIT
/*
 * The kfd platform in the VM with Debian's real amdgpu.ko (no GPU: /dev/kfd
 * exists, the KFD process has no device) and xsched_kfd.ko with its kfd
 * backend:
 *
 *   module mode    open (attach through the module) with /dev/kfd opened by
 *                  the library and with the caller's fd; a non-KFD fd is
 *                  refused with the module's EINVAL (no fallback); a bogus
 *                  ring gives -ENOENT; levels below Lv3 -EOPNOTSUPP.
 *   debugger mode  XSCHED_KFD_FALLBACK=debugger, and automatically when the
 *                  /dev/xsched path does not exist: KFD's real answer to
 *                  DBG_TRAP_ENABLE on the own pid, runtime state, -ENOENT
 *                  for a bogus ring (GET_QUEUE_SNAPSHOT), -EALREADY for a
 *                  second debugger, and after close no state left (KFD says
 *                  "not debug enabled", enable works again, no fd leaked).
 *
 * Suspending a real HSA queue needs an AMD GPU and a HIP program: that is
 * tests/kselftest/xsched_kfd's kfd_hw (make HW=1), not here.
 *
 * Prints "libxsched-kfd-vm: N passed, N failed, N skipped".
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <xsched-kfd.h>

#include "kfd_dbg.h"

static int passed, failed, skipped;
static int cur_failed;

#define CHECK_EQ(got, want) do {						\
	long long _g = (long long)(got), _w = (long long)(want);		\
	if (_g != _w) {								\
		printf("#   %s:%d: %s: expected %lld (%s), got %lld\n",	\
		       __FILE__, __LINE__, #got, _w, #want, _g);		\
		cur_failed = 1;							\
	}									\
} while (0)

static void begin(const char *name)
{
	printf("# %s\n", name);
	cur_failed = 0;
}

static void end(const char *name)
{
	if (cur_failed) {
		printf("not ok %s\n", name);
		failed++;
	} else {
		printf("ok %s\n", name);
		passed++;
	}
}

static void skip(const char *name, const char *why)
{
	printf("ok %s # SKIP %s\n", name, why);
	skipped++;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the DIR's own fd */
}

static void module_mode(void)
{
	struct xsched_kfd *k = NULL;
	struct xsched_kfd_info info;
	struct xsched_xqueue *xq = NULL;
	struct xsched_attr a;
	int fd, ret;

	begin("module_open_attach");
	unsetenv("XSCHED_KFD_FALLBACK");
	ret = xsched_kfd_open(&k, -1, NULL);
	CHECK_EQ(ret, 0);
	if (ret) {
		end("module_open_attach");
		return;
	}
	memset(&info, 0xff, sizeof(info));
	CHECK_EQ(xsched_kfd_query(k, &info), 0);
	CHECK_EQ(info.mode, XSCHED_KFD_MODULE);
	printf("#   attached through /dev/xsched, KFD process has %u GPUs\n", info.gpu_count);
	end("module_open_attach");

	begin("module_bogus_ring_enoent");
	CHECK_EQ(xsched_xqueue_create_kfd(&xq, k, 0x7ffe12340000ULL, NULL), -ENOENT);
	CHECK_EQ(xsched_xqueue_create_kfd(&xq, k, 0, NULL), -ENOENT);
	CHECK_EQ(xq == NULL, 1);
	end("module_bogus_ring_enoent");

	begin("module_lv1_lv2_eopnotsupp");
	memset(&a, 0, sizeof(a));
	a.flags = XSCHED_ATTR_LEVEL;
	a.level = XSCHED_LV1;
	CHECK_EQ(xsched_xqueue_create_kfd(&xq, k, 0x7ffe12340000ULL, &a), -EOPNOTSUPP);
	a.level = XSCHED_LV2;
	CHECK_EQ(xsched_xqueue_create_kfd(&xq, k, 0x7ffe12340000ULL, &a), -EOPNOTSUPP);
	end("module_lv1_lv2_eopnotsupp");
	xsched_kfd_close(k);

	begin("module_callers_fd");
	fd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	CHECK_EQ(fd >= 0, 1);
	k = NULL;
	CHECK_EQ(xsched_kfd_open(&k, fd, NULL), 0);
	if (k) {
		CHECK_EQ(xsched_kfd_fd(k), fd);
		CHECK_EQ(xsched_kfd_query(k, &info), 0);
		CHECK_EQ(info.mode, XSCHED_KFD_MODULE);
		xsched_kfd_close(k);
	}
	CHECK_EQ(fcntl(fd, F_GETFD) >= 0, 1);	/* still the caller's */
	close(fd);
	end("module_callers_fd");

	begin("module_refuses_non_kfd_fd_without_fallback");
	fd = open("/dev/null", O_RDWR);
	k = (void *)1;
	CHECK_EQ(xsched_kfd_open(&k, fd, NULL), -EINVAL);
	CHECK_EQ(k == NULL, 1);
	close(fd);
	end("module_refuses_non_kfd_fd_without_fallback");
}

/* A raw DBG_TRAP call on the own pid, as a second opinion on KFD's state. */
static int raw_dbg(int kfd, uint32_t op, int evfd)
{
	struct kfd_ioctl_dbg_trap_args a;
	struct kfd_runtime_info ri;

	memset(&a, 0, sizeof(a));
	memset(&ri, 0, sizeof(ri));
	a.pid = (uint32_t)getpid();
	a.op = op;
	if (op == KFD_IOC_DBG_TRAP_ENABLE) {
		a.enable.rinfo_ptr = (uint64_t)(uintptr_t)&ri;
		a.enable.rinfo_size = sizeof(ri);
		a.enable.dbg_fd = (uint32_t)evfd;
	}
	return ioctl(kfd, AMDKFD_IOC_DBG_TRAP, &a) < 0 ? -errno : 0;
}

static void debugger_mode(void)
{
	struct xsched_kfd *k = NULL, *k2 = NULL;
	struct xsched_kfd_info info;
	struct xsched_xqueue *xq = NULL;
	int fds0, kfd, evfd, ret;

	begin("debugger_enable_on_own_pid");
	fds0 = count_fds();
	setenv("XSCHED_KFD_FALLBACK", "debugger", 1);
	ret = xsched_kfd_open(&k, -1, NULL);
	printf("#   xsched_kfd_open (debugger API) = %d (%s)\n", ret,
	       ret ? strerror(-ret) : "ok");
	CHECK_EQ(ret, 0);
	if (ret) {
		end("debugger_enable_on_own_pid");
		return;
	}
	memset(&info, 0xff, sizeof(info));
	CHECK_EQ(xsched_kfd_query(k, &info), 0);
	printf("#   mode %u, KFD uAPI %u.%u, runtime_state %u\n", info.mode,
	       info.kfd_major, info.kfd_minor, info.runtime_state);
	CHECK_EQ(info.mode, XSCHED_KFD_DEBUGGER);
	CHECK_EQ(info.kfd_major, 1);
	CHECK_EQ(info.kfd_minor >= 13, 1);
	/* nobody called runtime enable: KFD defers activation (no runlist
	 * refresh, GFXOFF untouched) and says DISABLED */
	CHECK_EQ(info.runtime_state, 0);
	end("debugger_enable_on_own_pid");

	begin("debugger_bogus_ring_enoent");
	CHECK_EQ(xsched_xqueue_create_kfd(&xq, k, 0x7ffe12340000ULL, NULL), -ENOENT);
	end("debugger_bogus_ring_enoent");

	begin("debugger_second_enable_ealready");
	CHECK_EQ(xsched_kfd_open(&k2, -1, NULL), -EALREADY);
	CHECK_EQ(k2 == NULL, 1);
	end("debugger_second_enable_ealready");

	begin("debugger_module_register_refused_while_debugged");
	{
		/* The module attaches, but sees KFD's debug_trap_enabled and
		 * refuses any kfd register with EBUSY (before the ring lookup,
		 * so even a bogus ring gives EBUSY, not ENOENT). */
		struct xsched_kfd *km = NULL;

		unsetenv("XSCHED_KFD_FALLBACK");
		ret = xsched_kfd_open(&km, xsched_kfd_fd(k), NULL);
		printf("#   module attach while debug mode is on: %d\n", ret);
		CHECK_EQ(ret, 0);
		if (km) {
			CHECK_EQ(xsched_xqueue_create_kfd(&xq, km, 0x7ffe12340000ULL, NULL),
				 -EBUSY);
			xsched_kfd_close(km);
		}
		setenv("XSCHED_KFD_FALLBACK", "debugger", 1);
	}
	end("debugger_module_register_refused_while_debugged");

	xsched_kfd_close(k);

	begin("debugger_close_leaves_no_state");
	CHECK_EQ(count_fds(), fds0);
	kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	evfd = eventfd(0, EFD_CLOEXEC);
	/* not debug enabled any more: every op but ENABLE gives EINVAL */
	CHECK_EQ(raw_dbg(kfd, KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT, -1), -EINVAL);
	CHECK_EQ(raw_dbg(kfd, KFD_IOC_DBG_TRAP_ENABLE, evfd), 0);
	CHECK_EQ(raw_dbg(kfd, KFD_IOC_DBG_TRAP_DISABLE, -1), 0);
	CHECK_EQ(raw_dbg(kfd, KFD_IOC_DBG_TRAP_SUSPEND_QUEUES, -1), -EINVAL);
	close(evfd);
	close(kfd);
	end("debugger_close_leaves_no_state");

	begin("auto_falls_back_when_dev_xsched_absent");
	unsetenv("XSCHED_KFD_FALLBACK");
	k = NULL;
	CHECK_EQ(xsched_kfd_open(&k, -1, "/nonexistent/xsched"), 0);
	if (k) {
		CHECK_EQ(xsched_kfd_query(k, &info), 0);
		CHECK_EQ(info.mode, XSCHED_KFD_DEBUGGER);
		xsched_kfd_close(k);
	}
	CHECK_EQ(count_fds(), fds0);
	end("auto_falls_back_when_dev_xsched_absent");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (access("/dev/kfd", F_OK)) {
		skip("all", "no /dev/kfd (amdgpu.ko not loaded)");
		printf("libxsched-kfd-vm: %d passed, %d failed, %d skipped\n", passed,
		       failed, skipped);
		return 0;
	}
	module_mode();
	debugger_mode();
	printf("libxsched-kfd-vm: %d passed, %d failed, %d skipped\n", passed, failed,
	       skipped);
	return failed ? 1 : 0;
}
