// SPDX-License-Identifier: MIT
/*
 * The urgent context's keeper: keeps the urgent context on the GPU for the
 * length of an urgent burst (XSCHED_CUDA_LV3_KEEP, Documentation/cuda.rst
 * "Lv3: the urgent context").
 *
 * The driver time-slices the contexts of a process: a context with work is
 * switched in (the running one's kernels are preempted and saved), and one
 * whose work ran out is switched out.  An eager program launches an urgent
 * request kernel by kernel, from Python, often slower than the GPU runs
 * them: between two of its kernels the urgent context has no work, the
 * batch context is switched back in, and the next urgent kernel pays a
 * switch again.  Measured on an H100 with ResNet-18 beside a 166 ms GEMM:
 * a request took 6x its time alone, as on a priority stream of the batch's
 * context, although every kernel ran in the urgent context.
 *
 * So at the first carried call of a burst a one-block kernel is launched in
 * the urgent context that sleeps in a loop until told to stop: the context
 * keeps work, and stays switched in (the driver still gives the batch
 * context its time slice when the urgent context's runs out).  A thread of
 * this library stops it once no urgent call came for XK_QUIET_NS and the
 * urgent streams' twins have no work left: it writes the flag the kernel
 * polls (host memory mapped into the GPU).  The kernel also ends by itself
 * after XK_LIMIT_NS (the thread starts another if the burst goes on), so a
 * stopped or crashed process never leaves it spinning.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../internal.h"
#include "interpose.h"
#include "cuda_keeper.h"

#define XK_QUIET_NS 300000ULL		/* no urgent call for this long: quiet */
#define XK_POLL_NS 100000L		/* the thread's period while a keeper runs */
#define XK_LIMIT_NS 20000000ULL		/* a keeper kernel's longest life */

#define ulog(...) do { if (xsi_log_on()) xs_debug("cuda: " __VA_ARGS__); } while (0)

/* Spin (sleeping 2 us at a time) while *flag == gen, at most limit_ns. */
static const char keep_ptx[] =
	".version 6.3\n"
	".target sm_70\n"
	".address_size 64\n"
	".visible .entry xsched_keep(.param .u64 flag, .param .u32 gen, .param .u64 limit)\n"
	"{\n"
	"	.reg .pred %p<3>;\n"
	"	.reg .b32 %r<4>;\n"
	"	.reg .b64 %rd<8>;\n"
	"	ld.param.u64 %rd5, [flag];\n"
	"	ld.param.u32 %r1, [gen];\n"
	"	ld.param.u64 %rd3, [limit];\n"
	"	cvta.to.global.u64 %rd1, %rd5;\n"
	"	mov.u64 %rd4, %globaltimer;\n"
	"LOOP:\n"
	"	ld.volatile.global.u32 %r2, [%rd1];\n"
	"	setp.ne.s32 %p1, %r2, %r1;\n"
	"	@%p1 bra DONE;\n"
	"	mov.u32 %r3, 2000;\n"
	"	nanosleep.u32 %r3;\n"
	"	mov.u64 %rd6, %globaltimer;\n"
	"	sub.s64 %rd7, %rd6, %rd4;\n"
	"	setp.le.u64 %p2, %rd7, %rd3;\n"
	"	@%p2 bra LOOP;\n"
	"DONE:\n"
	"	ret;\n"
	"}\n";

static struct {
	CUresult (*ctx_push)(CUcontext);
	CUresult (*ctx_pop)(CUcontext *);
	CUresult (*module_load_data)(CUmodule *, const void *);
	CUresult (*module_get_function)(CUfunction *, CUmodule, const char *);
	CUresult (*stream_create)(CUstream *, unsigned int, int);
	CUresult (*stream_query)(CUstream);
	CUresult (*launch)(CUfunction, unsigned int, unsigned int, unsigned int,
			   unsigned int, unsigned int, unsigned int, unsigned int,
			   CUstream, void **, void **);
	CUresult (*host_alloc)(void **, size_t, unsigned int);
	CUresult (*host_dptr)(CUdeviceptr *, void *, unsigned int);
	CUresult (*prio_range)(int *, int *);
} ur;

struct xk_dev {
	CUcontext ctx;		/* the urgent context, NULL: no keeper yet */
	bool failed;		/* it cannot be made here: never tried again */
	CUfunction fn;
	CUstream stream;	/* the keeper's own, highest priority */
	volatile uint32_t *flag;	/* host memory the kernel polls */
	CUdeviceptr dflag;
	uint32_t gen;		/* the running kernel's: it spins while *flag == gen */
	bool running;		/* a kernel was launched and not told to stop */
	atomic_uint_fast64_t last;	/* the last urgent call (ns) */
};

static bool on;
static struct xk_dev devs[XK_DEVS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;	/* devs[] */
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static bool thread_started;
static bool (*twins_idle)(int dev);

static void fork_child(void);

#define REAL(field, sym) (ur.field = (__typeof__(ur.field))xsi_real_dlsym(h, sym))

void xk_init(void *h, bool (*idle)(int dev))
{
	const char *s = getenv("XSCHED_CUDA_LV3_KEEP");

	if (s && *s && strcmp(s, "0") && strcmp(s, "1"))
		xs_err("cuda: XSCHED_CUDA_LV3_KEEP='%s' is not 0 or 1; using 1 (keeper on)", s);
	if (s && !strcmp(s, "0"))
		return;
	REAL(ctx_push, "cuCtxPushCurrent_v2");
	REAL(ctx_pop, "cuCtxPopCurrent_v2");
	REAL(module_load_data, "cuModuleLoadData");
	REAL(module_get_function, "cuModuleGetFunction");
	REAL(stream_create, "cuStreamCreateWithPriority");
	REAL(stream_query, "cuStreamQuery");
	REAL(launch, "cuLaunchKernel");
	REAL(host_alloc, "cuMemHostAlloc");
	REAL(host_dptr, "cuMemHostGetDevicePointer_v2");
	REAL(prio_range, "cuCtxGetStreamPriorityRange");
	if (!ur.ctx_push || !ur.ctx_pop || !ur.module_load_data || !ur.module_get_function ||
	    !ur.stream_create || !ur.stream_query || !ur.launch || !ur.host_alloc ||
	    !ur.host_dptr || !ur.prio_range)
		return;
	twins_idle = idle;
	pthread_atfork(NULL, NULL, fork_child);
	on = true;
}

/* lock held: @d's kernel, stream and flag in @uctx. */
static bool dev_make(struct xk_dev *d, CUcontext uctx, int dev)
{
	CUcontext old;
	CUmodule m;
	void *p = NULL;
	int least = 0, greatest = 0;
	bool ok;

	if (ur.ctx_push(uctx) != CUDA_SUCCESS)
		return false;
	ok = ur.module_load_data(&m, keep_ptx) == CUDA_SUCCESS &&
	     ur.module_get_function(&d->fn, m, "xsched_keep") == CUDA_SUCCESS &&
	     ur.prio_range(&least, &greatest) == CUDA_SUCCESS &&
	     ur.stream_create(&d->stream, CU_STREAM_NON_BLOCKING, greatest) == CUDA_SUCCESS &&
	     ur.host_alloc(&p, 64, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE) ==
	     CUDA_SUCCESS &&
	     ur.host_dptr(&d->dflag, p, 0) == CUDA_SUCCESS;
	ur.ctx_pop(&old);
	if (!ok) {
		xs_warn("cuda: device %d: the urgent context's keeper cannot be made; the urgent context works without it (slower beside long batch kernels)",
			dev);
		return false;
	}
	d->flag = p;
	*d->flag = 0;
	d->ctx = uctx;
	return true;
}

/* lock held: launch @d's kernel (the caller's thread or the keeper's). */
static void keep_launch(struct xk_dev *d)
{
	unsigned long long limit = XK_LIMIT_NS;
	void *args[] = { &d->dflag, &d->gen, &limit };

	d->gen = __atomic_load_n(d->flag, __ATOMIC_ACQUIRE);
	d->running = ur.launch(d->fn, 1, 1, 1, 32, 1, 1, 0, d->stream, args, NULL) ==
		     CUDA_SUCCESS;
}

static void *keeper_thread(void *arg);

void xk_active(int dev, CUcontext uctx)
{
	struct xk_dev *d;
	pthread_t t;

	if (!on || dev < 0 || dev >= XK_DEVS)
		return;
	d = &devs[dev];
	atomic_store_explicit(&d->last, xs_now_ns(), memory_order_relaxed);
	if (__atomic_load_n(&d->running, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&lock);
	if (!d->running && !d->failed && (d->ctx || dev_make(d, uctx, dev))) {
		keep_launch(d);
		if (!thread_started &&
		    pthread_create(&t, NULL, keeper_thread, NULL) == 0) {
			pthread_detach(t);
			thread_started = true;
		}
		pthread_cond_signal(&wake);
		ulog("device %d: urgent burst: keeper on", dev);
	} else if (!d->ctx) {
		d->failed = true;
	}
	pthread_mutex_unlock(&lock);
}

/* The keeper's thread: stops a device's keeper once its burst is over, and
 * starts another where one ended by its limit while the burst goes on. */
static void *keeper_thread(void *arg)
{
	struct timespec ts = { 0, XK_POLL_NS };
	unsigned int i, running;

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&lock);
		running = 0;
		for (i = 0; i < XK_DEVS; i++) {
			struct xk_dev *d = &devs[i];
			uint64_t last = atomic_load(&d->last);

			if (!d->running)
				continue;
			if (xs_now_ns() - last > XK_QUIET_NS && twins_idle((int)i)) {
				__atomic_store_n(d->flag, d->gen + 1, __ATOMIC_RELEASE);
				__atomic_store_n(&d->running, false, __ATOMIC_RELEASE);
				ulog("device %d: urgent burst over: keeper off", i);
				continue;
			}
			if (ur.stream_query(d->stream) == CUDA_SUCCESS)
				keep_launch(d);	/* it reached its limit */
			running++;
		}
		if (!running)
			pthread_cond_wait(&wake, &lock);
		pthread_mutex_unlock(&lock);
		if (running)
			nanosleep(&ts, NULL);
	}
	return NULL;
}

/* The child has no keeper thread and cannot use its parent's contexts. */
static void fork_child(void)
{
	pthread_mutex_init(&lock, NULL);
	pthread_cond_init(&wake, NULL);
	memset(devs, 0, sizeof(devs));
	thread_started = false;
}
