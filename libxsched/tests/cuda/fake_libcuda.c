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
#include "../common/fake_timeline.h"

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

struct fgreen {
	int ctx_obj;		/* its CUcontext is &ctx_obj */
	int id;
	unsigned int sms;
};

struct fstream {
	int id;
	struct fgreen *green;	/* made by cuGreenCtxStreamCreate, or NULL */
	int prio;
	int capturing;
	uint64_t tail;		/* end of its last command */
	struct fstream *next_free;
	struct fstream *next_all;	/* every stream ever made: never leaked */
};

struct fevent {
	uint64_t time;		/* completes then; 0: never recorded */
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
	return fake_log_add(s->id, s->capturing, &s->tail, kernel, variant, ns);
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
	pthread_mutex_lock(&mu);
	stream_of(h, ptsz)->capturing = 1;
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

static CUresult end_capture(CUstream h, CUgraph *g, int ptsz)
{
	pthread_mutex_lock(&mu);
	stream_of(h, ptsz)->capturing = 0;
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
	uint64_t t;

	pthread_mutex_lock(&mu);
	t = stream_of(h, ptsz)->tail;
	pthread_mutex_unlock(&mu);
	sleep_until(t);
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
	uint64_t t;

	pthread_mutex_lock(&mu);
	t = stream_of(h, ptsz)->tail;
	pthread_mutex_unlock(&mu);
	return fake_now() >= t ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
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
	sleep_until(fake_log_end());
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
	(void)flags;
	*e = calloc(1, sizeof(struct fevent));
	if (*e)
		__atomic_add_fetch(&events_created, 1, __ATOMIC_RELAXED);
	return *e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

API CUresult cuEventDestroy_v2(CUevent e)
{
	free(e);
	return CUDA_SUCCESS;
}

static CUresult event_record(CUevent e, CUstream h, int ptsz)
{
	struct fstream *s;
	uint64_t now = fake_now();

	pthread_mutex_lock(&mu);
	s = stream_of(h, ptsz);
	log_add(s, -2, ptsz, 0);
	((struct fevent *)e)->time = s->tail > now ? s->tail : now;
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
	sleep_until(((struct fevent *)e)->time);
	return CUDA_SUCCESS;
}

API CUresult cuEventQuery(CUevent e)
{
	return fake_now() >= ((struct fevent *)e)->time ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

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

static CUresult memcpy_async(CUstream h, int ptsz)
{
	pthread_mutex_lock(&mu);
	log_add(stream_of(h, ptsz), -1, ptsz, 1000);
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h)
{
	(void)d;
	(void)s;
	(void)n;
	return memcpy_async(h, 0);
}

API CUresult cuMemcpyAsync_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h)
{
	(void)d;
	(void)s;
	(void)n;
	return memcpy_async(h, 1);
}

/* An ABI of cuMemcpyAsync that the interposer has no hook for (a later
 * driver's _v2): FAKE_CUDA_PROC_INTERNAL hands out an internal address for
 * "cuMemcpyAsync", which must then not be taken for the ABI we know. */
API CUresult cuMemcpyAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h);
API CUresult cuMemcpyAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h)
{
	(void)d;
	(void)s;
	(void)n;
	return memcpy_async(h, 0);
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
#ifndef FAKE_CUDA_NO_GREEN
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
