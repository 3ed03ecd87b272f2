/* SPDX-License-Identifier: MIT */
/*
 * Helpers for the VM tests: sim setup, the MARK kernel's CPU reference (its
 * results and its step marks).  The tests run on kselftest_harness.h
 * (vm_test.h); these helpers assert nothing, they answer.
 */
#ifndef XSCHED_VMUTIL_H
#define XSCHED_VMUTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/xsched_kfd.h>
#include <linux/xsched_sim.h>
#include <xsched-sim.h>

struct vm_env {
	struct xsched_sim *sim;
	struct xsched_sim_info info;
	uint32_t slots;			/* cus * waves_per_cu */
};

/* Open the sim; prints why and returns false when it cannot. */
bool vm_env_open(struct vm_env *env);
void vm_env_close(struct vm_env *env);

/* A device buffer of @words u64 words. */
struct vm_buf {
	uint64_t gpu;
	uint64_t *cpu;
	uint32_t words;
};
int vm_buf_alloc(struct vm_env *env, struct vm_buf *b, uint32_t words);

/*
 * A MARK packet: results in dst[0..grid), and one mark per step a wave
 * executes in dst[grid + wg], so dst holds vm_words(grid) words (zeroed, as
 * vm_buf_alloc() leaves them).
 */
struct xsched_sim_packet vm_packet(uint64_t dst, uint32_t grid, uint32_t steps,
				   uint64_t step_ns, uint64_t seed);
/* Words of device memory a vm_packet() of @grid workgroups writes. */
static inline uint32_t vm_words(uint32_t grid)
{
	return 2 * grid;
}
/*
 * Compare a completed kernel's results with the CPU reference and its marks
 * with @steps per workgroup (each step executed exactly once, which a re-run
 * from step zero cannot fake); prints the first mismatch.
 */
bool vm_check_output(const uint64_t *dst, uint32_t grid, uint32_t steps,
		     uint64_t seed, const char *what);
/* Steps the workgroups of a kernel have executed so far, by their marks. */
uint64_t vm_marks_sum(const uint64_t *dst, uint32_t grid);
/* Workgroups whose marks are @lo <= marks <= @hi. */
uint32_t vm_marks_between(const uint64_t *dst, uint32_t grid, uint64_t lo,
			  uint64_t hi);

uint64_t vm_now_ns(void);

/* Attributes with a level and a priority. */
struct xsched_attr vm_attr(unsigned int level, int32_t prio);
/* A new sim queue (ring of 256 packets) and an XQueue on it. */
int vm_new_xq(struct vm_env *env, struct xsched_xqueue **xq,
	      const struct xsched_attr *a);

#endif
