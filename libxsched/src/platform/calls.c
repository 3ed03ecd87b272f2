// SPDX-License-Identifier: MIT
/*
 * The calls platform: the submitter of an XQueue whose commands are runtime
 * calls (struct xsched_call).  Launching a command runs its function, which
 * hands the call to the runtime, then its release hook.  The hardware
 * sequence number is the count of calls handed over; completion is learned
 * from marks the runtime records (an event after the last call): a mark is
 * recorded only when someone needs to know (a wait, the monitor, a capped
 * caller-held stream every `batch` calls: xs_xq_now_end()), so a launch
 * that nobody waits for costs no mark.  A wait waits for the oldest mark
 * that covers what it needs; what it learns (that mark's number) is
 * known_done().
 *
 * launch() runs under the XQueue's lock (one launcher at a time; for a
 * caller-held queue it only counts: the caller made the call itself, with
 * no lock held).  wait() and completed() run on any thread.  marks_lock
 * guards the list only: a record or a wait is made with it dropped, so no
 * thread waits behind another's runtime call (completed() only tries it and
 * only polls).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../internal.h"

#define CALLS_MARKS 32	/* pending marks per queue */

/* A mark: heap-allocated so that a waiter can wait on it with marks_lock
 * dropped; freed by whoever drops the last reference. */
struct calls_mark {
	uint64_t seq;	/* calls handed over when it was recorded */
	void *m;
	unsigned int refs;	/* the list's (while listed) + waiters' */
};

struct calls_q {
	struct xsched_platform plat;
	struct xs_platform_ops ops;
	const struct xsched_call_ops *cops;
	void *ctx;
	int status;			/* first nonzero of the last launch */
	_Atomic uint64_t launched;
	_Atomic uint64_t done;
	pthread_mutex_t marks_lock;	/* never held across a runtime call */
	struct calls_mark *marks[CALLS_MARKS];	/* oldest first */
	unsigned int nmarks;
	_Atomic unsigned int mode;	/* XS_CALLS_* */
};

static struct calls_q *cq_of(struct xsched_platform *p)
{
	return p->priv;
}

static uint32_t c_ring_size(struct xsched_platform *p, void *pq)
{
	(void)p;
	(void)pq;
	return XSCHED_THRESHOLD_MAX;	/* the runtime queues without limit */
}

static int c_bind(struct xsched_platform *p, uint64_t handle, int32_t prio,
		  unsigned int flags, void **pqp)
{
	(void)handle;
	(void)prio;
	(void)flags;
	*pqp = p->priv;
	return 0;
}

static void c_unbind(struct xsched_platform *p, void *pq)
{
	(void)p;
	(void)pq;
}

static int c_launch(struct xsched_platform *p, void *pq, const void *cmds,
		    unsigned int n, uint64_t *hw_seq)
{
	struct calls_q *q = cq_of(p);
	const struct xsched_call *c = cmds;
	unsigned int i;

	(void)pq;
	for (i = 0; i < n; i++) {
		int st = c[i].fn(c[i].arg);

		if (st && !q->status)
			q->status = st;
		if (c[i].release)
			c[i].release(c[i].arg);
	}
	*hw_seq = atomic_fetch_add(&q->launched, n) + n;
	return 0;
}

static void c_drop(struct xsched_platform *p, void *pq, const void *cmds,
		   unsigned int n)
{
	const struct xsched_call *c = cmds;
	unsigned int i;

	(void)p;
	(void)pq;
	for (i = 0; i < n; i++)
		if (c[i].release)
			c[i].release(c[i].arg);
}

static int c_take_status(struct xsched_platform *p, void *pq)
{
	struct calls_q *q = cq_of(p);
	int st = q->status;

	(void)pq;
	q->status = 0;
	return st;
}

static int c_thread_enter(struct xsched_platform *p, void *pq)
{
	struct calls_q *q = cq_of(p);

	(void)pq;
	return q->cops->enter ? q->cops->enter(q->ctx) : 0;
}

/* marks_lock held: drop a reference on @k (its record is done with). */
static void mark_put(struct calls_q *q, struct calls_mark *k)
{
	if (--k->refs)
		return;
	q->cops->mark_free(q->ctx, k->m);
	free(k);
}

/* marks_lock held: marks up to index @i (inclusive) completed. */
static void marks_done(struct calls_q *q, unsigned int i)
{
	unsigned int k;

	if (q->marks[i]->seq > atomic_load(&q->done))
		atomic_store(&q->done, q->marks[i]->seq);
	for (k = 0; k <= i; k++)
		mark_put(q, q->marks[k]);
	memmove(q->marks, q->marks + i + 1,
		(q->nmarks - i - 1) * sizeof(q->marks[0]));
	q->nmarks -= i + 1;
}

/* marks_lock held: @k, waited on with the lock dropped, completed. */
static void mark_seen_done(struct calls_q *q, struct calls_mark *k)
{
	unsigned int i;

	for (i = 0; i < q->nmarks; i++)
		if (q->marks[i] == k) {
			marks_done(q, i);
			return;
		}
	if (k->seq > atomic_load(&q->done))	/* already unlisted */
		atomic_store(&q->done, k->seq);
}

/*
 * marks_lock held: make sure a mark covers @seq (<= launched), recording
 * one if needed.  The record is a runtime call: the lock is dropped around
 * it, and the new mark is listed in order of its number.  A full list
 * records nothing (-ENOSPC: wait for the newest one first).  A closed
 * queue records nothing (-ESRCH: its stream is gone).
 */
static int mark_cover(struct calls_q *q, uint64_t seq, bool owner)
{
	struct calls_mark *k;
	unsigned int i;
	uint64_t now;
	int ret;

	if (q->nmarks && q->marks[q->nmarks - 1]->seq >= seq)
		return 0;
	if (atomic_load(&q->mode) & (XS_CALLS_CLOSED | (owner ? 0 : XS_CALLS_OWNER_MARKS)))
		return -ESRCH;
	if (q->nmarks == CALLS_MARKS)
		return -ENOSPC;
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	now = atomic_load(&q->launched);	/* before the record: never too much */
	pthread_mutex_unlock(&q->marks_lock);
	ret = q->cops->mark_record(q->ctx, &k->m);
	pthread_mutex_lock(&q->marks_lock);
	if (ret) {
		free(k);
		return ret;
	}
	k->seq = now;
	k->refs = 1;
	if (now <= atomic_load(&q->done) || q->nmarks == CALLS_MARKS) {
		mark_put(q, k);	/* said nothing new, or no room left */
		return 0;
	}
	for (i = q->nmarks; i > 0 && q->marks[i - 1]->seq > now; i--)
		;
	memmove(q->marks + i + 1, q->marks + i, (q->nmarks - i) * sizeof(q->marks[0]));
	q->marks[i] = k;
	q->nmarks++;
	return 0;
}

static void c_mark_now(struct xsched_platform *p, void *pq)
{
	struct calls_q *q = cq_of(p);

	(void)pq;
	pthread_mutex_lock(&q->marks_lock);
	/* Best effort: a full mark list or a refusal leaves waits coarser.
	 * The launching thread itself asks: owner marks are its to make. */
	if (q->nmarks < CALLS_MARKS)
		(void)mark_cover(q, atomic_load(&q->launched), true);
	pthread_mutex_unlock(&q->marks_lock);
}

static uint64_t c_known_done(struct xsched_platform *p, void *pq)
{
	(void)pq;
	return atomic_load(&cq_of(p)->done);
}

/*
 * Wait (at most @timeout_ns) for the first mark that covers @hw_seq, or the
 * newest one when none does and none can be made; the wait itself is made
 * with marks_lock dropped, so that other waiters and the launching thread's
 * own marks never wait behind it.
 */
static int c_wait(struct xsched_platform *p, void *pq, uint64_t hw_seq,
		  int64_t timeout_ns)
{
	struct calls_q *q = cq_of(p);
	struct calls_mark *k = NULL;
	unsigned int i;
	int ret;

	(void)pq;
	if (atomic_load(&q->done) >= hw_seq)
		return 0;
	pthread_mutex_lock(&q->marks_lock);
	ret = mark_cover(q, hw_seq, false);
	if (ret == -ESRCH || ret == -ENOSPC)
		ret = 0;	/* what is listed is all there is */
	for (i = 0; !ret && i < q->nmarks; i++) {
		if (q->marks[i]->seq < hw_seq && i + 1 < q->nmarks)
			continue;
		k = q->marks[i];
		k->refs++;
		break;
	}
	pthread_mutex_unlock(&q->marks_lock);
	if (!k && !ret && atomic_load(&q->done) < hw_seq) {
		/* No mark, and none can be made here (the launching thread
		 * makes them, or the stream is gone): look again a little
		 * later rather than spin. */
		struct timespec ts = { 0, timeout_ns >= 0 && timeout_ns < 1000000 ?
					  (long)timeout_ns : 1000000L };

		nanosleep(&ts, NULL);
		return -ETIMEDOUT;
	}
	if (!k)
		return ret;
	ret = q->cops->mark_wait(q->ctx, k->m, timeout_ns);
	pthread_mutex_lock(&q->marks_lock);
	if (!ret)
		mark_seen_done(q, k);
	mark_put(q, k);
	pthread_mutex_unlock(&q->marks_lock);
	if (!ret && atomic_load(&q->done) < hw_seq)
		ret = -ETIMEDOUT;	/* the newest mark was older: look again */
	return ret;
}

static int c_completed(struct xsched_platform *p, void *pq, uint64_t *done)
{
	struct calls_q *q = cq_of(p);
	int ret = 0, i;

	(void)pq;
	if (atomic_load(&q->done) < atomic_load(&q->launched) &&
	    !pthread_mutex_trylock(&q->marks_lock)) {
		if (!(atomic_load(&q->mode) & (XS_CALLS_PASSIVE | XS_CALLS_OWNER_MARKS |
					       XS_CALLS_CLOSED)))
			ret = mark_cover(q, atomic_load(&q->launched), false);
		if (ret == -ENOSPC)
			ret = 0;
		/* The newest completed mark says the most; a poll is no wait. */
		for (i = (int)q->nmarks - 1; !ret && i >= 0; i--) {
			int r = q->cops->mark_wait(q->ctx, q->marks[i]->m, 0);

			if (!r) {
				marks_done(q, (unsigned int)i);
				break;
			}
			if (r != -ETIMEDOUT)
				ret = r;
		}
		pthread_mutex_unlock(&q->marks_lock);
	}
	*done = atomic_load(&q->done);
	return ret == -EIO ? -EIO : 0;
}

struct xsched_platform *xs_calls_platform(const struct xsched_call_ops *cops,
					  void *ctx)
{
	struct calls_q *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->cops = cops;
	q->ctx = ctx;
	pthread_mutex_init(&q->marks_lock, NULL);
	q->ops = (struct xs_platform_ops){
		.name = "calls",
		.cmd_size = sizeof(struct xsched_call),
		.max_level = XSCHED_LV1,
		.min_level = XSCHED_LV1,
		.max_submit = 1U << 20,
		.ring_size = c_ring_size,
		.bind = c_bind,
		.unbind = c_unbind,
		.launch = c_launch,
		.wait = c_wait,
		.completed = c_completed,
		.thread_enter = c_thread_enter,
		.take_status = c_take_status,
		.drop = c_drop,
		.mark_now = c_mark_now,
		.known_done = c_known_done,
	};
	q->plat.ops = &q->ops;
	q->plat.priv = q;
	return &q->plat;
}

void xs_calls_set_mode(struct xsched_xqueue *xq, unsigned int mode)
{
	if (xq->own_plat)
		atomic_store(&cq_of(xq->own_plat)->mode, mode);
}

bool xs_calls_covered(struct xsched_xqueue *xq, uint64_t seq)
{
	struct calls_q *q;
	bool ok;

	if (!xq->own_plat)
		return false;
	q = cq_of(xq->own_plat);
	pthread_mutex_lock(&q->marks_lock);
	ok = atomic_load(&q->done) >= seq ||
	     (q->nmarks && q->marks[q->nmarks - 1]->seq >= seq);
	pthread_mutex_unlock(&q->marks_lock);
	return ok;
}

unsigned int xs_calls_mode(struct xsched_xqueue *xq)
{
	return xq->own_plat ? atomic_load(&cq_of(xq->own_plat)->mode) : 0;
}

void xs_calls_platform_free(struct xsched_platform *p)
{
	struct calls_q *q = cq_of(p);
	unsigned int i;

	for (i = 0; i < q->nmarks; i++)
		mark_put(q, q->marks[i]);
	pthread_mutex_destroy(&q->marks_lock);
	free(q);
}
