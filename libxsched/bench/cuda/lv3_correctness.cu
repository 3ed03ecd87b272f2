// SPDX-License-Identifier: MIT
/*
 * The urgent context's correctness on the GPU (issue 32): three programs
 * nobody tuned the library on, each run natively and with libxsched-cuda
 * preloaded (XSCHED_CUDA_LV3=1, any mode).  Prints one "result" line per
 * case: whether it completed, gave the native result, and its times.
 *
 *   prodcons   a consumer kernel spinning on a flag that a producer kernel,
 *              launched after it on another priority -1 stream, sets; both
 *              loaded in the program's context before (cudaFuncGetAttributes,
 *              what the CUDA Programming Guide's lazy-loading section says
 *              to do); then the same with a host function on the first
 *              stream waiting for the producer's write to mapped memory,
 *              and a kernel after it.  8 rounds each.
 *   reuse      a library's kernel (cuLibraryLoadData, cuKernelGetFunction)
 *              launched on a priority -1 stream, the library unloaded, a
 *              module loaded (cuModuleLoadData) and its function launched
 *              there: add1(3) must give 4, then mul10(3) 30, whatever
 *              address the driver hands out.  100 rounds.
 *   poll       a kernel on a priority -1 stream writes a round number to
 *              mapped host memory; the host polls it, no synchronize.
 *              200 rounds: median, P99 and max of a round.
 *
 * A case that does not complete in 20 s prints "HANG" and the program exits
 * 3 (a watchdog thread: the hang itself is the finding).
 *
 *   nvcc -arch=sm_90 -O2 -o lv3_correctness lv3_correctness.cu -lcuda
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CK(x) do { cudaError_t r_ = (x); if (r_ != cudaSuccess) { \
	fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(r_)); \
	exit(1); } } while (0)
#define DK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s_; \
	cuGetErrorName(r_, &s_); fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_); \
	exit(1); } } while (0)

__global__ void consumer(volatile unsigned int *flag, unsigned int r, unsigned int *out)
{
	while (*flag < r)
		;
	*out = r;
}

__global__ void producer(unsigned int *flag, unsigned int r)
{
	__threadfence_system();
	atomicMax(flag, r);
	__threadfence_system();
}

__global__ void after(unsigned int *out, unsigned int r)
{
	*out = r + 1000;
}

static volatile const char *in_case;
static volatile int finished;

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void *watchdog(void *p)
{
	const char *last = NULL;
	double since = now_ms();

	(void)p;
	for (;;) {
		usleep(100000);
		if ((const char *)in_case != last) {
			last = (const char *)in_case;
			since = now_ms();
		} else if (!finished && now_ms() - since > 20000) {
			printf("result %-10s HANG (no progress for 20 s)\n", last ? last : "?");
			fflush(stdout);
			_exit(3);
		}
	}
	return NULL;
}

static void step(const char *what)
{
	in_case = what;
}

/* ---- prodcons ---- */

struct hostwait {
	volatile unsigned int *flag;
	unsigned int r;
};

static void CUDART_CB wait_flag(void *p)
{
	struct hostwait *w = (struct hostwait *)p;

	while (*w->flag < w->r)
		;
}

static void prodcons(void)
{
	cudaStream_t a, b;
	int least, greatest;
	unsigned int *flag, *dflag, *out;
	struct cudaFuncAttributes fa;
	struct hostwait hw;
	unsigned int r, wrong = 0;
	double t0;

	CK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
	CK(cudaStreamCreateWithPriority(&a, cudaStreamNonBlocking, greatest));
	CK(cudaStreamCreateWithPriority(&b, cudaStreamNonBlocking, greatest));
	/* loaded before, in the program's context */
	CK(cudaFuncGetAttributes(&fa, consumer));
	CK(cudaFuncGetAttributes(&fa, producer));
	CK(cudaFuncGetAttributes(&fa, after));
	CK(cudaHostAlloc((void **)&flag, 64, cudaHostAllocMapped | cudaHostAllocPortable));
	CK(cudaHostGetDevicePointer((void **)&dflag, flag, 0));
	CK(cudaMalloc((void **)&out, 64));
	*flag = 0;
	t0 = now_ms();
	step("prodcons-kernels");
	for (r = 1; r <= 8; r++) {
		unsigned int got = 0;

		consumer<<<1, 1, 0, a>>>(dflag, r, out);
		producer<<<1, 1, 0, b>>>(dflag, r);
		CK(cudaStreamSynchronize(a));
		CK(cudaStreamSynchronize(b));
		CK(cudaMemcpy(&got, out, sizeof(got), cudaMemcpyDeviceToHost));
		wrong += got != r;
		step(r & 1 ? "prodcons-kernels" : "prodcons-kernels ");
	}
	printf("result %-20s completed 8 rounds in %.3f ms, %u wrong\n", "prodcons-kernels",
	       now_ms() - t0, wrong);
	/* a host function on a waits for b's kernel; a kernel follows it on a */
	*flag = 0;
	wrong = 0;
	t0 = now_ms();
	step("prodcons-hostfn");
	for (r = 1; r <= 8; r++) {
		unsigned int got = 0;

		hw.flag = flag;
		hw.r = r;
		CK(cudaLaunchHostFunc(a, wait_flag, &hw));
		after<<<1, 1, 0, a>>>(out, r);
		producer<<<1, 1, 0, b>>>(dflag, r);
		CK(cudaStreamSynchronize(a));
		CK(cudaStreamSynchronize(b));
		CK(cudaMemcpy(&got, out, sizeof(got), cudaMemcpyDeviceToHost));
		wrong += got != r + 1000;
		step(r & 1 ? "prodcons-hostfn" : "prodcons-hostfn ");
	}
	printf("result %-20s completed 8 rounds in %.3f ms, %u wrong\n", "prodcons-hostfn",
	       now_ms() - t0, wrong);
	CK(cudaStreamDestroy(a));
	CK(cudaStreamDestroy(b));
	CK(cudaFreeHost(flag));
	CK(cudaFree(out));
}

/* ---- reuse ---- */

static const char *ptx_of(const char *name)
{
	static char buf[2][4096];
	static int i;
	char *p = buf[i++ & 1];

	/* Tiny PTX written here, not compiled: add1 and mul10 of p[0]. */
	snprintf(p, 4096,
		 ".version 8.0\n.target sm_90\n.address_size 64\n"
		 ".visible .entry %s(.param .u64 p)\n{\n"
		 "\t.reg .b32 %%r<3>;\n\t.reg .b64 %%rd<3>;\n"
		 "\tld.param.u64 %%rd1, [p];\n\tcvta.to.global.u64 %%rd2, %%rd1;\n"
		 "\tld.global.u32 %%r1, [%%rd2];\n\t%s\n\tst.global.u32 [%%rd2], %%r2;\n\tret;\n}\n",
		 name, !strcmp(name, "add1") ? "add.s32 %r2, %r1, 1;" : "mul.lo.s32 %r2, %r1, 10;");
	return p;
}

static void reuse(void)
{
	cudaStream_t s;
	int least, greatest, i, reused = 0, errors = 0, wrong = 0;
	unsigned int *d, v;
	void *args[1] = { &d };

	CK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
	CK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, greatest));
	CK(cudaMalloc((void **)&d, 64));
	step("reuse");
	for (i = 0; i < 100; i++) {
		CUlibrary lib;
		CUkernel k;
		CUfunction f, g;
		CUmodule m;
		CUresult r;

		v = 3;
		CK(cudaMemcpy(d, &v, 4, cudaMemcpyHostToDevice));
		DK(cuLibraryLoadData(&lib, ptx_of("add1"), NULL, NULL, 0, NULL, NULL, 0));
		DK(cuLibraryGetKernel(&k, lib, "add1"));
		DK(cuKernelGetFunction(&f, k));
		r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, (CUstream)s, args, NULL);
		errors += r != CUDA_SUCCESS;
		CK(cudaStreamSynchronize(s));
		CK(cudaMemcpy(&v, d, 4, cudaMemcpyDeviceToHost));
		wrong += r == CUDA_SUCCESS && v != 4;
		DK(cuLibraryUnload(lib));
		v = 3;
		CK(cudaMemcpy(d, &v, 4, cudaMemcpyHostToDevice));
		DK(cuModuleLoadData(&m, ptx_of("mul10")));
		DK(cuModuleGetFunction(&g, m, "mul10"));
		reused += g == f;
		r = cuLaunchKernel(g, 1, 1, 1, 1, 1, 1, 0, (CUstream)s, args, NULL);
		errors += r != CUDA_SUCCESS;
		CK(cudaStreamSynchronize(s));
		CK(cudaMemcpy(&v, d, 4, cudaMemcpyDeviceToHost));
		wrong += r == CUDA_SUCCESS && v != 30;
		DK(cuModuleUnload(m));
		step(i & 1 ? "reuse" : "reuse ");
	}
	printf("result %-20s 100 rounds: address reused in %d, %d launch errors, %d wrong results\n",
	       "reuse", reused, errors, wrong);
	CK(cudaStreamDestroy(s));
	CK(cudaFree(d));
}

/* ---- poll ---- */

__global__ void set_flag(volatile unsigned int *flag, unsigned int v)
{
	*flag = v;
	__threadfence_system();
}

static int cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

static void poll(void)
{
	enum { N = 200 };
	cudaStream_t s;
	int least, greatest, i;
	unsigned int *flag, *dflag;
	double ms[N];

	CK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
	CK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, greatest));
	CK(cudaHostAlloc((void **)&flag, 64, cudaHostAllocMapped | cudaHostAllocPortable));
	CK(cudaHostGetDevicePointer((void **)&dflag, flag, 0));
	*(volatile unsigned int *)flag = 0;
	set_flag<<<1, 1, 0, s>>>(dflag, 0);	/* one synchronized burst first */
	CK(cudaStreamSynchronize(s));
	step("poll");
	for (i = 0; i < N; i++) {
		double t0 = now_ms();

		set_flag<<<1, 1, 0, s>>>(dflag, (unsigned int)i + 1);
		while (*(volatile unsigned int *)flag != (unsigned int)i + 1)
			;
		ms[i] = now_ms() - t0;
		step(i & 1 ? "poll" : "poll ");
	}
	qsort(ms, N, sizeof(ms[0]), cmp);
	printf("result %-20s %d rounds: median %.4f ms, P99 %.4f ms, max %.4f ms\n", "poll", N,
	       ms[N / 2], ms[N * 99 / 100], ms[N - 1]);
	CK(cudaStreamSynchronize(s));
	CK(cudaStreamDestroy(s));
	CK(cudaFreeHost(flag));
}

int main(int argc, char **argv)
{
	pthread_t t;
	int i;

	CK(cudaFree(0));
	pthread_create(&t, NULL, watchdog, NULL);
	for (i = 1; i < argc || argc == 1; i++) {
		const char *c = argc == 1 ? "all" : argv[i];

		if (!strcmp(c, "prodcons") || !strcmp(c, "all"))
			prodcons();
		if (!strcmp(c, "reuse") || !strcmp(c, "all"))
			reuse();
		if (!strcmp(c, "poll") || !strcmp(c, "all"))
			poll();
		if (argc == 1)
			break;
	}
	finished = 1;
	fflush(stdout);
	return 0;
}
