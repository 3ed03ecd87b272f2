// SPDX-License-Identifier: MIT
/*
 * A HIP host program in C, linked against the real libamdhip64.so.5 as a
 * user's program is, calling only what Debian's ROCm 5.2.3 runtime survives
 * without a GPU (tests/hip-real/run.sh runs it alone and preloaded with
 * libxsched.so and compares).  Every result is printed by value and by the
 * runtime's own name and message.  Streams are created only with arguments
 * the runtime refuses before it needs a device, except with --stream: a real
 * hipStreamCreate segfaults inside the runtime when it has no device.
 */
#include <stdio.h>
#include <string.h>
#include <hip/hip_runtime_api.h>

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
	say("hipStreamDestroy(NULL)", hipStreamDestroy(NULL));
	/* Segfaults in the runtime with no GPU (FACTS 6): run.sh compares the
	 * crash alone and preloaded, like with like. */
	if (argc > 1 && !strcmp(argv[1], "--stream"))
		say("hipStreamCreate", hipStreamCreate(&s));
	printf("hip-probe: done\n");
	return 0;
}
