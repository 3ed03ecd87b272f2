// SPDX-License-Identifier: MIT
/*
 * The CUDA table's ops for the interposition core (interpose.h, struct
 * xsi_runtime): what a stream handle names (default kinds, device, context,
 * priority: an urgent stream's as cuda/urgent.h says), whether it is being
 * captured, and marks: events recorded after what was handed to the driver,
 * which the core waits on to learn what completed.
 */
#include <cuda.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "../../internal.h"
#include "../interpose.h"
#include "ops.h"
#include "urgent.h"

/* How long wait_event() polls with yields before it sleeps. */
#define XC_SPIN_NS 200000ULL

/*
 * Wait until @ev completed or @deadline (CLOCK_MONOTONIC ns) passed: 0,
 * -ETIMEDOUT or -EIO.  It polls rather than blocking in cuEventSynchronize,
 * so that the deadline (XSCHED_CUDA_HOLD_MAX_MS) holds even when the
 * awaited work waits for the host: with yields for the first XC_SPIN_NS
 * (a capped stream waits for one batch of kernels while the next batch
 * runs: a sleep longer than that batch would let the GPU run dry, and a
 * sleep is never shorter than the timer slack, 50 us by default), then
 * with sleeps of 10 us growing to 100 us.
 */
static int wait_event(CUevent ev, uint64_t deadline)
{
	uint64_t ns = 0, spin_end = 0;
	bool sw;
	CUstreamCaptureMode m = xc_relax(&sw);
	int ret;

	for (;;) {
		CUresult r = xc_drv.event_query(ev);
		uint64_t now;

		if (r == CUDA_SUCCESS) {
			ret = 0;
			break;
		}
		if (r != CUDA_ERROR_NOT_READY) {
			ret = -EIO;
			break;
		}
		now = xs_now_ns();
		if (now >= deadline) {
			ret = -ETIMEDOUT;
			break;
		}
		if (!spin_end)
			spin_end = now + XC_SPIN_NS;
		if (now < spin_end) {
			sched_yield();
			ns = 10000;
		} else {
			struct timespec ts = { 0, (long)ns };

			nanosleep(&ts, NULL);
			if (ns < 100000)
				ns *= 2;
		}
	}
	xc_unrelax(sw, m);
	return ret;
}

/* ---- the core's runtime ops ---------------------------------------------- */

enum xsi_default xc_default_kind(uintptr_t h)
{
	if (!h)
		return XSI_DEFAULT_NULL;
	if (h == (uintptr_t)CU_STREAM_LEGACY)
		return XSI_DEFAULT_LEGACY;
	if (h == (uintptr_t)CU_STREAM_PER_THREAD)
		return XSI_DEFAULT_PER_THREAD;
	return XSI_NOT_DEFAULT;
}

int xc_current_device(void)
{
	CUdevice dev = 0;

	return xc_drv.ctx_get_device(&dev) == CUDA_SUCCESS ? (int)dev : 0;
}

int xc_device_count(void)
{
	int n = 0;

	return xc_drv.device_get_count && xc_drv.device_get_count(&n) == CUDA_SUCCESS ?
	       n : -1;
}

/* A stream's context, priority and device (the caller's current context
 * for the default streams).  CUDA priorities: lower is more urgent;
 * xsched's: higher is.  @known: a stream's CUDA priority as its create hook
 * read it (NULL: read it here). */
static int describe(uintptr_t h, const int *known, struct xsi_stream_desc *d)
{
	CUcontext ctx = NULL, old;
	CUdevice dev = 0;
	int prio = 0;
	bool program_side = h & XU_PROGRAM_SIDE;

	h &= ~(uintptr_t)XU_PROGRAM_SIDE;
	if (xc_default_kind(h) == XSI_NOT_DEFAULT) {
		if (xc_drv.stream_get_ctx((CUstream)h, &ctx) != CUDA_SUCCESS)
			return -ENOENT;
		if (known)
			prio = *known;
		else if (xc_drv.stream_get_priority((CUstream)h, &prio) != CUDA_SUCCESS)
			prio = 0;
	} else if (xc_drv.ctx_get_current(&ctx) != CUDA_SUCCESS) {
		return -ENOENT;
	}
	if (!ctx || xc_drv.ctx_push(ctx) != CUDA_SUCCESS)
		return -ENOENT;
	if (xc_drv.ctx_get_device(&dev) != CUDA_SUCCESS)
		dev = 0;
	xc_drv.ctx_pop(&old);
	d->priority = -prio;
	d->device = (int32_t)dev;
	d->context = (uintptr_t)ctx;
	/* Its work runs in the urgent context: it holds nothing of this one;
	 * what it runs in this one holds as any stream does.  In the urgent
	 * context its streams are peers: the driver's time-slicing is the
	 * preemption there, and a cap on one (PyTorch makes streams of three
	 * urgent priorities) would start its gathered burst early
	 * (cuda/gather.c). */
	if (!program_side && xu_stream_urgent((CUstream)h, &d->device))
		d->priority = 1;
	/* What runs on its own stream holds lower streams as any stream's
	 * work does, but caps them only while its choice arms the cap
	 * (cuda/urgent.c, cap_sync()). */
	if (program_side)
		d->cap_off = true;
	return 0;
}

int xc_describe(uintptr_t h, struct xsi_stream_desc *d)
{
	return describe(h, NULL, d);
}

int xc_describe_created(CUstream h, int prio, struct xsi_stream_desc *d)
{
	return describe((uintptr_t)h, &prio, d);
}

int xc_enter(const struct xsi_stream_desc *d)
{
	return xc_drv.ctx_push((CUcontext)d->context) == CUDA_SUCCESS ? 0 : -EIO;
}

/*
 * Marks: events kept for reuse once their mark is freed (a capped stream
 * records one every `batch` launches: creating and destroying one each time
 * would cost more than the record).  An event belongs to its context: a
 * spare is taken for the same context only, and a context's spares are
 * destroyed before the context is (xc_marks_purge()).
 */
#define XC_POOL 64	/* spare events kept */

struct xc_mark {
	CUevent ev;
	CUcontext ctx;
	int32_t device;
	struct xc_mark *next;	/* in the pool */
};

static struct {
	pthread_mutex_t lock;
	struct xc_mark *spare;
	unsigned int n;
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER };

static struct xc_mark *pool_get(CUcontext ctx)
{
	struct xc_mark **pp, *k = NULL;

	pthread_mutex_lock(&pool.lock);
	for (pp = &pool.spare; *pp; pp = &(*pp)->next) {
		if ((*pp)->ctx == ctx) {
			k = *pp;
			*pp = k->next;
			pool.n--;
			break;
		}
	}
	pthread_mutex_unlock(&pool.lock);
	return k;
}

static void mark_destroy(struct xc_mark *k)
{
	xc_drv.event_destroy(k->ev);
	free(k);
}

static void pool_put(struct xc_mark *k)
{
	pthread_mutex_lock(&pool.lock);
	if (pool.n < XC_POOL) {
		k->next = pool.spare;
		pool.spare = k;
		pool.n++;
		k = NULL;
	}
	pthread_mutex_unlock(&pool.lock);
	if (k)
		mark_destroy(k);
}

void xc_marks_purge(CUcontext ctx, int32_t device)
{
	struct xc_mark **pp = &pool.spare, *k, *gone = NULL;

	pthread_mutex_lock(&pool.lock);
	while ((k = *pp)) {
		if (k->ctx == ctx || (device >= 0 && k->device == device)) {
			*pp = k->next;
			pool.n--;
			k->next = gone;
			gone = k;
		} else {
			pp = &k->next;
		}
	}
	pthread_mutex_unlock(&pool.lock);
	while ((k = gone)) {
		gone = k->next;
		mark_destroy(k);
	}
}

void xc_ops_fork_prepare(void)
{
	pthread_mutex_lock(&pool.lock);
}

void xc_ops_fork_parent(void)
{
	pthread_mutex_unlock(&pool.lock);
}

/* The child cannot use its parent's contexts: it forgets the spares. */
void xc_ops_fork_child(void)
{
	pthread_mutex_init(&pool.lock, NULL);
	pool.spare = NULL;
	pool.n = 0;
}

/* Is @h being captured into a graph (its own capture, or one it joined)? */
int xc_is_capturing(uintptr_t h)
{
	CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;

	h &= ~(uintptr_t)XU_PROGRAM_SIDE;
	if (!xc_drv.stream_is_capturing ||
	    xc_drv.stream_is_capturing((CUstream)h, &cs) != CUDA_SUCCESS)
		return -EIO;
	return cs != CU_STREAM_CAPTURE_STATUS_NONE;
}

/* An event after what was handed to the driver on @h, recorded from any
 * thread (a per-thread stream: by its owner only, the core sees to that).
 * Not on a stream being captured: the record would become a graph node. */
int xc_mark_record(uintptr_t h, const struct xsi_stream_desc *d, void **mark)
{
	CUcontext old, ctx = (CUcontext)d->context;
	CUstream on = NULL;
	struct xc_mark *k;
	CUstreamCaptureMode m;
	bool sw;
	CUresult r = CUDA_SUCCESS;

	if (h & XU_PROGRAM_SIDE)	/* an urgent stream's work in its context */
		h &= ~(uintptr_t)XU_PROGRAM_SIDE;
	else
		xu_mark_target((CUstream)h, &on, &ctx);	/* its twin's */
	on = on ? on : (CUstream)h;
	if (!ctx || xc_drv.ctx_push(ctx) != CUDA_SUCCESS)
		return -EIO;
	if (xc_is_capturing(h) > 0) {
		xc_drv.ctx_pop(&old);
		return -EBUSY;
	}
	k = pool_get(ctx);
	if (!k) {
		k = calloc(1, sizeof(*k));
		r = k ? xc_drv.event_create(&k->ev, CU_EVENT_DISABLE_TIMING) :
		    CUDA_ERROR_OUT_OF_MEMORY;
		if (r != CUDA_SUCCESS) {
			free(k);
			k = NULL;
		} else {
			k->ctx = ctx;
			k->device = d->device;
		}
	}
	if (k) {
		m = xc_relax(&sw);
		r = xc_drv.event_record(k->ev, on);
		xc_unrelax(sw, m);
		if (r != CUDA_SUCCESS)
			mark_destroy(k);
	}
	xc_drv.ctx_pop(&old);
	if (r != CUDA_SUCCESS)
		return -EIO;
	*mark = k;
	return 0;
}

int xc_mark_wait(void *mark, int64_t timeout_ns)
{
	struct xc_mark *k = mark;

	return wait_event(k->ev, timeout_ns < 0 ? UINT64_MAX :
			  xs_now_ns() + (uint64_t)timeout_ns);
}

int32_t xc_mark_device(void *mark)
{
	return ((struct xc_mark *)mark)->device;
}

void xc_mark_free(void *mark)
{
	pool_put(mark);
}

bool xc_ops_init(void)
{
	if (!xc_drv.ctx_get_current || !xc_drv.ctx_push || !xc_drv.ctx_pop ||
	    !xc_drv.ctx_get_device || !xc_drv.stream_get_ctx ||
	    !xc_drv.stream_get_priority || !xc_drv.event_create ||
	    !xc_drv.event_destroy || !xc_drv.event_record ||
	    !xc_drv.event_query)
		return false;
	return true;
}
