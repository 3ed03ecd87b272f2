// SPDX-License-Identifier: MIT
/*
 * The interposition core's stream table (interpose.h, "Streams").
 *
 * Stream table: open addressing over XSI_SLOTS atomic pointers.  Lookups
 * probe without a lock; inserts and removals take state->lock.  A removed
 * stream's slot becomes a tombstone and the stream object is retired, not
 * freed, until xsi_runtime_fini(): a lookup probing past it never touches
 * freed memory.  Keys: (kind, handle, device, thread): the legacy default
 * stream is one per device, the per-thread default stream one per (thread,
 * device).
 *
 * Per-thread default streams pass through unscheduled unless the runtime is
 * caller-held: their calls cannot run on another thread (the Lv1 worker),
 * and a completion mark for them cannot be recorded from another thread
 * either.  A caller-held runtime's calls run on the caller's thread, and
 * its per-thread streams are marked by their owner only (XS_CALLS_OWNER_MARKS),
 * after a call while a lower stream is held by them; they are forgotten
 * when their thread exits, without waiting for their work.
 *
 * Caller-held dispatch takes no lock across the runtime call (see
 * xsi_hold_begin() in interpose.h); the table lock is never held across a
 * runtime call either (forget() and reap() drop it).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <threads.h>
#include <unistd.h>

#include "core_state.h"
#include "mode.h"

struct xsi_stream xsi_tombstone;
static thread_local bool pt_logged;

/* This thread's per-thread streams of caller-held runtimes, forgotten at
 * its exit (xsi_pt_key's destructor). */
static thread_local struct {
	struct xsi_runtime *rt;
	int32_t device;
	unsigned int fork_gen;
} pt_mine[XSI_PT_MINE];
pthread_key_t xsi_pt_key;
_Atomic unsigned int xsi_fork_gen;

/* A caller-held XQueue whose runtime stream is gone, or whose work is not
 * ours to wait for: it holds nobody from now on, and is destroyed. */
void xsi_drop_xq(struct xsched_xqueue *xq)
{
	xs_xq_completed_upto(xq, xs_xq_launched(xq));
	(void)xsched_xqueue_destroy(xq);
}

/* ---- the stream table ------------------------------------------------------ */

static unsigned int hash(int kind, uintptr_t handle, int32_t device,
			 uint64_t thread)
{
	uint64_t h = (uint64_t)handle * 0x9e3779b97f4a7c15ULL;

	h ^= ((uint64_t)kind << 56) ^ ((uint64_t)(uint32_t)device << 40) ^
	     thread * 0xc2b2ae3d27d4eb4fULL;
	h ^= h >> 29;
	return (unsigned int)(h & (XSI_SLOTS - 1));
}

static bool same(const struct xsi_stream *s, int kind, uintptr_t handle,
		 int32_t device, uint64_t thread)
{
	return s->kind == kind && s->handle == handle && s->device == device &&
	       s->thread == thread;
}

static struct xsi_stream *lookup(struct xsi_state *st, int kind,
				 uintptr_t handle, int32_t device,
				 uint64_t thread, unsigned int *free_slot)
{
	unsigned int i = hash(kind, handle, device, thread), n;

	if (free_slot)
		*free_slot = XSI_SLOTS;
	for (n = 0; n < XSI_SLOTS; n++, i = (i + 1) & (XSI_SLOTS - 1)) {
		struct xsi_stream *s = atomic_load_explicit(&st->slots[i],
							    memory_order_acquire);

		if (!s) {
			if (free_slot && *free_slot == XSI_SLOTS)
				*free_slot = i;
			return NULL;
		}
		if (s == TOMB) {
			if (free_slot && *free_slot == XSI_SLOTS)
				*free_slot = i;
			continue;
		}
		if (same(s, kind, handle, device, thread))
			return s;
	}
	return NULL;
}

/* state->lock held: the cap's per-device maximum over the streams that
 * cap (xsi_stream_caps()). */
static void maxp_recompute(struct xsi_state *st, int32_t dev)
{
	int32_t mx = INT32_MIN;
	unsigned int i;

	if (dev < 0 || dev >= XSI_DEVS)
		return;
	for (i = 0; i < XSI_SLOTS; i++) {
		struct xsi_stream *o = atomic_load(&st->slots[i]);

		if (o && o != TOMB && atomic_load(&o->caps) &&
		    o->desc.device == dev && o->desc.priority > mx)
			mx = o->desc.priority;
	}
	atomic_store(&st->maxp[dev], mx);
}

/* @s counts in its device's maximum: the streams below it are capped.
 * From its creation (insert()), so that a lower stream is capped before the
 * urgent one's first call, not after; or once the runtime arms it
 * (xsi_stream_caps()). */
static void cap_on(struct xsi_state *st, struct xsi_stream *s)
{
	int32_t dev = s->desc.device, cur;

	if (dev < 0 || dev >= XSI_DEVS || atomic_exchange(&s->caps, true))
		return;
	cur = atomic_load(&st->maxp[dev]);
	while (cur < s->desc.priority &&
	       !atomic_compare_exchange_weak(&st->maxp[dev], &cur, s->desc.priority))
		;
}

bool xsi_caps_set_locked(struct xsi_state *st, struct xsi_stream *s, bool on)
{
	if (on)
		cap_on(st, s);
	else if (atomic_exchange(&s->caps, false))
		maxp_recompute(st, s->desc.device);
	return atomic_load(&s->caps);
}

/* @s's bursts (desc.chooses): Lv1's holds or none, chosen by what they buy
 * (mode.c's modes lv1 and native, at the default price). */
static bool bursts_new(struct xsi_stream *s)
{
	const bool have[XM_NMODES] = { [XM_NATIVE] = true, [XM_LV1] = true };

	s->bursts = calloc(1, sizeof(*s->bursts));
	if (!s->bursts)
		return false;
	xm_burst_init(s->bursts, -1, have, XM_PRICE_DEFAULT);
	atomic_store(&s->rt->state->chosen, true);
	return true;
}

void xsi_stream_free(struct xsi_stream *s)
{
	if (s->bursts) {
		xm_burst_fini(s->bursts);
		free(s->bursts);
	}
	free(s);
}

/* state->lock held: take @s out of the table (retired, not freed). */
static void unlink_stream(struct xsi_state *st, struct xsi_stream *s)
{
	unsigned int i = hash(s->kind, s->handle, s->device, s->thread), n;

	for (n = 0; n < XSI_SLOTS; n++, i = (i + 1) & (XSI_SLOTS - 1)) {
		if (atomic_load(&st->slots[i]) == s) {
			atomic_store_explicit(&st->slots[i], TOMB,
					      memory_order_release);
			st->count--;
			break;
		}
	}
	s->gone = true;
	s->retired_next = st->retired;
	st->retired = s;
	if (atomic_load(&s->caps))
		maxp_recompute(st, s->desc.device);
}

/* Call-command ops of a stream: the runtime's, with the stream. */
static int s_enter(void *ctx)
{
	struct xsi_stream *s = ctx;

	return s->rt->enter ? s->rt->enter(&s->desc) : 0;
}

static int s_mark_record(void *ctx, void **mark)
{
	struct xsi_stream *s = ctx;

	return s->rt->mark_record(s->rt_handle, &s->desc, mark);
}

static int s_mark_wait(void *ctx, void *mark, int64_t timeout_ns)
{
	struct xsi_stream *s = ctx;

	return s->rt->mark_wait(mark, timeout_ns);
}

static void s_mark_free(void *ctx, void *mark)
{
	struct xsi_stream *s = ctx;

	s->rt->mark_free(mark);
}

static const struct xsched_call_ops stream_ops = {
	.enter = s_enter,
	.mark_record = s_mark_record,
	.mark_wait = s_mark_wait,
	.mark_free = s_mark_free,
};

/* A runtime's priority as an XQueue can take it. */
static int32_t prio_clamp(int32_t p)
{
	return p < XSCHED_PRIO_MIN ? XSCHED_PRIO_MIN : p > XSCHED_PRIO_MAX ? XSCHED_PRIO_MAX : p;
}

/* state->lock held: give @s its XQueue (at its first call: a stream the
 * application made but never used costs the policy nothing).  0 or -errno
 * (logged; the stream's calls pass through). */
static int attach_xq(struct xsi_runtime *rt, struct xsi_stream *s, const char *how)
{
	struct xsched_xqueue *xq;
	struct xsched_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.flags = XSCHED_ATTR_PRIORITY | XSCHED_ATTR_GROUP;
	a.priority = s->desc.priority;
	a.group = (uint32_t)s->desc.device + 1;	/* the policy's scope: one device */
	ret = caller_held(rt) ? xs_xqueue_create_caller_held(&xq, &stream_ops, s, &a) :
	      xsched_xqueue_create_calls(&xq, &stream_ops, s, &a);
	if (ret) {
		xs_warn("%s: stream %#lx: cannot create its XQueue (%s); it passes through",
			rt->name, (unsigned long)s->rt_handle, strerror(-ret));
		return ret;
	}
	if (caller_held(rt)) {
		/* Nothing is ever buffered (no worker was started); completion
		 * is learned by those who wait, never by polling with new marks. */
		xs_calls_set_mode(xq, s->kind == KIND_PER_THREAD ?
				  XS_CALLS_OWNER_MARKS : XS_CALLS_PASSIVE);
	}
	__atomic_store_n(&s->xq, xq, __ATOMIC_RELEASE);
	xsi_log(rt, "stream %#lx -> q%u: created (%s), prio %d, dev %d",
		(unsigned long)s->rt_handle, xsched_xqueue_id(xq), how, a.priority,
		s->desc.device);
	return 0;
}

/*
 * state->lock held: a new stream in a free slot, with its XQueue when
 * @with_xq (a call on it is being made), else without (its creation: it
 * counts in the gate from now on, and gets its XQueue at its first call).
 */
static struct xsi_stream *insert(struct xsi_runtime *rt, int kind,
				 uintptr_t handle, int32_t device,
				 uint64_t thread, unsigned int slot,
				 const struct xsi_stream_desc *d, const char *how,
				 bool with_xq)
{
	struct xsi_state *st = rt->state;
	struct xsi_stream *s;

	if (slot == XSI_SLOTS || st->count >= XSI_SLOTS * 3 / 4) {
		xs_warn("%s: stream table full; stream %#lx passes through", rt->name,
			(unsigned long)handle);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->rt = rt;
	s->kind = kind;
	s->handle = kind == KIND_APP ? handle : 0;
	s->rt_handle = kind == KIND_PER_THREAD && caller_held(rt) ? rt->per_thread_handle :
		       handle;
	s->device = device;
	s->thread = thread;
	s->desc = *d;
	/* Normalised once, here: the cap, the gate and the XQueue see one
	 * priority. */
	s->desc.priority = prio_clamp(d->priority);
	s->desc.chooses = d->chooses && caller_held(rt) && kind == KIND_APP;
	if (s->desc.chooses && !bursts_new(s)) {
		xs_warn("%s: stream %#lx: out of memory for its choice; every burst of it holds",
			rt->name, (unsigned long)handle);
		s->desc.chooses = false;
	}
	if (with_xq && attach_xq(rt, s, how)) {
		xsi_stream_free(s);
		return NULL;
	}
	atomic_store_explicit(&st->slots[slot], s, memory_order_release);
	st->count++;
	/* A stream that chooses caps only around the bursts that hold
	 * (bursts.c). */
	if (caller_held(rt) && !d->cap_off && !s->desc.chooses)
		cap_on(st, s);
	if (!with_xq)
		xsi_log(rt, "stream %#lx: created (%s), prio %d, dev %d; its XQueue at its first call",
			(unsigned long)handle, how, s->desc.priority, d->device);
	return s;
}

/* A stream found in the table: with its XQueue, made now if it has none. */
static struct xsi_stream *with_xq(struct xsi_runtime *rt, struct xsi_stream *s)
{
	struct xsi_state *st = rt->state;
	int ret = 0;

	if (!s || __atomic_load_n(&s->xq, __ATOMIC_ACQUIRE))
		return s;
	pthread_mutex_lock(&st->lock);
	/* Still listed (not destroyed meanwhile) and still without one? */
	if (!s->xq && !s->gone)
		ret = attach_xq(rt, s, "first call");
	pthread_mutex_unlock(&st->lock);
	return ret || !__atomic_load_n(&s->xq, __ATOMIC_ACQUIRE) ? NULL : s;
}

/*
 * The device a default stream named by the calling thread is on: with one
 * device in the process it is 0, without asking the runtime on every call
 * (a driver call is a tenth of a launch); else the caller's current one.
 */
static int32_t default_device(struct xsi_runtime *rt)
{
	struct xsi_state *st = rt->state;
	int n = atomic_load_explicit(&st->ndev, memory_order_relaxed);

	if (!n && rt->device_count) {
		n = rt->device_count();	/* fails before the runtime's init */
		if (n > 0)
			atomic_store(&st->ndev, n);
	}
	if (n == 1)
		return 0;
	return rt->current_device ? rt->current_device() : 0;
}

/* The caller's thread id, kept per thread (a system call is a tenth of a
 * launch); a fork child's thread asks again. */
static uint64_t thread_id(void)
{
	static thread_local uint64_t tid;
	static thread_local unsigned int gen;
	unsigned int g = atomic_load_explicit(&xsi_fork_gen, memory_order_relaxed);

	if (!tid || gen != g) {
		tid = (uint64_t)syscall(SYS_gettid);
		gen = g;
	}
	return tid;
}

/* The calling thread's per-thread stream on its current device. */
static struct xsi_stream *per_thread_get(struct xsi_runtime *rt, uintptr_t handle)
{
	struct xsi_state *st = rt->state;
	int32_t device = default_device(rt);
	uint64_t tid = thread_id();
	struct xsi_stream_desc d;
	struct xsi_stream *s;
	unsigned int slot, i;

	s = lookup(st, KIND_PER_THREAD, 0, device, tid, NULL);
	if (s)
		return s;
	pthread_mutex_lock(&st->lock);
	s = lookup(st, KIND_PER_THREAD, 0, device, tid, &slot);
	if (!s) {
		memset(&d, 0, sizeof(d));
		d.device = device;
		if (!rt->describe(handle, &d))
			s = insert(rt, KIND_PER_THREAD, 0, device, tid, slot, &d,
				   "lazy, per-thread", true);
	}
	pthread_mutex_unlock(&st->lock);
	if (!s)
		return NULL;
	for (i = 0; i < XSI_PT_MINE; i++) {
		if (pt_mine[i].rt &&
		    pt_mine[i].fork_gen == atomic_load(&xsi_fork_gen))
			continue;
		pt_mine[i].rt = rt;
		pt_mine[i].device = device;
		pt_mine[i].fork_gen = atomic_load(&xsi_fork_gen);
		(void)pthread_setspecific(xsi_pt_key, (void *)1);
		break;
	}
	return s;
}

/*
 * Destroyed XQueues whose last mark completed (and that nobody is looking
 * at) are destroyed now; their completion is polled first (a poll, never a
 * wait), and the policy told, so that what they held goes.  Called on the
 * paths that create and destroy streams and on held callers' waits.
 */
void xsi_reap(struct xsi_runtime *rt)
{
	struct xsi_state *st = rt->state;
	struct xsi_zombie *z, *list, *keep = NULL, *done = NULL;

	if (!st || !atomic_load_explicit(&st->has_zombies, memory_order_relaxed))
		return;
	pthread_mutex_lock(&st->lock);
	list = st->zombies;
	st->zombies = NULL;
	pthread_mutex_unlock(&st->lock);
	while ((z = list)) {
		list = z->next;
		xs_xq_update_completed(z->xq);
		if (atomic_load(&z->xq->refs) == 1 && xs_xq_idle(z->xq)) {
			z->next = done;
			done = z;
		} else {
			z->next = keep;
			keep = z;
		}
	}
	pthread_mutex_lock(&st->lock);
	while ((z = keep)) {
		keep = z->next;
		z->next = st->zombies;
		st->zombies = z;
	}
	atomic_store(&st->has_zombies, st->zombies != NULL);
	pthread_mutex_unlock(&st->lock);
	while ((z = done)) {
		done = z->next;
		xsi_log(rt, "q%u: the work of its destroyed stream completed: freed",
			xsched_xqueue_id(z->xq));
		xs_sched_refresh(z->xq);
		(void)xsched_xqueue_destroy(z->xq);
		free(z);
	}
}

/*
 * state->lock held (dropped and taken again here): take @s out and destroy
 * its XQueue.  @runs_on: the runtime's stream is destroyed but its work
 * runs on (a stream destroy, a thread's exit), and the runtime returns at
 * once: so do we (caller-held), the XQueue goes on blocking lower streams
 * until a last mark says its work completed, and is reaped then.  Else
 * (the context is torn down with its work) its work counts as completed.
 */
void xsi_forget(struct xsi_runtime *rt, struct xsi_stream *s, bool runs_on)
{
	struct xsi_state *st = rt->state;
	struct xsched_xqueue *xq;
	struct xsi_zombie *z;
	unsigned int i;
	bool closed;

	unlink_stream(st, s);
	for (i = 0; i < XSI_EVENTS; i++)
		if (st->events[i].s == s)
			memset(&st->events[i], 0, sizeof(st->events[i]));
	xq = s->xq;
	s->xq = NULL;
	if (atomic_load(&s->capturing))
		atomic_fetch_sub(&st->captures, 1);
	if (!xq) {	/* never used: nothing of it runs */
		xsi_log(rt, "stream %#lx: destroyed (never used)", (unsigned long)s->rt_handle);
		return;
	}
	pthread_mutex_unlock(&st->lock);
	if (!caller_held(rt)) {
		xsi_log(rt, "stream %#lx -> q%u: destroyed", (unsigned long)s->rt_handle,
			xsched_xqueue_id(xq));
		/* Drains what is buffered and waits for it. */
		(void)xsched_xqueue_destroy(xq);
		pthread_mutex_lock(&st->lock);
		return;
	}
	z = runs_on && !xs_xq_idle(xq) ? malloc(sizeof(*z)) : NULL;
	/* A per-thread stream at its thread's exit: no new mark (the runtime
	 * may have let go of the thread's stream already); the marks its
	 * owner made while it held someone cover its work, and without them
	 * nobody is held by it. */
	closed = z && xs_xq_close(xq, s->kind != KIND_PER_THREAD);
	/* Most streams are idle when destroyed: one poll of the last mark
	 * says so, and the XQueue goes now. */
	if (closed)
		xs_xq_update_completed(xq);
	if (closed && !xs_xq_idle(xq)) {
		xsi_log(rt, "stream %#lx -> q%u: destroyed; its work runs on, the XQueue goes when it completes",
			(unsigned long)s->rt_handle, xsched_xqueue_id(xq));
		pthread_mutex_lock(&st->lock);
		z->xq = xq;
		z->next = st->zombies;
		st->zombies = z;
		atomic_store(&st->has_zombies, true);
		return;
	}
	free(z);
	/* Idle, or its completion can never be learned (no last mark). */
	xsi_log(rt, "stream %#lx -> q%u: destroyed", (unsigned long)s->rt_handle,
		xsched_xqueue_id(xq));
	xsi_drop_xq(xq);
	pthread_mutex_lock(&st->lock);
}

/* Thread exit: its per-thread streams go. */
void xsi_pt_exit(void *arg)
{
	uint64_t tid = thread_id();
	unsigned int i;

	(void)arg;
	for (i = 0; i < XSI_PT_MINE; i++) {
		struct xsi_runtime *rt = pt_mine[i].rt;
		struct xsi_stream *s;

		pt_mine[i].rt = NULL;
		if (!rt || pt_mine[i].fork_gen != atomic_load(&xsi_fork_gen) ||
		    !rt->state)
			continue;
		pthread_mutex_lock(&rt->state->lock);
		s = lookup(rt->state, KIND_PER_THREAD, 0, pt_mine[i].device, tid, NULL);
		if (s)
			xsi_forget(rt, s, true);
		pthread_mutex_unlock(&rt->state->lock);
		xsi_reap(rt);
	}
}

struct xsi_stream *xsi_stream_get(struct xsi_runtime *rt, uintptr_t handle,
				  uint32_t flags)
{
	struct xsi_state *st = rt->state;
	enum xsi_default k = rt->default_kind(handle);
	int32_t device = -1;
	int kind = KIND_APP;
	struct xsi_stream_desc d;
	struct xsi_stream *s;
	unsigned int slot;

	if (!st)
		return NULL;
	if ((k == XSI_DEFAULT_PER_THREAD ||
	     (k == XSI_DEFAULT_NULL && (flags & XSI_ENTRY_PER_THREAD))) &&
	    caller_held(rt))
		return per_thread_get(rt, handle);
	if (k == XSI_DEFAULT_PER_THREAD ||
	    (k == XSI_DEFAULT_NULL && (flags & XSI_ENTRY_PER_THREAD))) {
		if (!pt_logged) {
			pt_logged = true;
			xsi_log(rt, "stream %#lx: per-thread default stream: passes through",
				(unsigned long)handle);
		}
		return NULL;
	}
	if (k != XSI_NOT_DEFAULT) {
		kind = KIND_LEGACY;
		device = default_device(rt);
	}
	s = lookup(st, kind, kind == KIND_LEGACY ? 0 : handle, device, 0, NULL);
	if (s)
		return with_xq(rt, s);
	/* Unknown: a stream made before the library loaded, or the default
	 * stream's first use. */
	pthread_mutex_lock(&st->lock);
	s = lookup(st, kind, kind == KIND_LEGACY ? 0 : handle, device, 0, &slot);
	if (!s) {
		memset(&d, 0, sizeof(d));
		d.device = device < 0 ? 0 : device;
		if (rt->describe(handle, &d))
			xsi_log(rt, "stream %#lx: unknown to the runtime: passes through",
				(unsigned long)handle);
		else
			s = insert(rt, kind, handle, device, 0, slot, &d, "lazy", true);
	} else if (!s->xq && attach_xq(rt, s, "first call")) {
		s = NULL;
	}
	pthread_mutex_unlock(&st->lock);
	return s;
}

struct xsi_stream *xsi_stream_announce(struct xsi_runtime *rt, uintptr_t handle,
				       const struct xsi_stream_desc *d)
{
	struct xsi_state *st = rt->state;
	struct xsi_stream_desc own;
	struct xsi_stream *s;
	unsigned int slot;

	if (!st || rt->default_kind(handle) != XSI_NOT_DEFAULT)
		return NULL;
	pthread_mutex_lock(&st->lock);
	s = lookup(st, KIND_APP, handle, -1, 0, &slot);
	if (!s && !d) {
		memset(&own, 0, sizeof(own));
		if (!rt->describe(handle, &own))
			d = &own;
	}
	if (!s && d)
		s = insert(rt, KIND_APP, handle, -1, 0, slot, d, "created", false);
	pthread_mutex_unlock(&st->lock);
	xsi_reap(rt);
	return s;
}

struct xsi_stream *xsi_stream_created(struct xsi_runtime *rt, uintptr_t handle,
				      const struct xsi_stream_desc *d)
{
	struct xsi_state *st = rt->state;
	struct xsi_stream *s, *stale;
	unsigned int slot;

	if (!st || !d)
		return NULL;
	pthread_mutex_lock(&st->lock);
	stale = lookup(st, KIND_APP, handle, -1, 0, NULL);
	if (stale) {
		/* The runtime reused the handle of a stream whose destroy we
		 * did not see: that one is gone, and so is its work (the
		 * handle now names another stream: no mark can be made). */
		xsi_log(rt, "stream %#lx -> q%u: handle reused, old XQueue destroyed",
			(unsigned long)handle, xsched_xqueue_id(stale->xq));
		xsi_forget(rt, stale, false);
	}
	(void)lookup(st, KIND_APP, handle, -1, 0, &slot);
	s = insert(rt, KIND_APP, handle, -1, 0, slot, d, "hooked", false);
	pthread_mutex_unlock(&st->lock);
	xsi_reap(rt);
	return s;
}

int xsi_stream_destroyed(struct xsi_runtime *rt, uintptr_t handle)
{
	struct xsi_state *st = rt->state;
	struct xsi_stream *s;

	if (!st)
		return -ENOENT;
	pthread_mutex_lock(&st->lock);
	s = lookup(st, KIND_APP, handle, -1, 0, NULL);
	if (s)
		xsi_forget(rt, s, true);
	pthread_mutex_unlock(&st->lock);
	xsi_reap(rt);
	return s ? 0 : -ENOENT;
}

int xsi_stream_set_priority(struct xsi_runtime *rt, struct xsi_stream *s,
			    int32_t priority)
{
	struct xsi_state *st = rt->state;
	int32_t dev = s->desc.device;
	int ret;

	if (!st || !s->xq)
		return -ENOENT;
	ret = xsched_set_priority(s->xq, priority);
	if (ret)
		return ret;
	pthread_mutex_lock(&st->lock);
	s->desc.priority = priority;
	maxp_recompute(st, dev);
	pthread_mutex_unlock(&st->lock);
	xsi_log(rt, "stream %#lx -> q%u: priority set to %d", (unsigned long)s->rt_handle,
		xsched_xqueue_id(s->xq), priority);
	return 0;
}

int xsi_stream_caps(struct xsi_runtime *rt, uintptr_t handle, bool on)
{
	struct xsi_state *st = rt->state;
	struct xsi_stream *s;
	bool was;

	if (!st || !caller_held(rt))
		return -ENOENT;
	/* Looked up under the lock: a stream being made now (described
	 * under it) either is found here or is described after the caller
	 * changed what its description says. */
	pthread_mutex_lock(&st->lock);
	s = lookup(st, KIND_APP, handle, -1, 0, NULL);
	if (!s) {
		pthread_mutex_unlock(&st->lock);
		return -ENOENT;
	}
	was = atomic_load(&s->caps);
	on = xsi_caps_set_locked(st, s, on);
	pthread_mutex_unlock(&st->lock);
	if (was != on)
		xsi_log(rt, "stream %#lx: %s lower streams", (unsigned long)handle,
			on ? "caps" : "no longer caps");
	return 0;
}

void xsi_prio_watch_begin(struct xsi_runtime *rt, uintptr_t handle,
			  struct xsi_prio_watch *w)
{
	struct xsi_stream_desc d;

	memset(w, 0, sizeof(*w));
	if (!rt->state || rt->default_kind(handle) != XSI_NOT_DEFAULT)
		return;
	memset(&d, 0, sizeof(d));
	if (rt->describe(handle, &d))
		return;
	w->rt = rt;
	w->handle = handle;
	w->before = d.priority;
	w->armed = true;
}

void xsi_prio_watch_end(struct xsi_prio_watch *w, bool ok)
{
	struct xsi_runtime *rt = w->rt;
	struct xsi_stream_desc d;
	struct xsi_stream *s;

	if (!w->armed || !ok)
		return;
	memset(&d, 0, sizeof(d));
	if (rt->describe(w->handle, &d) || d.priority == w->before)
		return;
	/* A stream not in the table yet is described when first used. */
	s = lookup(rt->state, KIND_APP, w->handle, -1, 0, NULL);
	if (!s)
		return;
	xsi_log(rt, "stream %#lx: the runtime's priority moved (%d -> %d)",
		(unsigned long)w->handle, w->before, d.priority);
	if (xsi_stream_set_priority(rt, s, prio_clamp(d.priority)))
		xsi_log(rt, "stream %#lx: its XQueue keeps its priority (gone)",
			(unsigned long)w->handle);
}

struct xsched_xqueue *xsi_stream_xqueue(const struct xsi_stream *s)
{
	return s ? s->xq : NULL;
}

uintptr_t xsi_stream_handle(const struct xsi_stream *s)
{
	return s->handle;
}

const struct xsi_stream_desc *xsi_stream_desc(const struct xsi_stream *s)
{
	return &s->desc;
}

unsigned int xsi_stream_count(struct xsi_runtime *rt)
{
	unsigned int n;

	if (!rt->state)
		return 0;
	pthread_mutex_lock(&rt->state->lock);
	n = rt->state->count;
	pthread_mutex_unlock(&rt->state->lock);
	return n;
}
