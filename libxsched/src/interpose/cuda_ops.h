/* SPDX-License-Identifier: MIT */
/*
 * The CUDA table's ops for the interposition core (cuda_ops.c), and the
 * driver functions they and the SM partition call (never our hooks).
 */
#ifndef XSCHED_CUDA_OPS_H
#define XSCHED_CUDA_OPS_H

#include <cuda.h>
#include <stdbool.h>

#include "interpose.h"

struct xc_real {
	CUresult (*ctx_get_current)(CUcontext *);
	CUresult (*ctx_push)(CUcontext);
	CUresult (*ctx_pop)(CUcontext *);
	CUresult (*ctx_get_device)(CUdevice *);
	CUresult (*device_get_count)(int *);
	CUresult (*stream_get_ctx)(CUstream, CUcontext *);
	CUresult (*stream_get_priority)(CUstream, int *);
	CUresult (*stream_is_capturing)(CUstream, CUstreamCaptureStatus *);
	CUresult (*event_create)(CUevent *, unsigned int);
	CUresult (*event_destroy)(CUevent);
	CUresult (*event_record)(CUevent, CUstream);
	CUresult (*event_query)(CUevent);
	CUresult (*exchange_capture_mode)(CUstreamCaptureMode *);
	/* The SM partition's (absent before CUDA 12.4). */
	CUresult (*prio_range)(int *, int *);
	CUresult (*dev_resource)(CUdevice, CUdevResource *, CUdevResourceType);
	CUresult (*sm_split)(CUdevResource *, unsigned int *, const CUdevResource *,
			     CUdevResource *, unsigned int, unsigned int);
	CUresult (*gen_desc)(CUdevResourceDesc *, CUdevResource *, unsigned int);
	CUresult (*green_create)(CUgreenCtx *, CUdevResourceDesc, CUdevice, unsigned int);
	CUresult (*green_stream_create)(CUstream *, CUgreenCtx, unsigned int, int);
};
extern struct xc_real xc_real;

/* The driver functions from @libcuda; false: some the ops need are absent. */
bool xc_ops_init(void *libcuda);

/* The core's runtime ops (struct xsi_runtime). */
enum xsi_default xc_default_kind(uintptr_t h);
int xc_current_device(void);
int xc_device_count(void);
int xc_describe(uintptr_t h, struct xsi_stream_desc *d);
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
