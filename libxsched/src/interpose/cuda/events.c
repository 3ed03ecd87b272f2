// SPDX-License-Identifier: MIT
/*
 * Events recorded on urgent streams: which stream recorded each last, so
 * that its synchronize ends that stream's burst (the choice of each
 * burst's mode, with the urgent context on or off); and, with it on,
 * events across the two contexts of an urgent stream (Lv3 on NVIDIA,
 * cuda/urgent.c).  An event belongs to the context it was made in and
 * cannot be recorded on another context's stream, but any stream may wait
 * for it.  So a record on an urgent stream's twin goes to a twin event made
 * in the urgent context at its first such record, and a wait, synchronize,
 * query or elapsed time uses whichever of the two was recorded last.  A
 * timing event recorded on a twin is recorded in its own context as well,
 * right after, so that an elapsed time against one recorded elsewhere has a
 * partner in one context.  An interprocess event, or one of another
 * device, is recorded where it belongs, after the twin's work.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../../internal.h"
#include "../interpose.h"
#include "driver.h"
#include "events.h"
#include "gather.h"
#include "urgent.h"
#include "../handle_table.h"

static bool on;			/* the urgent context is on: twins */
/* Events recorded on urgent streams are followed (the urgent context is on,
 * or the default chooses each burst's holds): a synchronize of one ends
 * the burst of the stream that recorded it last. */
static bool follow;

/* The event table's lock: held for a lookup only, never across a driver
 * call. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

struct xu_event {
	CUevent ev;
	unsigned int flags;
	CUevent twin;		/* in @twin_ctx, made at its first twin record */
	CUcontext twin_ctx;
	atomic_int last;	/* SIDE_ORIG or SIDE_TWIN */
	atomic_bool captured;	/* last recorded into a stream capture */
	_Atomic(CUstream) by;	/* the urgent stream of its last record, or NULL */
	_Atomic uint64_t at;	/* when (xs_now_ns()) */
};

static struct xsi_htable events;

void xu_events_fork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

void xu_events_fork_parent(void)
{
	pthread_mutex_unlock(&lock);
}

/* The child follows nothing (cuda/urgent.c): the table is left, not freed. */
void xu_events_fork_child(void)
{
	pthread_mutex_init(&lock, NULL);
	if (!follow)
		return;
	memset(&events, 0, sizeof(events));
}

void xu_events_init(void)
{
	/* (xu_init() found every driver function they call) */
	follow = xu_tracking();
	on = xu_on();
}

/* @ev followed from now (or already): its entry, NULL when the table is
 * full (said once). */
static atomic_bool full_said;

static struct xu_event *event_add(CUevent ev, unsigned int flags)
{
	struct xu_event *e = calloc(1, sizeof(*e)), *had;

	if (!e)
		return NULL;
	e->ev = ev;
	e->flags = flags;
	pthread_mutex_lock(&lock);
	had = xsi_ht_get(&events, ev);	/* another thread's record first */
	if (had) {
		free(e);
		e = had;
	} else if (!xsi_ht_put(&events, ev, e)) {
		free(e);
		e = NULL;
	}
	pthread_mutex_unlock(&lock);
	if (!e && !atomic_exchange(&full_said, true))
		xs_warn("cuda: more events than the library follows (event %p the first left out): such an event is recorded in its own context only, and its synchronize ends no burst",
			(void *)ev);
	return e;
}

void xu_event_created(CUevent ev, unsigned int flags)
{
	/* The urgent context: every event, for its flags; else an event at
	 * its first record on an urgent stream (xu_record_begin()). */
	if (on && ev)
		(void)event_add(ev, flags);
}

void xu_event_destroyed(CUevent ev)
{
	struct xu_event *e;

	if (!follow)
		return;
	pthread_mutex_lock(&lock);
	e = xsi_ht_del(&events, ev);
	pthread_mutex_unlock(&lock);
	if (!e)
		return;
	if (e->twin)
		xc_drv.event_destroy(e->twin);
	free(e);
}

static struct xu_event *event_get(CUevent ev)
{
	struct xu_event *e;

	if (!follow || !ev)
		return NULL;
	pthread_mutex_lock(&lock);
	e = xsi_ht_get(&events, ev);
	pthread_mutex_unlock(&lock);
	return e;
}

void xu_event_synchronized(CUevent ev, uint64_t since)
{
	struct xu_event *e = event_get(ev);
	CUstream by = e ? atomic_load(&e->by) : NULL;

	if (by)
		xu_stream_synchronized(by, since, atomic_load(&e->at));
}

/* The twin of @e in @uctx (the urgent context of the recording stream). */
static bool event_twin(struct xu_event *e, CUcontext uctx)
{
	CUcontext old;
	CUevent t = NULL;
	bool ok;

	pthread_mutex_lock(&lock);
	ok = e->twin != NULL;
	pthread_mutex_unlock(&lock);
	if (!ok) {
		if (xc_drv.ctx_push(uctx) != CUDA_SUCCESS)
			return false;
		ok = xc_drv.event_create(&t, e->flags & ~CU_EVENT_INTERPROCESS) == CUDA_SUCCESS;
		xc_drv.ctx_pop(&old);
		if (!ok)
			return false;
		pthread_mutex_lock(&lock);
		if (!e->twin) {
			e->twin = t;
			e->twin_ctx = uctx;
			t = NULL;
		}
		pthread_mutex_unlock(&lock);
		if (t)	/* another thread made one first */
			xc_drv.event_destroy(t);
	}
	return e->twin_ctx == uctx;	/* an event follows one device */
}

void xu_record_begin(struct xu_record *rc, CUevent *ev, CUstream *h)
{
	CUcontext uctx = xu_urgent_ctx(*h);
	struct xu_event *e;
	enum xu_how how = XU_CARRY;

	memset(rc, 0, sizeof(*rc));
	rc->h = *h;
	/* (With the urgent context on, an urgent stream has one.) */
	rc->urgent = uctx != NULL || (!on && xu_stream_urgent(*h, NULL));
	e = event_get(*ev);
	if (!e && !on && follow && rc->urgent && *ev)
		e = event_add(*ev, 0);	/* the default's choice: for its burst */
	rc->e = e;
	if (!uctx) {
		rc->captured = e && xu_capturing(*h);
		return;
	}
	/* An interprocess event or one of another device is recorded where it
	 * belongs, after the twin's work. */
	if (!e || (e->flags & CU_EVENT_INTERPROCESS) || !event_twin(e, uctx))
		how = XU_STAY;
	*h = xu_route(*h, NULL, how, NULL);
	if (*h == rc->h) {
		rc->captured = e && xu_capturing(rc->h);
		return;
	}
	rc->twin = true;
	*ev = e->twin;
}

void xu_record_end(struct xu_record *rc, CUresult r)
{
	struct xu_event *e = rc->e;
	CUstreamCaptureMode m;
	bool sw;

	if (!e || r != CUDA_SUCCESS)
		return;
	atomic_store(&e->captured, rc->captured);
	atomic_store(&e->last, rc->twin ? SIDE_TWIN : SIDE_ORIG);
	atomic_store(&e->at, xs_now_ns());
	atomic_store(&e->by, rc->urgent ? rc->h : NULL);
	if (!rc->twin || (e->flags & CU_EVENT_DISABLE_TIMING))
		return;
	/* A timing event is also recorded in its own context, right after the
	 * twin (the program's stream waits for it): an elapsed time against an
	 * event recorded elsewhere then has a partner in one context. */
	if (!xu_urgent_ctx(rc->h))	/* destroyed meanwhile */
		return;
	m = xc_relax(&sw);
	if (xc_drv.stream_wait_event(rc->h, e->twin, 0) == CUDA_SUCCESS)
		xc_drv.event_record(e->ev, rc->h);
	xc_unrelax(sw, m);
	xg_depend();
}

void xu_wait_event(CUstream *h, CUevent *ev)
{
	struct xu_event *e = event_get(*ev);

	/* A wait on an event recorded into a capture joins that capture: the
	 * stream must then be on the program's side. */
	CUstream was = *h;

	*h = xu_route(*h, NULL, e && atomic_load(&e->captured) ? XU_STAY : XU_CARRY, NULL);
	if (e && atomic_load(&e->last) == SIDE_TWIN && e->twin) {
		*ev = e->twin;
		if (*h == was)	/* a stream of the program's context waits for a twin */
			xg_depend();
	}
}

CUevent xu_event_current(CUevent ev)
{
	struct xu_event *e = event_get(ev);

	return e && atomic_load(&e->last) == SIDE_TWIN && e->twin ? e->twin : ev;
}

void xu_event_pair(CUevent *a, CUevent *b)
{
	struct xu_event *ea = event_get(*a), *eb = event_get(*b);

	/* Both last recorded in the urgent context: the twins; else the
	 * program's events (a timing event recorded on a twin is recorded in
	 * its own context as well). */
	if (ea && eb && atomic_load(&ea->last) == SIDE_TWIN &&
	    atomic_load(&eb->last) == SIDE_TWIN && ea->twin && eb->twin &&
	    ea->twin_ctx == eb->twin_ctx) {
		*a = ea->twin;
		*b = eb->twin;
	}
}
