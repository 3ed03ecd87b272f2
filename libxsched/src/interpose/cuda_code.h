/* SPDX-License-Identifier: MIT */
/*
 * Code in the urgent context: which function runs there in place of the
 * program's (cuda_code.c).  Called by the CUDA table's hooks (cuda.c) and
 * by the urgent context (cuda_urgent.c); it calls only the driver.
 */
#ifndef XSCHED_CUDA_CODE_H
#define XSCHED_CUDA_CODE_H

#include <cuda.h>
#include <stdbool.h>

#define XU_CODE_DEVS 16		/* devices with an urgent context */

/* Driver functions from @libcuda; false: this libcuda lacks some. */
bool xu_code_init(void *libcuda);

/* What the program loads and sets (after the driver succeeded). */
void xu_module_loaded(CUmodule m, const void *image, const char *path);
void xu_module_unloaded(CUmodule m);
void xu_library_loaded(CUlibrary lib);
void xu_library_unloaded(CUlibrary lib);
void xu_module_of_library(CUmodule m, CUlibrary lib);
void xu_function_of_kernel(CUfunction f, CUkernel k);
void xu_function_attribute(CUfunction f, CUfunction_attribute a, int v);
void xu_function_cache_config(CUfunction f, CUfunc_cache c);

/* *@f, to be launched in the urgent context @uctx of device @dev, as a
 * function that runs there; false: it cannot be carried (logged once). */
bool xu_code_translate(CUcontext uctx, int dev, CUfunction *f, bool *first_use);

#endif
