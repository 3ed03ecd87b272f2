// SPDX-License-Identifier: MIT
/*
 * The libcuda functions the CUDA wing calls, resolved once
 * (cuda/driver.h): the wing's only resolver of driver functions; and the
 * capture-mode relax pair, on them.  It calls xsi_real_dlsym() (symbols.c)
 * and the driver, nothing else.
 */
#include <dlfcn.h>

#include "../interpose.h"
#include "driver.h"

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

CUstreamCaptureMode xc_relax(bool *swapped)
{
	CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;

	*swapped = xc_drv.exchange_capture_mode &&
		   xc_drv.exchange_capture_mode(&m) == CUDA_SUCCESS;
	return m;
}

void xc_unrelax(bool swapped, CUstreamCaptureMode m)
{
	if (swapped)
		xc_drv.exchange_capture_mode(&m);
}
