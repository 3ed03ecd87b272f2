/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the CUDA interposer's host tests (test_cuda.c, test_urgent*.c,
 * test_runtime_calls.c, test_code.c, test_hold.c and the fake's own,
 * tests/fakes/test_fake_libcuda.c), against the fake libcuda
 * (fake_libcuda.h).  The fake's priority range is [0 least, -5 greatest]:
 * -1..-5 are urgent.  What they share with the HIP tests is
 * ../interpose_helpers.h.  The urgent context is the
 * first context the process creates: id 1 in fake_rec.ctx; the primary is 0.
 */
#ifndef XSCHED_CUDA_HELPERS_H
#define XSCHED_CUDA_HELPERS_H

#include <stdint.h>
#include <stdio.h>

#include "fake_libcuda.h"
#include "harness.h"
#include "../interpose_helpers.h"

#define URGENT 1	/* fake_rec.ctx of the urgent context */
#define SMEM_ATTR CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES

/* The urgent context on, every burst gathered (XSCHED_CUDA_LV3=@v, mode
 * gather: "auto" is tested on its own). */
void lv3(const char *v);
/* A non-blocking stream of CUDA priority @prio. */
CUstream mk(int prio);
/* A test kernel: a CUfunction of the primary context that no module the
 * program loaded holds (it cannot be carried to another context). */
CUfunction K(int id, uint64_t ns);
/* Launch @f (1 block of 32) on @h, asserting success. */
void go(CUfunction f, CUstream h);
/* Launch K(@id, @ns) on @h, asserting success. */
void launch(CUstream h, int id, uint64_t ns);
/* Is @p in libxsched-cuda.so (a hook), rather than in the driver? */
int in_xsched(const void *p);
/* A library of "fakecubin k<id>=<ns> ..." and one of its kernels. */
CUlibrary lib_load(const char *image);
CUfunction kernel_of(CUlibrary l, const char *name);
/* A CUkernel named k<id> of @ns, in a library of its own. */
CUfunction CK(int id, uint64_t ns);
CUmodule mod_load(const char *image);
CUfunction func_of(CUmodule m, const char *name);
/* The most kernels (ids @from and up) of @h in flight at once: at each
 * one's submission, it and those still running. */
int most_in_flight(CUstream h, int from);
/* The log record of the last command of kernel @id. */
struct fake_rec rec_of(int id);
/* Records of kind @kernel (FAKE_COPY, ...) from log index @from on, on
 * memory @mem (NULL: any): how many, and how many ran in context @ctx. */
int count_at(int from, int kernel, void *mem, int ctx, int *in_ctx);
int count_kind(int from, int kernel, int ctx, int *in_ctx);
/* How many commands ran in a context other than the primary. */
int off_primary(void);
/* test_cuda's own: its argv[0] (its main sets it, for the tests that run
 * it again), and what it runs on the older driver instead of its tests
 * ("--old-body probe|call", test_runtime_calls.c). */
extern char *self_argv0;
int old_probe_body(void);
int old_call_body(void);
/* A watchdog too slow to rescue a test: a gate the library should have
 * opened shows as a call that takes seconds. */
void slow_watchdog(void);

/* The record says where it ran: the urgent context, on a twin (never the
 * program's stream, which is the primary's). */
#define ASSERT_URGENT(r, h) do {					\
	struct fake_rec r_ = (r);					\
	if (r_.ctx != URGENT || r_.stream == fake_stream_id(h))		\
		xt_fail(__FILE__, __LINE__, "%s ran in context %d on stream %d (the program's: %d); expected the urgent context (%d) on a twin", \
			#r, r_.ctx, r_.stream, fake_stream_id(h), URGENT); \
} while (0)

#define ASSERT_IN_PLACE(r, h) do {					\
	struct fake_rec r_ = (r);					\
	if (r_.ctx != 0 || r_.stream != fake_stream_id(h))		\
		xt_fail(__FILE__, __LINE__, "%s ran in context %d on stream %d; expected the primary (0) on the program's stream %d", \
			#r, r_.ctx, r_.stream, fake_stream_id(h));	\
} while (0)

/* An event was recorded in the urgent context (a timing event is also
 * recorded in its own context after it: the last record may be that one). */
#define ASSERT_TWIN_EVENT() do {					\
	int in_;							\
	(void)count_kind(0, FAKE_EVENT, URGENT, &in_);			\
	if (!in_)							\
		xt_fail(__FILE__, __LINE__, "no event was recorded in the urgent context"); \
} while (0)

#endif
