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
 *  - Memory waits (cuStreamWaitValue32/64, _v2 and _ptsz): a wait whose
 *    condition is false holds the stream's later commands until a
 *    cuStreamWriteValue32/64, a kernel that writes a flag
 *    (fake_kernel.flag) or the host makes it true (fake_timeline.h).
 *  - Stream capture: a stream that waits on an event recorded in a capture
 *    joins that capture (its commands are recorded, not run) until the
 *    capture ends.
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
/* fake_rec.kernel of what is not a kernel */
enum { FAKE_COPY = -1, FAKE_EVENT = -2, FAKE_WAIT_EVENT = -3, FAKE_WAIT_VALUE = -4,
       FAKE_WRITE_VALUE = -5, FAKE_SYNC_COPY = -6 };

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
	const void *config;	/* cuLaunchKernelEx */
	uint64_t ret;		/* a blocking call: when it returned (0: not yet) */
	/* the timeline's (fake_timeline.h) */
	uint64_t ns;		/* run time */
	int pending;		/* behind an unsatisfied wait: start/end not known yet */
	int memop, op, wide;
	void *mem;
	uint64_t val, mask;
	struct fake_tl *tl;
};

/* Test API (exported by the fake). */
int fake_log_count(void);
int fake_log_get(int i, struct fake_rec *out);
int fake_stream_id(CUstream h);	/* the fake id of a handle (0: legacy) */
uint64_t fake_now(void);
int fake_events_created(void);	/* cuEventCreate calls so far */
/* Where this library's own call to cuMemcpyAsync goes (through its PLT):
 * the interposer's hook when it is preloaded. */
void *fake_self_call_target(void);
/* The green context a stream was made on (1, 2, ... in creation order; 0:
 * none) and its SM count in *sms; how many green contexts exist. */
int fake_stream_green(CUstream h, unsigned int *sms);
int fake_green_count(void);

#define FAKE_SMS 132	/* the device's SMs */

#endif
