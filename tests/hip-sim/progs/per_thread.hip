// SPDX-License-Identifier: MIT
// Built with -fgpu-default-stream=per-thread: the default stream of each
// thread is its own, and the compiler calls the _spt entry points
// (hipLaunchKernel_spt, hipMemcpyAsync_spt, hipStreamSynchronize_spt).
// Each thread's results are checked, and one thread's synchronize must not
// wait for another thread's long kernel (as a legacy null stream would).
#include "simkernels.h"
#include <atomic>
#include <thread>
#include <unistd.h>

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

/* A long kernel on one thread's default stream.  (No event: with per-thread
 * default streams the 5.2 header calls hipEventRecord_spt, which 5.2's
 * libamdhip64 does not export.) */
static std::atomic<int> long_launched;

static void long_worker(uint64_t *buf)
{
	HIPCHECK(hipMemset(buf, 0, 64 * 8));
	accumulate<<<64, 64>>>(buf, nullptr, 50, 2000000, 5);
	long_launched = 1;
	HIPCHECK(hipStreamSynchronize(0));
}

static int independent(void)
{
	uint64_t *buf, *mine, v, seen[64];
	int fails = 0, missing = 0;

	HIPCHECK(hipMalloc(&buf, 64 * 8));
	HIPCHECK(hipMalloc(&mine, 8));
	std::thread t(long_worker, buf);

	while (!long_launched)
		usleep(1000);
	accumulate<<<1, 64>>>(mine, nullptr, 2, 1000, 1);
	HIPCHECK(hipMemcpyAsync(&v, mine, 8, hipMemcpyDeviceToHost, 0));
	HIPCHECK(hipStreamSynchronize(0));
	/* The other thread's kernel is still running: some results missing. */
	HIPCHECK(hipMemcpy(seen, buf, sizeof(seen), hipMemcpyDeviceToHost));
	for (int i = 0; i < 64; i++)
		missing += seen[i] == 0;
	if (missing == 0) {
		printf("per_thread: this thread's synchronize waited for another thread's kernel\n");
		fails++;
	}
	if (v != ref_accumulate(xsched_sim_init(1, 0), 2))
		fails++;
	t.join();
	HIPCHECK(hipFree(buf));
	HIPCHECK(hipFree(mine));
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
	total += independent();
	printf("per_thread: checksum %016llx\n", (unsigned long long)checksum(sums, T, 0));
	printf("per_thread: %s\n", total ? "FAIL" : "PASS");
	return total ? 1 : 0;
}
