// SPDX-License-Identifier: MIT
// A graph captured from a stream (copy in, two chained kernels, copy out),
// instantiated and launched three times: nothing runs during capture, each
// launch gives the reference result.
#include "simkernels.h"

#define N 80

int main()
{
	uint64_t in[N], out[N], ref[N], tmp[N];
	uint64_t *a, *b, sum = 0;
	hipStream_t s;
	hipGraph_t g;
	hipGraphExec_t x;
	hipStreamCaptureStatus st;
	int fails = 0;

	for (int i = 0; i < N; i++)
		in[i] = xsched_sim_mix(7 + i);
	HIPCHECK(hipStreamCreate(&s));
	HIPCHECK(hipMalloc(&a, sizeof(in)));
	HIPCHECK(hipMalloc(&b, sizeof(in)));
	HIPCHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
	HIPCHECK(hipStreamIsCapturing(s, &st));
	fails += st != hipStreamCaptureStatusActive;
	HIPCHECK(hipMemcpyAsync(a, in, sizeof(in), hipMemcpyHostToDevice, s));
	accumulate<<<N, 64, 0, s>>>(b, a, 30, 20000, 0);
	hipLaunchKernelGGL(accumulate, dim3(N), dim3(64), 0, s, a, b, 15, 20000, 0);
	HIPCHECK(hipMemcpyAsync(out, a, sizeof(out), hipMemcpyDeviceToHost, s));
	HIPCHECK(hipStreamEndCapture(s, &g));
	HIPCHECK(hipStreamSynchronize(s));
	memset(out, 0, sizeof(out));
	HIPCHECK(hipGraphInstantiate(&x, g, nullptr, nullptr, 0));
	ref_launch(tmp, in, N, 30, 0);
	ref_launch(ref, tmp, N, 15, 0);
	for (int r = 0; r < 3; r++) {
		if (out[0] != 0) {
			printf("graph: output written before launch %d\n", r);
			fails++;
		}
		HIPCHECK(hipGraphLaunch(x, s));
		HIPCHECK(hipStreamSynchronize(s));
		for (int i = 0; i < N; i++)
			fails += out[i] != ref[i];
		sum = checksum(out, N, sum);
		memset(out, 0, sizeof(out));
	}
	HIPCHECK(hipGraphExecDestroy(x));
	HIPCHECK(hipGraphDestroy(g));
	HIPCHECK(hipStreamDestroy(s));
	printf("graph: checksum %016llx\n", (unsigned long long)sum);
	printf("graph: %s\n", fails ? "FAIL" : "PASS");
	return fails ? 1 : 0;
}
