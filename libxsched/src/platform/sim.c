// SPDX-License-Identifier: MIT
/*
 * The sim platform: XQueues over the sim GPU (xsched_sim.ko, a test device
 * loaded beside xsched_kfd.ko).
 *
 * A struct xsched_sim is one /dev/xsched_sim fd (its device memory and its sim
 * queues) and one /dev/xsched client.  Binding a sim queue registers it with
 * the module (REGISTER on the client, naming the sim fd), which gives
 * a queue fd for suspend/resume/query/poll; unbinding closes that fd (the
 * module resumes the queue if it was suspended).  In arbiter mode a queue is
 * registered with XSCHED_REGISTER_ARBITRATE: the module's arbiter then
 * suspends and resumes it, and the queue fd's POLLPRI says when it is stopped.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/xsched_kfd.h>
#include <linux/xsched_sim.h>

#include "../internal.h"
#include "xsched-sim.h"

struct sim_map {
	void *cpu;
	uint64_t size;
};

struct xsched_sim {
	int fd;				/* /dev/xsched_sim */
	int cfd;			/* /dev/xsched, where queues are registered */
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
	struct xs_modq mq;
	char what[32];		/* "sim queue N", for messages */
};

static uint32_t sim_ring_size(struct xsched_platform *p, void *pq)
{
	(void)p;
	return ((struct sim_queue *)pq)->ring_size;
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
	snprintf(q->what, sizeof(q->what), "sim queue %u", q->id);
	ret = xs_modq_register(&q->mq, sim->cfd, XSCHED_BACKEND_SIM, sim->fd, q->id, prio,
			       flags & XS_BIND_ARBITER ? XSCHED_REGISTER_ARBITRATE : 0,
			       q->what);
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

	(void)p;
	return xs_modq_set_arbiter(&q->mq, on, q->what);
}

static int sim_stop_fd(struct xsched_platform *p, void *pq, short *events)
{
	(void)p;
	*events = POLLPRI;	/* the module: POLLPRI while suspended */
	return ((struct sim_queue *)pq)->mq.qfd;
}

static void sim_unbind(struct xsched_platform *p, void *pq)
{
	struct sim_queue *q = pq;

	(void)p;
	xs_modq_close(&q->mq);
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
	ret = xs_ioctl(q->sim->fd, XSCHED_IOC_SIM_SUBMIT, &s);
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
	return xs_ioctl0(q->sim->fd, XSCHED_IOC_SIM_WAIT, &w);
}

static int sim_completed(struct xsched_platform *p, void *pq, uint64_t *done)
{
	struct xsched_queue_info qi;
	int ret;

	(void)p;
	ret = xs_modq_query(&((struct sim_queue *)pq)->mq, &qi);
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
	(void)p;
	return xs_modq_suspend(&((struct sim_queue *)pq)->mq, mode, nonblock);
}

static int sim_resume(struct xsched_platform *p, void *pq)
{
	(void)p;
	return xs_modq_resume(&((struct sim_queue *)pq)->mq);
}

static int sim_wait_suspended(struct xsched_platform *p, void *pq,
			      int64_t timeout_ns)
{
	(void)p;
	return xs_modq_wait_suspended(&((struct sim_queue *)pq)->mq, timeout_ns);
}

static int sim_poll_fd(struct xsched_platform *p, void *pq)
{
	(void)p;
	return ((struct sim_queue *)pq)->mq.qfd;
}

static int sim_query(struct xsched_platform *p, void *pq, struct xs_hw_info *hw)
{
	(void)p;
	return xs_modq_hw_info(&((struct sim_queue *)pq)->mq, hw);
}

static int sim_set_priority(struct xsched_platform *p, void *pq, int32_t prio)
{
	(void)p;
	return xs_modq_set_priority(&((struct sim_queue *)pq)->mq, prio);
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
	sim->cfd = open(path, O_RDWR | O_CLOEXEC);
	if (sim->cfd < 0) {
		ret = -errno;
		xs_info("cannot open %s: %s", path, strerror(-ret));
		free(sim);
		return ret;
	}
	sim->fd = -1;
	ret = xs_ioctl(sim->cfd, XSCHED_IOC_VERSION, &sim->ver);
	if (ret < 0)
		goto fail;
	if (sim->ver.api_version != XSCHED_API_VERSION) {
		xs_err("%s speaks uAPI v%u, libxsched v%u", path,
		       sim->ver.api_version, XSCHED_API_VERSION);
		ret = -EPROTO;
		goto fail;
	}
	if (!(sim->ver.backends & (1U << XSCHED_BACKEND_SIM))) {
		xs_err("%s has no sim backend (is xsched_sim.ko loaded?)", path);
		ret = -ENODEV;
		goto fail;
	}
	sim->fd = open("/dev/" XSCHED_SIM_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (sim->fd < 0) {
		ret = -errno;
		xs_err("cannot open /dev/" XSCHED_SIM_DEVICE_NAME ": %s",
		       strerror(-ret));
		goto fail;
	}
	pthread_mutex_init(&sim->lock, NULL);
	sim->plat.ops = &sim_ops;
	sim->plat.priv = sim;
	*simp = sim;
	return 0;
fail:
	if (sim->fd >= 0)
		close(sim->fd);
	close(sim->cfd);
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
	close(sim->cfd);
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
	ret = xs_ioctl(sim->fd, XSCHED_IOC_SIM_MEM_ALLOC, &m);
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
	ret = xs_ioctl(sim->fd, XSCHED_IOC_SIM_QUEUE_CREATE, &c);
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

/*
 * The sim by ring address: sim queues a runtime made for itself (the stand-in
 * HSA runtime creates one per HSA queue with ring_addr = its ring), found by
 * the module among the calling process's sim queues (XSCHED_REGISTER_BY_RING)
 * as the kfd backend finds a real queue by its ring base.  A preemptor only:
 * the runtime writes the queue itself (no launch), as on the kfd platform.
 */
struct sim_ring {
	int cfd;			/* /dev/xsched */
	struct xsched_platform plat;
};

static int sim_ring_bind(struct xsched_platform *p, uint64_t handle, int32_t prio,
			 unsigned int flags, void **pqp)
{
	struct sim_ring *r = p->priv;
	struct sim_queue *q;
	int ret;

	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->id = UINT32_MAX;	/* the module knows it by ring only */
	snprintf(q->what, sizeof(q->what), "sim ring %#llx", (unsigned long long)handle);
	ret = xs_modq_register(&q->mq, r->cfd, XSCHED_BACKEND_SIM, 0, handle, prio,
			       XSCHED_REGISTER_BY_RING |
			       (flags & XS_BIND_ARBITER ? XSCHED_REGISTER_ARBITRATE : 0),
			       q->what);
	if (ret < 0) {
		free(q);
		return ret;
	}
	*pqp = q;
	return 0;
}

static const struct xs_platform_ops sim_ring_ops = {
	.name = "sim-ring",
	.cmd_size = sizeof(struct xsched_sim_packet),
	.max_level = XSCHED_LV3,
	.max_submit = 1,
	.ring_size = sim_ring_size,
	.bind = sim_ring_bind,
	.unbind = sim_unbind,
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

int xs_sim_ring_open(struct xsched_platform **pp, const char *path)
{
	struct xsched_version ver;
	struct sim_ring *r;
	int ret;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->cfd = open(path ? path : "/dev/" XSCHED_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (r->cfd < 0) {
		ret = -errno;
		free(r);
		return ret;
	}
	memset(&ver, 0, sizeof(ver));
	ret = xs_ioctl0(r->cfd, XSCHED_IOC_VERSION, &ver);
	if (!ret && (ver.api_version != XSCHED_API_VERSION ||
		     !(ver.backends & (1U << XSCHED_BACKEND_SIM))))
		ret = -ENODEV;
	if (ret) {
		close(r->cfd);
		free(r);
		return ret;
	}
	r->plat.ops = &sim_ring_ops;
	r->plat.priv = r;
	*pp = &r->plat;
	return 0;
}

void xs_sim_ring_close(struct xsched_platform *p)
{
	struct sim_ring *r;

	if (!p)
		return;
	r = p->priv;
	close(r->cfd);
	free(r);
}
