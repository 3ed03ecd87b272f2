// SPDX-License-Identifier: MIT
/*
 * A HIP host program in C, linked against one of Debian's real runtimes
 * (libamdhip64.so.5, .6, .7) as a user's program is, calling only what the
 * runtime survives without a GPU (tests/hip-real/run.sh runs it alone and
 * preloaded with libxsched.so and compares).  Every result is printed by value and by the
 * runtime's own name and message.  Streams are created only with arguments
 * the runtime refuses before it needs a device, except with --stream: a real
 * hipStreamCreate segfaults inside the runtime when it has no device.
 */
#include <stdio.h>
#include <string.h>
#include <hip/hip_runtime_api.h>

/* The module launches of hip_ext.h by their C++ names, as code built
 * against ROCm 5.x (rocBLAS 5.5) imports them: every suite exports these,
 * 5.x no C names. */
hipError_t cxx_ext_launch(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
			  uint32_t, size_t, hipStream_t, void **, void **, hipEvent_t,
			  hipEvent_t, uint32_t)
	__asm__("_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j");
hipError_t cxx_hcc_launch(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
			  uint32_t, size_t, hipStream_t, void **, void **, hipEvent_t,
			  hipEvent_t)
	__asm__("_Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_");

static void say(const char *call, hipError_t e)
{
	printf("%s: %d %s \"%s\"\n", call, (int)e, hipGetErrorName(e), hipGetErrorString(e));
}

int main(int argc, char **argv)
{
	hipStream_t s = NULL;
	hipError_t e;
	int n = -1, v = -1, dev = -1;

	/* Every line out before a crash, whatever stdout is. */
	setvbuf(stdout, NULL, _IOLBF, 0);

	e = hipGetDeviceCount(&n);
	say("hipGetDeviceCount", e);
	printf("count %d\n", n);
	say("hipGetLastError", hipGetLastError());
	e = hipDriverGetVersion(&v);
	say("hipDriverGetVersion", e);
	printf("driver version %d\n", v);
	v = -1;
	e = hipRuntimeGetVersion(&v);
	say("hipRuntimeGetVersion", e);
	printf("runtime version %d\n", v);
	e = hipGetDevice(&dev);
	say("hipGetDevice", e);
	printf("device %d\n", dev);
	say("hipSetDevice(0)", hipSetDevice(0));
	say("hipDeviceSynchronize", hipDeviceSynchronize());
	say("hipGetLastError", hipGetLastError());
	/* Stream creation errors the runtime finds before it needs a device. */
	say("hipStreamCreate(NULL)", hipStreamCreate(NULL));
	say("hipStreamCreateWithFlags(NULL)", hipStreamCreateWithFlags(NULL, hipStreamDefault));
	say("hipStreamCreateWithPriority(NULL)", hipStreamCreateWithPriority(NULL, 0, 0));
	say("hipStreamCreateWithFlags(bad flags)", hipStreamCreateWithFlags(&s, 0x7fff0000u));
	/* A launch on the null stream: the interposer meets "no device" here. */
	say("hipLaunchKernel(null stream)",
	    hipLaunchKernel(NULL, (dim3){ 1, 1, 1 }, (dim3){ 1, 1, 1 }, NULL, 0, NULL));
	say("hipGetLastError", hipGetLastError());
	/* The runtime's own answer, not hipErrorNotSupported from a hook that
	 * looked the real function up by its C name only. */
	say("hipExtModuleLaunchKernel [C++ name] (null stream)",
	    cxx_ext_launch(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL, NULL, NULL, 0));
	say("hipHccModuleLaunchKernel [C++ name] (null stream)",
	    cxx_hcc_launch(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL, NULL, NULL));
	say("hipStreamDestroy(NULL)", hipStreamDestroy(NULL));
	/* Segfaults in the runtime with no GPU (FACTS 6): run.sh compares the
	 * crash alone and preloaded, like with like. */
	if (argc > 1 && !strcmp(argv[1], "--stream"))
		say("hipStreamCreate", hipStreamCreate(&s));
	printf("hip-probe: done\n");
	return 0;
}
