/* SPDX-License-Identifier: MIT */
/*
 * Code in the urgent context: which function runs there in place of the
 * program's, loaded there when the program loads it (cuda/code.c).  Called
 * by the CUDA table's hooks (cuda/hooks.c) and the urgent context
 * (cuda/urgent.c).  It calls the driver (cuda/driver.h), the gather (cuda/gather.c: paused around a load in the urgent
 * context), the handle table (handle_table.c) and the core's log (log.c,
 * config.c).
 */
#ifndef XSCHED_CUDA_CODE_H
#define XSCHED_CUDA_CODE_H

#include <cuda.h>
#include <stdbool.h>

#define XU_CODE_DEVS 16		/* devices with an urgent context */

/* False: this libcuda lacks driver functions it needs (cuda/driver.h). */
bool xu_code_init(void);
/* Around a fork (cuda/hooks.c's one registration): the code tables' lock; the
 * child forgets the tables. */
void xu_code_fork_prepare(void);
void xu_code_fork_parent(void);
void xu_code_fork_child(void);

/* What the program loads, gets and sets (after the driver succeeded): the
 * code is loaded in the urgent contexts there too. */
void xu_module_loaded(CUmodule m, const void *image, const char *path);
void xu_module_unloaded(CUmodule m);
void xu_library_loaded(CUlibrary lib);
void xu_library_unloaded(CUlibrary lib);
void xu_module_of_library(CUmodule m, CUlibrary lib);
void xu_kernel_of_library(CUkernel k, CUlibrary lib);
void xu_function_of_kernel(CUfunction f, CUkernel k);
void xu_function_of_module(CUfunction f, CUmodule m);
void xu_function_attribute(CUfunction f, CUfunction_attribute a, int v);
void xu_function_cache_config(CUfunction f, CUfunc_cache c);
/* @f is launched in the program's context (of device @dev; -1: the
 * current one's), which loads it there. */
void xu_code_launched(CUfunction f, int dev);
/* The urgent context of @dev was made (what the program loaded so far is
 * loaded in it). */
void xu_code_context_made(int dev, CUcontext uctx);

/* *@f, to be launched in the urgent context of device @dev, as a function
 * that runs there; false: it cannot be carried (logged once).
 * *@first_use: it is not loaded there yet (its launch loads it). */
bool xu_code_translate(int dev, CUfunction *f, bool *first_use);

#endif
