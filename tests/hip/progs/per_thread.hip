// SPDX-License-Identifier: MIT
// Built with -fgpu-default-stream=per-thread: the default stream of each
// thread is its own, and the compiler calls the _spt entry points
// (hipLaunchKernel_spt, hipMemcpyAsync_spt, hipStreamSynchronize_spt).
#include "simkernels.h"
#include <thread>

#define N 48
#define T 4

static int worker(int id, uint64_t *sum)
{
	uint64_t in[N], out[N], ref[N], tmp[N];
	uint64_t *a, *b;
	int fails = 0;

	for (int i = 0; i < N; i++)
		in[i] = xsched_sim_mix(31 * id + i);
	HIPCHECK(hipMalloc(&a, sizeof(in)));
	HIPCHECK(hipMalloc(&b, sizeof(in)));
	for (int r = 0; r < 3; r++) {
		HIPCHECK(hipMemcpyAsync(a, in, sizeof(in), hipMemcpyHostToDevice, 0));
		accumulate<<<N, 64>>>(b, a, 20 + r, 20000, 0);
		accumulate<<<N, 64>>>(a, b, 10, 10000, 0);
		HIPCHECK(hipMemcpyAsync(out, a, sizeof(out), hipMemcpyDeviceToHost, 0));
		HIPCHECK(hipStreamSynchronize(0));
		ref_launch(tmp, in, N, 20 + r, 0);
		ref_launch(ref, tmp, N, 10, 0);
		for (int i = 0; i < N; i++)
			fails += out[i] != ref[i];
		*sum = checksum(out, N, *sum);
	}
	HIPCHECK(hipFree(a));
	HIPCHECK(hipFree(b));
	return fails;
}

int main()
{
	std::thread th[T];
	int fails[T] = { 0 };
	uint64_t sums[T] = { 0 };
	int total = 0;

	for (int t = 0; t < T; t++)
		th[t] = std::thread([t, &fails, &sums] { fails[t] = worker(t, &sums[t]); });
	for (int t = 0; t < T; t++) {
		th[t].join();
		total += fails[t];
	}
	printf("per_thread: checksum %016llx\n", (unsigned long long)checksum(sums, T, 0));
	printf("per_thread: %s\n", total ? "FAIL" : "PASS");
	return total ? 1 : 0;
}
