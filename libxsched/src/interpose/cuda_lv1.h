/* SPDX-License-Identifier: MIT */
/*
 * The CUDA interposer's scheduler: stream table, per-device domains, Lv1
 * with the caller as the buffer, and symbol redirection.  cuda.c (the table
 * of entry points and their hooks) calls it; it calls the driver only
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

/* Classes of entry points (as in the interposition core). */
enum xc_class {
	XC_SCHEDULED = 1,	/* gated by Lv1, counted as work on its stream */
	XC_ORDERED = 2,		/* straight to the driver, with bookkeeping */
};

/* One hooked exported symbol of libcuda. */
struct xc_entry {
	const char *name;	/* exported symbol, e.g. "cuMemcpyAsync_ptsz" */
	const char *base;	/* what the runtime asks cuGetProcAddress for */
	enum xc_class cls;
	bool per_thread;	/* _ptsz/_ptds: a null stream is per-thread */
	int since;		/* cudaVersion from which `base` has this ABI */
	void *hook;
	void **real;
	atomic_bool used;	/* first call logged */
};

/* cuda.c: the table, and the libcuda handle the real functions came from */
extern struct xc_entry xc_entries[];
extern const unsigned int xc_nentries;

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
void xc_gate_enter(struct xc_gate *g, struct xc_entry *e, CUstream h);
void xc_gate_exit(struct xc_gate *g, bool ok);

/* Ordered pass-through bookkeeping. */
uint64_t xc_stream_launched(struct xc_entry *e, CUstream h, struct xc_queue **qp);
void xc_stream_done(struct xc_queue *q, uint64_t upto);	/* all <= upto completed */
void xc_ctx_synchronized(CUcontext ctx, const uint64_t *snap, unsigned int n);
unsigned int xc_ctx_snapshot(CUcontext ctx, uint64_t *snap, unsigned int max);
void xc_stream_destroyed(CUstream h);
void xc_ctx_destroyed(CUcontext ctx, int device);	/* device < 0: by context */
void xc_capture(struct xc_entry *e, CUstream h, bool begin);
void xc_note_pass(struct xc_entry *e, CUstream h);

/* Symbol redirection: what a lookup of @name returned -> our hook or @real.
 * @how: "dlsym" or "cuGetProcAddress"; @ver and @flags: cuGetProcAddress's. */
void *xc_redirect(const char *how, const char *name, void *real, int ver,
		  uint64_t flags);

/* Tests: counters of the scheduler. */
struct xc_stats {
	uint64_t queues;	/* queues created */
	uint64_t holds;		/* waits for a higher-priority stream */
	uint64_t hold_ns;
	uint64_t cap_waits;	/* waits for in-flight room */
	uint64_t unmatched;	/* lookups of a hooked name that matched no hook */
};

#endif /* XSCHED_CUDA_LV1_H */
