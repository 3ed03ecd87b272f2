// SPDX-License-Identifier: MIT
/*
 * The HIP table of the interposer, on the interposition core (interpose.h),
 * built into libxsched.so: LD_PRELOAD=libxsched.so (or linking it before
 * libamdhip64) puts these hooks in front of libamdhip64.so.5/.6/.7.
 *
 * Every hook is exported under libamdhip64's own name and symbol version
 * node (libxsched.map: hip_4.2 ... hip_7.2), so a program linked against
 * the real library binds to the hook.  Real functions come from the next
 * object in the dynamic linker's search order (dlvsym(RTLD_NEXT, name,
 * node)), else from a libamdhip64.so.5/.6/.7 already loaded with RTLD_LOCAL (a
 * framework's dlopen: dlopen(RTLD_NOLOAD)); nothing is loaded by us.
 *
 * Caller-held (XSI_RT_CALLER_HELD), as for CUDA: a scheduled call waits in
 * the caller's thread while the policy holds its stream, then the caller
 * makes the call itself with its own arguments.  Argument buffers and
 * launch configurations are never copied, and a launch reaches the runtime
 * on the thread, device and registered host stub it was made with, so every
 * launch form works as without the interposer (the `<<<>>>` path:
 * __hipPushCallConfiguration/__hipPopCallConfiguration pass through, the
 * hold is at hipLaunchKernel that follows on the same thread).  Nothing is
 * buffered, so every call keeps program order.
 *
 * Priorities: xsched priority = XSCHED_PRIORITY (the process default, 0) -
 * HIP priority (HIP: lower is more urgent; xsched: higher is), clamped to
 * XSCHED_PRIO_MIN..MAX; the HIP priority of a created stream is the one the
 * program asked for (clamped to -1..1), not what the runtime reports back;
 * xsched_stream_set_priority() changes it later.
 *
 * The table is the X-macro lists of hip/table.h: HIP_SCHEDULED, HIP_ORDERED,
 * HIP_HARMLESS (hooked), and HIP_UNHOOKED (stream and event functions that
 * are deliberately not hooked, and why), expanded here into hooks and the
 * entry table; tests/libxsched/hip/coverage.py reads them.  hip/decls.h declares the
 * entry points older headers lack; hip/ops.c is the runtime's ops for the
 * core, hip/env.c the wing's environment.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hip/hip_runtime_api.h>

#include "../../internal.h"
#include "../interpose.h"
#include "hsaq.h"

#include "decls.h"
#include "env.h"
#include "ops.h"

extern struct xsi_runtime xh_rt;
static const char *const xh_sonames[] = XSI_HIP_SONAMES;

/* ---- set-up ---------------------------------------------------------------- */

static pthread_once_t resolve_once = PTHREAD_ONCE_INIT;
static atomic_bool sched_on;	/* the scheduler is in front of the runtime */
static __thread bool tls_in_init;

/* The runtime's function @name at node @ver: the next definition after
 * libxsched, else the loaded libamdhip64's (a dlopen with RTLD_LOCAL is not
 * in RTLD_NEXT's scope). */
static void *lookup_real(const char *name, const char *ver, void *hook)
{
	void *f = ver ? xsi_real_dlvsym(RTLD_NEXT, name, ver) : xsi_real_dlsym(RTLD_NEXT, name);
	void *h;

	if (f && f != hook)
		return f;
	h = xsi_dlopen_loaded(xh_sonames, sizeof(xh_sonames) / sizeof(xh_sonames[0]),
			      NULL);
	if (!h)
		return NULL;
	f = ver ? xsi_real_dlvsym(h, name, ver) : xsi_real_dlsym(h, name);
	dlclose(h);
	return f != hook ? f : NULL;
}

/* An entry's C++ name (HIP_CXX_NAMES), or NULL. */
struct xh_cxx_name {
	const char *name, *cxx, *version;
};
static const struct xh_cxx_name *cxx_name_of(const struct xsi_entry *e);
static const struct xh_cxx_name *cxx_name_find(const char *cxx);

#define HELPER(field, sym, ver) \
	(xh_real.field = (__typeof__(xh_real.field))lookup_real(sym, ver, NULL))

/* Waits on a memory value (their writer is invisible to us), and calls
 * synchronous on their stream (each ends a burst). */
static const char *const memwaits[] = { "hipStreamWaitValue", "hipStreamBatchMemOp", NULL };
static const char *const syncs[] = { "hipMemcpyWithStream", NULL };

static void do_resolve(void)
{
	unsigned int miss = 0;
	size_t i;
	int r;

	tls_in_init = true;
	xh_env_hold_read();
	xsi_entries_flag(&xh_rt, memwaits, XSI_ENTRY_MEMWAIT);
	xsi_entries_flag(&xh_rt, syncs, XSI_ENTRY_SYNCS);
	/* The core resolves by RTLD_NEXT (rt->libs is NULL: nothing is
	 * loaded); what it did not find comes from a loaded libamdhip64. */
	r = xsi_runtime_init(&xh_rt);
	for (i = 0; i < xh_rt.nentries; i++) {
		struct xsi_entry *e = &xh_rt.entries[i];
		const struct xh_cxx_name *c = cxx_name_of(e);

		if (!*e->real)
			*e->real = lookup_real(e->name, e->version, e->hook);
		if (!*e->real && c)
			*e->real = lookup_real(c->cxx, c->version, e->hook);
		if (!*e->real) {
			miss++;
			xsi_log(&xh_rt, "%s@%s is not in this libamdhip64; its hook answers hipErrorNotSupported",
				e->name, e->version);
		}
	}
	HELPER(get_device, "hipGetDevice", "hip_4.2");
	HELPER(set_device, "hipSetDevice", "hip_4.2");
	HELPER(get_device_count, "hipGetDeviceCount", "hip_4.2");
	HELPER(stream_get_priority, "hipStreamGetPriority", "hip_4.2");
	HELPER(stream_device, "hipGetStreamDeviceId", "hip_4.2");
	HELPER(stream_is_capturing, "hipStreamIsCapturing", "hip_4.3");
	HELPER(event_create, "hipEventCreateWithFlags", "hip_4.2");
	HELPER(event_destroy, "hipEventDestroy", "hip_4.2");
	HELPER(event_record, "hipEventRecord", "hip_4.2");
	HELPER(event_query, "hipEventQuery", "hip_4.2");
	if (r) {
		xs_warn("hip: the interposition core refused the HIP table (%s); calls go to the runtime unscheduled",
			strerror(-r));
	} else if (!xh_real.get_device || !xh_real.set_device ||
		   !xh_real.stream_get_priority || !xh_real.stream_device ||
		   !xh_real.event_create || !xh_real.event_destroy ||
		   !xh_real.event_record || !xh_real.event_query) {
		xs_warn("hip: no HIP runtime (libamdhip64) in this process has the functions the scheduler needs; calls go to it unscheduled");
	} else {
		xs_info("hip: interposer ready: Lv1 caller-held, urgent streams' holds %s, threshold %u, hold limit %llu ms; %u of %zu hooked symbols absent from this libamdhip64",
			xh_hold_every_burst ? "on every burst" : "chosen per burst",
			xs_config()->threshold,
			(unsigned long long)(xh_rt.hold_max_ns / 1000000), miss, xh_rt.nentries);
		atomic_store(&sched_on, true);
		xs_hsaq_env_report();
	}
	tls_in_init = false;
}

/* Resolve once; true when calls are scheduled (else they pass through). */
static bool xh_init(void)
{
	if (atomic_load_explicit(&sched_on, memory_order_acquire))
		return true;
	if (tls_in_init)	/* the runtime's loading called back into us */
		return false;
	pthread_once(&resolve_once, do_resolve);
	return atomic_load(&sched_on);
}

/* ---- the table -------------------------------------------------------------- */

#define EXPORT_AS(sym) \
	extern __typeof__(hook_##sym) sym __attribute__((alias("hook_" #sym), visibility("default")));
/* C++ exports: the same, under a mangled name. */
#define EXPORT_MANGLED(sym, mangled) \
	extern __typeof__(hook_##sym) sym##_cxx __asm__(mangled) \
		__attribute__((alias("hook_" #sym), visibility("default")));

#include "table.h"

#define ENUM_S(sym, ver, pt, P, A, S) E_##sym,
#define ENUM_M(sym, ver, P, A, F) E_##sym,
#define ENUM_O(sym, ver, pt, sc, T, P, A, S) E_##sym,
#define ENUM_OO(sym, ver, pt, sc) E_##sym,
#define ENUM_H(sym, ver) E_##sym,
#define ENUM_SO(sym, ver, pt) E_##sym,
enum {
	HIP_SCHEDULED(ENUM_S) HIP_SCHEDULED_MULTI(ENUM_M) HIP_SCHEDULED_OWN(ENUM_SO)
	HIP_ORDERED(ENUM_O) HIP_ORDERED_OWN(ENUM_OO) HIP_HARMLESS(ENUM_H)
	E_COUNT
};
static struct xsi_entry entries[E_COUNT];

#define ENTRY(e) (&entries[E_##e])
/* The real function, or hipErrorNotSupported when this runtime lacks it. */
#define REAL_OR(sym, ret) do {					\
	if (!real_##sym) {					\
		xh_init();					\
		if (!real_##sym)				\
			return ret;				\
	}							\
} while (0)

/* ---- scheduled hooks -------------------------------------------------- */

/*
 * A scheduled call's frame, around the real call: held on @stream until the
 * policy releases it, and watched by the Lv3 queue discovery while it runs;
 * then the hold ends, counted as launched if @ok.  Declares hold_.
 */
#define HELD_BEGIN(sym, stream)						\
	struct xsi_hold hold_ = { 0 };					\
	if (xh_init())							\
		xsi_hold_begin(&xh_rt, ENTRY(sym), (uintptr_t)(stream), &hold_); \
	xsi_hip_launch_observe_begin(hold_.s)
#define HELD_END(ok)							\
	xsi_hip_launch_observe_end(hold_.s);				\
	xsi_hold_end(&hold_, (ok))

#define HOOK_S(sym, ver, pt, P, A, S)					\
	static hipError_t (*real_##sym) P;				\
	static hipError_t hook_##sym P					\
	{								\
		hipError_t r;						\
									\
		REAL_OR(sym, hipErrorNotSupported);			\
		HELD_BEGIN(sym, S);					\
		r = real_##sym A;					\
		HELD_END(r == hipSuccess);				\
		return r;						\
	}
HIP_SCHEDULED(HOOK_S)

#define EXP_S(sym, ver, pt, P, A, S) EXPORT_AS(sym)
HIP_SCHEDULED(EXP_S)

/* ---- scheduled on several streams ------------------------------------- */

/* Wait for each stream's release in turn; the call is not counted. */
#define HOOK_M(sym, ver, P, A, F)					\
	static hipError_t (*real_##sym) P;				\
	static hipError_t hook_##sym P					\
	{								\
		unsigned int i_;					\
									\
		REAL_OR(sym, hipErrorNotSupported);			\
		for (i_ = 0; xh_init() && l && i_ < (unsigned int)n; i_++) { \
			struct xsi_hold h_;				\
									\
			xsi_hold_begin(&xh_rt, ENTRY(sym), (uintptr_t)l[i_].F, &h_); \
			xsi_hold_end(&h_, false);			\
		}							\
		xsi_hip_launch_observe_begin(NULL);			\
		xsi_enter();						\
		hipError_t r_ = real_##sym A;				\
		xsi_leave();						\
		xsi_hip_launch_observe_end(NULL);			\
		return r_;						\
	}								\
	EXPORT_AS(sym)
HIP_SCHEDULED_MULTI(HOOK_M)

/* ---- scheduled hooks of their own ----------------------------------------- */

/* An event record is scheduled like a launch; the event then stands for
 * its place on its stream (xsi_event_recorded_held()). */
static void event_recorded(hipEvent_t ev, const struct xsi_hold *h, hipError_t r)
{
	if (r == hipSuccess && h->s)
		xsi_event_recorded_held(&xh_rt, (uintptr_t)ev, h);
}

#define HOOK_REC(sym, P, A)						\
	static hipError_t (*real_##sym) P;				\
	static hipError_t hook_##sym P					\
	{								\
		hipError_t r;						\
									\
		REAL_OR(sym, hipErrorNotSupported);			\
		HELD_BEGIN(sym, h);					\
		r = real_##sym A;					\
		HELD_END(r == hipSuccess);				\
		event_recorded(ev, &hold_, r);				\
		return r;						\
	}								\
	EXPORT_AS(sym)
HOOK_REC(hipEventRecord, REC_P, REC_A)
HOOK_REC(hipEventRecord_spt, REC_P, REC_A)
HOOK_REC(hipEventRecordWithFlags, RECF_P, RECF_A)

/* hipConfigureCall names the stream of the hipLaunchByPtr that follows on
 * the same thread. */
static __thread hipStream_t configured_stream;

static hipError_t (*real_hipLaunchByPtr)(const void *);
static hipError_t hook_hipLaunchByPtr(const void *f)
{
	hipError_t r;

	REAL_OR(hipLaunchByPtr, hipErrorNotSupported);
	HELD_BEGIN(hipLaunchByPtr, configured_stream);
	r = real_hipLaunchByPtr(f);
	HELD_END(r == hipSuccess);
	return r;
}
EXPORT_AS(hipLaunchByPtr)

/* hip_impl::hipLaunchKernelGGLImpl(uintptr_t, const dim3&, const dim3&,
 * uint32_t, hipStream_t, void**): C++ only, returns nothing. */
static void (*real_hipLaunchKernelGGLImpl)(uintptr_t, const dim3 *, const dim3 *, uint32_t,
					   hipStream_t, void **);
static void hook_hipLaunchKernelGGLImpl(uintptr_t f, const dim3 *g, const dim3 *b,
					uint32_t smem, hipStream_t h, void **args)
{
	REAL_OR(hipLaunchKernelGGLImpl, );
	HELD_BEGIN(hipLaunchKernelGGLImpl, h);
	real_hipLaunchKernelGGLImpl(f, g, b, smem, h, args);
	HELD_END(true);
}

/* The C++ exports (HIP_CXX_NAMES). */
#define EXP_CXX(sym, cxx, ver) EXPORT_MANGLED(sym, cxx)
HIP_CXX_NAMES(EXP_CXX)

/* ---- ordered pass-through hooks ------------------------------------------- */

#define HOOK_O(sym, ver, pt, sc, T, P, A, S)				\
	static T (*real_##sym) P;					\
	static T hook_##sym P						\
	{								\
		REAL_OR(sym, hipErrorNotSupported);			\
		if (xh_init())						\
			(void)xsi_pass(&xh_rt, ENTRY(sym), (uintptr_t)(S)); \
		return real_##sym A;					\
	}								\
	EXPORT_AS(sym)
HIP_ORDERED(HOOK_O)

/* The stream a call through @e names (NULL: not scheduled). */
static struct xsi_stream *stream_of(int e, hipStream_t h)
{
	return xsi_stream_get(&xh_rt, (uintptr_t)h, entries[e].flags);
}

/* A successful synchronize or query of @a: everything handed over before
 * it ran has completed (the core learns it without a mark), and a burst
 * ended (interpose.h, the hold chosen per burst).  @S: the stream the
 * pass-through names, @BEGIN: the synchronize's xsi_sync. */
#define SYNC_HOOK_OF(sym, T, S, BEGIN)					\
	static hipError_t (*real_##sym)(T);				\
	static hipError_t hook_##sym(T a)				\
	{								\
		struct xsi_sync *y = NULL;				\
		hipError_t r;						\
									\
		REAL_OR(sym, hipErrorNotSupported);			\
		if (xh_init()) {					\
			(void)xsi_pass(&xh_rt, ENTRY(sym), (uintptr_t)(S)); \
			y = BEGIN;					\
		}							\
		r = real_##sym(a);					\
		xsi_sync_end(y, r == hipSuccess);			\
		return r;						\
	}								\
	EXPORT_AS(sym)
#define SYNC_HOOK(sym) SYNC_HOOK_OF(sym, hipStream_t, a,		\
	xsi_sync_begin(&xh_rt, stream_of(E_##sym, a), XSI_SCOPE_STREAM))
#define EVSYNC_HOOK(sym) SYNC_HOOK_OF(sym, hipEvent_t, 0,		\
	xsi_event_sync_begin(&xh_rt, (uintptr_t)a))
SYNC_HOOK(hipStreamSynchronize)
SYNC_HOOK(hipStreamSynchronize_spt)
SYNC_HOOK(hipStreamQuery)
SYNC_HOOK(hipStreamQuery_spt)

#define DEVSYNC_HOOK(sym)						\
	static hipError_t (*real_##sym)(void);				\
	static hipError_t hook_##sym(void)				\
	{								\
		struct xsi_sync *y = NULL;				\
		hipError_t r;						\
									\
		REAL_OR(sym, hipErrorNotSupported);			\
		if (xh_init()) {					\
			(void)xsi_pass(&xh_rt, ENTRY(sym), 0);		\
			y = xsi_sync_begin(&xh_rt, NULL, XSI_SCOPE_DEVICE); \
		}							\
		r = real_##sym();					\
		xsi_sync_end(y, r == hipSuccess);			\
		return r;						\
	}								\
	EXPORT_AS(sym)
DEVSYNC_HOOK(hipDeviceSynchronize)
DEVSYNC_HOOK(hipCtxSynchronize)

EVSYNC_HOOK(hipEventSynchronize)
EVSYNC_HOOK(hipEventQuery)

/* @h will wait for @ev: the policy releases (boosts) the event's stream
 * until it got there, so a wait on a held stream cannot deadlock. */
#define WAIT_HOOK(sym)							\
	static hipError_t (*real_##sym)(hipStream_t, hipEvent_t, unsigned int); \
	static hipError_t hook_##sym(hipStream_t h, hipEvent_t ev, unsigned int fl) \
	{								\
		REAL_OR(sym, hipErrorNotSupported);			\
		if (xh_init()) {					\
			(void)xsi_pass(&xh_rt, ENTRY(sym), (uintptr_t)h); \
			(void)xsi_event_wait(&xh_rt, stream_of(E_##sym, h), (uintptr_t)ev); \
		}							\
		return real_##sym(h, ev, fl);				\
	}								\
	EXPORT_AS(sym)
WAIT_HOOK(hipStreamWaitEvent)
WAIT_HOOK(hipStreamWaitEvent_spt)

static hipError_t (*real_hipEventDestroy)(hipEvent_t);
static hipError_t hook_hipEventDestroy(hipEvent_t ev)
{
	REAL_OR(hipEventDestroy, hipErrorNotSupported);
	if (xh_init()) {
		(void)xsi_pass(&xh_rt, ENTRY(hipEventDestroy), 0);
		xsi_event_forget(&xh_rt, (uintptr_t)ev);
	}
	return real_hipEventDestroy(ev);
}
EXPORT_AS(hipEventDestroy)

static hipError_t (*real_hipStreamDestroy)(hipStream_t);
static hipError_t hook_hipStreamDestroy(hipStream_t h)
{
	REAL_OR(hipStreamDestroy, hipErrorNotSupported);
	if (xh_init()) {
		(void)xsi_pass(&xh_rt, ENTRY(hipStreamDestroy), (uintptr_t)h);
		if (xh_default_kind((uintptr_t)h) == XSI_NOT_DEFAULT)
			(void)xsi_stream_destroyed(&xh_rt, (uintptr_t)h);
	}
	return real_hipStreamDestroy(h);
}
EXPORT_AS(hipStreamDestroy)

/* Every stream of the device is gone with its primary context. */
static hipError_t (*real_hipDeviceReset)(void);
static hipError_t hook_hipDeviceReset(void)
{
	REAL_OR(hipDeviceReset, hipErrorNotSupported);
	if (xh_init()) {
		(void)xsi_pass(&xh_rt, ENTRY(hipDeviceReset), 0);
		xsi_context_gone(&xh_rt, 0, xh_current_device());
	}
	return real_hipDeviceReset();
}
EXPORT_AS(hipDeviceReset)

static hipError_t (*real_hipDevicePrimaryCtxReset)(hipDevice_t);
static hipError_t hook_hipDevicePrimaryCtxReset(hipDevice_t d)
{
	REAL_OR(hipDevicePrimaryCtxReset, hipErrorNotSupported);
	if (xh_init()) {
		(void)xsi_pass(&xh_rt, ENTRY(hipDevicePrimaryCtxReset), 0);
		xsi_context_gone(&xh_rt, 0, (int32_t)d);
	}
	return real_hipDevicePrimaryCtxReset(d);
}
EXPORT_AS(hipDevicePrimaryCtxReset)

/* Captured calls are recorded into a graph and run later: not held. */
#define BEGIN_HOOK(sym, P, A)						\
	static hipError_t (*real_##sym) P;				\
	static hipError_t hook_##sym P					\
	{								\
		hipError_t r;						\
									\
		REAL_OR(sym, hipErrorNotSupported);			\
		if (xh_init())						\
			(void)xsi_pass(&xh_rt, ENTRY(sym), (uintptr_t)h); \
		r = real_##sym A;					\
		if (r == hipSuccess && xh_init())			\
			xsi_stream_capture(stream_of(E_##sym, h), true); \
		return r;						\
	}								\
	EXPORT_AS(sym)
BEGIN_HOOK(hipStreamBeginCapture, (hipStream_t h, hipStreamCaptureMode m), (h, m))
BEGIN_HOOK(hipStreamBeginCapture_spt, (hipStream_t h, hipStreamCaptureMode m), (h, m))
BEGIN_HOOK(hipStreamBeginCaptureToGraph,
	   (hipStream_t h, hipGraph_t g, const hipGraphNode_t *d, XH_EDGE_DATA *dd, size_t n,
	    hipStreamCaptureMode m), (h, g, d, dd, n, m))

/* The capture ends whatever the result (an invalidated capture too). */
#define END_HOOK(sym)							\
	static hipError_t (*real_##sym)(hipStream_t, hipGraph_t *);	\
	static hipError_t hook_##sym(hipStream_t h, hipGraph_t *g)	\
	{								\
		hipError_t r;						\
									\
		REAL_OR(sym, hipErrorNotSupported);			\
		r = real_##sym(h, g);					\
		if (xh_init())						\
			xsi_stream_capture(stream_of(E_##sym, h), false); \
		return r;						\
	}								\
	EXPORT_AS(sym)
END_HOOK(hipStreamEndCapture)
END_HOOK(hipStreamEndCapture_spt)

/* Instantiated with hipGraphInstantiateFlagUpload, the graph is uploaded on
 * uploadStream as hipGraphUpload does: ordered on that stream; otherwise no
 * stream is involved. */
static hipError_t (*real_hipGraphInstantiateWithParams)(hipGraphExec_t *, hipGraph_t,
							hipGraphInstantiateParams *);
static hipError_t hook_hipGraphInstantiateWithParams(hipGraphExec_t *gx, hipGraph_t g,
						     hipGraphInstantiateParams *p)
{
	REAL_OR(hipGraphInstantiateWithParams, hipErrorNotSupported);
	if (p && (p->flags & XH_INSTANTIATE_UPLOAD) && xh_init())
		(void)xsi_pass(&xh_rt, ENTRY(hipGraphInstantiateWithParams),
			       (uintptr_t)p->uploadStream);
	return real_hipGraphInstantiateWithParams(gx, g, p);
}
EXPORT_AS(hipGraphInstantiateWithParams)

/* ---- harmless pass-through hooks ------------------------------------------ */

static void harmless(int e)
{
	if (xsi_log_on())
		xsi_log(&xh_rt, "%s: pass-through (harmless)", entries[e].name);
}

/* A new stream: the table learns it with its priority and device. */
static void created(hipError_t r, hipStream_t *ph, int hip_prio, unsigned int flags)
{
	struct xsi_stream_desc d;

	if (r != hipSuccess || !ph || !*ph || !xh_init())
		return;
	memset(&d, 0, sizeof(d));
	d.priority = xh_priority(hip_prio);
	d.device = xh_real.stream_device(*ph);
	if (d.device < 0)
		d.device = xh_current_device();
	d.flags = flags;
	d.chooses = xh_chooses(hip_prio);
	(void)xsi_stream_created(&xh_rt, (uintptr_t)*ph, &d);
}

static hipError_t (*real_hipStreamCreate)(hipStream_t *);
static hipError_t hook_hipStreamCreate(hipStream_t *ph)
{
	hipError_t r;

	REAL_OR(hipStreamCreate, hipErrorNotSupported);
	harmless(E_hipStreamCreate);
	r = real_hipStreamCreate(ph);
	created(r, ph, 0, 0);
	return r;
}
EXPORT_AS(hipStreamCreate)

static hipError_t (*real_hipStreamCreateWithFlags)(hipStream_t *, unsigned int);
static hipError_t hook_hipStreamCreateWithFlags(hipStream_t *ph, unsigned int fl)
{
	hipError_t r;

	REAL_OR(hipStreamCreateWithFlags, hipErrorNotSupported);
	harmless(E_hipStreamCreateWithFlags);
	r = real_hipStreamCreateWithFlags(ph, fl);
	created(r, ph, 0, fl);
	return r;
}
EXPORT_AS(hipStreamCreateWithFlags)

/* The program's request is the stream's priority, whatever the runtime
 * keeps or reports (ROCm with DEBUG_HIP_IGNORE_STREAM_PRIORITY reports 0). */
static hipError_t (*real_hipStreamCreateWithPriority)(hipStream_t *, unsigned int, int);
static hipError_t hook_hipStreamCreateWithPriority(hipStream_t *ph, unsigned int fl, int prio)
{
	hipError_t r;

	REAL_OR(hipStreamCreateWithPriority, hipErrorNotSupported);
	harmless(E_hipStreamCreateWithPriority);
	r = real_hipStreamCreateWithPriority(ph, fl, prio);
	created(r, ph, xh_requested_priority(prio), fl);
	return r;
}
EXPORT_AS(hipStreamCreateWithPriority)

static hipError_t (*real_hipExtStreamCreateWithCUMask)(hipStream_t *, uint32_t, const uint32_t *);
static hipError_t hook_hipExtStreamCreateWithCUMask(hipStream_t *ph, uint32_t n,
						    const uint32_t *mask)
{
	hipError_t r;

	REAL_OR(hipExtStreamCreateWithCUMask, hipErrorNotSupported);
	harmless(E_hipExtStreamCreateWithCUMask);
	r = real_hipExtStreamCreateWithCUMask(ph, n, mask);
	created(r, ph, 0, 0);
	return r;
}
EXPORT_AS(hipExtStreamCreateWithCUMask)

/* Registration runs in the program's constructors: the real functions are
 * looked up (no scheduler is started) and called with what we were given. */
static void **(*real___hipRegisterFatBinary)(const void *);
static void **hook___hipRegisterFatBinary(const void *data)
{
	REAL_OR(__hipRegisterFatBinary, NULL);
	harmless(E___hipRegisterFatBinary);
	return real___hipRegisterFatBinary(data);
}
EXPORT_AS(__hipRegisterFatBinary)

static void (*real___hipUnregisterFatBinary)(void **);
static void hook___hipUnregisterFatBinary(void **m)
{
	REAL_OR(__hipUnregisterFatBinary, );
	harmless(E___hipUnregisterFatBinary);
	real___hipUnregisterFatBinary(m);
}
EXPORT_AS(__hipUnregisterFatBinary)

static void (*real___hipRegisterFunction)(void **, const void *, char *, const char *,
					  unsigned int, void *, void *, dim3 *, dim3 *, int *);
static void hook___hipRegisterFunction(void **m, const void *host_fn, char *dev_fn,
				       const char *dev_name, unsigned int limit, void *tid,
				       void *bid, dim3 *block, dim3 *grid, int *wsize)
{
	REAL_OR(__hipRegisterFunction, );
	harmless(E___hipRegisterFunction);
	real___hipRegisterFunction(m, host_fn, dev_fn, dev_name, limit, tid, bid, block, grid,
				   wsize);
}
EXPORT_AS(__hipRegisterFunction)

static void (*real___hipRegisterVar)(void **, void *, char *, char *, int, size_t, int, int);
static void hook___hipRegisterVar(void **m, void *var, char *host_var, char *dev_var, int ext,
				  size_t size, int constant, int global)
{
	REAL_OR(__hipRegisterVar, );
	harmless(E___hipRegisterVar);
	real___hipRegisterVar(m, var, host_var, dev_var, ext, size, constant, global);
}
EXPORT_AS(__hipRegisterVar)

static hipError_t (*real___hipPushCallConfiguration)(dim3, dim3, size_t, hipStream_t);
static hipError_t hook___hipPushCallConfiguration(dim3 g, dim3 b, size_t smem, hipStream_t h)
{
	REAL_OR(__hipPushCallConfiguration, hipErrorNotSupported);
	harmless(E___hipPushCallConfiguration);
	return real___hipPushCallConfiguration(g, b, smem, h);
}
EXPORT_AS(__hipPushCallConfiguration)

static hipError_t (*real___hipPopCallConfiguration)(dim3 *, dim3 *, size_t *, hipStream_t *);
static hipError_t hook___hipPopCallConfiguration(dim3 *g, dim3 *b, size_t *smem, hipStream_t *h)
{
	REAL_OR(__hipPopCallConfiguration, hipErrorNotSupported);
	harmless(E___hipPopCallConfiguration);
	return real___hipPopCallConfiguration(g, b, smem, h);
}
EXPORT_AS(__hipPopCallConfiguration)

static hipError_t (*real_hipConfigureCall)(dim3, dim3, size_t, hipStream_t);
static hipError_t hook_hipConfigureCall(dim3 g, dim3 b, size_t smem, hipStream_t h)
{
	hipError_t r;

	REAL_OR(hipConfigureCall, hipErrorNotSupported);
	harmless(E_hipConfigureCall);
	r = real_hipConfigureCall(g, b, smem, h);
	if (r == hipSuccess)
		configured_stream = h;
	return r;
}
EXPORT_AS(hipConfigureCall)

/* The runtime's own lookup (ROCm 6.1+): hand out hooks. */
static hipError_t (*real_hipGetProcAddress)(const char *, void **, int, uint64_t,
					    hipDriverProcAddressQueryResult *);
static hipError_t hook_hipGetProcAddress(const char *sym, void **pfn, int ver, uint64_t fl,
					 hipDriverProcAddressQueryResult *st)
{
	hipError_t r;

	REAL_OR(hipGetProcAddress, hipErrorNotSupported);
	r = real_hipGetProcAddress(sym, pfn, ver, fl, st);
	if (r == hipSuccess && pfn && *pfn && xh_init())
		*pfn = xsi_proc_redirect(&xh_rt, sym, *pfn, ver,
					 fl & HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
	return r;
}
EXPORT_AS(hipGetProcAddress)

/* The same lookup under CUDA's name (ROCm 7.1); the _spt export looks up
 * per-thread variants unless asked for the legacy ones. */
#define ENTRY_POINT_HOOK(sym, pt_default)				\
	static hipError_t (*real_##sym)(const char *, void **, unsigned long long, \
					hipDriverEntryPointQueryResult *); \
	static hipError_t hook_##sym(const char *name, void **pfn, unsigned long long fl, \
				     hipDriverEntryPointQueryResult *st) \
	{								\
		bool pt = (fl & hipEnablePerThreadDefaultStream) ||	\
			  ((pt_default) && !(fl & hipEnableLegacyStream)); \
		hipError_t r;						\
									\
		REAL_OR(sym, hipErrorNotSupported);			\
		r = real_##sym(name, pfn, fl, st);			\
		if (r == hipSuccess && pfn && *pfn && xh_init())	\
			*pfn = xsi_proc_redirect(&xh_rt, name, *pfn, INT_MAX, pt); \
		return r;						\
	}								\
	EXPORT_AS(sym)
ENTRY_POINT_HOOK(hipGetDriverEntryPoint, false)
ENTRY_POINT_HOOK(hipGetDriverEntryPoint_spt, true)

/* A priority set as a stream attribute (hipStreamAttributePriority): the
 * request, as at creation; copied from another stream: the stream's XQueue
 * follows the runtime's (a runtime that reports none moves nothing). */
static hipError_t (*real_hipStreamSetAttribute)(hipStream_t, hipStreamAttrID,
						const hipStreamAttrValue *);
static hipError_t hook_hipStreamSetAttribute(hipStream_t h, hipStreamAttrID a,
					     const hipStreamAttrValue *v)
{
	hipError_t r;

	REAL_OR(hipStreamSetAttribute, hipErrorNotSupported);
	r = real_hipStreamSetAttribute(h, a, v);
	if (r == hipSuccess && a == hipStreamAttributePriority && v &&
	    xh_default_kind((uintptr_t)h) == XSI_NOT_DEFAULT && xh_init())
		(void)xsched_stream_set_priority(h, xh_priority(xh_requested_priority(v->priority)));
	return r;
}
EXPORT_AS(hipStreamSetAttribute)

static hipError_t (*real_hipStreamCopyAttributes)(hipStream_t, hipStream_t);
static hipError_t hook_hipStreamCopyAttributes(hipStream_t dst, hipStream_t src)
{
	struct xsi_prio_watch w;
	hipError_t r;

	REAL_OR(hipStreamCopyAttributes, hipErrorNotSupported);
	xsi_prio_watch_begin(&xh_rt, (uintptr_t)dst, &w);
	r = real_hipStreamCopyAttributes(dst, src);
	xsi_prio_watch_end(&w, r == hipSuccess);
	return r;
}
EXPORT_AS(hipStreamCopyAttributes)

/* ---- the table ---------------------------------------------------------- */

#define ENT(sym, ver, c, sc, pt)					\
	[E_##sym] = { .name = #sym, .version = ver, .cls = c, .scope = sc, \
		      .flags = (pt) ? XSI_ENTRY_PER_THREAD : 0,		\
		      .hook = (void *)hook_##sym, .real = (void **)&real_##sym, \
		      .base = NULL, .since = 0 },
#define ENT_S(sym, ver, pt, P, A, S) ENT(sym, ver, XSI_SCHEDULED, XSI_SCOPE_STREAM, pt)
#define ENT_M(sym, ver, P, A, F) ENT(sym, ver, XSI_SCHEDULED, XSI_SCOPE_STREAM, 0)
#define ENT_SO(sym, ver, pt) ENT(sym, ver, XSI_SCHEDULED, XSI_SCOPE_STREAM, pt)
#define ENT_O(sym, ver, pt, sc, T, P, A, S) ENT(sym, ver, XSI_ORDERED, sc, pt)
#define ENT_OO(sym, ver, pt, sc) ENT(sym, ver, XSI_ORDERED, sc, pt)
#define ENT_H(sym, ver) ENT(sym, ver, XSI_HARMLESS, XSI_SCOPE_STREAM, 0)
static struct xsi_entry entries[E_COUNT] = {
	HIP_SCHEDULED(ENT_S) HIP_SCHEDULED_MULTI(ENT_M) HIP_SCHEDULED_OWN(ENT_SO)
	HIP_ORDERED(ENT_O) HIP_ORDERED_OWN(ENT_OO) HIP_HARMLESS(ENT_H)
};

#define CXX_ENT(sym, cxx, ver) { #sym, cxx, ver },
static const struct xh_cxx_name cxx_names[] = { HIP_CXX_NAMES(CXX_ENT) };

static const struct xh_cxx_name *cxx_name_of(const struct xsi_entry *e)
{
	size_t i;

	for (i = 0; i < sizeof(cxx_names) / sizeof(cxx_names[0]); i++)
		if (!strcmp(cxx_names[i].name, e->name))
			return &cxx_names[i];
	return NULL;
}

static const struct xh_cxx_name *cxx_name_find(const char *cxx)
{
	size_t i;

	for (i = 0; i < sizeof(cxx_names) / sizeof(cxx_names[0]); i++)
		if (!strcmp(cxx_names[i].cxx, cxx))
			return &cxx_names[i];
	return NULL;
}

/* @e's real function looked up again, under its C++ name @c too: a runtime
 * loaded after do_resolve() ran; NULL if none has it. */
static void *real_again(const struct xsi_entry *e, const struct xh_cxx_name *c)
{
	void *f = lookup_real(e->name, e->version, e->hook);

	return f || !c ? f : lookup_real(c->cxx, c->version, e->hook);
}

/* Names of the unhooked list, for the log and the coverage check. */
#define UNHOOKED_NAME(sym, why) #sym,
static const char *const unhooked[] __attribute__((unused)) = { HIP_UNHOOKED(UNHOOKED_NAME) NULL };

struct xsi_runtime xh_rt = {
	.name = "hip",
	.libs = NULL,	/* RTLD_NEXT, then a loaded libamdhip64 (do_resolve) */
	.entries = entries,
	.nentries = E_COUNT,
	.flags = XSI_RT_CALLER_HELD,
	.per_thread_handle = (uintptr_t)hipStreamPerThread,
	.default_kind = xh_default_kind,
	.current_device = xh_current_device,
	.device_count = xh_device_count,
	.describe = xh_describe,
	.enter = NULL,	/* caller-held: nobody runs another thread's call */
	.mark_record = xh_mark_record,
	.mark_wait = xh_mark_wait,
	.mark_free = xh_mark_free,
	.is_capturing = xh_is_capturing,
};

__attribute__((constructor)) static void xh_hold_limit(void)
{
	xh_rt.hold_max_ns = xh_env_hold_max_ns();
}

/* ---- dlsym and the C API ------------------------------------------------- */

/*
 * Every dlsym() of the process: HIP functions get their hooks, whatever
 * handle they are asked on (frameworks dlopen libamdhip64 themselves), under
 * their C names and their C++ names (HIP_CXX_NAMES).  A name that only our
 * own definition answers (RTLD_DEFAULT, or our handle) while the runtime
 * lacks it gets NULL, as without the interposer: a feature probe must not
 * find a hook that can only answer hipErrorNotSupported.  dlsym(RTLD_NEXT,
 * ...) is answered as if asked by libxsched (the real dlsym sees us as the
 * caller): the next definition after this library.
 */
/* What a lookup of @name that found @r (non-NULL) answers. */
XSI_EARLY static void *xh_lookup_answer(const char *name, void *r)
{
	const struct xh_cxx_name *c = NULL;
	const struct xsi_entry *e;
	bool on;

	if (!strncmp(name, "_Z", 2))
		c = cxx_name_find(name);
	if (!c && strncmp(name, "hip", 3) && strncmp(name, "__hip", 5))
		return r;
	e = xsi_entry_find(&xh_rt, c ? c->name : name);
	if (!e)
		return r;
	on = xh_init();
	/* Our own definition answered: is there a runtime's behind it (one
	 * loaded since the first resolution too)? */
	if (r == e->hook && !*e->real && !(*e->real = real_again(e, c)))
		return NULL;
	return on ? xsi_redirect(&xh_rt, e->name, r) : r;
}

/* (RTLD_NEXT reaches glibc's directly on x86-64: XSI_DLSYM_EXPORT.) */
XSI_EARLY void *xh_dlsym(void *handle, const char *name);
XSI_EARLY void *xh_dlsym(void *handle, const char *name)
{
	void *r = xsi_real_dlsym(handle, name);

	return handle == RTLD_NEXT || !r ? r : xh_lookup_answer(name, r);
}

/* dlvsym() likewise: a lookup by version node answers as dlsym() does. */
XSI_EARLY void *xh_dlvsym(void *handle, const char *name, const char *version);
XSI_EARLY void *xh_dlvsym(void *handle, const char *name, const char *version)
{
	void *r = xsi_real_dlvsym(handle, name, version);

	return handle == RTLD_NEXT || !r ? r : xh_lookup_answer(name, r);
}

XSI_DLSYM_EXPORT(xh_dlsym, xh_dlvsym);

__attribute__((visibility("default"))) int xsched_stream_set_priority(const void *stream,
								     int32_t priority)
{
	struct xsi_stream *s;

	if (priority < XSCHED_PRIO_MIN || priority > XSCHED_PRIO_MAX)
		return -EINVAL;
	if (!xh_init())
		return -ENODEV;
	s = xsi_stream_get(&xh_rt, (uintptr_t)stream, 0);
	if (!s)
		return -ENOENT;
	return xsi_stream_set_priority(&xh_rt, s, priority);
}
