// SPDX-License-Identifier: GPL-2.0
/*
 * xsched-stuck [MS]: a program stuck in the kernel, for the test of the VM
 * runners' limit (tools/vm-limit).  On the module's model of KFD
 * (kfd_model=1, debugfs xsched/kfd_model) it registers a queue whose
 * update_queue() sleeps MS ms (default 30000) uninterruptibly, as KFD waits
 * for a preemption fence, and suspends it: the process sits in D state,
 * which no signal ends, until the sleep is over.  Needs root and the kfd
 * backend.  Exits 0 once the suspend returns, 1 on a setup error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/xsched_kfd.h>

#define MODEL_PARAM	"/sys/module/xsched_kfd/parameters/kfd_model"
#define MODEL_PATH	"/sys/kernel/debug/xsched/kfd_model"

static int put(int fd, const char *s)
{
	return write(fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : -1;
}

static int fail(const char *what)
{
	fprintf(stderr, "xsched-stuck: %s: %s\n", what, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	static uint64_t ptrs[2];
	const uint64_t ring = 0x7f0000200000ULL;
	unsigned long ms = argc > 1 ? strtoul(argv[1], NULL, 0) : 30000;
	struct xsched_kfd_attach a = { 0 };
	struct xsched_register r = { 0 };
	struct xsched_suspend s = { 0 };
	int pfd, cfd, mfd, qfd, ret;
	char cmd[128];

	pfd = open(MODEL_PARAM, O_WRONLY | O_CLOEXEC);
	if (pfd < 0 || put(pfd, "1"))
		return fail(MODEL_PARAM);
	close(pfd);
	cfd = open("/dev/" XSCHED_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (cfd < 0)
		return fail("/dev/" XSCHED_DEVICE_NAME);
	mfd = open(MODEL_PATH, O_RDWR | O_CLOEXEC);
	if (mfd < 0)
		return fail(MODEL_PATH);
	a.kfd_fd = mfd;
	if (ioctl(cfd, XSCHED_IOC_KFD_ATTACH, &a))
		return fail("KFD_ATTACH");
	snprintf(cmd, sizeof(cmd), "queue 1 %llx %llx %llx", (unsigned long long)ring,
		 (unsigned long long)(uintptr_t)&ptrs[0],
		 (unsigned long long)(uintptr_t)&ptrs[1]);
	if (put(mfd, cmd))
		return fail("model queue");
	r.backend = XSCHED_BACKEND_KFD;
	r.handle = ring;
	qfd = ioctl(cfd, XSCHED_IOC_REGISTER, &r);
	if (qfd < 0)
		return fail("REGISTER");
	snprintf(cmd, sizeof(cmd), "update_delay_ms %lu", ms);
	if (put(mfd, cmd))
		return fail("model update_delay_ms");
	printf("xsched-stuck: suspending, stuck in the kernel for %lu ms\n", ms);
	fflush(stdout);
	s.mode = XSCHED_MODE_SAVE;
	ret = ioctl(qfd, XSCHED_IOC_SUSPEND, &s);
	printf("xsched-stuck: suspend returned %d\n", ret ? -errno : 0);
	return 0;
}
