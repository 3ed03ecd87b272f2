/* SPDX-License-Identifier: MIT */
/*
 * A fake libamdhip64.so.5 for the HIP interposer's host tests (never
 * installed): a modelled GPU with device 0, streams that run their
 * commands one after the other in virtual time (a command of d ns starts
 * when its stream's previous one ends, or at submission), events that
 * complete when what came before them on their stream ends, stream
 * wait-event, kernels registered by host stub (__hipRegisterFunction), and
 * a log of every command as the runtime received it.  Entry points have
 * the real signatures and are exported under the real names and version
 * nodes (fake_libamdhip64.map).
 *
 * FAKE_HIP_NODEV=1: hipGetDevice fails with hipErrorNoDevice (no GPU).
 *
 * Stream priority as CLR handles it: the range is -1..1 (greatest, least)
 * and a request is clamped to it.  DEBUG_HIP_IGNORE_STREAM_PRIORITY, read
 * once at the first stream creation as CLR reads its flags at
 * initialisation, makes it ignore priorities: every stream then reports 0
 * (the request is not echoed, and a priority set as an attribute is
 * dropped), as a runtime that pools every stream in the normal class may.
 * FAKE_HIP_PRIORITY_IGNORED=1 is the mode of a ROCm where that flag is on
 * by default (mid 2026 on): ignored unless the variable says 0; =always,
 * a runtime that ignores them whatever the variable says.  The fake
 * has no HSA queues; the stand-in (tests/fakes/standin) models the pools.
 *
 * What the real runtime does that can hurt an interposer, modelled:
 *  - Calls that block until the stream's earlier work ends: hipMemcpy
 *    (after the null stream's work), and hipMemcpyAsync from the device to
 *    pageable host memory (not from hipHostMalloc, not from hipMalloc;
 *    kind hipMemcpyDeviceToHost or hipMemcpyDefault): it returns once the
 *    copy ended in modelled time.
 *  - Calls through its own exported functions, by the PLT (so a preloaded
 *    interposer's hook is entered again on the same thread), as CLR does:
 *    hipMemcpyFromSymbolAsync -> hipMemcpyAsync and hipLaunchByPtr ->
 *    hipModuleLaunchKernel (6.4.3, 7.2.4), hipMemcpyToSymbolAsync and
 *    hipMemcpyPeerAsync -> hipMemcpyAsync (5.2.3).
 *  - Entry points it lacks: hipMemsetD2D8Async (absent before ROCm 7.1)
 *    is not exported, though the interposer hooks it.
 *  - hipStreamDestroy returns at once; the stream's work still runs, and its
 *    handle is invalid from then on (hipErrorInvalidHandle).
 *  - Memory waits (hipStreamWaitValue32/64): a wait whose condition is
 *    false holds the stream's later commands until hipStreamWriteValue32/64
 *    or the host makes it true (tests/fakes/fake_timeline.h).
 *  - Stream capture: a stream that waits on an event recorded in a capture
 *    joins that capture until the capture ends.
 */
#ifndef FAKE_LIBAMDHIP64_H
#define FAKE_LIBAMDHIP64_H

#include <stdint.h>

#include <hip/hip_runtime_api.h>

/* A kernel: pass (const void *)&fake_kernel as the function. */
struct fake_kernel {
	uint64_t ns;		/* run time */
	int id;
	int needs_registration;	/* launch fails unless registered (a host stub) */
};

enum fake_variant { FAKE_LEGACY = 0, FAKE_SPT = 1 };
enum { FAKE_COPY = -1, FAKE_EVENT = -2, FAKE_SYNC_COPY = -3, FAKE_WAIT = -4,
       FAKE_HOSTFN = -5, FAKE_GRAPH = -6, FAKE_ARRAY_COPY = -7, FAKE_BATCH_MEMOP = -8,
       FAKE_MEMSET2D = -9, FAKE_WAIT_VALUE = -10, FAKE_WRITE_VALUE = -11, FAKE_UPLOAD = -12 };

struct fake_tl;

struct fake_rec {
	int stream;		/* fake stream id: 0 null, -tid per-thread, else > 0 */
	int kernel;		/* fake_kernel.id, or FAKE_* */
	int variant;		/* which export was called */
	int captured;
	uint64_t submit, start, end;
	void **args;
	unsigned int grid[3], block[3];
	size_t smem;
	long tid;		/* the thread that made the call */
	uint64_t ret;		/* a blocking call: when it returned (0: not yet) */
	/* the timeline's (fake_timeline.c) */
	uint64_t ns;		/* run time */
	int pending;		/* behind an unsatisfied wait: start/end not known yet */
	int memop, op, wide;
	void *mem;
	uint64_t val, mask;
	struct fake_tl *tl;
};

/* The registration entry points no C header declares. */
void **__hipRegisterFatBinary(const void *data);
void __hipUnregisterFatBinary(void **modules);
void __hipRegisterFunction(void **modules, const void *host_fn, char *dev_fn,
			   const char *dev_name, unsigned int thread_limit, void *tid,
			   void *bid, dim3 *block, dim3 *grid, int *wsize);

/* hip_ext.h (C++) declares these; ROCm 6.x exports their C names. */
hipError_t hipExtModuleLaunchKernel(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz,
				    uint32_t bx, uint32_t by, uint32_t bz, size_t smem,
				    hipStream_t h, void **params, void **extra, hipEvent_t e0,
				    hipEvent_t e1, uint32_t fl);
hipError_t hipHccModuleLaunchKernel(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz,
				    uint32_t bx, uint32_t by, uint32_t bz, size_t smem,
				    hipStream_t h, void **params, void **extra, hipEvent_t e0,
				    hipEvent_t e1);

#if HIP_VERSION < 50300000
hipError_t hipMemcpyFromSymbolAsync_spt(void *dst, const void *sym, size_t n, size_t off,
					hipMemcpyKind k, hipStream_t h);
hipError_t hipMemcpyToSymbolAsync_spt(const void *sym, const void *src, size_t n, size_t off,
				      hipMemcpyKind k, hipStream_t h);
#endif

/* Entry points of ROCm 6.1, 6.2, 6.4 and 7.1 that older headers do not declare. */
#if HIP_VERSION < 60100000
typedef struct hipGraphInstantiateParams {
	hipGraphNode_t errNode_out;
	unsigned long long flags;
	int result_out;
	hipStream_t uploadStream;
} hipGraphInstantiateParams;
hipError_t hipGraphInstantiateWithParams(hipGraphExec_t *gx, hipGraph_t g,
					 hipGraphInstantiateParams *p);
#endif
#if HIP_VERSION < 60200000
hipError_t hipMemcpyHtoAAsync(hipArray_t dst, size_t off, const void *src, size_t n,
			      hipStream_t h);
#endif
#if HIP_VERSION < 60400000
typedef union hipStreamBatchMemOpParams_union hipStreamBatchMemOpParams;
hipError_t hipStreamBatchMemOp(hipStream_t h, unsigned int n, hipStreamBatchMemOpParams *ops,
			       unsigned int fl);
#endif
#if HIP_VERSION < 70100000
typedef int hipDriverEntryPointQueryResult;
hipError_t hipMemsetD2D32Async(hipDeviceptr_t dst, size_t pitch, unsigned int v, size_t w,
			       size_t ht, hipStream_t h);
hipError_t hipGetDriverEntryPoint(const char *sym, void **pfn, unsigned long long fl,
				  hipDriverEntryPointQueryResult *st);
hipError_t hipGetDriverEntryPoint_spt(const char *sym, void **pfn, unsigned long long fl,
				      hipDriverEntryPointQueryResult *st);
/* The 7.1 attribute value is a 64-byte union whose members all start at
 * offset 0; the fake reads its priority only. */
typedef int hipStreamAttrID;
typedef union hipStreamAttrValue {
	char pad[64];
	int priority;
} hipStreamAttrValue;
#define hipStreamAttributePriority 8
hipError_t hipStreamSetAttribute(hipStream_t h, hipStreamAttrID a, const hipStreamAttrValue *v);
#endif
#if HIP_VERSION < 70200000
hipError_t hipStreamCopyAttributes(hipStream_t dst, hipStream_t src);
#endif

int fake_log_count(void);
int fake_log_get(int i, struct fake_rec *out);
int fake_stream_id(hipStream_t h);
/* 1 when this runtime ignores stream priorities (decided at its first
 * stream creation), 0 when it keeps them, -1 before that. */
int fake_priority_ignored(void);
int fake_registered(const void *host_fn);
int fake_events_created(void);	/* hipEventCreate(WithFlags) calls so far */
/* Where this library's own call to hipMemcpyAsync goes (through its PLT):
 * the interposer's hook when it is preloaded. */
void *fake_self_call_target(void);

#endif
