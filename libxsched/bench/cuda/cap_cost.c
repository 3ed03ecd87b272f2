// SPDX-License-Identifier: MIT
/*
 * The in-flight cap's cost on the host, against the fake libcuda
 * (tests/fakes/fake_libcuda.c), whose kernels complete after their modelled wall-clock time:
 * total ns per kernel for N launches of a kernel of K ns on one stream, then
 * a stream synchronize, as launch_overhead.cu measures it on a GPU.  Run it
 * with and without LD_PRELOAD=libxsched-cuda.so.
 *
 *   cap_cost one|low [kernel_ns [launches [reps]]]
 *
 * "one": a plain stream; "low": a lower stream beside an idle higher one
 * (under the interposer only the cap applies, no holds).  Prints the median,
 * least and most of reps runs, and the event records the driver saw per
 * launch (the marks the interposer made).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>

#include "fake_libcuda.h"

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static struct fake_kernel k = { 0, 1 };
	int low = argc > 1 && !strcmp(argv[1], "low");
	int n = argc > 3 ? atoi(argv[3]) : 10000, reps = argc > 4 ? atoi(argv[4]) : 5;
	double t[64];
	CUstream s, hi;
	int i, r, ev0, ev = 0;

	k.ns = argc > 2 ? strtoull(argv[2], NULL, 10) : 5000;
	if (reps < 1 || reps > 64 || n < 1)
		return 2;
	cuStreamCreateWithPriority(&s, 0, 0);
	if (low) {
		cuStreamCreateWithPriority(&hi, 0, -1);
		cuLaunchKernel((CUfunction)&k, 1, 1, 1, 1, 1, 1, 0, hi, NULL, NULL);
		cuStreamSynchronize(hi);
	}
	for (r = 0; r < reps; r++) {
		uint64_t t0 = fake_now();

		ev0 = fake_log_count();
		for (i = 0; i < n; i++)
			cuLaunchKernel((CUfunction)&k, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL);
		cuStreamSynchronize(s);
		t[r] = (double)(fake_now() - t0) / n;
		/* the log holds launches and event records, up to its size */
		ev += fake_log_count() - ev0 - n;
	}
	qsort(t, (size_t)reps, sizeof(t[0]), cmp);
	printf("%s %llu ns kernels: %.0f ns/kernel (median of %d; %.0f..%.0f), %.3f event records per launch\n",
	       low ? "low" : "one", (unsigned long long)k.ns, t[reps / 2], reps, t[0],
	       t[reps - 1], (double)ev / ((double)n * reps));
	return 0;
}
