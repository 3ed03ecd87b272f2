// SPDX-License-Identifier: MIT
/*
 * The urgent context: Lv3 on NVIDIA without a driver patch
 * (XSCHED_CUDA_LV3, Documentation/cuda.rst "Lv3: the urgent context").
 *
 * Inside one context nothing stops a running kernel: stream priorities and
 * green contexts only order what is dispatched next.  Separate contexts of
 * one process are time-sliced by the driver with compute preemption, so a
 * kernel of one context is stopped partway when another context has work,
 * and resumed where it stopped.  So the work of an urgent stream (created
 * non-blocking with a CUDA priority above the device's lowest) runs on a
 * twin stream of a context this library owns, one per device, made at the
 * first urgent stream.  The program keeps its handles; what names a
 * context-bound object is translated on the way:
 *
 *  - Launches: a CUkernel (context-free) runs as it is; a CUfunction got
 *    from cuKernelGetFunction runs as its CUkernel; a CUfunction of a module
 *    the program loaded runs as the same-named function of that module's
 *    image loaded again in the urgent context, with the attributes the
 *    program set on it; of a library's module, as the library's CUkernel.
 *  - Events: a record on an urgent stream is made on a twin event in the
 *    urgent context; a wait, synchronize, query or elapsed time uses the one
 *    recorded last (cuda/events.c).
 *  - Synchronize and query of an urgent stream cover its twin; a context
 *    synchronize covers the urgent context; destroy destroys the twin.
 *  - What cannot be carried runs on the program's own stream in its own
 *    context (named once in the log): a function of unknown origin, stream
 *    capture, memory pool allocations, external semaphores, launches that
 *    name events.  The stream's order holds across the move: when a stream's
 *    calls change side, the new side waits for an event recorded after the
 *    old side's last command (a join).
 *
 * Only non-blocking streams move: a blocking stream synchronizes with the
 * legacy default stream of its context, which a twin could not.
 *
 * Whether a burst of an urgent stream (its work between two synchronizes)
 * runs here at all is chosen per stream from the bursts' latency
 * (interpose/mode.c): natively, here call by call, here gathered
 * (cuda/gather.c), or on its own stream with Lv1 holds.
 *
 * With the urgent context off (the default), urgent streams are followed
 * all the same, blocking ones too, and the choice is made between the two
 * modes that need no context: native and Lv1 holds (XSCHED_CUDA_HOLD=auto,
 * cuda/hooks.c): holds that buy the urgent job nothing stop costing the batch
 * job.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../../internal.h"
#include "../interpose.h"
#include "driver.h"
#include "code.h"
#include "gather.h"
#include "../mode.h"
#include "urgent.h"
#include "env.h"
#include "../handle_table.h"

#define XU_DEVS 16		/* devices with an urgent context */

static bool lv3;			/* XSCHED_CUDA_LV3 and the driver allow it */
/* Urgent streams are followed and their bursts' mode chosen: the urgent
 * context is on, or (it off) Lv1 holds are chosen per burst against none
 * (XSCHED_CUDA_HOLD unset or auto: the modes native and lv1 only). */
static bool tracked;
static int forced_mode = -1;		/* XSCHED_CUDA_LV3_MODE; -1: auto */
static uint32_t price = XM_PRICE_DEFAULT;	/* XSCHED_CUDA_LV3_PRICE, % */
static bool burst_log;			/* XSCHED_CUDA_BURST_LOG: each burst told */
static struct xsi_runtime *xrt;		/* the wing's, for the cap (cap_sync()) */
static atomic_uint nurgent;		/* urgent streams alive: 0 keeps calls cheap */
static atomic_int ncaptures;		/* captures begun and not ended */

/* The stream table's lock: held for a lookup only, never across
 * a driver call. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Making an urgent context (a driver call of milliseconds): under its own
 * lock, so that lookups go on meanwhile. */
static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
/* The cap's changes, one at a time, so that they reach the core in the
 * order they were decided (taken before the core's lock, never under the
 * table's: cuda/driver.h). */
static pthread_mutex_t cap_lock = PTHREAD_MUTEX_INITIALIZER;

struct xu_dev {
	CUcontext ctx;		/* the urgent context, or NULL */
	bool failed;		/* it could not be made: never tried again */
};
static struct xu_dev devs[XU_DEVS];

struct xu_stream {
	CUstream h;		/* the program's */
	CUcontext ctx;		/* the program's context of it */
	int dev;
	int prio;		/* CUDA priority, for the twin */
	CUstream twin;		/* NULL until its first carried call */
	CUevent ev_orig, ev_twin;	/* joins, one in each context */
	atomic_int side;	/* where its last command went */
	struct xg_gate gate;	/* its twin's (cuda/gather.c) */
	struct xm_burst bursts;	/* how they run (interpose/mode.c) */
	atomic_uint told;	/* changes of its choice (the first 16 logged) */
	atomic_uint wd_seen;	/* the last watchdog opening of its gate counted */
	atomic_uint last_told;	/* the last burst told (XSCHED_CUDA_BURST_LOG) */
	pthread_mutex_t side_lock;	/* a change of side and its join */
	bool twin_failed;
	/* Whether its program side caps lower streams now (cap_sync()),
	 * changed under cap_lock. */
	atomic_bool capping;
	/* The table's reference and each stream_get()'s: a thread that found
	 * it (an event's synchronize ending its burst) may use it while
	 * another destroys the stream; the last put frees it. */
	atomic_uint refs;
	bool gone;		/* out of the table (under cap_lock): caps nothing */
};

static struct xsi_htable streams;

static void tell_modes(void);

void xu_fork_prepare(void)
{
	pthread_mutex_lock(&dev_lock);
	pthread_mutex_lock(&lock);
}

void xu_fork_parent(void)
{
	pthread_mutex_unlock(&lock);
	pthread_mutex_unlock(&dev_lock);
}

/* The child cannot use its parent's contexts: it follows nothing (what the
 * tables held is left, not freed: it names the parent's objects). */
void xu_fork_child(void)
{
	pthread_mutex_init(&lock, NULL);
	pthread_mutex_init(&dev_lock, NULL);
	pthread_mutex_init(&cap_lock, NULL);
	if (!tracked)
		return;
	memset(&streams, 0, sizeof(streams));
	memset(devs, 0, sizeof(devs));
	atomic_store(&nurgent, 0);
	atomic_store(&ncaptures, 0);
}

bool xu_init(struct xsi_runtime *rt, bool split, bool choose_hold)
{
	struct xu_env env;

	xu_env_read(&env, split);
	lv3 = env.lv3;
	if (!lv3 && (split || !choose_hold))
		return false;
	if (!lv3 && (!xc_drv.ctx_push || !xc_drv.ctx_pop || !xc_drv.ctx_get_device || !xc_drv.ctx_get_current ||
		     !xc_drv.prio_range || !xc_drv.stream_get_ctx || !xc_drv.stream_get_priority)) {
		xs_warn("cuda: this libcuda lacks what choosing Lv1 holds needs; every urgent stream's work holds lower streams (XSCHED_CUDA_HOLD=1)");
		return false;
	}
	forced_mode = lv3 ? env.forced_mode : -1;
	price = env.price;
	burst_log = env.burst_log;
	if (lv3)
		xg_init();
	atexit(tell_modes);
	xrt = rt;
	tracked = true;
	return true;
}

bool xu_on(void)
{
	return lv3;
}

/* ---- the urgent contexts --------------------------------------------------- */

/* The urgent context of @dev, made at its first use with the scheduling
 * flags of the program's context (current now). */
static CUcontext dev_ctx(int dev)
{
	struct xu_dev *d = &devs[dev];
	CUctxCreateParams p;
	unsigned int flags = 0;
	CUcontext c = NULL, old;
	CUresult r;

	pthread_mutex_lock(&dev_lock);
	if (d->ctx || d->failed) {
		pthread_mutex_unlock(&dev_lock);
		return d->ctx;
	}
	if (xc_drv.ctx_get_flags && xc_drv.ctx_get_flags(&flags) == CUDA_SUCCESS)
		flags &= CU_CTX_SCHED_MASK;
	else
		flags = 0;
	memset(&p, 0, sizeof(p));
	r = xc_drv.ctx_create_v4 ? xc_drv.ctx_create_v4(&c, &p, flags, (CUdevice)dev) :
	    xc_drv.ctx_create_v2(&c, flags, (CUdevice)dev);
	if (r != CUDA_SUCCESS) {
		d->failed = true;
		pthread_mutex_unlock(&dev_lock);
		xs_warn("cuda: device %d: the urgent context cannot be made (CUresult %d); its urgent streams stay in their context (Lv1 only)",
			dev, (int)r);
		return NULL;
	}
	xg_setup();		/* cuCtxCreate made it current */
	xc_drv.ctx_pop(&old);
	d->ctx = c;
	/* before any urgent stream of it runs: what the program loaded */
	xu_code_context_made(dev, c);
	pthread_mutex_unlock(&dev_lock);
	xc_log("device %d: urgent context %p made", dev, (void *)c);
	return c;
}

/* ---- streams --------------------------------------------------------------- */

bool xu_tracking(void)
{
	return tracked;
}

void xu_stream_created(CUstream h, unsigned int flags, const int *priop)
{
	struct xu_stream *s;
	int least = 0, greatest = 0, prio;
	CUcontext ctx = NULL;
	CUdevice dev = 0;

	if (!tracked || !h || !priop)
		return;
	prio = *priop;
	if (xc_drv.prio_range(&least, &greatest) != CUDA_SUCCESS || prio >= least)
		return;
	if (lv3 && !(flags & CU_STREAM_NON_BLOCKING)) {
		xc_log("stream %p: urgent but blocking (it synchronizes with the legacy stream): stays in its context",
			(void *)h);
		return;
	}
	if (xc_drv.stream_get_ctx(h, &ctx) != CUDA_SUCCESS || xc_drv.ctx_get_device(&dev) != CUDA_SUCCESS ||
	    dev < 0 || dev >= XU_DEVS || (lv3 && !dev_ctx((int)dev)))
		return;
	s = calloc(1, sizeof(*s));
	if (!s)
		return;
	s->h = h;
	s->ctx = ctx;
	s->dev = (int)dev;
	s->prio = prio;
	atomic_init(&s->refs, 1);
	{
		/* The urgent context off: Lv1 holds or none. */
		bool have[XM_NMODES] = { [XM_NATIVE] = 1, [XM_GATHER] = lv3 && xg_on(),
					 [XM_CTX] = lv3, [XM_LV1] = 1 };

		xm_burst_init(&s->bursts, forced_mode, have, price);
	}
	pthread_mutex_init(&s->side_lock, NULL);
	atomic_init(&s->capping, false);	/* its program side is not known yet */
	pthread_mutex_lock(&lock);
	if (!xsi_ht_put(&streams, h, s)) {
		pthread_mutex_unlock(&lock);
		pthread_mutex_destroy(&s->side_lock);
		xm_burst_fini(&s->bursts);
		free(s);
		return;
	}
	atomic_fetch_add(&nurgent, 1);
	pthread_mutex_unlock(&lock);
	if (lv3)
		xc_log("stream %p: urgent (priority %d): its work runs in the urgent context",
		     (void *)h, prio);
	else
		xc_log("stream %p: urgent (priority %d): its bursts hold lower streams (Lv1) where that is measured to pay",
		     (void *)h, prio);
}

/* The last reference gone (stream_put()). */
static void stream_free(struct xu_stream *s)
{
	/* The twin's work still runs: destroy returns at once, as the
	 * program's own destroy did. */
	if (s->twin)
		xc_drv.stream_destroy(s->twin);
	if (s->ev_twin)
		xc_drv.event_destroy(s->ev_twin);
	if (s->ev_orig)
		xc_drv.event_destroy(s->ev_orig);
	pthread_mutex_destroy(&s->side_lock);
	xm_burst_fini(&s->bursts);
	free(s);
}

static void stream_put(struct xu_stream *s)
{
	if (s && atomic_fetch_sub(&s->refs, 1) == 1)
		stream_free(s);
}

void xu_stream_destroyed(CUstream h)
{
	struct xu_stream *s;

	if (!atomic_load(&nurgent))
		return;
	/* Under cap_lock: no change of its cap is under way, and none comes
	 * after (caps_sync_of() looks it up again), so no program side is
	 * made again once forgotten here. */
	pthread_mutex_lock(&cap_lock);
	pthread_mutex_lock(&lock);
	s = xsi_ht_del(&streams, h);
	if (s) {
		atomic_fetch_sub(&nurgent, 1);
		s->gone = true;
	}
	pthread_mutex_unlock(&lock);
	if (s)	/* its program side's work runs on (the core sees to that) */
		(void)xsi_stream_destroyed(xrt, (uintptr_t)h | XU_PROGRAM_SIDE);
	pthread_mutex_unlock(&cap_lock);
	if (s) {
		xg_open();	/* its work runs on, as the program's would */
		stream_put(s);
	}
}

/* The urgent stream @h, or NULL; a reference the caller puts. */
static struct xu_stream *stream_get(CUstream h)
{
	struct xu_stream *s;

	if (!atomic_load_explicit(&nurgent, memory_order_relaxed) || !h ||
	    h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD)
		return NULL;
	pthread_mutex_lock(&lock);
	s = xsi_ht_get(&streams, h);
	if (s)
		atomic_fetch_add(&s->refs, 1);
	pthread_mutex_unlock(&lock);
	return s;
}

/* cap_lock held: @h's program side caps lower streams or not (@want).
 * Not known to the core yet (nothing ran there): made now, capping nothing
 * until armed (its description says cap_off), then armed. */
static void cap_apply(CUstream h, bool want)
{
	uintptr_t k = (uintptr_t)h | XU_PROGRAM_SIDE;

	if (xsi_stream_caps(xrt, k, want) == -ENOENT && want &&
	    xsi_stream_announce(xrt, k, NULL))
		(void)xsi_stream_caps(xrt, k, want);
}

/*
 * Lv1's cap follows the choice: @s's program side caps the lower streams
 * of its device only while its bursts run lv1 or the next one will
 * (xm_burst.caps).  A capped stream's thread waits for room every
 * `threshold` calls, issuing nothing meanwhile: a cost that buys nothing
 * while no burst is held (Documentation/cuda.rst, "The cap follows the
 * choice").  @s is the caller's (a call or synchronize of it); not under
 * the table's lock.  The check is repeated under cap_lock until what was
 * applied is what the choice wants: a change made meanwhile by another
 * thread, which saw it as applied already, is applied here.
 */
static void cap_sync(struct xu_stream *s)
{
	bool want;

	if (atomic_load_explicit(&s->bursts.caps, memory_order_relaxed) ==
	    atomic_load_explicit(&s->capping, memory_order_relaxed))
		return;
	pthread_mutex_lock(&cap_lock);
	/* A stream another thread destroyed meanwhile (this one still holds
	 * it) has no program side to arm any more. */
	while ((want = atomic_load(&s->bursts.caps) && !s->gone) !=
	       atomic_load(&s->capping)) {
		atomic_store(&s->capping, want);
		cap_apply(s->h, want);
	}
	pthread_mutex_unlock(&cap_lock);
}

bool xu_stream_urgent(CUstream h, int32_t *pseudo_dev)
{
	struct xu_stream *s = stream_get(h);

	if (s && pseudo_dev)
		*pseudo_dev = XU_DEV_BASE + s->dev;
	stream_put(s);
	return s != NULL;
}

CUcontext xu_urgent_ctx(CUstream h)
{
	struct xu_stream *s = stream_get(h);
	CUcontext c = s ? devs[s->dev].ctx : NULL;

	stream_put(s);
	return c;
}

/* side_lock held: the twin stream and the two join events. */
static bool twin_make(struct xu_stream *s)
{
	CUcontext old, uctx = devs[s->dev].ctx;
	bool ok;

	if (s->twin)
		return true;
	if (s->twin_failed || !uctx || xc_drv.ctx_push(uctx) != CUDA_SUCCESS)
		return false;
	ok = xc_drv.stream_create(&s->twin, CU_STREAM_NON_BLOCKING, s->prio) == CUDA_SUCCESS &&
	     xc_drv.event_create(&s->ev_twin, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS;
	xc_drv.ctx_pop(&old);
	if (ok && xc_drv.ctx_push(s->ctx) == CUDA_SUCCESS) {
		ok = xc_drv.event_create(&s->ev_orig, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS;
		xc_drv.ctx_pop(&old);
	} else {
		ok = false;
	}
	if (!ok) {
		xs_warn("cuda: stream %p: its twin in the urgent context cannot be made; it stays in its context",
			(void *)s->h);
		if (s->twin)
			xc_drv.stream_destroy(s->twin);
		if (s->ev_twin)
			xc_drv.event_destroy(s->ev_twin);
		s->twin = NULL;
		s->ev_twin = NULL;
		s->twin_failed = true;
	}
	return ok;
}

/* Make @s's next command go to @want, after everything it was given so far. */
static int side_set(struct xu_stream *s, int want)
{
	CUstreamCaptureMode m;
	bool sw;
	CUresult r;

	if (atomic_load_explicit(&s->side, memory_order_acquire) == want &&
	    (want == SIDE_ORIG || s->twin))
		return want;
	pthread_mutex_lock(&s->side_lock);
	if (want == SIDE_TWIN && !twin_make(s))
		want = SIDE_ORIG;
	if (atomic_load(&s->side) != want) {
		m = xc_relax(&sw);
		if (want == SIDE_ORIG) {
			r = xc_drv.event_record(s->ev_twin, s->twin);
			if (r == CUDA_SUCCESS)
				r = xc_drv.stream_wait_event(s->h, s->ev_twin, 0);
			xg_depend();
		} else {
			r = xc_drv.event_record(s->ev_orig, s->h);
			if (r == CUDA_SUCCESS)
				r = xc_drv.stream_wait_event(s->twin, s->ev_orig, 0);
		}
		xc_unrelax(sw, m);
		if (r != CUDA_SUCCESS)
			xs_warn("cuda: stream %p: the join of its two sides failed (CUresult %d)",
				(void *)s->h, (int)r);
		atomic_store_explicit(&s->side, want, memory_order_release);
		xc_log("stream %p: now runs %s", (void *)s->h,
			want == SIDE_TWIN ? "in the urgent context" : "in its own context");
	}
	pthread_mutex_unlock(&s->side_lock);
	return want;
}

bool xu_capturing(CUstream h)
{
	CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;

	if (!atomic_load(&ncaptures))
		return false;
	return xc_drv.stream_is_capturing(h, &cs) != CUDA_SUCCESS ||
	       cs != CU_STREAM_CAPTURE_STATUS_NONE;
}

/* ---- bursts (interpose/mode.c) ------------------------------------------ */

/* With XSCHED_CUDA_BURST_LOG=1 (at XSCHED_LOG=info), the burst that just
 * ended, once: traces of real bursts, for the choice's host tests. */
static void tell_burst(struct xu_stream *s)
{
	struct xm_state st;

	if (!burst_log)
		return;
	xm_burst_state(&s->bursts, &st);
	if (!st.last.burst || atomic_exchange(&s->last_told, st.last.burst) == st.last.burst)
		return;
	xs_info("cuda: stream %p: burst %u: %s, span %u us, wait %u us, idle before %u us",
		(void *)s->h, st.last.burst, xm_name(st.last.mode), st.last.span, st.last.wait,
		st.last.idle);
}

/* A synchronize begun at @since ended @s's burst: a change of its choice
 * is told (a few per stream, then in the debug log).  Under the table's
 * lock (each_stream()) or not: its cap is synced by the caller. */
static void burst_ended(struct xu_stream *s, uint64_t since)
{
	struct xm_state st;
	unsigned int told;
	char w[128];
	bool changed = xm_burst_end(&s->bursts, since, xs_now_ns(), &st);

	tell_burst(s);
	if (!changed)
		return;
	if (st.restarts && st.started == st.burst) {
		/* (told always: at most once every XM_AGE bursts) */
		xs_info("cuda: stream %p: its bursts' host time changed %d-fold or more (other work, as a program's set-up giving way to its requests): every mode is measured again from burst %u",
			(void *)s->h, XM_SCALE, st.burst);
		return;
	}
	told = atomic_fetch_add(&s->told, 1);
	if (told < 16 || xsi_log_on()) {
		xm_waits(&st, w, sizeof(w));
		xs_info("cuda: stream %p: urgent bursts %srun %s after %u bursts (us, median wait/tail span: %s)",
			(void *)s->h, told ? "now " : "", xm_name(st.best), st.burst, w);
	}
}

static void burst_end(struct xu_stream *s, uint64_t since)
{
	burst_ended(s, since);
	cap_sync(s);
}

/* @s's gathered burst waited for the watchdog: the program waits for it in
 * a way the library does not see (a host polling memory), so the burst
 * ends, a loss of the watchdog's time for the gather. */
static void burst_cut(struct xu_stream *s)
{
	struct xm_state st;
	char w[128];
	bool changed = xm_burst_cut(&s->bursts, xg_max_us(), xs_now_ns(), &st);

	tell_burst(s);
	cap_sync(s);
	if (!changed) {
		xc_log("stream %p: its gathered burst waited for the watchdog: ended, a loss for the gather",
		     (void *)s->h);
		return;
	}
	xm_waits(&st, w, sizeof(w));
	xs_info("cuda: stream %p: urgent bursts now run %s after %u bursts (the watchdog started a gathered one; us, median wait/tail span: %s)",
		(void *)s->h, xm_name(st.best), st.burst, w);
}

/* @fn(stream, @arg) on every urgent stream (of the program's context @ctx
 * only, unless NULL), under the table's lock: a stream is freed only after
 * it leaves the table (@fn calls no driver). */
static void each_stream(void (*fn)(struct xu_stream *, uint64_t), uint64_t arg, CUcontext ctx)
{
	unsigned int i;

	if (!atomic_load(&nurgent))
		return;
	pthread_mutex_lock(&lock);
	for (i = 0; i < XSI_HT_SLOTS; i++) {
		struct xu_stream *s = xsi_ht_at(&streams, i);

		if (s && (!ctx || s->ctx == ctx))
			fn(s, arg);
	}
	pthread_mutex_unlock(&lock);
}

/* The caps of @ctx's urgent streams brought to what their choices want,
 * after their bursts ended under the table's lock (each_stream()), where
 * the core's lock may not be taken.  Another thread may destroy one of
 * them meanwhile: each is looked up again under the table's lock, and
 * nothing of it is used past that lock but its handle.  Past XU_SYNC_MAX
 * streams at a time, a stream's cap follows at its next call. */
#define XU_SYNC_MAX 64
static void caps_sync_of(CUcontext ctx)
{
	CUstream h[XU_SYNC_MAX];
	struct xu_stream *s;
	unsigned int i, n = 0;
	bool want;

	if (!atomic_load(&nurgent))
		return;
	pthread_mutex_lock(&lock);
	for (i = 0; i < XSI_HT_SLOTS && n < XU_SYNC_MAX; i++) {
		s = xsi_ht_at(&streams, i);
		if (s && s->ctx == ctx &&
		    atomic_load(&s->bursts.caps) != atomic_load(&s->capping))
			h[n++] = s->h;
	}
	pthread_mutex_unlock(&lock);
	pthread_mutex_lock(&cap_lock);
	for (i = 0; i < n; i++) {
		pthread_mutex_lock(&lock);
		s = xsi_ht_get(&streams, h[i]);
		want = s && atomic_load(&s->bursts.caps);
		if (s)
			atomic_store(&s->capping, want);
		pthread_mutex_unlock(&lock);
		if (s)
			cap_apply(h[i], want);
	}
	pthread_mutex_unlock(&cap_lock);
}

/* How a stream's bursts ran (what the choice did). */
static void tell_mode(struct xu_stream *s, uint64_t unused)
{
	struct xm_state st;
	char w[128];

	(void)unused;
	xm_burst_state(&s->bursts, &st);
	if (!st.burst)
		return;
	xm_waits(&st, w, sizeof(w));
	xs_info("cuda: stream %p: %u urgent bursts: %u native, %u gather, %u ctx, %u lv1 (us, median wait/tail span: %s); last choice %s",
		(void *)s->h, st.burst, st.runs[XM_NATIVE], st.runs[XM_GATHER],
		st.runs[XM_CTX], st.runs[XM_LV1], w, xm_name(st.best));
}

/* At exit. */
static void tell_modes(void)
{
	each_stream(tell_mode, 0, NULL);
}

#ifdef XSCHED_TEST_SEAMS
/* Tests only: another thread destroys the stream at the worst moment of a
 * synchronize's end, after it was found. */
static void seam_destroy_in_sync(CUstream h)
{
	if (getenv("XSCHED_TEST_DESTROY_IN_SYNC"))
		xu_stream_destroyed(h);
}
#else
static inline void seam_destroy_in_sync(CUstream h)
{
	(void)h;
}
#endif

void xu_stream_synchronized(CUstream h, uint64_t since, uint64_t recorded)
{
	struct xu_stream *s = stream_get(h);

	seam_destroy_in_sync(h);
	/* An event recorded before the burst in progress began (an old one
	 * polled) does not end it. */
	if (s && (!recorded || recorded >= atomic_load(&s->bursts.t0)))
		burst_end(s, since);
	stream_put(s);
}

static CUstream route(struct xu_stream *s, CUstream h, CUfunction *f, enum xu_how how,
		      uintptr_t *key)
{
	int want = SIDE_TWIN, mode;
	bool first = false;

	if (how == XU_OPEN || (!s && how == XU_GATHER))
		/* (a launch elsewhere may load its function, which waits for
		 * a stream that waits for gated work) */
		xg_open_for(s != NULL);
	if (!s) {
		if (f)		/* loaded in the program's context: here too */
			xu_code_launched(*f, -1);
		return h;
	}
	if (atomic_load_explicit(&s->bursts.mode, memory_order_relaxed) == XM_GATHER &&
	    xg_watchdog_opened(&s->gate, &s->wd_seen))
		burst_cut(s);
	mode = xm_burst_mode(&s->bursts, xs_now_ns, NULL);
	cap_sync(s);
	if (mode == XM_NATIVE || mode == XM_LV1) {
		/* Its own stream: as without the library, holding nothing
		 * (the key stays that of the urgent side), or as Lv1 does. */
		if (f)
			xu_code_launched(*f, s->dev);
		side_set(s, SIDE_ORIG);
		if (key && mode == XM_LV1)
			*key = (uintptr_t)h | XU_PROGRAM_SIDE;
		return h;
	}
	if (how == XU_STAY || xu_capturing(h) ||
	    (f && !xu_code_translate(s->dev, f, &first)))
		want = SIDE_ORIG;
	if (first) {
		/* Its first launch there loads it, which waits for the
		 * context's work: none of it may wait behind a gate (until
		 * the call returned: xg_call_done()). */
		xg_pause_call();
		how = XU_CARRY;
	}
	if (side_set(s, want) == SIDE_TWIN) {
		if (how == XU_GATHER && mode == XM_GATHER)
			xg_close(&s->gate, s->twin);
		return s->twin;
	}
	if (key)	/* its work in the program's context holds as such */
		*key = (uintptr_t)h | XU_PROGRAM_SIDE;
	return h;
}

CUstream xu_route(CUstream h, CUfunction *f, enum xu_how how, uintptr_t *key)
{
	struct xu_stream *s = stream_get(h);
	CUstream on = route(s, h, f, how, key);

	stream_put(s);
	return on;
}

const CUlaunchConfig *xu_route_ex(const CUlaunchConfig *cfg, CUfunction *f,
				  CUlaunchConfig *copy, uintptr_t *key)
{
	enum xu_how how = XU_GATHER;
	CUstream on;
	unsigned int i;

	if (!cfg)
		return cfg;
	for (i = 0; i < cfg->numAttrs && cfg->attrs; i++) {
		if (cfg->attrs[i].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT ||
		    cfg->attrs[i].id == CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT)
			how = XU_STAY;	/* it names an event of the program's context */
	}
	on = xu_route(cfg->hStream, f, how, key);
	if (on == cfg->hStream)
		return cfg;
	*copy = *cfg;
	copy->hStream = on;
	return copy;
}

/* A stream callback is told its stream: the program's, not the twin. */
struct xu_cb {
	CUstreamCallback cb;
	void *data;
	CUstream h;
};

static void CUDA_CB callback_of_twin(CUstream twin, CUresult st, void *p)
{
	struct xu_cb c = *(struct xu_cb *)p;

	(void)twin;
	free(p);
	c.cb(c.h, st, c.data);
}

CUstream xu_route_callback(CUstream h, CUstreamCallback *cb, void **data, uintptr_t *key)
{
	CUstream on;
	struct xu_cb *c;

	if (!xu_stream_urgent(h, NULL) || !*cb)
		return xu_route(h, NULL, XU_OPEN, key);
	c = malloc(sizeof(*c));
	if (!c)
		return xu_route(h, NULL, XU_STAY, key);
	on = xu_route(h, NULL, XU_OPEN, key);
	if (on == h) {
		free(c);
		return h;
	}
	c->cb = *cb;
	c->data = *data;
	c->h = h;
	*cb = callback_of_twin;
	*data = c;
	return on;
}

void xu_mark_target(CUstream h, CUstream *on, CUcontext *ctx)
{
	struct xu_stream *s = stream_get(h);

	if (s && atomic_load(&s->side) == SIDE_TWIN && s->twin) {
		*on = s->twin;
		*ctx = devs[s->dev].ctx;
	}
	stream_put(s);
}

CUstream xu_twin(CUstream h)
{
	struct xu_stream *s = stream_get(h);
	CUstream twin = s ? s->twin : NULL;

	stream_put(s);
	return twin;
}

CUresult xu_ctx_synchronize(CUcontext of, uint64_t since)
{
	CUdevice dev = 0;
	CUcontext c, old;
	CUresult r;

	if (!tracked || (!of && xc_drv.ctx_get_current(&of) != CUDA_SUCCESS) || !of)
		return CUDA_SUCCESS;
	if (!lv3) {	/* the program's synchronize covered them all */
		each_stream(burst_ended, since, of);
		caps_sync_of(of);
		return CUDA_SUCCESS;
	}
	/* Not only while urgent streams live: a destroyed one's work runs on. */
	if (xc_drv.ctx_push(of) != CUDA_SUCCESS)
		return CUDA_SUCCESS;
	r = xc_drv.ctx_get_device(&dev);
	xc_drv.ctx_pop(&old);
	if (r != CUDA_SUCCESS || dev < 0 || dev >= XU_DEVS)
		return CUDA_SUCCESS;
	pthread_mutex_lock(&lock);
	c = devs[dev].ctx;
	pthread_mutex_unlock(&lock);
	if (!c || xc_drv.ctx_push(c) != CUDA_SUCCESS)
		return CUDA_SUCCESS;
	r = xc_drv.ctx_sync();
	xc_drv.ctx_pop(&old);
	if (r == CUDA_SUCCESS) {	/* the bursts of @of's urgent streams ended (both sides) */
		each_stream(burst_ended, since, of);
		caps_sync_of(of);
	}
	return r;
}

void xu_capture_begin(CUstream h)
{
	struct xu_stream *s;

	if (!lv3)
		return;
	atomic_fetch_add(&ncaptures, 1);
	s = stream_get(h);
	if (s)
		side_set(s, SIDE_ORIG);	/* before it captures: the join is not captured */
	stream_put(s);
}

void xu_capture_end(void)
{
	if (lv3 && atomic_load(&ncaptures) > 0)
		atomic_fetch_sub(&ncaptures, 1);
}

void xu_context_gone(CUcontext ctx, int32_t device)
{
	struct xu_stream *gone[64];
	unsigned int i, n;

	xg_open();	/* what it left gathered runs, or fails with it */
	if (!atomic_load(&nurgent))
		return;
	do {
		n = 0;
		pthread_mutex_lock(&cap_lock);	/* no program side made again */
		pthread_mutex_lock(&lock);
		for (i = 0; i < XSI_HT_SLOTS && n < 64; i++) {
			struct xu_stream *s = xsi_ht_at(&streams, i);

			if (s && (s->ctx == ctx || (device >= 0 && s->dev == device))) {
				xsi_ht_del_at(&streams, i);
				s->gone = true;
				gone[n++] = s;
				atomic_fetch_sub(&nurgent, 1);
			}
		}
		pthread_mutex_unlock(&lock);
		/* Their program sides go too, whoever re-made one meanwhile. */
		for (i = 0; i < n; i++)
			(void)xsi_stream_destroyed(xrt,
						   (uintptr_t)gone[i]->h | XU_PROGRAM_SIDE);
		pthread_mutex_unlock(&cap_lock);
		for (i = 0; i < n; i++)
			stream_put(gone[i]);
	} while (n == 64);
}
