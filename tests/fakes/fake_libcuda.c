// SPDX-License-Identifier: MIT
/* Description: a fake libcuda.so.1 (fake_libcuda.h): contexts, the device, green contexts, the proc table. */
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

/* Streams and contexts (what the other files use of them is declared in
 * fake_libcuda_internal.h). */
int next_id = 1;
struct fstream legacy;	/* id 0 */
struct fstream *free_streams;
struct fstream *all_streams;
__thread struct fstream pt_stream;	/* id -tid */
__thread int pt_ready;
struct fctx primary;	/* id 0 */
#define THE_CTX ((CUcontext)&primary)
struct fctx *ctxs[MAX_CTX + 1];	/* by id (1..): never freed, never reused */
int nctx;
#define MAX_DEPTH 32
static __thread CUcontext ctx_stack[MAX_DEPTH];	/* pushed on this thread; the primary under it */
static __thread int ctx_depth;
#define MAX_GREEN 16
static struct fgreen greens[MAX_GREEN];
int ngreen;

/* mu held: the context a handle names (a green context's: the primary's),
 * NULL: none, or destroyed. */
struct fctx *ctx_of(CUcontext c)
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
struct fctx *cur_ctx(void)
{
	return ctx_of(cur_handle());
}

struct fctx *sctx(const struct fstream *s)
{
	return s->ctx ? s->ctx : &primary;
}

API uint64_t fake_now(void)
{
	return fake_clock_ns();
}

/* mu held: which stream a handle names, through a variant. */
struct fstream *stream_of(CUstream h, int ptsz)
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
struct fake_rec *log_add(struct fstream *s, int kernel, int variant, uint64_t ns)
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
void ctx_wait(int id)
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
