// SPDX-License-Identifier: MIT
/*
 * The sim platform: XQueues over the xsched_kfd module's software GPU.
 *
 * A struct xsched_sim is one client of /dev/xsched: its device memory and its
 * sim queues.  Binding a sim queue registers it with the module, which gives
 * a queue fd for suspend/resume/query/poll; unbinding closes that fd (the
 * module resumes the queue if it was suspended).  In arbiter mode a queue is
 * registered with XSCHED_REGISTER_ARBITRATE: the module's arbiter then
 * suspends and resumes it, and the queue fd's POLLPRI says when it is stopped.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/xsched_kfd.h>

#include "internal.h"

struct sim_map {
	void *cpu;
	uint64_t size;
};

struct xsched_sim {
	int fd;
	struct xsched_platform plat;
	struct xsched_version ver;
	pthread_mutex_t lock;		/* maps[] */
	struct sim_map maps[XSCHED_SIM_MEM_BUFFERS];
	unsigned int nmaps;
	uint32_t ring_sizes[XSCHED_SIM_QUEUES];
};

struct sim_queue {
	struct xsched_sim *sim;
	uint32_t id;
	uint32_t ring_size;
	int qfd;
	int32_t prio;		/* as registered with the module */
	bool arbiter;		/* registered with XSCHED_REGISTER_ARBITRATE */
};

static int xioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : ret;
}

static int xioctl0(int fd, unsigned long req, void *arg)
{
	int ret = xioctl(fd, req, arg);

	return ret < 0 ? ret : 0;
}

static uint32_t sim_ring_size(struct xsched_platform *p, void *pq)
{
	(void)p;
	return ((struct sim_queue *)pq)->ring_size;
}

/* Register sim queue @q with the module; sets q->qfd and q->prio. */
static int sim_register(struct sim_queue *q, int32_t prio, bool arbiter)
{
	struct xsched_register reg;
	int ret;

	memset(&reg, 0, sizeof(reg));
	reg.backend = XSCHED_BACKEND_SIM;
	reg.flags = arbiter ? XSCHED_REGISTER_ARBITRATE : 0;
	reg.handle = q->id;
	reg.priority = prio;
	ret = xioctl(q->sim->fd, XSCHED_IOC_REGISTER, &reg);
	if (ret == -EPERM && prio > 0) {
		xs_warn("sim queue %u: registering at priority %d needs CAP_SYS_NICE; the module%s sees priority 0, the in-process policy uses %d",
			q->id, prio, arbiter ? " (and its cross-process arbiter)" : "",
			prio);
		prio = 0;
		reg.priority = 0;
		reg.queue_fd = 0;
		reg.queue_uid = 0;
		ret = xioctl(q->sim->fd, XSCHED_IOC_REGISTER, &reg);
	}
	if (ret < 0)
		return ret;
	q->qfd = (int)reg.queue_fd;
	q->prio = prio;
	q->arbiter = arbiter;
	return 0;
}

static int sim_bind(struct xsched_platform *p, uint64_t handle, int32_t prio,
		    unsigned int flags, void **pqp)
{
	struct xsched_sim *sim = p->priv;
	struct sim_queue *q;
	int ret;

	if (handle >= XSCHED_SIM_QUEUES || !sim->ring_sizes[handle])
		return -ENOENT;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->sim = sim;
	q->id = (uint32_t)handle;
	q->ring_size = sim->ring_sizes[handle];
	ret = sim_register(q, prio, flags & XS_BIND_ARBITER);
	if (ret < 0) {
		free(q);
		return ret;
	}
	*pqp = q;
	return 0;
}

/*
 * The module fixes XSCHED_REGISTER_ARBITRATE at registration: unregister
 * (closing the queue fd resumes the queue if it was stopped) and register
 * again.  The caller makes sure the queue is idle.
 */
static int sim_set_arbiter(struct xsched_platform *p, void *pq, bool on)
{
	struct sim_queue *q = pq;
	int ret;

	(void)p;
	if (q->arbiter == on)
		return 0;
	close(q->qfd);
	q->qfd = -1;
	ret = sim_register(q, q->prio, on);
	if (!ret)
		return 0;
	xs_warn("sim queue %u: re-registering %s the arbiter failed: %s", q->id,
		on ? "with" : "without", strerror(-ret));
	if (!sim_register(q, q->prio, !on))
		return ret;
	xs_err("sim queue %u: cannot register it again; it is lost", q->id);
	return -EIO;
}

static int sim_stop_fd(struct xsched_platform *p, void *pq, short *events)
{
	(void)p;
	*events = POLLPRI;	/* the module: POLLPRI while suspended */
	return ((struct sim_queue *)pq)->qfd;
}

static void sim_unbind(struct xsched_platform *p, void *pq)
{
	struct sim_queue *q = pq;

	(void)p;
	if (q->qfd >= 0)
		close(q->qfd);
	free(q);
}

static int sim_launch(struct xsched_platform *p, void *pq, const void *cmds,
		      unsigned int n, uint64_t *hw_seq)
{
	struct sim_queue *q = pq;
	struct xsched_sim_submit s;
	int ret;

	(void)p;
	memset(&s, 0, sizeof(s));
	s.queue_id = q->id;
	s.count = n;
	s.packets = (uint64_t)(uintptr_t)cmds;
	ret = xioctl(q->sim->fd, XSCHED_IOC_SIM_SUBMIT, &s);
	if (ret < 0)
		return ret;
	*hw_seq = s.seq;
	return 0;
}

static int sim_wait(struct xsched_platform *p, void *pq, uint64_t hw_seq,
		    int64_t timeout_ns)
{
	struct sim_queue *q = pq;
	struct xsched_sim_wait w;

	(void)p;
	memset(&w, 0, sizeof(w));
	w.queue_id = q->id;
	w.seq = hw_seq;
	/* 0 would poll once: "no limit" is a very long wait. */
	w.timeout_ns = timeout_ns < 0 ? (uint64_t)3600 * 1000000000ULL :
		       (uint64_t)timeout_ns;
	if (timeout_ns == 0)
		w.timeout_ns = 0;
	return xioctl0(q->sim->fd, XSCHED_IOC_SIM_WAIT, &w);
}

static int sim_query_raw(struct sim_queue *q, struct xsched_queue_info *qi)
{
	memset(qi, 0, sizeof(*qi));
	return xioctl0(q->qfd, XSCHED_IOC_QUERY, qi);
}

static int sim_completed(struct xsched_platform *p, void *pq, uint64_t *done)
{
	struct xsched_queue_info qi;
	int ret;

	(void)p;
	ret = sim_query_raw(pq, &qi);
	if (ret)
		return ret;
	*done = qi.rptr;
	if (qi.state == XSCHED_STATE_FAILED && qi.rptr < qi.wptr)
		return -EIO;
	return 0;
}

static int sim_suspend(struct xsched_platform *p, void *pq, int mode,
		       bool nonblock)
{
	struct sim_queue *q = pq;
	struct xsched_suspend s;

	(void)p;
	memset(&s, 0, sizeof(s));
	s.mode = mode == XS_MODE_DRAIN ? XSCHED_MODE_DRAIN : XSCHED_MODE_SAVE;
	s.flags = nonblock ? XSCHED_SUSPEND_NONBLOCK : 0;
	return xioctl0(q->qfd, XSCHED_IOC_SUSPEND, &s);
}

static int sim_resume(struct xsched_platform *p, void *pq)
{
	struct sim_queue *q = pq;
	struct xsched_resume r;

	(void)p;
	memset(&r, 0, sizeof(r));
	return xioctl0(q->qfd, XSCHED_IOC_RESUME, &r);
}

static int sim_wait_suspended(struct xsched_platform *p, void *pq,
			      int64_t timeout_ns)
{
	struct sim_queue *q = pq;
	struct xsched_queue_info qi;
	uint64_t start = xs_now_ns();
	struct pollfd pfd;
	int ret;

	(void)p;
	for (;;) {
		ret = sim_query_raw(q, &qi);
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
		pfd.fd = q->qfd;
		pfd.events = POLLPRI;
		pfd.revents = 0;
		(void)poll(&pfd, 1, 10);
	}
}

static int sim_poll_fd(struct xsched_platform *p, void *pq)
{
	(void)p;
	return ((struct sim_queue *)pq)->qfd;
}

static int sim_query(struct xsched_platform *p, void *pq, struct xs_hw_info *hw)
{
	struct xsched_queue_info qi;
	int ret;

	(void)p;
	ret = sim_query_raw(pq, &qi);
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

static int sim_set_priority(struct xsched_platform *p, void *pq, int32_t prio)
{
	struct sim_queue *q = pq;
	struct xsched_set_priority sp;
	int ret;

	(void)p;
	memset(&sp, 0, sizeof(sp));
	sp.priority = prio;
	ret = xioctl0(q->qfd, XSCHED_IOC_SET_PRIORITY, &sp);
	if (!ret)
		q->prio = prio;
	return ret;
}

static const struct xs_platform_ops sim_ops = {
	.name = "sim",
	.cmd_size = sizeof(struct xsched_sim_packet),
	.max_level = XSCHED_LV3,
	.max_submit = XSCHED_SIM_SUBMIT_MAX,
	.ring_size = sim_ring_size,
	.bind = sim_bind,
	.unbind = sim_unbind,
	.launch = sim_launch,
	.wait = sim_wait,
	.completed = sim_completed,
	.suspend = sim_suspend,
	.resume = sim_resume,
	.wait_suspended = sim_wait_suspended,
	.poll_fd = sim_poll_fd,
	.query = sim_query,
	.set_priority = sim_set_priority,
	.set_arbiter = sim_set_arbiter,
	.stop_fd = sim_stop_fd,
};

XS_EXPORT int xsched_sim_open(struct xsched_sim **simp, const char *path)
{
	struct xsched_sim *sim;
	int ret;

	if (!simp)
		return -EINVAL;
	*simp = NULL;
	sim = calloc(1, sizeof(*sim));
	if (!sim)
		return -ENOMEM;
	if (!path)
		path = "/dev/" XSCHED_DEVICE_NAME;
	sim->fd = open(path, O_RDWR | O_CLOEXEC);
	if (sim->fd < 0) {
		ret = -errno;
		xs_info("cannot open %s: %s", path, strerror(-ret));
		free(sim);
		return ret;
	}
	ret = xioctl(sim->fd, XSCHED_IOC_VERSION, &sim->ver);
	if (ret < 0)
		goto fail;
	if (sim->ver.api_version != XSCHED_API_VERSION) {
		xs_err("%s speaks uAPI v%u, libxsched v%u", path,
		       sim->ver.api_version, XSCHED_API_VERSION);
		ret = -EPROTO;
		goto fail;
	}
	if (!(sim->ver.backends & (1U << XSCHED_BACKEND_SIM))) {
		xs_err("%s has no sim backend", path);
		ret = -ENODEV;
		goto fail;
	}
	pthread_mutex_init(&sim->lock, NULL);
	sim->plat.ops = &sim_ops;
	sim->plat.priv = sim;
	*simp = sim;
	return 0;
fail:
	close(sim->fd);
	free(sim);
	return ret;
}

XS_EXPORT void xsched_sim_close(struct xsched_sim *sim)
{
	unsigned int i;

	if (!sim)
		return;
	for (i = 0; i < sim->nmaps; i++)
		munmap(sim->maps[i].cpu, sim->maps[i].size);
	close(sim->fd);
	pthread_mutex_destroy(&sim->lock);
	free(sim);
}

XS_EXPORT int xsched_sim_fd(const struct xsched_sim *sim)
{
	return sim ? sim->fd : -EINVAL;
}

XS_EXPORT int xsched_sim_alloc(struct xsched_sim *sim, uint64_t size,
			       uint64_t *gpu_addr, void **cpu)
{
	struct xsched_sim_mem m;
	void *p;
	int ret;

	if (!sim || !gpu_addr || !cpu || !size)
		return -EINVAL;
	memset(&m, 0, sizeof(m));
	m.size = size;
	pthread_mutex_lock(&sim->lock);
	if (sim->nmaps >= XSCHED_SIM_MEM_BUFFERS) {
		ret = -ENOSPC;
		goto out;
	}
	ret = xioctl(sim->fd, XSCHED_IOC_SIM_MEM_ALLOC, &m);
	if (ret < 0)
		goto out;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, sim->fd,
		 (off_t)m.gpu_addr);
	if (p == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	sim->maps[sim->nmaps].cpu = p;
	sim->maps[sim->nmaps].size = size;
	sim->nmaps++;
	*gpu_addr = m.gpu_addr;
	*cpu = p;
	ret = 0;
out:
	pthread_mutex_unlock(&sim->lock);
	return ret;
}

XS_EXPORT int xsched_sim_queue_create(struct xsched_sim *sim, uint32_t ring_size,
				      uint32_t *queue_id)
{
	struct xsched_sim_queue_create c;
	int ret;

	if (!sim || !queue_id)
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	c.ring_size = ring_size;
	ret = xioctl(sim->fd, XSCHED_IOC_SIM_QUEUE_CREATE, &c);
	if (ret < 0)
		return ret;
	if (c.queue_id >= XSCHED_SIM_QUEUES)
		return -ERANGE;
	pthread_mutex_lock(&sim->lock);
	sim->ring_sizes[c.queue_id] = ring_size;
	pthread_mutex_unlock(&sim->lock);
	*queue_id = c.queue_id;
	return 0;
}

XS_EXPORT struct xsched_platform *xsched_sim_platform(struct xsched_sim *sim)
{
	return sim ? &sim->plat : NULL;
}

XS_EXPORT int xsched_xqueue_create_sim(struct xsched_xqueue **xqp,
				       struct xsched_sim *sim, uint32_t queue_id,
				       const struct xsched_attr *attr)
{
	if (!sim)
		return -EINVAL;
	return xsched_xqueue_create(xqp, &sim->plat, queue_id, attr);
}
