/* SPDX-License-Identifier: MIT */
/*
 * The CUDA table's ops for the interposition core (cuda/ops.c); they call
 * the driver through cuda/driver.h.
 */
#ifndef XSCHED_CUDA_OPS_H
#define XSCHED_CUDA_OPS_H

#include <cuda.h>
#include <stdbool.h>

#include "../interpose.h"
#include "driver.h"


/* False: driver functions the ops need are absent (cuda/driver.h). */
bool xc_ops_init(void);
/* Around a fork (cuda/hooks.c's one registration): the spare marks' lock. */
void xc_ops_fork_prepare(void);
void xc_ops_fork_parent(void);
void xc_ops_fork_child(void);

/* The core's runtime ops (struct xsi_runtime). */
enum xsi_default xc_default_kind(uintptr_t h);
int xc_current_device(void);
int xc_device_count(void);
int xc_describe(uintptr_t h, struct xsi_stream_desc *d);
/* The same for a stream the create hook made, whose CUDA priority it read
 * already (@prio; 0 when the driver could not say). */
int xc_describe_created(CUstream h, int prio, struct xsi_stream_desc *d);
int xc_enter(const struct xsi_stream_desc *d);
int xc_is_capturing(uintptr_t h);
int xc_mark_record(uintptr_t h, const struct xsi_stream_desc *d, void **mark);
int xc_mark_wait(void *mark, int64_t timeout_ns);
void xc_mark_free(void *mark);
int32_t xc_mark_device(void *mark);	/* a pseudo device: in the urgent context */
/* @ctx (or every context of @device >= 0) is about to be destroyed: the
 * spare events of marks made in it go first. */
void xc_marks_purge(CUcontext ctx, int32_t device);

#endif
