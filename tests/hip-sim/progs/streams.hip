// SPDX-License-Identifier: MIT
// Several streams with priorities (high, normal, low), hipStreamPerThread
// from two threads, async copies interleaved with kernels, an event from one
// stream waited on by another (the consumer reads what a slower producer
// writes), stream callbacks in stream order, and event timing.
#include "simkernels.h"
#include <atomic>
#include <thread>

#define N 64
#define NS 3

static std::atomic<int> cb_order[NS];
static std::atomic<int> cb_count;

static void on_done(hipStream_t, hipError_t status, void *data)
{
	int i = (int)(intptr_t)data;

	/* Runs after the stream's copy back: its result is on the host. */
	cb_order[i] = status == hipSuccess ? ++cb_count : -1;
}

static int per_thread_worker(int id, uint64_t *result)
{
	uint64_t in[N], out[N], ref[N], tmp[N];
	uint64_t *a, *b;
	int fails = 0;

	for (int i = 0; i < N; i++)
		in[i] = xsched_sim_mix(100 * id + i);
	HIPCHECK(hipMalloc(&a, sizeof(in)));
	HIPCHECK(hipMalloc(&b, sizeof(in)));
	HIPCHECK(hipMemcpyAsync(a, in, sizeof(in), hipMemcpyHostToDevice, hipStreamPerThread));
	accumulate<<<N, 64, 0, hipStreamPerThread>>>(b, a, 30, 20000, id);
	hipLaunchKernelGGL(accumulate, dim3(N), dim3(64), 0, hipStreamPerThread, a, b, 10, 0, id);
	HIPCHECK(hipMemcpyAsync(out, a, sizeof(out), hipMemcpyDeviceToHost, hipStreamPerThread));
	HIPCHECK(hipStreamSynchronize(hipStreamPerThread));
	ref_launch(tmp, in, N, 30, id);
	ref_launch(ref, tmp, N, 10, id);
	for (int i = 0; i < N; i++)
		fails += out[i] != ref[i];
	*result = checksum(out, N, 0);
	HIPCHECK(hipFree(a));
	HIPCHECK(hipFree(b));
	return fails;
}

int main()
{
	static const int prio[NS] = { -1, 0, 1 };
	hipStream_t s[NS];
	uint64_t in[NS][N], out[NS][N], ref[N], tmp[N];
	uint64_t *a[NS], *b[NS], *prod, *cons;
	uint64_t sum = 0, pt[2];
	hipEvent_t produced, t0, t1;
	int fails = 0, lo, hi;

	HIPCHECK(hipDeviceGetStreamPriorityRange(&lo, &hi));
	for (int i = 0; i < NS; i++) {
		int p;

		HIPCHECK(hipStreamCreateWithPriority(&s[i], 0, prio[i]));
		HIPCHECK(hipStreamGetPriority(s[i], &p));
		if (p != prio[i]) {
			printf("streams: priority %d read back as %d\n", prio[i], p);
			fails++;
		}
		HIPCHECK(hipMalloc(&a[i], N * 8));
		HIPCHECK(hipMalloc(&b[i], N * 8));
		for (int j = 0; j < N; j++)
			in[i][j] = xsched_sim_mix(1000 * i + j);
	}
	HIPCHECK(hipMalloc(&prod, N * 8));
	HIPCHECK(hipMalloc(&cons, N * 8));
	HIPCHECK(hipMemset(prod, 0, N * 8));
	HIPCHECK(hipEventCreate(&produced));
	HIPCHECK(hipEventCreate(&t0));
	HIPCHECK(hipEventCreate(&t1));

	/* Copies and kernels interleaved on every stream, then a callback. */
	HIPCHECK(hipEventRecord(t0, s[0]));
	for (int i = 0; i < NS; i++) {
		HIPCHECK(hipMemcpyAsync(a[i], in[i], N * 8, hipMemcpyHostToDevice, s[i]));
		accumulate<<<N, 64, 0, s[i]>>>(b[i], a[i], 40, 20000, 0);
		HIPCHECK(hipMemcpyAsync(a[i], b[i], N * 8, hipMemcpyDeviceToDevice, s[i]));
		accumulate<<<N, 64, 0, s[i]>>>(b[i], a[i], 20, 20000, 0);
		HIPCHECK(hipMemcpyAsync(out[i], b[i], N * 8, hipMemcpyDeviceToHost, s[i]));
		HIPCHECK(hipStreamAddCallback(s[i], on_done, (void *)(intptr_t)i, 0));
	}
	HIPCHECK(hipEventRecord(t1, s[0]));

	/* Across streams: the low stream consumes what a slow kernel on the
	 * high stream produces. */
	accumulate<<<N, 64, 0, s[0]>>>(prod, nullptr, 200, 100000, 77);
	HIPCHECK(hipEventRecord(produced, s[0]));
	HIPCHECK(hipStreamWaitEvent(s[2], produced, 0));
	accumulate<<<N, 64, 0, s[2]>>>(cons, prod, 5, 0, 0);

	std::thread th[2];
	int pfails[2] = { 0, 0 };

	for (int t = 0; t < 2; t++)
		th[t] = std::thread([t, &pfails, &pt] { pfails[t] = per_thread_worker(t + 1, &pt[t]); });
	for (int t = 0; t < 2; t++)
		th[t].join();
	fails += pfails[0] + pfails[1];

	for (int i = 0; i < NS; i++)
		HIPCHECK(hipStreamSynchronize(s[i]));
	HIPCHECK(hipEventSynchronize(produced));
	if (hipEventQuery(produced) != hipSuccess || hipStreamQuery(s[2]) != hipSuccess) {
		printf("streams: event or stream not complete after synchronize\n");
		fails++;
	}
	float ms = -1;

	HIPCHECK(hipEventElapsedTime(&ms, t0, t1));
	if (!(ms > 0)) {
		printf("streams: elapsed time %f ms between two events with work between\n", ms);
		fails++;
	}
	for (int i = 0; i < NS; i++) {
		ref_launch(tmp, in[i], N, 40, 0);
		ref_launch(ref, tmp, N, 20, 0);
		for (int j = 0; j < N; j++)
			fails += out[i][j] != ref[j];
		if (cb_order[i] <= 0) {
			printf("streams: callback of stream %d did not run in order\n", i);
			fails++;
		}
		sum = checksum(out[i], N, sum);
	}
	uint64_t pc[N], cc[N];

	HIPCHECK(hipMemcpy(cc, cons, sizeof(cc), hipMemcpyDeviceToHost));
	ref_launch(tmp, nullptr, N, 200, 77);
	ref_launch(pc, tmp, N, 5, 0);
	for (int j = 0; j < N; j++)
		if (cc[j] != pc[j]) {
			printf("streams: wait-event consumer read stale input at %d\n", j);
			fails++;
			break;
		}
	sum = checksum(cc, N, sum);
	sum = checksum(pt, 2, sum);
	for (int i = 0; i < NS; i++)
		HIPCHECK(hipStreamDestroy(s[i]));
	HIPCHECK(hipEventDestroy(produced));
	HIPCHECK(hipEventDestroy(t0));
	HIPCHECK(hipEventDestroy(t1));
	printf("streams: checksum %016llx\n", (unsigned long long)sum);
	printf("streams: %s\n", fails ? "FAIL" : "PASS");
	return fails ? 1 : 0;
}
