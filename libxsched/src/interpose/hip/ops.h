/* SPDX-License-Identifier: MIT */
/*
 * hip/ops.c, for hip/hooks.c: the runtime functions the ops call, and the ops.
 */
#ifndef XSCHED_INTERPOSE_HIP_OPS_H
#define XSCHED_INTERPOSE_HIP_OPS_H

#include <hip/hip_runtime_api.h>

#include "../../internal.h"
#include "../interpose.h"

/* ---- the runtime functions the table's ops call (never our hooks) ------- */

struct xh_real {
	hipError_t (*get_device)(int *);
	hipError_t (*set_device)(int);
	hipError_t (*get_device_count)(int *);
	hipError_t (*stream_get_priority)(hipStream_t, int *);
	int (*stream_device)(hipStream_t);
	hipError_t (*stream_is_capturing)(hipStream_t, hipStreamCaptureStatus *);
	hipError_t (*event_create)(hipEvent_t *, unsigned int);
	hipError_t (*event_destroy)(hipEvent_t);
	hipError_t (*event_record)(hipEvent_t, hipStream_t);
	hipError_t (*event_query)(hipEvent_t);
};
extern struct xh_real xh_real;

enum xsi_default xh_default_kind(uintptr_t h);
int xh_current_device(void);
int xh_device_count(void);
/* The HIP priorities a stream's request is clamped to: CLR's classes
 * (high, normal, low), whatever the runtime reports or keeps. */
#define XH_HIP_PRIO_GREATEST	(-1)
#define XH_HIP_PRIO_LEAST	1
/* A program's request @prio, clamped to the HIP range above. */
int xh_requested_priority(int prio);
/* xsched priority of HIP priority @hip_prio. */
int32_t xh_priority(int hip_prio);
/* Is a stream of HIP priority @hip_prio (the request, clamped) one whose
 * holds are chosen per burst: an urgent one (high), unless
 * XSCHED_HIP_HOLD=1. */
bool xh_chooses(int hip_prio);
int xh_describe(uintptr_t h, struct xsi_stream_desc *d);
int xh_is_capturing(uintptr_t h);
int xh_mark_record(uintptr_t h, const struct xsi_stream_desc *d, void **mark);
int xh_mark_wait(void *mark, int64_t timeout_ns);
void xh_mark_free(void *mark);

#endif /* XSCHED_INTERPOSE_HIP_OPS_H */
