/* SPDX-License-Identifier: MIT */
/*
 * A fake libcuda.so.1 for the interposer's host tests: a modelled GPU with
 * one context on device 0, streams that run their commands one after the
 * other in virtual time (a kernel of d ns starts when the stream's previous
 * command ends, or at submission), events that complete when what came
 * before them on their stream ends, and a log of every command as the
 * driver received it.  The driver entry points have the real signatures and
 * are exported under the real names (legacy and _ptsz variants);
 * cuGetProcAddress answers from its own table, as the real driver does.
 *
 * FAKE_CUDA_PROC_INTERNAL=1: cuGetProcAddress hands out internal addresses
 * (no exported symbol) for cuLaunchKernel and cuMemcpyAsync, as a driver
 * may; the fake also exports a cuMemcpyAsync_v2 (an ABI the interposer has
 * no hook for).
 *
 * What the real driver does that can hurt an interposer, modelled:
 *  - Calls that block until the stream's earlier work ends: cuMemcpyDtoH_v2
 *    (synchronous: the legacy stream's work first), and cuMemcpyAsync /
 *    cuMemcpyDtoHAsync_v2 when either side is pageable host memory (not
 *    from cuMemAllocHost_v2 / cuMemHostAlloc, not from cuMemAlloc_v2):
 *    they return when the copy ended in modelled time.
 *  - Calls through its own exported functions: cuMemcpyDtoHAsync_v2 (and
 *    _ptsz) make the copy by calling the exported cuMemcpyAsync (_ptsz)
 *    through the PLT, so that with an interposer preloaded the inner call
 *    reaches its hook on the same thread.  This particular path is a model
 *    (libcuda's internals are not public); libamdhip64 does the like for
 *    real (fake_libamdhip64.h).
 *  - Entry points an older driver lacks: -DFAKE_CUDA_NO_GREEN (the
 *    "fake-old" build) has no green contexts and no cuLaunchCooperativeKernel.
 *  - cuStreamDestroy_v2 returns at once; the stream's work still runs.
 *  - Loading code waits for work (measured on an H200 with a stream held
 *    by a memory wait): cuModuleLoadData (...Ex, ...FatBinary) for the
 *    current context's, cuLibraryLoadData for every context's, and, once
 *    per function and context (lazy loading, the CUDA Programming Guide:
 *    cuModuleLoad* loads no kernel), cuModuleGetFunction for its module's
 *    context's, cuKernelGetFunction and the first launch of a CUkernel in
 *    a context for that context's.  A load behind work that waits for
 *    something the program does later never returns, as on an H100.
 *  - Memory waits (cuStreamWaitValue32/64, _v2 and _ptsz): a wait whose
 *    condition is false holds the stream's later commands until a
 *    cuStreamWriteValue32/64, a kernel that writes a flag
 *    (fake_kernel.flag) or the host makes it true (fake_timeline.c).
 *  - Stream capture: a stream that waits on an event recorded in a capture
 *    joins that capture (its commands are recorded, not run) until the
 *    capture ends.
 *
 * Contexts (as measured on an H200, driver 580, CUDA 13.0): the primary
 * context (id 0, current on every thread unless another is pushed; a green
 * context counts as the primary for what belongs to a context) and
 * contexts made by cuCtxCreate (ids 1, 2, ... in creation order, never
 * reused), with a per-thread stack (cuCtxCreate pushes; cuCtxPopCurrent
 * makes the previous one current again; the primary stays under the stack
 * and cannot be popped).  What belongs to a context:
 *  - A stream: the context current at its creation (cuStreamGetCtx); the
 *    default streams (NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD) are
 *    the current context's (a created context has one default stream, id
 *    FAKE_CTX_DEFAULT_STREAM(ctx), for both).  Synchronize and query of
 *    any context's stream work whatever is current.
 *  - A CUfunction: the K() kernels (struct fake_kernel) are the primary's;
 *    a module function is its module's context's (cuModuleLoadData,
 *    cuModuleLoadDataEx, cuModuleLoadFatBinary load into the current
 *    context); cuKernelGetFunction gives one of the current context.
 *    Launched on another context's stream: CUDA_ERROR_INVALID_HANDLE and
 *    nothing runs (no log record).  A CUkernel (cuLibraryLoadData,
 *    cuLibraryGetKernel) cast to CUfunction launches on any context's
 *    stream.  cuKernelGetName fails (INVALID_HANDLE) for a CUfunction,
 *    cuFuncGetName and cuFuncGetModule for a CUkernel.
 *  - cuModuleUnload: the module's functions are invalid (a launch answers
 *    INVALID_HANDLE); the next module loaded gets the unloaded one's
 *    handle and function addresses back first (as a destroyed stream's
 *    handle, and as the driver's allocator does: on an H100 a later
 *    module's function took a freed one's address in 73 of 100 rounds).
 *    cuLibraryUnload likewise: the next library loaded gets its handle and
 *    kernel addresses back, and its modules' functions' addresses go to
 *    the next modules loaded.
 *  - A function named flag<anything> (of a module or a library) writes
 *    its second argument (a uint32_t) to its first (a CUdeviceptr) at its
 *    end, as fake_kernel.flag does: a kernel a host or a stream waits for.
 *  - Images: a NUL-terminated text "fakecubin <name>=<ns> ..." (what else:
 *    CUDA_ERROR_INVALID_IMAGE); a function's run time is its <ns>; a
 *    function named k<digits> logs fake_rec.kernel = <digits>, any other
 *    name FAKE_NAMED.
 *  - Dynamic shared memory: a launch asking more than 48 KiB fails with
 *    CUDA_ERROR_INVALID_VALUE unless the function's
 *    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (cuFuncSetAttribute;
 *    a CUkernel's by cuKernelSetAttribute, or cuFuncSetAttribute on it
 *    cast; a function of cuKernelGetFunction: the larger of its own and
 *    its kernel's) allows it.  Each module loaded again starts at 48 KiB.
 *  - An event: the context current at cuEventCreate; recorded on another
 *    context's stream: CUDA_ERROR_INVALID_HANDLE (nothing logged).  Waits,
 *    synchronize, query and elapsed time work across contexts.
 *  - cuCtxSynchronize: the current context's work only.  cuCtxDestroy_v2
 *    waits for the context's work, destroys its streams and pops it from
 *    the calling thread's stack.
 *  - Graphs (what a capture recorded; launched as one command of the sum
 *    of its nodes' run times, fake_rec.kernel FAKE_GRAPH, its host nodes
 *    called once it ended) run on any context's stream, in its order, but
 *    in the context they were instantiated in (fake_rec.ctx), as the real
 *    driver runs them.  Copies, memsets and host functions run on any
 *    context's stream.
 *  - Host functions (cuLaunchHostFunc, cuStreamAddCallback) are called on
 *    one driver thread, in submission order, once their command ended.
 *
 * Green contexts (CUDA 12.4+): a device of 132 SMs split in groups of
 * multiples of 8 (as on compute capability 9.0), green contexts that remember
 * their SM count, and streams that remember their green context.  Built with
 * -DFAKE_CUDA_NO_GREEN, the fake is an older driver without these functions.
 */
#ifndef FAKE_LIBCUDA_H
#define FAKE_LIBCUDA_H

#include <stdint.h>

#include <cuda.h>

/* A kernel: pass (CUfunction)fake_kernel(...) to the launch functions. */
struct fake_kernel {
	uint64_t ns;	/* run time */
	int id;
	uint32_t *flag;	/* non-NULL: the kernel writes flag_val there at its end */
	uint32_t flag_val;
};

enum fake_variant { FAKE_LEGACY = 0, FAKE_PTSZ = 1, FAKE_INTERNAL = 2 };
#define FAKE_MAX_ATTRS 4
/* fake_rec.kernel of what is not a kernel */
enum { FAKE_COPY = -1, FAKE_EVENT = -2, FAKE_WAIT_EVENT = -3, FAKE_WAIT_VALUE = -4,
       FAKE_WRITE_VALUE = -5, FAKE_SYNC_COPY = -6, FAKE_GRAPH = -7, FAKE_MEMSET = -8,
       FAKE_HOST_FN = -9, FAKE_NAMED = -10 };
/* fake_rec.fn: what was launched */
enum { FAKE_FN_TEST = 0,	/* a K() kernel (struct fake_kernel): the primary's */
       FAKE_FN_MODULE = 1,	/* a function of a module (cuModuleGetFunction) */
       FAKE_FN_KERNEL = 2,	/* a CUkernel cast to CUfunction */
       FAKE_FN_OF_KERNEL = 3 };	/* a function of cuKernelGetFunction */
/* The stream id of a created context's default stream. */
#define FAKE_CTX_DEFAULT_STREAM(ctx) (-(1 << 24) - (ctx))

struct fake_tl;

struct fake_rec {
	int stream;		/* fake stream id: 0 legacy, -tid per-thread, else >0 */
	int kernel;		/* fake_kernel.id, or FAKE_COPY, FAKE_EVENT, ... */
	int variant;		/* enum fake_variant: which export was called */
	int captured;		/* recorded into a capture, did not run */
	uint64_t submit, start, end;	/* CLOCK_MONOTONIC ns */
	void **params;
	void **extra;
	unsigned int grid[3], block[3], smem;
	const void *config;	/* cuLaunchKernelEx (valid during the call only) */
	unsigned int nattrs;	/* cuLaunchKernelEx: its config's numAttrs */
	CUlaunchAttribute attrs[FAKE_MAX_ATTRS];/* and the first FAKE_MAX_ATTRS of them */
	uint64_t ret;		/* a blocking call: when it returned (0: not yet) */
	/* the timeline's (fake_timeline.c) */
	uint64_t ns;		/* run time */
	int pending;		/* behind an unsatisfied wait: start/end not known yet */
	int memop, op, wide;
	void *mem;
	uint64_t val, mask;
	struct fake_tl *tl;
	/* contexts */
	int ctx;		/* the context of the stream that ran it: 0 primary, 1, 2, ... */
	int capture;		/* captured: the capture's id (the graph's, FAKE_GRAPH) */
	int fn;			/* a launch: FAKE_FN_* */
	int module;		/* a launch: the function's module (0: a K() kernel or CUkernel) */
	int lib;		/* a launch of a CUkernel or of its function: its library */
	char name[32];		/* a launch: the function's name ("" for K()) */
	int nodes;		/* FAKE_GRAPH: how many commands the capture recorded */
};

/* Test API (exported by the fake). */
int fake_log_count(void);
/* The modelled GPU goes on (waits satisfied by host writes are noticed)
 * while the host polls memory without calling the driver. */
void fake_progress(void);
int fake_log_get(int i, struct fake_rec *out);
int fake_stream_id(CUstream h);	/* the fake id of a handle (0: legacy) */
uint64_t fake_now(void);
int fake_events_created(void);	/* cuEventCreate calls so far */
/* Where this library's own call to cuMemcpyAsync goes (through its PLT):
 * the interposer's hook when it is preloaded. */
void *fake_self_call_target(void);
/* dlsym(RTLD_NEXT, @name) asked by this library (loaded after the
 * interposer, as a sanitizer runtime or a profiler may be): the next
 * definition after this library, never its own. */
void *fake_next_definition(const char *name);
/* The green context a stream was made on (1, 2, ... in creation order; 0:
 * none) and its SM count in *sms; how many green contexts exist. */
int fake_stream_green(CUstream h, unsigned int *sms);
int fake_green_count(void);

/* Contexts: a stream's context (0 primary, 1, 2... created); contexts made
 * by cuCtxCreate and not destroyed; the context current on the calling
 * thread; streams made (cuStreamCreate*, cuGreenCtxStreamCreate) and not
 * destroyed (the default streams never count); modules loaded in context
 * @ctx and not unloaded (a library's module in a context counts once it
 * exists: cuKernelGetFunction, cuLibraryGetModule); events created and not
 * destroyed. */
int fake_stream_ctx(CUstream h);
int fake_ctx_count(void);
int fake_ctx_current(void);
int fake_live_streams(void);
int fake_module_count(int ctx);
int fake_live_events(void);
/* An event's context (-1: not an event) and its last record's log index
 * (-1: never recorded). */
int fake_event_ctx(CUevent e);
int fake_event_rec(CUevent e);
/* Sleep until every command logged so far, of every context, ended. */
void fake_wait_all(void);
/* Host functions called so far. */
int fake_host_fns_called(void);
/* The next @n cuMemHostAlloc calls fail (out of memory). */
void fake_fail_host_alloc(int n);

#define FAKE_SMS 132	/* the device's SMs */
#define FAKE_SMEM_DEFAULT 49152	/* dynamic shared memory allowed without the attribute */
#define FAKE_SMEM_MAX 232448	/* the most the attribute may allow (227 KiB) */

#endif
