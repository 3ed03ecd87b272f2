// SPDX-License-Identifier: MIT
/* A fake libcuda.so.1 for the interposer's host tests: see fake_libcuda.h. */
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

#include "fake_libcuda.h"

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
CUresult cuCtxCreate_v2(CUcontext *, unsigned int, CUdevice);
#undef cuEventElapsedTime
CUresult cuEventElapsedTime(float *, CUevent, CUevent);
CUresult cuEventRecordWithFlags_ptsz(CUevent, CUstream, unsigned int);
CUresult cuLaunchHostFunc_ptsz(CUstream, CUhostFn, void *);
CUresult cuStreamAddCallback_ptsz(CUstream, CUstreamCallback, void *, unsigned int);
CUresult cuGraphLaunch_ptsz(CUgraphExec, CUstream);
CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr, const void *, size_t, CUstream);
CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr, CUdeviceptr, size_t, CUstream);
CUresult cuStreamGetFlags_ptsz(CUstream, unsigned int *);
CUresult cuStreamGetCtx_ptsz(CUstream, CUcontext *);
CUresult cuStreamGetCtx_v2_ptsz(CUstream, CUcontext *, CUgreenCtx *);
CUresult cuStreamGetPriority_ptsz(CUstream, int *);
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

struct fctx;

struct fstream {
	int id;
	struct fgreen *green;	/* made by cuGreenCtxStreamCreate, or NULL */
	struct fctx *ctx;	/* its context (NULL: the primary) */
	unsigned int flags;
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
	struct fctx *ctx;	/* the context current at its creation */
	unsigned int flags;
	int destroyed;		/* then every use answers INVALID_HANDLE */
	struct fevent *next;	/* every event: kept, never leaked nor reused */
};

/* A context: the primary (id 0) or one of cuCtxCreate. */
struct fctx {
	int id;
	unsigned int flags;
	int destroyed;
	struct fstream dflt;	/* a created context's default stream */
};

static int next_id = 1;
static struct fstream legacy;	/* id 0 */
static struct fstream *free_streams;
static struct fstream *all_streams;
static __thread struct fstream pt_stream;	/* id -tid */
static __thread int pt_ready;
static struct fctx primary;	/* id 0 */
#define THE_CTX ((CUcontext)&primary)
#define MAX_CTX 16
static struct fctx *ctxs[MAX_CTX + 1];	/* by id (1..): never freed, never reused */
static int nctx;
#define MAX_DEPTH 32
static __thread CUcontext ctx_stack[MAX_DEPTH];	/* pushed on this thread; the primary under it */
static __thread int ctx_depth;
#define MAX_GREEN 16
static struct fgreen greens[MAX_GREEN];
static int ngreen;

/* mu held: the context a handle names (a green context's: the primary's),
 * NULL: none, or destroyed. */
static struct fctx *ctx_of(CUcontext c)
{
	int i;

	if (c == THE_CTX)
		return &primary;
	for (i = 0; i < ngreen; i++)
		if (c == (CUcontext)&greens[i].ctx_obj)
			return &primary;
	for (i = 1; i <= nctx; i++)
		if (c == (CUcontext)ctxs[i])
			return ctxs[i]->destroyed ? NULL : ctxs[i];
	return NULL;
}

static CUcontext cur_handle(void)
{
	return ctx_depth ? ctx_stack[ctx_depth - 1] : THE_CTX;
}

/* mu held: the calling thread's current context (NULL: destroyed). */
static struct fctx *cur_ctx(void)
{
	return ctx_of(cur_handle());
}

static struct fctx *sctx(const struct fstream *s)
{
	return s->ctx ? s->ctx : &primary;
}

API uint64_t fake_now(void)
{
	return fake_clock_ns();
}

/* mu held: which stream a handle names, through a variant. */
static struct fstream *stream_of(CUstream h, int ptsz)
{
	struct fctx *c = (!h || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) ?
			 cur_ctx() : NULL;

	if (c && c->id)
		return &c->dflt;	/* a created context's default stream */
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
	struct fake_rec *r = fake_log_add(s->id, s->capturing, &s->tl, kernel, variant, ns);

	r->ctx = sctx(s)->id;
	r->capture = s->capturing;
	return r;
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

API CUresult cuDeviceGetCount(int *n)
{
	*n = 1;
	return CUDA_SUCCESS;
}

API CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
	if (ordinal != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*d = 0;
	return CUDA_SUCCESS;
}

API CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
	if (d != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*c = THE_CTX;
	return CUDA_SUCCESS;
}

API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
	return d == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

/* The calling thread's: the top of its stack, the primary under it. */
API CUresult cuCtxGetCurrent(CUcontext *c)
{
	*c = cur_handle();
	return CUDA_SUCCESS;
}

/* The primary, a created one not destroyed, or one converted from a green
 * context. */
static int ctx_known(CUcontext c)
{
	int ok;

	pthread_mutex_lock(&mu);
	ok = ctx_of(c) != NULL;
	pthread_mutex_unlock(&mu);
	return ok;
}

API CUresult cuCtxPushCurrent_v2(CUcontext c)
{
	if (!ctx_known(c) || ctx_depth == MAX_DEPTH)
		return CUDA_ERROR_INVALID_CONTEXT;
	ctx_stack[ctx_depth++] = c;
	return CUDA_SUCCESS;
}

/* The one popped; the previous one is current again. */
API CUresult cuCtxPopCurrent_v2(CUcontext *c)
{
	if (!ctx_depth)
		return CUDA_ERROR_INVALID_CONTEXT;
	ctx_depth--;
	if (c)
		*c = ctx_stack[ctx_depth];
	return CUDA_SUCCESS;
}

/* Replaces the top of the stack (pushes on an empty one); NULL pops. */
API CUresult cuCtxSetCurrent(CUcontext c)
{
	if (!c) {
		if (ctx_depth)
			ctx_depth--;
		return CUDA_SUCCESS;
	}
	if (!ctx_known(c))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (ctx_depth)
		ctx_stack[ctx_depth - 1] = c;
	else
		ctx_stack[ctx_depth++] = c;
	return CUDA_SUCCESS;
}

API CUresult cuCtxGetDevice(CUdevice *d)
{
	int ok;

	pthread_mutex_lock(&mu);
	ok = cur_ctx() != NULL;
	pthread_mutex_unlock(&mu);
	if (!ok)
		return CUDA_ERROR_INVALID_CONTEXT;
	*d = 0;
	return CUDA_SUCCESS;
}

API CUresult cuCtxGetFlags(unsigned int *flags)
{
	struct fctx *c;

	pthread_mutex_lock(&mu);
	c = cur_ctx();
	if (c)
		*flags = c->flags;
	pthread_mutex_unlock(&mu);
	return c ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

/* Unique: the primary 1, a created context 1 + its id, a green context
 * 1000 + its id. */
API CUresult cuCtxGetId(CUcontext c, unsigned long long *id)
{
	int i;

	if (!c)
		c = cur_handle();
	pthread_mutex_lock(&mu);
	if (!ctx_of(c)) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	*id = 1 + (unsigned long long)ctx_of(c)->id;
	for (i = 0; i < ngreen; i++)
		if (c == (CUcontext)&greens[i].ctx_obj)
			*id = 1000 + (unsigned long long)greens[i].id;
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

static CUresult ctx_create(CUcontext *pc, unsigned int flags, CUdevice dev)
{
	struct fctx *c;

	if (!pc)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	if (ctx_depth == MAX_DEPTH)
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&mu);
	if (nctx == MAX_CTX) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	c->id = ++nctx;
	c->flags = flags;
	c->dflt.id = FAKE_CTX_DEFAULT_STREAM(c->id);
	c->dflt.ctx = c;
	ctxs[c->id] = c;
	pthread_mutex_unlock(&mu);
	ctx_stack[ctx_depth++] = (CUcontext)c;
	*pc = (CUcontext)c;
	return CUDA_SUCCESS;
}

/* cuda.h 13's cuCtxCreate */
API CUresult cuCtxCreate_v4(CUcontext *pc, CUctxCreateParams *params, unsigned int flags,
			    CUdevice dev)
{
	(void)params;
	return ctx_create(pc, flags, dev);
}

API CUresult cuCtxCreate_v2(CUcontext *pc, unsigned int flags, CUdevice dev)
{
	return ctx_create(pc, flags, dev);
}

/* Sleep until every command of context @id logged so far has ended. */
static void ctx_wait(int id)
{
	for (;;) {
		uint64_t t = 0;
		int i, p = 0;

		pthread_mutex_lock(&mu);
		fake_settle();
		for (i = 0; i < nlog; i++) {
			if (logv[i].ctx != id || logv[i].captured)
				continue;
			p |= logv[i].pending;
			if (logv[i].end > t)
				t = logv[i].end;
		}
		pthread_mutex_unlock(&mu);
		if (!p) {
			sleep_until(t);
			return;
		}
		usleep(100);
	}
}

/* Test API: the modelled GPU goes on while the host polls memory without
 * calling the driver (it otherwise moves on at the next call). */
API void fake_progress(void)
{
	pthread_mutex_lock(&mu);
	fake_settle();
	pthread_mutex_unlock(&mu);
}

/* Test API: sleep until every command logged so far (any context) ended. */
API void fake_wait_all(void)
{
	fake_log_wait();
}

/* Waits for its work, destroys its streams, pops it off this thread. */
API CUresult cuCtxDestroy_v2(CUcontext h)
{
	struct fctx *c;
	struct fstream *s;
	int i, j;

	pthread_mutex_lock(&mu);
	c = ctx_of(h);
	if (!c || c == &primary || h != (CUcontext)c) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	pthread_mutex_unlock(&mu);
	ctx_wait(c->id);
	pthread_mutex_lock(&mu);
	c->destroyed = 1;
	for (s = all_streams; s; s = s->next_all) {
		if (s->ctx != c || s->destroyed)
			continue;
		s->destroyed = 1;
		s->next_free = free_streams;
		free_streams = s;
	}
	pthread_mutex_unlock(&mu);
	for (i = j = 0; i < ctx_depth; i++)
		if (ctx_stack[i] != h)
			ctx_stack[j++] = ctx_stack[i];
	ctx_depth = j;
	return CUDA_SUCCESS;
}

API int fake_ctx_count(void)
{
	int i, n = 0;

	pthread_mutex_lock(&mu);
	for (i = 1; i <= nctx; i++)
		n += !ctxs[i]->destroyed;
	pthread_mutex_unlock(&mu);
	return n;
}

API int fake_ctx_current(void)
{
	struct fctx *c;

	pthread_mutex_lock(&mu);
	c = cur_ctx();
	pthread_mutex_unlock(&mu);
	return c ? c->id : -1;
}

API int fake_stream_ctx(CUstream h)
{
	int id;

	pthread_mutex_lock(&mu);
	id = sctx(stream_of(h, 0))->id;
	pthread_mutex_unlock(&mu);
	return id;
}

/* ---- streams ---- */

/* Internal: a call to an exported name would reach the interposer's hook. */
static CUresult stream_make(CUstream *ph, unsigned int flags, int prio)
{
	struct fstream *s, *next;
	struct fctx *c;

	pthread_mutex_lock(&mu);
	c = cur_ctx();
	if (!c) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_CONTEXT;
	}
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
	s->flags = flags;
	s->ctx = c->id ? c : NULL;
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
	if (s->destroyed || s->id < 0) {
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
static CUresult stream_get_ctx(CUstream h, CUcontext *c, int ptsz)
{
	struct fstream *s;

	pthread_mutex_lock(&mu);
	s = stream_of(h, ptsz);
	*c = s->green ? (CUcontext)&s->green->ctx_obj : (CUcontext)sctx(s);
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API CUresult cuStreamGetCtx(CUstream h, CUcontext *c)
{
	return stream_get_ctx(h, c, 0);
}

API CUresult cuStreamGetCtx_ptsz(CUstream h, CUcontext *c)
{
	return stream_get_ctx(h, c, 1);
}

/* A green context's stream: NULL and the green context. */
static CUresult stream_get_ctx2(CUstream h, CUcontext *c, CUgreenCtx *g, int ptsz)
{
	struct fstream *s;

	pthread_mutex_lock(&mu);
	s = stream_of(h, ptsz);
	*c = s->green ? NULL : (CUcontext)sctx(s);
	*g = s->green ? (CUgreenCtx)s->green : NULL;
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API CUresult cuStreamGetCtx_v2(CUstream h, CUcontext *c, CUgreenCtx *g)
{
	return stream_get_ctx2(h, c, g, 0);
}

API CUresult cuStreamGetCtx_v2_ptsz(CUstream h, CUcontext *c, CUgreenCtx *g)
{
	return stream_get_ctx2(h, c, g, 1);
}

static CUresult stream_get_flags(CUstream h, unsigned int *f, int ptsz)
{
	pthread_mutex_lock(&mu);
	*f = stream_of(h, ptsz)->flags;
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API CUresult cuStreamGetFlags(CUstream h, unsigned int *f)
{
	return stream_get_flags(h, f, 0);
}

API CUresult cuStreamGetFlags_ptsz(CUstream h, unsigned int *f)
{
	return stream_get_flags(h, f, 1);
}

API int fake_live_streams(void)
{
	struct fstream *s;
	int n = 0;

	pthread_mutex_lock(&mu);
	for (s = all_streams; s; s = s->next_all)
		n += !s->destroyed;
	pthread_mutex_unlock(&mu);
	return n;
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
		((struct fstream *)*ph)->ctx = NULL;
		pthread_mutex_unlock(&mu);
	}
	return r;
}
#endif /* FAKE_CUDA_NO_GREEN */

static CUresult get_priority(CUstream h, int *p, int ptsz)
{
	pthread_mutex_lock(&mu);
	*p = stream_of(h, ptsz)->prio;
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API CUresult cuStreamGetPriority(CUstream h, int *p)
{
	return get_priority(h, p, 0);
}

API CUresult cuStreamGetPriority_ptsz(CUstream h, int *p)
{
	return get_priority(h, p, 1);
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

static int capture_seq;	/* capture ids: 1, 2, ... */

/* ---- host functions: called on one driver thread, in submission order,
 * once their command ended ---- */

#define MAX_HOSTFN 4096
static struct {
	int rec;
	CUhostFn fn;			/* or */
	CUstreamCallback cb;
	CUstream h;
	void *data;
} hostq[MAX_HOSTFN];
static unsigned int hostq_head, hostq_tail;
static pthread_cond_t hostq_cv = PTHREAD_COND_INITIALIZER;
static int host_thread_up, host_called;

#define MAX_HOST_NODES 8

/* A host function captured (cuLaunchHostFunc): a node of its graph. */
struct fhost_node {
	CUhostFn fn;
	void *data;
};

struct fgraph {
	int capture;		/* its capture's id */
	int nodes;
	uint64_t ns;		/* its commands' run times, summed */
	struct fhost_node host[MAX_HOST_NODES];	/* run after the rest */
	int nhost;
	int destroyed;
	struct fgraph *next;	/* every graph: never leaked */
};

struct fgexec {
	struct fgraph *g;
	int ctx;		/* where it was instantiated: where it runs */
	int destroyed;
	struct fgexec *next;
};

/* Host functions captured and not yet in a graph (a capture holding
 * MAX_HOST_NODES, or this full, refuses another: nothing is dropped). */
static struct {
	int capture;
	struct fhost_node n;
} captured_host[MAX_HOST_NODES * 4];
static int ncaptured_host;

/* mu held: may capture @id take another host function? */
static int host_node_room(int id)
{
	int i, k = 0;

	for (i = 0; i < ncaptured_host; i++)
		k += captured_host[i].capture == id;
	return k < MAX_HOST_NODES &&
	       ncaptured_host < (int)(sizeof(captured_host) / sizeof(captured_host[0]));
}

static void hostq_push(int rec, CUhostFn fn, CUstreamCallback cb, CUstream h, void *data);

static struct fgraph *all_graphs;
static struct fgexec *all_execs;

static CUresult begin_capture(CUstream h, int ptsz)
{
	struct fstream *s;

	pthread_mutex_lock(&mu);
	s = stream_of(h, ptsz);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	s->capturing = ++capture_seq;
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

/* The capture ends on every stream that joined it; its graph holds what
 * it recorded. */
static CUresult end_capture(CUstream h, CUgraph *g, int ptsz)
{
	struct fstream *s, *o;
	struct fgraph *gr = calloc(1, sizeof(*gr));
	int id, i;

	if (!gr)
		return CUDA_ERROR_OUT_OF_MEMORY;

	pthread_mutex_lock(&mu);
	s = stream_of(h, ptsz);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		free(gr);
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
	for (i = 1; i <= nctx && id; i++)
		if (ctxs[i]->dflt.capturing == id)
			ctxs[i]->dflt.capturing = 0;
	gr->capture = id;
	for (i = 0; i < nlog && id; i++) {
		if (logv[i].captured && logv[i].capture == id) {
			gr->nodes++;
			gr->ns += logv[i].ns;
		}
	}
	for (i = 0; i < ncaptured_host; i++) {
		if (captured_host[i].capture != id)
			continue;
		gr->host[gr->nhost++] = captured_host[i].n;	/* room: host_fn() */
		captured_host[i--] = captured_host[--ncaptured_host];
	}
	gr->next = all_graphs;
	all_graphs = gr;
	pthread_mutex_unlock(&mu);
	*g = (CUgraph)gr;
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

/* The current context's work only. */
API CUresult cuCtxSynchronize(void)
{
	struct fctx *c;

	pthread_mutex_lock(&mu);
	c = cur_ctx();
	pthread_mutex_unlock(&mu);
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	ctx_wait(c->id);
	return CUDA_SUCCESS;
}

/* CUDA 12.9: a context's work (NULL: the current one's). */
API CUresult cuCtxSynchronize_v2(CUcontext h)
{
	struct fctx *c;

	pthread_mutex_lock(&mu);
	c = h ? ctx_of(h) : cur_ctx();
	pthread_mutex_unlock(&mu);
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	ctx_wait(c->id);
	return CUDA_SUCCESS;
}

/* ---- graphs: what a capture recorded, launched as one command ---- */

API CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
	struct fgraph *gr = (struct fgraph *)g;
	struct fgexec *x;

	(void)flags;
	if (!gr || gr->destroyed)
		return CUDA_ERROR_INVALID_VALUE;
	x = calloc(1, sizeof(*x));
	if (!x)
		return CUDA_ERROR_OUT_OF_MEMORY;
	x->g = gr;
	pthread_mutex_lock(&mu);
	x->ctx = cur_ctx() ? cur_ctx()->id : 0;
	x->next = all_execs;
	all_execs = x;
	pthread_mutex_unlock(&mu);
	*e = (CUgraphExec)x;
	return CUDA_SUCCESS;
}

/* The graph's nodes keep what they were; the exec stays valid. */
API CUresult cuGraphDestroy(CUgraph g)
{
	struct fgraph *gr = (struct fgraph *)g;

	if (!gr || gr->destroyed)
		return CUDA_ERROR_INVALID_VALUE;
	gr->destroyed = 1;
	return CUDA_SUCCESS;
}

API CUresult cuGraphExecDestroy(CUgraphExec e)
{
	struct fgexec *x = (struct fgexec *)e;

	if (!x || x->destroyed)
		return CUDA_ERROR_INVALID_VALUE;
	x->destroyed = 1;
	return CUDA_SUCCESS;
}

/* On any context's stream, in stream order, but run by the context it was
 * instantiated in (as the real driver does: a graph launched on another
 * context's stream gains nothing from that context); its host nodes are
 * called once the rest ended. */
static CUresult graph_launch(CUgraphExec e, CUstream h, int ptsz)
{
	struct fgexec *x = (struct fgexec *)e;
	struct fstream *s;
	struct fake_rec *r;
	int i;

	if (!x || x->destroyed)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mu);
	s = stream_of(h, ptsz);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	if (hostq_tail - hostq_head + (unsigned int)x->g->nhost > MAX_HOSTFN) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	r = log_add(s, FAKE_GRAPH, ptsz, x->g->ns);
	r->nodes = x->g->nodes;
	if (!r->captured) {
		r->capture = x->g->capture;
		r->ctx = x->ctx;
		for (i = 0; i < x->g->nhost; i++)
			hostq_push((int)(r - logv), x->g->host[i].fn, NULL, h, x->g->host[i].data);
	}
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API CUresult cuGraphLaunch(CUgraphExec e, CUstream h)
{
	return graph_launch(e, h, 0);
}

API CUresult cuGraphLaunch_ptsz(CUgraphExec e, CUstream h)
{
	return graph_launch(e, h, 1);
}

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

/* ---- modules, libraries, functions and kernels ---- */

#define MAX_FN 16
#define NATTR CU_FUNC_ATTRIBUTE_MAX

struct fkern;
struct fmodule;

/* A CUfunction of a module (or of cuKernelGetFunction: kern set). */
struct ffunc {
	struct fmodule *mod;
	struct fkern *kern;
	char name[32];
	uint64_t ns;
	int attr[NATTR];
	int loaded;		/* lazy loading: by cuModuleGetFunction or a launch */
};

struct fmodule {
	int id;			/* 1, 2, ... in load order */
	struct fctx *ctx;
	struct flib *lib;	/* a library's module in a context, or NULL */
	int unloaded;
	int n;
	struct ffunc fn[MAX_FN];
	struct fmodule *next;	/* every module: never leaked */
	struct fmodule *next_free;	/* unloaded: handed out again first */
};

/* A CUkernel: context-free. */
struct fkern {
	struct flib *lib;
	char name[32];
	uint64_t ns;
	int attr[NATTR];
	unsigned long long loaded;	/* contexts it was loaded in (lazily) */
};

struct flib {
	int id;
	int unloaded;
	int n;
	struct fkern k[MAX_FN];
	struct fmodule *mod[MAX_CTX + 1];	/* its module in each context */
	struct flib *next;
	struct flib *next_free;	/* unloaded: handed out again first */
};

/* What cuFuncGetModule answers for a K() kernel: the module the runtime
 * loaded it from, which the program never saw. */
static struct fmodule rt_module;
static struct fmodule *all_modules;
static struct fmodule *free_modules;	/* unloaded program modules, last first */
static struct flib *all_libs;
static struct flib *free_libs;		/* unloaded libraries, last first */
static int nmodules, nlibs;

/* A K() kernel's attributes and name (by its address). */
#define MAX_TESTFN 512
static struct {
	const void *f;
	int attr[NATTR];
	char name[32];
} testfn[MAX_TESTFN];

static void attr_init(int *a)
{
	memset(a, 0, sizeof(int) * NATTR);
	a[CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK] = 1024;
	a[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES] = FAKE_SMEM_DEFAULT;
}

/* mu held: a K() kernel's entry (made on first use; NULL: table full). */
static int *testfn_attr(const void *f, const char **name)
{
	int i;

	for (i = 0; i < MAX_TESTFN && testfn[i].f && testfn[i].f != f; i++)
		;
	if (i == MAX_TESTFN)
		return NULL;
	if (!testfn[i].f) {
		testfn[i].f = f;
		attr_init(testfn[i].attr);
		snprintf(testfn[i].name, sizeof(testfn[i].name), "fake_kernel_%d",
			 ((const struct fake_kernel *)f)->id);
	}
	if (name)
		*name = testfn[i].name;
	return testfn[i].attr;
}

/* mu held: what a CUfunction (or CUkernel cast) handle is. */
static struct ffunc *as_func(const void *p)
{
	struct fmodule *m;

	for (m = all_modules; m && p; m = m->next)
		if ((const char *)p >= (const char *)m->fn &&
		    (const char *)p < (const char *)(m->fn + m->n))
			return (struct ffunc *)p;
	return NULL;
}

static struct fkern *as_kern(const void *p)
{
	struct flib *l;

	for (l = all_libs; l && p; l = l->next)
		if ((const char *)p >= (const char *)l->k &&
		    (const char *)p < (const char *)(l->k + l->n))
			return (struct fkern *)p;
	return NULL;
}

/* "fakecubin <name>=<ns> ...": the names and run times; -1: not an image. */
static int parse_image(const void *image, char (*names)[32], uint64_t *ns)
{
	const char *p = image;
	int n = 0;

	if (!p || strncmp(p, "fakecubin", 9) || (p[9] && p[9] != ' '))
		return -1;
	p += 9;
	for (;;) {
		const char *eq;
		size_t len;
		char *end;

		while (*p == ' ')
			p++;
		if (!*p)
			return n;
		eq = strchr(p, '=');
		if (!eq || eq == p || n == MAX_FN)
			return -1;
		len = (size_t)(eq - p);
		if (len >= 32 || memchr(p, ' ', len))
			return -1;
		memcpy(names[n], p, len);
		names[n][len] = 0;
		ns[n] = strtoull(eq + 1, &end, 10);
		if (end == eq + 1 || (*end && *end != ' '))
			return -1;
		n++;
		p = end;
	}
}

/* mu held: a module of @n functions in context @c. */
static struct fmodule *module_add(struct fctx *c, char (*names)[32], const uint64_t *ns, int n,
				  int reuse)
{
	struct fmodule *m = reuse ? free_modules : NULL, *next = NULL;
	int i;

	if (m) {		/* the handle and its functions' addresses come back */
		free_modules = m->next_free;
		next = m->next;
		memset(m, 0, sizeof(*m));
	} else {
		m = calloc(1, sizeof(*m));
		if (!m)
			return NULL;
		next = all_modules;
		all_modules = m;
	}
	m->next = next;
	m->id = ++nmodules;
	m->ctx = c;
	m->n = n;
	for (i = 0; i < n; i++) {
		m->fn[i].mod = m;
		memcpy(m->fn[i].name, names[i], sizeof(m->fn[i].name));
		m->fn[i].ns = ns[i];
		attr_init(m->fn[i].attr);
	}
	return m;
}

/* Into the current context. */
static CUresult module_load(CUmodule *pm, const void *image)
{
	char names[MAX_FN][32];
	uint64_t ns[MAX_FN];
	struct fmodule *m;
	struct fctx *c;
	int n;

	if (!pm || !image)
		return CUDA_ERROR_INVALID_VALUE;
	n = parse_image(image, names, ns);
	if (n < 0)
		return CUDA_ERROR_INVALID_IMAGE;
	pthread_mutex_lock(&mu);
	c = cur_ctx();
	pthread_mutex_unlock(&mu);
	if (c)
		ctx_wait(c->id);	/* a load waits for the context's work */
	pthread_mutex_lock(&mu);
	m = c ? module_add(c, names, ns, n, 1) : NULL;
	pthread_mutex_unlock(&mu);
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*pm = (CUmodule)m;
	return CUDA_SUCCESS;
}

API CUresult cuModuleLoadData(CUmodule *pm, const void *image)
{
	return module_load(pm, image);
}

API CUresult cuModuleLoadDataEx(CUmodule *pm, const void *image, unsigned int n,
				CUjit_option *opts, void **vals)
{
	(void)n;
	(void)opts;
	(void)vals;
	return module_load(pm, image);
}

API CUresult cuModuleLoadFatBinary(CUmodule *pm, const void *image)
{
	return module_load(pm, image);
}

/* A file that holds an image (its text). */
API CUresult cuModuleLoad(CUmodule *pm, const char *fname)
{
	char buf[4096];
	size_t n;
	FILE *f;

	if (!pm || !fname)
		return CUDA_ERROR_INVALID_VALUE;
	f = fopen(fname, "r");
	if (!f)
		return CUDA_ERROR_FILE_NOT_FOUND;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return module_load(pm, buf);
}

/* mu held: a live module of ours (the runtime's one included). */
static struct fmodule *as_module(CUmodule h)
{
	struct fmodule *m;

	if ((struct fmodule *)h == &rt_module)
		return &rt_module;
	for (m = all_modules; m; m = m->next)
		if ((CUmodule)m == h)
			return m->unloaded || (m->ctx && m->ctx->destroyed) ? NULL : m;
	return NULL;
}

/* mu held: function @f loaded in its module's context now (lazy loading);
 * the context whose work the load must wait for, or -1: loaded before. */
static int fn_load(struct ffunc *f)
{
	int c = f->mod->ctx ? f->mod->ctx->id : -1;

	if (f->loaded || c < 0)
		return -1;
	f->loaded = 1;
	if (f->kern) {		/* a library's kernel, in this context */
		if (c < 64 && (f->kern->loaded & (1ULL << c)))
			return -1;
		if (c < 64)
			f->kern->loaded |= 1ULL << c;
	}
	return c;
}

/* Lazy loading: the function is loaded here (not at cuModuleLoadData), which
 * waits for its context's work, once. */
API CUresult cuModuleGetFunction(CUfunction *pf, CUmodule h, const char *name)
{
	struct fmodule *m;
	int i, wait = -1;

	if (!pf || !name)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mu);
	m = as_module(h);
	if (!m) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	for (i = 0; i < m->n && strcmp(m->fn[i].name, name); i++)
		;
	if (i < m->n && m != &rt_module)
		wait = fn_load(&m->fn[i]);
	pthread_mutex_unlock(&mu);
	if (i == m->n)
		return CUDA_ERROR_NOT_FOUND;
	if (wait >= 0)
		ctx_wait(wait);
	*pf = (CUfunction)&m->fn[i];
	return CUDA_SUCCESS;
}

API CUresult cuModuleUnload(CUmodule h)
{
	struct fmodule *m;

	pthread_mutex_lock(&mu);
	m = as_module(h);
	if (m && m != &rt_module && !m->lib) {
		m->unloaded = 1;
		m->next_free = free_modules;
		free_modules = m;
	}
	pthread_mutex_unlock(&mu);
	return m && m != &rt_module && !m->lib ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

API CUresult cuLibraryLoadData(CUlibrary *pl, const void *code, CUjit_option *jo, void **jv,
			       unsigned int jn, CUlibraryOption *lo, void **lv, unsigned int ln)
{
	char names[MAX_FN][32];
	uint64_t ns[MAX_FN];
	struct flib *l;
	int n, i;

	(void)jo;
	(void)jv;
	(void)jn;
	(void)lo;
	(void)lv;
	(void)ln;
	if (!pl || !code)
		return CUDA_ERROR_INVALID_VALUE;
	n = parse_image(code, names, ns);
	if (n < 0)
		return CUDA_ERROR_INVALID_IMAGE;
	fake_log_wait();	/* measured: it waits for every context's work */
	pthread_mutex_lock(&mu);
	l = free_libs;
	if (l) {		/* the handle and its kernels' addresses come back */
		struct flib *next = l->next;

		free_libs = l->next_free;
		memset(l, 0, sizeof(*l));
		l->next = next;
	}
	pthread_mutex_unlock(&mu);
	if (!l) {
		l = calloc(1, sizeof(*l));
		if (!l)
			return CUDA_ERROR_OUT_OF_MEMORY;
		pthread_mutex_lock(&mu);
		l->next = all_libs;
		all_libs = l;
		pthread_mutex_unlock(&mu);
	}
	l->n = n;
	for (i = 0; i < n; i++) {
		l->k[i].lib = l;
		memcpy(l->k[i].name, names[i], sizeof(l->k[i].name));
		l->k[i].ns = ns[i];
		attr_init(l->k[i].attr);
	}
	pthread_mutex_lock(&mu);
	l->id = ++nlibs;
	pthread_mutex_unlock(&mu);
	*pl = (CUlibrary)l;
	return CUDA_SUCCESS;
}

/* mu held */
static struct flib *as_lib(CUlibrary h)
{
	struct flib *l;

	for (l = all_libs; l; l = l->next)
		if ((CUlibrary)l == h)
			return l->unloaded ? NULL : l;
	return NULL;
}

API CUresult cuLibraryUnload(CUlibrary h)
{
	struct flib *l;
	int i;

	pthread_mutex_lock(&mu);
	l = as_lib(h);
	if (l) {
		l->unloaded = 1;
		l->next_free = free_libs;
		free_libs = l;
		/* (the primary's last: it is handed out again first) */
		for (i = MAX_CTX; i >= 0; i--) {
			if (l->mod[i]) {
				l->mod[i]->unloaded = 1;
				l->mod[i]->next_free = free_modules;
				free_modules = l->mod[i];
			}
		}
	}
	pthread_mutex_unlock(&mu);
	return l ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

API CUresult cuLibraryGetKernel(CUkernel *pk, CUlibrary h, const char *name)
{
	struct flib *l;
	int i;

	if (!pk || !name)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mu);
	l = as_lib(h);
	for (i = 0; l && i < l->n && strcmp(l->k[i].name, name); i++)
		;
	pthread_mutex_unlock(&mu);
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	if (i == l->n)
		return CUDA_ERROR_NOT_FOUND;
	*pk = (CUkernel)&l->k[i];
	return CUDA_SUCCESS;
}

/* mu held: library @l's module in the current context (made on first use). */
static struct fmodule *lib_module(struct flib *l, CUresult *err)
{
	char names[MAX_FN][32];
	uint64_t ns[MAX_FN];
	struct fctx *c = cur_ctx();
	struct fmodule *m;
	int i;

	if (!c) {
		*err = CUDA_ERROR_INVALID_CONTEXT;
		return NULL;
	}
	if (l->mod[c->id])
		return l->mod[c->id];
	for (i = 0; i < l->n; i++) {
		memcpy(names[i], l->k[i].name, sizeof(names[i]));
		ns[i] = l->k[i].ns;
	}
	m = module_add(c, names, ns, l->n, 0);
	if (!m) {
		*err = CUDA_ERROR_OUT_OF_MEMORY;
		return NULL;
	}
	m->lib = l;
	for (i = 0; i < l->n; i++)
		m->fn[i].kern = &l->k[i];
	l->mod[c->id] = m;
	return m;
}

API CUresult cuLibraryGetModule(CUmodule *pm, CUlibrary h)
{
	CUresult err = CUDA_ERROR_INVALID_HANDLE;
	struct fmodule *m = NULL;
	struct flib *l;

	pthread_mutex_lock(&mu);
	l = as_lib(h);
	if (l)
		m = lib_module(l, &err);
	pthread_mutex_unlock(&mu);
	if (!m)
		return err;
	*pm = (CUmodule)m;
	return CUDA_SUCCESS;
}

/* A CUfunction of the current context: the kernel is loaded there (once,
 * waiting for the context's work). */
API CUresult cuKernelGetFunction(CUfunction *pf, CUkernel h)
{
	CUresult err = CUDA_ERROR_INVALID_HANDLE;
	struct fmodule *m = NULL;
	struct fkern *k;
	int wait = -1;

	pthread_mutex_lock(&mu);
	k = as_kern(h);
	if (k && !k->lib->unloaded)
		m = lib_module(k->lib, &err);
	if (m)
		wait = fn_load(&m->fn[k - k->lib->k]);
	pthread_mutex_unlock(&mu);
	if (!m)
		return err;
	if (wait >= 0)
		ctx_wait(wait);
	*pf = (CUfunction)&m->fn[k - k->lib->k];
	return CUDA_SUCCESS;
}

API CUresult cuKernelGetName(const char **name, CUkernel h)
{
	struct fkern *k;

	pthread_mutex_lock(&mu);
	k = as_kern(h);
	pthread_mutex_unlock(&mu);
	if (!k || !name)
		return CUDA_ERROR_INVALID_HANDLE;
	*name = k->name;
	return CUDA_SUCCESS;
}

API CUresult cuKernelGetLibrary(CUlibrary *pl, CUkernel h)
{
	struct fkern *k;

	pthread_mutex_lock(&mu);
	k = as_kern(h);
	pthread_mutex_unlock(&mu);
	if (!k || !pl)
		return CUDA_ERROR_INVALID_HANDLE;
	*pl = (CUlibrary)k->lib;
	return CUDA_SUCCESS;
}

API CUresult cuFuncGetName(const char **name, CUfunction h)
{
	struct ffunc *f;
	const char *n = NULL;

	if (!h || !name)
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&mu);
	f = as_func(h);
	if (f)
		n = f->name;
	else if (!as_kern(h))
		(void)testfn_attr(h, &n);
	pthread_mutex_unlock(&mu);
	if (!n)
		return CUDA_ERROR_INVALID_HANDLE;
	*name = n;
	return CUDA_SUCCESS;
}

API CUresult cuFuncGetModule(CUmodule *pm, CUfunction h)
{
	struct ffunc *f;
	int kern;

	if (!h || !pm)
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&mu);
	f = as_func(h);
	kern = as_kern(h) != NULL;
	pthread_mutex_unlock(&mu);
	if (kern)
		return CUDA_ERROR_INVALID_HANDLE;
	*pm = f ? (CUmodule)f->mod : (CUmodule)&rt_module;
	return CUDA_SUCCESS;
}

/* mu held: the attribute array of a function or kernel handle. */
static int *attrs_of(const void *h)
{
	struct ffunc *f = as_func(h);
	struct fkern *k = f ? NULL : as_kern(h);

	return f ? f->attr : k ? k->attr : testfn_attr(h, NULL);
}

static CUresult set_attr(int *a, CUfunction_attribute attr, int v)
{
	if (!a || (int)attr < 0 || attr >= NATTR)
		return CUDA_ERROR_INVALID_VALUE;
	if (attr == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES && (v < 0 || v > FAKE_SMEM_MAX))
		return CUDA_ERROR_INVALID_VALUE;
	a[attr] = v;
	return CUDA_SUCCESS;
}

/* On a CUkernel cast: the kernel's (as cuKernelSetAttribute). */
API CUresult cuFuncSetAttribute(CUfunction h, CUfunction_attribute attr, int v)
{
	CUresult r;

	if (!h)
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&mu);
	r = set_attr(attrs_of(h), attr, v);
	pthread_mutex_unlock(&mu);
	return r;
}

API CUresult cuFuncGetAttribute(int *v, CUfunction_attribute attr, CUfunction h)
{
	int *a;

	if (!h)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!v || (int)attr < 0 || attr >= NATTR)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mu);
	a = attrs_of(h);
	if (a)
		*v = a[attr];
	pthread_mutex_unlock(&mu);
	return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Kept per function (CU_FUNC_CACHE_PREFER_*); what it changes is not modelled. */
API CUresult cuFuncSetCacheConfig(CUfunction h, CUfunc_cache c)
{
	int *a;

	if (!h)
		return CUDA_ERROR_INVALID_HANDLE;
	if ((int)c < 0 || c > CU_FUNC_CACHE_PREFER_EQUAL)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mu);
	a = attrs_of(h);
	pthread_mutex_unlock(&mu);
	return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

API CUresult cuKernelSetAttribute(CUfunction_attribute attr, int v, CUkernel h, CUdevice dev)
{
	struct fkern *k;
	CUresult r;

	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&mu);
	k = as_kern(h);
	r = k ? set_attr(k->attr, attr, v) : CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_unlock(&mu);
	return r;
}

API CUresult cuKernelGetAttribute(int *v, CUfunction_attribute attr, CUkernel h, CUdevice dev)
{
	struct fkern *k;

	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	if (!v || (int)attr < 0 || attr >= NATTR)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mu);
	k = as_kern(h);
	if (k)
		*v = k->attr[attr];
	pthread_mutex_unlock(&mu);
	return k ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

API int fake_module_count(int ctx)
{
	struct fmodule *m;
	int n = 0;

	pthread_mutex_lock(&mu);
	for (m = all_modules; m; m = m->next)
		n += m->ctx && m->ctx->id == ctx && !m->unloaded;
	pthread_mutex_unlock(&mu);
	return n;
}

/* fake_rec.kernel of a named function: k<digits> its number. */
static int named_id(const char *name)
{
	const char *p = name + 1;

	if (name[0] != 'k' || !*p)
		return FAKE_NAMED;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return FAKE_NAMED;
	return atoi(name + 1);
}

/* ---- work ---- */

/*
 * A K() kernel runs on the primary's streams only, a module's function on
 * its module's context's, a CUkernel on any; a launch asking for more than
 * 48 KiB of dynamic shared memory needs the attribute.
 */
/* Lazy loading: a CUkernel's first launch in a context loads it there,
 * which waits for that context's work (measured: cuLaunchKernel returned
 * only when the context's earlier work could run). */
static void lazy_load(CUfunction f, CUstream h, int variant)
{
	struct fkern *kn;
	int id = -1;

	pthread_mutex_lock(&mu);
	kn = as_func(f) ? NULL : as_kern(f);
	if (kn) {
		struct fstream *s = stream_of(h, variant == FAKE_PTSZ);
		int c = sctx(s)->id;

		if (c >= 0 && c < 64 && !(kn->loaded & (1ULL << c))) {
			kn->loaded |= 1ULL << c;
			id = c;
		}
	}
	pthread_mutex_unlock(&mu);
	if (id >= 0)
		ctx_wait(id);
}

static CUresult launch(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
		       unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem,
		       CUstream h, void **params, void **extra, int variant,
		       const void *config)
{
	const struct fake_kernel *k = (const struct fake_kernel *)f;
	struct fstream *s;
	struct fake_rec *r;
	struct ffunc *fn;
	struct fkern *kn;
	struct fctx *owner;
	const char *name = "";
	int id, kind, module = 0, lib = 0, limit, *a;
	uint64_t ns;

	if (!k)
		return CUDA_ERROR_INVALID_HANDLE;
	lazy_load(f, h, variant);
	pthread_mutex_lock(&mu);
	s = stream_of(h, variant == FAKE_PTSZ);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	fn = as_func(f);
	kn = fn ? NULL : as_kern(f);
	if (fn) {
		if (fn->mod->unloaded || fn->mod->ctx->destroyed) {
			pthread_mutex_unlock(&mu);
			return CUDA_ERROR_INVALID_HANDLE;
		}
		owner = fn->mod->ctx;
		kind = fn->kern ? FAKE_FN_OF_KERNEL : FAKE_FN_MODULE;
		name = fn->name;
		ns = fn->ns;
		module = fn->mod->id;
		lib = fn->kern ? fn->kern->lib->id : 0;
		limit = fn->attr[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES];
		if (fn->kern &&
		    fn->kern->attr[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES] > limit)
			limit = fn->kern->attr[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES];
		id = named_id(name);
	} else if (kn) {
		if (kn->lib->unloaded) {
			pthread_mutex_unlock(&mu);
			return CUDA_ERROR_INVALID_HANDLE;
		}
		owner = sctx(s);
		kind = FAKE_FN_KERNEL;
		name = kn->name;
		ns = kn->ns;
		lib = kn->lib->id;
		limit = kn->attr[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES];
		id = named_id(name);
	} else {
		a = testfn_attr(f, NULL);
		owner = &primary;
		kind = FAKE_FN_TEST;
		ns = k->ns;
		limit = a ? a[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES] : FAKE_SMEM_DEFAULT;
		id = k->id;
	}
	if (owner != sctx(s)) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;	/* a function of another context */
	}
	if (smem > FAKE_SMEM_DEFAULT && (int)smem > limit) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_VALUE;
	}
	r = log_add(s, id, variant, ns);
	r->fn = kind;
	r->module = module;
	r->lib = lib;
	snprintf(r->name, sizeof(r->name), "%s", name);
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
	if (config) {
		const CUlaunchConfig *c = config;
		unsigned int i;

		r->nattrs = c->numAttrs;
		for (i = 0; i < c->numAttrs && i < FAKE_MAX_ATTRS && c->attrs; i++)
			r->attrs[i] = c->attrs[i];
	}
	if (kind == FAKE_FN_TEST && k->flag)
		fake_memop(r->tl, r, FAKE_MEM_WRITE, k->flag, k->flag_val, ~0ULL, 0, 0);
	else if (kind != FAKE_FN_TEST && !strncmp(name, "flag", 4) && params && params[0] &&
		 params[1])	/* flag*(CUdeviceptr p, uint32_t v): *p = v at its end */
		fake_memop(r->tl, r, FAKE_MEM_WRITE,
			   (void *)(uintptr_t)*(const CUdeviceptr *)params[0],
			   *(const uint32_t *)params[1], ~0ULL, 0, 0);
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

static atomic_int host_alloc_fails;

API void fake_fail_host_alloc(int n)
{
	atomic_store(&host_alloc_fails, n);
}

API CUresult cuMemHostAlloc(void **p, size_t n, unsigned int flags)
{
	(void)flags;
	if (atomic_load(&host_alloc_fails) > 0 && atomic_fetch_sub(&host_alloc_fails, 1) > 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	return mem_add(p, n, 1);
}

/* Unified addressing: a mapped pinned allocation's device address is its
 * host address. */
API CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned int flags)
{
	if (!d || !p || flags)
		return CUDA_ERROR_INVALID_VALUE;
	*d = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
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

API void *fake_next_definition(const char *name)
{
	return dlsym(RTLD_NEXT, name);
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
	r = log_add(stream_of(NULL, 0), FAKE_SYNC_COPY, 0, 1000);
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

API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream h)
{
	(void)n;
	return memcpy_async(dst, (CUdeviceptr)(uintptr_t)src, h, 0);
}

API CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src, size_t n, CUstream h)
{
	(void)n;
	return memcpy_async(dst, (CUdeviceptr)(uintptr_t)src, h, 1);
}

API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
{
	(void)n;
	return memcpy_async(dst, src, h, 0);
}

API CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
{
	(void)n;
	return memcpy_async(dst, src, h, 1);
}

/* ---- memsets: a command of 1 us on any context's stream (the memory is
 * not written) ---- */

static CUresult memset_async(CUdeviceptr d, CUstream h, int ptsz)
{
	struct fstream *s;

	if (!d)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mu);
	s = stream_of(h, ptsz);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	(void)log_add(s, FAKE_MEMSET, ptsz, 1000);
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

#undef cuMemsetD8Async
#undef cuMemsetD16Async
#undef cuMemsetD32Async
#undef cuMemsetD2D8Async
#undef cuMemsetD2D16Async
#undef cuMemsetD2D32Async
#define SET_DEF(n, T, pt)								\
	API CUresult n(CUdeviceptr d, T v, size_t count, CUstream h);			\
	API CUresult n(CUdeviceptr d, T v, size_t count, CUstream h)			\
	{										\
		(void)v;								\
		(void)count;								\
		return memset_async(d, h, pt);						\
	}
#define SET2D_DEF(n, T, pt)								\
	API CUresult n(CUdeviceptr d, size_t pitch, T v, size_t w, size_t ht, CUstream h); \
	API CUresult n(CUdeviceptr d, size_t pitch, T v, size_t w, size_t ht, CUstream h) \
	{										\
		(void)pitch;								\
		(void)v;								\
		(void)w;								\
		(void)ht;								\
		return memset_async(d, h, pt);						\
	}
SET_DEF(cuMemsetD8Async, unsigned char, 0)
SET_DEF(cuMemsetD8Async_ptsz, unsigned char, 1)
SET_DEF(cuMemsetD16Async, unsigned short, 0)
SET_DEF(cuMemsetD16Async_ptsz, unsigned short, 1)
SET_DEF(cuMemsetD32Async, unsigned int, 0)
SET_DEF(cuMemsetD32Async_ptsz, unsigned int, 1)
SET2D_DEF(cuMemsetD2D8Async, unsigned char, 0)
SET2D_DEF(cuMemsetD2D8Async_ptsz, unsigned char, 1)
SET2D_DEF(cuMemsetD2D16Async, unsigned short, 0)
SET2D_DEF(cuMemsetD2D16Async_ptsz, unsigned short, 1)
SET2D_DEF(cuMemsetD2D32Async, unsigned int, 0)
SET2D_DEF(cuMemsetD2D32Async_ptsz, unsigned int, 1)


API int fake_host_fns_called(void)
{
	return __atomic_load_n(&host_called, __ATOMIC_ACQUIRE);
}

static void *host_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	for (;;) {
		unsigned int i;

		while (hostq_head == hostq_tail)
			pthread_cond_wait(&hostq_cv, &mu);
		i = hostq_head % MAX_HOSTFN;
		pthread_mutex_unlock(&mu);
		fake_rec_wait(hostq[i].rec);
		if (hostq[i].fn)
			hostq[i].fn(hostq[i].data);
		else
			hostq[i].cb(hostq[i].h, CUDA_SUCCESS, hostq[i].data);
		__atomic_add_fetch(&host_called, 1, __ATOMIC_RELEASE);
		pthread_mutex_lock(&mu);
		hostq_head++;
	}
	return NULL;
}

static CUresult host_fn(CUstream h, CUhostFn fn, CUstreamCallback cb, void *data, int ptsz)
{
	struct fstream *s;
	struct fake_rec *r;

	if (!fn && !cb)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mu);
	s = stream_of(h, ptsz);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	if (hostq_tail - hostq_head == MAX_HOSTFN ||
	    (fn && s->capturing && !host_node_room(s->capturing))) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	r = log_add(s, FAKE_HOST_FN, ptsz, 0);
	if (!r->captured) {
		hostq_push((int)(r - logv), fn, cb, h, data);
	} else if (fn) {
		captured_host[ncaptured_host].capture = r->capture;
		captured_host[ncaptured_host].n.fn = fn;
		captured_host[ncaptured_host].n.data = data;
		ncaptured_host++;
	}
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

/* mu held: @fn (or @cb) is called once logv[@rec] ended (the queue has room:
 * the caller checked). */
static void hostq_push(int rec, CUhostFn fn, CUstreamCallback cb, CUstream h, void *data)
{
	pthread_t t;
	unsigned int i;

	if (!host_thread_up) {
		if (pthread_create(&t, NULL, host_thread, NULL) == 0) {
			pthread_detach(t);
			host_thread_up = 1;
		}
	}
	i = hostq_tail++ % MAX_HOSTFN;
	hostq[i].rec = rec;
	hostq[i].fn = fn;
	hostq[i].cb = cb;
	hostq[i].h = h;
	hostq[i].data = data;
	pthread_cond_signal(&hostq_cv);
}

API CUresult cuLaunchHostFunc(CUstream h, CUhostFn fn, void *data)
{
	return fn ? host_fn(h, fn, NULL, data, 0) : CUDA_ERROR_INVALID_VALUE;
}

API CUresult cuLaunchHostFunc_ptsz(CUstream h, CUhostFn fn, void *data)
{
	return fn ? host_fn(h, fn, NULL, data, 1) : CUDA_ERROR_INVALID_VALUE;
}

API CUresult cuStreamAddCallback(CUstream h, CUstreamCallback cb, void *data, unsigned int fl)
{
	(void)fl;
	return cb ? host_fn(h, NULL, cb, data, 0) : CUDA_ERROR_INVALID_VALUE;
}

API CUresult cuStreamAddCallback_ptsz(CUstream h, CUstreamCallback cb, void *data,
				      unsigned int fl)
{
	(void)fl;
	return cb ? host_fn(h, NULL, cb, data, 1) : CUDA_ERROR_INVALID_VALUE;
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
	F(cuMemAllocHost_v2), F(cuMemHostAlloc), F(cuMemHostGetDevicePointer_v2), F(cuMemFreeHost),
	F(cuStreamWaitValue32), F(cuStreamWaitValue32_ptsz), F(cuStreamWaitValue32_v2),
	F(cuStreamWaitValue32_v2_ptsz), F(cuStreamWaitValue64), F(cuStreamWaitValue64_ptsz),
	F(cuStreamWaitValue64_v2), F(cuStreamWaitValue64_v2_ptsz), F(cuStreamWriteValue32),
	F(cuStreamWriteValue32_ptsz), F(cuStreamWriteValue32_v2), F(cuStreamWriteValue32_v2_ptsz),
	F(cuStreamWriteValue64), F(cuStreamWriteValue64_ptsz), F(cuStreamWriteValue64_v2),
	F(cuStreamWriteValue64_v2_ptsz),
	/* contexts, modules, libraries, graphs, memsets, host functions */
	F(cuDeviceGet), F(cuDeviceGetCount), F(cuDevicePrimaryCtxRetain),
	F(cuDevicePrimaryCtxRelease_v2), F(cuCtxSetCurrent), F(cuCtxGetFlags), F(cuCtxGetId),
	F(cuCtxCreate_v2), F(cuCtxCreate_v4), F(cuCtxDestroy_v2), F(cuCtxSynchronize_v2),
	F(cuStreamGetCtx_ptsz), F(cuStreamGetCtx_v2), F(cuStreamGetCtx_v2_ptsz),
	F(cuStreamGetFlags), F(cuStreamGetFlags_ptsz), F(cuStreamGetPriority_ptsz),
	F(cuEventRecordWithFlags), F(cuEventRecordWithFlags_ptsz), F(cuEventElapsedTime),
	F(cuEventElapsedTime_v2), F(cuModuleLoadData), F(cuModuleLoadDataEx),
	F(cuModuleLoadFatBinary), F(cuModuleLoad), F(cuModuleGetFunction), F(cuModuleUnload),
	F(cuLibraryLoadData), F(cuLibraryUnload), F(cuLibraryGetKernel), F(cuLibraryGetModule),
	F(cuKernelGetFunction), F(cuKernelGetName), F(cuKernelGetLibrary), F(cuFuncGetName),
	F(cuFuncGetModule), F(cuFuncSetAttribute), F(cuFuncSetCacheConfig), F(cuFuncGetAttribute),
	F(cuKernelSetAttribute), F(cuKernelGetAttribute), F(cuGraphInstantiateWithFlags),
	F(cuGraphDestroy), F(cuGraphExecDestroy), F(cuGraphLaunch), F(cuGraphLaunch_ptsz),
	F(cuMemcpyHtoDAsync_v2), F(cuMemcpyHtoDAsync_v2_ptsz), F(cuMemcpyDtoDAsync_v2),
	F(cuMemcpyDtoDAsync_v2_ptsz), F(cuMemsetD8Async), F(cuMemsetD8Async_ptsz),
	F(cuMemsetD16Async), F(cuMemsetD16Async_ptsz), F(cuMemsetD32Async),
	F(cuMemsetD32Async_ptsz), F(cuMemsetD2D8Async), F(cuMemsetD2D8Async_ptsz),
	F(cuMemsetD2D16Async), F(cuMemsetD2D16Async_ptsz), F(cuMemsetD2D32Async),
	F(cuMemsetD2D32Async_ptsz), F(cuLaunchHostFunc), F(cuLaunchHostFunc_ptsz),
	F(cuStreamAddCallback), F(cuStreamAddCallback_ptsz),
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

static CUresult get_proc(const char *sym, void **pfn, int ver, cuuint64_t flags)
{
	static const char *const pt_suffix[] = { "_v2_ptsz", "_ptsz", "_v2", "", NULL };
	static const char *const suffix[] = { "_v2", "", NULL };
	const char *const *s = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) ?
			       pt_suffix : suffix;
	const char *env = getenv("FAKE_CUDA_PROC_INTERNAL");
	char buf[128];

	*pfn = NULL;
	/* Names whose ABI changed after _v2, by the version asked for. */
	if (!strcmp(sym, "cuCtxCreate")) {
		*pfn = ver >= 12050 ? (void *)cuCtxCreate_v4 : (void *)cuCtxCreate_v2;
		return CUDA_SUCCESS;
	}
	if (!strcmp(sym, "cuEventElapsedTime")) {
		*pfn = ver >= 12080 ? (void *)cuEventElapsedTime_v2 : (void *)cuEventElapsedTime;
		return CUDA_SUCCESS;
	}
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

	r = get_proc(sym, pfn, ver, flags);
	if (st)
		*st = r == CUDA_SUCCESS ? CU_GET_PROC_ADDRESS_SUCCESS :
		      CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return r;
}

API CUresult cuGetProcAddress(const char *sym, void **pfn, int ver, cuuint64_t flags)
{
	return get_proc(sym, pfn, ver, flags);
}
