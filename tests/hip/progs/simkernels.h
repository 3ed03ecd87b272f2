/* SPDX-License-Identifier: MIT */
/*
 * The kernels of the HIP test programs, and their CPU reference.
 *
 * On the stand-in runtime (tests/hip/standin) a kernel is matched by name and
 * runs as the sim GPU's built-in kernel of that name, one workgroup per block
 * of the launch; the device code below never runs there.  It computes the
 * same thing on a real GPU (thread 0 of each block does the work), so the
 * programs are honest HIP programs either way.  The CPU reference uses the
 * sim's own arithmetic from <linux/xsched_sim.h>.
 */
#ifndef SIMKERNELS_H
#define SIMKERNELS_H

#include <hip/hip_runtime.h>
#include <linux/xsched_sim.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SK_LDS 64	/* XSCHED_SIM_LDS_WORDS */

__device__ static inline uint64_t sk_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

__device__ static inline uint64_t sk_run(uint64_t acc, uint32_t steps)
{
	uint32_t lds[SK_LDS] = { 0 };
	uint64_t fold = 0;

	for (uint32_t s = 0; s < steps; s++) {
		acc = sk_mix(acc + s);
		lds[s % SK_LDS] += (uint32_t)acc;
	}
	for (int i = 0; i < SK_LDS; i++)
		fold = sk_mix(fold ^ lds[i]);
	return acc ^ fold;
}

/* The sim's ACCUMULATE: dst[block] from src[block] (or the seed), steps
 * steps of step_ns each (simulated time; a real GPU ignores it). */
__global__ void accumulate(uint64_t *dst, const uint64_t *src, uint32_t steps,
			   uint64_t step_ns, uint64_t seed)
{
	(void)step_ns;
	if (threadIdx.x != 0)
		return;
	uint32_t wg = blockIdx.x;
	uint64_t acc = src ? src[wg] : seed ^ ((uint64_t)wg * 0x9e3779b97f4a7c15ULL);

	dst[wg] = sk_run(acc, steps);
}

/* The sim's MARK: ACCUMULATE, and dst[grid + block] counts the steps run. */
__global__ void mark(uint64_t *dst, const uint64_t *src, uint32_t steps,
		     uint64_t step_ns, uint64_t seed)
{
	(void)step_ns;
	if (threadIdx.x != 0)
		return;
	uint32_t wg = blockIdx.x;
	uint64_t acc = src ? src[wg] : seed ^ ((uint64_t)wg * 0x9e3779b97f4a7c15ULL);

	dst[wg] = sk_run(acc, steps);
	dst[gridDim.x + wg] += steps;
}

/* CPU reference of one workgroup of ACCUMULATE. */
static inline uint64_t ref_accumulate(uint64_t acc, uint32_t steps)
{
	__u32 lds[XSCHED_SIM_LDS_WORDS] = { 0 };

	for (uint32_t s = 0; s < steps; s++)
		acc = xsched_sim_step(acc, s, lds);
	return xsched_sim_finish(acc, lds);
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
