// SPDX-License-Identifier: MIT
/* Description: the fake libcuda's events: record, wait, synchronize, query, elapsed time. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fake_libcuda_internal.h"

/* ---- events ---- */

static int events_created, events_destroyed;

API int fake_events_created(void)
{
	return __atomic_load_n(&events_created, __ATOMIC_RELAXED);
}

API int fake_live_events(void)
{
	return __atomic_load_n(&events_created, __ATOMIC_RELAXED) -
	       __atomic_load_n(&events_destroyed, __ATOMIC_RELAXED);
}

/* In the current context. */
static struct fevent *all_events;

/* A live event (not destroyed), or NULL. */
static struct fevent *ev_of(CUevent e)
{
	struct fevent *ev = (struct fevent *)e;

	return ev && !__atomic_load_n(&ev->destroyed, __ATOMIC_ACQUIRE) ? ev : NULL;
}

API CUresult cuEventCreate(CUevent *e, unsigned int flags)
{
	struct fevent *ev;
	struct fctx *c;

	pthread_mutex_lock(&mu);
	c = cur_ctx();
	pthread_mutex_unlock(&mu);
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	ev = calloc(1, sizeof(*ev));
	*e = (CUevent)ev;
	if (!ev)
		return CUDA_ERROR_OUT_OF_MEMORY;
	ev->rec = -1;
	ev->ctx = c;
	ev->flags = flags;
	pthread_mutex_lock(&mu);
	ev->next = all_events;
	all_events = ev;
	pthread_mutex_unlock(&mu);
	__atomic_add_fetch(&events_created, 1, __ATOMIC_RELAXED);
	return CUDA_SUCCESS;
}

API CUresult cuEventDestroy_v2(CUevent e)
{
	struct fevent *ev = ev_of(e);

	if (!ev)
		return CUDA_ERROR_INVALID_HANDLE;
	__atomic_store_n(&ev->destroyed, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&events_destroyed, 1, __ATOMIC_RELAXED);
	return CUDA_SUCCESS;
}

API int fake_event_ctx(CUevent e)
{
	return ev_of(e) ? ev_of(e)->ctx->id : -1;
}

API int fake_event_rec(CUevent e)
{
	return ev_of(e) ? ev_of(e)->rec : -1;
}

/* On a stream of the event's context only. */
static CUresult event_record(CUevent e, CUstream h, int ptsz)
{
	struct fevent *ev = ev_of(e);
	struct fstream *s;

	if (!ev)
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&mu);
	s = stream_of(h, ptsz);
	if (s->destroyed || sctx(s) != ev->ctx) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	ev->rec = (int)(log_add(s, FAKE_EVENT, ptsz, 0) - logv);
	ev->capture = s->capturing;
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API CUresult cuEventRecord(CUevent e, CUstream h)
{
	return event_record(e, h, 0);
}

API CUresult cuEventRecord_ptsz(CUevent e, CUstream h)
{
	return event_record(e, h, 1);
}

API CUresult cuEventRecordWithFlags(CUevent e, CUstream h, unsigned int flags)
{
	(void)flags;
	return event_record(e, h, 0);
}

API CUresult cuEventRecordWithFlags_ptsz(CUevent e, CUstream h, unsigned int flags)
{
	(void)flags;
	return event_record(e, h, 1);
}

/* Between the ends of the two records, whatever context is current. */
static CUresult elapsed(float *ms, CUevent a, CUevent b)
{
	struct fevent *s = ev_of(a), *e = ev_of(b);
	CUresult r = CUDA_SUCCESS;

	if (!ms)
		return CUDA_ERROR_INVALID_VALUE;
	if (!s || !e || s->rec < 0 || e->rec < 0 || ((s->flags | e->flags) & CU_EVENT_DISABLE_TIMING))
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&mu);
	if (!fake_rec_done(s->rec) || !fake_rec_done(e->rec))
		r = CUDA_ERROR_NOT_READY;
	else
		*ms = (float)(((double)logv[e->rec].end - (double)logv[s->rec].end) / 1e6);
	pthread_mutex_unlock(&mu);
	return r;
}

API CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
	return elapsed(ms, a, b);
}

API CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b)
{
	return elapsed(ms, a, b);
}

API CUresult cuEventSynchronize(CUevent e)
{
	struct fevent *ev = ev_of(e);

	if (!ev)
		return CUDA_ERROR_INVALID_HANDLE;
	if (ev->rec >= 0)
		fake_rec_wait(ev->rec);
	return CUDA_SUCCESS;
}

API CUresult cuEventQuery(CUevent e)
{
	struct fevent *ev = ev_of(e);
	int rec, done;

	if (!ev)
		return CUDA_ERROR_INVALID_HANDLE;
	rec = ev->rec;
	if (rec < 0)
		return CUDA_SUCCESS;
	pthread_mutex_lock(&mu);
	done = fake_rec_done(rec);
	pthread_mutex_unlock(&mu);
	return done ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

/* Later commands on the stream start after the event's record ended; a
 * stream that waits on an event recorded in a capture joins the capture. */
static CUresult wait_event(CUstream h, CUevent e, int ptsz)
{
	struct fevent *ev = ev_of(e);
	struct fstream *s;
	struct fake_rec *r;

	if (!ev)
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&mu);
	s = stream_of(h, ptsz);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	if (ev->capture && !s->capturing)
		s->capturing = ev->capture;
	r = log_add(s, FAKE_WAIT_EVENT, ptsz, 0);
	if (ev->rec >= 0 && !ev->capture)
		fake_evwait(&s->tl, r, ev->rec);
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API CUresult cuStreamWaitEvent(CUstream h, CUevent e, unsigned int flags)
{
	(void)flags;
	return wait_event(h, e, 0);
}

API CUresult cuStreamWaitEvent_ptsz(CUstream h, CUevent e, unsigned int flags)
{
	(void)flags;
	return wait_event(h, e, 1);
}
