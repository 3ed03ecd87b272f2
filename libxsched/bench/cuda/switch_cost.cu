// SPDX-License-Identifier: MIT
/*
 * What a burst of urgent kernels pays in a second context beside a batch
 * kernel that holds every SM, by how its kernels reach the GPU: the question
 * behind the urgent context's gather (Documentation/cuda.rst, "Lv3: the
 * urgent context").  The driver time-slices the two contexts; each time the
 * urgent context goes idle it gives the GPU back, and its next kernel waits
 * for the batch context's time slice.  A program launching eagerly (a host
 * gap between kernels longer than a kernel) makes its context idle between
 * every two kernels.
 *
 * Batch: back-to-back kernels of 2112 x 128 threads, each ~300 ms of
 * arithmetic, in the primary context.  Urgent, from a second thread every
 * 20 ms, on a stream of a second context: 40 kernels of 264 x 256 threads,
 * GAP us of host spin between launches, then a synchronize.  Modes:
 *   open:    each kernel launched as it comes
 *   gathered: a cuStreamWaitValue32 on a host flag first, the flag set
 *            after the 40th launch (the burst reaches the GPU at once)
 *   kept:    each kernel launched as it comes, and a keeper first on a
 *            second stream of the urgent context: one block that spins
 *            until no launch came for KEEP us (a host-mapped count the
 *            launches bump), so the urgent context never goes idle
 *            between two launches of a burst (does the driver then take
 *            the GPU from it at the end of its own time slice?)
 * Prints one line per case: P50 / P90 / max of the burst's latency (first
 * launch to synchronize returning) and the batch kernels' speed.
 *
 *   nvcc -O2 -o switch_cost switch_cost.cu -lcuda && ./switch_cost [REPS]
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <atomic>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { \
	const char *s_; cuGetErrorName(r_, &s_); \
	fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_); exit(1); } } while (0)

__global__ void work(float *p, int iters)
{
	float a = threadIdx.x, b = 1.0001f;

	for (int i = 0; i < iters; i++)
		a = a * b + 0.5f;
	if (a == 12345.0f)	/* never: keeps the loop */
		p[0] = a;
}

/* Spins until *calls stayed the same for keep_ns (or 100 ms passed). */
__global__ void keeper(volatile unsigned int *calls, unsigned long long keep_ns)
{
	unsigned long long t0, t, since;
	unsigned int last = *calls, c;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	since = t0;
	for (;;) {
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
		c = *calls;
		if (c != last) {
			last = c;
			since = t;
		} else if (t - since > keep_ns || t - t0 > 100000000ULL) {
			break;
		}
	}
}

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void spin_us(double us)
{
	double end = now_us() + us;

	while (now_us() < end)
		;
}

static CUcontext prim, uctx;
static CUfunction fn_prim, fn_keep;
static CUstream keep_s;
static volatile unsigned int *calls;	/* the host's view */
static CUdeviceptr dcalls;			/* the keeper's */
static unsigned long long keep_ns = 200000;
static float *scratch;
static int batch_iters;
static std::atomic<int> stop_batch;
static std::atomic<long> batch_done;

static void *batch_thread(void *arg)
{
	CUstream s;

	(void)arg;
	CK(cuCtxSetCurrent(prim));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	while (!stop_batch.load()) {
		void *args[] = { &scratch, &batch_iters };

		CK(cuLaunchKernel(fn_prim, 2112, 1, 1, 128, 1, 1, 0, s, args, NULL));
		CK(cuStreamSynchronize(s));
		batch_done++;
	}
	CK(cuStreamDestroy(s));
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One case: REPS bursts; prints and returns the median. */
static double burst_case(const char *name, CUfunction fn, CUstream t, volatile unsigned int *flag,
			 CUdeviceptr dflag, int mode, double gap, int iters, int reps)
{
	double *lat = (double *)calloc(reps, sizeof(double));
	unsigned int gen = 0;

	for (int r = 0; r < reps; r++) {
		double t0 = now_us();

		bool gathered = mode == 1;

		if (mode == 2) {
			void *ka[] = { &dcalls, &keep_ns };

			(*calls)++;
			CK(cuLaunchKernel(fn_keep, 1, 1, 1, 32, 1, 1, 0, keep_s, ka, NULL));
		}
		if (gathered) {
			gen++;
			CK(cuStreamWaitValue32(t, dflag, gen, CU_STREAM_WAIT_VALUE_GEQ));
		}
		for (int k = 0; k < 40; k++) {
			void *args[] = { &scratch, &iters };

			CK(cuLaunchKernel(fn, 264, 1, 1, 256, 1, 1, 0, t, args, NULL));
			if (mode == 2)
				(*calls)++;
			if (gap > 0)
				spin_us(gap);
		}
		if (gathered)
			*flag = gen;
		CK(cuStreamSynchronize(t));
		lat[r] = (now_us() - t0) / 1e3;
		spin_us(20000 - (now_us() - t0) > 0 ? 20000 - (now_us() - t0) : 0);
	}
	qsort(lat, reps, sizeof(double), cmp);
	printf("case %-40s P50 %7.2f ms  P90 %7.2f ms  max %7.2f ms\n", name, lat[reps / 2],
	       lat[reps * 9 / 10], lat[reps - 1]);
	double m = lat[reps / 2];
	free(lat);
	return m;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 150;
	CUdevice dev;
	CUstream t;
	CUfunction fn_u;
	CUmodule mod;
	int lo, hi;
	char name[256];

	cudaFree(0);
	CK(cuCtxGetCurrent(&prim));
	CK(cuCtxGetDevice(&dev));
	CK(cuDeviceGetName(name, sizeof(name), dev));
	int drv = 0;
	cuDriverGetVersion(&drv);
	printf("device %s, driver API %d\n", name, drv);
	cudaMalloc(&scratch, 4096);
	cudaGetFuncBySymbol((cudaFunction_t *)&fn_prim, (const void *)work);

	/* Calibrate: a batch kernel of ~300 ms, an urgent one of ~14 us. */
	CUstream s0;
	CK(cuStreamCreate(&s0, CU_STREAM_NON_BLOCKING));
	int it = 100000;
	void *a0[] = { &scratch, &it };
	CK(cuLaunchKernel(fn_prim, 2112, 1, 1, 128, 1, 1, 0, s0, a0, NULL));
	CK(cuStreamSynchronize(s0));
	double t0 = now_us();
	CK(cuLaunchKernel(fn_prim, 2112, 1, 1, 128, 1, 1, 0, s0, a0, NULL));
	CK(cuStreamSynchronize(s0));
	double per = (now_us() - t0) / it;
	batch_iters = (int)(300000.0 / per);
	int uiters = (int)(14.0 / per * 2112.0 * 128 / (264.0 * 256));
	printf("batch kernel %d iterations (~300 ms), urgent kernel %d iterations\n", batch_iters,
	       uiters);

	CUctxCreateParams cp;
	memset(&cp, 0, sizeof(cp));
	CK(cuCtxCreate(&uctx, &cp, 0, dev));
	CK(cuCtxGetStreamPriorityRange(&lo, &hi));
	CK(cuStreamCreateWithPriority(&t, CU_STREAM_NON_BLOCKING, hi));
	CUkernel k;
	cudaGetKernel((cudaKernel_t *)&k, (const void *)work);
	CK(cuKernelGetFunction(&fn_u, k));
	(void)mod;
	volatile unsigned int *flag;
	CK(cuMemHostAlloc((void **)&flag, 64, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
	*flag = 0;
	CUdeviceptr dflag;
	CK(cuMemHostGetDevicePointer(&dflag, (void *)flag, 0));
	int memops = 0;
	cuDeviceGetAttribute(&memops, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1, dev);
	printf("stream memory operations: %d\n", memops);
	if (getenv("KEEP_US"))
		keep_ns = strtoull(getenv("KEEP_US"), NULL, 10) * 1000;
	CK(cuStreamCreateWithPriority(&keep_s, CU_STREAM_NON_BLOCKING, hi));
	CUkernel kk;
	cudaGetKernel((cudaKernel_t *)&kk, (const void *)keeper);
	CK(cuKernelGetFunction(&fn_keep, kk));
	CK(cuMemHostAlloc((void **)&calls, 64, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
	*calls = 0;
	CK(cuMemHostGetDevicePointer(&dcalls, (void *)calls, 0));
	printf("keeper: a launch keeps the urgent context busy for %llu us\n", keep_ns / 1000);

	static const double gaps[] = { 0, 20, 60 };
	static const char *const modes[] = { "open", "gathered", "kept" };
	double alone[3][3];
	for (int g = 0; g < 3; g++)
		for (int m = 0; m < 3; m++) {
			snprintf(name, sizeof(name), "alone, %s, gap %.0f us", modes[m], gaps[g]);
			alone[m][g] = burst_case(name, fn_u, t, flag, dflag, m, gaps[g], uiters, reps / 3);
		}
	pthread_t bt;
	pthread_create(&bt, NULL, batch_thread, NULL);
	spin_us(500000);
	double b0 = now_us();
	long d0 = batch_done.load();
	for (int m = 0; m < 3; m++) {
		double m0 = now_us();
		long k0 = batch_done.load();

		for (int g = 0; g < 3; g++) {
			snprintf(name, sizeof(name), "beside batch, %s, gap %.0f us", modes[m],
				 gaps[g]);
			double med = burst_case(name, fn_u, t, flag, dflag, m, gaps[g], uiters, reps);
			printf("     %.2fx its alone P50\n", med / alone[m][g]);
		}
		printf("batch beside %s: %.2f kernels/s (%ld kernels)\n", modes[m],
		       (batch_done.load() - k0) / ((now_us() - m0) / 1e6), batch_done.load() - k0);
	}
	double secs = (now_us() - b0) / 1e6;
	long d1 = batch_done.load();
	stop_batch = 1;
	pthread_join(bt, NULL);
	printf("batch: %.2f kernels/s beside the bursts, %.2f alone (%.2f)\n", (d1 - d0) / secs,
	       1e6 / 300000.0, (d1 - d0) / secs / (1e6 / (per * batch_iters)));
	return 0;
}
