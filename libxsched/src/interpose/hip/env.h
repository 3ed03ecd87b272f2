/* SPDX-License-Identifier: MIT */
/*
 * The HIP wing's own environment (Documentation/hip.rst, "Environment"):
 * how long a call may be held, and whether an urgent stream's holds are
 * chosen per burst.  hip/env.c; read by hip/hooks.c, used by hip/ops.c.
 */
#ifndef XSCHED_INTERPOSE_HIP_ENV_H
#define XSCHED_INTERPOSE_HIP_ENV_H

#include <stdbool.h>
#include <stdint.h>

/* XSCHED_HIP_HOLD=1: every burst of an urgent stream holds the lower
 * streams; unset or auto: each burst's hold is chosen (interpose.h,
 * bursts.c).  Set by xh_env_hold_read(), at the first HIP call. */
extern bool xh_hold_every_burst;
void xh_env_hold_read(void);
/* XSCHED_HIP_HOLD_MAX_MS in ns (10 s when unset or malformed, said). */
uint64_t xh_env_hold_max_ns(void);

#endif /* XSCHED_INTERPOSE_HIP_ENV_H */
