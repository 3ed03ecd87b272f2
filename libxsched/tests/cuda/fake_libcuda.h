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
};

enum fake_variant { FAKE_LEGACY = 0, FAKE_PTSZ = 1, FAKE_INTERNAL = 2 };

struct fake_rec {
	int stream;		/* fake stream id: 0 legacy, -tid per-thread, else >0 */
	int kernel;		/* fake_kernel.id, or -1 for a copy, -2 event record */
	int variant;		/* enum fake_variant: which export was called */
	int captured;		/* recorded into a capture, did not run */
	uint64_t submit, start, end;	/* CLOCK_MONOTONIC ns */
	void **params;
	void **extra;
	unsigned int grid[3], block[3], smem;
	const void *config;	/* cuLaunchKernelEx */
};

/* Test API (exported by the fake). */
int fake_log_count(void);
int fake_log_get(int i, struct fake_rec *out);
int fake_stream_id(CUstream h);	/* the fake id of a handle (0: legacy) */
uint64_t fake_now(void);
int fake_events_created(void);	/* cuEventCreate calls so far */
/* The green context a stream was made on (1, 2, ... in creation order; 0:
 * none) and its SM count in *sms; how many green contexts exist. */
int fake_stream_green(CUstream h, unsigned int *sms);
int fake_green_count(void);

#define FAKE_SMS 132	/* the device's SMs */

#endif
