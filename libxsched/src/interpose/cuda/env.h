/* SPDX-License-Identifier: MIT */
/*
 * The urgent streams' variables (Documentation/cuda.rst, "Environment"):
 * whether the urgent context is on, the mode forced on its bursts, the
 * price of the costlier modes, the burst log.  cuda/env.c, read once by
 * cuda/urgent.c's xu_init(); it calls the driver (cuda/driver.h) and the
 * code of the urgent context (cuda/code.c) to see what this libcuda has.
 * XSCHED_CUDA_HOLD and the wing's other variables are cuda/hooks.c's.
 */
#ifndef XSCHED_CUDA_ENV_H
#define XSCHED_CUDA_ENV_H

#include <stdbool.h>
#include <stdint.h>

struct xu_env {
	bool lv3;		/* XSCHED_CUDA_LV3=1, and this libcuda allows it */
	int forced_mode;	/* XSCHED_CUDA_LV3_MODE: a mode, or -1 (auto) */
	uint32_t price;		/* XSCHED_CUDA_LV3_PRICE, in percent */
	bool burst_log;		/* XSCHED_CUDA_BURST_LOG=1: each burst told */
};

/* Read them (a malformed value said in one line, the default used);
 * @split: the SM partition is on (the urgent context's alternative). */
void xu_env_read(struct xu_env *env, bool split);

#endif
