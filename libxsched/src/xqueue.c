// SPDX-License-Identifier: MIT
/*
 * XQueues: submission, completion tracking and Lv1 progressive launching.
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

/* Longest single platform wait, so that destroy never waits on a stuck queue. */
#define XS_WAIT_SLICE_NS 50000000LL
/* The worker's retry after a refused launch with nothing in flight. */
#define XS_RETRY_NS 200000LL
/* A held worker or flush looks again this often (a release is a flag set
 * without xq->lock: its wake-up can be missed). */
#define XS_STOPPED_POLL_NS 1000000LL

static void abs_deadline(struct timespec *ts, int64_t timeout_ns)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += timeout_ns / 1000000000LL;
	ts->tv_nsec += timeout_ns % 1000000000LL;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
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

static uint64_t hw_of(const struct xsched_xqueue *xq, uint64_t seq)
{
	return (uint64_t)((int64_t)seq + xq->hw_offset);
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
static int launch_direct(struct xsched_xqueue *xq, const unsigned char *cmds,
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
			ret = ops->wait(xq->plat, xq->pq, hw_of(xq, need),
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

static void set_error(struct xsched_xqueue *xq, int err)
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
			set_error(xq, ret);
			pthread_mutex_unlock(&xq->lock);
			xs_sched_refresh(xq);
			pthread_mutex_lock(&xq->lock);
			continue;
		}
		target = lv1_wait_target(xq);
		if (target) {
			uint64_t hw = hw_of(xq, target);

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
				set_error(xq, ret);
				refresh = true;
			}
			if (refresh) {
				pthread_mutex_unlock(&xq->lock);
				xs_sched_refresh(xq);
				pthread_mutex_lock(&xq->lock);
			}
			continue;
		}
		if (ret && !xq->stopped && xq->submitted > xq->launched) {
			/* Refused with nothing of ours in flight (the ring is
			 * full of other work, or a passing error): nobody will
			 * wake us, so look again soon. */
			struct timespec ts;

			abs_deadline(&ts, XS_RETRY_NS);
			pthread_cond_timedwait(&xq->cond, &xq->lock, &ts);
			continue;
		}
		if (xq->stopped && xq->submitted > xq->launched) {
			struct timespec ts;

			abs_deadline(&ts, XS_STOPPED_POLL_NS);
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
		set_error(xq, ret);
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

static int check_lv1(unsigned int threshold, unsigned int batch, uint32_t ring)
{
	if (threshold < 1 || threshold > XSCHED_THRESHOLD_MAX || threshold > ring)
		return -EINVAL;
	if (batch < 1 || batch > threshold)
		return -EINVAL;
	return 0;
}

/* The levels an XQueue can run at: Lv1 needs a launching submitter, Lv2/Lv3
 * a preemptor that can suspend. */
static unsigned int max_level(const struct xsched_xqueue *xq)
{
	return xq->pre ? xq->pre->ops->max_level : XSCHED_LV1;
}

static unsigned int min_level(const struct xsched_xqueue *xq)
{
	return xq->plat->ops->min_level;
}

/* Create an XQueue over submitter @plat (queue @handle) and preemptor @pre
 * (the same queue, or NULL). */
static int xq_create(struct xsched_xqueue **xqp, struct xsched_platform *plat,
		     struct xsched_platform *pre, uint64_t handle,
		     const struct xsched_attr *attr, void *own_plat, bool worker)
{
	const struct xs_config *cfg = xs_config();
	static const uint32_t known = XSCHED_ATTR_PRIORITY | XSCHED_ATTR_LEVEL |
				      XSCHED_ATTR_THRESHOLD | XSCHED_ATTR_BATCH |
				      XSCHED_ATTR_ARBITER | XSCHED_ATTR_GROUP;
	const struct xs_platform_ops *pops = pre ? pre->ops : NULL;
	unsigned int level, threshold, batch, lmax, lmin;
	struct xsched_xqueue *xq;
	pthread_condattr_t ca;
	uint32_t ring;
	int32_t prio;
	bool arb_mode;
	int ret;

	*xqp = NULL;
	if (attr && ((attr->flags & ~known) || attr->reserved[0]))
		return -EINVAL;
	lmax = pops ? pops->max_level : XSCHED_LV1;
	lmin = plat->ops->min_level;

	arb_mode = cfg->arbiter;
	if (attr && (attr->flags & XSCHED_ATTR_ARBITER)) {
		if (attr->arbiter > 1)
			return -EINVAL;
		if (attr->arbiter && !(pops && pops->set_arbiter))
			return -EOPNOTSUPP;
		arb_mode = attr->arbiter;
	} else if (arb_mode && !(pops && pops->set_arbiter)) {
		xs_warn("XSCHED_ARBITER=1 but platform %s has no arbiter; scheduling in this process only",
			plat->ops->name);
		arb_mode = false;
	}

	prio = cfg->has_priority ? cfg->priority : 0;
	if (attr && (attr->flags & XSCHED_ATTR_PRIORITY)) {
		if (attr->priority < XSCHED_PRIO_MIN ||
		    attr->priority > XSCHED_PRIO_MAX)
			return -EINVAL;
		prio = attr->priority;
	}

	level = lmax;
	if (attr && (attr->flags & XSCHED_ATTR_LEVEL) &&
	    attr->level != XSCHED_LV_DEFAULT) {
		if (attr->level > XSCHED_LV3)
			return -EINVAL;
		if (attr->level > lmax || attr->level < lmin)
			return -EOPNOTSUPP;
		level = attr->level;
	} else if (cfg->has_level) {
		if (lmin > 1 && cfg->level != lmax)
			xs_warn("XSCHED_LEVEL=%u but platform %s supports only Lv%u..Lv%u; using Lv%u",
				cfg->level, plat->ops->name, lmin, lmax, lmax);
		else if (cfg->level > lmax)
			xs_warn("XSCHED_LEVEL=%u but platform %s supports up to Lv%u; using Lv%u",
				cfg->level, plat->ops->name, lmax, lmax);
		else
			level = cfg->level;
	}

	threshold = cfg->threshold;
	batch = cfg->batch;
	if (attr && (attr->flags & XSCHED_ATTR_THRESHOLD))
		threshold = attr->threshold;
	if (attr && (attr->flags & XSCHED_ATTR_BATCH))
		batch = attr->batch;

	xq = calloc(1, sizeof(*xq));
	if (!xq)
		return -ENOMEM;
	xq->plat = plat;
	xq->own_plat = own_plat;
	ret = plat->ops->bind(plat, handle, prio,
			      xs_arb_at(arb_mode, level) ? XS_BIND_ARBITER : 0,
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
	if (!(attr && (attr->flags & (XSCHED_ATTR_THRESHOLD | XSCHED_ATTR_BATCH)))) {
		/* From the environment or the defaults: fit them to the ring. */
		if (threshold > ring) {
			if (level == XSCHED_LV1)
				xs_warn("Lv1 threshold %u is larger than the ring of %u commands; using %u",
					threshold, ring, ring);
			threshold = ring;
		}
		if (batch > threshold)
			batch = threshold;
	}
	ret = check_lv1(threshold, batch, ring);
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
	xq->group = attr && (attr->flags & XSCHED_ATTR_GROUP) ? attr->group : 0;
	xq->s_prio = prio;
	xq->s_level = level;
	xq->level = level;
	xq->arb_mode = arb_mode;
	xq->s_arb = xs_arb_at(arb_mode, level);
	xq->threshold = threshold;
	xq->batch = batch;

	if (level == XSCHED_LV1 && worker) {
		ret = xs_xq_lv1_start_worker(xq);
		if (ret) {
			xq->own_plat = NULL;	/* the caller frees it */
			xs_xq_free(xq);
			return ret;
		}
	}
	xs_sched_add(xq);
	xs_info("q%u: created on %s, priority %d, Lv%u, threshold %u, batch %u%s",
		xq->id, plat->ops->name, prio, level, threshold, batch,
		!arb_mode ? "" : xq->s_arb ? ", scheduled by the module's arbiter" :
		", arbiter mode (Lv1: scheduled in this process)");
	*xqp = xq;
	return 0;
}

XS_EXPORT int xsched_xqueue_create(struct xsched_xqueue **xqp,
				   struct xsched_platform *plat, uint64_t handle,
				   const struct xsched_attr *attr)
{
	if (!xqp || !plat || !plat->ops)
		return -EINVAL;
	return xq_create(xqp, plat, plat->ops->suspend ? plat : NULL, handle,
			 attr, NULL, true);
}

static int create_calls(struct xsched_xqueue **xqp, const struct xsched_call_ops *ops,
			void *ctx, const struct xsched_attr *attr, bool worker)
{
	struct xsched_platform *p;
	int ret;

	if (!xqp || !ops || !ops->mark_record || !ops->mark_wait ||
	    !ops->mark_free)
		return -EINVAL;
	*xqp = NULL;
	p = xs_calls_platform(ops, ctx);
	if (!p)
		return -ENOMEM;
	ret = xq_create(xqp, p, NULL, 0, attr, p, worker);
	if (ret)
		xs_calls_platform_free(p);
	return ret;
}

XS_EXPORT int xsched_xqueue_create_calls(struct xsched_xqueue **xqp,
					 const struct xsched_call_ops *ops,
					 void *ctx, const struct xsched_attr *attr)
{
	return create_calls(xqp, ops, ctx, attr, true);
}

int xs_xqueue_create_caller_held(struct xsched_xqueue **xqp, const struct xsched_call_ops *ops,
				 void *ctx, const struct xsched_attr *attr)
{
	return create_calls(xqp, ops, ctx, attr, false);
}

/*
 * Give a call queue a preemptor: @pre's queue @handle (a sim or kfd queue),
 * which then allows Lv2/Lv3.  Only while idle, at Lv1, with none yet.
 */
XS_EXPORT int xsched_set_preemptor(struct xsched_xqueue *xq,
				   struct xsched_platform *pre, uint64_t handle)
{
	void *preq;
	int ret;

	if (!xq || !pre || !pre->ops->suspend)
		return -EINVAL;
	if (xs_foreign(xq))
		return -ECHILD;
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

/* Locked: drop what a failed XQueue can never launch. */
static void drop_buffered(struct xsched_xqueue *xq)
{
	const struct xs_platform_ops *ops = xq->plat->ops;
	size_t sz = cmd_size(xq);

	while (ops->drop && xq->submitted > xq->launched) {
		uint64_t idx = xq->launched & (xq->buf_cap - 1);

		ops->drop(xq->plat, xq->pq, xq->buf + idx * sz, 1);
		xq->launched++;
	}
	xq->launched = xq->submitted;
}

XS_EXPORT int xsched_xqueue_destroy(struct xsched_xqueue *xq)
{
	int ret;

	if (!xq)
		return -EINVAL;
	if (xs_foreign(xq))
		return -ECHILD;
	/* Nobody holds it from now on (user, policy), and it holds nobody:
	 * everything submitted can complete whoever else is busy. */
	xs_sched_kill(xq);
	ret = xsched_synchronize(xq);
	xs_xq_lv1_stop_worker(xq);
	pthread_mutex_lock(&xq->lock);
	drop_buffered(xq);
	pthread_mutex_unlock(&xq->lock);
	xs_sched_remove(xq);
	/* The hardware queue is unbound when the last reference goes.  The
	 * others (the monitor's poll pass, a group sync, a dependency hint)
	 * are short: wait for them, so that the caller may bind the same
	 * hardware queue again as soon as this returns. */
	while (atomic_load(&xq->refs) > 1)
		usleep(50);
	xs_info("q%u: destroyed", xq->id);
	xs_xqueue_put(xq);
	return ret == -EIO ? 0 : ret;
}

/* Submit @count commands of the submitter's size; see xsched_submit(). */
static int submit(struct xsched_xqueue *xq, const void *cmds, unsigned int count,
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
		ret = launch_direct(xq, cmds, count);
	} else {
		/* Refill first: the worker may still sleep towards a later
		 * completion while room is known. */
		if (xq->submitted > xq->launched && !xq->stopped)
			(void)lv1_launch_buffered(xq, false);
		if (!xq->stopped && xq->submitted == xq->launched &&
		    xq->launched + count - xq->completed <= xq->threshold) {
			/* Lv1 with room: no reason to go through the worker. */
			ret = launch_direct(xq, cmds, count);
		} else {
			ret = buf_reserve(xq, count);
			if (!ret) {
				buf_push(xq, cmds, count);
				pthread_cond_broadcast(&xq->cond);
			}
		}
	}
	if (ret && xs_err_fatal(ret))
		set_error(xq, ret);
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
		xs_sched_refresh(xq);
	return ret;
}

/* Locked: take what the submitter already knows completed (no hardware
 * query): a wait for room may have learned more than it asked for. */
static void learn_known_done(struct xsched_xqueue *xq)
{
	const struct xs_platform_ops *ops = xq->plat->ops;
	int64_t c;

	if (!ops->known_done || !xq->hw_offset_set)
		return;
	c = (int64_t)ops->known_done(xq->plat, xq->pq) - xq->hw_offset;
	if (c > (int64_t)xq->launched)
		c = (int64_t)xq->launched;
	if (c > (int64_t)xq->completed) {
		xq->completed = (uint64_t)c;
		pthread_cond_broadcast(&xq->cond);
	}
}

static bool now_capped(struct xsched_xqueue *xq)
{
	if (xq->launched - xq->completed < xq->threshold)
		return false;
	learn_known_done(xq);
	return xq->launched - xq->completed >= xq->threshold;
}

int xs_xq_now_begin(struct xsched_xqueue *xq, unsigned int flags)
{
	int ret;

	if (xs_foreign(xq))
		return -ECHILD;
	pthread_mutex_lock(&xq->lock);
	while (xq->submitting)
		pthread_cond_wait(&xq->cond, &xq->lock);
	ret = xq->error;
	if (!ret && !(flags & XS_NOW_FORCE) &&
	    (xq->stopped || ((flags & XS_NOW_CAP) && now_capped(xq))))
		ret = -EAGAIN;
	if (!ret)
		xq->in_calls++;
	pthread_mutex_unlock(&xq->lock);
	return ret;
}

/* The call was made by the caller: count it through the submitter. */
static int now_made(void *arg)
{
	(void)arg;
	return 0;
}

void xs_xq_now_end(struct xsched_xqueue *xq, bool ran, unsigned int flags)
{
	const struct xsched_call c = { .fn = now_made };
	const struct xs_platform_ops *ops = xq->plat->ops;
	bool was_idle, mark = false;
	int ret = 0;

	pthread_mutex_lock(&xq->lock);
	xq->in_calls--;
	was_idle = !xs_xq_busy_locked(xq);
	if (ran)
		ret = launch_direct(xq, (const unsigned char *)&c, 1);
	if (ran && !ret && (flags & XS_NOW_MEMWAIT))
		xq->memwait_seq = xq->launched;
	/* A capped stream: a mark every `batch` calls (never more than 16 per
	 * threshold), for the waits for room (see internal.h). */
	if (ran && !ret && (flags & XS_NOW_CAP) && ops->mark_now) {
		unsigned int step = xq->batch > (xq->threshold + 15) / 16 ?
				    xq->batch : (xq->threshold + 15) / 16;

		mark = step && xq->launched % step == 0;
	}
	if (ret && xs_err_fatal(ret))
		set_error(xq, ret);
	pthread_mutex_unlock(&xq->lock);
	if (ran && (was_idle || ret))
		xs_sched_refresh(xq);
	/* Only the launching thread can name an owner-marked stream: it marks
	 * while someone is held by it (decided by the refresh above). */
	if (ran && !ret && ops->mark_now && !mark &&
	    atomic_load_explicit(&xq->mark_wanted, memory_order_relaxed) &&
	    (xs_calls_mode(xq) & XS_CALLS_OWNER_MARKS))
		mark = true;
	if (mark)
		ops->mark_now(xq->plat, xq->pq);
}

void xs_xq_wait_unheld(struct xsched_xqueue *xq, int64_t timeout_ns)
{
	unsigned int gen = atomic_load(&xq->gate_gen);
	struct timespec ts;

	if (!atomic_load(&xq->stopped) || __atomic_load_n(&xq->error, __ATOMIC_RELAXED))
		return;
	abs_deadline(&ts, timeout_ns);
	pthread_mutex_lock(&xq->gate_lock);
	while (atomic_load(&xq->gate_gen) == gen &&
	       pthread_cond_timedwait(&xq->gate_cond, &xq->gate_lock, &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&xq->gate_lock);
}

bool xs_xq_memwait(struct xsched_xqueue *xq)
{
	bool pending;

	pthread_mutex_lock(&xq->lock);
	learn_known_done(xq);
	pending = xq->memwait_seq > xq->completed;
	pthread_mutex_unlock(&xq->lock);
	return pending;
}

bool xs_xq_idle(struct xsched_xqueue *xq)
{
	bool idle;

	pthread_mutex_lock(&xq->lock);
	learn_known_done(xq);
	idle = !xq->in_calls && (xq->completed >= xq->launched || xq->error);
	pthread_mutex_unlock(&xq->lock);
	return idle;
}

bool xs_xq_close(struct xsched_xqueue *xq, bool record)
{
	const struct xs_platform_ops *ops = xq->plat->ops;
	uint64_t launched = xs_xq_launched(xq);

	if (xs_xq_idle(xq)) {
		xs_calls_set_mode(xq, xs_calls_mode(xq) | XS_CALLS_CLOSED);
		return true;
	}
	if (!xq->own_plat || !ops->mark_now)
		return false;
	if (record)
		ops->mark_now(xq->plat, xq->pq);
	xs_calls_set_mode(xq, xs_calls_mode(xq) | XS_CALLS_CLOSED);
	/* A last mark covers everything, or nothing will ever tell. */
	return xs_calls_covered(xq, hw_of(xq, launched));
}

void xs_xq_completed_upto(struct xsched_xqueue *xq, uint64_t seq)
{
	bool idle;

	if (xs_foreign(xq))
		return;
	pthread_mutex_lock(&xq->lock);
	if (seq > xq->launched)
		seq = xq->launched;
	if (seq > xq->completed) {
		xq->completed = seq;
		pthread_cond_broadcast(&xq->cond);
	}
	idle = !xs_xq_busy_locked(xq);
	pthread_mutex_unlock(&xq->lock);
	if (idle)
		xs_sched_refresh(xq);
}

uint64_t xs_xq_launched(struct xsched_xqueue *xq)
{
	uint64_t n;

	pthread_mutex_lock(&xq->lock);
	n = xq->launched;
	pthread_mutex_unlock(&xq->lock);
	return n;
}

XS_EXPORT int xsched_submit(struct xsched_xqueue *xq, const void *cmds,
			    unsigned int count, uint64_t *seq)
{
	if (!xq || !cmds || !count)
		return -EINVAL;
	if (xs_foreign(xq))
		return -ECHILD;
	if (xq->own_plat)
		return -EINVAL;	/* a call queue takes xsched_submit_call() */
	return submit(xq, cmds, count, seq, NULL, NULL);
}

XS_EXPORT int xsched_submit_call(struct xsched_xqueue *xq,
				 const struct xsched_call *calls,
				 unsigned int count, uint64_t *seq, int *status)
{
	uint64_t s1 = 0, taken = 0;
	unsigned int i;
	int ret;

	if (!xq || !calls || !count)
		return -EINVAL;
	for (i = 0; i < count; i++)
		if (!calls[i].fn)
			return -EINVAL;
	if (xs_foreign(xq))
		return -ECHILD;
	if (!xq->own_plat)
		return -EINVAL;
	ret = submit(xq, calls, count, &s1, status, &taken);
	if (ret) {
		/* Calls not taken are released here: the caller passes the
		 * call through itself. */
		for (i = (unsigned int)(taken < count ? taken : count); i < count; i++)
			if (calls[i].release)
				calls[i].release(calls[i].arg);
		return ret;
	}
	if (seq)
		*seq = s1;
	return 0;
}
XS_EXPORT int xsched_wait(struct xsched_xqueue *xq, uint64_t seq,
			  int64_t timeout_ns)
{
	const struct xs_platform_ops *ops;
	uint64_t start = xs_now_ns();
	struct timespec ts;
	bool idle;
	int ret = 0;

	if (!xq)
		return -EINVAL;
	if (xs_foreign(xq))
		return -ECHILD;
	ops = xq->plat->ops;
	pthread_mutex_lock(&xq->lock);
	if (seq > xq->submitted) {
		pthread_mutex_unlock(&xq->lock);
		return -EINVAL;
	}
	if (timeout_ns >= 0)
		abs_deadline(&ts, timeout_ns);
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
		uint64_t hw = hw_of(xq, seq);

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
			set_error(xq, ret);
		}
	}
	idle = !xs_xq_busy_locked(xq);
	pthread_mutex_unlock(&xq->lock);
	if (idle || ret == -EIO)
		xs_sched_refresh(xq);
	return ret;
}

XS_EXPORT int xsched_synchronize(struct xsched_xqueue *xq)
{
	uint64_t seq;

	if (!xq)
		return -EINVAL;
	if (xs_foreign(xq))
		return -ECHILD;
	pthread_mutex_lock(&xq->lock);
	seq = xq->submitted;
	pthread_mutex_unlock(&xq->lock);
	if (!seq)
		return 0;
	return xsched_wait(xq, seq, -1);
}

XS_EXPORT int xsched_flush(struct xsched_xqueue *xq)
{
	int ret = 0;

	if (!xq)
		return -EINVAL;
	if (xs_foreign(xq))
		return -ECHILD;
	pthread_mutex_lock(&xq->lock);
	while (!xq->error && xq->submitted > xq->launched) {
		if (xq->stopped || xq->submitting) {
			/* Held: the buffered calls go when the policy (or the
			 * user) releases the XQueue. */
			struct timespec ts;

			abs_deadline(&ts, XS_STOPPED_POLL_NS);
			pthread_cond_timedwait(&xq->cond, &xq->lock, &ts);
			continue;
		}
		ret = lv1_launch_buffered(xq, true);
		if (ret && xs_err_fatal(ret)) {
			set_error(xq, ret);
			break;
		}
		if (ret) {
			struct timespec ts;

			abs_deadline(&ts, XS_RETRY_NS);
			pthread_cond_timedwait(&xq->cond, &xq->lock, &ts);
			ret = 0;
		}
	}
	if (xq->error)
		ret = xq->error;
	pthread_mutex_unlock(&xq->lock);
	if (ret)
		xs_sched_refresh(xq);
	return ret;
}

XS_EXPORT int xsched_depend(struct xsched_xqueue *xq, struct xsched_xqueue *src,
			    uint64_t seq)
{
	if (!xq || !src || xq == src)
		return -EINVAL;
	if (xs_foreign(xq) || xs_foreign(src))
		return -ECHILD;
	return xs_sched_depend(xq, src, seq);
}

XS_EXPORT int xsched_group_synchronize(uint32_t group)
{
	return xs_sched_group_sync(group);
}

XS_EXPORT int xsched_set_lv1(struct xsched_xqueue *xq, unsigned int threshold,
			     unsigned int batch)
{
	int ret;

	if (!xq)
		return -EINVAL;
	if (xs_foreign(xq))
		return -ECHILD;
	ret = check_lv1(threshold, batch,
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

static int set_level(struct xsched_xqueue *xq, unsigned int level, bool live)
{
	int ret;

	if (!xq)
		return -EINVAL;
	if (xs_foreign(xq))
		return -ECHILD;
	if (level == XSCHED_LV_DEFAULT)
		level = max_level(xq);
	if (level > XSCHED_LV3)
		return -EINVAL;
	if (level > max_level(xq) || level < min_level(xq))
		return -EOPNOTSUPP;
	ret = xs_sched_set_level(xq, level, live);
	if (ret)
		return ret;
	if (level == XSCHED_LV1)
		return xs_xq_lv1_start_worker(xq);
	xs_xq_lv1_stop_worker(xq);
	return 0;
}

XS_EXPORT int xsched_set_level(struct xsched_xqueue *xq, unsigned int level)
{
	return set_level(xq, level, false);
}

int xs_xq_set_level_live(struct xsched_xqueue *xq, unsigned int level)
{
	return set_level(xq, level, true);
}

_Static_assert(offsetof(struct xsched_xq_info, group) == XSCHED_XQ_INFO_SIZE_VER0,
	       "xsched_xq_info: 0.1's fields moved");
_Static_assert(sizeof(struct xsched_xq_info) == XSCHED_XQ_INFO_SIZE_VER1,
	       "xsched_xq_info: size of 0.3");

static void query(struct xsched_xqueue *xq, struct xsched_xq_info *info)
{
	struct xs_hw_info hw;
	int ret;

	memset(info, 0, sizeof(*info));
	info->group = xq->group;
	xs_sched_fill_info(xq, info);
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

XS_EXPORT int xsched_query(struct xsched_xqueue *xq, struct xsched_xq_info *info,
		 size_t size)
{
	struct xsched_xq_info full;

	if (!xq || !info || size < XSCHED_XQ_INFO_SIZE_VER0)
		return -EINVAL;
	if (xs_foreign(xq))
		return -ECHILD;
	query(xq, &full);
	xs_copy_out(info, size, &full, sizeof(full));
	return 0;
}

/* 0.1: xsched_query(xq, info) with the 0.1 struct. */
XS_EXPORT int xs_query_v01(struct xsched_xqueue *xq, struct xsched_xq_info *info)
{
	return xsched_query(xq, info, XSCHED_XQ_INFO_SIZE_VER0);
}
XS_SYMVER("xs_query_v01", "xsched_query@LIBXSCHED_0.1");
XS_SYMVER("xsched_query", "xsched_query@@@LIBXSCHED_0.3, remove");

XS_EXPORT uint32_t xsched_xqueue_id(const struct xsched_xqueue *xq)
{
	return xq ? xq->id : 0;
}
