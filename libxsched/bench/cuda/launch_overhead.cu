// SPDX-License-Identifier: MIT
/*
 * Per-launch overhead: many tiny kernels on one stream, through the CUDA
 * runtime (which reaches the driver through cuGetProcAddress, as PyTorch's
 * does), timed on the host.  Run it natively and with libxsched-cuda.so
 * preloaded.
 *
 *   launch_overhead <kernel_ns> <launches> <setup>
 *
 * setup "one":  one stream, nothing else (libxsched: one queue, never gated)
 * setup "low":  the kernels go to a priority-0 stream while a high-priority
 *               stream exists and is idle (libxsched: the Lv1 path of a
 *               lower queue: in-flight cap and progress events)
 * setup "high": the kernels go to the high-priority stream while the
 *               priority-0 stream exists (libxsched: the top queue's path)
 *
 * Prints one JSON line: host ns per launch call (enqueue rate) and total ns
 * per kernel (launches + completion), medians of 7 repetitions.
 */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, \
		cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void spin(long long ns, int *out)
{
	long long t0, t;

	if (ns <= 0) {
		if (threadIdx.x == 0 && out)
			atomicAdd(out, 1);
		return;
	}
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do {
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	} while (t - t0 < ns);
	if (threadIdx.x == 0 && out)
		atomicAdd(out, 1);
}

static double now_ns()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s kernel_ns launches one|low|high\n", argv[0]);
		return 2;
	}
	long long kns = atoll(argv[1]);
	int n = atoi(argv[2]);
	const char *setup = argv[3];
	int lo, hi;
	cudaStream_t s_lo, s_hi, s;
	int *count;

	CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
	CK(cudaStreamCreateWithPriority(&s_lo, cudaStreamNonBlocking, lo));
	CK(cudaStreamCreateWithPriority(&s_hi, cudaStreamNonBlocking, hi));
	CK(cudaMalloc(&count, sizeof(int)));
	CK(cudaMemset(count, 0, sizeof(int)));
	if (!strcmp(setup, "one")) {
		CK(cudaStreamDestroy(s_hi));
		s = s_lo;
	} else if (!strcmp(setup, "low")) {
		s = s_lo;
		/* make the high stream known (a launch) and idle */
		spin<<<1, 32, 0, s_hi>>>(0, count);
		CK(cudaStreamSynchronize(s_hi));
	} else {
		s = s_hi;
		spin<<<1, 32, 0, s_lo>>>(0, count);
		CK(cudaStreamSynchronize(s_lo));
	}
	for (int i = 0; i < 2000; i++)
		spin<<<1, 32, 0, s>>>(kns, count);
	CK(cudaStreamSynchronize(s));

	std::vector<double> host, total;
	for (int r = 0; r < 7; r++) {
		double t0 = now_ns();
		for (int i = 0; i < n; i++)
			spin<<<1, 32, 0, s>>>(kns, count);
		double t1 = now_ns();
		CK(cudaGetLastError());
		CK(cudaStreamSynchronize(s));
		double t2 = now_ns();
		host.push_back((t1 - t0) / n);
		total.push_back((t2 - t0) / n);
	}
	int got;
	CK(cudaMemcpy(&got, count, sizeof(int), cudaMemcpyDeviceToHost));
	long long want = 1 + 2000 + 7LL * n;
	if (strcmp(setup, "one") && got != want)
		fprintf(stderr, "count %d, want %lld\n", got, want);
	if (!strcmp(setup, "one") && got != want - 1)
		fprintf(stderr, "count %d, want %lld\n", got, want - 1);
	const char *x = getenv("XBENCH_XSCHED");
	printf("{\"mode\": \"launch\", \"xsched\": \"%s\", \"setup\": \"%s\", \"kernel_ns\": %lld, "
	       "\"launches\": %d, \"host_ns\": %.1f, \"total_ns\": %.1f, \"ok\": %s}\n",
	       x ? x : "native", setup, kns, n, median(host), median(total),
	       got == want - (strcmp(setup, "one") ? 0 : 1) ? "true" : "false");
	return 0;
}
