// SPDX-License-Identifier: MIT
// Launches on the null stream: <<<>>> and hipLaunchKernelGGL chained through
// device memory (each kernel reads the previous one's output, so a reordered
// or lost launch changes the result), synchronous copies and memsets, MARK's
// per-workgroup step counts, and an unregistered host pointer refused with
// hipErrorInvalidDeviceFunction as CLR refuses it.
#include "simkernels.h"

#define N 96

static void not_a_kernel(void)
{
}

int main()
{
	uint64_t in[N], out[N], marks[2 * N], ref[N], tmp[N];
	uint64_t *a, *b, *m;
	int fails = 0;

	for (int i = 0; i < N; i++)
		in[i] = xsched_sim_mix(0x1234 + i);
	HIPCHECK(hipMalloc(&a, sizeof(in)));
	HIPCHECK(hipMalloc(&b, sizeof(in)));
	HIPCHECK(hipMalloc(&m, sizeof(marks)));
	HIPCHECK(hipMemcpy(a, in, sizeof(in), hipMemcpyHostToDevice));
	accumulate<<<N, 64>>>(b, a, 40, 20000, 0);
	hipLaunchKernelGGL(accumulate, dim3(N), dim3(64), 0, 0, a, b, 30, 20000, 0);
	accumulate<<<N, 64, 0, 0>>>(b, a, 20, 0, 0);
	HIPCHECK(hipMemset(m, 0, sizeof(marks)));
	mark<<<N, 32>>>(m, b, 25, 10000, 0);
	HIPCHECK(hipGetLastError());
	HIPCHECK(hipMemcpy(out, b, sizeof(out), hipMemcpyDeviceToHost));
	HIPCHECK(hipMemcpy(marks, m, sizeof(marks), hipMemcpyDeviceToHost));

	ref_launch(tmp, in, N, 40, 0);
	ref_launch(ref, tmp, N, 30, 0);
	ref_launch(tmp, ref, N, 20, 0);
	for (int i = 0; i < N; i++)
		if (out[i] != tmp[i])
			fails++;
	ref_launch(ref, tmp, N, 25, 0);
	for (int i = 0; i < N; i++)
		if (marks[i] != ref[i] || marks[N + i] != 25)
			fails++;
	printf("null_stream: launches in order: %s\n", fails ? "MISMATCH" : "ok");

	/* A host function that is no registered kernel. */
	uint32_t steps = 1;
	uint64_t z = 0;
	void *args[] = { &b, &a, &steps, &z, &z };
	hipError_t e = hipLaunchKernel((const void *)not_a_kernel, dim3(1), dim3(1), args, 0, 0);

	if (e != hipErrorInvalidDeviceFunction) {
		printf("null_stream: unregistered stub gave %s, expected hipErrorInvalidDeviceFunction\n",
		       hipGetErrorName(e));
		fails++;
	} else {
		printf("null_stream: unregistered stub: hipErrorInvalidDeviceFunction\n");
	}
	(void)hipGetLastError();
	HIPCHECK(hipFree(a));
	HIPCHECK(hipFree(b));
	HIPCHECK(hipFree(m));
	printf("null_stream: checksum %016llx\n",
	       (unsigned long long)checksum(marks, 2 * N, checksum(out, N, 0)));
	printf("null_stream: %s\n", fails ? "FAIL" : "PASS");
	return fails ? 1 : 0;
}
