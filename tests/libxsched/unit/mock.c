// SPDX-License-Identifier: MIT
/* The mock platform: see mock.h. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "mock.h"

static void deadline_after(struct timespec *ts, int64_t ns)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ns / 1000000000LL;
	ts->tv_nsec += ns % 1000000000LL;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* Locked: make the eventfd readable exactly while the queue is idle/failed. */
static void update_efd(struct mock_queue *q)
{
	bool idle = q->rptr == q->wptr || q->state == XS_HW_FAILED;
	uint64_t v = 1;

	if (idle && !q->efd_set) {
		(void)!write(q->efd, &v, sizeof(v));
		q->efd_set = true;
	} else if (!idle && q->efd_set) {
		(void)!read(q->efd, &v, sizeof(v));
		q->efd_set = false;
	}
}

/* Locked: the stop eventfd is readable exactly while the queue is suspended
 * (as the module's queue fd polls POLLPRI). */
static void update_sfd(struct mock_queue *q)
{
	bool stopped = q->state == XS_HW_SUSPENDED;
	uint64_t v = 1;

	if (stopped && !q->sfd_set) {
		(void)!write(q->sfd, &v, sizeof(v));
		q->sfd_set = true;
	} else if (!stopped && q->sfd_set) {
		(void)!read(q->sfd, &v, sizeof(v));
		q->sfd_set = false;
	}
}

/* Locked: one command completed. */
static void complete_one(struct mock_queue *q)
{
	struct mock_cmd *c = &q->ring[q->rptr % q->ring_size];
	struct mock_platform *mp = q->mp;

	if (c->counter)
		(*c->counter)++;
	pthread_mutex_lock(&mp->log_lock);
	if (mp->nlog < MOCK_LOG_MAX) {
		mp->log[mp->nlog].queue = q->id;
		mp->log[mp->nlog].tag = c->tag;
		mp->nlog++;
	}
	pthread_mutex_unlock(&mp->log_lock);
	q->rptr++;
	q->started = false;
	update_efd(q);
	pthread_cond_broadcast(&q->cond);
}

static void *executor(void *arg)
{
	struct mock_queue *q = arg;
	struct timespec ts;

	pthread_mutex_lock(&q->lock);
	while (!q->exit) {
		struct mock_cmd *c;
		uint64_t slice;

		if (q->state == XS_HW_SUSPENDING) {
			/* Between commands (or DRAIN after one): stopped. */
			if (!q->started || q->mode == XS_MODE_SAVE) {
				if (q->started)
					q->saves_partway++;
				q->state = XS_HW_SUSPENDED;
				q->suspends_done++;
				update_sfd(q);
				pthread_cond_broadcast(&q->cond);
				continue;
			}
		}
		if ((q->state != XS_HW_ACTIVE && q->state != XS_HW_SUSPENDING) ||
		    q->rptr == q->wptr) {
			pthread_cond_wait(&q->cond, &q->lock);
			continue;
		}
		c = &q->ring[q->rptr % q->ring_size];
		if (!q->started) {
			q->started = true;
			q->remaining_ns = c->duration_ns;
		}
		if (!q->remaining_ns) {
			complete_one(q);
			continue;
		}
		slice = q->remaining_ns < 100000 ? q->remaining_ns : 100000;
		q->running = true;
		pthread_mutex_unlock(&q->lock);
		ts.tv_sec = 0;
		ts.tv_nsec = (long)slice;
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&q->lock);
		q->running = false;
		q->remaining_ns -= slice;
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

static struct mock_queue *qof(void *pq)
{
	return pq;
}

static uint32_t m_ring_size(struct xsched_platform *p, void *pq)
{
	(void)p;
	return qof(pq)->ring_size;
}

static int m_bind(struct xsched_platform *p, uint64_t handle, int32_t prio,
		  unsigned int flags, void **pqp)
{
	struct mock_platform *mp = p->priv;
	struct mock_queue *q;

	if (handle >= mp->nq)
		return -ENOENT;
	q = &mp->q[handle];
	if (q->bound)
		return -EBUSY;
	q->bound = true;
	q->priority = prio;
	q->arbitrated = flags & XS_BIND_ARBITER;
	q->binds++;
	*pqp = q;
	return 0;
}

static void m_unbind(struct xsched_platform *p, void *pq)
{
	struct mock_queue *q = qof(pq);

	(void)p;
	pthread_mutex_lock(&q->lock);
	/* Like closing a queue fd: a suspended queue is resumed. */
	if (q->state == XS_HW_SUSPENDED || q->state == XS_HW_SUSPENDING)
		q->state = XS_HW_ACTIVE;
	q->bound = false;
	q->arbitrated = false;
	update_sfd(q);
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

static int m_launch(struct xsched_platform *p, void *pq, const void *cmds,
		    unsigned int n, uint64_t *hw_seq)
{
	struct mock_queue *q = qof(pq);
	const struct mock_cmd *c = cmds;
	unsigned int i;
	int ret = 0;

	(void)p;
	pthread_mutex_lock(&q->lock);
	q->launch_calls++;
	if (q->launch_err) {
		ret = q->launch_err;
		q->launch_err = 0;
	} else if (q->state == XS_HW_FAILED) {
		ret = -EIO;
	} else if (q->wptr - q->rptr + n > q->ring_size) {
		ret = -EAGAIN;
	} else {
		for (i = 0; i < n; i++)
			q->ring[(q->wptr + i) % q->ring_size] = c[i];
		q->wptr += n;
		*hw_seq = q->wptr;
		if (q->wptr - q->rptr > q->max_in_flight)
			q->max_in_flight = q->wptr - q->rptr;
		update_efd(q);
		pthread_cond_broadcast(&q->cond);
	}
	pthread_mutex_unlock(&q->lock);
	return ret;
}

static int m_wait(struct xsched_platform *p, void *pq, uint64_t hw_seq,
		  int64_t timeout_ns)
{
	struct mock_queue *q = qof(pq);
	struct timespec ts;
	int ret = 0;

	(void)p;
	if (timeout_ns >= 0)
		deadline_after(&ts, timeout_ns);
	pthread_mutex_lock(&q->lock);
	q->wait_calls++;
	while (q->rptr < hw_seq && q->state != XS_HW_FAILED) {
		if (timeout_ns < 0) {
			pthread_cond_wait(&q->cond, &q->lock);
		} else if (pthread_cond_timedwait(&q->cond, &q->lock, &ts)) {
			ret = -ETIMEDOUT;
			break;
		}
	}
	if (q->rptr >= hw_seq)
		ret = 0;
	else if (q->state == XS_HW_FAILED)
		ret = -EIO;
	pthread_mutex_unlock(&q->lock);
	return ret;
}

static int m_completed(struct xsched_platform *p, void *pq, uint64_t *done)
{
	struct mock_queue *q = qof(pq);
	int ret = 0;

	(void)p;
	pthread_mutex_lock(&q->lock);
	*done = q->rptr;
	if (q->state == XS_HW_FAILED && q->rptr < q->wptr)
		ret = -EIO;
	pthread_mutex_unlock(&q->lock);
	return ret;
}

static int m_suspend(struct xsched_platform *p, void *pq, int mode, bool nonblock)
{
	struct mock_queue *q = qof(pq);
	int ret = 0;

	(void)p;
	if (q->suspend_hook)
		q->suspend_hook(q);
	pthread_mutex_lock(&q->lock);
	q->suspend_calls++;
	q->suspend_thread = pthread_self();
	if (q->arbitrated) {
		ret = -EBUSY;	/* as the module: the arbiter owns it */
	} else if (q->suspend_err) {
		ret = q->suspend_err;
		q->suspend_err = 0;
	} else if (q->state == XS_HW_FAILED) {
		ret = -EIO;
	} else if (q->state != XS_HW_ACTIVE) {
		ret = -EALREADY;
	} else {
		q->mode = (uint32_t)mode;
		if (!q->mp->auto_run) {
			q->state = XS_HW_SUSPENDED;
			q->suspends_done++;
			update_sfd(q);
		} else {
			q->state = XS_HW_SUSPENDING;
			pthread_cond_broadcast(&q->cond);
			while (!nonblock && q->state == XS_HW_SUSPENDING)
				pthread_cond_wait(&q->cond, &q->lock);
		}
	}
	pthread_mutex_unlock(&q->lock);
	return ret;
}

static int m_resume(struct xsched_platform *p, void *pq)
{
	struct mock_queue *q = qof(pq);
	int ret = 0;

	(void)p;
	pthread_mutex_lock(&q->lock);
	q->resume_calls++;
	if (q->arbitrated)
		ret = -EBUSY;
	else if (q->state == XS_HW_ACTIVE)
		ret = -EALREADY;
	else if (q->state == XS_HW_FAILED)
		ret = -EIO;
	else
		q->state = XS_HW_ACTIVE;
	update_sfd(q);
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
	return ret;
}

static int m_wait_suspended(struct xsched_platform *p, void *pq, int64_t timeout_ns)
{
	struct mock_queue *q = qof(pq);
	struct timespec ts;
	int ret = 0;

	(void)p;
	if (timeout_ns >= 0)
		deadline_after(&ts, timeout_ns);
	pthread_mutex_lock(&q->lock);
	while (q->state == XS_HW_SUSPENDING) {
		if (timeout_ns < 0) {
			pthread_cond_wait(&q->cond, &q->lock);
		} else if (pthread_cond_timedwait(&q->cond, &q->lock, &ts)) {
			ret = -ETIMEDOUT;
			break;
		}
	}
	if (!ret && q->state != XS_HW_SUSPENDED)
		ret = q->state == XS_HW_FAILED ? -EIO : -ECANCELED;
	pthread_mutex_unlock(&q->lock);
	return ret;
}

static int m_poll_fd(struct xsched_platform *p, void *pq)
{
	(void)p;
	return qof(pq)->efd;
}

static int m_query(struct xsched_platform *p, void *pq, struct xs_hw_info *hw)
{
	struct mock_queue *q = qof(pq);

	(void)p;
	pthread_mutex_lock(&q->lock);
	hw->completed = q->rptr;
	hw->suspends = q->suspends_done;
	hw->state = q->state;
	hw->arbitrated = q->arbitrated;
	hw->arbiter_suspends = q->arbiter_suspends;
	pthread_mutex_unlock(&q->lock);
	return 0;
}

static int m_set_priority(struct xsched_platform *p, void *pq, int32_t prio)
{
	(void)p;
	qof(pq)->priority = prio;
	return 0;
}

static int m_set_arbiter(struct xsched_platform *p, void *pq, bool on)
{
	struct mock_queue *q = qof(pq);

	(void)p;
	pthread_mutex_lock(&q->lock);
	/* Like closing the queue fd and registering again. */
	if (q->state == XS_HW_SUSPENDED || q->state == XS_HW_SUSPENDING)
		q->state = XS_HW_ACTIVE;
	q->arbitrated = on;
	q->binds++;
	update_sfd(q);
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
	return 0;
}

static int m_stop_fd(struct xsched_platform *p, void *pq, short *events)
{
	(void)p;
	*events = POLLIN;
	return qof(pq)->sfd;
}

struct mock_platform *mock_create(bool auto_run, unsigned int max_level)
{
	struct mock_platform *mp = calloc(1, sizeof(*mp));

	if (!mp)
		abort();
	mp->auto_run = auto_run;
	pthread_mutex_init(&mp->log_lock, NULL);
	mp->ops = (struct xs_platform_ops){
		.name = "mock",
		.cmd_size = sizeof(struct mock_cmd),
		.max_level = max_level,
		.max_submit = 8,
		.ring_size = m_ring_size,
		.bind = m_bind,
		.unbind = m_unbind,
		.launch = m_launch,
		.wait = m_wait,
		.completed = m_completed,
		.suspend = m_suspend,
		.resume = m_resume,
		.wait_suspended = m_wait_suspended,
		.poll_fd = m_poll_fd,
		.query = m_query,
		.set_priority = m_set_priority,
		.set_arbiter = m_set_arbiter,
		.stop_fd = m_stop_fd,
	};
	mp->plat.ops = &mp->ops;
	mp->plat.priv = mp;
	return mp;
}

uint32_t mock_queue_create(struct mock_platform *mp, uint32_t ring_size)
{
	struct mock_queue *q = &mp->q[mp->nq];
	pthread_condattr_t ca;

	if (mp->nq >= MOCK_MAX_QUEUES)
		abort();
	q->mp = mp;
	q->id = mp->nq;
	q->ring_size = ring_size;
	q->ring = calloc(ring_size, sizeof(*q->ring));
	q->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	q->sfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!q->ring || q->efd < 0 || q->sfd < 0)
		abort();
	pthread_mutex_init(&q->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_lock(&q->lock);
	update_efd(q);
	pthread_mutex_unlock(&q->lock);
	if (mp->auto_run && pthread_create(&q->thread, NULL, executor, q))
		abort();
	return mp->nq++;
}

void mock_destroy(struct mock_platform *mp)
{
	uint32_t i;

	for (i = 0; i < mp->nq; i++) {
		struct mock_queue *q = &mp->q[i];

		if (mp->auto_run) {
			pthread_mutex_lock(&q->lock);
			q->exit = true;
			pthread_cond_broadcast(&q->cond);
			pthread_mutex_unlock(&q->lock);
			pthread_join(q->thread, NULL);
		}
		close(q->efd);
		close(q->sfd);
		free(q->ring);
		pthread_cond_destroy(&q->cond);
		pthread_mutex_destroy(&q->lock);
	}
	pthread_mutex_destroy(&mp->log_lock);
	free(mp);
}

struct mock_queue *mock_q(struct mock_platform *mp, uint32_t id)
{
	return &mp->q[id];
}

uint64_t mock_complete(struct mock_platform *mp, uint32_t id, uint64_t n)
{
	struct mock_queue *q = &mp->q[id];
	uint64_t done = 0;

	pthread_mutex_lock(&q->lock);
	while (done < n && q->rptr < q->wptr && q->state == XS_HW_ACTIVE) {
		complete_one(q);
		done++;
	}
	pthread_mutex_unlock(&q->lock);
	return done;
}

void mock_fail(struct mock_platform *mp, uint32_t id)
{
	struct mock_queue *q = &mp->q[id];

	pthread_mutex_lock(&q->lock);
	q->state = XS_HW_FAILED;
	update_efd(q);
	update_sfd(q);
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

uint64_t mock_wptr(struct mock_platform *mp, uint32_t id)
{
	uint64_t v;

	pthread_mutex_lock(&mp->q[id].lock);
	v = mp->q[id].wptr;
	pthread_mutex_unlock(&mp->q[id].lock);
	return v;
}

uint64_t mock_rptr(struct mock_platform *mp, uint32_t id)
{
	uint64_t v;

	pthread_mutex_lock(&mp->q[id].lock);
	v = mp->q[id].rptr;
	pthread_mutex_unlock(&mp->q[id].lock);
	return v;
}

uint32_t mock_state(struct mock_platform *mp, uint32_t id)
{
	uint32_t v;

	pthread_mutex_lock(&mp->q[id].lock);
	v = mp->q[id].state;
	pthread_mutex_unlock(&mp->q[id].lock);
	return v;
}

bool mock_started(struct mock_platform *mp, uint32_t id)
{
	bool v;

	pthread_mutex_lock(&mp->q[id].lock);
	v = mp->q[id].started;
	pthread_mutex_unlock(&mp->q[id].lock);
	return v;
}

uint64_t mock_cut_short(struct mock_platform *mp, uint32_t id)
{
	uint64_t v;

	pthread_mutex_lock(&mp->q[id].lock);
	v = mp->q[id].remaining_ns;
	mp->q[id].remaining_ns = 0;
	pthread_mutex_unlock(&mp->q[id].lock);
	return v;
}

/* The module's arbiter, played by the test: suspend (SAVE) an arbitrated
 * queue, or resume it.  Returns 0, or -EINVAL if the queue is not arbitrated
 * or not in the right state. */
int mock_arbiter_suspend(struct mock_platform *mp, uint32_t id)
{
	struct mock_queue *q = &mp->q[id];
	int ret = 0;

	pthread_mutex_lock(&q->lock);
	if (!q->arbitrated || q->state != XS_HW_ACTIVE) {
		ret = -EINVAL;
	} else {
		q->mode = XS_MODE_SAVE;
		q->arbiter_suspends++;
		if (mp->auto_run) {
			q->state = XS_HW_SUSPENDING;	/* the executor finishes it */
		} else {
			q->state = XS_HW_SUSPENDED;
			q->suspends_done++;
			update_sfd(q);
		}
		pthread_cond_broadcast(&q->cond);
	}
	pthread_mutex_unlock(&q->lock);
	return ret;
}

int mock_arbiter_resume(struct mock_platform *mp, uint32_t id)
{
	struct mock_queue *q = &mp->q[id];
	int ret = 0;

	pthread_mutex_lock(&q->lock);
	if (!q->arbitrated || (q->state != XS_HW_SUSPENDED &&
			       q->state != XS_HW_SUSPENDING)) {
		ret = -EINVAL;
	} else {
		q->state = XS_HW_ACTIVE;
		update_sfd(q);
		pthread_cond_broadcast(&q->cond);
	}
	pthread_mutex_unlock(&q->lock);
	return ret;
}
