// SPDX-License-Identifier: MIT
/*
 * The libcuda functions the CUDA wing calls, resolved once
 * (cuda_driver.h): the wing's only resolver of driver functions.  It calls
 * xsi_real_dlsym() (symbols.c) and nothing else.
 */
#include <dlfcn.h>

#include "interpose.h"
#include "cuda_driver.h"

struct xc_driver xc_drv;

void xc_driver_init(void *h)
{
	void *f;

#define XC_DRIVER_RESOLVE(field, ret, params, sym, alt)			\
	f = xsi_real_dlsym(h, sym);					\
	if (!f && (alt))						\
		f = xsi_real_dlsym(h, (const char *)(alt));		\
	xc_drv.field = (__typeof__(xc_drv.field))f;
	XC_DRIVER_FUNCS(XC_DRIVER_RESOLVE)
#undef XC_DRIVER_RESOLVE
}
