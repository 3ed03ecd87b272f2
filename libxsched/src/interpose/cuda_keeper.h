/* SPDX-License-Identifier: MIT */
/*
 * The urgent context's keeper (cuda_keeper.c): keeps the urgent context on
 * the GPU for the length of an urgent burst.  Called by the urgent context
 * (cuda_urgent.c); it calls only the driver, and the urgent context back
 * through the function it was given.
 */
#ifndef XSCHED_CUDA_KEEPER_H
#define XSCHED_CUDA_KEEPER_H

#include <cuda.h>
#include <stdbool.h>

#define XK_DEVS 16

/* XSCHED_CUDA_LV3_KEEP read, driver functions from @libcuda; @idle tells
 * whether a device's urgent twins have work left. */
void xk_init(void *libcuda, bool (*idle)(int dev));
/* A call was carried to @dev's urgent context @uctx: a burst goes on. */
void xk_active(int dev, CUcontext uctx);

#endif
