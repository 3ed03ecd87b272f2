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
 * On kselftest_harness.h: the fixtures module and debugger attach in each
 * test's own process (a KFD process is per process), so a test never sees
 * what an earlier one left; without /dev/kfd every test skips.
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

#include "platform/kfd_dbg.h"
#include "kselftest_harness.h"

#define BOGUS_RING	0x7ffe12340000ULL

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

/*
 * KFD from Linux 7.2 on creates no process without a GPU node (open:
 * EINVAL, "no gpu node!" in the kernel log): nothing to attach in this VM.
 */
#define SKIP_WITHOUT_KFD() do {						\
	int probe_;							\
									\
	if (access("/dev/kfd", F_OK))					\
		SKIP(return, "no /dev/kfd (amdgpu.ko not loaded)");	\
	probe_ = open("/dev/kfd", O_RDWR | O_CLOEXEC);			\
	if (probe_ < 0 && errno == EINVAL)				\
		SKIP(return, "/dev/kfd: EINVAL: this KFD opens no process without a GPU node"); \
	if (probe_ >= 0)						\
		close(probe_);						\
} while (0)

/* ---- module mode: attached through /dev/xsched ---- */

FIXTURE(module) {
	struct xsched_kfd *k;
};

FIXTURE_SETUP(module)
{
	int ret;

	SKIP_WITHOUT_KFD();
	unsetenv("XSCHED_KFD_FALLBACK");
	ret = xsched_kfd_open(&self->k, -1, NULL);
	ASSERT_EQ(0, ret) TH_LOG("xsched_kfd_open (module): %s", strerror(-ret));
}

FIXTURE_TEARDOWN(module)
{
	if (self->k)
		xsched_kfd_close(self->k);
}

TEST_F(module, module_open_attach)
{
	struct xsched_kfd_info info;

	memset(&info, 0xff, sizeof(info));
	EXPECT_EQ(0, xsched_kfd_query(self->k, &info));
	EXPECT_EQ(XSCHED_KFD_MODULE, info.mode);
	printf("#   attached through /dev/xsched, KFD process has %u GPUs\n", info.gpu_count);
}

TEST_F(module, module_bogus_ring_enoent)
{
	struct xsched_xqueue *xq = NULL;

	EXPECT_EQ(-ENOENT, xsched_xqueue_create_kfd(&xq, self->k, BOGUS_RING, NULL));
	EXPECT_EQ(-ENOENT, xsched_xqueue_create_kfd(&xq, self->k, 0, NULL));
	EXPECT_EQ(NULL, xq);
}

TEST_F(module, module_lv1_lv2_eopnotsupp)
{
	struct xsched_xqueue *xq = NULL;
	struct xsched_attr a;

	memset(&a, 0, sizeof(a));
	a.flags = XSCHED_ATTR_LEVEL;
	a.level = XSCHED_LV1;
	EXPECT_EQ(-EOPNOTSUPP, xsched_xqueue_create_kfd(&xq, self->k, BOGUS_RING, &a));
	a.level = XSCHED_LV2;
	EXPECT_EQ(-EOPNOTSUPP, xsched_xqueue_create_kfd(&xq, self->k, BOGUS_RING, &a));
}

TEST(module_callers_fd)
{
	struct xsched_kfd *k = NULL;
	struct xsched_kfd_info info;
	int fd;

	SKIP_WITHOUT_KFD();
	unsetenv("XSCHED_KFD_FALLBACK");
	fd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	EXPECT_LE(0, fd);
	EXPECT_EQ(0, xsched_kfd_open(&k, fd, NULL));
	if (k) {
		EXPECT_EQ(fd, xsched_kfd_fd(k));
		EXPECT_EQ(0, xsched_kfd_query(k, &info));
		EXPECT_EQ(XSCHED_KFD_MODULE, info.mode);
		xsched_kfd_close(k);
	}
	EXPECT_LE(0, fcntl(fd, F_GETFD)) TH_LOG("the caller's fd was closed");
	close(fd);
}

TEST(module_refuses_non_kfd_fd_without_fallback)
{
	struct xsched_kfd *k = (void *)1;
	int fd;

	SKIP_WITHOUT_KFD();
	unsetenv("XSCHED_KFD_FALLBACK");
	fd = open("/dev/null", O_RDWR);
	EXPECT_EQ(-EINVAL, xsched_kfd_open(&k, fd, NULL));
	EXPECT_EQ(NULL, k);
	close(fd);
}

/* ---- debugger mode: KFD's debugger API on the own pid ---- */

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

FIXTURE(debugger) {
	struct xsched_kfd *k;
	int fds0;		/* fds before the library opened anything */
};

FIXTURE_SETUP(debugger)
{
	int ret;

	SKIP_WITHOUT_KFD();
	self->fds0 = count_fds();
	setenv("XSCHED_KFD_FALLBACK", "debugger", 1);
	ret = xsched_kfd_open(&self->k, -1, NULL);
	printf("#   xsched_kfd_open (debugger API) = %d (%s)\n", ret,
	       ret ? strerror(-ret) : "ok");
	ASSERT_EQ(0, ret);
}

FIXTURE_TEARDOWN(debugger)
{
	if (self->k)
		xsched_kfd_close(self->k);
}

TEST_F(debugger, debugger_enable_on_own_pid)
{
	struct xsched_kfd_info info;

	memset(&info, 0xff, sizeof(info));
	EXPECT_EQ(0, xsched_kfd_query(self->k, &info));
	printf("#   mode %u, KFD uAPI %u.%u, runtime_state %u\n", info.mode,
	       info.kfd_major, info.kfd_minor, info.runtime_state);
	EXPECT_EQ(XSCHED_KFD_DEBUGGER, info.mode);
	EXPECT_EQ(1, info.kfd_major);
	EXPECT_LE(13, info.kfd_minor);
	/* nobody called runtime enable: KFD defers activation (no runlist
	 * refresh, GFXOFF untouched) and says DISABLED */
	EXPECT_EQ(0, info.runtime_state);
}

TEST_F(debugger, debugger_bogus_ring_enoent)
{
	struct xsched_xqueue *xq = NULL;

	EXPECT_EQ(-ENOENT, xsched_xqueue_create_kfd(&xq, self->k, BOGUS_RING, NULL));
}

TEST_F(debugger, debugger_second_enable_ealready)
{
	struct xsched_kfd *k2 = NULL;

	EXPECT_EQ(-EALREADY, xsched_kfd_open(&k2, -1, NULL));
	EXPECT_EQ(NULL, k2);
}

/*
 * The module attaches, but sees KFD's debug_trap_enabled and refuses any kfd
 * register with EBUSY (before the ring lookup, so even a bogus ring gives
 * EBUSY, not ENOENT).
 */
TEST_F(debugger, debugger_module_register_refused_while_debugged)
{
	struct xsched_xqueue *xq = NULL;
	struct xsched_kfd *km = NULL;
	int ret;

	unsetenv("XSCHED_KFD_FALLBACK");
	ret = xsched_kfd_open(&km, xsched_kfd_fd(self->k), NULL);
	printf("#   module attach while debug mode is on: %d\n", ret);
	EXPECT_EQ(0, ret);
	if (km) {
		EXPECT_EQ(-EBUSY, xsched_xqueue_create_kfd(&xq, km, BOGUS_RING, NULL));
		xsched_kfd_close(km);
	}
	setenv("XSCHED_KFD_FALLBACK", "debugger", 1);
}

/*
 * After a second enable refused and the module's attach beside it (what the
 * tests above do), closing leaves KFD with no debug state and no fd behind.
 */
TEST_F(debugger, debugger_close_leaves_no_state)
{
	struct xsched_xqueue *xq = NULL;
	struct xsched_kfd *k2 = NULL, *km = NULL;
	int kfd, evfd;

	(void)xsched_kfd_open(&k2, -1, NULL);
	unsetenv("XSCHED_KFD_FALLBACK");
	if (!xsched_kfd_open(&km, xsched_kfd_fd(self->k), NULL)) {
		(void)xsched_xqueue_create_kfd(&xq, km, BOGUS_RING, NULL);
		xsched_kfd_close(km);
	}
	setenv("XSCHED_KFD_FALLBACK", "debugger", 1);
	xsched_kfd_close(self->k);
	self->k = NULL;
	EXPECT_EQ(self->fds0, count_fds());
	kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	evfd = eventfd(0, EFD_CLOEXEC);
	/* not debug enabled any more: every op but ENABLE gives EINVAL */
	EXPECT_EQ(-EINVAL, raw_dbg(kfd, KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT, -1));
	EXPECT_EQ(0, raw_dbg(kfd, KFD_IOC_DBG_TRAP_ENABLE, evfd));
	EXPECT_EQ(0, raw_dbg(kfd, KFD_IOC_DBG_TRAP_DISABLE, -1));
	EXPECT_EQ(-EINVAL, raw_dbg(kfd, KFD_IOC_DBG_TRAP_SUSPEND_QUEUES, -1));
	close(evfd);
	close(kfd);
}

TEST(auto_falls_back_when_dev_xsched_absent)
{
	struct xsched_kfd *k = NULL;
	struct xsched_kfd_info info;
	int fds0;

	SKIP_WITHOUT_KFD();
	fds0 = count_fds();
	unsetenv("XSCHED_KFD_FALLBACK");
	EXPECT_EQ(0, xsched_kfd_open(&k, -1, "/nonexistent/xsched"));
	if (k) {
		EXPECT_EQ(0, xsched_kfd_query(k, &info));
		EXPECT_EQ(XSCHED_KFD_DEBUGGER, info.mode);
		xsched_kfd_close(k);
	}
	EXPECT_EQ(fds0, count_fds());
}

TEST_HARNESS_MAIN
