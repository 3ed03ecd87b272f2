// SPDX-License-Identifier: MIT
/* A fake libcuda.so.1 for the interposer's host tests: see fake_libcuda.h. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fake_libcuda.h"

#define API __attribute__((visibility("default")))
#include "fake_timeline.h"

/* The _ptsz exports and old ABIs that cuda.h does not declare. */
CUresult cuLaunchKernel_ptsz(CUfunction, unsigned int, unsigned int, unsigned int,
			     unsigned int, unsigned int, unsigned int, unsigned int,
			     CUstream, void **, void **);
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *, CUfunction, void **, void **);
CUresult cuMemcpyAsync_ptsz(CUdeviceptr, CUdeviceptr, size_t, CUstream);
CUresult cuStreamSynchronize_ptsz(CUstream);
CUresult cuStreamQuery_ptsz(CUstream);
CUresult cuStreamSetAttribute_ptsz(CUstream, CUstreamAttrID, const CUstreamAttrValue *);
CUresult cuStreamCopyAttributes_ptsz(CUstream, CUstream);
CUresult cuStreamIsCapturing_ptsz(CUstream, CUstreamCaptureStatus *);
CUresult cuEventRecord_ptsz(CUevent, CUstream);
CUresult cuStreamBeginCapture_v2_ptsz(CUstream, CUstreamCaptureMode);
CUresult cuStreamEndCapture_ptsz(CUstream, CUgraph *);
#undef cuStreamDestroy
CUresult cuStreamDestroy(CUstream);
#undef cuGetProcAddress
CUresult cuGetProcAddress(const char *, void **, int, cuuint64_t);
CUresult cuMemcpyDtoHAsync_v2_ptsz(void *, CUdeviceptr, size_t, CUstream);
CUresult cuStreamWaitEvent_ptsz(CUstream, CUevent, unsigned int);
CUresult cuLaunchCooperativeKernel_ptsz(CUfunction, unsigned int, unsigned int, unsigned int,
					unsigned int, unsigned int, unsigned int, unsigned int,
					CUstream, void **);
/* The memory waits and writes under every exported name (cuda.h maps the
 * plain names to _v2). */
#undef cuStreamWaitValue32
#undef cuStreamWaitValue64
#undef cuStreamWriteValue32
#undef cuStreamWriteValue64
#define MEMOP_NAMES(X) \
	X(cuStreamWaitValue32, cuuint32_t, 0, 0) X(cuStreamWaitValue32_ptsz, cuuint32_t, 0, 1) \
	X(cuStreamWaitValue32_v2, cuuint32_t, 0, 0) X(cuStreamWaitValue32_v2_ptsz, cuuint32_t, 0, 1) \
	X(cuStreamWaitValue64, cuuint64_t, 1, 0) X(cuStreamWaitValue64_ptsz, cuuint64_t, 1, 1) \
	X(cuStreamWaitValue64_v2, cuuint64_t, 1, 0) X(cuStreamWaitValue64_v2_ptsz, cuuint64_t, 1, 1)
#define WRITE_NAMES(X) \
	X(cuStreamWriteValue32, cuuint32_t, 0, 0) X(cuStreamWriteValue32_ptsz, cuuint32_t, 0, 1) \
	X(cuStreamWriteValue32_v2, cuuint32_t, 0, 0) X(cuStreamWriteValue32_v2_ptsz, cuuint32_t, 0, 1) \
	X(cuStreamWriteValue64, cuuint64_t, 1, 0) X(cuStreamWriteValue64_ptsz, cuuint64_t, 1, 1) \
	X(cuStreamWriteValue64_v2, cuuint64_t, 1, 0) X(cuStreamWriteValue64_v2_ptsz, cuuint64_t, 1, 1)
#define MEMOP_DECL(n, T, wide, pt) CUresult n(CUstream, CUdeviceptr, T, unsigned int);
MEMOP_NAMES(MEMOP_DECL)
WRITE_NAMES(MEMOP_DECL)

struct fgreen {
	int ctx_obj;		/* its CUcontext is &ctx_obj */
	int id;
	unsigned int sms;
};

struct fstream {
	int id;
	struct fgreen *green;	/* made by cuGreenCtxStreamCreate, or NULL */
	int prio;
	int capturing;		/* the id of the capture it is in (the origin stream's), or 0 */
	struct fake_tl tl;
	int destroyed;		/* its handle is invalid until made again */
	struct fstream *next_free;
	struct fstream *next_all;	/* every stream ever made: never leaked */
};

struct fevent {
	int rec;		/* the log record of its last record, -1: never recorded */
	int capture;		/* recorded in this capture (0: none) */
};

static int next_id = 1;
static struct fstream legacy;	/* id 0 */
static struct fstream *free_streams;
static struct fstream *all_streams;
static __thread struct fstream pt_stream;	/* id -tid */
static __thread int pt_ready;
static int the_ctx_obj;
#define THE_CTX ((CUcontext)&the_ctx_obj)
static __thread int ctx_depth;	/* pushes on this thread */
#define MAX_GREEN 16
static struct fgreen greens[MAX_GREEN];
static int ngreen;

API uint64_t fake_now(void)
{
	return fake_clock_ns();
}

/* mu held: which stream a handle names, through a variant. */
static struct fstream *stream_of(CUstream h, int ptsz)
{
	if (h == CU_STREAM_LEGACY || (!h && !ptsz))
		return &legacy;
	if (h == CU_STREAM_PER_THREAD || !h) {
		if (!pt_ready) {
			pt_stream.id = -(int)syscall(SYS_gettid);
			pt_ready = 1;
		}
		return &pt_stream;
	}
	return (struct fstream *)h;
}

/* mu held */
static struct fake_rec *log_add(struct fstream *s, int kernel, int variant, uint64_t ns)
{
	return fake_log_add(s->id, s->capturing, &s->tl, kernel, variant, ns);
}

API int fake_stream_id(CUstream h)
{
	int id;

	pthread_mutex_lock(&mu);
	id = stream_of(h, 0)->id;
	pthread_mutex_unlock(&mu);
	return id;
}

/* ---- context and device ---- */

API CUresult cuInit(unsigned int flags)
{
	(void)flags;
	return CUDA_SUCCESS;
}

API CUresult cuDriverGetVersion(int *v)
{
	*v = 13000;
	return CUDA_SUCCESS;
}

API CUresult cuCtxGetCurrent(CUcontext *c)
{
	*c = THE_CTX;	/* the one context is current everywhere */
	return CUDA_SUCCESS;
}

/* The one context, or one converted from a green context. */
static int ctx_known(CUcontext c)
{
	int i, ok = c == THE_CTX;

	pthread_mutex_lock(&mu);
	for (i = 0; i < ngreen && !ok; i++)
		ok = c == (CUcontext)&greens[i].ctx_obj;
	pthread_mutex_unlock(&mu);
	return ok;
}

API CUresult cuCtxPushCurrent_v2(CUcontext c)
{
	if (!ctx_known(c))
		return CUDA_ERROR_INVALID_CONTEXT;
	ctx_depth++;
	return CUDA_SUCCESS;
}

API CUresult cuCtxPopCurrent_v2(CUcontext *c)
{
	if (!ctx_depth)
		return CUDA_ERROR_INVALID_CONTEXT;
	ctx_depth--;
	if (c)
		*c = THE_CTX;
	return CUDA_SUCCESS;
}

API CUresult cuCtxGetDevice(CUdevice *d)
{
	*d = 0;
	return CUDA_SUCCESS;
}

/* ---- streams ---- */

/* Internal: a call to an exported name would reach the interposer's hook. */
static CUresult stream_make(CUstream *ph, unsigned int flags, int prio)
{
	struct fstream *s, *next;

	(void)flags;
	pthread_mutex_lock(&mu);
	s = free_streams;	/* a destroyed handle comes back first, as in CUDA */
	if (s) {
		free_streams = s->next_free;
		next = s->next_all;
	} else {
		s = malloc(sizeof(*s));
		next = all_streams;
		all_streams = s;
	}
	memset(s, 0, sizeof(*s));
	s->next_all = next;
	s->id = next_id++;
	s->prio = prio;
	pthread_mutex_unlock(&mu);
	*ph = (CUstream)s;
	return CUDA_SUCCESS;
}

API CUresult cuStreamCreateWithPriority(CUstream *ph, unsigned int flags, int prio)
{
	return stream_make(ph, flags, prio);
}

API CUresult cuStreamCreate(CUstream *ph, unsigned int flags)
{
	return stream_make(ph, flags, 0);
}

API CUresult cuStreamDestroy_v2(CUstream h)
{
	struct fstream *s = (struct fstream *)h;

	if (!h || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD)
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&mu);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	s->destroyed = 1;	/* queued work still runs (its records stay) */
	s->next_free = free_streams;
	free_streams = s;
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API CUresult cuStreamDestroy(CUstream h)
{
	return cuStreamDestroy_v2(h);
}

API CUresult cuCtxGetStreamPriorityRange(int *least, int *greatest)
{
	*least = 0;
	*greatest = -5;
	return CUDA_SUCCESS;
}

/* A green context's stream names the green context's CUcontext. */
API CUresult cuStreamGetCtx(CUstream h, CUcontext *c)
{
	pthread_mutex_lock(&mu);
	*c = stream_of(h, 0)->green ? (CUcontext)&stream_of(h, 0)->green->ctx_obj : THE_CTX;
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API int fake_stream_green(CUstream h, unsigned int *sms)
{
	struct fgreen *g;

	pthread_mutex_lock(&mu);
	g = stream_of(h, 0)->green;
	*sms = g ? g->sms : 0;
	pthread_mutex_unlock(&mu);
	return g ? g->id : 0;
}

API int fake_green_count(void)
{
	int n;

	pthread_mutex_lock(&mu);
	n = ngreen;
	pthread_mutex_unlock(&mu);
	return n;
}

#ifndef FAKE_CUDA_NO_GREEN
/* ---- green contexts ---- */

#define SM_GRAIN 8	/* compute capability 9.0: groups of multiples of 8 */

struct fdesc {
	unsigned int sms;
};

API CUresult cuDeviceGetDevResource(CUdevice d, CUdevResource *r, CUdevResourceType t)
{
	if (d != 0 || t != CU_DEV_RESOURCE_TYPE_SM)
		return CUDA_ERROR_INVALID_VALUE;
	memset(r, 0, sizeof(*r));
	r->type = CU_DEV_RESOURCE_TYPE_SM;
	r->sm.smCount = FAKE_SMS;
	r->sm.minSmPartitionSize = SM_GRAIN;
	r->sm.smCoscheduledAlignment = SM_GRAIN;
	return CUDA_SUCCESS;
}

API CUresult cuDevSmResourceSplitByCount(CUdevResource *result, unsigned int *nb,
					 const CUdevResource *in, CUdevResource *rest,
					 unsigned int flags, unsigned int min)
{
	unsigned int per, n, i;

	if (flags || !nb || !in || in->type != CU_DEV_RESOURCE_TYPE_SM || min > in->sm.smCount)
		return CUDA_ERROR_INVALID_VALUE;
	per = min < SM_GRAIN ? SM_GRAIN : (min + SM_GRAIN - 1) / SM_GRAIN * SM_GRAIN;
	n = in->sm.smCount / per;
	if (!result) {
		*nb = n;
		return CUDA_SUCCESS;
	}
	if (*nb < n)
		n = *nb;
	for (i = 0; i < n; i++) {
		memset(&result[i], 0, sizeof(result[i]));
		result[i].type = CU_DEV_RESOURCE_TYPE_SM;
		result[i].sm.smCount = per;
	}
	*nb = n;
	if (rest) {
		memset(rest, 0, sizeof(*rest));
		rest->type = CU_DEV_RESOURCE_TYPE_SM;
		rest->sm.smCount = in->sm.smCount - n * per;
	}
	return CUDA_SUCCESS;
}

/* Descriptors are never freed (CUDA has no call for it): a fixed pool. */
static struct fdesc descs[MAX_GREEN];
static int ndesc;

API CUresult cuDevResourceGenerateDesc(CUdevResourceDesc *d, CUdevResource *r, unsigned int n)
{
	struct fdesc *fd;
	unsigned int i;

	pthread_mutex_lock(&mu);
	fd = ndesc < MAX_GREEN ? &descs[ndesc++] : NULL;
	pthread_mutex_unlock(&mu);
	if (!fd)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (i = 0; i < n; i++)
		fd->sms += r[i].sm.smCount;
	*d = (CUdevResourceDesc)fd;
	return CUDA_SUCCESS;
}

API CUresult cuGreenCtxCreate(CUgreenCtx *g, CUdevResourceDesc d, CUdevice dev,
			      unsigned int flags)
{
	struct fgreen *f;

	if (dev != 0 || !(flags & CU_GREEN_CTX_DEFAULT_STREAM) || !d)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mu);
	if (ngreen == MAX_GREEN) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	f = &greens[ngreen++];
	f->id = ngreen;
	f->sms = ((struct fdesc *)d)->sms;
	pthread_mutex_unlock(&mu);
	*g = (CUgreenCtx)f;
	return CUDA_SUCCESS;
}

API CUresult cuCtxFromGreenCtx(CUcontext *c, CUgreenCtx g)
{
	*c = (CUcontext)&((struct fgreen *)g)->ctx_obj;
	return CUDA_SUCCESS;
}

/* As the driver: CU_STREAM_NON_BLOCKING must be asked for. */
API CUresult cuGreenCtxStreamCreate(CUstream *ph, CUgreenCtx g, unsigned int flags, int prio)
{
	CUresult r;

	if (!(flags & CU_STREAM_NON_BLOCKING) || !g)
		return CUDA_ERROR_INVALID_VALUE;
	r = stream_make(ph, flags, prio);
	if (r == CUDA_SUCCESS) {
		pthread_mutex_lock(&mu);
		((struct fstream *)*ph)->green = (struct fgreen *)g;
		pthread_mutex_unlock(&mu);
	}
	return r;
}
#endif /* FAKE_CUDA_NO_GREEN */

API CUresult cuStreamGetPriority(CUstream h, int *p)
{
	pthread_mutex_lock(&mu);
	*p = stream_of(h, 0)->prio;
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

/* Of the stream attributes only the priority is modelled; it is clamped to
 * the range, as CUDA does. */
static CUresult set_attribute(CUstream h, CUstreamAttrID a, const CUstreamAttrValue *v,
			      int ptsz)
{
	struct fstream *s;

	if (!v)
		return CUDA_ERROR_INVALID_VALUE;
	if (a != CU_STREAM_ATTRIBUTE_PRIORITY)
		return CUDA_SUCCESS;
	pthread_mutex_lock(&mu);
	s = stream_of(h, ptsz);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	s->prio = v->priority > 0 ? 0 : v->priority < -5 ? -5 : v->priority;
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API CUresult cuStreamSetAttribute(CUstream h, CUstreamAttrID a, const CUstreamAttrValue *v)
{
	return set_attribute(h, a, v, 0);
}

API CUresult cuStreamSetAttribute_ptsz(CUstream h, CUstreamAttrID a, const CUstreamAttrValue *v)
{
	return set_attribute(h, a, v, 1);
}

static CUresult copy_attributes(CUstream dst, CUstream src, int ptsz)
{
	pthread_mutex_lock(&mu);
	stream_of(dst, ptsz)->prio = stream_of(src, ptsz)->prio;
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API CUresult cuStreamCopyAttributes(CUstream dst, CUstream src)
{
	return copy_attributes(dst, src, 0);
}

API CUresult cuStreamCopyAttributes_ptsz(CUstream dst, CUstream src)
{
	return copy_attributes(dst, src, 1);
}

static CUresult is_capturing(CUstream h, CUstreamCaptureStatus *st, int ptsz)
{
	pthread_mutex_lock(&mu);
	*st = stream_of(h, ptsz)->capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE :
	      CU_STREAM_CAPTURE_STATUS_NONE;
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API CUresult cuStreamIsCapturing(CUstream h, CUstreamCaptureStatus *st)
{
	return is_capturing(h, st, 0);
}

API CUresult cuStreamIsCapturing_ptsz(CUstream h, CUstreamCaptureStatus *st)
{
	return is_capturing(h, st, 1);
}

static CUresult begin_capture(CUstream h, int ptsz)
{
	struct fstream *s;

	pthread_mutex_lock(&mu);
	s = stream_of(h, ptsz);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	s->capturing = s->id ? s->id : 1 << 30;
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API CUresult cuStreamBeginCapture_v2(CUstream h, CUstreamCaptureMode m)
{
	(void)m;
	return begin_capture(h, 0);
}

API CUresult cuStreamBeginCapture_v2_ptsz(CUstream h, CUstreamCaptureMode m)
{
	(void)m;
	return begin_capture(h, 1);
}

/* The capture ends on every stream that joined it. */
static CUresult end_capture(CUstream h, CUgraph *g, int ptsz)
{
	struct fstream *s, *o;
	int id;

	pthread_mutex_lock(&mu);
	s = stream_of(h, ptsz);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	id = s->capturing;
	s->capturing = 0;
	for (o = all_streams; o && id; o = o->next_all)
		if (o->capturing == id)
			o->capturing = 0;
	if (id && legacy.capturing == id)
		legacy.capturing = 0;
	if (id && pt_ready && pt_stream.capturing == id)
		pt_stream.capturing = 0;
	pthread_mutex_unlock(&mu);
	*g = (CUgraph)&the_ctx_obj;
	return CUDA_SUCCESS;
}

API CUresult cuStreamEndCapture(CUstream h, CUgraph *g)
{
	return end_capture(h, g, 0);
}

API CUresult cuStreamEndCapture_ptsz(CUstream h, CUgraph *g)
{
	return end_capture(h, g, 1);
}

API CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *m)
{
	static __thread CUstreamCaptureMode cur = CU_STREAM_CAPTURE_MODE_GLOBAL;
	CUstreamCaptureMode old = cur;

	cur = *m;
	*m = old;
	return CUDA_SUCCESS;
}

static CUresult stream_sync(CUstream h, int ptsz)
{
	struct fstream *s;

	pthread_mutex_lock(&mu);
	s = stream_of(h, ptsz);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	pthread_mutex_unlock(&mu);
	fake_tl_wait(&s->tl);
	return CUDA_SUCCESS;
}

API CUresult cuStreamSynchronize(CUstream h)
{
	return stream_sync(h, 0);
}

API CUresult cuStreamSynchronize_ptsz(CUstream h)
{
	return stream_sync(h, 1);
}

static CUresult stream_query(CUstream h, int ptsz)
{
	int idle;

	pthread_mutex_lock(&mu);
	idle = fake_tl_idle(&stream_of(h, ptsz)->tl);
	pthread_mutex_unlock(&mu);
	return idle ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

API CUresult cuStreamQuery(CUstream h)
{
	return stream_query(h, 0);
}

API CUresult cuStreamQuery_ptsz(CUstream h)
{
	return stream_query(h, 1);
}

API CUresult cuCtxSynchronize(void)
{
	fake_log_wait();
	return CUDA_SUCCESS;
}

/* ---- events ---- */

static int events_created;

API int fake_events_created(void)
{
	return __atomic_load_n(&events_created, __ATOMIC_RELAXED);
}

API CUresult cuEventCreate(CUevent *e, unsigned int flags)
{
	struct fevent *ev = calloc(1, sizeof(*ev));

	(void)flags;
	*e = (CUevent)ev;
	if (!ev)
		return CUDA_ERROR_OUT_OF_MEMORY;
	ev->rec = -1;
	__atomic_add_fetch(&events_created, 1, __ATOMIC_RELAXED);
	return CUDA_SUCCESS;
}

API CUresult cuEventDestroy_v2(CUevent e)
{
	free(e);
	return CUDA_SUCCESS;
}

static CUresult event_record(CUevent e, CUstream h, int ptsz)
{
	struct fevent *ev = (struct fevent *)e;
	struct fstream *s;

	pthread_mutex_lock(&mu);
	s = stream_of(h, ptsz);
	if (s->destroyed) {
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

API CUresult cuEventSynchronize(CUevent e)
{
	if (((struct fevent *)e)->rec >= 0)
		fake_rec_wait(((struct fevent *)e)->rec);
	return CUDA_SUCCESS;
}

API CUresult cuEventQuery(CUevent e)
{
	int rec = ((struct fevent *)e)->rec, done;

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
	struct fevent *ev = (struct fevent *)e;
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

/* ---- memory waits and writes ---- */

static CUresult memop(CUstream h, CUdeviceptr addr, uint64_t v, unsigned int flags, int wide,
		      int ptsz, int write)
{
	struct fstream *s;
	struct fake_rec *r;

	if (!addr)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mu);
	s = stream_of(h, ptsz);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	r = log_add(s, write ? FAKE_WRITE_VALUE : FAKE_WAIT_VALUE, ptsz, 0);
	fake_memop(&s->tl, r, write ? FAKE_MEM_WRITE : FAKE_MEM_WAIT, (void *)(uintptr_t)addr, v,
		   ~0ULL, (int)(flags & 3), wide);
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

#define MEMOP_DEF(n, T, wide, pt)						\
	API CUresult n(CUstream h, CUdeviceptr addr, T v, unsigned int flags)	\
	{									\
		return memop(h, addr, v, flags, wide, pt, 0);			\
	}
#define WRITE_DEF(n, T, wide, pt)						\
	API CUresult n(CUstream h, CUdeviceptr addr, T v, unsigned int flags)	\
	{									\
		return memop(h, addr, v, flags, wide, pt, 1);			\
	}
MEMOP_NAMES(MEMOP_DEF)
WRITE_NAMES(WRITE_DEF)

/* ---- work ---- */

static CUresult launch(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
		       unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem,
		       CUstream h, void **params, void **extra, int variant,
		       const void *config)
{
	const struct fake_kernel *k = (const struct fake_kernel *)f;
	struct fake_rec *r;

	if (!k)
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&mu);
	if (stream_of(h, variant == FAKE_PTSZ)->destroyed) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	r = log_add(stream_of(h, variant == FAKE_PTSZ), k->id, variant, k->ns);
	r->params = params;
	r->extra = extra;
	r->grid[0] = gx;
	r->grid[1] = gy;
	r->grid[2] = gz;
	r->block[0] = bx;
	r->block[1] = by;
	r->block[2] = bz;
	r->smem = smem;
	r->config = config;
	if (k->flag)
		fake_memop(r->tl, r, FAKE_MEM_WRITE, k->flag, k->flag_val, ~0ULL, 0, 0);
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
			    unsigned int bx, unsigned int by, unsigned int bz,
			    unsigned int smem, CUstream h, void **params, void **extra)
{
	return launch(f, gx, gy, gz, bx, by, bz, smem, h, params, extra, FAKE_LEGACY, NULL);
}

API CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
				 unsigned int gz, unsigned int bx, unsigned int by,
				 unsigned int bz, unsigned int smem, CUstream h,
				 void **params, void **extra)
{
	return launch(f, gx, gy, gz, bx, by, bz, smem, h, params, extra, FAKE_PTSZ, NULL);
}

#ifndef FAKE_CUDA_NO_GREEN
/* CUDA 9+; the "older driver" build lacks it (an entry point the
 * interposer hooks that a driver may not have). */
API CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy,
				       unsigned int gz, unsigned int bx, unsigned int by,
				       unsigned int bz, unsigned int smem, CUstream h,
				       void **params)
{
	return launch(f, gx, gy, gz, bx, by, bz, smem, h, params, NULL, FAKE_LEGACY, NULL);
}

API CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
					    unsigned int gz, unsigned int bx, unsigned int by,
					    unsigned int bz, unsigned int smem, CUstream h,
					    void **params)
{
	return launch(f, gx, gy, gz, bx, by, bz, smem, h, params, NULL, FAKE_PTSZ, NULL);
}
#endif

/* What FAKE_CUDA_PROC_INTERNAL hands out: no exported symbol. */
static CUresult internal_launch(CUfunction f, unsigned int gx, unsigned int gy,
				unsigned int gz, unsigned int bx, unsigned int by,
				unsigned int bz, unsigned int smem, CUstream h,
				void **params, void **extra)
{
	return launch(f, gx, gy, gz, bx, by, bz, smem, h, params, extra, FAKE_INTERNAL, NULL);
}

API CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params,
			      void **extra)
{
	return launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
		      c->blockDimZ, c->sharedMemBytes, c->hStream, params, extra,
		      FAKE_LEGACY, c);
}

API CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **params,
				   void **extra)
{
	return launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
		      c->blockDimZ, c->sharedMemBytes, c->hStream, params, extra,
		      FAKE_PTSZ, c);
}

/* ---- memory: device allocations and page-locked host memory ---- */

#define MAX_MEM 256
static struct {
	uintptr_t base;
	size_t n;
	int pinned;		/* 1: page-locked host memory, 0: device memory */
} mems[MAX_MEM];

/* Device memory is host memory here (the fake's kernels do not run). */
static CUresult mem_add(void **p, size_t n, int pinned)
{
	int i;

	*p = calloc(1, n ? n : 1);
	if (!*p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&mu);
	for (i = 0; i < MAX_MEM && mems[i].base; i++)
		;
	if (i < MAX_MEM) {
		mems[i].base = (uintptr_t)*p;
		mems[i].n = n ? n : 1;
		mems[i].pinned = pinned;
	}
	pthread_mutex_unlock(&mu);
	if (i == MAX_MEM) {
		free(*p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	return CUDA_SUCCESS;
}

static CUresult mem_free(uintptr_t p, int pinned)
{
	int i;

	pthread_mutex_lock(&mu);
	for (i = 0; i < MAX_MEM && (mems[i].base != p || mems[i].pinned != pinned); i++)
		;
	if (i < MAX_MEM)
		mems[i].base = 0;
	pthread_mutex_unlock(&mu);
	if (i == MAX_MEM)
		return CUDA_ERROR_INVALID_VALUE;
	free((void *)p);
	return CUDA_SUCCESS;
}

/* mu held: host memory the driver must stage (not page-locked, not device). */
static int pageable(uintptr_t p)
{
	int i;

	if (!p)
		return 0;
	for (i = 0; i < MAX_MEM; i++)
		if (mems[i].base && p >= mems[i].base && p - mems[i].base < mems[i].n)
			return 0;
	return 1;
}

API CUresult cuMemAlloc_v2(CUdeviceptr *d, size_t n)
{
	void *p;
	CUresult r = mem_add(&p, n, 0);

	*d = r == CUDA_SUCCESS ? (CUdeviceptr)(uintptr_t)p : 0;
	return r;
}

API CUresult cuMemFree_v2(CUdeviceptr d)
{
	return mem_free((uintptr_t)d, 0);
}

API CUresult cuMemAllocHost_v2(void **p, size_t n)
{
	return mem_add(p, n, 1);
}

API CUresult cuMemHostAlloc(void **p, size_t n, unsigned int flags)
{
	(void)flags;
	return mem_add(p, n, 1);
}

API CUresult cuMemFreeHost(void *p)
{
	return mem_free((uintptr_t)p, 1);
}

/* ---- copies ---- */

/* A copy from or to pageable memory returns once it ended. */
static CUresult memcpy_async(CUdeviceptr d, CUdeviceptr src, CUstream h, int ptsz)
{
	struct fake_rec *r;
	int idx, block;

	pthread_mutex_lock(&mu);
	if (stream_of(h, ptsz)->destroyed) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	r = log_add(stream_of(h, ptsz), FAKE_COPY, ptsz, 1000);
	idx = (int)(r - logv);
	block = !r->captured && (pageable((uintptr_t)d) || pageable((uintptr_t)src));
	pthread_mutex_unlock(&mu);
	if (block) {
		fake_rec_wait(idx);
		pthread_mutex_lock(&mu);
		logv[idx].ret = fake_now();
		pthread_mutex_unlock(&mu);
	}
	return CUDA_SUCCESS;
}

API CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h)
{
	(void)n;
	return memcpy_async(d, s, h, 0);
}

API CUresult cuMemcpyAsync_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h)
{
	(void)n;
	return memcpy_async(d, s, h, 1);
}

/* Through the exported cuMemcpyAsync, by the PLT (see fake_libcuda.h). */
API CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream h)
{
	return cuMemcpyAsync((CUdeviceptr)(uintptr_t)dst, src, n, h);
}

API CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n, CUstream h)
{
	return cuMemcpyAsync_ptsz((CUdeviceptr)(uintptr_t)dst, src, n, h);
}

API void *fake_self_call_target(void)
{
	return (void *)cuMemcpyAsync;
}

/* Synchronous: on the legacy stream after its work; returns once it ended. */
API CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
	struct fake_rec *r;
	int idx;

	(void)dst;
	(void)src;
	(void)n;
	pthread_mutex_lock(&mu);
	r = log_add(&legacy, FAKE_SYNC_COPY, 0, 1000);
	idx = (int)(r - logv);
	pthread_mutex_unlock(&mu);
	fake_rec_wait(idx);
	pthread_mutex_lock(&mu);
	logv[idx].ret = fake_now();
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

/* An ABI of cuMemcpyAsync that the interposer has no hook for (a later
 * driver's _v2): FAKE_CUDA_PROC_INTERNAL hands out an internal address for
 * "cuMemcpyAsync", which must then not be taken for the ABI we know. */
API CUresult cuMemcpyAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h);
API CUresult cuMemcpyAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h)
{
	(void)n;
	return memcpy_async(d, s, h, 0);
}

static CUresult internal_memcpy(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h)
{
	return cuMemcpyAsync_v2(d, s, n, h);
}

/* ---- cuGetProcAddress: from its own table ---- */

#define F(n) { #n, (void *)n }
static const struct { const char *name; void *fn; } procs[] = {
	F(cuInit), F(cuDriverGetVersion), F(cuCtxGetCurrent), F(cuCtxPushCurrent_v2),
	F(cuCtxPopCurrent_v2), F(cuCtxGetDevice), F(cuStreamCreate),
	F(cuStreamCreateWithPriority), F(cuStreamDestroy), F(cuStreamDestroy_v2),
	F(cuStreamGetCtx), F(cuStreamGetPriority), F(cuStreamIsCapturing),
	F(cuStreamIsCapturing_ptsz), F(cuStreamBeginCapture_v2),
	F(cuStreamBeginCapture_v2_ptsz), F(cuStreamEndCapture), F(cuStreamEndCapture_ptsz),
	F(cuThreadExchangeStreamCaptureMode), F(cuStreamSynchronize),
	F(cuStreamSynchronize_ptsz), F(cuStreamQuery), F(cuStreamQuery_ptsz),
	F(cuCtxSynchronize), F(cuEventCreate), F(cuEventDestroy_v2), F(cuEventRecord),
	F(cuEventRecord_ptsz), F(cuEventSynchronize), F(cuEventQuery), F(cuLaunchKernel),
	F(cuLaunchKernel_ptsz), F(cuLaunchKernelEx), F(cuLaunchKernelEx_ptsz),
	F(cuMemcpyAsync), F(cuMemcpyAsync_ptsz), F(cuGetProcAddress),
	F(cuGetProcAddress_v2), F(cuCtxGetStreamPriorityRange), F(cuStreamSetAttribute),
	F(cuStreamSetAttribute_ptsz), F(cuStreamCopyAttributes), F(cuStreamCopyAttributes_ptsz),
	F(cuStreamWaitEvent), F(cuStreamWaitEvent_ptsz), F(cuMemcpyDtoHAsync_v2),
	F(cuMemcpyDtoHAsync_v2_ptsz), F(cuMemcpyDtoH_v2), F(cuMemAlloc_v2), F(cuMemFree_v2),
	F(cuMemAllocHost_v2), F(cuMemHostAlloc), F(cuMemFreeHost),
	F(cuStreamWaitValue32), F(cuStreamWaitValue32_ptsz), F(cuStreamWaitValue32_v2),
	F(cuStreamWaitValue32_v2_ptsz), F(cuStreamWaitValue64), F(cuStreamWaitValue64_ptsz),
	F(cuStreamWaitValue64_v2), F(cuStreamWaitValue64_v2_ptsz), F(cuStreamWriteValue32),
	F(cuStreamWriteValue32_ptsz), F(cuStreamWriteValue32_v2), F(cuStreamWriteValue32_v2_ptsz),
	F(cuStreamWriteValue64), F(cuStreamWriteValue64_ptsz), F(cuStreamWriteValue64_v2),
	F(cuStreamWriteValue64_v2_ptsz),
#ifndef FAKE_CUDA_NO_GREEN
	F(cuLaunchCooperativeKernel), F(cuLaunchCooperativeKernel_ptsz),
	F(cuDeviceGetDevResource), F(cuDevSmResourceSplitByCount),
	F(cuDevResourceGenerateDesc), F(cuGreenCtxCreate), F(cuCtxFromGreenCtx),
	F(cuGreenCtxStreamCreate),
#endif
};

static void *proc_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < sizeof(procs) / sizeof(procs[0]); i++)
		if (!strcmp(procs[i].name, name))
			return procs[i].fn;
	return NULL;
}

static CUresult get_proc(const char *sym, void **pfn, cuuint64_t flags)
{
	static const char *const pt_suffix[] = { "_v2_ptsz", "_ptsz", "_v2", "", NULL };
	static const char *const suffix[] = { "_v2", "", NULL };
	const char *const *s = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) ?
			       pt_suffix : suffix;
	const char *env = getenv("FAKE_CUDA_PROC_INTERNAL");
	char buf[128];

	*pfn = NULL;
	if (env && *env == '1' && !(flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)) {
		if (!strcmp(sym, "cuLaunchKernel"))
			*pfn = (void *)internal_launch;
		if (!strcmp(sym, "cuMemcpyAsync"))
			*pfn = (void *)internal_memcpy;
		if (*pfn)
			return CUDA_SUCCESS;
	}
	for (; *s; s++) {
		if (strlen(sym) + strlen(*s) + 1 > sizeof(buf))
			continue;
		strcpy(buf, sym);
		strcat(buf, *s);
		*pfn = proc_find(buf);
		if (*pfn)
			return CUDA_SUCCESS;
	}
	return CUDA_ERROR_NOT_FOUND;
}

API CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver, cuuint64_t flags,
				 CUdriverProcAddressQueryResult *st)
{
	CUresult r;

	(void)ver;
	r = get_proc(sym, pfn, flags);
	if (st)
		*st = r == CUDA_SUCCESS ? CU_GET_PROC_ADDRESS_SUCCESS :
		      CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return r;
}

API CUresult cuGetProcAddress(const char *sym, void **pfn, int ver, cuuint64_t flags)
{
	(void)ver;
	return get_proc(sym, pfn, flags);
}
