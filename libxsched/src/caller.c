// SPDX-License-Identifier: MIT
/*
 * Caller-held dispatch, for a runtime whose calls cannot be copied (the
 * interposers): the caller makes each call itself, between
 * xs_xq_now_begin() and xs_xq_now_end(), with no lock held in between, and
 * the XQueue only counts it as launched; nothing is ever buffered.  Also the
 * completion the runtime tells of (a synchronize, a closed stream), and the
 * waits of a caller that the policy holds.  internal.h gives the contract.
 */
#include <errno.h>
#include <time.h>

#include "internal.h"

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
		ret = xs_xq_launch_direct(xq, (const unsigned char *)&c, 1);
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
		xs_xq_set_error(xq, ret);
	pthread_mutex_unlock(&xq->lock);
	if (ran && (was_idle || ret))
		xs_xq_changed(xq);
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
	xs_abs_deadline(&ts, timeout_ns);
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
	return xs_calls_covered(xq, xs_xq_hw_of(xq, launched));
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
		xs_xq_changed(xq);
}
