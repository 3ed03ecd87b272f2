// SPDX-License-Identifier: MIT
/*
 * A queue registered with /dev/xsched, whatever its backend: the queue fd
 * and the ioctls every platform that goes through the module shares
 * (sim queues, and kfd queues in module mode).
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../internal.h"

int xs_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : ret;
}

int xs_ioctl0(int fd, unsigned long req, void *arg)
{
	int ret = xs_ioctl(fd, req, arg);

	return ret < 0 ? ret : 0;
}

int xs_modq_register(struct xs_modq *m, int devfd, uint32_t backend,
		     int backend_fd, uint64_t handle, int32_t prio,
		     uint32_t flags, const char *what)
{
	bool arbiter = flags & XSCHED_REGISTER_ARBITRATE;
	struct xsched_register reg;
	int ret;

	memset(&reg, 0, sizeof(reg));
	reg.backend = backend;
	reg.flags = flags;
	reg.handle = handle;
	reg.backend_fd = (uint32_t)backend_fd;
	reg.priority = prio;
	ret = xs_ioctl(devfd, XSCHED_IOC_REGISTER, &reg);
	if (ret == -EPERM && prio > 0) {
		xs_warn("%s: registering at priority %d needs CAP_SYS_NICE; the module%s sees priority 0, the in-process policy uses %d",
			what, prio, arbiter ? " (and its cross-process arbiter)" : "",
			prio);
		prio = 0;
		reg.priority = 0;
		ret = xs_ioctl(devfd, XSCHED_IOC_REGISTER, &reg);
	}
	if (ret < 0)
		return ret;
	m->qfd = (int)reg.queue_fd;
	m->devfd = devfd;
	m->backend_fd = backend_fd;
	m->backend = backend;
	m->handle = handle;
	m->prio = prio;
	m->arbiter = arbiter;
	m->by_ring = flags & XSCHED_REGISTER_BY_RING;
	return 0;
}

/*
 * The module fixes XSCHED_REGISTER_ARBITRATE at registration: unregister
 * (closing the queue fd resumes the queue if it was stopped) and register
 * again.  The caller makes sure the queue is idle.
 */
int xs_modq_set_arbiter(struct xs_modq *m, bool on, const char *what)
{
	uint32_t ring = m->by_ring ? XSCHED_REGISTER_BY_RING : 0;
	int ret;

	if (m->arbiter == on)
		return 0;
	close(m->qfd);
	m->qfd = -1;
	ret = xs_modq_register(m, m->devfd, m->backend, m->backend_fd, m->handle,
			       m->prio, ring | (on ? XSCHED_REGISTER_ARBITRATE : 0), what);
	if (!ret)
		return 0;
	xs_warn("%s: re-registering %s the arbiter failed: %s", what,
		on ? "with" : "without", strerror(-ret));
	if (!xs_modq_register(m, m->devfd, m->backend, m->backend_fd,
			      m->handle, m->prio,
			      ring | (on ? 0 : XSCHED_REGISTER_ARBITRATE), what))
		return ret;
	xs_err("%s: cannot register it again; it is lost", what);
	return -EIO;
}

void xs_modq_close(struct xs_modq *m)
{
	if (m->qfd >= 0)
		close(m->qfd);	/* the module resumes a stopped queue */
	m->qfd = -1;
}

int xs_modq_query(const struct xs_modq *m, struct xsched_queue_info *qi)
{
	memset(qi, 0, sizeof(*qi));
	return xs_ioctl0(m->qfd, XSCHED_IOC_QUERY, qi);
}

int xs_modq_suspend(const struct xs_modq *m, int mode, bool nonblock)
{
	struct xsched_suspend s;

	memset(&s, 0, sizeof(s));
	s.mode = mode == XS_MODE_DRAIN ? XSCHED_MODE_DRAIN : XSCHED_MODE_SAVE;
	s.flags = nonblock ? XSCHED_SUSPEND_NONBLOCK : 0;
	return xs_ioctl0(m->qfd, XSCHED_IOC_SUSPEND, &s);
}

int xs_modq_resume(const struct xs_modq *m)
{
	struct xsched_resume r;

	memset(&r, 0, sizeof(r));
	return xs_ioctl0(m->qfd, XSCHED_IOC_RESUME, &r);
}

/* Until a (non-blocking) suspend has stopped the queue: POLLPRI, or QUERY. */
int xs_modq_wait_suspended(const struct xs_modq *m, int64_t timeout_ns)
{
	struct xsched_queue_info qi;
	uint64_t start = xs_now_ns();
	struct pollfd pfd;
	int ret;

	for (;;) {
		ret = xs_modq_query(m, &qi);
		if (ret)
			return ret;
		if (qi.state == XSCHED_STATE_SUSPENDED)
			return 0;
		if (qi.state == XSCHED_STATE_FAILED)
			return -EIO;
		if (qi.state == XSCHED_STATE_ACTIVE)
			return qi.last_error ? qi.last_error : -ECANCELED;
		if (timeout_ns >= 0 && (int64_t)(xs_now_ns() - start) >= timeout_ns)
			return -ETIMEDOUT;
		pfd.fd = m->qfd;
		pfd.events = POLLPRI;
		pfd.revents = 0;
		(void)poll(&pfd, 1, 10);
	}
}

int xs_modq_hw_info(const struct xs_modq *m, struct xs_hw_info *hw)
{
	struct xsched_queue_info qi;
	int ret;

	ret = xs_modq_query(m, &qi);
	if (ret)
		return ret;
	hw->completed = qi.rptr;
	hw->suspends = qi.suspends;
	hw->saved_bytes = qi.saved_bytes;
	hw->last_suspend_ns = qi.last_suspend_ns;
	hw->max_suspend_ns = qi.max_suspend_ns;
	hw->total_suspend_ns = qi.total_suspend_ns;
	hw->steps_done = qi.steps_done;
	hw->arbiter_suspends = qi.arbiter_suspends;
	hw->arbitrated = qi.arbitrated != 0;
	hw->state = qi.state;
	hw->last_error = qi.last_error;
	return 0;
}

int xs_modq_set_priority(struct xs_modq *m, int32_t prio)
{
	struct xsched_set_priority sp;
	int ret;

	memset(&sp, 0, sizeof(sp));
	sp.priority = prio;
	ret = xs_ioctl0(m->qfd, XSCHED_IOC_SET_PRIORITY, &sp);
	if (!ret)
		m->prio = prio;
	return ret;
}
