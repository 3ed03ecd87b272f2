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
 * XSCHED_PRIO_MIN..MAX; xsched_stream_set_priority() changes it later.
 *
 * The table is the X-macro lists below: HIP_SCHEDULED, HIP_ORDERED,
 * HIP_HARMLESS (hooked), and HIP_UNHOOKED (stream and event functions that
 * are deliberately not hooked, and why).  tests/libxsched/hip/coverage.py reads them.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hip/hip_runtime_api.h>

#include "../internal.h"
#include "interpose.h"
#include "hsaq.h"

/*
 * ---- what older headers lack: ROCm 5.3+, 6.x and 7.x entry points --------
 * Every prototype here and in the parameter lists below must be the one
 * each ROCm's header declares (a hook defines the runtime's name):
 * tools/check-hip-headers.sh builds this file against a ROCm's headers.
 */

#if HIP_VERSION < 50300000
hipError_t hipLaunchHostFunc_spt(hipStream_t, hipHostFn_t, void *);
hipError_t hipGraphLaunch_spt(hipGraphExec_t, hipStream_t);
hipError_t hipStreamAddCallback_spt(hipStream_t, hipStreamCallback_t, void *, unsigned int);
hipError_t hipMemsetAsync_spt(void *, int, size_t, hipStream_t);
hipError_t hipMemset2DAsync_spt(void *, size_t, int, size_t, size_t, hipStream_t);
hipError_t hipMemset3DAsync_spt(hipPitchedPtr, int, hipExtent, hipStream_t);
hipError_t hipMemcpy3DAsync_spt(const struct hipMemcpy3DParms *, hipStream_t);
hipError_t hipMemcpy2DAsync_spt(void *, size_t, const void *, size_t, size_t, size_t,
				hipMemcpyKind, hipStream_t);
hipError_t hipMemcpyFromSymbolAsync_spt(void *, const void *, size_t, size_t, hipMemcpyKind,
					hipStream_t);
hipError_t hipMemcpyToSymbolAsync_spt(const void *, const void *, size_t, size_t,
				      hipMemcpyKind, hipStream_t);
hipError_t hipMemcpyFromArray_spt(void *, hipArray_const_t, size_t, size_t, size_t,
				  hipMemcpyKind);
hipError_t hipMemcpy2DFromArrayAsync_spt(void *, size_t, hipArray_const_t, size_t, size_t,
					 size_t, size_t, hipMemcpyKind, hipStream_t);
hipError_t hipMemcpy2DToArrayAsync_spt(hipArray_t, size_t, size_t, const void *, size_t,
				       size_t, size_t, hipMemcpyKind, hipStream_t);
hipError_t hipStreamBeginCapture_spt(hipStream_t, hipStreamCaptureMode);
hipError_t hipStreamEndCapture_spt(hipStream_t, hipGraph_t *);
hipError_t hipEventRecord_spt(hipEvent_t, hipStream_t);
hipError_t hipGraphUpload(hipGraphExec_t, hipStream_t);
#endif
#if HIP_VERSION < 50500000
/* The module cooperative launches (ROCm 5.5). */
typedef struct hipFunctionLaunchParams_t {
	hipFunction_t function;
	unsigned int gridDimX, gridDimY, gridDimZ;
	unsigned int blockDimX, blockDimY, blockDimZ;
	unsigned int sharedMemBytes;
	hipStream_t hStream;
	void **kernelParams;
} hipFunctionLaunchParams;
hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t, unsigned int, unsigned int,
					    unsigned int, unsigned int, unsigned int,
					    unsigned int, unsigned int, hipStream_t, void **);
hipError_t hipModuleLaunchCooperativeKernelMultiDevice(hipFunctionLaunchParams *,
						       unsigned int, unsigned int);
#endif
/* hipGetProcAddress and hipStreamBeginCaptureToGraph: exported from ROCm 6.1
 * (hip_6.1), declared by the headers from 6.2 on (6.1.x's do not). */
#if HIP_VERSION < 60200000
/* hipGetProcAddress: dlsym on the runtime's own handle. */
typedef int hipDriverProcAddressQueryResult;
hipError_t hipGetProcAddress(const char *, void **, int, uint64_t,
			     hipDriverProcAddressQueryResult *);
hipError_t hipStreamBeginCaptureToGraph(hipStream_t, hipGraph_t, const hipGraphNode_t *,
					const void *, size_t, hipStreamCaptureMode);
#define XH_EDGE_DATA const void
#else
#define XH_EDGE_DATA const hipGraphEdgeData
#endif
#if HIP_VERSION < 60100000
/* hipGraphInstantiateWithParams (ROCm 6.1, hip_6.1): the layout of the
 * 6.1+ headers; only flags and uploadStream are read. */
typedef struct hipGraphInstantiateParams {
	hipGraphNode_t errNode_out;
	unsigned long long flags;
	int result_out;
	hipStream_t uploadStream;
} hipGraphInstantiateParams;
hipError_t hipGraphInstantiateWithParams(hipGraphExec_t *, hipGraph_t,
					 hipGraphInstantiateParams *);
#endif
/* hipGraphInstantiateFlagUpload: instantiate and upload on uploadStream. */
#define XH_INSTANTIATE_UPLOAD 2
#if HIP_VERSION >= 60100000
_Static_assert(hipGraphInstantiateFlagUpload == XH_INSTANTIATE_UPLOAD,
	       "hipGraphInstantiateFlagUpload moved");
#endif
#ifndef HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
#define HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (1ULL << 1)
#endif
#if HIP_VERSION < 60200000
/* The 1D array copies (ROCm 6.2). */
hipError_t hipMemcpyAtoHAsync(void *, hipArray_t, size_t, size_t, hipStream_t);
hipError_t hipMemcpyHtoAAsync(hipArray_t, size_t, const void *, size_t, hipStream_t);
hipError_t hipMemcpyAtoD(hipDeviceptr_t, hipArray_t, size_t, size_t);
hipError_t hipMemcpyDtoA(hipArray_t, size_t, hipDeviceptr_t, size_t);
hipError_t hipMemcpyAtoA(hipArray_t, size_t, hipArray_t, size_t, size_t);
hipError_t hipMemcpy2DArrayToArray(hipArray_t, size_t, size_t, hipArray_const_t, size_t, size_t,
				   size_t, size_t, hipMemcpyKind);
#endif
#if HIP_VERSION < 60400000
hipError_t hipEventRecordWithFlags(hipEvent_t, hipStream_t, unsigned int);
/* hipStreamBatchMemOp (6.4; 6.3's development headers declare it too, and
 * these declarations are the same). */
typedef union hipStreamBatchMemOpParams_union hipStreamBatchMemOpParams;
hipError_t hipStreamBatchMemOp(hipStream_t, unsigned int, hipStreamBatchMemOpParams *,
			       unsigned int);
#endif
#if HIP_VERSION < 70100000
/* ROCm 7.1: 2D memsets, batched and peer 3D copies, prefetch to a location,
 * and the driver entry point lookup (hipGetProcAddress's CUDA-named twin). */
typedef struct hipMemcpyAttributes hipMemcpyAttributes;
typedef struct hipMemcpy3DPeerParms hipMemcpy3DPeerParms;
struct hipMemcpy3DBatchOp;
typedef int hipDriverEntryPointQueryResult;
hipError_t hipMemsetD2D8(hipDeviceptr_t, size_t, unsigned char, size_t, size_t);
hipError_t hipMemsetD2D16(hipDeviceptr_t, size_t, unsigned short, size_t, size_t);
hipError_t hipMemsetD2D32(hipDeviceptr_t, size_t, unsigned int, size_t, size_t);
hipError_t hipMemsetD2D8Async(hipDeviceptr_t, size_t, unsigned char, size_t, size_t, hipStream_t);
hipError_t hipMemsetD2D16Async(hipDeviceptr_t, size_t, unsigned short, size_t, size_t,
			       hipStream_t);
hipError_t hipMemsetD2D32Async(hipDeviceptr_t, size_t, unsigned int, size_t, size_t, hipStream_t);
hipError_t hipMemcpyBatchAsync(void **, void **, size_t *, size_t, hipMemcpyAttributes *, size_t *,
			       size_t, size_t *, hipStream_t);
hipError_t hipMemcpy3DBatchAsync(size_t, struct hipMemcpy3DBatchOp *, size_t *, unsigned long long,
				 hipStream_t);
hipError_t hipMemcpy3DPeer(hipMemcpy3DPeerParms *);
hipError_t hipMemcpy3DPeerAsync(hipMemcpy3DPeerParms *, hipStream_t);
hipError_t hipMemPrefetchAsync_v2(const void *, size_t, hipMemLocation, unsigned int, hipStream_t);
hipError_t hipGetDriverEntryPoint(const char *, void **, unsigned long long,
				  hipDriverEntryPointQueryResult *);
hipError_t hipGetDriverEntryPoint_spt(const char *, void **, unsigned long long,
				      hipDriverEntryPointQueryResult *);
#endif
#ifndef hipEnableLegacyStream
#define hipEnableLegacyStream 0x1
#define hipEnablePerThreadDefaultStream 0x2
/* Stream attributes (7.1): only forwarded, the value is never read. */
typedef int hipStreamAttrID;
typedef union hipStreamAttrValue hipStreamAttrValue;
hipError_t hipStreamSetAttribute(hipStream_t, hipStreamAttrID, const hipStreamAttrValue *);
#endif
#if HIP_VERSION < 70200000
hipError_t hipStreamCopyAttributes(hipStream_t, hipStream_t);
#endif
#if HIP_VERSION < 60500000
/* hipLaunchKernelExC / hipDrvLaunchKernelEx (ROCm 6.5): only the stream
 * is read here; the layouts are those of the 6.5 headers. */
typedef struct hipLaunchConfig_st {
	dim3 gridDim;
	dim3 blockDim;
	size_t dynamicSmemBytes;
	hipStream_t stream;
	void *attrs;
	unsigned int numAttrs;
} hipLaunchConfig_t;
typedef struct HIP_LAUNCH_CONFIG_st {
	unsigned int gridDimX, gridDimY, gridDimZ;
	unsigned int blockDimX, blockDimY, blockDimZ;
	unsigned int sharedMemBytes;
	hipStream_t hStream;
	void *attrs;
	unsigned int numAttrs;
} HIP_LAUNCH_CONFIG;
hipError_t hipLaunchKernelExC(const hipLaunchConfig_t *, const void *, void **);
hipError_t hipDrvLaunchKernelEx(const HIP_LAUNCH_CONFIG *, hipFunction_t, void **, void **);
#endif

/* hipMemcpyHtoD(Async)'s source: void * up to ROCm 6.4, const void * from
 * 7.0.  Taken from the header's own declaration, not from its version. */
#define XH_SRC_OF(fn, ...)						\
	__typeof__(_Generic(&fn, hipError_t (*)(hipDeviceptr_t, const void *, __VA_ARGS__) : \
			    (const void *)0, default: (void *)0))
typedef XH_SRC_OF(hipMemcpyHtoD, size_t) xh_htod_src;
typedef XH_SRC_OF(hipMemcpyHtoDAsync, size_t, hipStream_t) xh_htod_async_src;

/* Exported by every version but declared by no C header. */
void **__hipRegisterFatBinary(const void *data);
void __hipUnregisterFatBinary(void **modules);
void __hipRegisterFunction(void **modules, const void *host_fn, char *dev_fn,
			   const char *dev_name, unsigned int thread_limit, void *tid,
			   void *bid, dim3 *block, dim3 *grid, int *wsize);
void __hipRegisterVar(void **modules, void *var, char *host_var, char *dev_var, int ext,
		      size_t size, int constant, int global);
/* hip_ext.h is C++; the C exports (ROCm 6.x, 7.x) and the C++ ones (all,
 * HIP_CXX_NAMES). */
hipError_t hipExtModuleLaunchKernel(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t,
				    uint32_t, uint32_t, size_t, hipStream_t, void **, void **,
				    hipEvent_t, hipEvent_t, uint32_t);
hipError_t hipHccModuleLaunchKernel(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t,
				    uint32_t, uint32_t, size_t, hipStream_t, void **, void **,
				    hipEvent_t, hipEvent_t);

/* ---- the runtime functions the table's ops call (never our hooks) ------- */

static struct {
	hipError_t (*get_device)(int *);
	hipError_t (*set_device)(int);
	hipError_t (*get_device_count)(int *);
	hipError_t (*stream_get_priority)(hipStream_t, int *);
	int (*stream_device)(hipStream_t);
	hipError_t (*stream_is_capturing)(hipStream_t, hipStreamCaptureStatus *);
	hipError_t (*event_create)(hipEvent_t *, unsigned int);
	hipError_t (*event_destroy)(hipEvent_t);
	hipError_t (*event_record)(hipEvent_t, hipStream_t);
	hipError_t (*event_query)(hipEvent_t);
} xh_real;

extern struct xsi_runtime xh_rt;
static const char *const xh_sonames[] = XSI_HIP_SONAMES;

/* ---- the core's runtime ops ---------------------------------------------- */

static enum xsi_default xh_default_kind(uintptr_t h)
{
	if (!h)
		return XSI_DEFAULT_NULL;
	if (h == (uintptr_t)hipStreamPerThread)
		return XSI_DEFAULT_PER_THREAD;
	return XSI_NOT_DEFAULT;
}

static int xh_current_device(void)
{
	int dev = 0;

	return xh_real.get_device(&dev) == hipSuccess ? dev : 0;
}

static int xh_device_count(void)
{
	int n = 0;

	return xh_real.get_device_count && xh_real.get_device_count(&n) == hipSuccess ? n : -1;
}

/* HIP priority -> xsched priority (see the top of the file). */
static int32_t xh_priority(int hip_prio)
{
	const struct xs_config *cfg = xs_config();
	int64_t p = (cfg->has_priority ? cfg->priority : 0) - (int64_t)hip_prio;

	return p < XSCHED_PRIO_MIN ? XSCHED_PRIO_MIN : p > XSCHED_PRIO_MAX ? XSCHED_PRIO_MAX :
	       (int32_t)p;
}

static atomic_bool no_device_said;

static int xh_describe(uintptr_t h, struct xsi_stream_desc *d)
{
	int prio = 0, dev;

	if (xh_default_kind(h) == XSI_NOT_DEFAULT) {
		dev = xh_real.stream_device((hipStream_t)h);
		if (dev < 0 ||
		    xh_real.stream_get_priority((hipStream_t)h, &prio) != hipSuccess)
			return -ENOENT;
		d->device = dev;
	} else if (xh_real.get_device(&dev) != hipSuccess) {
		if (!atomic_exchange(&no_device_said, true))
			xs_warn("hip: no usable HIP device (hipGetDevice fails): calls go to the runtime unscheduled");
		return -ENODEV;
	}
	d->priority = xh_priority(prio);
	d->context = 0;
	return 0;
}

/* Our own records must not end another thread's capture (global mode). */
static bool capturing(hipStream_t h)
{
	hipStreamCaptureStatus cs = hipStreamCaptureStatusNone;

	return xh_real.stream_is_capturing &&
	       xh_real.stream_is_capturing(h, &cs) == hipSuccess &&
	       cs != hipStreamCaptureStatusNone;
}

/* The core's question: is @h being captured (its own capture, or one it
 * joined)? */
static int xh_is_capturing(uintptr_t h)
{
	return xh_real.stream_is_capturing ? capturing((hipStream_t)h) : -ENOSYS;
}

/* An event after what was handed to the runtime on @h, on @d's device. */
static int xh_mark_record(uintptr_t h, const struct xsi_stream_desc *d, void **mark)
{
	hipEvent_t ev = NULL;
	int old = -1;
	hipError_t r;

	if (xh_real.get_device(&old) != hipSuccess)
		return -EIO;
	if (old != d->device && xh_real.set_device(d->device) != hipSuccess)
		return -EIO;
	if (capturing((hipStream_t)h)) {
		r = hipErrorStreamCaptureUnsupported;
	} else {
		r = xh_real.event_create(&ev, hipEventDisableTiming);
		if (r == hipSuccess) {
			r = xh_real.event_record(ev, (hipStream_t)h);
			if (r != hipSuccess)
				xh_real.event_destroy(ev);
		}
	}
	if (old != d->device)
		xh_real.set_device(old);
	if (r != hipSuccess)
		return r == hipErrorStreamCaptureUnsupported ? -EBUSY : -EIO;
	*mark = ev;
	return 0;
}

/* Poll (a yield, then sleeps of 10 us growing to 100 us) rather than block
 * in hipEventSynchronize, so that the timeout holds even when the awaited
 * work waits for the host. */
static int xh_mark_wait(void *mark, int64_t timeout_ns)
{
	uint64_t deadline = timeout_ns < 0 ? UINT64_MAX : xs_now_ns() + (uint64_t)timeout_ns;
	uint64_t ns = 0;

	for (;;) {
		hipError_t r = xh_real.event_query(mark);

		if (r == hipSuccess)
			return 0;
		if (r != hipErrorNotReady)
			return -EIO;
		if (xs_now_ns() >= deadline)
			return -ETIMEDOUT;
		if (!ns) {
			sched_yield();
			ns = 10000;
		} else {
			struct timespec ts = { 0, (long)ns };

			nanosleep(&ts, NULL);
			if (ns < 100000)
				ns *= 2;
		}
	}
}

static void xh_mark_free(void *mark)
{
	xh_real.event_destroy(mark);
}

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

static const char *const memwaits[] = { "hipStreamWaitValue", "hipStreamBatchMemOp", NULL };

static void do_resolve(void)
{
	unsigned int miss = 0;
	size_t i;
	int r;

	tls_in_init = true;
	/* Waits on a memory value: their writer is invisible to us. */
	xsi_entries_flag(&xh_rt, memwaits, XSI_ENTRY_MEMWAIT);
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
		xs_info("hip: interposer ready: Lv1 caller-held, threshold %u, hold limit %llu ms; %u of %zu hooked symbols absent from this libamdhip64",
			xs_config()->threshold,
			(unsigned long long)(xh_rt.hold_max_ns / 1000000), miss, xh_rt.nentries);
		atomic_store(&sched_on, true);
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

static uint64_t hold_max_ns(void)
{
	const char *s = getenv("XSCHED_HIP_HOLD_MAX_MS");
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return 10000ULL * 1000000ULL;
	v = strtoull(s, &end, 10);
	if (*end || !v) {
		xs_warn("hip: XSCHED_HIP_HOLD_MAX_MS=%s is not a positive number of ms; using 10000", s);
		return 10000ULL * 1000000ULL;
	}
	return v * 1000000ULL;
}

/* ---- the table -------------------------------------------------------------- */

#define EXPORT_AS(sym) \
	extern __typeof__(hook_##sym) sym __attribute__((alias("hook_" #sym), visibility("default")));
/* C++ exports: the same, under a mangled name. */
#define EXPORT_MANGLED(sym, mangled) \
	extern __typeof__(hook_##sym) sym##_cxx __asm__(mangled) \
		__attribute__((alias("hook_" #sym), visibility("default")));

/* Parameter lists: P the declaration, A the call. */
#define LK_P (const void *f, dim3 g, dim3 b, void **args, size_t smem, hipStream_t h)
#define LK_A (f, g, b, args, smem, h)
#define COOP_P (const void *f, dim3 g, dim3 b, void **args, unsigned int smem, hipStream_t h)
#define EXTLK_P (const void *f, dim3 g, dim3 b, void **args, size_t smem, hipStream_t h, \
		 hipEvent_t e0, hipEvent_t e1, int fl)
#define EXTLK_A (f, g, b, args, smem, h, e0, e1, fl)
#define MLK_P (hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz, \
	       unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem, \
	       hipStream_t h, void **params, void **extra)
#define MLK_A (f, gx, gy, gz, bx, by, bz, smem, h, params, extra)
#define MCOOP_P (hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz, \
		 unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem, \
		 hipStream_t h, void **params)
#define MCOOP_A (f, gx, gy, gz, bx, by, bz, smem, h, params)
#define EXTMLK_P (hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, \
		  uint32_t by, uint32_t bz, size_t smem, hipStream_t h, void **params, \
		  void **extra, hipEvent_t e0, hipEvent_t e1, uint32_t fl)
#define EXTMLK_A (f, gx, gy, gz, bx, by, bz, smem, h, params, extra, e0, e1, fl)
#define HCCMLK_P (hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, \
		  uint32_t by, uint32_t bz, size_t smem, hipStream_t h, void **params, \
		  void **extra, hipEvent_t e0, hipEvent_t e1)
#define HCCMLK_A (f, gx, gy, gz, bx, by, bz, smem, h, params, extra, e0, e1)
#define LKEXC_P (const hipLaunchConfig_t *cfg, const void *f, void **args)
#define LKEXC_A (cfg, f, args)
#define DLKEX_P (const HIP_LAUNCH_CONFIG *cfg, hipFunction_t f, void **params, void **extra)
#define DLKEX_A (cfg, f, params, extra)
#define HOSTFN_P (hipStream_t h, hipHostFn_t fn, void *data)
#define HOSTFN_A (h, fn, data)
#define CB_P (hipStream_t h, hipStreamCallback_t cb, void *data, unsigned int fl)
#define CB_A (h, cb, data, fl)
#define GRAPH_P (hipGraphExec_t gx, hipStream_t h)
#define GRAPH_A (gx, h)
#define CPY_P (void *dst, const void *src, size_t n, hipMemcpyKind k, hipStream_t h)
#define CPY_A (dst, src, n, k, h)
#define HTOD_P (hipDeviceptr_t dst, xh_htod_async_src src, size_t n, hipStream_t h)
#define DTOH_P (void *dst, hipDeviceptr_t src, size_t n, hipStream_t h)
#define DTOD_P (hipDeviceptr_t dst, hipDeviceptr_t src, size_t n, hipStream_t h)
#define X3_A (dst, src, n, h)
#define C2D_P (void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t ht, \
	       hipMemcpyKind k, hipStream_t h)
#define C2D_A (dst, dp, src, sp, w, ht, k, h)
#define C2DTA_P (hipArray_t dst, size_t wo, size_t ho, const void *src, size_t sp, size_t w, \
		 size_t ht, hipMemcpyKind k, hipStream_t h)
#define C2DTA_A (dst, wo, ho, src, sp, w, ht, k, h)
#define C2DFA_P (void *dst, size_t dp, hipArray_const_t src, size_t wo, size_t ho, size_t w, \
		 size_t ht, hipMemcpyKind k, hipStream_t h)
#define C2DFA_A (dst, dp, src, wo, ho, w, ht, k, h)
#define C3D_P (const struct hipMemcpy3DParms *p, hipStream_t h)
#define DC3D_P (const HIP_MEMCPY3D *p, hipStream_t h)
#define P2D_P (const hip_Memcpy2D *p, hipStream_t h)
#define PH_A (p, h)
#define TOSYM_P (const void *sym, const void *src, size_t n, size_t off, hipMemcpyKind k, \
		 hipStream_t h)
#define TOSYM_A (sym, src, n, off, k, h)
#define FROMSYM_P (void *dst, const void *sym, size_t n, size_t off, hipMemcpyKind k, \
		   hipStream_t h)
#define FROMSYM_A (dst, sym, n, off, k, h)
#define PEER_P (void *dst, int dd, const void *src, int sd, size_t n, hipStream_t h)
#define PEER_A (dst, dd, src, sd, n, h)
#define SET_P (void *dst, int v, size_t n, hipStream_t h)
#define SET8_P (hipDeviceptr_t dst, unsigned char v, size_t n, hipStream_t h)
#define SET16_P (hipDeviceptr_t dst, unsigned short v, size_t n, hipStream_t h)
#define SET32_P (hipDeviceptr_t dst, int v, size_t n, hipStream_t h)
#define SET_A (dst, v, n, h)
#define S2D_P (void *dst, size_t pitch, int v, size_t w, size_t ht, hipStream_t h)
#define S2D_A (dst, pitch, v, w, ht, h)
#define S3D_P (hipPitchedPtr p, int v, hipExtent ext, hipStream_t h)
#define S3D_A (p, v, ext, h)
#define PREF_P (const void *p, size_t n, int dev, hipStream_t h)
#define MAPA_P (hipArrayMapInfo *l, unsigned int n, hipStream_t h)
#define MAPA_A (l, n, h)
#define PREF_A (p, n, dev, h)
#define WAIT32_P (hipStream_t h, void *p, uint32_t v, unsigned int fl, uint32_t mask)
#define WAIT64_P (hipStream_t h, void *p, uint64_t v, unsigned int fl, uint64_t mask)
#define WAITV_A (h, p, v, fl, mask)
#define WRITE32_P (hipStream_t h, void *p, uint32_t v, unsigned int fl)
#define WRITE64_P (hipStream_t h, void *p, uint64_t v, unsigned int fl)
#define WRITEV_A (h, p, v, fl)
#define SEMSIG_P (const hipExternalSemaphore_t *sem, \
		  const hipExternalSemaphoreSignalParams *par, unsigned int n, hipStream_t h)
#define SEMWAIT_P (const hipExternalSemaphore_t *sem, \
		   const hipExternalSemaphoreWaitParams *par, unsigned int n, hipStream_t h)
#define SEM_A (sem, par, n, h)
#define REC_P (hipEvent_t ev, hipStream_t h)
#define REC_A (ev, h)
#define RECF_P (hipEvent_t ev, hipStream_t h, unsigned int fl)
#define RECF_A (ev, h, fl)
#define WITHSTREAM_P (void *dst, const void *src, size_t n, hipMemcpyKind k, hipStream_t h)
#define ATOHA_P (void *dst, hipArray_t src, size_t off, size_t n, hipStream_t h)
#define ATOHA_A (dst, src, off, n, h)
#define HTOAA_P (hipArray_t dst, size_t off, const void *src, size_t n, hipStream_t h)
#define HTOAA_A (dst, off, src, n, h)
#define BATCHOP_P (hipStream_t h, unsigned int n, hipStreamBatchMemOpParams *ops, unsigned int fl)
#define BATCHOP_A (h, n, ops, fl)
#define SD2D8_P (hipDeviceptr_t dst, size_t pitch, unsigned char v, size_t w, size_t ht, \
		 hipStream_t h)
#define SD2D16_P (hipDeviceptr_t dst, size_t pitch, unsigned short v, size_t w, size_t ht, \
		  hipStream_t h)
#define SD2D32_P (hipDeviceptr_t dst, size_t pitch, unsigned int v, size_t w, size_t ht, \
		  hipStream_t h)
#define CPYB_P (void **dsts, void **srcs, size_t *sizes, size_t n, hipMemcpyAttributes *attrs, \
		size_t *attr_idx, size_t nattrs, size_t *fail_idx, hipStream_t h)
#define CPYB_A (dsts, srcs, sizes, n, attrs, attr_idx, nattrs, fail_idx, h)
#define C3DB_P (size_t n, struct hipMemcpy3DBatchOp *ops, size_t *fail_idx, unsigned long long fl, \
		hipStream_t h)
#define C3DB_A (n, ops, fail_idx, fl, h)
#define C3DP_P (hipMemcpy3DPeerParms *p, hipStream_t h)
#define PREF2_P (const void *p, size_t n, hipMemLocation loc, unsigned int fl, hipStream_t h)
#define PREF2_A (p, n, loc, fl, h)

/*
 * Scheduled: X(symbol, node, per-thread, params, args, stream).  The hook
 * holds the caller while the policy holds the stream, then makes the call.
 * Event records also tell the core which stream and sequence the event
 * stands for (events with their own hook below).
 */
#define HIP_SCHEDULED(X) \
	X(hipLaunchKernel, "hip_4.2", 0, LK_P, LK_A, h) \
	X(hipLaunchKernel_spt, "hip_5.2", 1, LK_P, LK_A, h) \
	X(hipExtLaunchKernel, "hip_4.2", 0, EXTLK_P, EXTLK_A, h) \
	X(hipLaunchCooperativeKernel, "hip_4.2", 0, COOP_P, LK_A, h) \
	X(hipLaunchCooperativeKernel_spt, "hip_5.2", 1, COOP_P, LK_A, h) \
	X(hipModuleLaunchKernel, "hip_4.2", 0, MLK_P, MLK_A, h) \
	X(hipModuleLaunchCooperativeKernel, "hip_5.5", 0, MCOOP_P, MCOOP_A, h) \
	X(hipExtModuleLaunchKernel, "hip_4.2", 0, EXTMLK_P, EXTMLK_A, h) \
	X(hipHccModuleLaunchKernel, "hip_4.2", 0, HCCMLK_P, HCCMLK_A, h) \
	X(hipLaunchKernelExC, "hip_6.5", 0, LKEXC_P, LKEXC_A, cfg ? cfg->stream : NULL) \
	X(hipDrvLaunchKernelEx, "hip_6.5", 0, DLKEX_P, DLKEX_A, cfg ? cfg->hStream : NULL) \
	X(hipLaunchHostFunc, "hip_5.3", 0, HOSTFN_P, HOSTFN_A, h) \
	X(hipLaunchHostFunc_spt, "hip_5.3", 1, HOSTFN_P, HOSTFN_A, h) \
	X(hipStreamAddCallback, "hip_4.2", 0, CB_P, CB_A, h) \
	X(hipStreamAddCallback_spt, "hip_5.3", 1, CB_P, CB_A, h) \
	X(hipGraphLaunch, "hip_4.3", 0, GRAPH_P, GRAPH_A, h) \
	X(hipGraphLaunch_spt, "hip_5.3", 1, GRAPH_P, GRAPH_A, h) \
	X(hipMemcpyAsync, "hip_4.2", 0, CPY_P, CPY_A, h) \
	X(hipMemcpyAsync_spt, "hip_5.2", 1, CPY_P, CPY_A, h) \
	X(hipMemcpyWithStream, "hip_4.2", 0, WITHSTREAM_P, CPY_A, h) \
	X(hipMemcpyHtoDAsync, "hip_4.2", 0, HTOD_P, X3_A, h) \
	X(hipMemcpyDtoHAsync, "hip_4.2", 0, DTOH_P, X3_A, h) \
	X(hipMemcpyDtoDAsync, "hip_4.2", 0, DTOD_P, X3_A, h) \
	X(hipMemcpy2DAsync, "hip_4.2", 0, C2D_P, C2D_A, h) \
	X(hipMemcpy2DAsync_spt, "hip_5.3", 1, C2D_P, C2D_A, h) \
	X(hipMemcpy2DToArrayAsync, "hip_4.3", 0, C2DTA_P, C2DTA_A, h) \
	X(hipMemcpy2DToArrayAsync_spt, "hip_5.3", 1, C2DTA_P, C2DTA_A, h) \
	X(hipMemcpy2DFromArrayAsync, "hip_4.2", 0, C2DFA_P, C2DFA_A, h) \
	X(hipMemcpy2DFromArrayAsync_spt, "hip_5.3", 1, C2DFA_P, C2DFA_A, h) \
	X(hipMemcpy3DAsync, "hip_4.2", 0, C3D_P, PH_A, h) \
	X(hipMemcpy3DAsync_spt, "hip_5.3", 1, C3D_P, PH_A, h) \
	X(hipDrvMemcpy3DAsync, "hip_4.2", 0, DC3D_P, PH_A, h) \
	X(hipMemcpyParam2DAsync, "hip_4.2", 0, P2D_P, PH_A, h) \
	X(hipMemcpyToSymbolAsync, "hip_4.2", 0, TOSYM_P, TOSYM_A, h) \
	X(hipMemcpyToSymbolAsync_spt, "hip_5.3", 1, TOSYM_P, TOSYM_A, h) \
	X(hipMemcpyFromSymbolAsync, "hip_4.2", 0, FROMSYM_P, FROMSYM_A, h) \
	X(hipMemcpyFromSymbolAsync_spt, "hip_5.3", 1, FROMSYM_P, FROMSYM_A, h) \
	X(hipMemcpyPeerAsync, "hip_4.2", 0, PEER_P, PEER_A, h) \
	X(hipMemsetAsync, "hip_4.2", 0, SET_P, SET_A, h) \
	X(hipMemsetAsync_spt, "hip_5.3", 1, SET_P, SET_A, h) \
	X(hipMemsetD8Async, "hip_4.2", 0, SET8_P, SET_A, h) \
	X(hipMemsetD16Async, "hip_4.2", 0, SET16_P, SET_A, h) \
	X(hipMemsetD32Async, "hip_4.2", 0, SET32_P, SET_A, h) \
	X(hipMemset2DAsync, "hip_4.2", 0, S2D_P, S2D_A, h) \
	X(hipMemset2DAsync_spt, "hip_5.3", 1, S2D_P, S2D_A, h) \
	X(hipMemset3DAsync, "hip_4.2", 0, S3D_P, S3D_A, h) \
	X(hipMemset3DAsync_spt, "hip_5.3", 1, S3D_P, S3D_A, h) \
	X(hipMemPrefetchAsync, "hip_4.2", 0, PREF_P, PREF_A, h) \
	X(hipMemMapArrayAsync, "hip_5.1", 0, MAPA_P, MAPA_A, h) \
	X(hipStreamWaitValue32, "hip_4.4", 0, WAIT32_P, WAITV_A, h) \
	X(hipStreamWaitValue64, "hip_4.4", 0, WAIT64_P, WAITV_A, h) \
	X(hipStreamWriteValue32, "hip_4.4", 0, WRITE32_P, WRITEV_A, h) \
	X(hipStreamWriteValue64, "hip_4.4", 0, WRITE64_P, WRITEV_A, h) \
	X(hipSignalExternalSemaphoresAsync, "hip_4.3", 0, SEMSIG_P, SEM_A, h) \
	X(hipWaitExternalSemaphoresAsync, "hip_4.3", 0, SEMWAIT_P, SEM_A, h) \
	X(hipMemcpyAtoHAsync, "hip_6.2", 0, ATOHA_P, ATOHA_A, h) \
	X(hipMemcpyHtoAAsync, "hip_6.2", 0, HTOAA_P, HTOAA_A, h) \
	X(hipStreamBatchMemOp, "hip_6.4", 0, BATCHOP_P, BATCHOP_A, h) \
	X(hipMemsetD2D8Async, "hip_7.1", 0, SD2D8_P, S2D_A, h) \
	X(hipMemsetD2D16Async, "hip_7.1", 0, SD2D16_P, S2D_A, h) \
	X(hipMemsetD2D32Async, "hip_7.1", 0, SD2D32_P, S2D_A, h) \
	X(hipMemcpyBatchAsync, "hip_7.1", 0, CPYB_P, CPYB_A, h) \
	X(hipMemcpy3DBatchAsync, "hip_7.1", 0, C3DB_P, C3DB_A, h) \
	X(hipMemcpy3DPeerAsync, "hip_7.1", 0, C3DP_P, PH_A, h) \
	X(hipMemPrefetchAsync_v2, "hip_7.1", 0, PREF2_P, PREF2_A, h)

/*
 * The C++ names the runtime exports an entry's function by, X(symbol,
 * C++ name, node): ROCm 5.x exports hipExtModuleLaunchKernel and
 * hipHccModuleLaunchKernel only under these, 6.x and 7.x under both, and
 * hip_impl::hipLaunchKernelGGLImpl has no C name.  Each is exported here
 * too (EXPORT_MANGLED: programs and libraries built against 5.x headers,
 * rocBLAS 5.5, import the C++ name), the real function is looked up under
 * the C name and then under this one (do_resolve), and dlsym() of this name
 * gets the hook.
 */
#define HIP_CXX_NAMES(X) \
	X(hipExtModuleLaunchKernel, \
	  "_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j", \
	  "hip_4.2") \
	X(hipHccModuleLaunchKernel, \
	  "_Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_", \
	  "hip_4.2") \
	X(hipLaunchKernelGGLImpl, "_ZN8hip_impl22hipLaunchKernelGGLImplEmRK4dim3S2_jP12ihipStream_tPPv", \
	  "hip_4.2")

/*
 * Scheduled on several streams: X(symbol, node, params, args, list, count).
 * The caller waits for each stream's release in turn, then makes the call.
 */
#define MULTI_P (hipLaunchParams *l, int n, unsigned int fl)
#define MULTI_A (l, n, fl)
#define MMULTI_P (hipFunctionLaunchParams *l, unsigned int n, unsigned int fl)
#define HIP_SCHEDULED_MULTI(X) \
	X(hipLaunchCooperativeKernelMultiDevice, "hip_4.2", MULTI_P, MULTI_A, stream) \
	X(hipExtLaunchMultiKernelMultiDevice, "hip_4.2", MULTI_P, MULTI_A, stream) \
	X(hipModuleLaunchCooperativeKernelMultiDevice, "hip_5.5", MMULTI_P, MULTI_A, hStream)

/*
 * Ordered pass-through: X(symbol, node, per-thread, scope, return type,
 * params, args, stream or 0).  Synchronous copies and memsets on the legacy
 * null stream order against every blocking stream of the device
 * (XSI_SCOPE_DEVICE); the _spt ones against the caller's per-thread stream.
 * Entries with bookkeeping (synchronize, query, destroy, capture, wait-event,
 * event destroy) have their own hooks below.
 */
#define MC_P (void *dst, const void *src, size_t n, hipMemcpyKind k)
#define MC_A (dst, src, n, k)
#define MHTOD_P (hipDeviceptr_t dst, xh_htod_src src, size_t n)
#define MDTOH_P (void *dst, hipDeviceptr_t src, size_t n)
#define MDTOD_P (hipDeviceptr_t dst, hipDeviceptr_t src, size_t n)
#define M3_A (dst, src, n)
#define M2D_P (void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t ht, \
	       hipMemcpyKind k)
#define M2D_A (dst, dp, src, sp, w, ht, k)
#define M2DTA_P (hipArray_t dst, size_t wo, size_t ho, const void *src, size_t sp, size_t w, \
		 size_t ht, hipMemcpyKind k)
#define M2DTA_A (dst, wo, ho, src, sp, w, ht, k)
#define M2DFA_P (void *dst, size_t dp, hipArray_const_t src, size_t wo, size_t ho, size_t w, \
		 size_t ht, hipMemcpyKind k)
#define M2DFA_A (dst, dp, src, wo, ho, w, ht, k)
#define MTA_P (hipArray_t dst, size_t wo, size_t ho, const void *src, size_t n, hipMemcpyKind k)
#define MTA_A (dst, wo, ho, src, n, k)
#define MFA_P (void *dst, hipArray_const_t src, size_t wo, size_t ho, size_t n, hipMemcpyKind k)
#define MFA_A (dst, src, wo, ho, n, k)
#define MATOH_P (void *dst, hipArray_t src, size_t off, size_t n)
#define MATOH_A (dst, src, off, n)
#define MHTOA_P (hipArray_t dst, size_t off, const void *src, size_t n)
#define MHTOA_A (dst, off, src, n)
#define M3D_P (const struct hipMemcpy3DParms *p)
#define MD3D_P (const HIP_MEMCPY3D *p)
#define MP2D_P (const hip_Memcpy2D *p)
#define P_A (p)
#define MTOSYM_P (const void *sym, const void *src, size_t n, size_t off, hipMemcpyKind k)
#define MTOSYM_A (sym, src, n, off, k)
#define MFROMSYM_P (void *dst, const void *sym, size_t n, size_t off, hipMemcpyKind k)
#define MFROMSYM_A (dst, sym, n, off, k)
#define MPEER_P (void *dst, int dd, const void *src, int sd, size_t n)
#define MPEER_A (dst, dd, src, sd, n)
#define MS_P (void *dst, int v, size_t n)
#define MS8_P (hipDeviceptr_t dst, unsigned char v, size_t n)
#define MS16_P (hipDeviceptr_t dst, unsigned short v, size_t n)
#define MS32_P (hipDeviceptr_t dst, int v, size_t n)
#define MS_A (dst, v, n)
#define MS2D_P (void *dst, size_t pitch, int v, size_t w, size_t ht)
#define MS2D_A (dst, pitch, v, w, ht)
#define MS3D_P (hipPitchedPtr p, int v, hipExtent ext)
#define MS3D_A (p, v, ext)
#define GFXMAP_P (int n, hipGraphicsResource_t *res, hipStream_t h)
#define GFXMAP_A (n, res, h)
#define MALLOCA_P (void **p, size_t n, hipStream_t h)
#define MALLOCA_A (p, n, h)
#define FREEA_P (void *p, hipStream_t h)
#define FREEA_A (p, h)
#define MALLOCP_P (void **p, size_t n, hipMemPool_t pool, hipStream_t h)
#define MALLOCP_A (p, n, pool, h)
#define ATTACH_P (hipStream_t h, void *p, size_t n, unsigned int fl)
#define ATTACH_A (h, p, n, fl)
#define EQ_P (hipEvent_t ev)
#define EQ_A (ev)
#define ELAPSED_P (float *ms, hipEvent_t a, hipEvent_t b)
#define ELAPSED_A (ms, a, b)
#define VOID_P (void)
#define VOID_A ()
#define DEV_P (int dev)
#define DEV_A (dev)
#define CTX_P (hipCtx_t c)
#define CTX_A (c)
#define MATOD_P (hipDeviceptr_t dst, hipArray_t src, size_t off, size_t n)
#define MATOD_A (dst, src, off, n)
#define MDTOA_P (hipArray_t dst, size_t off, hipDeviceptr_t src, size_t n)
#define MDTOA_A (dst, off, src, n)
#define MATOA_P (hipArray_t dst, size_t doff, hipArray_t src, size_t soff, size_t n)
#define MATOA_A (dst, doff, src, soff, n)
#define M2DATOA_P (hipArray_t dst, size_t dwo, size_t dho, hipArray_const_t src, size_t swo, \
		   size_t sho, size_t w, size_t ht, hipMemcpyKind k)
#define M2DATOA_A (dst, dwo, dho, src, swo, sho, w, ht, k)
#define MSD2D8_P (hipDeviceptr_t dst, size_t pitch, unsigned char v, size_t w, size_t ht)
#define MSD2D16_P (hipDeviceptr_t dst, size_t pitch, unsigned short v, size_t w, size_t ht)
#define MSD2D32_P (hipDeviceptr_t dst, size_t pitch, unsigned int v, size_t w, size_t ht)
#define M3DP_P (hipMemcpy3DPeerParms *p)
#define HIP_ORDERED(X) \
	X(hipMemcpy, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MC_P, MC_A, 0) \
	X(hipMemcpy_spt, "hip_5.2", 1, XSI_SCOPE_STREAM, hipError_t, MC_P, MC_A, 0) \
	X(hipMemcpyHtoD, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MHTOD_P, M3_A, 0) \
	X(hipMemcpyDtoH, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MDTOH_P, M3_A, 0) \
	X(hipMemcpyDtoD, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MDTOD_P, M3_A, 0) \
	X(hipMemcpy2D, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, M2D_P, M2D_A, 0) \
	X(hipMemcpy2D_spt, "hip_5.2", 1, XSI_SCOPE_STREAM, hipError_t, M2D_P, M2D_A, 0) \
	X(hipMemcpy2DToArray, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, M2DTA_P, M2DTA_A, 0) \
	X(hipMemcpy2DToArray_spt, "hip_5.2", 1, XSI_SCOPE_STREAM, hipError_t, M2DTA_P, M2DTA_A, 0) \
	X(hipMemcpy2DFromArray, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, M2DFA_P, M2DFA_A, 0) \
	X(hipMemcpy2DFromArray_spt, "hip_5.2", 1, XSI_SCOPE_STREAM, hipError_t, M2DFA_P, M2DFA_A, 0) \
	X(hipMemcpyToArray, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MTA_P, MTA_A, 0) \
	X(hipMemcpyFromArray, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MFA_P, MFA_A, 0) \
	X(hipMemcpyFromArray_spt, "hip_5.3", 1, XSI_SCOPE_STREAM, hipError_t, MFA_P, MFA_A, 0) \
	X(hipMemcpyAtoH, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MATOH_P, MATOH_A, 0) \
	X(hipMemcpyHtoA, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MHTOA_P, MHTOA_A, 0) \
	X(hipMemcpy3D, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, M3D_P, P_A, 0) \
	X(hipMemcpy3D_spt, "hip_5.2", 1, XSI_SCOPE_STREAM, hipError_t, M3D_P, P_A, 0) \
	X(hipDrvMemcpy3D, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MD3D_P, P_A, 0) \
	X(hipMemcpyParam2D, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MP2D_P, P_A, 0) \
	X(hipDrvMemcpy2DUnaligned, "hip_4.3", 0, XSI_SCOPE_DEVICE, hipError_t, MP2D_P, P_A, 0) \
	X(hipMemcpyToSymbol, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MTOSYM_P, MTOSYM_A, 0) \
	X(hipMemcpyToSymbol_spt, "hip_5.2", 1, XSI_SCOPE_STREAM, hipError_t, MTOSYM_P, MTOSYM_A, 0) \
	X(hipMemcpyFromSymbol, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MFROMSYM_P, MFROMSYM_A, 0) \
	X(hipMemcpyFromSymbol_spt, "hip_5.2", 1, XSI_SCOPE_STREAM, hipError_t, MFROMSYM_P, MFROMSYM_A, 0) \
	X(hipMemcpyPeer, "hip_4.2", 0, XSI_SCOPE_PROCESS, hipError_t, MPEER_P, MPEER_A, 0) \
	X(hipMemset, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MS_P, MS_A, 0) \
	X(hipMemset_spt, "hip_5.2", 1, XSI_SCOPE_STREAM, hipError_t, MS_P, MS_A, 0) \
	X(hipMemsetD8, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MS8_P, MS_A, 0) \
	X(hipMemsetD16, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MS16_P, MS_A, 0) \
	X(hipMemsetD32, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MS32_P, MS_A, 0) \
	X(hipMemset2D, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MS2D_P, MS2D_A, 0) \
	X(hipMemset2D_spt, "hip_5.2", 1, XSI_SCOPE_STREAM, hipError_t, MS2D_P, MS2D_A, 0) \
	X(hipMemset3D, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MS3D_P, MS3D_A, 0) \
	X(hipMemset3D_spt, "hip_5.2", 1, XSI_SCOPE_STREAM, hipError_t, MS3D_P, MS3D_A, 0) \
	X(hipGraphicsMapResources, "hip_4.3", 0, XSI_SCOPE_STREAM, hipError_t, GFXMAP_P, GFXMAP_A, h) \
	X(hipGraphicsUnmapResources, "hip_4.3", 0, XSI_SCOPE_STREAM, hipError_t, GFXMAP_P, GFXMAP_A, h) \
	X(hipMallocAsync, "hip_5.1", 0, XSI_SCOPE_STREAM, hipError_t, MALLOCA_P, MALLOCA_A, h) \
	X(hipFreeAsync, "hip_5.1", 0, XSI_SCOPE_STREAM, hipError_t, FREEA_P, FREEA_A, h) \
	X(hipMallocFromPoolAsync, "hip_5.1", 0, XSI_SCOPE_STREAM, hipError_t, MALLOCP_P, MALLOCP_A, h) \
	X(hipStreamAttachMemAsync, "hip_4.2", 0, XSI_SCOPE_STREAM, hipError_t, ATTACH_P, ATTACH_A, h) \
	X(hipGraphUpload, "hip_5.3", 0, XSI_SCOPE_STREAM, hipError_t, GRAPH_P, GRAPH_A, h) \
	X(hipEventSynchronize, "hip_4.2", 0, XSI_SCOPE_PROCESS, hipError_t, EQ_P, EQ_A, 0) \
	X(hipEventQuery, "hip_4.2", 0, XSI_SCOPE_PROCESS, hipError_t, EQ_P, EQ_A, 0) \
	X(hipEventElapsedTime, "hip_4.2", 0, XSI_SCOPE_PROCESS, hipError_t, ELAPSED_P, ELAPSED_A, 0) \
	X(hipCtxDestroy, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, CTX_P, CTX_A, 0) \
	X(hipMemcpyAtoD, "hip_6.2", 0, XSI_SCOPE_DEVICE, hipError_t, MATOD_P, MATOD_A, 0) \
	X(hipMemcpyDtoA, "hip_6.2", 0, XSI_SCOPE_DEVICE, hipError_t, MDTOA_P, MDTOA_A, 0) \
	X(hipMemcpyAtoA, "hip_6.2", 0, XSI_SCOPE_DEVICE, hipError_t, MATOA_P, MATOA_A, 0) \
	X(hipMemcpy2DArrayToArray, "hip_6.2", 0, XSI_SCOPE_DEVICE, hipError_t, M2DATOA_P, M2DATOA_A, 0) \
	X(hipMemsetD2D8, "hip_7.1", 0, XSI_SCOPE_DEVICE, hipError_t, MSD2D8_P, MS2D_A, 0) \
	X(hipMemsetD2D16, "hip_7.1", 0, XSI_SCOPE_DEVICE, hipError_t, MSD2D16_P, MS2D_A, 0) \
	X(hipMemsetD2D32, "hip_7.1", 0, XSI_SCOPE_DEVICE, hipError_t, MSD2D32_P, MS2D_A, 0) \
	X(hipMemcpy3DPeer, "hip_7.1", 0, XSI_SCOPE_PROCESS, hipError_t, M3DP_P, P_A, 0)

/* Ordered, with bookkeeping (own hooks): X(symbol, node, per-thread, scope). */
#define HIP_ORDERED_OWN(X) \
	X(hipStreamSynchronize, "hip_4.2", 0, XSI_SCOPE_STREAM) \
	X(hipStreamSynchronize_spt, "hip_5.2", 1, XSI_SCOPE_STREAM) \
	X(hipStreamQuery, "hip_4.2", 0, XSI_SCOPE_STREAM) \
	X(hipStreamQuery_spt, "hip_5.2", 1, XSI_SCOPE_STREAM) \
	X(hipDeviceSynchronize, "hip_4.2", 0, XSI_SCOPE_DEVICE) \
	X(hipCtxSynchronize, "hip_4.2", 0, XSI_SCOPE_DEVICE) \
	X(hipStreamWaitEvent, "hip_4.2", 0, XSI_SCOPE_STREAM) \
	X(hipStreamWaitEvent_spt, "hip_5.2", 1, XSI_SCOPE_STREAM) \
	X(hipStreamDestroy, "hip_4.2", 0, XSI_SCOPE_STREAM) \
	X(hipDeviceReset, "hip_4.2", 0, XSI_SCOPE_DEVICE) \
	X(hipDevicePrimaryCtxReset, "hip_4.2", 0, XSI_SCOPE_DEVICE) \
	X(hipStreamBeginCapture, "hip_4.3", 0, XSI_SCOPE_STREAM) \
	X(hipStreamBeginCapture_spt, "hip_5.3", 1, XSI_SCOPE_STREAM) \
	X(hipStreamBeginCaptureToGraph, "hip_6.1", 0, XSI_SCOPE_STREAM) \
	X(hipStreamEndCapture, "hip_4.3", 0, XSI_SCOPE_STREAM) \
	X(hipStreamEndCapture_spt, "hip_5.3", 1, XSI_SCOPE_STREAM) \
	X(hipEventDestroy, "hip_4.2", 0, XSI_SCOPE_PROCESS) \
	X(hipGraphInstantiateWithParams, "hip_6.1", 0, XSI_SCOPE_STREAM)

/*
 * Harmless pass-through (own hooks): X(symbol, node).  Stream creation
 * (the stream table learns the stream and its priority), kernel and
 * variable registration (must reach the runtime untouched), the launch
 * configuration calls of `<<<>>>` and of hipLaunchByPtr (the launch that
 * follows them on the same thread is held), the runtime's own lookup.
 */
#define HIP_HARMLESS(X) \
	X(hipStreamCreate, "hip_4.2") \
	X(hipStreamCreateWithFlags, "hip_4.2") \
	X(hipStreamCreateWithPriority, "hip_4.2") \
	X(hipExtStreamCreateWithCUMask, "hip_4.2") \
	X(__hipRegisterFatBinary, "hip_4.2") \
	X(__hipRegisterFunction, "hip_4.2") \
	X(__hipRegisterVar, "hip_4.2") \
	X(__hipUnregisterFatBinary, "hip_4.2") \
	X(__hipPushCallConfiguration, "hip_4.2") \
	X(__hipPopCallConfiguration, "hip_4.2") \
	X(hipConfigureCall, "hip_4.2") \
	X(hipGetProcAddress, "hip_6.1") \
	X(hipGetDriverEntryPoint, "hip_7.1") \
	X(hipGetDriverEntryPoint_spt, "hip_7.1") \
	X(hipStreamSetAttribute, "hip_7.1") \
	X(hipStreamCopyAttributes, "hip_7.2")

/* Scheduled, own hooks: X(symbol, node, per-thread). */
#define HIP_SCHEDULED_OWN(X) \
	X(hipEventRecord, "hip_4.2", 0) \
	X(hipEventRecord_spt, "hip_5.2", 1) \
	X(hipEventRecordWithFlags, "hip_6.4", 0) \
	X(hipLaunchByPtr, "hip_4.2", 0) \
	X(hipLaunchKernelGGLImpl, "hip_4.2", 0)

/*
 * Stream and event functions deliberately NOT hooked: they put no work on
 * a stream and wait for none, so neither holding nor ordering applies.
 * X(symbol, why).  (tests/libxsched/hip/coverage.py accepts these when a library
 * imports them; any other stream, event, launch, copy or synchronization
 * function it imports and the table lacks fails the check.)
 */
#define HIP_UNHOOKED(X) \
	X(hipStreamGetPriority, "query") \
	X(hipStreamGetPriority_spt, "query") \
	X(hipStreamGetFlags, "query") \
	X(hipStreamGetFlags_spt, "query") \
	X(hipStreamGetDevice, "query") \
	X(hipGetStreamDeviceId, "query") \
	X(hipExtStreamGetCUMask, "query") \
	X(hipStreamIsCapturing, "query") \
	X(hipStreamIsCapturing_spt, "query") \
	X(hipStreamGetCaptureInfo, "query") \
	X(hipStreamGetCaptureInfo_spt, "query") \
	X(hipStreamGetCaptureInfo_v2, "query") \
	X(hipStreamGetCaptureInfo_v2_spt, "query") \
	X(hipStreamUpdateCaptureDependencies, "capture bookkeeping, no work") \
	X(hipDeviceGetStreamPriorityRange, "query") \
	X(hipEventCreate, "no work") \
	X(hipEventCreateWithFlags, "no work") \
	X(hipIpcGetEventHandle, "no work") \
	X(hipIpcOpenEventHandle, "no work") \
	X(hipThreadExchangeStreamCaptureMode, "capture mode of the thread") \
	X(hipSetupArgument, "argument of hipConfigureCall; the launch is hipLaunchByPtr") \
	X(hipKernelNameRefByPtr, "query") \
	X(hipStreamGetId, "query") \
	X(hipStreamGetAttribute, "query")

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
 * the record's sequence number on its stream (xsi_event_wait()): what was
 * launched there once the hold ended (another thread's call on the same
 * stream, counted meanwhile, can only make it later, never too early). */
static void event_recorded(hipEvent_t ev, const struct xsi_hold *h, hipError_t r)
{
	if (r == hipSuccess && h->s)
		xsi_event_recorded(&xh_rt, (uintptr_t)ev, h->s,
				   xs_xq_launched(xsi_stream_xqueue(h->s)));
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

/* A successful synchronize or query: everything handed over before it ran
 * has completed (the core learns it without a mark). */
#define SYNC_HOOK(sym)							\
	static hipError_t (*real_##sym)(hipStream_t);			\
	static hipError_t hook_##sym(hipStream_t h)			\
	{								\
		struct xsi_sync *y = NULL;				\
		hipError_t r;						\
									\
		REAL_OR(sym, hipErrorNotSupported);			\
		if (xh_init()) {					\
			(void)xsi_pass(&xh_rt, ENTRY(sym), (uintptr_t)h); \
			y = xsi_sync_begin(&xh_rt, stream_of(E_##sym, h), XSI_SCOPE_STREAM); \
		}							\
		r = real_##sym(h);					\
		xsi_sync_end(y, r == hipSuccess);			\
		return r;						\
	}								\
	EXPORT_AS(sym)
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

/* The runtime clamps the priority to its range: ask it what it kept. */
static hipError_t (*real_hipStreamCreateWithPriority)(hipStream_t *, unsigned int, int);
static hipError_t hook_hipStreamCreateWithPriority(hipStream_t *ph, unsigned int fl, int prio)
{
	hipError_t r;
	int kept = prio;

	REAL_OR(hipStreamCreateWithPriority, hipErrorNotSupported);
	harmless(E_hipStreamCreateWithPriority);
	r = real_hipStreamCreateWithPriority(ph, fl, prio);
	if (r == hipSuccess && xh_init() &&
	    xh_real.stream_get_priority(*ph, &kept) != hipSuccess)
		kept = prio;
	created(r, ph, kept, fl);
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

/* A priority set as a stream attribute (hipStreamAttributePriority) or
 * copied from another stream: the stream's XQueue follows the runtime's. */
static hipError_t (*real_hipStreamSetAttribute)(hipStream_t, hipStreamAttrID,
						const hipStreamAttrValue *);
static hipError_t hook_hipStreamSetAttribute(hipStream_t h, hipStreamAttrID a,
					     const hipStreamAttrValue *v)
{
	struct xsi_prio_watch w;
	hipError_t r;

	REAL_OR(hipStreamSetAttribute, hipErrorNotSupported);
	xsi_prio_watch_begin(&xh_rt, (uintptr_t)h, &w);
	r = real_hipStreamSetAttribute(h, a, v);
	xsi_prio_watch_end(&w, r == hipSuccess);
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
	xh_rt.hold_max_ns = hold_max_ns();
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

XSI_EARLY __attribute__((visibility("default"))) void *dlsym(void *handle, const char *name)
{
	void *r = xsi_real_dlsym(handle, name);

	return handle == RTLD_NEXT || !r ? r : xh_lookup_answer(name, r);
}

/* dlvsym() likewise: a lookup by version node answers as dlsym() does. */
XSI_EARLY __attribute__((visibility("default"))) void *dlvsym(void *handle, const char *name,
							  const char *version)
{
	void *r = xsi_real_dlvsym(handle, name, version);

	return handle == RTLD_NEXT || !r ? r : xh_lookup_answer(name, r);
}

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
