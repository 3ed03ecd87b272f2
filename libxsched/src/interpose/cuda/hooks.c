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
 * The SM partition (XSCHED_CUDA_SM_SPLIT=N, opt-in, cuda/split.c): urgent
 * streams made on a green context of N SMs, the others on the rest.  The
 * urgent context (XSCHED_CUDA_LV3=1, opt-in, cuda/urgent.c and
 * cuda/code.c): urgent streams' work on twin streams of a context the
 * library owns, which the driver time-slices against the program's, each
 * burst gathered or not (cuda/gather.c) or kept in place, as measured
 * best per stream (interpose/mode.c).
 * Lv1 holds (XSCHED_CUDA_HOLD): by default each urgent stream's bursts
 * run with them or without, as measured best (the urgent context's choice
 * between its modes lv1 and native, interpose/mode.c), so that holds that buy
 * the urgent job nothing cost the batch job nothing; 1 holds always, 0
 * never.  The entry points are listed
 * in cuda/table.h, the core's ops are in cuda/ops.c.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../internal.h"
#include "../interpose.h"
#include "code.h"
#include "driver.h"
#include "events.h"
#include "gather.h"
#include "ops.h"
#include "split.h"
#include "urgent.h"

/* XSCHED_CUDA_HOLD=0: no call is ever held (Lv1 off). */
static bool xc_no_hold;
/* Whether an urgent stream's holds are chosen per burst (auto), or its
 * work always holds (1, or no choice can be made here). */
static bool xc_hold_chosen;
static unsigned int split_sms;	/* XSCHED_CUDA_SM_SPLIT; 0: no partition */

extern struct xsi_runtime xc_rt;

/* ---- set-up ---------------------------------------------------------------- */

/* The wing's one fork registration: its locks in cuda/driver.h's order, the
 * child's resets in the order the parts are set up. */
static void fork_prepare(void)
{
	xu_events_fork_prepare();
	xu_fork_prepare();
	xu_code_fork_prepare();
	xc_split_fork_prepare();
	xc_ops_fork_prepare();
}

static void fork_parent(void)
{
	xc_ops_fork_parent();
	xc_split_fork_parent();
	xu_code_fork_parent();
	xu_fork_parent();
	xu_events_fork_parent();
}

static void fork_child(void)
{
	xc_ops_fork_child();
	xc_split_fork_child();
	xu_code_fork_child();
	xu_fork_child();
	xg_fork_child();
	xu_events_fork_child();
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static atomic_bool init_ok;
static __thread bool tls_in_init;

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
	xc_driver_init(h);
	if (!xc_ops_init()) {
		xs_warn("cuda: libcuda.so.1 lacks functions the scheduler needs; nothing is scheduled");
		goto out;
	}
	s = getenv("XSCHED_CUDA_HOLD");
	xc_hold_chosen = true;
	if (s && *s && strcmp(s, "auto")) {
		if (!strcmp(s, "0")) {
			xc_no_hold = true;
			xc_hold_chosen = false;
		} else if (!strcmp(s, "1")) {
			xc_hold_chosen = false;
		} else {
			xs_err("cuda: XSCHED_CUDA_HOLD='%s' is not 0, 1 or auto; using auto (Lv1 holds where they pay)", s);
		}
	}
	split_sms = xc_split_init();
	if (!xu_init(&xc_rt, split_sms != 0, xc_hold_chosen) || xu_on())
		xc_hold_chosen = false;
	xu_events_init();
	/* Before the core's (xsi_runtime_init()): see cuda/driver.h. */
	pthread_atfork(fork_prepare, fork_parent, fork_child);
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
		xc_no_hold ? "off" : xc_hold_chosen ? "chosen per burst" : "on", xu_on() ? "on" : "off", cfg->threshold, (unsigned long long)(cfg->hyst_ns / 1000),
		(unsigned long long)(xc_rt.hold_max_ns / 1000000), split_sms, miss, xc_rt.nentries);
	atomic_store(&init_ok, true);
out:
	tls_in_init = false;
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
#include "table.h"

#define ENUM_S(sym, base, pt, since, P, A, S, R) E_##sym,
#define ENUM_O(sym, base, pt, since, cls, scope) E_##sym,
#define ENUM_R(sym, base, pt, since, P, A, how) E_##sym,
#define ENUM_W(sym, base, pt, since, P, A) E_##sym,
enum { SCHEDULED(ENUM_S) ORDERED(ENUM_O) ROUTED(ENUM_R) WAITS(ENUM_W) E_COUNT };
static struct xsi_entry entries[E_COUNT];

/* ---- scheduled hooks ---------------------------------------------------- */

/* Where the call runs: an urgent stream's work goes to its twin in the
 * urgent context (cuda/urgent.c), a launched function translated with it.
 * Routed first: the hold is that of the side it runs on (k_, xu_route()).
 * GPU work alone (launches: F, EX; memsets, device copies: G) is gathered;
 * what may make the host wait (H: a copy with host memory, a wait on
 * memory, a graph, whose host nodes the program may wait for; CB) opens
 * the gates first (cuda/gather.c).  (A graph gains nothing from the
 * gather: the driver runs it in the context it was instantiated in.) */
#define ROUTE_H h = xu_route(h, NULL, XU_OPEN, &k_)
#define ROUTE_G h = xu_route(h, NULL, XU_GATHER, &k_)
#define ROUTE_F h = xu_route(h, &f, XU_GATHER, &k_)
#define ROUTE_EX CUlaunchConfig cfg_copy_; cfg = xu_route_ex(cfg, &f, &cfg_copy_, &k_)
#define ROUTE_CB h = xu_route_callback(h, &cb, &data, &k_)	/* it gets the program's stream */

/* A driver call that waited for work the gather held back, told (the
 * watchdog opened the gates meanwhile). */
#define WATCHED(name, call) ({						\
	unsigned long wd_ = xg_watchdog_openings();			\
	CUresult wr_ = (call);						\
									\
	if (xg_watchdog_openings() != wd_)				\
		xg_waited(name);					\
	wr_;								\
})

#define HOOK_S(sym, base, pt, since, P, A, S, R)			\
	static CUresult (*real_##sym) P;				\
	static CUresult hook_##sym P					\
	{								\
		struct xsi_hold hold_;					\
		uintptr_t k_;						\
		CUresult r;						\
									\
		if (!xc_init() || !real_##sym)				\
			return CUDA_ERROR_NOT_INITIALIZED;		\
		k_ = (uintptr_t)(S);					\
		R;							\
		if (xc_no_hold) {					\
			r = WATCHED(#sym, real_##sym A);		\
			xg_call_done();					\
			return r;					\
		}							\
		xsi_hold_begin(&xc_rt, &entries[E_##sym], k_, &hold_);	\
		r = WATCHED(#sym, real_##sym A);			\
		xg_call_done();						\
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
 * capped from the urgent stream's creation, not from its first call; an
 * urgent stream whose bursts are chosen caps only around its held ones
 * (cuda/urgent.c, cap_sync()).  Its CUDA priority is read once, for the
 * urgent context and the description. */
static void created(CUresult r, CUstream *ph, unsigned int flags)
{
	struct xsi_stream_desc d;
	bool known;
	int prio = 0;

	if (r != CUDA_SUCCESS || !ph || !*ph || (xc_no_hold && !xu_tracking()))
		return;
	known = xc_drv.stream_get_priority(*ph, &prio) == CUDA_SUCCESS;
	if (!known)
		prio = 0;
	xu_stream_created(*ph, flags, known ? &prio : NULL);	/* before the core describes it */
	if (xc_no_hold || xc_default_kind((uintptr_t)*ph) != XSI_NOT_DEFAULT)
		return;
	memset(&d, 0, sizeof(d));
	if (!xc_describe_created(*ph, prio, &d))
		(void)xsi_stream_announce(&xc_rt, (uintptr_t)*ph, &d);
}

/* Stream creation: on a partition when XSCHED_CUDA_SM_SPLIT is set, else as
 * asked. */
static CUresult hook_cuStreamCreate(CUstream *ph, unsigned int flags)
{
	CUresult r;

	READY(cuStreamCreate);
	if (!xc_split_stream_create(ph, flags, 0, &r))
		r = real_cuStreamCreate(ph, flags);
	created(r, ph, flags);
	return r;
}
EXPORT_AS(cuStreamCreate)

static CUresult hook_cuStreamCreateWithPriority(CUstream *ph, unsigned int flags, int prio)
{
	CUresult r;

	READY(cuStreamCreateWithPriority);
	if (!xc_split_stream_create(ph, flags, prio, &r))
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
		struct xsi_sync *y, *y2 = NULL;				\
		uint64_t t_ = xs_now_ns();				\
		CUstream tw_;						\
		CUresult r;						\
									\
		READY(sym);						\
		(void)xsi_pass(&xc_rt, &entries[E_##sym], (uintptr_t)h); \
		y = xsi_sync_begin(&xc_rt, stream_of(E_##sym, h), XSI_SCOPE_STREAM); \
		tw_ = xu_twin(h);					\
		xg_open_for(tw_ != NULL);				\
		if (tw_)	/* and the urgent stream's program side */	\
			y2 = xsi_sync_begin(&xc_rt, stream_of(E_##sym,	\
				(CUstream)((uintptr_t)h | XU_PROGRAM_SIDE)), XSI_SCOPE_STREAM); \
		r = tw_ ? real_##sym(tw_) : CUDA_SUCCESS;		\
		if (r == CUDA_SUCCESS)					\
			r = real_##sym(h);				\
		if (r == CUDA_SUCCESS)	/* its burst ended */		\
			xu_stream_synchronized(h, t_, 0);		\
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
	uint64_t t = xs_now_ns();
	CUresult r;

	READY(cuCtxSynchronize);
	(void)xsi_pass(&xc_rt, &entries[E_cuCtxSynchronize], 0);
	xg_open();	/* it covers the urgent context */
	y = xsi_sync_begin(&xc_rt, NULL, XSI_SCOPE_DEVICE);
	r = real_cuCtxSynchronize();
	if (r == CUDA_SUCCESS)
		r = xu_ctx_synchronize(NULL, t);
	xsi_sync_end(y, r == CUDA_SUCCESS);
	return r;
}
EXPORT_AS(cuCtxSynchronize)

/* CUDA 12.9+: synchronize a given context (NULL: the current one); the
 * bookkeeping is that of the current device. */
static CUresult hook_cuCtxSynchronize_v2(CUcontext c)
{
	struct xsi_sync *y;
	uint64_t t = xs_now_ns();
	CUresult r;

	READY(cuCtxSynchronize_v2);
	(void)xsi_pass(&xc_rt, &entries[E_cuCtxSynchronize_v2], 0);
	xg_open();	/* it covers the urgent context of its device */
	y = xsi_sync_begin(&xc_rt, NULL, XSI_SCOPE_DEVICE);
	r = real_cuCtxSynchronize_v2(c);
	if (r == CUDA_SUCCESS)
		r = xu_ctx_synchronize(c, t);
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
		xu_stream_destroyed(h);	/* and its program side */	\
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
		xc_marks_purge(c, -1);					\
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
		xc_marks_purge(NULL, (int32_t)d);				\
		return real_##sym(d);					\
	}								\
	EXPORT_AS(sym)
RESET_HOOK(cuDevicePrimaryCtxReset)
RESET_HOOK(cuDevicePrimaryCtxReset_v2)

/* ---- the urgent context's bookkeeping (cuda/urgent.c, cuda/code.c) ---- */

/* Bookkeeping after the driver succeeded (NOTE: @before, the call, @after,
 * @note) or before the call (FIRST). */
#define NOTE_HOOK_AFTER(sym, P, A, before, after, note)			\
	static CUresult (*real_##sym) P;				\
	static CUresult hook_##sym P					\
	{								\
		CUresult r;						\
									\
		READY(sym);						\
		before;							\
		r = WATCHED(#sym, real_##sym A);			\
		after;							\
		if (r == CUDA_SUCCESS) {				\
			note;						\
		}							\
		return r;						\
	}								\
	EXPORT_AS(sym)
#define NOTE_HOOK(sym, P, A, note) NOTE_HOOK_AFTER(sym, P, A, (void)0, (void)0, note)
#define FIRST_HOOK(sym, P, A, first)					\
	static CUresult (*real_##sym) P;				\
	static CUresult hook_##sym P					\
	{								\
		READY(sym);						\
		first;							\
		return WATCHED(#sym, real_##sym A);			\
	}								\
	EXPORT_AS(sym)

NOTE_HOOK(cuEventCreate, (CUevent *ev, unsigned int fl), (ev, fl),
	  if (ev) xu_event_created(*ev, fl))
FIRST_HOOK(cuEventDestroy, (CUevent ev), (ev), xu_event_destroyed(ev))
FIRST_HOOK(cuEventDestroy_v2, (CUevent ev), (ev), xu_event_destroyed(ev))

/* A record on an urgent stream is made on the event's twin (cuda/events.c). */
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
		r = WATCHED(#sym, real_##sym A);			\
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
		return WATCHED(#sym, real_##sym(h, ev, fl));		\
	}								\
	EXPORT_AS(sym)
WAIT_HOOK(cuStreamWaitEvent)
WAIT_HOOK(cuStreamWaitEvent_ptsz)

#define EVENT_HOOK(sym)							\
	static CUresult (*real_##sym)(CUevent);				\
	static CUresult hook_##sym(CUevent ev)				\
	{								\
		uint64_t t_ = xs_now_ns();				\
		CUevent cur_;						\
		CUresult r;						\
									\
		READY(sym);						\
		cur_ = xu_event_current(ev);				\
		xg_open_for(cur_ != ev);	/* it waits for a twin */	\
		r = real_##sym(cur_);					\
		if (r == CUDA_SUCCESS)	/* an urgent stream's burst ended? */ \
			xu_event_synchronized(ev, t_);			\
		return r;						\
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

/* Code the program loads: what the urgent context may load again.  A load
 * or unload may wait for the contexts' work (measured: cuLibraryLoadData
 * did): the gates open first. */
#define LOAD_HOOK(sym, P, A, note) NOTE_HOOK_AFTER(sym, P, A, xg_pause(), xg_resume(), note)
LOAD_HOOK(cuModuleLoadData, (CUmodule *m, const void *img), (m, img),
	  if (m) xu_module_loaded(*m, img, NULL))
LOAD_HOOK(cuModuleLoadDataEx, (CUmodule *m, const void *img, unsigned int n, CUjit_option *o,
			       void **v), (m, img, n, o, v),
	  if (m) xu_module_loaded(*m, img, NULL))
LOAD_HOOK(cuModuleLoadFatBinary, (CUmodule *m, const void *img), (m, img),
	  if (m) xu_module_loaded(*m, img, NULL))
LOAD_HOOK(cuModuleLoad, (CUmodule *m, const char *path), (m, path),
	  if (m) xu_module_loaded(*m, NULL, path))
#define LIB_OPTS CUjit_option *jo, void **jv, unsigned int njo, CUlibraryOption *lo, \
	void **lv, unsigned int nlo
LOAD_HOOK(cuLibraryLoadData, (CUlibrary *lib, const void *code, LIB_OPTS),
	  (lib, code, jo, jv, njo, lo, lv, nlo), if (lib) xu_library_loaded(*lib))
LOAD_HOOK(cuLibraryLoadFromFile, (CUlibrary *lib, const char *file, LIB_OPTS),
	  (lib, file, jo, jv, njo, lo, lv, nlo), if (lib) xu_library_loaded(*lib))
FIRST_HOOK(cuModuleUnload, (CUmodule m), (m), xg_open(); xu_module_unloaded(m))
FIRST_HOOK(cuLibraryUnload, (CUlibrary lib), (lib), xg_open(); xu_library_unloaded(lib))
LOAD_HOOK(cuLibraryGetModule, (CUmodule *m, CUlibrary lib), (m, lib),
	  if (m) xu_module_of_library(*m, lib))
LOAD_HOOK(cuKernelGetFunction, (CUfunction *f, CUkernel k), (f, k),
	  if (f) xu_function_of_kernel(*f, k))
LOAD_HOOK(cuModuleGetFunction, (CUfunction *f, CUmodule m, const char *name), (f, m, name),
	  if (f) xu_function_of_module(*f, m))
NOTE_HOOK(cuLibraryGetKernel, (CUkernel *k, CUlibrary lib, const char *name), (k, lib, name),
	  if (k) xu_kernel_of_library(*k, lib))
NOTE_HOOK(cuFuncSetAttribute, (CUfunction f, CUfunction_attribute a, int v), (f, a, v),
	  xu_function_attribute(f, a, v))
NOTE_HOOK(cuFuncSetCacheConfig, (CUfunction f, CUfunc_cache c), (f, c),
	  xu_function_cache_config(f, c))

/* Not scheduled, but kept in the stream's order across the move. */
#define HOOK_R(sym, base, pt, since, P, A, how)				\
	static CUresult (*real_##sym) P;				\
	static CUresult hook_##sym P					\
	{								\
		READY(sym);						\
		(void)xsi_pass(&xc_rt, &entries[E_##sym], (uintptr_t)h); \
		h = xu_route(h, NULL, how, NULL);			\
		return WATCHED(#sym, real_##sym A);			\
	}								\
	EXPORT_AS(sym)
ROUTED(HOOK_R)

/* Synchronous copies and memsets: the host waits in them. */
#define HOOK_W(sym, base, pt, since, P, A)				\
	static CUresult (*real_##sym) P;				\
	static CUresult hook_##sym P					\
	{								\
		READY(sym);						\
		(void)xsi_pass(&xc_rt, &entries[E_##sym], 0);		\
		xg_open_for(false);					\
		return WATCHED(#sym, real_##sym A);			\
	}								\
	EXPORT_AS(sym)
WAITS(HOOK_W)

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
#define ENT_W(sym, b, pt, s, P, A) ENT(sym, XSI_HARMLESS, XSI_SCOPE_STREAM, b, pt, s)
static struct xsi_entry entries[E_COUNT] = {
	SCHEDULED(ENT_S) ORDERED(ENT_O) ROUTED(ENT_R) WAITS(ENT_W)
};

/* A hold waits for GPU work: what it waits for may be gathered. */
static int mark_wait(void *mark, int64_t timeout_ns)
{
	xg_open_for(xc_mark_device(mark) >= XU_DEV_BASE);
	return xc_mark_wait(mark, timeout_ns);
}

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
	.mark_wait = mark_wait,
	.mark_free = xc_mark_free,
	.is_capturing = xc_is_capturing,
};

/* Every dlsym() of the process: driver functions get their hooks.
 * (RTLD_NEXT reaches glibc's directly on x86-64: XSI_DLSYM_EXPORT.) */
XSI_EARLY void *xc_dlsym(void *handle, const char *name);
XSI_EARLY void *xc_dlsym(void *handle, const char *name)
{
	void *r = xsi_real_dlsym(handle, name);

	if (handle == RTLD_NEXT || !r || name[0] != 'c' || name[1] != 'u' || !xc_init())
		return r;
	return xsi_dlsym(handle, name, r);
}

/* dlvsym() likewise. */
XSI_EARLY void *xc_dlvsym(void *handle, const char *name, const char *version);
XSI_EARLY void *xc_dlvsym(void *handle, const char *name, const char *version)
{
	void *r = xsi_real_dlvsym(handle, name, version);

	if (handle == RTLD_NEXT || !r || name[0] != 'c' || name[1] != 'u' || !xc_init())
		return r;
	return xsi_dlsym(handle, name, r);
}

XSI_DLSYM_EXPORT(xc_dlsym, xc_dlvsym);
