/* SPDX-License-Identifier: MIT */
/*
 * The CUDA wing's ground floor: every libcuda function the wing itself
 * calls (never our hooks), resolved once from libcuda by cuda/driver.c
 * through xsi_real_dlsym() (symbols.c); the capture-mode relax pair on
 * them; the wing's log macro and the two sides of an urgent stream.  The
 * hooks' own real functions (cuda/table.h) are the interposition core's.
 * Only cuda/driver.c resolves libcuda functions (tools/check-layout.py
 * checks).
 *
 * The wing's files, one per concept, each of which calls only files listed
 * after it (and the core, interpose.h):
 *
 *   cuda/hooks.c    the hook table (cuda/table.h), set-up, the one fork
 *                   registration
 *   cuda/ops.c      the core's runtime ops: stream descriptions, marks
 *   cuda/events.c   events across an urgent stream's two contexts
 *   cuda/split.c    the SM partition (green contexts)
 *   cuda/urgent.c   the urgent context: urgent streams, twins, routing
 *   cuda/env.c      the urgent streams' variables
 *   cuda/code.c     code in the urgent context
 *   cuda/gather.c   the gather: gates on a host word, its watchdog
 *   mode.c          a burst's mode, a pure function of its waits
 *   handle_table.c  the handle tables
 *   cuda/driver.c   the driver functions
 *
 * Locking: the wing's locks, outermost first; a lock may be taken while one
 * above it is held, never while one below it is.  The fork registration
 * (cuda/hooks.c) takes them all in this order in its prepare handler, after the
 * core's (core.c registers later, so its prepare runs first).
 *
 *   cuda/events.c  lock       the event table: a lookup, no driver call
 *   cuda/urgent.c  dev_lock   making an urgent context (a driver call of
 *                             milliseconds); code_lock nests inside it
 *                             (xu_code_context_made())
 *   cuda/urgent.c  lock       the stream table: a lookup; a stream's
 *                             bursts' lock (interpose/mode.c) nests inside it
 *   cuda/code.c    code_lock  the function and module tables, never held
 *                             across a load
 *   cuda/split.c   part_lock  the SM partitions
 *   cuda/ops.c     pool.lock  the spare marks
 *
 * Not taken around a fork: a stream's side_lock and its bursts' lock (the
 * child forgets the streams), and the gather's wd_lock, a leaf (the child
 * has no watchdog thread and makes it anew).  Above them all, the core's
 * lock included: cuda/urgent.c's cap_lock, the cap's changes (it takes
 * the core's lock, and the stream table's for a lookup); not taken around a
 * fork either (the child follows no stream), and made anew in the child.
 */
#ifndef XSCHED_CUDA_DRIVER_H
#define XSCHED_CUDA_DRIVER_H

#include <cuda.h>
#include <stdbool.h>

/*
 * X(field, return type, parameters, symbol, fallback symbol or NULL):
 * a function absent from this libcuda is NULL; each user says which it
 * needs.
 */
#define XC_DRIVER_FUNCS(X)							\
	/* contexts */								\
	X(ctx_get_current, CUresult, (CUcontext *), "cuCtxGetCurrent", NULL)	\
	X(ctx_push, CUresult, (CUcontext), "cuCtxPushCurrent_v2", NULL)		\
	X(ctx_pop, CUresult, (CUcontext *), "cuCtxPopCurrent_v2", NULL)		\
	X(ctx_get_device, CUresult, (CUdevice *), "cuCtxGetDevice", NULL)	\
	X(ctx_get_flags, CUresult, (unsigned int *), "cuCtxGetFlags", NULL)	\
	X(ctx_sync, CUresult, (void), "cuCtxSynchronize", NULL)			\
	X(ctx_create_v4, CUresult, (CUcontext *, CUctxCreateParams *, unsigned int, CUdevice), \
	  "cuCtxCreate_v4", NULL)						\
	X(ctx_create_v2, CUresult, (CUcontext *, unsigned int, CUdevice),	\
	  "cuCtxCreate_v2", NULL)						\
	X(prio_range, CUresult, (int *, int *), "cuCtxGetStreamPriorityRange", NULL) \
	X(device_get_count, CUresult, (int *), "cuDeviceGetCount", NULL)	\
	X(exchange_capture_mode, CUresult, (CUstreamCaptureMode *),		\
	  "cuThreadExchangeStreamCaptureMode", NULL)				\
	/* streams */								\
	X(stream_create, CUresult, (CUstream *, unsigned int, int),		\
	  "cuStreamCreateWithPriority", NULL)					\
	X(stream_destroy, CUresult, (CUstream), "cuStreamDestroy_v2", NULL)	\
	X(stream_get_ctx, CUresult, (CUstream, CUcontext *), "cuStreamGetCtx", NULL) \
	X(stream_get_priority, CUresult, (CUstream, int *), "cuStreamGetPriority", NULL) \
	X(stream_wait_event, CUresult, (CUstream, CUevent, unsigned int),	\
	  "cuStreamWaitEvent", NULL)						\
	X(stream_is_capturing, CUresult, (CUstream, CUstreamCaptureStatus *),	\
	  "cuStreamIsCapturing", NULL)						\
	X(wait32, CUresult, (CUstream, CUdeviceptr, cuuint32_t, unsigned int),	\
	  "cuStreamWaitValue32_v2", "cuStreamWaitValue32")			\
	/* events */								\
	X(event_create, CUresult, (CUevent *, unsigned int), "cuEventCreate", NULL) \
	X(event_destroy, CUresult, (CUevent), "cuEventDestroy_v2", NULL)	\
	X(event_record, CUresult, (CUevent, CUstream), "cuEventRecord", NULL)	\
	X(event_query, CUresult, (CUevent), "cuEventQuery", NULL)		\
	/* pinned host memory (the gather's word) */				\
	X(host_alloc, CUresult, (void **, size_t, unsigned int), "cuMemHostAlloc", NULL) \
	X(host_dptr, CUresult, (CUdeviceptr *, void *, unsigned int),		\
	  "cuMemHostGetDevicePointer_v2", NULL)					\
	/* code: kernels, functions, modules, libraries */			\
	X(kernel_get_name, CUresult, (const char **, CUkernel), "cuKernelGetName", NULL) \
	X(kernel_get_library, CUresult, (CUlibrary *, CUkernel), "cuKernelGetLibrary", NULL) \
	X(kernel_get_function, CUresult, (CUfunction *, CUkernel), "cuKernelGetFunction", NULL) \
	X(kernel_set_attribute, CUresult, (CUfunction_attribute, int, CUkernel, CUdevice), \
	  "cuKernelSetAttribute", NULL)						\
	X(func_get_name, CUresult, (const char **, CUfunction), "cuFuncGetName", NULL) \
	X(func_get_module, CUresult, (CUmodule *, CUfunction), "cuFuncGetModule", NULL) \
	X(func_set_attribute, CUresult, (CUfunction, CUfunction_attribute, int), \
	  "cuFuncSetAttribute", NULL)						\
	X(func_set_cache_config, CUresult, (CUfunction, CUfunc_cache),		\
	  "cuFuncSetCacheConfig", NULL)						\
	X(module_load_data, CUresult, (CUmodule *, const void *), "cuModuleLoadData", NULL) \
	X(module_load, CUresult, (CUmodule *, const char *), "cuModuleLoad", NULL) \
	X(module_get_function, CUresult, (CUfunction *, CUmodule, const char *), \
	  "cuModuleGetFunction", NULL)						\
	X(module_unload, CUresult, (CUmodule), "cuModuleUnload", NULL)		\
	X(library_get_module, CUresult, (CUmodule *, CUlibrary), "cuLibraryGetModule", NULL) \
	X(library_get_kernel, CUresult, (CUkernel *, CUlibrary, const char *),	\
	  "cuLibraryGetKernel", NULL)						\
	/* green contexts: the SM partition (CUDA 12.4+) */			\
	X(dev_resource, CUresult, (CUdevice, CUdevResource *, CUdevResourceType), \
	  "cuDeviceGetDevResource", NULL)					\
	X(sm_split, CUresult, (CUdevResource *, unsigned int *, const CUdevResource *, \
			       CUdevResource *, unsigned int, unsigned int),	\
	  "cuDevSmResourceSplitByCount", NULL)					\
	X(gen_desc, CUresult, (CUdevResourceDesc *, CUdevResource *, unsigned int), \
	  "cuDevResourceGenerateDesc", NULL)					\
	X(green_create, CUresult, (CUgreenCtx *, CUdevResourceDesc, CUdevice, unsigned int), \
	  "cuGreenCtxCreate", NULL)						\
	X(green_stream_create, CUresult, (CUstream *, CUgreenCtx, unsigned int, int), \
	  "cuGreenCtxStreamCreate", NULL)

#define XC_DRIVER_FIELD(field, ret, params, sym, alt) ret (*field)params;
struct xc_driver {
	XC_DRIVER_FUNCS(XC_DRIVER_FIELD)
};
#undef XC_DRIVER_FIELD

/* The driver's functions; filled by xc_driver_init(), then read only. */
extern struct xc_driver xc_drv;

/* Resolve every function of the list from @libcuda (a dlopen handle). */
void xc_driver_init(void *libcuda);

/* The wing's debug log (XSCHED_LOG=debug; xsi_log_on(), log.c). */
#define xc_log(...) do { if (xsi_log_on()) xs_debug("cuda: " __VA_ARGS__); } while (0)

/* Our own waits and records must not break another thread's stream capture
 * in global mode: they run in relaxed mode, between xc_relax() and
 * xc_unrelax(). */
CUstreamCaptureMode xc_relax(bool *swapped);
void xc_unrelax(bool swapped, CUstreamCaptureMode m);

/* Where an urgent stream's (or event's) last command went: the program's
 * context, or its twin's in the urgent context (cuda/urgent.c). */
enum { SIDE_ORIG, SIDE_TWIN };

#endif
