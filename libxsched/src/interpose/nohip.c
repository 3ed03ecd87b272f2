// SPDX-License-Identifier: MIT
/*
 * Built into libxsched.so in place of hip.c when the build found no HIP
 * headers (the Makefile's HIP_INC): the library then has no HIP hooks.  A
 * preloaded libxsched that schedules nothing must not be silent about it:
 * when a HIP runtime is in the process at load time, say so in one line.
 * (A runtime that a framework dlopens later is not seen here; the build
 * itself says it left the interposer out.)
 */
#include <dlfcn.h>

#include "../internal.h"

__attribute__((constructor)) static void xs_nohip_check(void)
{
	static const char *const names[] = { "libamdhip64.so.5", "libamdhip64.so.6",
					     "libamdhip64.so.7" };
	unsigned int i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		void *h = dlopen(names[i], RTLD_LAZY | RTLD_NOLOAD);

		if (!h)
			continue;
		dlclose(h);
		xs_warn("hip: %s is in this process, but this libxsched.so was built without the HIP interposer (no HIP headers at build time): HIP calls are NOT scheduled",
			names[i]);
		return;
	}
}
