/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the kfd backend kselftests: /dev/xsched and /dev/kfd fds,
 * the attach and register ioctls as 0/-errno, passing an fd to another
 * process over a unix socket, the kernel log and the module's test knob.
 */
#ifndef XSCHED_KFD_TEST_H
#define XSCHED_KFD_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <linux/xsched_kfd.h>

#include "kselftest_harness.h"

#define KT_XSCHED	"/dev/" XSCHED_DEVICE_NAME
#define KT_KFD		"/dev/kfd"
#define KT_KNOB		"/sys/module/xsched_kfd/parameters/kfd_fake_layout_mismatch"
#define KT_REBUILD	"rebuild against the matching amdgpu source"

static inline int kt_ioctl(int fd, unsigned long req, void *arg)
{
	int ret = ioctl(fd, req, arg);

	return ret < 0 ? -errno : ret;
}

static inline const char *kt_err(int ret)
{
	return ret < 0 ? strerror(-ret) : "success";
}

/* XSCHED_IOC_KFD_ATTACH with @kfd_fd; gpu_count out if @gpus. */
static inline int kt_attach(int cfd, int kfd_fd, uint32_t *gpus)
{
	struct xsched_kfd_attach a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.kfd_fd = (uint32_t)kfd_fd;
	ret = kt_ioctl(cfd, XSCHED_IOC_KFD_ATTACH, &a);
	if (!ret && gpus)
		*gpus = a.gpu_count;
	return ret;
}

/* XSCHED_IOC_REGISTER of a kfd queue by ring base; the queue fd or -errno. */
static inline int kt_register_flags(int cfd, uint64_t ring, int32_t priority,
				    uint32_t flags)
{
	struct xsched_register r;

	memset(&r, 0, sizeof(r));
	r.backend = XSCHED_BACKEND_KFD;
	r.flags = flags;
	r.handle = ring;
	r.priority = priority;
	return kt_ioctl(cfd, XSCHED_IOC_REGISTER, &r);
}

static inline int kt_register(int cfd, uint64_t ring, int32_t priority)
{
	return kt_register_flags(cfd, ring, priority, 0);
}

static inline int kt_version(int cfd, struct xsched_version *v)
{
	memset(v, 0, sizeof(*v));
	return kt_ioctl(cfd, XSCHED_IOC_VERSION, v);
}

/* Send @fd over the connected unix socket @sock. */
static inline int kt_send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct msghdr msg = { 0 };
	struct cmsghdr *cmsg;
	char byte = 'f';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };

	memset(cbuf, 0, sizeof(cbuf));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof(cbuf);
	cmsg = CMSG_FIRSTHDR(&msg);
	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	cmsg->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -errno;
}

/* Receive one fd from @sock; the fd or -errno. */
static inline int kt_recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct msghdr msg = { 0 };
	struct cmsghdr *cmsg;
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	int fd;

	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof(cbuf);
	if (recvmsg(sock, &msg, 0) != 1)
		return -EIO;
	cmsg = CMSG_FIRSTHDR(&msg);
	if (!cmsg || cmsg->cmsg_type != SCM_RIGHTS)
		return -EIO;
	memcpy(&fd, CMSG_DATA(cmsg), sizeof(int));
	return fd;
}

/* /dev/kmsg positioned at its end, to read only what comes next. */
static inline int kt_kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/* Did the kernel log a line containing @needle since kt_kmsg_open()? */
static inline bool kt_kmsg_has(int fd, const char *needle)
{
	char rec[8192];
	ssize_t n;

	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records: go on */
		if (n <= 0)
			return false;
		rec[n] = '\0';
		if (strstr(rec, needle))
			return true;
	}
}

/* Write @val to a sysfs or debugfs file; -errno if it is missing. */
static inline int kt_write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int ret = 0;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != strlen(val))
		ret = -EIO;
	close(fd);
	return ret;
}

/*
 * For fixture setups: opens device @path read-write into @fd, skipping the
 * test (with @hint) only when the device is missing and failing it on any
 * other error.
 */
#define KT_OPEN_DEV_OR_SKIP(fd, path, hint) do {				\
	(fd) = open((path), O_RDWR | O_CLOEXEC);				\
	if ((fd) < 0 && (errno == ENOENT || errno == ENODEV || errno == ENXIO))	\
		SKIP(return, "%s: %s (%s)", (path), strerror(errno), (hint));	\
	ASSERT_LE(0, (fd)) TH_LOG("%s: %s", (path), strerror(errno));		\
} while (0)

/*
 * /dev/kfd, or skip when it cannot be had here: absent without amdgpu.ko,
 * and KFD from Linux 7.2 on creates no process on a machine without a GPU
 * node (kfd_create_process(): EINVAL, "no gpu node!" in the kernel log), so
 * a VM without a GPU attaches nothing there.
 */
#define KT_OPEN_KFD_OR_SKIP(fd) do {						\
	(fd) = open(KT_KFD, O_RDWR | O_CLOEXEC);				\
	if ((fd) < 0 && errno == EINVAL)					\
		SKIP(return, "%s: EINVAL: this KFD opens no process without a GPU node", \
		     KT_KFD);							\
	if ((fd) < 0 && (errno == ENOENT || errno == ENODEV || errno == ENXIO))	\
		SKIP(return, "%s: %s (is amdgpu.ko loaded?)", KT_KFD, strerror(errno)); \
	ASSERT_LE(0, (fd)) TH_LOG("%s: %s", KT_KFD, strerror(errno));		\
} while (0)

/* Write "Y" or "N" to the layout test knob; -errno if it is missing. */
static inline int kt_knob_set(bool on)
{
	return kt_write_file(KT_KNOB, on ? "Y" : "N");
}

#endif /* XSCHED_KFD_TEST_H */
