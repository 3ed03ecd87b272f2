// SPDX-License-Identifier: GPL-2.0
/*
 * The module's ioctls (/dev/xsched): clients, registration, the queue's
 * QUERY, SUSPEND, RESUME and SET_PRIORITY, each returning 0 or -errno.
 */
#include "xsched_util.h"

int xs_ioctl(int fd, unsigned long req, void *arg)
{
	int ret = ioctl(fd, req, arg);

	return ret < 0 ? -errno : ret;
}

const char *xs_err(int ret)
{
	return ret < 0 ? strerror(-ret) : "success";
}

int xs_client_open(int *cfd, struct xsched_version *ver)
{
	struct xsched_version v;
	int fd, ret;

	*cfd = -1;
	fd = open(XS_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	memset(&v, 0, sizeof(v));
	ret = xs_ioctl(fd, XSCHED_IOC_VERSION, &v);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	if (ver)
		*ver = v;
	*cfd = fd;
	return 0;
}

int xs_register_flags(int cfd, int sfd, uint32_t id, int32_t priority,
		      uint32_t flags, uint32_t *uid)
{
	struct xsched_register r = {
		.backend = XSCHED_BACKEND_SIM,
		.flags = flags,
		.handle = id,
		.backend_fd = (__u32)sfd,
		.priority = priority,
	};
	int ret = xs_ioctl(cfd, XSCHED_IOC_REGISTER, &r);

	if (ret >= 0 && uid)
		*uid = r.queue_uid;
	return ret;
}

int xs_register(int cfd, int sfd, uint32_t id, int32_t priority,
		uint32_t *uid)
{
	return xs_register_flags(cfd, sfd, id, priority, 0, uid);
}

int xs_query(int qfd, struct xsched_queue_info *info)
{
	int ret;

	memset(info, 0, sizeof(*info));
	ret = xs_ioctl(qfd, XSCHED_IOC_QUERY, info);
	return ret < 0 ? ret : 0;
}

int xs_state(int qfd)
{
	struct xsched_queue_info info;
	int ret = xs_query(qfd, &info);

	return ret ? ret : (int)info.state;
}

int xs_suspend(int qfd, uint32_t mode, uint32_t flags,
	       uint64_t grace_ns, struct xsched_suspend *out)
{
	struct xsched_suspend s = {
		.mode = mode,
		.flags = flags,
		.grace_ns = grace_ns,
	};
	int ret = xs_ioctl(qfd, XSCHED_IOC_SUSPEND, &s);

	if (out)
		*out = s;
	return ret < 0 ? ret : 0;
}

int xs_resume(int qfd, uint64_t *suspended_ns)
{
	struct xsched_resume r = { 0 };
	int ret = xs_ioctl(qfd, XSCHED_IOC_RESUME, &r);

	if (ret >= 0 && suspended_ns)
		*suspended_ns = r.suspended_ns;
	return ret < 0 ? ret : 0;
}

int xs_set_priority(int qfd, int32_t priority)
{
	struct xsched_set_priority p = { .priority = priority };
	int ret = xs_ioctl(qfd, XSCHED_IOC_SET_PRIORITY, &p);

	return ret < 0 ? ret : 0;
}

const char *xs_state_name(int state)
{
	switch (state) {
	case XSCHED_STATE_ACTIVE:	return "ACTIVE";
	case XSCHED_STATE_SUSPENDING:	return "SUSPENDING";
	case XSCHED_STATE_SUSPENDED:	return "SUSPENDED";
	case XSCHED_STATE_FAILED:	return "FAILED";
	default:			return "?";
	}
}

const char *xs_mode_name(uint32_t mode)
{
	return mode == XSCHED_MODE_SAVE ? "SAVE" :
	       mode == XSCHED_MODE_DRAIN ? "DRAIN" : "?";
}

void xs_interrupt_handler(int sig)
{
	(void)sig;
}
