// SPDX-License-Identifier: MIT
/*
 * The CUDA driver API table of the interposer (libxsched-cuda.so), on the
 * interposition core (interpose.h): the entry points, how each is
 * classified, and the CUDA ops the core needs.  The core does the rest:
 * the stream table, caller-held Lv1 dispatch, per-thread default streams,
 * symbol redirection, fork, the debug log.
 *
 * Every hooked function is exported under the name libcuda exports it by,
 * so a program linked against libcuda reaches the hook, and the same hook
 * is what dlsym() and cuGetProcAddress() hand out for it (xsi_dlsym(),
 * xsi_proc_redirect(): by the address the real lookup returned, else by
 * base name, variant and ABI version).
 *
 * Caller-held (XSI_RT_CALLER_HELD): a CUDA call is never copied.  A
 * scheduled call (a launch, an async copy or memset, a graph launch, a host
 * function) waits in the caller's thread while the policy holds its stream
 * (a stream of higher priority on its device has work) and, while such a
 * stream is live, while `threshold` of its own calls are in flight; then the
 * caller makes it, with its own arguments.  Nothing is buffered, so every
 * call reaches the driver in program order (the drain-first rule holds
 * trivially) and per-thread default streams stay the caller's own.  A wait
 * depends only on GPU work already handed to the driver, but work that
 * waits for the host (a stream wait-value this thread would satisfy later)
 * could make it wait for ever: XSCHED_CUDA_HOLD_MAX_MS bounds every wait.
 *
 * Ordered pass-through with bookkeeping: stream and context synchronize and
 * stream query (a success tells the core what completed, without a mark),
 * stream destroy and context teardown (the stream table), begin/end of
 * stream capture (captured calls are neither held nor counted).
 * cuGetProcAddress is a harmless pass-through whose answer is redirected.
 *
 * The SM partition (XSCHED_CUDA_SM_SPLIT=N, opt-in): per device, two green
 * contexts (CUDA 12.4+), one of N SMs for urgent streams and one of the rest
 * for the others; stream creation (cuStreamCreate, cuStreamCreateWithPriority)
 * puts each new stream on one of them by its CUDA priority.  See "The SM
 * partition" below.  XSCHED_CUDA_HOLD=0 turns the Lv1 holds off (the
 * partition alone acts).
 */
#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../internal.h"
#include "interpose.h"
#include "cuda_code.h"
#include "cuda_urgent.h"

/* Driver functions the table's ops call (never our hooks). */
static struct {
	CUresult (*ctx_get_current)(CUcontext *);
	CUresult (*ctx_push)(CUcontext);
	CUresult (*ctx_pop)(CUcontext *);
	CUresult (*ctx_get_device)(CUdevice *);
	CUresult (*device_get_count)(int *);
	CUresult (*stream_get_ctx)(CUstream, CUcontext *);
	CUresult (*stream_get_priority)(CUstream, int *);
	CUresult (*stream_is_capturing)(CUstream, CUstreamCaptureStatus *);
	CUresult (*event_create)(CUevent *, unsigned int);
	CUresult (*event_destroy)(CUevent);
	CUresult (*event_record)(CUevent, CUstream);
	CUresult (*event_query)(CUevent);
	CUresult (*exchange_capture_mode)(CUstreamCaptureMode *);
	/* The SM partition's (absent before CUDA 12.4). */
	CUresult (*prio_range)(int *, int *);
	CUresult (*dev_resource)(CUdevice, CUdevResource *, CUdevResourceType);
	CUresult (*sm_split)(CUdevResource *, unsigned int *, const CUdevResource *,
			     CUdevResource *, unsigned int, unsigned int);
	CUresult (*gen_desc)(CUdevResourceDesc *, CUdevResource *, unsigned int);
	CUresult (*green_create)(CUgreenCtx *, CUdevResourceDesc, CUdevice, unsigned int);
	CUresult (*green_stream_create)(CUstream *, CUgreenCtx, unsigned int, int);
} xc_real;

/* XSCHED_CUDA_HOLD=0: no call is ever held (Lv1 off). */
static bool xc_no_hold;

extern struct xsi_runtime xc_rt;
static bool xc_init(void);

/* Our own waits and records must not break another thread's stream capture
 * in global mode: run them in relaxed mode. */
static CUstreamCaptureMode relax(bool *swapped)
{
	CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;

	*swapped = xc_real.exchange_capture_mode &&
		   xc_real.exchange_capture_mode(&m) == CUDA_SUCCESS;
	return m;
}

static void unrelax(bool swapped, CUstreamCaptureMode m)
{
	if (swapped)
		xc_real.exchange_capture_mode(&m);
}

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
	CUstreamCaptureMode m = relax(&sw);
	int ret;

	for (;;) {
		CUresult r = xc_real.event_query(ev);
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
	unrelax(sw, m);
	return ret;
}

/* ---- the core's runtime ops ---------------------------------------------- */

static enum xsi_default xc_default_kind(uintptr_t h)
{
	if (!h)
		return XSI_DEFAULT_NULL;
	if (h == (uintptr_t)CU_STREAM_LEGACY)
		return XSI_DEFAULT_LEGACY;
	if (h == (uintptr_t)CU_STREAM_PER_THREAD)
		return XSI_DEFAULT_PER_THREAD;
	return XSI_NOT_DEFAULT;
}

static int xc_current_device(void)
{
	CUdevice dev = 0;

	return xc_real.ctx_get_device(&dev) == CUDA_SUCCESS ? (int)dev : 0;
}

static int xc_device_count(void)
{
	int n = 0;

	return xc_real.device_get_count && xc_real.device_get_count(&n) == CUDA_SUCCESS ?
	       n : -1;
}

/* A stream's context, priority and device (the caller's current context
 * for the default streams).  CUDA priorities: lower is more urgent;
 * xsched's: higher is. */
static int xc_describe(uintptr_t h, struct xsi_stream_desc *d)
{
	CUcontext ctx = NULL, old;
	CUdevice dev = 0;
	int prio = 0;
	bool program_side = h & XU_PROGRAM_SIDE;

	h &= ~(uintptr_t)XU_PROGRAM_SIDE;
	if (xc_default_kind(h) == XSI_NOT_DEFAULT) {
		if (xc_real.stream_get_ctx((CUstream)h, &ctx) != CUDA_SUCCESS)
			return -ENOENT;
		if (xc_real.stream_get_priority((CUstream)h, &prio) != CUDA_SUCCESS)
			prio = 0;
	} else if (xc_real.ctx_get_current(&ctx) != CUDA_SUCCESS) {
		return -ENOENT;
	}
	if (!ctx || xc_real.ctx_push(ctx) != CUDA_SUCCESS)
		return -ENOENT;
	if (xc_real.ctx_get_device(&dev) != CUDA_SUCCESS)
		dev = 0;
	xc_real.ctx_pop(&old);
	d->priority = -prio;
	d->device = (int32_t)dev;
	d->context = (uintptr_t)ctx;
	/* Its work runs in the urgent context: it holds nothing of this one;
	 * what it runs in this one holds as any stream does. */
	if (!program_side)
		(void)xu_stream_urgent((CUstream)h, &d->device);
	return 0;
}

static int xc_enter(const struct xsi_stream_desc *d)
{
	return xc_real.ctx_push((CUcontext)d->context) == CUDA_SUCCESS ? 0 : -EIO;
}

/*
 * Marks: events kept for reuse once their mark is freed (a capped stream
 * records one every `batch` launches: creating and destroying one each time
 * would cost more than the record).  An event belongs to its context: a
 * spare is taken for the same context only, and a context's spares are
 * destroyed before the context is (pool_purge()).
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
	xc_real.event_destroy(k->ev);
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

/* @ctx (or every context of @device >= 0) is about to be destroyed. */
static void pool_purge(CUcontext ctx, int32_t device)
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

/* The child cannot use its parent's contexts: it forgets the spares. */
static void pool_fork_prepare(void)
{
	pthread_mutex_lock(&pool.lock);
}

static void pool_fork_parent(void)
{
	pthread_mutex_unlock(&pool.lock);
}

static void pool_fork_child(void)
{
	pthread_mutex_init(&pool.lock, NULL);
	pool.spare = NULL;
	pool.n = 0;
}

/* Is @h being captured into a graph (its own capture, or one it joined)? */
static int xc_is_capturing(uintptr_t h)
{
	CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;

	h &= ~(uintptr_t)XU_PROGRAM_SIDE;
	if (!xc_real.stream_is_capturing ||
	    xc_real.stream_is_capturing((CUstream)h, &cs) != CUDA_SUCCESS)
		return -EIO;
	return cs != CU_STREAM_CAPTURE_STATUS_NONE;
}

/* An event after what was handed to the driver on @h, recorded from any
 * thread (a per-thread stream: by its owner only, the core sees to that).
 * Not on a stream being captured: the record would become a graph node. */
static int xc_mark_record(uintptr_t h, const struct xsi_stream_desc *d, void **mark)
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
	if (!ctx || xc_real.ctx_push(ctx) != CUDA_SUCCESS)
		return -EIO;
	if (xc_is_capturing(h) > 0) {
		xc_real.ctx_pop(&old);
		return -EBUSY;
	}
	k = pool_get(ctx);
	if (!k) {
		k = calloc(1, sizeof(*k));
		r = k ? xc_real.event_create(&k->ev, CU_EVENT_DISABLE_TIMING) :
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
		m = relax(&sw);
		r = xc_real.event_record(k->ev, on);
		unrelax(sw, m);
		if (r != CUDA_SUCCESS)
			mark_destroy(k);
	}
	xc_real.ctx_pop(&old);
	if (r != CUDA_SUCCESS)
		return -EIO;
	*mark = k;
	return 0;
}

static int xc_mark_wait(void *mark, int64_t timeout_ns)
{
	struct xc_mark *k = mark;

	return wait_event(k->ev, timeout_ns < 0 ? UINT64_MAX :
			  xs_now_ns() + (uint64_t)timeout_ns);
}

static void xc_mark_free(void *mark)
{
	pool_put(mark);
}

/* ---- the SM partition (XSCHED_CUDA_SM_SPLIT) ------------------------------ */

/*
 * XSCHED_CUDA_SM_SPLIT=N gives urgent streams SMs of their own on each
 * device.  At the first stream creation on a device, its SMs are split into
 * a group of at least N (the driver rounds N up to its granularity: 8 SMs on
 * compute capability 9.0) and the rest, and one green context is made of
 * each.  A stream the application creates with a CUDA priority more urgent
 * than the context's least (the default, 0) is created on the urgent green
 * context, any other stream on the rest, with the requested flags and
 * priority (cuGreenCtxStreamCreate).  A green context does not reserve its
 * SMs against the ordinary context: the legacy and per-thread default
 * streams belong to the ordinary context, cannot be moved, and run on every
 * SM, so work on them is confined by nothing.  A stream the driver refuses
 * to make on a green context (it asks for CU_STREAM_NON_BLOCKING) is made as
 * asked, on every SM.  The green contexts live as long as the process.
 */
#define XC_MAX_DEV 64

struct xc_part {
	int state;		/* 0: not tried, 1: made, -1: failed (said once) */
	CUgreenCtx green[2];	/* [0] urgent streams, [1] the others */
	unsigned int sms[2];
};

static unsigned int split_sms;	/* XSCHED_CUDA_SM_SPLIT; 0: no partition */
static pthread_mutex_t part_lock = PTHREAD_MUTEX_INITIALIZER;	/* parts[] */
static struct xc_part parts[XC_MAX_DEV];

static void part_fork_prepare(void)
{
	pthread_mutex_lock(&part_lock);
}

static void part_fork_parent(void)
{
	pthread_mutex_unlock(&part_lock);
}

/* The child cannot use its parent's CUDA contexts: it starts untried. */
static void part_fork_child(void)
{
	memset(parts, 0, sizeof(parts));
	pthread_mutex_unlock(&part_lock);
}

/* part_lock held: split @dev's SMs and make the two green contexts. */
static void part_make(CUdevice dev, struct xc_part *p)
{
	CUdevResource all, grp, rest;
	CUdevResourceDesc desc;
	unsigned int n = 1;
	const char *step = "cuDeviceGetDevResource";
	CUresult r;

	memset(&all, 0, sizeof(all));
	memset(&grp, 0, sizeof(grp));
	memset(&rest, 0, sizeof(rest));
	p->state = -1;
	r = xc_real.dev_resource(dev, &all, CU_DEV_RESOURCE_TYPE_SM);
	if (r == CUDA_SUCCESS && split_sms >= all.sm.smCount) {
		xs_err("cuda: XSCHED_CUDA_SM_SPLIT=%u leaves none of device %d's %u SMs to the other streams; no SM partition",
		       split_sms, (int)dev, all.sm.smCount);
		return;
	}
	if (r == CUDA_SUCCESS) {
		step = "cuDevSmResourceSplitByCount";
		r = xc_real.sm_split(&grp, &n, &all, &rest, 0, split_sms);
		if (r == CUDA_SUCCESS && (n != 1 || !rest.sm.smCount))
			r = CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
	}
	if (r == CUDA_SUCCESS) {
		step = "cuDevResourceGenerateDesc";
		r = xc_real.gen_desc(&desc, &grp, 1);
	}
	if (r == CUDA_SUCCESS) {
		step = "cuGreenCtxCreate";
		r = xc_real.green_create(&p->green[0], desc, dev, CU_GREEN_CTX_DEFAULT_STREAM);
	}
	if (r == CUDA_SUCCESS) {
		step = "cuDevResourceGenerateDesc";
		r = xc_real.gen_desc(&desc, &rest, 1);
		if (r == CUDA_SUCCESS) {
			step = "cuGreenCtxCreate";
			r = xc_real.green_create(&p->green[1], desc, dev,
						 CU_GREEN_CTX_DEFAULT_STREAM);
		}
		/* The urgent context alone is no partition: nothing to undo,
		 * it stays unused (one context's memory). */
	}
	if (r != CUDA_SUCCESS) {
		xs_warn("cuda: device %d: no SM partition (%s failed, error %d); streams are created as asked",
			(int)dev, step, (int)r);
		return;
	}
	p->sms[0] = grp.sm.smCount;
	p->sms[1] = rest.sm.smCount;
	p->state = 1;
	xs_info("cuda: device %d: SM partition: urgent streams on %u SMs, the others on %u (of %u); the legacy and per-thread default streams cannot be moved and run on every SM, confined by nothing",
		(int)dev, p->sms[0], p->sms[1], all.sm.smCount);
}

/*
 * A new stream of CUDA priority @prio (flags @flags) on the current device:
 * made on its partition (1, *res the driver's answer), or not placed (0:
 * the caller makes it as asked).
 */
static int part_stream_create(CUstream *ph, unsigned int flags, int prio, CUresult *res)
{
	int least = 0, greatest = 0, which;
	struct xc_part p;
	CUdevice dev = 0;
	CUresult r;

	if (!split_sms || xc_real.ctx_get_device(&dev) != CUDA_SUCCESS ||
	    dev < 0 || dev >= XC_MAX_DEV)
		return 0;
	pthread_mutex_lock(&part_lock);
	if (!parts[dev].state)
		part_make(dev, &parts[dev]);
	p = parts[dev];
	pthread_mutex_unlock(&part_lock);
	if (p.state < 0)
		return 0;
	/* Lower is more urgent; the driver clamps into [greatest, least]. */
	if (xc_real.prio_range(&least, &greatest) != CUDA_SUCCESS)
		least = 0;
	which = prio < least ? 0 : 1;
	r = xc_real.green_stream_create(ph, p.green[which], flags, prio);
	if (r != CUDA_SUCCESS) {
		xs_info("cuda: a stream of flags %#x, CUDA priority %d, could not be made on device %d's %s partition (error %d): made as asked, on every SM",
			flags, prio, (int)dev, which ? "batch" : "urgent", (int)r);
		return 0;
	}
	xs_info("cuda: stream %p (CUDA priority %d) on device %d's %s partition, %u SMs",
		(void *)*ph, prio, (int)dev, which ? "batch" : "urgent", p.sms[which]);
	*res = r;
	return 1;
}

/* XSCHED_CUDA_SM_SPLIT and XSCHED_CUDA_HOLD, from do_init() (@h: libcuda). */
static void part_init(void *h);

/* ---- set-up ---------------------------------------------------------------- */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static atomic_bool init_ok;
static __thread bool tls_in_init;

#define REAL(field, sym) (xc_real.field = (__typeof__(xc_real.field))xsi_real_dlsym(h, sym))

static const char *const memwaits[] = { "cuStreamWaitValue", "cuStreamBatchMemOp", NULL };

static void do_init(void)
{
	const struct xs_config *cfg = xs_config();
	unsigned int miss = 0;
	const char *s;
	size_t i;
	void *h;

	tls_in_init = true;
	h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h) {
		xs_warn("cuda: libcuda.so.1 cannot be loaded (%s); nothing is scheduled",
			dlerror());
		goto out;
	}
	REAL(ctx_get_current, "cuCtxGetCurrent");
	REAL(ctx_push, "cuCtxPushCurrent_v2");
	REAL(ctx_pop, "cuCtxPopCurrent_v2");
	REAL(ctx_get_device, "cuCtxGetDevice");
	REAL(device_get_count, "cuDeviceGetCount");
	REAL(stream_get_ctx, "cuStreamGetCtx");
	REAL(stream_get_priority, "cuStreamGetPriority");
	REAL(stream_is_capturing, "cuStreamIsCapturing");
	REAL(event_create, "cuEventCreate");
	REAL(event_destroy, "cuEventDestroy_v2");
	REAL(event_record, "cuEventRecord");
	REAL(event_query, "cuEventQuery");
	REAL(exchange_capture_mode, "cuThreadExchangeStreamCaptureMode");
	if (!xc_real.ctx_get_current || !xc_real.ctx_push || !xc_real.ctx_pop ||
	    !xc_real.ctx_get_device || !xc_real.stream_get_ctx ||
	    !xc_real.stream_get_priority || !xc_real.event_create ||
	    !xc_real.event_destroy || !xc_real.event_record ||
	    !xc_real.event_query) {
		xs_warn("cuda: libcuda.so.1 lacks functions the scheduler needs; nothing is scheduled");
		goto out;
	}
	part_init(h);
	xu_init(h, split_sms != 0);
	xc_rt.hold_max_ns = 10000ULL * 1000000ULL;
	s = getenv("XSCHED_CUDA_HOLD_MAX_MS");
	if (s && *s) {
		char *end;
		unsigned long long v = strtoull(s, &end, 10);

		if (*end || !v)
			xs_warn("cuda: XSCHED_CUDA_HOLD_MAX_MS=%s is not a positive number of ms; using 10000", s);
		else
			xc_rt.hold_max_ns = v * 1000000ULL;
	}
	pthread_atfork(pool_fork_prepare, pool_fork_parent, pool_fork_child);
	/* Waits on a memory value: their writer is invisible to us. */
	xsi_entries_flag(&xc_rt, memwaits, XSI_ENTRY_MEMWAIT);
	/* The entries' real functions, and the table registered with the core. */
	if (xsi_runtime_init(&xc_rt)) {
		xs_warn("cuda: the interposition core refused the CUDA table; nothing is scheduled");
		goto out;
	}
	for (i = 0; i < xc_rt.nentries; i++) {
		if (!*xc_rt.entries[i].real) {
			miss++;
			xsi_log(&xc_rt, "%s is not in this libcuda; its hook is never handed out",
				xc_rt.entries[i].name);
		}
	}
	xs_info("cuda: interposer ready: Lv1 caller-held (holds %s), urgent context (Lv3) %s, threshold %u, hysteresis %llu us, hold limit %llu ms, SM split %u (0: none); %u of %zu hooked symbols absent from this libcuda",
		xc_no_hold ? "off" : "on", xu_on() ? "on" : "off", cfg->threshold, (unsigned long long)(cfg->hyst_ns / 1000),
		(unsigned long long)(xc_rt.hold_max_ns / 1000000), split_sms, miss, xc_rt.nentries);
	atomic_store(&init_ok, true);
out:
	tls_in_init = false;
}

static void part_init(void *h)
{
	static const char *const need[] = {
		"cuCtxGetStreamPriorityRange", "cuDeviceGetDevResource",
		"cuDevSmResourceSplitByCount", "cuDevResourceGenerateDesc",
		"cuGreenCtxCreate", "cuGreenCtxStreamCreate",
	};
	void **fn[] = {
		(void **)&xc_real.prio_range, (void **)&xc_real.dev_resource,
		(void **)&xc_real.sm_split, (void **)&xc_real.gen_desc,
		(void **)&xc_real.green_create, (void **)&xc_real.green_stream_create,
	};
	const char *s = getenv("XSCHED_CUDA_HOLD");
	unsigned long v;
	size_t i;
	char *end;

	if (s && *s) {
		if (!strcmp(s, "0"))
			xc_no_hold = true;
		else if (strcmp(s, "1"))
			xs_err("cuda: XSCHED_CUDA_HOLD='%s' is not 0 or 1; using 1 (Lv1 holds on)", s);
	}
	s = getenv("XSCHED_CUDA_SM_SPLIT");
	if (!s || !*s)
		return;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || !v || v > 65536 || *s == '-' || *s == '+' || *s == ' ') {
		xs_err("cuda: XSCHED_CUDA_SM_SPLIT='%s' is not a whole number of SMs (1 or more); no SM partition",
		       s);
		return;
	}
	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		*fn[i] = xsi_real_dlsym(h, need[i]);
		if (!*fn[i]) {
			xs_warn("cuda: XSCHED_CUDA_SM_SPLIT=%lu needs green contexts (a CUDA 12.4+ driver); this libcuda lacks %s: no SM partition",
				v, need[i]);
			return;
		}
	}
	pthread_atfork(part_fork_prepare, part_fork_parent, part_fork_child);
	split_sms = (unsigned int)v;
}

static bool xc_init(void)
{
	if (atomic_load_explicit(&init_ok, memory_order_acquire))
		return true;
	if (tls_in_init)	/* libcuda's own loading called back into us */
		return false;
	pthread_once(&init_once, do_init);
	return atomic_load(&init_ok);
}

/* Exported names whose cuda.h macro points at a later ABI: ours are the
 * exported symbols themselves. */
#undef cuStreamDestroy
#undef cuStreamBeginCapture
#undef cuCtxDestroy
#undef cuDevicePrimaryCtxReset
#undef cuGetProcAddress
#undef cuStreamWaitValue32
#undef cuStreamWaitValue64
#undef cuStreamBatchMemOp
#undef cuEventDestroy
#undef cuEventRecord
#undef cuEventRecordWithFlags
#undef cuStreamWaitEvent
#undef cuEventElapsedTime
#undef cuStreamWriteValue32
#undef cuStreamWriteValue64
#undef cuMemPrefetchAsync
#undef cuMemAllocAsync
#undef cuMemFreeAsync
#undef cuMemAllocFromPoolAsync
#undef cuStreamAttachMemAsync
#undef cuGraphUpload
#undef cuSignalExternalSemaphoresAsync
#undef cuWaitExternalSemaphoresAsync

#define EXPORT_AS(sym) \
	extern __typeof__(hook_##sym) sym __attribute__((alias("hook_" #sym), visibility("default")));

/*
 * Scheduled entry points: X(symbol, base name, per-thread, since, params,
 * args, stream).  `base` and `since` are what cuGetProcAddress is asked for
 * (the fallback when its answer is no exported symbol).
 */
#define LAUNCH_P (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, \
		  unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem, \
		  CUstream h, void **params, void **extra)
#define LAUNCH_A (f, gx, gy, gz, bx, by, bz, smem, h, params, extra)
#define COOP_P (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, \
		unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem, \
		CUstream h, void **params)
#define COOP_A (f, gx, gy, gz, bx, by, bz, smem, h, params)
#define EX_P (const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
#define EX_A (cfg, f, params, extra)
#define HOSTFN_P (CUstream h, CUhostFn fn, void *data)
#define HOSTFN_A (h, fn, data)
#define CB_P (CUstream h, CUstreamCallback cb, void *data, unsigned int flags)
#define CB_A (h, cb, data, flags)
#define GRAPH_P (CUgraphExec gx, CUstream h)
#define GRAPH_A (gx, h)
#define CPY_P (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
#define CPY_A (dst, src, n, h)
#define HTOD_P (CUdeviceptr dst, const void *src, size_t n, CUstream h)
#define HTOD_A (dst, src, n, h)
#define DTOH_P (void *dst, CUdeviceptr src, size_t n, CUstream h)
#define DTOH_A (dst, src, n, h)
#define C2D_P (const CUDA_MEMCPY2D *p, CUstream h)
#define C3D_P (const CUDA_MEMCPY3D *p, CUstream h)
#define C3DP_P (const CUDA_MEMCPY3D_PEER *p, CUstream h)
#define CP_A (p, h)
#define PEER_P (CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n, \
		CUstream h)
#define PEER_A (dst, dctx, src, sctx, n, h)
#define SET8_P (CUdeviceptr dst, unsigned char v, size_t n, CUstream h)
#define SET16_P (CUdeviceptr dst, unsigned short v, size_t n, CUstream h)
#define SET32_P (CUdeviceptr dst, unsigned int v, size_t n, CUstream h)
#define SET_A (dst, v, n, h)
#define S2D8_P (CUdeviceptr dst, size_t pitch, unsigned char v, size_t w, size_t ht, CUstream h)
#define S2D16_P (CUdeviceptr dst, size_t pitch, unsigned short v, size_t w, size_t ht, CUstream h)
#define S2D32_P (CUdeviceptr dst, size_t pitch, unsigned int v, size_t w, size_t ht, CUstream h)
#define S2D_A (dst, pitch, v, w, ht, h)
#define WAIT32_P (CUstream h, CUdeviceptr addr, cuuint32_t v, unsigned int fl)
#define WAIT64_P (CUstream h, CUdeviceptr addr, cuuint64_t v, unsigned int fl)
#define WAITV_A (h, addr, v, fl)
#define BATCH_P (CUstream h, unsigned int n, CUstreamBatchMemOpParams *ops, unsigned int fl)
#define BATCH_A (h, n, ops, fl)

#define SCHEDULED(X) \
	X(cuLaunchKernel, "cuLaunchKernel", 0, 4000, LAUNCH_P, LAUNCH_A, h, ROUTE_F) \
	X(cuLaunchKernel_ptsz, "cuLaunchKernel", 1, 7000, LAUNCH_P, LAUNCH_A, h, ROUTE_F) \
	X(cuLaunchKernelEx, "cuLaunchKernelEx", 0, 11060, EX_P, EX_A, cfg ? cfg->hStream : NULL, ROUTE_EX) \
	X(cuLaunchKernelEx_ptsz, "cuLaunchKernelEx", 1, 11060, EX_P, EX_A, cfg ? cfg->hStream : NULL, ROUTE_EX) \
	X(cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel", 0, 9000, COOP_P, COOP_A, h, ROUTE_F) \
	X(cuLaunchCooperativeKernel_ptsz, "cuLaunchCooperativeKernel", 1, 9000, COOP_P, COOP_A, h, ROUTE_F) \
	X(cuLaunchHostFunc, "cuLaunchHostFunc", 0, 10000, HOSTFN_P, HOSTFN_A, h, ROUTE_H) \
	X(cuLaunchHostFunc_ptsz, "cuLaunchHostFunc", 1, 10000, HOSTFN_P, HOSTFN_A, h, ROUTE_H) \
	X(cuStreamAddCallback, "cuStreamAddCallback", 0, 5000, CB_P, CB_A, h, ROUTE_CB) \
	X(cuStreamAddCallback_ptsz, "cuStreamAddCallback", 1, 7000, CB_P, CB_A, h, ROUTE_CB) \
	X(cuGraphLaunch, "cuGraphLaunch", 0, 10000, GRAPH_P, GRAPH_A, h, ROUTE_H) \
	X(cuGraphLaunch_ptsz, "cuGraphLaunch", 1, 10000, GRAPH_P, GRAPH_A, h, ROUTE_H) \
	X(cuMemcpyAsync, "cuMemcpyAsync", 0, 4000, CPY_P, CPY_A, h, ROUTE_H) \
	X(cuMemcpyAsync_ptsz, "cuMemcpyAsync", 1, 7000, CPY_P, CPY_A, h, ROUTE_H) \
	X(cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync", 0, 3020, HTOD_P, HTOD_A, h, ROUTE_H) \
	X(cuMemcpyHtoDAsync_v2_ptsz, "cuMemcpyHtoDAsync", 1, 7000, HTOD_P, HTOD_A, h, ROUTE_H) \
	X(cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync", 0, 3020, DTOH_P, DTOH_A, h, ROUTE_H) \
	X(cuMemcpyDtoHAsync_v2_ptsz, "cuMemcpyDtoHAsync", 1, 7000, DTOH_P, DTOH_A, h, ROUTE_H) \
	X(cuMemcpyDtoDAsync_v2, "cuMemcpyDtoDAsync", 0, 3020, CPY_P, CPY_A, h, ROUTE_H) \
	X(cuMemcpyDtoDAsync_v2_ptsz, "cuMemcpyDtoDAsync", 1, 7000, CPY_P, CPY_A, h, ROUTE_H) \
	X(cuMemcpy2DAsync_v2, "cuMemcpy2DAsync", 0, 3020, C2D_P, CP_A, h, ROUTE_H) \
	X(cuMemcpy2DAsync_v2_ptsz, "cuMemcpy2DAsync", 1, 7000, C2D_P, CP_A, h, ROUTE_H) \
	X(cuMemcpy3DAsync_v2, "cuMemcpy3DAsync", 0, 3020, C3D_P, CP_A, h, ROUTE_H) \
	X(cuMemcpy3DAsync_v2_ptsz, "cuMemcpy3DAsync", 1, 7000, C3D_P, CP_A, h, ROUTE_H) \
	X(cuMemcpyPeerAsync, "cuMemcpyPeerAsync", 0, 4000, PEER_P, PEER_A, h, ROUTE_H) \
	X(cuMemcpyPeerAsync_ptsz, "cuMemcpyPeerAsync", 1, 7000, PEER_P, PEER_A, h, ROUTE_H) \
	X(cuMemcpy3DPeerAsync, "cuMemcpy3DPeerAsync", 0, 4000, C3DP_P, CP_A, h, ROUTE_H) \
	X(cuMemcpy3DPeerAsync_ptsz, "cuMemcpy3DPeerAsync", 1, 7000, C3DP_P, CP_A, h, ROUTE_H) \
	X(cuMemsetD8Async, "cuMemsetD8Async", 0, 3020, SET8_P, SET_A, h, ROUTE_H) \
	X(cuMemsetD8Async_ptsz, "cuMemsetD8Async", 1, 7000, SET8_P, SET_A, h, ROUTE_H) \
	X(cuMemsetD16Async, "cuMemsetD16Async", 0, 3020, SET16_P, SET_A, h, ROUTE_H) \
	X(cuMemsetD16Async_ptsz, "cuMemsetD16Async", 1, 7000, SET16_P, SET_A, h, ROUTE_H) \
	X(cuMemsetD32Async, "cuMemsetD32Async", 0, 3020, SET32_P, SET_A, h, ROUTE_H) \
	X(cuMemsetD32Async_ptsz, "cuMemsetD32Async", 1, 7000, SET32_P, SET_A, h, ROUTE_H) \
	X(cuMemsetD2D8Async, "cuMemsetD2D8Async", 0, 3020, S2D8_P, S2D_A, h, ROUTE_H) \
	X(cuMemsetD2D8Async_ptsz, "cuMemsetD2D8Async", 1, 7000, S2D8_P, S2D_A, h, ROUTE_H) \
	X(cuMemsetD2D16Async, "cuMemsetD2D16Async", 0, 3020, S2D16_P, S2D_A, h, ROUTE_H) \
	X(cuMemsetD2D16Async_ptsz, "cuMemsetD2D16Async", 1, 7000, S2D16_P, S2D_A, h, ROUTE_H) \
	X(cuMemsetD2D32Async, "cuMemsetD2D32Async", 0, 3020, S2D32_P, S2D_A, h, ROUTE_H) \
	X(cuMemsetD2D32Async_ptsz, "cuMemsetD2D32Async", 1, 7000, S2D32_P, S2D_A, h, ROUTE_H) \
	X(cuStreamWaitValue32, "cuStreamWaitValue32", 0, 8000, WAIT32_P, WAITV_A, h, ROUTE_H) \
	X(cuStreamWaitValue32_ptsz, "cuStreamWaitValue32", 1, 8000, WAIT32_P, WAITV_A, h, ROUTE_H) \
	X(cuStreamWaitValue64, "cuStreamWaitValue64", 0, 9000, WAIT64_P, WAITV_A, h, ROUTE_H) \
	X(cuStreamWaitValue64_ptsz, "cuStreamWaitValue64", 1, 9000, WAIT64_P, WAITV_A, h, ROUTE_H) \
	X(cuStreamBatchMemOp, "cuStreamBatchMemOp", 0, 8000, BATCH_P, BATCH_A, h, ROUTE_H) \
	X(cuStreamBatchMemOp_ptsz, "cuStreamBatchMemOp", 1, 8000, BATCH_P, BATCH_A, h, ROUTE_H) \
	X(cuStreamWaitValue32_v2, "cuStreamWaitValue32", 0, 11070, WAIT32_P, WAITV_A, h, ROUTE_H) \
	X(cuStreamWaitValue32_v2_ptsz, "cuStreamWaitValue32", 1, 11070, WAIT32_P, WAITV_A, h, ROUTE_H) \
	X(cuStreamWaitValue64_v2, "cuStreamWaitValue64", 0, 11070, WAIT64_P, WAITV_A, h, ROUTE_H) \
	X(cuStreamWaitValue64_v2_ptsz, "cuStreamWaitValue64", 1, 11070, WAIT64_P, WAITV_A, h, ROUTE_H) \
	X(cuStreamBatchMemOp_v2, "cuStreamBatchMemOp", 0, 11070, BATCH_P, BATCH_A, h, ROUTE_H) \
	X(cuStreamBatchMemOp_v2_ptsz, "cuStreamBatchMemOp", 1, 11070, BATCH_P, BATCH_A, h, ROUTE_H)

/* Ordered and harmless pass-through entry points (hand-written hooks
 * below): X(symbol, base name, per-thread, since, class, drain scope). */
#define ORDERED(X) \
	X(cuStreamCreate, "cuStreamCreate", 0, 2000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuStreamCreateWithPriority, "cuStreamCreateWithPriority", 0, 5050, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuStreamSynchronize, "cuStreamSynchronize", 0, 2000, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuStreamSynchronize_ptsz, "cuStreamSynchronize", 1, 7000, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuStreamQuery, "cuStreamQuery", 0, 2000, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuStreamQuery_ptsz, "cuStreamQuery", 1, 7000, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuCtxSynchronize, "cuCtxSynchronize", 0, 2000, XSI_ORDERED, XSI_SCOPE_DEVICE) \
	X(cuCtxSynchronize_v2, "cuCtxSynchronize", 0, 12090, XSI_ORDERED, XSI_SCOPE_DEVICE) \
	X(cuStreamDestroy, "cuStreamDestroy", 0, 2000, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuStreamDestroy_v2, "cuStreamDestroy", 0, 4000, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuStreamBeginCapture, "cuStreamBeginCapture", 0, 10000, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuStreamBeginCapture_ptsz, "cuStreamBeginCapture", 1, 10000, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuStreamBeginCapture_v2, "cuStreamBeginCapture", 0, 10010, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuStreamBeginCapture_v2_ptsz, "cuStreamBeginCapture", 1, 10010, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuStreamBeginCaptureToGraph, "cuStreamBeginCaptureToGraph", 0, 12030, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuStreamBeginCaptureToGraph_ptsz, "cuStreamBeginCaptureToGraph", 1, 12030, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuStreamEndCapture, "cuStreamEndCapture", 0, 10000, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuStreamEndCapture_ptsz, "cuStreamEndCapture", 1, 10000, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuCtxDestroy, "cuCtxDestroy", 0, 2000, XSI_ORDERED, XSI_SCOPE_DEVICE) \
	X(cuCtxDestroy_v2, "cuCtxDestroy", 0, 4000, XSI_ORDERED, XSI_SCOPE_DEVICE) \
	X(cuDevicePrimaryCtxReset, "cuDevicePrimaryCtxReset", 0, 7000, XSI_ORDERED, XSI_SCOPE_DEVICE) \
	X(cuDevicePrimaryCtxReset_v2, "cuDevicePrimaryCtxReset", 0, 11000, XSI_ORDERED, XSI_SCOPE_DEVICE) \
	X(cuStreamSetAttribute, "cuStreamSetAttribute", 0, 11000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuStreamSetAttribute_ptsz, "cuStreamSetAttribute", 1, 11000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuStreamCopyAttributes, "cuStreamCopyAttributes", 0, 11000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuStreamCopyAttributes_ptsz, "cuStreamCopyAttributes", 1, 11000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuGetProcAddress, "cuGetProcAddress", 0, 11030, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuGetProcAddress_v2, "cuGetProcAddress", 0, 12000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	URGENT(X)

/* Pass-through with the urgent context's bookkeeping (hand-written hooks
 * below): events, code, and the stream calls that are not scheduled. */
#define URGENT(X) \
	X(cuEventCreate, "cuEventCreate", 0, 2000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuEventDestroy, "cuEventDestroy", 0, 2000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuEventDestroy_v2, "cuEventDestroy", 0, 4000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuEventRecord, "cuEventRecord", 0, 2000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuEventRecord_ptsz, "cuEventRecord", 1, 7000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuEventRecordWithFlags, "cuEventRecordWithFlags", 0, 11010, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuEventRecordWithFlags_ptsz, "cuEventRecordWithFlags", 1, 11010, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuStreamWaitEvent, "cuStreamWaitEvent", 0, 3020, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuStreamWaitEvent_ptsz, "cuStreamWaitEvent", 1, 7000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuEventSynchronize, "cuEventSynchronize", 0, 2000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuEventQuery, "cuEventQuery", 0, 2000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuEventElapsedTime, "cuEventElapsedTime", 0, 2000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuEventElapsedTime_v2, "cuEventElapsedTime", 0, 12080, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuModuleLoadData, "cuModuleLoadData", 0, 2000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuModuleLoadDataEx, "cuModuleLoadDataEx", 0, 2010, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuModuleLoadFatBinary, "cuModuleLoadFatBinary", 0, 2000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuModuleLoad, "cuModuleLoad", 0, 2000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuModuleUnload, "cuModuleUnload", 0, 2000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuLibraryLoadData, "cuLibraryLoadData", 0, 12000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuLibraryLoadFromFile, "cuLibraryLoadFromFile", 0, 12000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuLibraryUnload, "cuLibraryUnload", 0, 12000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuLibraryGetModule, "cuLibraryGetModule", 0, 12000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuKernelGetFunction, "cuKernelGetFunction", 0, 12000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuFuncSetAttribute, "cuFuncSetAttribute", 0, 9000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuFuncSetCacheConfig, "cuFuncSetCacheConfig", 0, 3000, XSI_HARMLESS, XSI_SCOPE_STREAM)

/* Stream calls that are not scheduled: an urgent stream's run on its twin
 * (C) or, what names an object of the program's context, on its own
 * stream after the twin's work (S).  X(symbol, base, per-thread, since,
 * params, args, how). */
#define WV32_P (CUstream h, CUdeviceptr a, cuuint32_t v, unsigned int fl)
#define WV64_P (CUstream h, CUdeviceptr a, cuuint64_t v, unsigned int fl)
#define PF1_P (CUdeviceptr p, size_t n, CUdevice d, CUstream h)
#define PF2_P (CUdeviceptr p, size_t n, CUmemLocation l, unsigned int fl, CUstream h)
#define ALLOC_P (CUdeviceptr *p, size_t n, CUstream h)
#define FREE_P (CUdeviceptr p, CUstream h)
#define POOL_P (CUdeviceptr *p, size_t n, CUmemoryPool mp, CUstream h)
#define ATTACH_P (CUstream h, CUdeviceptr p, size_t n, unsigned int fl)
#define UPLOAD_P (CUgraphExec g, CUstream h)
#define SIG_P (const CUexternalSemaphore *e, const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS *p, \
	       unsigned int n, CUstream h)
#define WSEM_P (const CUexternalSemaphore *e, const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS *p, \
		unsigned int n, CUstream h)
#define ROUTED(X) \
	X(cuStreamWriteValue32, "cuStreamWriteValue32", 0, 8000, WV32_P, (h, a, v, fl), XU_CARRY) \
	X(cuStreamWriteValue32_ptsz, "cuStreamWriteValue32", 1, 8000, WV32_P, (h, a, v, fl), XU_CARRY) \
	X(cuStreamWriteValue64, "cuStreamWriteValue64", 0, 9000, WV64_P, (h, a, v, fl), XU_CARRY) \
	X(cuStreamWriteValue64_ptsz, "cuStreamWriteValue64", 1, 9000, WV64_P, (h, a, v, fl), XU_CARRY) \
	X(cuStreamWriteValue32_v2, "cuStreamWriteValue32", 0, 11070, WV32_P, (h, a, v, fl), XU_CARRY) \
	X(cuStreamWriteValue32_v2_ptsz, "cuStreamWriteValue32", 1, 11070, WV32_P, (h, a, v, fl), XU_CARRY) \
	X(cuStreamWriteValue64_v2, "cuStreamWriteValue64", 0, 11070, WV64_P, (h, a, v, fl), XU_CARRY) \
	X(cuStreamWriteValue64_v2_ptsz, "cuStreamWriteValue64", 1, 11070, WV64_P, (h, a, v, fl), XU_CARRY) \
	X(cuMemPrefetchAsync, "cuMemPrefetchAsync", 0, 8000, PF1_P, (p, n, d, h), XU_CARRY) \
	X(cuMemPrefetchAsync_ptsz, "cuMemPrefetchAsync", 1, 8000, PF1_P, (p, n, d, h), XU_CARRY) \
	X(cuMemPrefetchAsync_v2, "cuMemPrefetchAsync", 0, 12020, PF2_P, (p, n, l, fl, h), XU_CARRY) \
	X(cuMemPrefetchAsync_v2_ptsz, "cuMemPrefetchAsync", 1, 12020, PF2_P, (p, n, l, fl, h), XU_CARRY) \
	X(cuMemAllocAsync, "cuMemAllocAsync", 0, 11020, ALLOC_P, (p, n, h), XU_STAY) \
	X(cuMemAllocAsync_ptsz, "cuMemAllocAsync", 1, 11020, ALLOC_P, (p, n, h), XU_STAY) \
	X(cuMemFreeAsync, "cuMemFreeAsync", 0, 11020, FREE_P, (p, h), XU_STAY) \
	X(cuMemFreeAsync_ptsz, "cuMemFreeAsync", 1, 11020, FREE_P, (p, h), XU_STAY) \
	X(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", 0, 11020, POOL_P, (p, n, mp, h), XU_STAY) \
	X(cuMemAllocFromPoolAsync_ptsz, "cuMemAllocFromPoolAsync", 1, 11020, POOL_P, (p, n, mp, h), XU_STAY) \
	X(cuStreamAttachMemAsync, "cuStreamAttachMemAsync", 0, 6000, ATTACH_P, (h, p, n, fl), XU_STAY) \
	X(cuStreamAttachMemAsync_ptsz, "cuStreamAttachMemAsync", 1, 7000, ATTACH_P, (h, p, n, fl), XU_STAY) \
	X(cuGraphUpload, "cuGraphUpload", 0, 11010, UPLOAD_P, (g, h), XU_CARRY) \
	X(cuGraphUpload_ptsz, "cuGraphUpload", 1, 11010, UPLOAD_P, (g, h), XU_CARRY) \
	X(cuSignalExternalSemaphoresAsync, "cuSignalExternalSemaphoresAsync", 0, 10000, SIG_P, (e, p, n, h), XU_STAY) \
	X(cuSignalExternalSemaphoresAsync_ptsz, "cuSignalExternalSemaphoresAsync", 1, 10000, SIG_P, (e, p, n, h), XU_STAY) \
	X(cuWaitExternalSemaphoresAsync, "cuWaitExternalSemaphoresAsync", 0, 10000, WSEM_P, (e, p, n, h), XU_STAY) \
	X(cuWaitExternalSemaphoresAsync_ptsz, "cuWaitExternalSemaphoresAsync", 1, 10000, WSEM_P, (e, p, n, h), XU_STAY)

#define ENUM_S(sym, base, pt, since, P, A, S, R) E_##sym,
#define ENUM_O(sym, base, pt, since, cls, scope) E_##sym,
#define ENUM_R(sym, base, pt, since, P, A, how) E_##sym,
enum { SCHEDULED(ENUM_S) ORDERED(ENUM_O) ROUTED(ENUM_R) E_COUNT };
static struct xsi_entry entries[E_COUNT];

/* ---- scheduled hooks ---------------------------------------------------- */

/* Where the call runs: an urgent stream's work goes to its twin in the
 * urgent context (cuda_urgent.c), a launched function translated with it.
 * Routed first: the hold is that of the side it runs on (xu_hold_key()). */
#define ROUTE_H h = xu_route(h, NULL, XU_CARRY)
#define ROUTE_F h = xu_route(h, &f, XU_CARRY)
#define ROUTE_EX CUlaunchConfig cfg_copy_; cfg = xu_route_ex(cfg, &f, &cfg_copy_)
#define ROUTE_CB h = xu_route_callback(h, &cb, &data)	/* it gets the program's stream */

#define HOOK_S(sym, base, pt, since, P, A, S, R)			\
	static CUresult (*real_##sym) P;				\
	static CUresult hook_##sym P					\
	{								\
		struct xsi_hold hold_;					\
		CUresult r;						\
									\
		if (!xc_init() || !real_##sym)				\
			return CUDA_ERROR_NOT_INITIALIZED;		\
		uintptr_t s_ = (uintptr_t)(S);				\
									\
		R;							\
		if (xc_no_hold)						\
			return real_##sym A;				\
		xsi_hold_begin(&xc_rt, &entries[E_##sym],		\
			       xu_hold_key(s_, (uintptr_t)(S)), &hold_); \
		r = real_##sym A;					\
		xsi_hold_end(&hold_, r == CUDA_SUCCESS);		\
		return r;						\
	}								\
	EXPORT_AS(sym)
SCHEDULED(HOOK_S)

/* ---- ordered pass-through hooks ----------------------------------------- */

/* The old exported ABIs that cuda.h no longer declares. */
typedef CUresult (*begin_capture_v1_fn)(CUstream);
typedef CUresult (*get_proc_v1_fn)(const char *, void **, int, cuuint64_t);

static CUresult (*real_cuStreamCreate)(CUstream *, unsigned int);
static CUresult (*real_cuStreamCreateWithPriority)(CUstream *, unsigned int, int);
static CUresult (*real_cuStreamSynchronize)(CUstream);
static CUresult (*real_cuStreamSynchronize_ptsz)(CUstream);
static CUresult (*real_cuStreamQuery)(CUstream);
static CUresult (*real_cuStreamQuery_ptsz)(CUstream);
static CUresult (*real_cuCtxSynchronize)(void);
static CUresult (*real_cuCtxSynchronize_v2)(CUcontext);
static CUresult (*real_cuStreamDestroy)(CUstream);
static CUresult (*real_cuStreamDestroy_v2)(CUstream);
static begin_capture_v1_fn real_cuStreamBeginCapture;
static begin_capture_v1_fn real_cuStreamBeginCapture_ptsz;
static CUresult (*real_cuStreamBeginCapture_v2)(CUstream, CUstreamCaptureMode);
static CUresult (*real_cuStreamBeginCapture_v2_ptsz)(CUstream, CUstreamCaptureMode);
static CUresult (*real_cuStreamBeginCaptureToGraph)(CUstream, CUgraph, const CUgraphNode *,
						     const CUgraphEdgeData *, size_t,
						     CUstreamCaptureMode);
static CUresult (*real_cuStreamBeginCaptureToGraph_ptsz)(CUstream, CUgraph, const CUgraphNode *,
							  const CUgraphEdgeData *, size_t,
							  CUstreamCaptureMode);
static CUresult (*real_cuStreamEndCapture)(CUstream, CUgraph *);
static CUresult (*real_cuStreamEndCapture_ptsz)(CUstream, CUgraph *);
static CUresult (*real_cuCtxDestroy)(CUcontext);
static CUresult (*real_cuCtxDestroy_v2)(CUcontext);
static CUresult (*real_cuDevicePrimaryCtxReset)(CUdevice);
static CUresult (*real_cuDevicePrimaryCtxReset_v2)(CUdevice);
static get_proc_v1_fn real_cuGetProcAddress;
static CUresult (*real_cuGetProcAddress_v2)(const char *, void **, int, cuuint64_t,
					     CUdriverProcAddressQueryResult *);

#define READY(sym) do {						\
	if (!xc_init() || !real_##sym)				\
		return CUDA_ERROR_NOT_INITIALIZED;		\
} while (0)

/* The stream a call through @e names (NULL: not scheduled). */
static struct xsi_stream *stream_of(int e, CUstream h)
{
	return xsi_stream_get(&xc_rt, (uintptr_t)h, entries[e].flags);
}

/* A new stream is in the table at once (xc_describe(): a green context's
 * stream names the green context's CUcontext), so that a lower stream is
 * capped from the urgent stream's creation, not from its first call. */
static void created(CUresult r, CUstream *ph, unsigned int flags)
{
	if (r != CUDA_SUCCESS || !ph || !*ph)
		return;
	xu_stream_created(*ph, flags);	/* before the core describes it */
	if (!xc_no_hold)
		(void)xsi_stream_announce(&xc_rt, (uintptr_t)*ph);
}

/* Stream creation: on a partition when XSCHED_CUDA_SM_SPLIT is set, else as
 * asked. */
static CUresult hook_cuStreamCreate(CUstream *ph, unsigned int flags)
{
	CUresult r;

	READY(cuStreamCreate);
	if (!part_stream_create(ph, flags, 0, &r))
		r = real_cuStreamCreate(ph, flags);
	created(r, ph, flags);
	return r;
}
EXPORT_AS(cuStreamCreate)

static CUresult hook_cuStreamCreateWithPriority(CUstream *ph, unsigned int flags, int prio)
{
	CUresult r;

	READY(cuStreamCreateWithPriority);
	if (!part_stream_create(ph, flags, prio, &r))
		r = real_cuStreamCreateWithPriority(ph, flags, prio);
	created(r, ph, flags);
	return r;
}
EXPORT_AS(cuStreamCreateWithPriority)

/* A priority set as a stream attribute (CU_STREAM_ATTRIBUTE_PRIORITY) or
 * copied from another stream: the stream's XQueue follows the driver's. */
#define ATTR_HOOK(sym, P, A, h)						\
	static CUresult (*real_##sym) P;				\
	static CUresult hook_##sym P					\
	{								\
		struct xsi_prio_watch w;				\
		CUresult r;						\
									\
		READY(sym);						\
		xsi_prio_watch_begin(&xc_rt, (uintptr_t)(h), &w);	\
		r = real_##sym A;					\
		xsi_prio_watch_end(&w, r == CUDA_SUCCESS);		\
		return r;						\
	}								\
	EXPORT_AS(sym)
ATTR_HOOK(cuStreamSetAttribute,
	  (CUstream h, CUstreamAttrID a, const CUstreamAttrValue *v), (h, a, v), h)
ATTR_HOOK(cuStreamSetAttribute_ptsz,
	  (CUstream h, CUstreamAttrID a, const CUstreamAttrValue *v), (h, a, v), h)
ATTR_HOOK(cuStreamCopyAttributes, (CUstream dst, CUstream src), (dst, src), dst)
ATTR_HOOK(cuStreamCopyAttributes_ptsz, (CUstream dst, CUstream src), (dst, src), dst)

/* A successful synchronize or query: everything handed over before it ran
 * has completed. */
#define SYNC_HOOK(sym)							\
	static CUresult hook_##sym(CUstream h)				\
	{								\
		struct xsi_sync *y, *y2;				\
		CUresult r;						\
									\
		READY(sym);						\
		(void)xsi_pass(&xc_rt, &entries[E_##sym], (uintptr_t)h); \
		y = xsi_sync_begin(&xc_rt, stream_of(E_##sym, h), XSI_SCOPE_STREAM); \
		y2 = xu_twin(h) ? xsi_sync_begin(&xc_rt, stream_of(E_##sym, \
			(CUstream)((uintptr_t)h | XU_PROGRAM_SIDE)), XSI_SCOPE_STREAM) : NULL; \
		r = xu_twin(h) ? real_##sym(xu_twin(h)) : CUDA_SUCCESS;	\
		if (r == CUDA_SUCCESS)					\
			r = real_##sym(h);				\
		xsi_sync_end(y, r == CUDA_SUCCESS);			\
		if (y2)							\
			xsi_sync_end(y2, r == CUDA_SUCCESS);		\
		return r;						\
	}								\
	EXPORT_AS(sym)
SYNC_HOOK(cuStreamSynchronize)
SYNC_HOOK(cuStreamSynchronize_ptsz)
SYNC_HOOK(cuStreamQuery)
SYNC_HOOK(cuStreamQuery_ptsz)

static CUresult hook_cuCtxSynchronize(void)
{
	struct xsi_sync *y;
	CUresult r;

	READY(cuCtxSynchronize);
	(void)xsi_pass(&xc_rt, &entries[E_cuCtxSynchronize], 0);
	y = xsi_sync_begin(&xc_rt, NULL, XSI_SCOPE_DEVICE);
	r = real_cuCtxSynchronize();
	if (r == CUDA_SUCCESS)
		r = xu_ctx_synchronize();
	xsi_sync_end(y, r == CUDA_SUCCESS);
	return r;
}
EXPORT_AS(cuCtxSynchronize)

/* CUDA 12.9+: synchronize a given context (NULL: the current one); the
 * bookkeeping is that of the current device. */
static CUresult hook_cuCtxSynchronize_v2(CUcontext c)
{
	struct xsi_sync *y;
	CUresult r;

	READY(cuCtxSynchronize_v2);
	(void)xsi_pass(&xc_rt, &entries[E_cuCtxSynchronize_v2], 0);
	y = xsi_sync_begin(&xc_rt, NULL, XSI_SCOPE_DEVICE);
	r = real_cuCtxSynchronize_v2(c);
	if (r == CUDA_SUCCESS && !c)
		r = xu_ctx_synchronize();
	xsi_sync_end(y, r == CUDA_SUCCESS);
	return r;
}
EXPORT_AS(cuCtxSynchronize_v2)

#define DESTROY_HOOK(sym)						\
	static CUresult hook_##sym(CUstream h)				\
	{								\
		READY(sym);						\
		(void)xsi_pass(&xc_rt, &entries[E_##sym], (uintptr_t)h); \
		if (xc_default_kind((uintptr_t)h) == XSI_NOT_DEFAULT)	\
			(void)xsi_stream_destroyed(&xc_rt, (uintptr_t)h); \
		if (xu_stream_urgent(h, NULL))				\
			(void)xsi_stream_destroyed(&xc_rt,		\
				(uintptr_t)h | XU_PROGRAM_SIDE);	\
		xu_stream_destroyed(h);					\
		return real_##sym(h);					\
	}								\
	EXPORT_AS(sym)
DESTROY_HOOK(cuStreamDestroy)
DESTROY_HOOK(cuStreamDestroy_v2)

#define BEGIN_HOOK(sym, P, A)						\
	static CUresult hook_##sym P					\
	{								\
		CUresult r;						\
									\
		READY(sym);						\
		xu_capture_begin(h);					\
		r = real_##sym A;					\
		if (r == CUDA_SUCCESS)					\
			xsi_stream_capture(stream_of(E_##sym, h), true); \
		else							\
			xu_capture_end();				\
		return r;						\
	}								\
	EXPORT_AS(sym)
BEGIN_HOOK(cuStreamBeginCapture, (CUstream h), (h))
BEGIN_HOOK(cuStreamBeginCapture_ptsz, (CUstream h), (h))
BEGIN_HOOK(cuStreamBeginCapture_v2, (CUstream h, CUstreamCaptureMode m), (h, m))
BEGIN_HOOK(cuStreamBeginCapture_v2_ptsz, (CUstream h, CUstreamCaptureMode m), (h, m))
BEGIN_HOOK(cuStreamBeginCaptureToGraph,
	   (CUstream h, CUgraph g, const CUgraphNode *d, const CUgraphEdgeData *dd, size_t n,
	    CUstreamCaptureMode m), (h, g, d, dd, n, m))
BEGIN_HOOK(cuStreamBeginCaptureToGraph_ptsz,
	   (CUstream h, CUgraph g, const CUgraphNode *d, const CUgraphEdgeData *dd, size_t n,
	    CUstreamCaptureMode m), (h, g, d, dd, n, m))

/* The capture ends whatever the result (an invalidated capture too). */
#define END_HOOK(sym)							\
	static CUresult hook_##sym(CUstream h, CUgraph *g)		\
	{								\
		CUresult r;						\
									\
		READY(sym);						\
		r = real_##sym(h, g);					\
		xsi_stream_capture(stream_of(E_##sym, h), false);	\
		xu_capture_end();					\
		return r;						\
	}								\
	EXPORT_AS(sym)
END_HOOK(cuStreamEndCapture)
END_HOOK(cuStreamEndCapture_ptsz)

#define CTX_HOOK(sym)							\
	static CUresult hook_##sym(CUcontext c)				\
	{								\
		READY(sym);						\
		(void)xsi_pass(&xc_rt, &entries[E_##sym], 0);		\
		xsi_context_gone(&xc_rt, (uintptr_t)c, -1);		\
		xu_context_gone(c, -1);					\
		pool_purge(c, -1);					\
		return real_##sym(c);					\
	}								\
	EXPORT_AS(sym)
CTX_HOOK(cuCtxDestroy)
CTX_HOOK(cuCtxDestroy_v2)

#define RESET_HOOK(sym)							\
	static CUresult hook_##sym(CUdevice d)				\
	{								\
		READY(sym);						\
		(void)xsi_pass(&xc_rt, &entries[E_##sym], 0);		\
		xsi_context_gone(&xc_rt, 0, (int32_t)d);		\
		xu_context_gone(NULL, (int32_t)d);			\
		pool_purge(NULL, (int32_t)d);				\
		return real_##sym(d);					\
	}								\
	EXPORT_AS(sym)
RESET_HOOK(cuDevicePrimaryCtxReset)
RESET_HOOK(cuDevicePrimaryCtxReset_v2)

/* ---- the urgent context's bookkeeping (cuda_urgent.c, cuda_code.c) -------- */

static CUresult (*real_cuEventCreate)(CUevent *, unsigned int);
static CUresult hook_cuEventCreate(CUevent *ev, unsigned int flags)
{
	CUresult r;

	READY(cuEventCreate);
	r = real_cuEventCreate(ev, flags);
	if (r == CUDA_SUCCESS && ev)
		xu_event_created(*ev, flags);
	return r;
}
EXPORT_AS(cuEventCreate)

#define EVDESTROY_HOOK(sym)						\
	static CUresult (*real_##sym)(CUevent);				\
	static CUresult hook_##sym(CUevent ev)				\
	{								\
		READY(sym);						\
		xu_event_destroyed(ev);					\
		return real_##sym(ev);					\
	}								\
	EXPORT_AS(sym)
EVDESTROY_HOOK(cuEventDestroy)
EVDESTROY_HOOK(cuEventDestroy_v2)

/* A record on an urgent stream is made on the event's twin (cuda_urgent.c). */
#define RECORD_HOOK(sym, P, A)						\
	static CUresult (*real_##sym) P;				\
	static CUresult hook_##sym P					\
	{								\
		struct xu_record rc;					\
		CUresult r;						\
									\
		READY(sym);						\
		(void)xsi_pass(&xc_rt, &entries[E_##sym], (uintptr_t)h); \
		xu_record_begin(&rc, &ev, &h);				\
		r = real_##sym A;					\
		xu_record_end(&rc, r);					\
		return r;						\
	}								\
	EXPORT_AS(sym)
RECORD_HOOK(cuEventRecord, (CUevent ev, CUstream h), (ev, h))
RECORD_HOOK(cuEventRecord_ptsz, (CUevent ev, CUstream h), (ev, h))
RECORD_HOOK(cuEventRecordWithFlags, (CUevent ev, CUstream h, unsigned int fl), (ev, h, fl))
RECORD_HOOK(cuEventRecordWithFlags_ptsz, (CUevent ev, CUstream h, unsigned int fl), (ev, h, fl))

#define WAIT_HOOK(sym)							\
	static CUresult (*real_##sym)(CUstream, CUevent, unsigned int); \
	static CUresult hook_##sym(CUstream h, CUevent ev, unsigned int fl) \
	{								\
		READY(sym);						\
		(void)xsi_pass(&xc_rt, &entries[E_##sym], (uintptr_t)h); \
		xu_wait_event(&h, &ev);					\
		return real_##sym(h, ev, fl);				\
	}								\
	EXPORT_AS(sym)
WAIT_HOOK(cuStreamWaitEvent)
WAIT_HOOK(cuStreamWaitEvent_ptsz)

#define EVENT_HOOK(sym)							\
	static CUresult (*real_##sym)(CUevent);				\
	static CUresult hook_##sym(CUevent ev)				\
	{								\
		READY(sym);						\
		return real_##sym(xu_event_current(ev));		\
	}								\
	EXPORT_AS(sym)
EVENT_HOOK(cuEventSynchronize)
EVENT_HOOK(cuEventQuery)

#define ELAPSED_HOOK(sym)						\
	static CUresult (*real_##sym)(float *, CUevent, CUevent);	\
	static CUresult hook_##sym(float *ms, CUevent a, CUevent b)	\
	{								\
		READY(sym);						\
		xu_event_pair(&a, &b);					\
		return real_##sym(ms, a, b);				\
	}								\
	EXPORT_AS(sym)
ELAPSED_HOOK(cuEventElapsedTime)
ELAPSED_HOOK(cuEventElapsedTime_v2)

/* Code the program loads: what the urgent context may load again. */
#define LOAD_HOOK(sym, P, A, image, path)				\
	static CUresult (*real_##sym) P;				\
	static CUresult hook_##sym P					\
	{								\
		CUresult r;						\
									\
		READY(sym);						\
		r = real_##sym A;					\
		if (r == CUDA_SUCCESS && m)				\
			xu_module_loaded(*m, image, path);		\
		return r;						\
	}								\
	EXPORT_AS(sym)
LOAD_HOOK(cuModuleLoadData, (CUmodule *m, const void *img), (m, img), img, NULL)
LOAD_HOOK(cuModuleLoadDataEx, (CUmodule *m, const void *img, unsigned int n, CUjit_option *o,
			       void **v), (m, img, n, o, v), img, NULL)
LOAD_HOOK(cuModuleLoadFatBinary, (CUmodule *m, const void *img), (m, img), img, NULL)
LOAD_HOOK(cuModuleLoad, (CUmodule *m, const char *path), (m, path), NULL, path)

#define LIBLOAD_HOOK(sym, P, A)						\
	static CUresult (*real_##sym) P;				\
	static CUresult hook_##sym P					\
	{								\
		CUresult r;						\
									\
		READY(sym);						\
		r = real_##sym A;					\
		if (r == CUDA_SUCCESS && lib)				\
			xu_library_loaded(*lib);			\
		return r;						\
	}								\
	EXPORT_AS(sym)
#define LIB_OPTS CUjit_option *jo, void **jv, unsigned int njo, CUlibraryOption *lo, \
	void **lv, unsigned int nlo
LIBLOAD_HOOK(cuLibraryLoadData, (CUlibrary *lib, const void *code, LIB_OPTS),
	     (lib, code, jo, jv, njo, lo, lv, nlo))
LIBLOAD_HOOK(cuLibraryLoadFromFile, (CUlibrary *lib, const char *file, LIB_OPTS),
	     (lib, file, jo, jv, njo, lo, lv, nlo))

static CUresult (*real_cuModuleUnload)(CUmodule);
static CUresult hook_cuModuleUnload(CUmodule m)
{
	READY(cuModuleUnload);
	xu_module_unloaded(m);
	return real_cuModuleUnload(m);
}
EXPORT_AS(cuModuleUnload)

static CUresult (*real_cuLibraryUnload)(CUlibrary);
static CUresult hook_cuLibraryUnload(CUlibrary lib)
{
	READY(cuLibraryUnload);
	xu_library_unloaded(lib);
	return real_cuLibraryUnload(lib);
}
EXPORT_AS(cuLibraryUnload)

static CUresult (*real_cuLibraryGetModule)(CUmodule *, CUlibrary);
static CUresult hook_cuLibraryGetModule(CUmodule *m, CUlibrary lib)
{
	CUresult r;

	READY(cuLibraryGetModule);
	r = real_cuLibraryGetModule(m, lib);
	if (r == CUDA_SUCCESS && m)
		xu_module_of_library(*m, lib);
	return r;
}
EXPORT_AS(cuLibraryGetModule)

static CUresult (*real_cuKernelGetFunction)(CUfunction *, CUkernel);
static CUresult hook_cuKernelGetFunction(CUfunction *f, CUkernel k)
{
	CUresult r;

	READY(cuKernelGetFunction);
	r = real_cuKernelGetFunction(f, k);
	if (r == CUDA_SUCCESS && f)
		xu_function_of_kernel(*f, k);
	return r;
}
EXPORT_AS(cuKernelGetFunction)

static CUresult (*real_cuFuncSetAttribute)(CUfunction, CUfunction_attribute, int);
static CUresult hook_cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v)
{
	CUresult r;

	READY(cuFuncSetAttribute);
	r = real_cuFuncSetAttribute(f, a, v);
	if (r == CUDA_SUCCESS)
		xu_function_attribute(f, a, v);
	return r;
}
EXPORT_AS(cuFuncSetAttribute)

static CUresult (*real_cuFuncSetCacheConfig)(CUfunction, CUfunc_cache);
static CUresult hook_cuFuncSetCacheConfig(CUfunction f, CUfunc_cache c)
{
	CUresult r;

	READY(cuFuncSetCacheConfig);
	r = real_cuFuncSetCacheConfig(f, c);
	if (r == CUDA_SUCCESS)
		xu_function_cache_config(f, c);
	return r;
}
EXPORT_AS(cuFuncSetCacheConfig)

/* Not scheduled, but kept in the stream's order across the move. */
#define HOOK_R(sym, base, pt, since, P, A, how)				\
	static CUresult (*real_##sym) P;				\
	static CUresult hook_##sym P					\
	{								\
		READY(sym);						\
		(void)xsi_pass(&xc_rt, &entries[E_##sym], (uintptr_t)h); \
		h = xu_route(h, NULL, how);				\
		return real_##sym A;					\
	}								\
	EXPORT_AS(sym)
ROUTED(HOOK_R)

/* The runtime resolves every driver function through here: hand out hooks. */
static CUresult hook_cuGetProcAddress_v2(const char *sym, void **pfn, int ver,
					 cuuint64_t flags,
					 CUdriverProcAddressQueryResult *status)
{
	CUresult r;

	READY(cuGetProcAddress_v2);
	r = real_cuGetProcAddress_v2(sym, pfn, ver, flags, status);
	if (r == CUDA_SUCCESS && pfn && *pfn)
		*pfn = xsi_proc_redirect(&xc_rt, sym, *pfn, ver,
					 flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
	return r;
}
EXPORT_AS(cuGetProcAddress_v2)

static CUresult hook_cuGetProcAddress(const char *sym, void **pfn, int ver,
				      cuuint64_t flags)
{
	CUresult r;

	READY(cuGetProcAddress);
	r = real_cuGetProcAddress(sym, pfn, ver, flags);
	if (r == CUDA_SUCCESS && pfn && *pfn)
		*pfn = xsi_proc_redirect(&xc_rt, sym, *pfn, ver,
					 flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
	return r;
}
EXPORT_AS(cuGetProcAddress)

/* ---- the table ---------------------------------------------------------- */

#define ENT(sym, c, sc, b, pt, s) \
	[E_##sym] = { .name = #sym, .cls = c, .scope = sc, \
		      .flags = (pt) ? XSI_ENTRY_PER_THREAD : 0, .hook = (void *)hook_##sym, \
		      .real = (void **)&real_##sym, .base = b, .since = s },
#define ENT_S(sym, b, pt, s, P, A, S, R) ENT(sym, XSI_SCHEDULED, XSI_SCOPE_STREAM, b, pt, s)
#define ENT_O(sym, b, pt, s, c, sc) ENT(sym, c, sc, b, pt, s)
/* A routed entry is a harmless pass-through for the core. */
#define ENT_R(sym, b, pt, s, P, A, how) ENT(sym, XSI_HARMLESS, XSI_SCOPE_STREAM, b, pt, s)
static struct xsi_entry entries[E_COUNT] = { SCHEDULED(ENT_S) ORDERED(ENT_O) ROUTED(ENT_R) };

static const char *const libs[] = { "libcuda.so.1", NULL };

struct xsi_runtime xc_rt = {
	.name = "cuda",
	.libs = libs,
	.entries = entries,
	.flags = XSI_RT_CALLER_HELD,
	.per_thread_handle = (uintptr_t)CU_STREAM_PER_THREAD,
	.nentries = E_COUNT,
	.default_kind = xc_default_kind,
	.current_device = xc_current_device,
	.device_count = xc_device_count,
	.describe = xc_describe,
	.enter = xc_enter,
	.mark_record = xc_mark_record,
	.mark_wait = xc_mark_wait,
	.mark_free = xc_mark_free,
	.is_capturing = xc_is_capturing,
};

/* Every dlsym() of the process: driver functions get their hooks. */
XSI_EARLY __attribute__((visibility("default"))) void *dlsym(void *handle, const char *name)
{
	void *r = xsi_real_dlsym(handle, name);

	/* RTLD_NEXT is relative to the caller, which the real dlsym now takes
	 * to be us: what it found is the next definition after this library. */
	if (handle == RTLD_NEXT || !r || name[0] != 'c' || name[1] != 'u' || !xc_init())
		return r;
	return xsi_dlsym(handle, name, r);
}

/* dlvsym() likewise. */
XSI_EARLY __attribute__((visibility("default"))) void *dlvsym(void *handle, const char *name,
							  const char *version)
{
	void *r = xsi_real_dlvsym(handle, name, version);

	if (handle == RTLD_NEXT || !r || name[0] != 'c' || name[1] != 'u' || !xc_init())
		return r;
	return xsi_dlsym(handle, name, r);
}
