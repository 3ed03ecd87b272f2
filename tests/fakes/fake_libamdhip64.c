// SPDX-License-Identifier: MIT
/* A fake libamdhip64.so.5 for the interposer's host tests: see fake_libamdhip64.h. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fake_libamdhip64.h"

#include "fake_timeline.h"

#define MAX_REG 256

/* hipGetProcAddress's status: the headers of ROCm 6.2 on declare it with
 * their enum; older ones not at all. */
#if HIP_VERSION >= 60200000
typedef hipDriverProcAddressQueryResult gpa_status;
#else
typedef int gpa_status;
hipError_t hipGetProcAddress(const char *, void **, int, uint64_t, gpa_status *);
#endif

struct fstream {
	int id;
	int prio;
	int capturing;		/* the id of the capture it is in (the origin stream's), or 0 */
	struct fake_tl tl;
	int destroyed;		/* its handle is invalid */
	struct fstream *next_all;	/* every stream ever made: destroy frees none */
};

struct fevent {
	int rec;		/* the log record of its last record, -1: never recorded */
	int capture;		/* recorded in this capture (0: none) */
};

static int next_id = 1;
static struct fstream null_stream;
static struct fstream *all_streams;
static int events_created;
static __thread struct fstream pt_stream;
static __thread int pt_ready;
static const void *registered[MAX_REG];
static int nreg;
/* The <<<>>> configuration, per thread as in the runtime. */
static __thread struct { int set; dim3 g, b; size_t smem; hipStream_t s; } cfg;

/* mu held */
static struct fstream *stream_of(hipStream_t h, int spt)
{
	if (!h && !spt)
		return &null_stream;
	if (h == hipStreamPerThread || !h) {
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

	r->tid = (long)syscall(SYS_gettid);
	return r;
}

API int fake_stream_id(hipStream_t h)
{
	int id;

	pthread_mutex_lock(&mu);
	id = stream_of(h, 0)->id;
	pthread_mutex_unlock(&mu);
	return id;
}

API int fake_registered(const void *f)
{
	int i, hit = 0;

	pthread_mutex_lock(&mu);
	for (i = 0; i < nreg; i++)
		hit |= registered[i] == f;
	pthread_mutex_unlock(&mu);
	return hit;
}

/* ---- device ---- */

API hipError_t hipGetDevice(int *d)
{
	const char *nd = getenv("FAKE_HIP_NODEV");

	if (nd && *nd == '1')
		return hipErrorNoDevice;
	*d = 0;
	return hipSuccess;
}

API hipError_t hipSetDevice(int d)
{
	return d == 0 ? hipSuccess : hipErrorInvalidDevice;
}

API hipError_t hipGetDeviceCount(int *n)
{
	int d;

	*n = hipGetDevice(&d) == hipSuccess ? 1 : 0;
	return *n ? hipSuccess : hipErrorNoDevice;
}

API int hipGetStreamDeviceId(hipStream_t h)
{
	(void)h;
	return 0;
}

/* ---- registration ---- */

static int fatbin_obj;

API void **__hipRegisterFatBinary(const void *data)
{
	(void)data;
	return (void **)&fatbin_obj;
}

API void __hipUnregisterFatBinary(void **m)
{
	(void)m;
}

API void __hipRegisterFunction(void **m, const void *host_fn, char *dev_fn, const char *name,
			       unsigned int limit, void *tid, void *bid, dim3 *b, dim3 *g,
			       int *ws)
{
	(void)dev_fn; (void)name; (void)limit; (void)tid; (void)bid; (void)b; (void)g; (void)ws;
	if (m != (void **)&fatbin_obj)
		return;		/* not our module: the registration is lost */
	pthread_mutex_lock(&mu);
	if (nreg < MAX_REG)
		registered[nreg++] = host_fn;
	pthread_mutex_unlock(&mu);
}

static void cfg_push(dim3 g, dim3 b, size_t smem, hipStream_t s)
{
	cfg.set = 1;
	cfg.g = g;
	cfg.b = b;
	cfg.smem = smem;
	cfg.s = s;
}

static hipError_t cfg_pop(dim3 *g, dim3 *b, size_t *smem, hipStream_t *s)
{
	if (!cfg.set)
		return hipErrorNotInitialized;	/* popped on another thread */
	cfg.set = 0;
	*g = cfg.g;
	*b = cfg.b;
	*smem = cfg.smem;
	*s = cfg.s;
	return hipSuccess;
}

API hipError_t __hipPushCallConfiguration(dim3 g, dim3 b, size_t smem, hipStream_t s)
{
	cfg_push(g, b, smem, s);
	return hipSuccess;
}

API hipError_t __hipPopCallConfiguration(dim3 *g, dim3 *b, size_t *smem, hipStream_t *s)
{
	return cfg_pop(g, b, smem, s);
}

/* ---- streams ---- */

/* CLR's DEBUG_HIP_IGNORE_STREAM_PRIORITY, read once (-1: not yet); its
 * default is FAKE_HIP_PRIORITY_IGNORED's (fake_libamdhip64.h). mu held */
static int prio_ignored = -1;

static int ignores_priority(void)
{
	if (prio_ignored < 0) {
		const char *v = getenv("DEBUG_HIP_IGNORE_STREAM_PRIORITY");
		const char *mode = getenv("FAKE_HIP_PRIORITY_IGNORED");

		if (mode && !strcmp(mode, "always"))
			prio_ignored = 1;	/* a runtime with no way back */
		else
			prio_ignored = v ? strcmp(v, "0") != 0 : mode && !strcmp(mode, "1");
	}
	return prio_ignored;
}

API int fake_priority_ignored(void)
{
	int r;

	pthread_mutex_lock(&mu);
	r = prio_ignored;
	pthread_mutex_unlock(&mu);
	return r;
}

API hipError_t hipDeviceGetStreamPriorityRange(int *least, int *greatest)
{
	if (least)
		*least = 1;
	if (greatest)
		*greatest = -1;
	return hipSuccess;
}

API hipError_t hipStreamCreateWithPriority(hipStream_t *ph, unsigned int fl, int prio)
{
	struct fstream *s = calloc(1, sizeof(*s));

	(void)fl;
	if (!s)
		return hipErrorOutOfMemory;
	pthread_mutex_lock(&mu);
	s->id = next_id++;
	s->prio = prio < -1 ? -1 : prio > 1 ? 1 : prio;	/* CLR's clamp */
	if (ignores_priority())
		s->prio = 0;
	s->next_all = all_streams;
	all_streams = s;
	pthread_mutex_unlock(&mu);
	*ph = (hipStream_t)s;
	return hipSuccess;
}

API hipError_t hipStreamCreate(hipStream_t *ph)
{
	return hipStreamCreateWithPriority(ph, 0, 0);
}

API hipError_t hipStreamCreateWithFlags(hipStream_t *ph, unsigned int fl)
{
	return hipStreamCreateWithPriority(ph, fl, 0);
}

/* Returns at once; queued work still runs (the stream is kept: the log
 * and the timeline refer to it); the handle is invalid from then on. */
API hipError_t hipStreamDestroy(hipStream_t h)
{
	struct fstream *s = (struct fstream *)h;
	int was;

	if (!h || h == hipStreamPerThread)
		return hipErrorInvalidHandle;
	pthread_mutex_lock(&mu);
	was = s->destroyed;
	s->destroyed = 1;
	pthread_mutex_unlock(&mu);
	return was ? hipErrorInvalidHandle : hipSuccess;
}

API hipError_t hipStreamGetPriority(hipStream_t h, int *p)
{
	pthread_mutex_lock(&mu);
	*p = stream_of(h, 0)->prio;
	pthread_mutex_unlock(&mu);
	return hipSuccess;
}

/* Of the stream attributes only the priority is modelled (clamped to the
 * range, 0..-1 on the devices of ROCm 6/7). */
API hipError_t hipStreamSetAttribute(hipStream_t h, hipStreamAttrID a, const hipStreamAttrValue *v)
{
	if (!v)
		return hipErrorInvalidValue;
	if (a != hipStreamAttributePriority)
		return hipSuccess;
	pthread_mutex_lock(&mu);
	stream_of(h, 0)->prio = ignores_priority() ? 0 :
				v->priority > 0 ? 0 : v->priority < -1 ? -1 : v->priority;
	pthread_mutex_unlock(&mu);
	return hipSuccess;
}

API hipError_t hipStreamCopyAttributes(hipStream_t dst, hipStream_t src)
{
	pthread_mutex_lock(&mu);
	stream_of(dst, 0)->prio = stream_of(src, 0)->prio;
	pthread_mutex_unlock(&mu);
	return hipSuccess;
}

API hipError_t hipStreamIsCapturing(hipStream_t h, hipStreamCaptureStatus *st)
{
	pthread_mutex_lock(&mu);
	*st = stream_of(h, 0)->capturing ? hipStreamCaptureStatusActive :
	      hipStreamCaptureStatusNone;
	pthread_mutex_unlock(&mu);
	return hipSuccess;
}

API hipError_t hipStreamBeginCapture(hipStream_t h, hipStreamCaptureMode m)
{
	struct fstream *s;

	(void)m;
	pthread_mutex_lock(&mu);
	s = stream_of(h, 0);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		return hipErrorInvalidHandle;
	}
	s->capturing = s->id ? s->id : 1 << 30;
	pthread_mutex_unlock(&mu);
	return hipSuccess;
}

/* The capture ends on every stream that joined it. */
API hipError_t hipStreamEndCapture(hipStream_t h, hipGraph_t *g)
{
	struct fstream *s, *o;
	int id;

	pthread_mutex_lock(&mu);
	s = stream_of(h, 0);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		return hipErrorInvalidHandle;
	}
	id = s->capturing;
	s->capturing = 0;
	for (o = all_streams; o && id; o = o->next_all)
		if (o->capturing == id)
			o->capturing = 0;
	if (id && null_stream.capturing == id)
		null_stream.capturing = 0;
	if (id && pt_ready && pt_stream.capturing == id)
		pt_stream.capturing = 0;
	pthread_mutex_unlock(&mu);
	*g = (hipGraph_t)&fatbin_obj;
	return hipSuccess;
}

static hipError_t stream_sync(hipStream_t h, int spt)
{
	struct fstream *s;

	pthread_mutex_lock(&mu);
	s = stream_of(h, spt);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		return hipErrorInvalidHandle;
	}
	pthread_mutex_unlock(&mu);
	fake_tl_wait(&s->tl);
	return hipSuccess;
}

API hipError_t hipStreamSynchronize(hipStream_t h)
{
	return stream_sync(h, 0);
}

API hipError_t hipStreamSynchronize_spt(hipStream_t h)
{
	return stream_sync(h, 1);
}

API hipError_t hipStreamQuery(hipStream_t h)
{
	int idle;

	pthread_mutex_lock(&mu);
	idle = fake_tl_idle(&stream_of(h, 0)->tl);
	pthread_mutex_unlock(&mu);
	return idle ? hipSuccess : hipErrorNotReady;
}

API hipError_t hipDeviceSynchronize(void)
{
	fake_log_wait();
	return hipSuccess;
}

/* ---- events ---- */

API int fake_events_created(void)
{
	return __atomic_load_n(&events_created, __ATOMIC_RELAXED);
}

API hipError_t hipEventCreateWithFlags(hipEvent_t *e, unsigned int fl)
{
	struct fevent *ev = calloc(1, sizeof(*ev));

	(void)fl;
	*e = (hipEvent_t)ev;
	if (!ev)
		return hipErrorOutOfMemory;
	ev->rec = -1;
	__atomic_add_fetch(&events_created, 1, __ATOMIC_RELAXED);
	return hipSuccess;
}

API hipError_t hipEventCreate(hipEvent_t *e)
{
	return hipEventCreateWithFlags(e, 0);
}

API hipError_t hipEventDestroy(hipEvent_t e)
{
	free(e);
	return hipSuccess;
}

API hipError_t hipEventRecord(hipEvent_t e, hipStream_t h)
{
	struct fevent *ev = (struct fevent *)e;
	struct fstream *s;

	pthread_mutex_lock(&mu);
	s = stream_of(h, 0);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		return hipErrorInvalidHandle;
	}
	ev->rec = (int)(log_add(s, FAKE_EVENT, 0, 0) - logv);
	ev->capture = s->capturing;
	pthread_mutex_unlock(&mu);
	return hipSuccess;
}

API hipError_t hipEventQuery(hipEvent_t e)
{
	int rec = ((struct fevent *)e)->rec, done;

	if (rec < 0)
		return hipSuccess;
	pthread_mutex_lock(&mu);
	done = fake_rec_done(rec);
	pthread_mutex_unlock(&mu);
	return done ? hipSuccess : hipErrorNotReady;
}

API hipError_t hipEventSynchronize(hipEvent_t e)
{
	if (((struct fevent *)e)->rec >= 0)
		fake_rec_wait(((struct fevent *)e)->rec);
	return hipSuccess;
}

/* Later commands on @h start after the event's record ended; a stream
 * that waits on an event recorded in a capture joins the capture. */
API hipError_t hipStreamWaitEvent(hipStream_t h, hipEvent_t e, unsigned int fl)
{
	struct fevent *ev = (struct fevent *)e;
	struct fstream *s;
	struct fake_rec *r;

	(void)fl;
	pthread_mutex_lock(&mu);
	s = stream_of(h, 0);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		return hipErrorInvalidHandle;
	}
	if (ev->capture && !s->capturing)
		s->capturing = ev->capture;
	r = log_add(s, FAKE_WAIT, 0, 0);
	if (ev->rec >= 0 && !ev->capture)
		fake_evwait(&s->tl, r, ev->rec);
	pthread_mutex_unlock(&mu);
	return hipSuccess;
}

/* ---- memory waits and writes ---- */

static hipError_t memop(hipStream_t h, void *p, uint64_t v, unsigned int fl, uint64_t mask,
			int wide, int write)
{
	struct fstream *s;
	struct fake_rec *r;

	if (!p)
		return hipErrorInvalidValue;
	pthread_mutex_lock(&mu);
	s = stream_of(h, 0);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		return hipErrorInvalidHandle;
	}
	r = log_add(s, write ? FAKE_WRITE_VALUE : FAKE_WAIT_VALUE, 0, 0);
	fake_memop(&s->tl, r, write ? FAKE_MEM_WRITE : FAKE_MEM_WAIT, p, v, mask, (int)(fl & 3),
		   wide);
	pthread_mutex_unlock(&mu);
	return hipSuccess;
}

API hipError_t hipStreamWaitValue32(hipStream_t h, void *p, uint32_t v, unsigned int fl,
				    uint32_t mask)
{
	return memop(h, p, v, fl, mask, 0, 0);
}

API hipError_t hipStreamWaitValue64(hipStream_t h, void *p, uint64_t v, unsigned int fl,
				    uint64_t mask)
{
	return memop(h, p, v, fl, mask, 1, 0);
}

API hipError_t hipStreamWriteValue32(hipStream_t h, void *p, uint32_t v, unsigned int fl)
{
	return memop(h, p, v, fl, ~0ULL, 0, 1);
}

API hipError_t hipStreamWriteValue64(hipStream_t h, void *p, uint64_t v, unsigned int fl)
{
	return memop(h, p, v, fl, ~0ULL, 1, 1);
}

/* ---- work ---- */

static hipError_t launch(const struct fake_kernel *k, dim3 g, dim3 b, void **args, size_t smem,
			 hipStream_t h, int variant)
{
	struct fake_rec *r;

	if (!k)
		return hipErrorInvalidDeviceFunction;
	if (k->needs_registration && !fake_registered(k))
		return hipErrorInvalidDeviceFunction;
	pthread_mutex_lock(&mu);
	if (stream_of(h, variant == FAKE_SPT)->destroyed) {
		pthread_mutex_unlock(&mu);
		return hipErrorInvalidHandle;
	}
	r = log_add(stream_of(h, variant == FAKE_SPT), k->id, variant, k->ns);
	r->args = args;
	r->grid[0] = g.x;
	r->grid[1] = g.y;
	r->grid[2] = g.z;
	r->block[0] = b.x;
	r->block[1] = b.y;
	r->block[2] = b.z;
	r->smem = smem;
	pthread_mutex_unlock(&mu);
	return hipSuccess;
}

API hipError_t hipLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t smem,
			       hipStream_t h)
{
	return launch(f, g, b, args, smem, h, FAKE_LEGACY);
}

API hipError_t hipLaunchKernel_spt(const void *f, dim3 g, dim3 b, void **args, size_t smem,
				   hipStream_t h)
{
	return launch(f, g, b, args, smem, h, FAKE_SPT);
}

API hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gx, unsigned int gy,
				     unsigned int gz, unsigned int bx, unsigned int by,
				     unsigned int bz, unsigned int smem, hipStream_t h,
				     void **params, void **extra)
{
	dim3 g = { gx, gy, gz }, b = { bx, by, bz };

	(void)extra;
	return launch((const struct fake_kernel *)f, g, b, params, smem, h, FAKE_LEGACY);
}

/*
 * The module launches of hip_ext.h: ROCm 5.x exports them under their C++
 * names only; 6.x and 7.x under their C names as well (the fake built with
 * -DFAKE_ROCM6, libamdhip64.so.6).  hip_impl::hipLaunchKernelGGLImpl has
 * only its C++ name and returns nothing.
 */
static hipError_t ext_launch(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz,
			     uint32_t bx, uint32_t by, uint32_t bz, size_t smem, hipStream_t h,
			     void **params)
{
	dim3 g = { gx, gy, gz }, b = { bx, by, bz };

	return launch((const struct fake_kernel *)f, g, b, params, smem, h, FAKE_LEGACY);
}

hipError_t ext_module_launch(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
			     uint32_t, size_t, hipStream_t, void **, void **, hipEvent_t,
			     hipEvent_t, uint32_t)
	__asm__("_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j");
API hipError_t ext_module_launch(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz,
				 uint32_t bx, uint32_t by, uint32_t bz, size_t smem,
				 hipStream_t h, void **params, void **extra, hipEvent_t e0,
				 hipEvent_t e1, uint32_t fl)
{
	(void)extra; (void)e0; (void)e1; (void)fl;
	return ext_launch(f, gx, gy, gz, bx, by, bz, smem, h, params);
}

hipError_t hcc_module_launch(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
			     uint32_t, size_t, hipStream_t, void **, void **, hipEvent_t,
			     hipEvent_t)
	__asm__("_Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_");
API hipError_t hcc_module_launch(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz,
				 uint32_t bx, uint32_t by, uint32_t bz, size_t smem,
				 hipStream_t h, void **params, void **extra, hipEvent_t e0,
				 hipEvent_t e1)
{
	(void)extra; (void)e0; (void)e1;
	return ext_launch(f, gx, gy, gz, bx, by, bz, smem, h, params);
}

void ggl_launch(uintptr_t, const dim3 *, const dim3 *, uint32_t, hipStream_t, void **)
	__asm__("_ZN8hip_impl22hipLaunchKernelGGLImplEmRK4dim3S2_jP12ihipStream_tPPv");
API void ggl_launch(uintptr_t f, const dim3 *g, const dim3 *b, uint32_t smem, hipStream_t h,
		    void **args)
{
	/* 5.2.3's launches through its own export (a PLT call, SELF_CALLS). */
	(void)hipModuleLaunchKernel((hipFunction_t)f, g->x, g->y, g->z, b->x, b->y, b->z, smem, h,
				    args, NULL);
}

#ifdef FAKE_ROCM6
API hipError_t hipExtModuleLaunchKernel(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz,
					uint32_t bx, uint32_t by, uint32_t bz, size_t smem,
					hipStream_t h, void **params, void **extra, hipEvent_t e0,
					hipEvent_t e1, uint32_t fl)
{
	(void)extra; (void)e0; (void)e1; (void)fl;
	return ext_launch(f, gx, gy, gz, bx, by, bz, smem, h, params);
}

API hipError_t hipHccModuleLaunchKernel(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz,
					uint32_t bx, uint32_t by, uint32_t bz, size_t smem,
					hipStream_t h, void **params, void **extra, hipEvent_t e0,
					hipEvent_t e1)
{
	(void)extra; (void)e0; (void)e1;
	return ext_launch(f, gx, gy, gz, bx, by, bz, smem, h, params);
}
#endif

/* ---- memory: device allocations and page-locked host memory ---- */

#define MAX_MEM 256
static struct {
	uintptr_t base;
	size_t n;
	int pinned;		/* 1: hipHostMalloc, 0: hipMalloc */
} mems[MAX_MEM];

/* Device memory is host memory here (the fake's kernels do not run). */
static hipError_t mem_add(void **p, size_t n, int pinned)
{
	int i;

	*p = calloc(1, n ? n : 1);
	if (!*p)
		return hipErrorOutOfMemory;
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
		return hipErrorOutOfMemory;
	}
	return hipSuccess;
}

static hipError_t mem_free(void *p)
{
	int i;

	if (!p)
		return hipSuccess;
	pthread_mutex_lock(&mu);
	for (i = 0; i < MAX_MEM && mems[i].base != (uintptr_t)p; i++)
		;
	if (i < MAX_MEM)
		mems[i].base = 0;
	pthread_mutex_unlock(&mu);
	if (i == MAX_MEM)
		return hipErrorInvalidValue;
	free(p);
	return hipSuccess;
}

/* mu held: host memory the runtime must stage (neither page-locked nor device). */
static int pageable(const void *p)
{
	int i;

	if (!p)
		return 0;
	for (i = 0; i < MAX_MEM; i++)
		if (mems[i].base && (uintptr_t)p >= mems[i].base &&
		    (uintptr_t)p - mems[i].base < mems[i].n)
			return 0;
	return 1;
}

API hipError_t hipMalloc(void **p, size_t n)
{
	return mem_add(p, n, 0);
}

API hipError_t hipFree(void *p)
{
	return mem_free(p);
}

API hipError_t hipHostMalloc(void **p, size_t n, unsigned int fl)
{
	(void)fl;
	return mem_add(p, n, 1);
}

API hipError_t hipHostFree(void *p)
{
	return mem_free(p);
}

static hipError_t copy(hipStream_t h, int spt, int kind)
{
	pthread_mutex_lock(&mu);
	if (stream_of(h, spt)->destroyed) {
		pthread_mutex_unlock(&mu);
		return hipErrorInvalidHandle;
	}
	log_add(stream_of(h, spt), kind, spt, 0);
	pthread_mutex_unlock(&mu);
	return hipSuccess;
}

/* A copy from the device to pageable memory returns once it ended. */
static hipError_t memcpy_async(void *d, const void *src, size_t n, hipMemcpyKind k,
			       hipStream_t h, int spt)
{
	struct fake_rec *r;
	int idx, block;

	if (n)
		memmove(d, src, n);
	pthread_mutex_lock(&mu);
	if (stream_of(h, spt)->destroyed) {
		pthread_mutex_unlock(&mu);
		return hipErrorInvalidHandle;
	}
	r = log_add(stream_of(h, spt), FAKE_COPY, spt, 0);
	idx = (int)(r - logv);
	block = !r->captured && (k == hipMemcpyDeviceToHost || k == hipMemcpyDefault) &&
		pageable(d);
	pthread_mutex_unlock(&mu);
	if (block) {
		fake_rec_wait(idx);
		pthread_mutex_lock(&mu);
		logv[idx].ret = fake_clock_ns();
		pthread_mutex_unlock(&mu);
	}
	return hipSuccess;
}

API hipError_t hipMemcpyAsync(void *d, const void *s, size_t n, hipMemcpyKind k, hipStream_t h)
{
	return memcpy_async(d, s, n, k, h, 0);
}

API hipError_t hipMemcpyAsync_spt(void *d, const void *s, size_t n, hipMemcpyKind k,
				  hipStream_t h)
{
	return memcpy_async(d, s, n, k, h, 1);
}

/* A copy that returns once its stream's work up to it completed (CLR's
 * synchronous copy on a stream: PyTorch's copy to the host on ROCm). */
API hipError_t hipMemcpyWithStream(void *d, const void *s, size_t n, hipMemcpyKind k,
				   hipStream_t h)
{
	hipError_t r = memcpy_async(d, s, n, k, h, 0);

	return r == hipSuccess ? stream_sync(h, 0) : r;
}

/* CLR's own calls through its exported functions (by the PLT). */
API hipError_t hipMemcpyFromSymbolAsync(void *dst, const void *sym, size_t n, size_t off,
					hipMemcpyKind k, hipStream_t h)
{
	return hipMemcpyAsync(dst, (const char *)sym + off, n, k, h);
}

API hipError_t hipMemcpyToSymbolAsync(const void *sym, const void *src, size_t n, size_t off,
				      hipMemcpyKind k, hipStream_t h)
{
	return hipMemcpyAsync((char *)(uintptr_t)sym + off, src, n, k, h);
}

API hipError_t hipMemcpyPeerAsync(void *dst, int dd, const void *src, int sd, size_t n,
				  hipStream_t h)
{
	(void)dd;
	(void)sd;
	return hipMemcpyAsync(dst, src, n, hipMemcpyDeviceToDevice, h);
}

API void *fake_self_call_target(void)
{
	return (void *)hipMemcpyAsync;
}

API hipError_t hipMemsetAsync(void *d, int v, size_t n, hipStream_t h)
{
	memset(d, v, n);
	return copy(h, 0, FAKE_COPY);
}

/* Synchronous: waits for the null stream first, as the runtime does, and
 * returns once the copy ended. */
API hipError_t hipMemcpy(void *d, const void *s, size_t n, hipMemcpyKind k)
{
	int idx;

	(void)k;
	pthread_mutex_lock(&mu);
	idx = (int)(log_add(&null_stream, FAKE_SYNC_COPY, 0, 0) - logv);
	pthread_mutex_unlock(&mu);
	fake_rec_wait(idx);	/* the null stream's work first, then the copy */
	if (n)
		memmove(d, s, n);
	pthread_mutex_lock(&mu);
	logv[idx].ret = fake_clock_ns();
	pthread_mutex_unlock(&mu);
	return hipSuccess;
}

API hipError_t hipLaunchHostFunc(hipStream_t h, hipHostFn_t fn, void *data)
{
	fn(data);
	return copy(h, 0, FAKE_HOSTFN);
}

API hipError_t hipStreamAddCallback(hipStream_t h, hipStreamCallback_t cb, void *data,
				    unsigned int fl)
{
	(void)fl;
	cb(h, hipSuccess, data);
	return copy(h, 0, FAKE_HOSTFN);
}

/*
 * Entry points that call the runtime's own exports, as the real runtimes
 * do through their PLT (so a preloaded hook is entered again, on the same
 * thread, from inside the outer call): tests/hip-real/selfcalls.py finds
 * these calls in every real libamdhip64 and in this library, and checks
 * that this library makes each one the real ones make.  5.2.3, 5.7.1,
 * 6.4.3, 7.2.4: the symbol copies call hipMemcpyAsync (the _spt ones with
 * the per-thread stream object's handle), hipLaunchByPtr calls
 * hipModuleLaunchKernel; 5.2.3 also hipMemcpyPeerAsync -> hipMemcpyAsync,
 * hipMemcpyPeer -> hipMemcpy and hipLaunchKernelGGLImpl ->
 * hipModuleLaunchKernel.  A symbol is its host address here.  (The
 * symbol copies and hipMemcpyPeerAsync of all versions are above, with
 * hipMemcpyAsync.)
 */
/* The _spt ones turn a null stream into the caller's per-thread stream
 * object, as CLR does, and pass that object's own handle on: the nested
 * call names a stream no create returned. */
static hipStream_t per_thread_object(hipStream_t h)
{
	if (h)
		return h;
	pthread_mutex_lock(&mu);
	h = (hipStream_t)stream_of(NULL, 1);
	pthread_mutex_unlock(&mu);
	return h;
}

API hipError_t hipMemcpyFromSymbolAsync_spt(void *dst, const void *sym, size_t n, size_t off,
					    hipMemcpyKind k, hipStream_t h)
{
	return hipMemcpyAsync(dst, (const char *)sym + off, n, k, per_thread_object(h));
}

API hipError_t hipMemcpyToSymbolAsync_spt(const void *sym, const void *src, size_t n, size_t off,
					  hipMemcpyKind k, hipStream_t h)
{
	return hipMemcpyAsync((char *)sym + off, src, n, k, per_thread_object(h));
}

/* One device: a peer copy is a copy. */
API hipError_t hipMemcpyPeer(void *dst, int dd, const void *src, int sd, size_t n)
{
	if (dd || sd)
		return hipErrorInvalidDevice;
	return hipMemcpy(dst, src, n, hipMemcpyDeviceToDevice);
}

/* hipConfigureCall names the launch configuration of the hipLaunchByPtr
 * that follows on the same thread (the <<<>>> configuration's slot). */
API hipError_t hipConfigureCall(dim3 g, dim3 b, size_t smem, hipStream_t h)
{
	cfg_push(g, b, smem, h);
	return hipSuccess;
}

API hipError_t hipLaunchByPtr(const void *f)
{
	dim3 g, b;
	size_t smem;
	hipStream_t h;

	if (cfg_pop(&g, &b, &smem, &h) != hipSuccess)
		return hipErrorMissingConfiguration;
	return hipModuleLaunchKernel((hipFunction_t)f, g.x, g.y, g.z, b.x, b.y, b.z,
				     (unsigned int)smem, h, NULL, NULL);
}

/* ROCm 6.2, 6.4 and 7.1 (fake_libamdhip64.map: hip_6.2, hip_6.4, hip_7.1). */
API hipError_t hipMemcpyHtoAAsync(hipArray_t dst, size_t off, const void *src, size_t n,
				  hipStream_t h)
{
	(void)dst; (void)off; (void)src; (void)n;
	return copy(h, 0, FAKE_ARRAY_COPY);
}

API hipError_t hipStreamBatchMemOp(hipStream_t h, unsigned int n, hipStreamBatchMemOpParams *ops,
				   unsigned int fl)
{
	(void)n; (void)ops; (void)fl;
	return copy(h, 0, FAKE_BATCH_MEMOP);
}

API hipError_t hipMemsetD2D32Async(hipDeviceptr_t dst, size_t pitch, unsigned int v, size_t w,
				   size_t ht, hipStream_t h)
{
	(void)dst; (void)pitch; (void)v; (void)w; (void)ht;
	return copy(h, 0, FAKE_MEMSET2D);
}

API hipError_t hipGraphLaunch(hipGraphExec_t g, hipStream_t h)
{
	(void)g;
	return copy(h, 0, FAKE_GRAPH);
}

/* ROCm 6.1 (hip_6.1): with hipGraphInstantiateFlagUpload the graph is
 * uploaded on uploadStream (a FAKE_UPLOAD command there). */
API hipError_t hipGraphInstantiateWithParams(hipGraphExec_t *gx, hipGraph_t g,
					     hipGraphInstantiateParams *p)
{
	(void)g;
	if (!gx || !p)
		return hipErrorInvalidValue;
	*gx = (hipGraphExec_t)&null_stream;
	p->result_out = 0;
	return (p->flags & 2) ? copy(p->uploadStream, 0, FAKE_UPLOAD) : hipSuccess;
}

/*
 * The runtime's own lookup (6.1+): its own functions, _spt for per-thread.
 * The addresses come from hidden aliases, bound inside this library: no
 * dynamic lookup is made (a lookup on this library's handle can reach
 * libxsched's definitions first, as this library was loaded at start-up),
 * so only the interposer's hipGetProcAddress hook can hand out hooks.
 */
#define OWN(f) extern __typeof__(f) own_##f __attribute__((alias(#f), visibility("hidden")));
#define OWN_LIST(X) X(hipLaunchKernel) X(hipLaunchKernel_spt) X(hipGetDevice) \
	X(hipMemcpyAsync) X(hipMemcpyAsync_spt) X(hipStreamSynchronize) \
	X(hipStreamSynchronize_spt) X(hipLaunchHostFunc)
OWN_LIST(OWN)
#define OWN_ENTRY(f) { #f, (void *)own_##f },

static void *own(const char *name)
{
	static const struct { const char *name; void *fn; } table[] = { OWN_LIST(OWN_ENTRY) };
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(table[i].name, name))
			return table[i].fn;
	return NULL;
}

API hipError_t hipGetProcAddress(const char *sym, void **pfn, int ver, uint64_t fl,
				 gpa_status *st)
{
	char name[128];

	(void)ver;
	snprintf(name, sizeof(name), "%s%s", sym, (fl & 2) ? "_spt" : "");
	*pfn = own(name);
	if (!*pfn)
		*pfn = own(sym);
	if (st)
		*st = *pfn ? (gpa_status)0 : (gpa_status)1;
	return *pfn ? hipSuccess : hipErrorNotFound;
}

/* The same lookup under CUDA's name (7.1); the _spt export defaults to the
 * per-thread variants. */
static hipError_t entry_point(const char *sym, void **pfn, int pt,
			      hipDriverEntryPointQueryResult *st)
{
	char name[128];

	snprintf(name, sizeof(name), "%s%s", sym, pt ? "_spt" : "");
	*pfn = own(name);
	if (!*pfn)
		*pfn = own(sym);
	if (st)
		*st = *pfn ? (hipDriverEntryPointQueryResult)0 : (hipDriverEntryPointQueryResult)1;
	return *pfn ? hipSuccess : hipErrorNotFound;
}

API hipError_t hipGetDriverEntryPoint(const char *sym, void **pfn, unsigned long long fl,
				      hipDriverEntryPointQueryResult *st)
{
	return entry_point(sym, pfn, !!(fl & 2), st);
}

API hipError_t hipGetDriverEntryPoint_spt(const char *sym, void **pfn, unsigned long long fl,
					  hipDriverEntryPointQueryResult *st)
{
	return entry_point(sym, pfn, !(fl & 1), st);
}
