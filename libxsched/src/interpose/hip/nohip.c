// SPDX-License-Identifier: MIT
/*
 * Built into libxsched.so in place of hip/hooks.c when the build found no HIP
 * headers (the Makefile's HIP_INC): the library then has no HIP hooks.  A
 * preloaded libxsched that schedules nothing must not be silent about it:
 * when a HIP runtime is in the process at load time, say so in one line.
 * (A runtime that a framework dlopens later is not seen here; the build
 * itself says it left the interposer out.)
 */
#include <dlfcn.h>

#include "../../internal.h"
#include "../interpose.h"

__attribute__((constructor)) static void xs_nohip_check(void)
{
	static const char *const names[] = XSI_HIP_SONAMES;
	const char *which;
	void *h = xsi_dlopen_loaded(names, sizeof(names) / sizeof(names[0]), &which);

	if (!h)
		return;
	dlclose(h);
	xs_warn("hip: %s is in this process, but this libxsched.so was built without the HIP interposer (no HIP headers at build time): HIP calls are NOT scheduled",
		which);
}
