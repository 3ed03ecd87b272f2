// SPDX-License-Identifier: MIT
/*
 * XQueues: creation, submission, completion tracking and Lv1 progressive
 * launching.  An XQueue knows nothing of who schedules it: when its busy,
 * idle or failed state may have changed it calls its hook (xq->hook, which
 * the scheduler installs: xs_sched_add()), with no lock held.  The public
 * entry points (api.c) check their arguments and call in here.
 *
 * Commands are numbered 1, 2, ... per XQueue (seq).  `launched` of them have
 * been handed to the hardware queue, `completed` are known to be done; the
 * hardware completion number of command s is s + hw_offset.
 *
 * Lv2/Lv3: submit() launches on the caller's thread; there is no worker.
 * Lv1: submit() launches on the caller's thread while nothing is buffered, the
 * XQueue is not held and fewer than `threshold` commands are in flight;
 * otherwise it buffers and the XQueue's worker launches later.  A submit
 * also launches what is buffered when it knows of room.  The worker waits
 * for the completion that makes room for what is buffered (at most `batch`
 * commands at a time; with nothing buffered, the next multiple of `batch` or
 * the last launched command), then refills.
 *
 * A submit is atomic: while one drops the lock to wait for ring room, other
 * submitters wait (xq->submitting).  A refusal that is not the end of the
 * hardware queue (-EAGAIN, -ENOMEM, -EBUSY...) fails that submit (or is
 * retried by the worker) and is kept in last_status; only -EIO and the like
 * fail the XQueue (xs_err_fatal()).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* Bumped in a fork child (sched.c): XQueues of an older generation are the
 * parent's. */
_Atomic unsigned int xs_fork_gen;

/* Longest single platform wait, so that destroy never waits on a stuck queue. */
#define XS_WAIT_SLICE_NS 50000000LL
/* The worker's retry after a refused launch with nothing in flight. */
#define XS_RETRY_NS 200000LL
/* A held worker or flush looks again this often (a release is a flag set
 * without xq->lock: its wake-up can be missed). */
#define XS_STOPPED_POLL_NS 1000000LL

/* Busy, idle or failed may have changed: tell the scheduler (no lock held). */
void xs_xq_changed(struct xsched_xqueue *xq)
{
	const struct xs_xq_hook *h = xq->hook;

	if (h)
		h->changed(xq);
}



bool xs_xq_busy_locked(const struct xsched_xqueue *xq)
{
	return xq->submitted > xq->completed && !xq->error;
}

static size_t cmd_size(const struct xsched_xqueue *xq)
{
	return xq->plat->ops->cmd_size;
}

/* Record a launch of @n commands ending at hardware number @hw_seq. Locked. */
static void note_launch(struct xsched_xqueue *xq, unsigned int n, uint64_t hw_seq)
{
	uint64_t in_flight;

	xq->launched += n;
	if (!xq->hw_offset_set) {
		xq->hw_offset = (int64_t)(hw_seq - xq->launched);
		xq->hw_offset_set = true;
	}
	in_flight = xq->launched - xq->completed;
	if (in_flight > xq->max_in_flight)
		xq->max_in_flight = in_flight;
}

/* Locked: after a launch of call commands, keep the first nonzero status. */
static void take_status(struct xsched_xqueue *xq)
{
	int st;

	if (!xq->plat->ops->take_status)
		return;
	st = xq->plat->ops->take_status(xq->plat, xq->pq);
	if (st) {
		xq->last_status = st;
		if (!xq->call_status)
			xq->call_status = st;
	}
}

/*
 * Launch @n commands from @cmds on the caller's thread.  Called with xq->lock
 * held; drops it while waiting for ring space (submit_lock keeps other
 * submitters out meanwhile).
 */
int xs_xq_launch_direct(struct xsched_xqueue *xq, const unsigned char *cmds,
			 unsigned int n)
{
	const struct xs_platform_ops *ops = xq->plat->ops;
	uint32_t ring = ops->ring_size(xq->plat, xq->pq);
	uint64_t hw_seq;
	unsigned int k;
	int ret;

	while (n) {
		k = n < ops->max_submit ? n : ops->max_submit;
		if (k > ring)
			k = ring;
		ret = ops->launch(xq->plat, xq->pq, cmds, k, &hw_seq);
		if (ret == -EAGAIN && xq->hw_offset_set &&
		    xq->launched > xq->completed) {
			/* Ring full: wait for room for k more.  Other submits
			 * wait meanwhile, so this one stays in one piece. */
			uint64_t need = xq->launched + k > ring ?
					xq->launched + k - ring : 1;

			xq->submitting = true;
			pthread_mutex_unlock(&xq->lock);
			ret = ops->wait(xq->plat, xq->pq, xs_xq_hw_of(xq, need),
					XS_WAIT_SLICE_NS);
			pthread_mutex_lock(&xq->lock);
			xq->submitting = false;
			pthread_cond_broadcast(&xq->cond);
			if (!ret && xq->completed < need)
				xq->completed = need;
			if (ret && ret != -ETIMEDOUT && ret != -EINTR)
				return ret;
			continue;
		}
		if (ret)
			return ret;
		take_status(xq);
		note_launch(xq, k, hw_seq);
		xq->submitted += k;
		cmds += (size_t)k * cmd_size(xq);
		n -= k;
	}
	pthread_cond_broadcast(&xq->cond);
	return 0;
}

static int buf_reserve(struct xsched_xqueue *xq, uint64_t more)
{
	uint64_t used = xq->submitted - xq->launched;
	uint64_t cap = xq->buf_cap ? xq->buf_cap : 64;
	size_t sz = cmd_size(xq);
	unsigned char *nb;
	uint64_t i;

	if (used + more <= xq->buf_cap)
		return 0;
	while (cap < used + more)
		cap *= 2;
	nb = malloc(cap * sz);
	if (!nb)
		return -ENOMEM;
	for (i = 0; i < used; i++) {
		uint64_t s = xq->launched + i;

		memcpy(nb + (s & (cap - 1)) * sz,
		       xq->buf + (s & (xq->buf_cap - 1)) * sz, sz);
	}
	free(xq->buf);
	xq->buf = nb;
	xq->buf_cap = cap;
	return 0;
}

static void buf_push(struct xsched_xqueue *xq, const unsigned char *cmds,
		     unsigned int n)
{
	size_t sz = cmd_size(xq);
	unsigned int i;

	for (i = 0; i < n; i++) {
		uint64_t s = xq->submitted + i;

		memcpy(xq->buf + (s & (xq->buf_cap - 1)) * sz, cmds + (size_t)i * sz,
		       sz);
	}
	xq->submitted += n;
}

/*
 * Lv1: launch buffered commands while allowed (@all: every one, whatever
 * the threshold: a flush).  Locked.  Returns 0, a refusal that is not
 * fatal (-EAGAIN: the ring is full of other work; the caller retries), or
 * a fatal error.
 */
static int lv1_launch_buffered(struct xsched_xqueue *xq, bool all)
{
	const struct xs_platform_ops *ops = xq->plat->ops;
	uint64_t hw_seq;
	int ret;

	while (!xq->stopped && !xq->error && xq->submitted > xq->launched &&
	       (all || xq->launched - xq->completed < xq->threshold)) {
		uint64_t n = xq->submitted - xq->launched;
		uint64_t room = xq->threshold - (xq->launched - xq->completed);
		uint64_t idx = xq->launched & (xq->buf_cap - 1);

		if (n > room && !all)
			n = room;
		/* Batch-sized pieces: each ends at a completion mark the
		 * worker can wait for without draining the hardware queue. */
		if (n > xq->batch && !all)
			n = xq->batch;
		if (n > ops->max_submit)
			n = ops->max_submit;
		if (n > xq->buf_cap - idx)
			n = xq->buf_cap - idx;	/* contiguous part of the ring */
		ret = ops->launch(xq->plat, xq->pq, xq->buf + idx * cmd_size(xq),
				  (unsigned int)n, &hw_seq);
		if (ret) {
			if (!xs_err_fatal(ret))
				xq->last_status = ret;
			return ret;
		}
		take_status(xq);
		note_launch(xq, (unsigned int)n, hw_seq);
		/* The worker waits for chunk ends: give it a mark there
		 * rather than one that covers everything launched later. */
		if (ops->mark_now)
			ops->mark_now(xq->plat, xq->pq);
		pthread_cond_broadcast(&xq->cond);
	}
	return 0;
}

/* Locked: the worker's next completion to wait for, or 0 for none. */
static uint64_t lv1_wait_target(const struct xsched_xqueue *xq)
{
	uint64_t in_flight = xq->launched - xq->completed;
	uint64_t buffered = xq->submitted - xq->launched;
	uint64_t target;

	if (xq->error || !in_flight)
		return 0;
	if (buffered && !xq->stopped) {
		/* Wait only as long as it takes to make room for what is
		 * buffered, up to a batch: a refill is not kept for the next
		 * multiple of batch. */
		uint64_t want = buffered < xq->batch ? buffered : xq->batch;
		uint64_t k = in_flight + want > xq->threshold ?
			     in_flight + want - xq->threshold : 1;

		return xq->completed + k;
	}
	target = (xq->completed / xq->batch + 1) * xq->batch;
	return target > xq->launched ? xq->launched : target;
}

/* Wake the waiters for a release (xs_xq_wait_unheld()); takes only the
 * gate's own lock, never xq->lock. */
static void gate_wake(struct xsched_xqueue *xq)
{
	atomic_fetch_add(&xq->gate_gen, 1);
	pthread_mutex_lock(&xq->gate_lock);
	pthread_cond_broadcast(&xq->gate_cond);
	pthread_mutex_unlock(&xq->gate_lock);
}

void xs_xq_set_error(struct xsched_xqueue *xq, int err)
{
	if (!xq->error) {
		__atomic_store_n(&xq->error, err, __ATOMIC_RELAXED);
		xs_warn("q%u: hardware queue failed (%s); its work is lost",
			xq->id, strerror(-err));
	}
	pthread_cond_broadcast(&xq->cond);
	gate_wake(xq);
}

static void *lv1_worker(void *arg)
{
	struct xsched_xqueue *xq = arg;
	const struct xs_platform_ops *ops = xq->plat->ops;
	bool refresh;
	int ret;

	/* Wake-ups are the refill latency: no timer slack. */
	(void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	if (ops->thread_enter && ops->thread_enter(xq->plat, xq->pq))
		xs_warn("q%u: the launching thread cannot take the stream's device/context",
			xq->id);
	pthread_mutex_lock(&xq->lock);
	while (!xq->worker_exit) {
		uint64_t target;

		ret = lv1_launch_buffered(xq, false);
		if (ret && xs_err_fatal(ret)) {
			xs_xq_set_error(xq, ret);
			pthread_mutex_unlock(&xq->lock);
			xs_xq_changed(xq);
			pthread_mutex_lock(&xq->lock);
			continue;
		}
		target = lv1_wait_target(xq);
		if (target) {
			uint64_t hw = xs_xq_hw_of(xq, target);

			pthread_mutex_unlock(&xq->lock);
			ret = ops->wait(xq->plat, xq->pq, hw, XS_WAIT_SLICE_NS);
			pthread_mutex_lock(&xq->lock);
			refresh = false;
			if (!ret) {
				if (xq->completed < target)
					xq->completed = target;
				pthread_cond_broadcast(&xq->cond);
				refresh = !xs_xq_busy_locked(xq);
			} else if (xs_err_fatal(ret)) {
				xs_xq_set_error(xq, ret);
				refresh = true;
			}
			if (refresh) {
				pthread_mutex_unlock(&xq->lock);
				xs_xq_changed(xq);
				pthread_mutex_lock(&xq->lock);
			}
			continue;
		}
		if (ret && !xq->stopped && xq->submitted > xq->launched) {
			/* Refused with nothing of ours in flight (the ring is
			 * full of other work, or a passing error): nobody will
			 * wake us, so look again soon. */
			struct timespec ts;

			xs_abs_deadline(&ts, XS_RETRY_NS);
			pthread_cond_timedwait(&xq->cond, &xq->lock, &ts);
			continue;
		}
		if (xq->stopped && xq->submitted > xq->launched) {
			struct timespec ts;

			xs_abs_deadline(&ts, XS_STOPPED_POLL_NS);
			pthread_cond_timedwait(&xq->cond, &xq->lock, &ts);
			continue;
		}
		pthread_cond_wait(&xq->cond, &xq->lock);
	}
	pthread_mutex_unlock(&xq->lock);
	return NULL;
}

int xs_xq_lv1_start_worker(struct xsched_xqueue *xq)
{
	int ret;

	pthread_mutex_lock(&xq->lock);
	if (xq->worker_running) {
		pthread_mutex_unlock(&xq->lock);
		return 0;
	}
	xq->worker_exit = false;
	ret = -pthread_create(&xq->worker, NULL, lv1_worker, xq);
	if (!ret)
		xq->worker_running = true;
	pthread_mutex_unlock(&xq->lock);
	return ret;
}

void xs_xq_lv1_stop_worker(struct xsched_xqueue *xq)
{
	pthread_t t;

	pthread_mutex_lock(&xq->lock);
	if (!xq->worker_running) {
		pthread_mutex_unlock(&xq->lock);
		return;
	}
	xq->worker_exit = true;
	xq->worker_running = false;
	t = xq->worker;
	pthread_cond_broadcast(&xq->cond);
	pthread_mutex_unlock(&xq->lock);
	pthread_join(t, NULL);
}

/*
 * The policy's Lv1 hold, called with sched.lock held: a flag, set without
 * xq->lock, so that the decision never waits for whoever holds it (the Lv1
 * worker holds it while it hands a call to the runtime).  A release wakes
 * the caller-held waiters through the gate, and the worker if xq->lock is
 * free; a worker whose wake-up is missed looks again within
 * XS_STOPPED_POLL_NS.
 */
void xs_xq_lv1_stop(struct xsched_xqueue *xq, bool stop)
{
	atomic_store(&xq->stopped, stop);
	if (stop)
		return;
	gate_wake(xq);
	if (!pthread_mutex_trylock(&xq->lock)) {
		pthread_cond_broadcast(&xq->cond);
		pthread_mutex_unlock(&xq->lock);
	}
}

/* Read the hardware's progress (monitor thread). */
void xs_xq_update_completed(struct xsched_xqueue *xq)
{
	uint64_t done;
	int ret;

	pthread_mutex_lock(&xq->lock);
	ret = xq->plat->ops->completed(xq->plat, xq->pq, &done);
	if (ret == -EIO) {
		xs_xq_set_error(xq, ret);
	} else if (!ret && xq->hw_offset_set) {
		int64_t c = (int64_t)done - xq->hw_offset;

		if (c > (int64_t)xq->launched)
			c = (int64_t)xq->launched;
		if (c > (int64_t)xq->completed) {
			xq->completed = (uint64_t)c;
			pthread_cond_broadcast(&xq->cond);
		}
	}
	pthread_mutex_unlock(&xq->lock);
}


/* The warnings xs_xq_decide() and xs_xq_fit_ring() named. */
static void settings_warn(const struct xs_xq_settings *s, const struct xs_config *cfg,
			  const struct xsched_platform *plat, uint32_t ring)
{
	if (s->warn & XS_XQ_WARN_NO_ARBITER)
		xs_warn("XSCHED_ARBITER=1 but platform %s has no arbiter; scheduling in this process only",
			plat->ops->name);
	if (s->warn & XS_XQ_WARN_LEVEL_RANGE)
		xs_warn("XSCHED_LEVEL=%u but platform %s supports only Lv%u..Lv%u; using Lv%u",
			cfg->level, plat->ops->name, s->lmin, s->lmax, s->lmax);
	if (s->warn & XS_XQ_WARN_LEVEL_MAX)
		xs_warn("XSCHED_LEVEL=%u but platform %s supports up to Lv%u; using Lv%u",
			cfg->level, plat->ops->name, s->lmax, s->lmax);
	if (s->warn & XS_XQ_WARN_RING)
		xs_warn("Lv1 threshold %u is larger than the ring of %u commands; using %u",
			s->asked_threshold, ring, ring);
}

int xs_xq_create(struct xsched_xqueue **xqp, struct xsched_platform *plat,
		 struct xsched_platform *pre, uint64_t handle,
		 const struct xsched_attr *attr, void *own_plat, bool worker)
{
	const struct xs_config *cfg = xs_config();
	struct xs_xq_settings s;
	struct xsched_xqueue *xq;
	pthread_condattr_t ca;
	uint32_t ring;
	int ret;

	*xqp = NULL;
	ret = xs_xq_decide(cfg, attr, plat->ops, pre ? pre->ops : NULL, &s);
	settings_warn(&s, cfg, plat, 0);
	if (ret)
		return ret;

	xq = calloc(1, sizeof(*xq));
	if (!xq)
		return -ENOMEM;
	xq->plat = plat;
	xq->own_plat = own_plat;
	ret = plat->ops->bind(plat, handle, s.prio,
			      xs_arb_at(s.arb_mode, s.level) ? XS_BIND_ARBITER : 0,
			      &xq->pq);
	if (ret) {
		free(xq);
		return ret;
	}
	if (pre == plat) {
		xq->pre = pre;
		xq->preq = xq->pq;
	}
	ring = plat->ops->ring_size(plat, xq->pq);
	s.warn = 0;	/* said above */
	ret = xs_xq_fit_ring(&s, ring);
	settings_warn(&s, cfg, plat, ring);
	if (ret) {
		plat->ops->unbind(plat, xq->pq);
		free(xq);
		return ret;
	}

	pthread_mutex_init(&xq->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&xq->cond, &ca);
	pthread_mutex_init(&xq->gate_lock, NULL);
	pthread_cond_init(&xq->gate_cond, &ca);
	pthread_condattr_destroy(&ca);
	atomic_init(&xq->refs, 1);
	xq->fork_gen = atomic_load(&xs_fork_gen);
	xq->group = s.group;
	xq->s_prio = s.prio;
	xq->s_level = s.level;
	xq->level = s.level;
	xq->arb_mode = s.arb_mode;
	xq->s_arb = xs_arb_at(s.arb_mode, s.level);
	xq->threshold = s.threshold;
	xq->batch = s.batch;

	if (s.level == XSCHED_LV1 && worker) {
		ret = xs_xq_lv1_start_worker(xq);
		if (ret) {
			xq->own_plat = NULL;	/* the caller frees it */
			xs_xq_free(xq);
			return ret;
		}
	}
	*xqp = xq;
	return 0;
}

/*
 * Give a call queue a preemptor: @pre's queue @handle (a sim or kfd queue),
 * which then allows Lv2/Lv3.  Only while idle, at Lv1, with none yet.
 */
int xs_xq_set_preemptor(struct xsched_xqueue *xq, struct xsched_platform *pre,
			uint64_t handle)
{
	void *preq;
	int ret;

	if (xq->pre)
		return -EBUSY;
	ret = pre->ops->bind(pre, handle, xq->s_prio, 0, &preq);
	if (ret)
		return ret;
	pthread_mutex_lock(&xq->lock);
	xq->preq = preq;
	xq->pre = pre;
	pthread_mutex_unlock(&xq->lock);
	return 0;
}

void xs_xq_free(struct xsched_xqueue *xq)
{
	if (xq->pre && xq->pre != xq->plat)
		xq->pre->ops->unbind(xq->pre, xq->preq);
	xq->plat->ops->unbind(xq->plat, xq->pq);
	pthread_cond_destroy(&xq->cond);
	pthread_mutex_destroy(&xq->lock);
	pthread_cond_destroy(&xq->gate_cond);
	pthread_mutex_destroy(&xq->gate_lock);
	free(xq->buf);
	if (xq->own_plat)
		xs_calls_platform_free(xq->own_plat);
	free(xq);
}

void xs_xqueue_put(struct xsched_xqueue *xq)
{
	if (atomic_fetch_sub(&xq->refs, 1) == 1)
		xs_xq_free(xq);
}

void xs_xq_drop_buffered(struct xsched_xqueue *xq)
{
	const struct xs_platform_ops *ops = xq->plat->ops;
	size_t sz = cmd_size(xq);

	pthread_mutex_lock(&xq->lock);
	while (ops->drop && xq->submitted > xq->launched) {
		uint64_t idx = xq->launched & (xq->buf_cap - 1);

		ops->drop(xq->plat, xq->pq, xq->buf + idx * sz, 1);
		xq->launched++;
	}
	xq->launched = xq->submitted;
	pthread_mutex_unlock(&xq->lock);
}

int xs_xq_submit(struct xsched_xqueue *xq, const void *cmds, unsigned int count,
		 uint64_t *seq, int *status, uint64_t *taken)
{
	uint64_t before;
	bool was_idle;
	int ret = 0;

	if (!xq->plat->ops->launch)
		return -EOPNOTSUPP;
	pthread_mutex_lock(&xq->lock);
	while (xq->submitting)
		pthread_cond_wait(&xq->cond, &xq->lock);
	if (xq->error) {
		ret = xq->error;
		pthread_mutex_unlock(&xq->lock);
		return ret;
	}
	xq->call_status = 0;
	before = xq->submitted;
	was_idle = !xs_xq_busy_locked(xq);
	if (xq->level >= XSCHED_LV2) {
		ret = xs_xq_launch_direct(xq, cmds, count);
	} else {
		/* Refill first: the worker may still sleep towards a later
		 * completion while room is known. */
		if (xq->submitted > xq->launched && !xq->stopped)
			(void)lv1_launch_buffered(xq, false);
		if (!xq->stopped && xq->submitted == xq->launched &&
		    xq->launched + count - xq->completed <= xq->threshold) {
			/* Lv1 with room: no reason to go through the worker. */
			ret = xs_xq_launch_direct(xq, cmds, count);
		} else {
			ret = buf_reserve(xq, count);
			if (!ret) {
				buf_push(xq, cmds, count);
				pthread_cond_broadcast(&xq->cond);
			}
		}
	}
	if (ret && xs_err_fatal(ret))
		xs_xq_set_error(xq, ret);
	else if (ret)
		xq->last_status = ret;
	if (status)
		*status = xq->call_status;
	if (seq)
		*seq = xq->submitted;
	/* What a refused submit launched before the refusal stays submitted
	 * (it is on the hardware queue). */
	if (taken)
		*taken = xq->submitted - before;
	pthread_mutex_unlock(&xq->lock);
	if (was_idle || (ret && xs_err_fatal(ret)))
		xs_xq_changed(xq);
	return ret;
}

uint64_t xs_xq_launched(struct xsched_xqueue *xq)
{
	uint64_t n;

	pthread_mutex_lock(&xq->lock);
	n = xq->launched;
	pthread_mutex_unlock(&xq->lock);
	return n;
}

int xs_xq_wait(struct xsched_xqueue *xq, uint64_t seq, int64_t timeout_ns)
{
	const struct xs_platform_ops *ops;
	uint64_t start = xs_now_ns();
	struct timespec ts;
	bool idle;
	int ret = 0;

	ops = xq->plat->ops;
	pthread_mutex_lock(&xq->lock);
	if (seq > xq->submitted) {
		pthread_mutex_unlock(&xq->lock);
		return -EINVAL;
	}
	if (timeout_ns >= 0)
		xs_abs_deadline(&ts, timeout_ns);
	/* Lv1: wait for the command to be launched. */
	while (seq > xq->completed && seq > xq->launched && !xq->error) {
		if (timeout_ns < 0)
			ret = -pthread_cond_wait(&xq->cond, &xq->lock);
		else
			ret = -pthread_cond_timedwait(&xq->cond, &xq->lock, &ts);
		if (ret == -ETIMEDOUT)
			break;
	}
	for (;;) {
		int64_t left;
		uint64_t hw = xs_xq_hw_of(xq, seq);

		if (seq <= xq->completed) {
			ret = 0;
			break;
		}
		if (xq->error) {
			ret = xq->error;
			break;
		}
		if (ret == -ETIMEDOUT)
			break;
		left = XS_WAIT_SLICE_NS;
		if (timeout_ns >= 0) {
			int64_t rem = timeout_ns - (int64_t)(xs_now_ns() - start);

			if (rem < 0)
				rem = 0;
			if (rem < left)
				left = rem;
		}
		pthread_mutex_unlock(&xq->lock);
		ret = ops->wait(xq->plat, xq->pq, hw, left);
		pthread_mutex_lock(&xq->lock);
		if (!ret) {
			if (xq->completed < seq) {
				xq->completed = seq;
				pthread_cond_broadcast(&xq->cond);
			}
		} else if (!xs_err_fatal(ret)) {
			if (timeout_ns >= 0 &&
			    (int64_t)(xs_now_ns() - start) >= timeout_ns)
				ret = -ETIMEDOUT;
			else
				ret = 0;
		} else {
			xs_xq_set_error(xq, ret);
		}
	}
	idle = !xs_xq_busy_locked(xq);
	pthread_mutex_unlock(&xq->lock);
	if (idle || ret == -EIO)
		xs_xq_changed(xq);
	return ret;
}

int xs_xq_synchronize(struct xsched_xqueue *xq)
{
	uint64_t seq;

	pthread_mutex_lock(&xq->lock);
	seq = xq->submitted;
	pthread_mutex_unlock(&xq->lock);
	if (!seq)
		return 0;
	return xs_xq_wait(xq, seq, -1);
}

int xs_xq_flush(struct xsched_xqueue *xq)
{
	int ret = 0;

	pthread_mutex_lock(&xq->lock);
	while (!xq->error && xq->submitted > xq->launched) {
		if (xq->stopped || xq->submitting) {
			/* Held: the buffered calls go when the policy (or the
			 * user) releases the XQueue. */
			struct timespec ts;

			xs_abs_deadline(&ts, XS_STOPPED_POLL_NS);
			pthread_cond_timedwait(&xq->cond, &xq->lock, &ts);
			continue;
		}
		ret = lv1_launch_buffered(xq, true);
		if (ret && xs_err_fatal(ret)) {
			xs_xq_set_error(xq, ret);
			break;
		}
		if (ret) {
			struct timespec ts;

			xs_abs_deadline(&ts, XS_RETRY_NS);
			pthread_cond_timedwait(&xq->cond, &xq->lock, &ts);
			ret = 0;
		}
	}
	if (xq->error)
		ret = xq->error;
	pthread_mutex_unlock(&xq->lock);
	if (ret)
		xs_xq_changed(xq);
	return ret;
}

int xs_xq_set_lv1(struct xsched_xqueue *xq, unsigned int threshold,
		  unsigned int batch)
{
	int ret;

	ret = xs_lv1_check(threshold, batch,
			xq->plat->ops->ring_size(xq->plat, xq->pq));
	if (ret)
		return ret;
	pthread_mutex_lock(&xq->lock);
	xq->threshold = threshold;
	xq->batch = batch;
	pthread_cond_broadcast(&xq->cond);
	pthread_mutex_unlock(&xq->lock);
	return 0;
}

void xs_xq_fill_info(struct xsched_xqueue *xq, struct xsched_xq_info *info)
{
	struct xs_hw_info hw;
	int ret;

	pthread_mutex_lock(&xq->lock);
	info->threshold = xq->threshold;
	info->batch = xq->batch;
	info->submitted = xq->submitted;
	info->launched = xq->launched;
	info->completed = xq->completed;
	info->buffered = xq->submitted - xq->launched;
	info->max_in_flight = xq->max_in_flight;
	info->last_error = xq->error ? xq->error : xq->last_status;
	if (xq->error)
		info->state = XSCHED_XQ_FAILED;
	memset(&hw, 0, sizeof(hw));
	ret = xq->pre && xq->pre->ops->query ?
	      xq->pre->ops->query(xq->pre, xq->preq, &hw) : -EOPNOTSUPP;
	pthread_mutex_unlock(&xq->lock);
	if (!ret) {
		info->hw_suspends = hw.suspends;
		info->hw_arbiter_suspends = hw.arbiter_suspends;
		/* Arbitrated: the module's state is fresher than the monitor's. */
		if (info->arbiter && info->state != XSCHED_XQ_FAILED) {
			if (hw.state == XS_HW_SUSPENDING || hw.state == XS_HW_SUSPENDED) {
				info->state = XSCHED_XQ_SUSPENDED;
				info->hold |= XSCHED_HOLD_ARBITER;
			} else {
				info->state = XSCHED_XQ_ACTIVE;
				info->hold &= ~XSCHED_HOLD_ARBITER;
			}
		}
		info->hw_saved_bytes = hw.saved_bytes;
		info->hw_last_suspend_ns = hw.last_suspend_ns;
		info->hw_max_suspend_ns = hw.max_suspend_ns;
		info->hw_total_suspend_ns = hw.total_suspend_ns;
		info->hw_steps_done = hw.steps_done;
		if (!info->last_error && hw.last_error)
			info->last_error = hw.last_error;
	}
}
