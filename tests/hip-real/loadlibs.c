// SPDX-License-Identifier: MIT
/*
 * Loads each library named on the command line with dlopen(RTLD_NOW), as a
 * framework (PyTorch) loads the ROCm libraries it links, so that the dynamic
 * linker binds every reference they make (LD_DEBUG=bindings shows to what:
 * tests/hip-real/bindings.py).  Exit status: the number that failed to load.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int i, failed = 0;

	for (i = 1; i < argc; i++) {
		if (!dlopen(argv[i], RTLD_NOW | RTLD_GLOBAL)) {
			printf("loadlibs: %s: %s\n", argv[i], dlerror());
			failed++;
		} else {
			printf("loadlibs: %s loaded\n", argv[i]);
		}
	}
	return failed;
}
