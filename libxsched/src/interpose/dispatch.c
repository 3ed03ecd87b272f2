// SPDX-License-Identifier: MIT
/*
 * The interposition core's dispatch (interpose.h, "Classification"): a
 * scheduled call becomes a call command (xsi_call()), an ordered one drains
 * its scope first (xsi_drain(), xsi_pass()), a caller-held hook asks the
 * XQueue between its begin and end and waits while the policy holds it
 * (xsi_hold_begin()), synchronizations tell the XQueue what completed
 * (xsi_sync_begin()), and events carry one stream's progress to another's
 * wait (xsi_event_*()).
 *
 * Caller-held dispatch takes no lock across the runtime call (see
 * xsi_hold_begin() in interpose.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <time.h>

#include "core_state.h"

/* Hooks of this thread between their begin and end: a hook entered from
 * inside the runtime (a runtime calling its own exported functions) goes
 * straight through, in the order of the call it is part of. */
static thread_local unsigned int depth;

/* ---- dispatch ---------------------------------------------------------------- */

int xsi_call(struct xsi_stream *s, const struct xsched_call *c, int *status,
	     uint64_t *seq)
{
	uint64_t sq = 0;
	int st = 0, ret;

	if (!s || !s->xq || !c || !c->fn) {
		if (c && c->release)
			c->release(c->arg);
		return -EINVAL;
	}
	ret = xsched_submit_call(s->xq, c, 1, &sq, &st);
	if (status)
		*status = ret ? 0 : st;
	if (seq)
		*seq = sq;
	if (xsi_log_on()) {
		struct xsched_xq_info info;

		if (ret)
			xsi_log(s->rt, "stream %#lx -> q%u: refused (%s): passes through",
				(unsigned long)s->handle, xsched_xqueue_id(s->xq),
				strerror(-ret));
		else if (!xsched_query(s->xq, &info, sizeof(info)))
			xsi_log(s->rt, "stream %#lx -> q%u: %s seq %llu",
				(unsigned long)s->handle, info.id,
				info.launched >= sq ? "launched" : "buffered",
				(unsigned long long)sq);
	}
	return ret;
}

/* Flush every stream of @device (-1: all); each XQueue is referenced, so a
 * concurrent destroy is harmless. */
static int drain_all(struct xsi_runtime *rt, int32_t device)
{
	struct xsi_state *st = rt->state;
	struct xsched_xqueue **xqs;
	unsigned int i, n = 0;
	int ret = 0;

	xqs = calloc(XSI_SLOTS, sizeof(*xqs));
	if (!xqs)
		return -ENOMEM;
	pthread_mutex_lock(&st->lock);
	for (i = 0; i < XSI_SLOTS; i++) {
		struct xsi_stream *s = atomic_load(&st->slots[i]);

		if (!s || s == TOMB || !s->xq)
			continue;
		if (device >= 0 && s->desc.device != device)
			continue;
		xqs[n++] = s->xq;
	}
	for (i = 0; i < n; i++)
		atomic_fetch_add(&xqs[i]->refs, 1);
	pthread_mutex_unlock(&st->lock);
	/* Outside the table lock: a flush waits while its XQueue is held. */
	for (i = 0; i < n; i++) {
		int r = xsched_flush(xqs[i]);

		if (r && !ret && r != -ECHILD)
			ret = r;
		xs_xqueue_put(xqs[i]);
	}
	free(xqs);
	return ret;
}

int xsi_drain(struct xsi_runtime *rt, struct xsi_stream *s, enum xsi_scope scope)
{
	int ret;

	if (!rt->state || caller_held(rt))
		return 0;	/* caller-held: nothing is ever buffered */
	switch (scope) {
	case XSI_SCOPE_STREAM:
		if (!s || !s->xq)
			return 0;
		ret = xsched_flush(s->xq);
		xsi_log(rt, "stream %#lx -> q%u: drained", (unsigned long)s->handle,
			xsched_xqueue_id(s->xq));
		return ret;
	case XSI_SCOPE_DEVICE:
		ret = drain_all(rt, s ? s->desc.device :
				rt->current_device ? rt->current_device() : 0);
		xsi_log(rt, "device drained");
		return ret;
	default:
		ret = drain_all(rt, -1);
		xsi_log(rt, "every stream drained");
		return ret;
	}
}

int xsi_pass(struct xsi_runtime *rt, const struct xsi_entry *e, uintptr_t handle)
{
	struct xsi_stream *s = NULL;

	if (e->cls == XSI_HARMLESS) {
		xsi_log(rt, "%s: pass-through (harmless)", e->name);
		return 0;
	}
	if (e->scope == XSI_SCOPE_STREAM)
		s = xsi_stream_get(rt, handle, e->flags);
	else if (rt->default_kind(handle) == XSI_NOT_DEFAULT)
		s = xsi_stream_get(rt, handle, e->flags);
	xsi_log(rt, "%s stream %#lx: pass-through (ordered)", e->name,
		(unsigned long)handle);
	return xsi_drain(rt, s, e->scope);
}

/* ---- caller-held dispatch ------------------------------------------------------ */

static bool gated(struct xsi_runtime *rt, struct xsi_stream *s)
{
	int32_t dev = s->desc.device;

	if (dev < 0 || dev >= XSI_DEVS)
		return false;
	return xs_policy_capped(s->desc.priority,
				atomic_load_explicit(&rt->state->maxp[dev], memory_order_relaxed));
}

#define XSI_WAIT_SLICE_NS 50000000LL	/* one wait on a mark, at most */
#define XSI_HELD_SLICE_NS 1000000LL	/* one wait for the policy's release */
/* A stream held by one that waits on a memory value (whose writer may be
 * the held stream: the library cannot see who) waits at most this long. */
#define XSI_MEMWAIT_HOLD_NS 2000000ULL

/*
 * -EAGAIN from xs_xq_now_begin(): wait a little for what stops @s: its
 * blocker's completion (a mark on the blocker), the policy's release, or
 * room on its own stream.  false: that cannot be known (a mark could not be
 * made or failed): stop holding.  *memwait: the blocker has a memory wait
 * that is not known to have completed.
 */
static bool held_wait(struct xsi_stream *s, uint64_t left, bool *memwait)
{
	struct xsched_xqueue *b = xs_sched_blocker(s->xq);
	struct xsched_xq_info info;
	int64_t slice = left < XSI_WAIT_SLICE_NS ? (int64_t)left : XSI_WAIT_SLICE_NS;
	int64_t short_slice = slice < XSI_HELD_SLICE_NS ? slice : XSI_HELD_SLICE_NS;
	int r = 0;

	*memwait = false;
	if (b) {
		uint64_t upto = xs_xq_launched(b);

		*memwait = xs_xq_memwait(b);
		if (*memwait)
			slice = short_slice;
		/* A blocker no mark can speak for yet (its own thread makes
		 * them) is looked at again after a short sleep in the wait. */
		r = upto ? xsched_wait(b, upto, slice) : 0;
		xs_xqueue_put(b);
		if (!r)	/* now the policy's turn (hysteresis) */
			xs_xq_wait_unheld(s->xq, short_slice);
	} else if (!xsched_query(s->xq, &info, sizeof(info)) && info.hold) {
		xs_xq_wait_unheld(s->xq, short_slice);
	} else if (!xsched_query(s->xq, &info, sizeof(info)) &&
		   info.launched - info.completed >= info.threshold) {
		r = xsched_wait(s->xq, info.launched - info.threshold + 1, slice);
	}
	return !r || r == -ETIMEDOUT;
}

/* Is @s's call going into a graph (its own capture, or one it joined
 * through an event wait: only the runtime knows, asked only while some
 * stream of the process is being captured)? */
static bool captured(struct xsi_runtime *rt, struct xsi_stream *s,
		     const struct xsi_entry *e, uintptr_t handle)
{
	if (atomic_load_explicit(&s->capturing, memory_order_relaxed))
		return true;
	if (!handle && (e->flags & XSI_ENTRY_PER_THREAD))
		handle = rt->per_thread_handle;	/* null through a per-thread entry */
	if (!atomic_load_explicit(&rt->state->captures, memory_order_relaxed) ||
	    !rt->is_capturing || rt->is_capturing(handle) <= 0)
		return false;
	xsi_log(rt, "%s stream %#lx -> q%u: joined a capture: not scheduled", e->name,
		(unsigned long)s->rt_handle, xsched_xqueue_id(s->xq));
	return true;
}

void xsi_enter(void)
{
	depth++;
}

void xsi_leave(void)
{
	depth--;
}

void xsi_hold_begin(struct xsi_runtime *rt, const struct xsi_entry *e,
		    uintptr_t handle, struct xsi_hold *h)
{
	uint64_t t0 = 0, max = rt->hold_max_ns ? rt->hold_max_ns : XSI_HOLD_MAX_NS;
	unsigned int flags;
	bool memwait = false;
	int ret;

	h->s = NULL;
	h->in_call = false;
	h->unseen = false;
	h->since = 0;
	h->flags = 0;
	h->entered = true;
	if (depth++) {
		/* Inside another hook's runtime call on this thread: part of
		 * that call, already scheduled and counted. */
		xsi_log(rt, "%s stream %#lx: entered from inside the runtime: straight through",
			e->name, (unsigned long)handle);
		return;
	}
	h->s = xsi_stream_get(rt, handle, e->flags);
	if (!h->s || !h->s->xq || captured(rt, h->s, e, handle)) {
		h->s = NULL;	/* recorded into a graph: runs later, elsewhere */
		return;
	}
	flags = gated(rt, h->s) ? XS_NOW_CAP : 0;
	/* A native burst's call still waits out a higher stream's hold or
	 * cap, but is counted nowhere: it holds nothing.  One a higher
	 * stream caps is counted, or the cap could not bound it. */
	if (h->s->bursts) {
		h->unseen = !xsi_bursts_call(h->s, e->name) && !(flags & XS_NOW_CAP);
		if (e->flags & XSI_ENTRY_SYNCS)	/* after its own call was seen */
			h->since = xs_now_ns();
	}
	while ((ret = xs_xq_now_begin(h->s->xq, flags)) == -EAGAIN) {
		uint64_t now = xs_now_ns(), limit = max;

		if (!t0) {
			t0 = now;
			xsi_log(rt, "%s stream %#lx -> q%u: held", e->name,
				(unsigned long)h->s->rt_handle, xsched_xqueue_id(h->s->xq));
			xs_trace("hold", "q=%u rt=%s call=%s stream=%#lx",
				 xsched_xqueue_id(h->s->xq), rt->name, e->name,
				 (unsigned long)h->s->rt_handle);
		}
		if (memwait && limit > XSI_MEMWAIT_HOLD_NS)
			limit = XSI_MEMWAIT_HOLD_NS;
		if (now - t0 >= limit) {
			if (memwait)
				xsi_log(rt, "%s stream %#lx -> q%u: its blocker waits on a memory value: let through after %llu us",
					e->name, (unsigned long)h->s->rt_handle,
					xsched_xqueue_id(h->s->xq),
					(unsigned long long)((now - t0) / 1000));
			else
				xs_warn("%s: q%u held for %llu ms; letting its call through (hold limit)",
					rt->name, xsched_xqueue_id(h->s->xq),
					(unsigned long long)((now - t0) / 1000000));
			flags |= XS_NOW_FORCE;
			continue;
		}
		if (!held_wait(h->s, t0 + limit - now, &memwait))
			flags |= XS_NOW_FORCE;
		xsi_reap(rt);
	}
	if (ret) {
		h->s = NULL;	/* -ECHILD, a failed XQueue: not scheduled */
		return;
	}
	h->in_call = true;
	h->before = xs_xq_launched(h->s->xq);
	h->flags = (flags & XS_NOW_CAP) | (e->flags & XSI_ENTRY_MEMWAIT ? XS_NOW_MEMWAIT : 0);
	if (t0) {
		xsi_log(rt, "%s stream %#lx -> q%u: released after %llu us", e->name,
			(unsigned long)h->s->rt_handle, xsched_xqueue_id(h->s->xq),
			(unsigned long long)((xs_now_ns() - t0) / 1000));
		xs_trace("release", "q=%u rt=%s call=%s stream=%#lx held_ns=%llu",
			 xsched_xqueue_id(h->s->xq), rt->name, e->name,
			 (unsigned long)h->s->rt_handle,
			 (unsigned long long)(xs_now_ns() - t0));
	}
}

/* After xs_xq_now_end(): the count on @h's stream up to which the call's
 * completion says everything completed: itself when it was counted and
 * no other thread's call was counted meanwhile, else what it followed. */
static uint64_t held_upto(const struct xsi_hold *h)
{
	uint64_t after = xs_xq_launched(h->s->xq);

	return !h->unseen && after == h->before + 1 ? after : h->before;
}

void xsi_hold_end(struct xsi_hold *h, bool ok)
{
	if (h->s && h->in_call)
		xs_xq_now_end(h->s->xq, ok && !h->unseen, h->flags);
	if (h->s && h->in_call && ok && h->since) {
		/* Synchronous: what it followed completed, itself too. */
		xs_xq_completed_upto(h->s->xq, held_upto(h));
		xsi_bursts_synced(h->s, h->since, 0);
	}
	h->in_call = false;
	if (h->entered)
		depth--;
	h->entered = false;
}

void xsi_stream_capture(struct xsi_stream *s, bool on)
{
	if (!s)
		return;
	if (atomic_exchange(&s->capturing, on) != on && s->rt->state)
		atomic_fetch_add(&s->rt->state->captures, on ? 1 : -1);
	xsi_log(s->rt, "stream %#lx: capture %s", (unsigned long)s->rt_handle,
		on ? "begins: its calls are not scheduled" : "ends");
}

struct xsi_sync {
	unsigned int n;
	uint64_t t0;		/* when the synchronize began (bursts.c) */
	uint64_t recorded;	/* an event's: when it was recorded; else 0 */
	struct {
		struct xsched_xqueue *xq;
		uint64_t launched;	/* 0: nothing is learnt */
		struct xsi_stream *s;	/* never freed before the runtime */
	} q[];
};

/* A synchronize's record for up to @n streams, begun now; NULL: no memory. */
static struct xsi_sync *sync_new(unsigned int n, uint64_t recorded)
{
	struct xsi_sync *y = malloc(sizeof(*y) + n * sizeof(y->q[0]));

	if (y) {
		y->n = 0;
		y->t0 = xs_now_ns();
		y->recorded = recorded;
	}
	return y;
}

/* state->lock held: @o (with an XQueue) is one of @y's streams. */
static void sync_add(struct xsi_sync *y, struct xsi_stream *o, uint64_t launched)
{
	atomic_fetch_add(&o->xq->refs, 1);
	y->q[y->n].s = o;
	y->q[y->n].xq = o->xq;
	y->q[y->n++].launched = launched;
}

struct xsi_sync *xsi_sync_begin(struct xsi_runtime *rt, struct xsi_stream *s,
				enum xsi_scope scope)
{
	struct xsi_state *st = rt->state;
	struct xsi_sync *y;
	int32_t dev;
	unsigned int i;

	if (!st)
		return NULL;
	if (scope == XSI_SCOPE_STREAM) {
		if (!s || !s->xq)
			return NULL;
		y = sync_new(1, 0);
		if (!y)
			return NULL;
		pthread_mutex_lock(&st->lock);
		sync_add(y, s, 0);
		pthread_mutex_unlock(&st->lock);
		y->q[0].launched = xs_xq_launched(y->q[0].xq);
		return y;
	}
	dev = scope == XSI_SCOPE_PROCESS ? -1 : s ? s->desc.device :
	      rt->current_device ? rt->current_device() : 0;
	pthread_mutex_lock(&st->lock);
	y = sync_new(st->count + 1, 0);
	for (i = 0; y && i < XSI_SLOTS && y->n <= st->count; i++) {
		struct xsi_stream *o = atomic_load(&st->slots[i]);

		if (o && o != TOMB && o->xq && (dev < 0 || o->desc.device == dev))
			sync_add(y, o, 0);
	}
	pthread_mutex_unlock(&st->lock);
	for (i = 0; y && i < y->n; i++)
		y->q[i].launched = xs_xq_launched(y->q[i].xq);
	return y;
}

void xsi_sync_end(struct xsi_sync *y, bool ok)
{
	unsigned int i;

	if (!y)
		return;
	for (i = 0; i < y->n; i++) {
		if (ok && y->q[i].launched)
			xs_xq_completed_upto(y->q[i].xq, y->q[i].launched);
		if (ok && y->q[i].s->bursts)
			xsi_bursts_synced(y->q[i].s, y->t0, y->recorded);
		xs_xqueue_put(y->q[i].xq);
	}
	free(y);
}

void xsi_context_gone(struct xsi_runtime *rt, uintptr_t context, int32_t device)
{
	struct xsi_state *st = rt->state;
	unsigned int i;

	if (!st)
		return;
	pthread_mutex_lock(&st->lock);
	for (i = 0; i < XSI_SLOTS; i++) {
		struct xsi_stream *o = atomic_load(&st->slots[i]);

		if (!o || o == TOMB)
			continue;
		if (context ? o->desc.context != context : o->desc.device != device)
			continue;
		xsi_forget(rt, o, false);	/* drops and retakes the lock */
	}
	pthread_mutex_unlock(&st->lock);
	xsi_log(rt, "context %#lx / device %d torn down: its streams are forgotten",
		(unsigned long)context, device);
}

/* ---- events ---------------------------------------------------------------- */

static struct xsi_event *event_slot(struct xsi_state *st, uintptr_t ev, bool add)
{
	unsigned int i = (unsigned int)((ev * 0x9e3779b97f4a7c15ULL) >> 40) &
			 (XSI_EVENTS - 1), n;
	struct xsi_event *free_e = NULL;

	for (n = 0; n < XSI_EVENTS; n++, i = (i + 1) & (XSI_EVENTS - 1)) {
		struct xsi_event *e = &st->events[i];

		if (e->event == ev)
			return e;
		if (!e->event && !free_e)
			free_e = e;
	}
	return add ? free_e : NULL;
}

static void event_record(struct xsi_runtime *rt, uintptr_t event,
			 struct xsi_stream *s, uint64_t seq, uint64_t upto)
{
	struct xsi_event *e;

	if (!rt->state || !s || !s->xq || !event)
		return;
	pthread_mutex_lock(&rt->state->lock);
	e = event_slot(rt->state, event, true);
	if (e) {
		e->event = event;
		e->s = s;
		e->stream_id = xsched_xqueue_id(s->xq);
		e->seq = seq;
		e->upto = upto;
		e->at = xs_now_ns();
	}
	pthread_mutex_unlock(&rt->state->lock);
}

void xsi_event_recorded(struct xsi_runtime *rt, uintptr_t event,
			struct xsi_stream *s, uint64_t seq)
{
	event_record(rt, event, s, seq, seq);
}

/* What was counted on the stream once the record's hold ended (another
 * thread's call, counted meanwhile, can only make a wait's target later,
 * never too early); its completion, only what the record followed. */
void xsi_event_recorded_held(struct xsi_runtime *rt, uintptr_t event,
			     const struct xsi_hold *h)
{
	if (h->s && h->s->xq)	/* (after xsi_hold_end(): it was begun) */
		event_record(rt, event, h->s, xs_xq_launched(h->s->xq), held_upto(h));
}

void xsi_event_forget(struct xsi_runtime *rt, uintptr_t event)
{
	struct xsi_event *e;

	if (!rt->state || !event)
		return;
	pthread_mutex_lock(&rt->state->lock);
	e = event_slot(rt->state, event, false);
	if (e)
		memset(e, 0, sizeof(*e));
	pthread_mutex_unlock(&rt->state->lock);
}

struct xsi_sync *xsi_event_sync_begin(struct xsi_runtime *rt, uintptr_t event)
{
	struct xsi_state *st = rt->state;
	struct xsi_event *e;
	struct xsi_sync *y = NULL;

	if (!st || !event || !atomic_load_explicit(&st->chosen, memory_order_relaxed))
		return NULL;
	pthread_mutex_lock(&st->lock);
	e = event_slot(st, event, false);
	if (e && e->s && e->s->xq && e->s->bursts)
		y = sync_new(1, e->at);
	if (y)
		sync_add(y, e->s, e->upto);
	pthread_mutex_unlock(&st->lock);
	return y;
}

int xsi_event_wait(struct xsi_runtime *rt, struct xsi_stream *waiter,
		   uintptr_t event)
{
	struct xsi_event *e;
	struct xsched_xqueue *src = NULL;
	uint64_t seq = 0;
	int ret = 0;

	if (!rt->state)
		return -ENOENT;
	pthread_mutex_lock(&rt->state->lock);
	e = event_slot(rt->state, event, false);
	if (e && e->s && e->s->xq) {
		src = e->s->xq;
		seq = e->seq;
	}
	if (!src) {
		pthread_mutex_unlock(&rt->state->lock);
		return -ENOENT;
	}
	atomic_fetch_add(&src->refs, 1);
	pthread_mutex_unlock(&rt->state->lock);
	if (waiter && waiter->xq && waiter->xq != src) {
		ret = xsched_depend(waiter->xq, src, seq);
		xsi_log(rt, "stream %#lx -> q%u: waits on q%u seq %llu",
			(unsigned long)waiter->handle, xsched_xqueue_id(waiter->xq),
			xsched_xqueue_id(src), (unsigned long long)seq);
	}
	/* The event's command must reach the runtime before anyone waits on
	 * it there (the drain-first rule for the source); caller-held: it
	 * did when its record returned (and a flush would wait out a hold). */
	if (!ret && !caller_held(rt))
		ret = xsched_flush(src);
	xs_xqueue_put(src);
	return ret;
}
