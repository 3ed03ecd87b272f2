/* SPDX-License-Identifier: MIT */
/*
 * The CUDA interposer's scheduler: stream table, per-device domains and Lv1
 * with the caller as the buffer, and the CUDA ops of the interposition
 * core's runtime (struct xsi_runtime xc_rt in cuda.c, which also resolves
 * the real functions and redirects symbols).  It calls the driver only
 * through the real functions in struct xc_real.
 *
 * Lv1 here never copies a call.  A scheduled call (a launch, an async copy
 * or memset, a graph launch, a host function) on a stream that has a live
 * stream of higher priority on its device waits in the caller's thread,
 * before it reaches the driver, until (1) fewer than `threshold` of its
 * stream's scheduled calls are in flight and (2) no stream of higher priority
 * on the device has work in flight.  Then it goes to the driver, in the
 * caller's thread, with the caller's own arguments.  Nothing is ever
 * buffered, so every call, scheduled or not, reaches the driver in program
 * order (the drain-first rule holds trivially), per-thread default streams
 * stay the caller's own, and kernel argument arrays are never copied.
 * The cost: a held thread does not run ahead of the GPU.
 *
 * A wait depends only on GPU work already handed to the driver (completion
 * events), never on another host thread, so the library adds no deadlock of
 * its own; but work that itself waits for the host (a stream wait-value
 * that this thread would satisfy later) could make it wait for ever, so
 * XSCHED_CUDA_HOLD_MAX_MS bounds every wait (a call that waited that long
 * goes through, with a warning).
 */
#ifndef XSCHED_CUDA_LV1_H
#define XSCHED_CUDA_LV1_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <cuda.h>

#include "interpose.h"

/* Driver functions the scheduler itself calls (never our hooks). */
struct xc_real {
	CUresult (*ctx_get_current)(CUcontext *);
	CUresult (*ctx_push)(CUcontext);
	CUresult (*ctx_pop)(CUcontext *);
	CUresult (*ctx_get_device)(CUdevice *);
	CUresult (*stream_get_ctx)(CUstream, CUcontext *);
	CUresult (*stream_get_priority)(CUstream, int *);
	CUresult (*stream_is_capturing)(CUstream, CUstreamCaptureStatus *);
	CUresult (*stream_is_capturing_ptsz)(CUstream, CUstreamCaptureStatus *);
	CUresult (*event_create)(CUevent *, unsigned int);
	CUresult (*event_destroy)(CUevent);
	CUresult (*event_record)(CUevent, CUstream);
	CUresult (*event_record_ptsz)(CUevent, CUstream);
	CUresult (*event_synchronize)(CUevent);
	CUresult (*event_query)(CUevent);
	CUresult (*exchange_capture_mode)(CUstreamCaptureMode *);
};
extern struct xc_real xc_real;

/* cuda.c: the table of entry points, on the interposition core. */
extern struct xsi_runtime xc_rt;

/* How a stream handle is to be read. */
enum xc_kind {
	XC_EXPLICIT = 0,	/* a stream the application created */
	XC_LEGACY = 1,		/* the legacy default stream of the current context */
	XC_PER_THREAD = 2,	/* the calling thread's default stream */
};

struct xc_queue;

/* What a hook holds across its real call. */
struct xc_gate {
	struct xc_queue *q;	/* NULL: not scheduled (logged once) */
	uint64_t before;	/* q's launched count before the call */
	bool gated;
};

/* Set-up: resolve the real functions (idempotent, thread safe).  false when
 * libcuda cannot be found: every hook then answers CUDA_ERROR_NOT_INITIALIZED. */
bool xc_init(void);

/* Scheduled calls: before and after the real call. */
void xc_gate_enter(struct xc_gate *g, const struct xsi_entry *e, CUstream h);
void xc_gate_exit(struct xc_gate *g, bool ok);

/* Ordered pass-through bookkeeping. */
uint64_t xc_stream_launched(const struct xsi_entry *e, CUstream h, struct xc_queue **qp);
void xc_stream_done(struct xc_queue *q, uint64_t upto);	/* all <= upto completed */
void xc_ctx_synchronized(CUcontext ctx, const uint64_t *snap, unsigned int n);
unsigned int xc_ctx_snapshot(CUcontext ctx, uint64_t *snap, unsigned int max);
void xc_stream_destroyed(CUstream h);
void xc_ctx_destroyed(CUcontext ctx, int device);	/* device < 0: by context */
void xc_capture(const struct xsi_entry *e, CUstream h, bool begin);
void xc_note_pass(const struct xsi_entry *e, CUstream h);

/* The core's runtime ops, for cuda.c's struct xsi_runtime. */
enum xsi_default xc_default_kind(uintptr_t h);
int xc_current_device(void);
int xc_describe(uintptr_t h, struct xsi_stream_desc *d);
int xc_enter(const struct xsi_stream_desc *d);
int xc_mark_record(uintptr_t h, void **mark);
int xc_mark_wait(void *mark, int64_t timeout_ns);
void xc_mark_free(void *mark);


#endif /* XSCHED_CUDA_LV1_H */
