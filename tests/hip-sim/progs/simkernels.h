/* SPDX-License-Identifier: MIT */
/*
 * The kernels of the HIP test programs, and their CPU reference.
 *
 * On the stand-in runtime (tests/fakes/standin) a kernel is matched by name and
 * runs as the sim GPU's built-in kernel of that name, one workgroup per block
 * of the launch; the device code below never runs there.  It computes the
 * same thing on a real GPU (thread 0 of each block does the work), so the
 * programs are honest HIP programs either way.  Device code and the CPU
 * reference both use the sim's own arithmetic from <linux/xsched_sim.h>,
 * compiled for host and device (clang's force_cuda_host_device).
 */
#ifndef SIMKERNELS_H
#define SIMKERNELS_H

#include <hip/hip_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#pragma clang force_cuda_host_device begin
#include <linux/xsched_sim.h>

/* One workgroup of ACCUMULATE from @acc: the sim's steps, then its fold. */
static inline uint64_t ref_accumulate(uint64_t acc, uint32_t steps)
{
	__u32 lds[XSCHED_SIM_LDS_WORDS] = { 0 };

	for (uint32_t s = 0; s < steps; s++)
		acc = xsched_sim_step(acc, s, lds);
	return xsched_sim_finish(acc, lds);
}
#pragma clang force_cuda_host_device end

/* Block @wg of ACCUMULATE into dst[wg], by thread 0. */
__device__ static inline void sk_workgroup(uint64_t *dst, const uint64_t *src,
					   uint32_t steps, uint64_t seed, uint32_t wg)
{
	dst[wg] = ref_accumulate(src ? src[wg] : xsched_sim_init(seed, wg), steps);
}

/* The sim's ACCUMULATE: dst[block] from src[block] (or the seed), steps
 * steps of step_ns each (simulated time; a real GPU ignores it). */
__global__ void accumulate(uint64_t *dst, const uint64_t *src, uint32_t steps,
			   uint64_t step_ns, uint64_t seed)
{
	(void)step_ns;
	if (threadIdx.x == 0)
		sk_workgroup(dst, src, steps, seed, blockIdx.x);
}

/* The sim's MARK: ACCUMULATE, and dst[grid + block] counts the steps run. */
__global__ void mark(uint64_t *dst, const uint64_t *src, uint32_t steps,
		     uint64_t step_ns, uint64_t seed)
{
	(void)step_ns;
	if (threadIdx.x != 0)
		return;
	sk_workgroup(dst, src, steps, seed, blockIdx.x);
	dst[gridDim.x + blockIdx.x] += steps;
}

static inline void ref_launch(uint64_t *dst, const uint64_t *src, uint32_t grid,
			      uint32_t steps, uint64_t seed)
{
	for (uint32_t wg = 0; wg < grid; wg++)
		dst[wg] = ref_accumulate(src ? src[wg] : xsched_sim_init(seed, wg), steps);
}

/* One checksum line per program: what the with/without-preload runs compare. */
static inline uint64_t checksum(const uint64_t *v, size_t n, uint64_t sum)
{
	for (size_t i = 0; i < n; i++)
		sum = xsched_sim_mix(sum ^ v[i]);
	return sum;
}

#define HIPCHECK(call) do {							\
	hipError_t e_ = (call);							\
	if (e_ != hipSuccess) {							\
		fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,	\
			hipGetErrorString(e_));					\
		exit(1);							\
	}									\
} while (0)

#endif
