// SPDX-License-Identifier: MIT
/*
 * A framework's way to the HIP runtime, for test_hip's dlsym test: this
 * program does not link libamdhip64; it dlopens the runtime named by argv[1]
 * RTLD_LOCAL and looks entry points up on that handle, as frameworks that
 * load the runtime themselves do.  The runtime is then in no global scope:
 * the dynamic linker alone answers every lookup on the handle with the
 * runtime's own function, so a hook comes back only from libxsched's dlsym()
 * override.  One line per name:
 *   dlsym <name>: hook      the function libxsched exports under that name
 *   dlsym <name>: runtime   the runtime's own
 *   dlsym <name>: none / other
 * then one launch through the handle's hipLaunchKernel (on the null stream)
 * and how many commands reached the runtime.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "fake_libamdhip64.h"

static const char *what(void *h, const char *name, const char *node)
{
	void *p = dlsym(h, name), *hook = dlvsym(RTLD_DEFAULT, name, node);
	Dl_info di;

	if (!p)
		return "none";
	/* dlvsym is not overridden: the global scope's definition, and only
	 * libxsched defines HIP names there. */
	if (p == hook && dladdr(p, &di) && di.dli_fname &&
	    strstr(di.dli_fname, "/libxsched.so"))
		return "hook";
	if (p == dlvsym(h, name, node))
		return "runtime";
	return "other";
}

int main(int argc, char **argv)
{
	static const char *const names[][2] = {
		{ "hipLaunchKernel", "hip_4.2" }, { "hipLaunchKernel_spt", "hip_5.2" },
		{ "hipMemcpyAsync", "hip_4.2" }, { "hipGetProcAddress", "hip_6.1" },
		{ "hipGetDevice", "hip_4.2" }, { "hipNoSuchFunction", "hip_4.2" },
	};
	hipError_t (*lk)(const void *, dim3, dim3, void **, size_t, hipStream_t);
	int (*count)(void);
	struct fake_kernel k = { 0, 1, 0 };
	dim3 one = { 1, 1, 1 };
	unsigned int i;
	void *h;

	if (argc < 2)
		return 2;
	if (dlsym(RTLD_DEFAULT, "fake_log_count")) {
		printf("the runtime is already in the global scope: nothing to test\n");
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("dlopen %s: %s\n", argv[1], dlerror());
		return 2;
	}
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		printf("dlsym %s: %s\n", names[i][0], what(h, names[i][0], names[i][1]));
	lk = (hipError_t (*)(const void *, dim3, dim3, void **, size_t, hipStream_t))
		dlsym(h, "hipLaunchKernel");
	count = (int (*)(void))dlsym(h, "fake_log_count");
	if (!lk || !count)
		return 2;
	fflush(stdout);
	if (lk(&k, one, one, NULL, 0, NULL) != hipSuccess)
		return 3;
	printf("launched: %d command(s) reached the runtime\n", count());
	return 0;
}
