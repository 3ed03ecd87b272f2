// SPDX-License-Identifier: MIT
/*
 * What the interposition core costs a CUDA program, run natively and with
 * libxsched-cuda.so preloaded (run-interpose.sh runs both and prints the
 * table).  Through the CUDA runtime, which reaches the driver through
 * cuGetProcAddress as PyTorch's does.
 *
 *   interpose_cost inversion <requests>
 *	An urgent thread (highest-priority stream) launches an empty kernel
 *	every 5 ms while a lower thread (priority-0 stream) loops: a 40 ms
 *	kernel, then a 4-byte copy to pageable memory, which blocks in the
 *	driver until that kernel ends (what loss.item() does).  Prints the
 *	urgent launch call's duration (host ns): P50, P99, max.
 *
 *   interpose_cost launch <app|legacy|pt> <launches>
 *	Empty kernels on an application stream, the legacy default stream or
 *	the per-thread default stream, with no other stream: host ns per
 *	launch call (a synchronize every 64), and ns per launch + synchronize
 *	pair; medians of 7 repetitions.
 *
 * One JSON line per run.
 */
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>
#include <vector>

#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, \
		cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void spin(long long ns)
{
	long long t0, t;

	if (ns <= 0)
		return;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do {
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	} while (t - t0 < ns);
}

static double now_ns()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double pct(std::vector<double> v, double p)
{
	std::sort(v.begin(), v.end());
	size_t i = (size_t)(p / 100.0 * (v.size() - 1) + 0.5);
	return v[i];
}

static int inversion(int requests)
{
	int lo_p, hi_p;
	cudaStream_t lo, hi;
	std::atomic<bool> stop(false);
	std::vector<double> call;
	int *dev;

	CK(cudaDeviceGetStreamPriorityRange(&lo_p, &hi_p));
	CK(cudaStreamCreateWithPriority(&lo, cudaStreamNonBlocking, lo_p));
	CK(cudaStreamCreateWithPriority(&hi, cudaStreamNonBlocking, hi_p));
	CK(cudaMalloc(&dev, sizeof(int)));
	spin<<<1, 32, 0, hi>>>(0);
	CK(cudaStreamSynchronize(hi));
	std::thread lower([&] {
		int *pageable = (int *)malloc(sizeof(int));

		while (!stop.load()) {
			spin<<<1, 32, 0, lo>>>(40000000LL);
			CK(cudaMemcpyAsync(pageable, dev, sizeof(int), cudaMemcpyDeviceToHost, lo));
		}
		CK(cudaStreamSynchronize(lo));
		free(pageable);
	});
	struct timespec gap = { 0, 5000000 };
	nanosleep(&gap, NULL);
	for (int i = 0; i < requests; i++) {
		double t0 = now_ns();

		spin<<<1, 32, 0, hi>>>(0);
		call.push_back(now_ns() - t0);
		CK(cudaGetLastError());
		CK(cudaStreamSynchronize(hi));
		nanosleep(&gap, NULL);
	}
	stop.store(true);
	lower.join();
	printf("{\"case\": \"inversion\", \"requests\": %d, \"call_p50_ns\": %.0f, \"call_p99_ns\": %.0f, \"call_max_ns\": %.0f}\n",
	       requests, pct(call, 50), pct(call, 99), pct(call, 100));
	return 0;
}

static int launch(const char *kind, int n)
{
	cudaStream_t s = 0;
	std::vector<double> per_call, per_pair;

	if (!strcmp(kind, "app"))
		CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	else if (!strcmp(kind, "pt"))
		s = cudaStreamPerThread;
	else if (strcmp(kind, "legacy"))
		return 2;
	for (int i = 0; i < 1000; i++)
		spin<<<1, 32, 0, s>>>(0);
	CK(cudaStreamSynchronize(s));
	for (int rep = 0; rep < 7; rep++) {
		double t0 = now_ns(), calls = 0;

		for (int i = 0; i < n; i++) {
			double c0 = now_ns();

			spin<<<1, 32, 0, s>>>(0);
			calls += now_ns() - c0;
			if (i % 64 == 63)
				CK(cudaStreamSynchronize(s));
		}
		CK(cudaStreamSynchronize(s));
		(void)t0;
		per_call.push_back(calls / n);
		t0 = now_ns();
		for (int i = 0; i < n / 4; i++) {
			spin<<<1, 32, 0, s>>>(0);
			CK(cudaStreamSynchronize(s));
		}
		per_pair.push_back((now_ns() - t0) / (n / 4));
	}
	printf("{\"case\": \"launch\", \"stream\": \"%s\", \"launches\": %d, \"call_ns\": %.1f, \"launch_sync_ns\": %.1f}\n",
	       kind, n, pct(per_call, 50), pct(per_pair, 50));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "inversion"))
		return inversion(atoi(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "launch"))
		return launch(argv[2], atoi(argv[3]));
	fprintf(stderr, "usage: %s inversion <requests> | launch <app|legacy|pt> <launches>\n",
		argv[0]);
	return 2;
}
