// SPDX-License-Identifier: GPL-2.0
/*
 * Sim packets, their step marks, and the CPU reference of the sim kernels
 * that a completed packet's results are compared with.
 */
#include "xsched_util.h"

struct xsched_sim_packet xs_packet(uint32_t grid, uint32_t steps,
				   uint64_t step_ns, uint64_t seed,
				   uint64_t dst, uint64_t src)
{
	struct xsched_sim_packet p = {
		.kernel = XSCHED_SIM_KERNEL_ACCUMULATE,
		.grid = grid,
		.steps = steps,
		.step_ns = step_ns,
		.seed = seed,
		.dst = dst,
		.src = src,
	};

	return p;
}

struct xsched_sim_packet xs_mark_packet(uint32_t grid, uint32_t steps,
					uint64_t step_ns, uint64_t seed,
					uint64_t dst, uint64_t src)
{
	struct xsched_sim_packet p = xs_packet(grid, steps, step_ns, seed, dst, src);

	p.kernel = XSCHED_SIM_KERNEL_MARK;
	return p;
}

uint64_t xs_packet_entries(const struct xsched_sim_packet *p)
{
	return p->kernel == XSCHED_SIM_KERNEL_MARK ? 2ULL * p->grid : p->grid;
}

void xs_marks_clear(const struct xsched_sim_packet *p, uint64_t *out)
{
	memset(out + p->grid, 0, p->grid * sizeof(*out));
}

long xs_marks_not(const struct xsched_sim_packet *p,
		  const uint64_t *out, uint64_t want)
{
	uint32_t wg;

	for (wg = 0; wg < p->grid; wg++)
		if (out[p->grid + wg] != want)
			return (long)wg;
	return -1;
}

uint64_t xs_marks_sum(const struct xsched_sim_packet *p,
		      const uint64_t *out)
{
	uint64_t sum = 0;
	uint32_t wg;

	for (wg = 0; wg < p->grid; wg++)
		sum += out[p->grid + wg];
	return sum;
}

uint64_t xs_packet_steps(const struct xsched_sim_packet *p)
{
	return (uint64_t)p->grid * p->steps;
}

uint64_t xs_ref_workgroup(uint64_t seed, uint32_t wg,
			  uint32_t steps, const uint64_t *src)
{
	uint32_t lds[XSCHED_SIM_LDS_WORDS] = { 0 };
	uint64_t acc = src ? src[wg] : xsched_sim_init(seed, wg);
	uint32_t s;

	for (s = 0; s < steps; s++)
		acc = xsched_sim_step(acc, s, lds);
	return xsched_sim_finish(acc, lds);
}

void xs_ref_packet(const struct xsched_sim_packet *p,
		   const uint64_t *src, uint64_t *out)
{
	uint32_t wg;

	for (wg = 0; wg < p->grid; wg++)
		out[wg] = xs_ref_workgroup(p->seed, wg, p->steps, src);
}

long xs_first_mismatch(const uint64_t *got, const uint64_t *want,
		       size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (got[i] != want[i])
			return (long)i;
	return -1;
}

long xs_packet_mismatch(const struct xsched_sim_packet *p,
			const uint64_t *src, const uint64_t *out)
{
	uint64_t *ref = malloc(p->grid * sizeof(*ref));
	long bad;

	if (!ref)
		return -ENOMEM;
	xs_ref_packet(p, src, ref);
	bad = xs_first_mismatch(out, ref, p->grid);
	free(ref);
	return bad;
}
