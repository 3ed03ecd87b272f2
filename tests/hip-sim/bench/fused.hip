// SPDX-License-Identifier: MIT
// The fused-kernel case through the HIP path: one long MARK kernel (many
// workgroups) on a low-priority batch stream, short kernels on a
// high-priority urgent stream.  Prints one table row: urgent P50/P99 alone
// and beside the batch kernel, their ratio (both measured in this run), and
// whether the batch output is exact (every workgroup's result right and each
// step run exactly once: a kernel stopped partway and resumed shows no
// difference there, one re-run or cut short does).  No assertion on times.
//
// hip-fused-bench LABEL [REQUESTS [BATCH_GRID [BATCH_STEPS [STEP_NS]]]]
#include "simkernels.h"
#include <algorithm>
#include <time.h>
#include <unistd.h>
#include <vector>

static double now_ms()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double pct(std::vector<double> v, double p)
{
	if (v.empty())
		return 0;
	std::sort(v.begin(), v.end());
	return v[std::min(v.size() - 1, (size_t)(p / 100.0 * v.size()))];
}

/* One urgent request: a short kernel, waited for. */
static double request(hipStream_t u, uint64_t *dst, int i)
{
	double t = now_ms();

	accumulate<<<4, 64, 0, u>>>(dst, nullptr, 8, 50000, (uint64_t)i);
	HIPCHECK(hipStreamSynchronize(u));
	return now_ms() - t;
}

int main(int argc, char **argv)
{
	const char *label = argc > 1 ? argv[1] : "native";
	int nreq = argc > 2 ? atoi(argv[2]) : 40;
	uint32_t grid = argc > 3 ? (uint32_t)atoi(argv[3]) : 1024;
	uint32_t steps = argc > 4 ? (uint32_t)atoi(argv[4]) : 40;
	uint64_t step_ns = argc > 5 ? strtoull(argv[5], nullptr, 0) : 1000000;
	hipStream_t batch, urgent;
	uint64_t *bout, *uout;
	std::vector<double> alone, busy;
	std::vector<uint64_t> out(2 * grid), ref(grid);

	HIPCHECK(hipStreamCreateWithPriority(&batch, 0, 1));
	HIPCHECK(hipStreamCreateWithPriority(&urgent, 0, -1));
	HIPCHECK(hipMalloc(&bout, 2 * grid * 8));
	HIPCHECK(hipMalloc(&uout, 4 * 8));
	HIPCHECK(hipMemset(bout, 0, 2 * grid * 8));
	request(urgent, uout, 0);	/* warm up */
	for (int i = 0; i < nreq; i++) {
		alone.push_back(request(urgent, uout, i));
		usleep(2000);
	}
	double t0 = now_ms();

	mark<<<grid, 256, 0, batch>>>(bout, nullptr, steps, step_ns, 99);
	usleep(20000);	/* the batch kernel holds the GPU */
	for (int i = 0; i < nreq && hipStreamQuery(batch) == hipErrorNotReady; i++) {
		busy.push_back(request(urgent, uout, i));
		usleep(2000);
	}
	HIPCHECK(hipStreamSynchronize(batch));
	double batch_ms = now_ms() - t0;

	HIPCHECK(hipMemcpy(out.data(), bout, 2 * grid * 8, hipMemcpyDeviceToHost));
	ref_launch(ref.data(), nullptr, grid, steps, 99);
	int bad = 0;

	for (uint32_t w = 0; w < grid; w++)
		bad += out[w] != ref[w] || out[grid + w] != steps;
	double a50 = pct(alone, 50), a99 = pct(alone, 99);
	double b50 = pct(busy, 50), b99 = pct(busy, 99);

	printf("%-10s %5zu %9.2f %9.2f %6zu %9.2f %9.2f %7.2fx %7.2fx %9.0f  %s\n", label,
	       alone.size(), a50, a99, busy.size(), b50, b99, a50 > 0 ? b50 / a50 : 0,
	       a99 > 0 ? b99 / a99 : 0, batch_ms, bad ? "WRONG" : "exact");
	HIPCHECK(hipStreamDestroy(batch));
	HIPCHECK(hipStreamDestroy(urgent));
	return bad ? 1 : 0;
}
