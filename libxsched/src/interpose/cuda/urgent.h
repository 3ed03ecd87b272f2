/* SPDX-License-Identifier: MIT */
/*
 * The urgent context (Lv3 on NVIDIA), and with it off the default's
 * choice of Lv1 holds per burst: see cuda/urgent.c.  Called by the
 * CUDA table's hooks (cuda/hooks.c), its ops (cuda/ops.c) and the events across
 * the two contexts (cuda/events.c).  It calls the driver (cuda/driver.h),
 * the code in the urgent context
 * (cuda/code.c), the gather (cuda/gather.c), the choice of a burst's mode
 * (interpose/mode.c), the handle table (handle_table.c) and the core's log and
 * clock (log.c, config.c).
 */
#ifndef XSCHED_CUDA_URGENT_H
#define XSCHED_CUDA_URGENT_H

#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>

#include "../interpose.h"

/* How a call on an urgent stream may run. */
enum xu_how {
	XU_GATHER,	/* on the twin, gathered: GPU work only (cuda/gather.c) */
	XU_CARRY,	/* on the twin, behind what is gathered there */
	XU_OPEN,	/* on the twin, the gates opened first: it may make the
			 * host wait (a copy with host memory, a host function) */
	XU_STAY,	/* on the program's own stream (after the twin's work) */
};

/* Devices at and above this ordinal in a stream description are the
 * urgent contexts of devices 0, 1, ...: the core's gate and policy then
 * see an urgent stream as on a device of its own, so it never holds the
 * program's context (the driver's time-slicing preempts instead). */
#define XU_DEV_BASE 32

/* XSCHED_CUDA_LV3 read (after xc_driver_init()).  @split:
 * the SM partition is on (the two are alternatives); @choose_hold:
 * XSCHED_CUDA_HOLD is auto, so that with the urgent context off (and no
 * partition) each urgent stream's bursts run with Lv1 holds or without, as
 * measured best (interpose/mode.c's modes lv1 and native).  @rt: the wing's
 * runtime, whose streams' cap follows the choice.  true: urgent streams
 * are followed (the urgent context is on, or holds are chosen). */
bool xu_init(struct xsi_runtime *rt, bool split, bool choose_hold);
/* Around a fork (cuda/hooks.c's one registration): the urgent contexts' and the
 * stream table's locks; the child follows nothing. */
void xu_fork_prepare(void);
void xu_fork_parent(void);
void xu_fork_child(void);
bool xu_on(void);

/* Streams: the program made @h (in the current context) with @flags and
 * the CUDA priority *@prio, read once by the create hook for this and the
 * core's description of @h (NULL: the driver could not say; not urgent).
 * Only while xu_tracking(): the caller need not read it otherwise. */
bool xu_tracking(void);
void xu_stream_created(CUstream h, unsigned int flags, const int *prio);
/* Before the real destroy: @h and its program side forgotten (the core's
 * too: xsi_stream_destroyed()). */
void xu_stream_destroyed(CUstream h);
/* Is @h urgent?  Its urgent context's pseudo device (XU_DEV_BASE + dev). */
bool xu_stream_urgent(CUstream h, int32_t *pseudo_dev);
/* The stream a call on @h must use, @f (launches) translated to a function
 * that runs there.  Joins the twin and the program's stream when the side
 * changes, so the stream's order holds.  *@key (if given) becomes the
 * handle the core holds the call by when it stays on an urgent stream's
 * own side (XU_PROGRAM_SIDE below); else it is left as it was. */
CUstream xu_route(CUstream h, CUfunction *f, enum xu_how how, uintptr_t *key);
/* cuLaunchKernelEx: @cfg's stream routed; *@copy holds the changed config. */
const CUlaunchConfig *xu_route_ex(const CUlaunchConfig *cfg, CUfunction *f,
				  CUlaunchConfig *copy, uintptr_t *key);
/* cuStreamAddCallback: routed, and the callback told the program's stream. */
CUstream xu_route_callback(CUstream h, CUstreamCallback *cb, void **data, uintptr_t *key);
/*
 * The core sees an urgent stream as two streams: its handle, on the pseudo
 * device of its urgent context (what runs on the twin holds nothing of the
 * program's context), and its handle | XU_PROGRAM_SIDE, on its own device
 * (what runs on the program's stream, uncarried, holds lower streams as
 * any urgent stream's work does).  Stream handles are aligned pointers;
 * the default streams' (1, 2) are never urgent.
 */
#define XU_PROGRAM_SIDE 4
/* Where @h's last command went, and that stream's context (marks). */
void xu_mark_target(CUstream h, CUstream *on, CUcontext *ctx);
/* The twin of @h, or NULL (synchronize and query cover it too). */
CUstream xu_twin(CUstream h);
/* A synchronize (or query) of @h begun at @since (xs_now_ns()) succeeded:
 * the burst in progress ended (interpose/mode.c measures it); @recorded:
 * that of an event recorded on @h then (0: of @h itself), which ends no
 * burst begun after it. */
void xu_stream_synchronized(CUstream h, uint64_t since, uint64_t recorded);
/* A context of the program synchronized (@of, or NULL: the current one),
 * begun at @since: its device's urgent context too, and (on success) the
 * bursts of that context's urgent streams ended. */
CUresult xu_ctx_synchronize(CUcontext of, uint64_t since);
/* The urgent context @h's work runs in, or NULL: @h is not urgent. */
CUcontext xu_urgent_ctx(CUstream h);
/* Is @h inside a capture (its own or one it joined)? */
bool xu_capturing(CUstream h);
/* Stream capture begins on @h: its twin's work first. */
void xu_capture_begin(CUstream h);
void xu_capture_end(void);
/* A context or a device's primary context is going away. */
void xu_context_gone(CUcontext ctx, int32_t device);

#endif
