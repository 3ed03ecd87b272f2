// SPDX-License-Identifier: MIT
/*
 * What a second context of one process can and cannot do with the primary
 * context's handles, and what it costs: the facts the urgent context of
 * libxsched-cuda (Documentation/cuda.rst, "Lv3: the urgent context") rests
 * on, checked on the GPU at hand.  Prints one "fact" line per behaviour
 * (ok: the call succeeded; the CUresult otherwise) and "cost" lines: device
 * memory of a second context, per-launch host cost on its stream, event
 * record and cross-context wait.
 *
 *   nvcc -O2 -o second_context second_context.cu -lcuda && ./second_context
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { \
	const char *s_; cuGetErrorName(r_, &s_); \
	fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_); exit(1); } } while (0)

__global__ void add_one(int *p) { atomicAdd(p, 1); }
__global__ void empty(void) { }
__global__ void big_smem(int *p)
{
	extern __shared__ int s[];
	s[threadIdx.x] = threadIdx.x;
	__syncthreads();
	if (threadIdx.x == 0)
		atomicAdd(p, s[1]);
}

static void fact(const char *what, CUresult r)
{
	const char *s = "ok";

	if (r != CUDA_SUCCESS)
		cuGetErrorName(r, &s);
	printf("fact %-72s %s\n", what, s);
}

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static size_t free_mem(void)
{
	size_t f, t;

	CK(cuMemGetInfo(&f, &t));
	return f;
}

int main(void)
{
	CUcontext prim, uctx;
	CUdevice dev;
	CUstream s, t;
	int *d, h = 0;
	int lo, hi;

	cudaFree(0);	/* the runtime makes the primary context current */
	CK(cuCtxGetCurrent(&prim));
	CK(cuCtxGetDevice(&dev));
	CK(cuCtxGetStreamPriorityRange(&lo, &hi));
	cudaMalloc(&d, sizeof(int));
	cudaMemset(d, 0, sizeof(int));
	CK(cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, lo));

	size_t before = free_mem();
	CUctxCreateParams cp;
	memset(&cp, 0, sizeof(cp));
	CK(cuCtxCreate(&uctx, &cp, 0, dev));	/* made current */
	CK(cuStreamCreateWithPriority(&t, CU_STREAM_NON_BLOCKING, hi));
	CUevent eu;
	CK(cuEventCreate(&eu, CU_EVENT_DISABLE_TIMING));
	CK(cuCtxPopCurrent(NULL));
	CUcontext cur;
	CK(cuCtxGetCurrent(&cur));
	printf("fact %-72s %s\n", "popping the new context makes the primary current again",
	       cur == prim ? "ok" : "NO");

	/* The runtime's handle of add_one, as cudart resolves it. */
	cudaFunction_t rt_fn;
	cudaGetFuncBySymbol(&rt_fn, (const void *)add_one);
	CUfunction fp = (CUfunction)rt_fn;
	cudaKernel_t rt_k = NULL;
	cudaError_t ke = cudaGetKernel(&rt_k, (const void *)add_one);
	printf("fact %-72s %s\n", "cudaGetKernel gives a CUkernel", ke == cudaSuccess ? "ok" : "NO");
	CUkernel k = (CUkernel)rt_k;
	void *args[] = { &d };

	fact("launch a primary CUfunction on the primary's stream",
	     cuLaunchKernel(fp, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
	fact("launch a primary CUfunction on the second context's stream (primary current)",
	     cuLaunchKernel(fp, 1, 1, 1, 1, 1, 1, 0, t, args, NULL));
	fact("launch a CUkernel on the second context's stream (primary current)",
	     cuLaunchKernel((CUfunction)k, 1, 1, 1, 1, 1, 1, 0, t, args, NULL));
	CUfunction fu = NULL;
	CK(cuCtxPushCurrent(uctx));
	fact("cuKernelGetFunction with the second context current",
	     cuKernelGetFunction(&fu, k));
	CK(cuCtxPopCurrent(NULL));
	fact("launch the second context's CUfunction on its stream (primary current)",
	     cuLaunchKernel(fu, 1, 1, 1, 1, 1, 1, 0, t, args, NULL));
	fact("runtime <<<>>> launch on the second context's stream",
	     (add_one<<<1, 1, 0, (cudaStream_t)t>>>(d), cudaGetLastError() == cudaSuccess ?
	      CUDA_SUCCESS : CUDA_ERROR_UNKNOWN));
	CUlaunchConfig cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
	cfg.blockDimX = cfg.blockDimY = cfg.blockDimZ = 1;
	cfg.hStream = t;
	fact("cuLaunchKernelEx of a CUkernel on the second context's stream",
	     cuLaunchKernelEx(&cfg, (CUfunction)k, args, NULL));

	/* Telling the two handles apart. */
	const char *name = NULL;
	fact("cuFuncGetName of a primary CUfunction", cuFuncGetName(&name, fp));
	printf("fact   name %s\n", name ? name : "(none)");
	CUmodule mod = NULL;
	fact("cuFuncGetModule of a primary CUfunction", cuFuncGetModule(&mod, fp));
	CUresult r = cuFuncGetAttribute((int *)&h, CU_FUNC_ATTRIBUTE_NUM_REGS, fp);
	fact("cuFuncGetAttribute(NUM_REGS) of a primary CUfunction", r);
	fact("cuKernelGetName of a CUkernel", cuKernelGetName(&name, k));
	fact("cuKernelGetName of a CUfunction (is it a CUkernel?)",
	     cuKernelGetName(&name, (CUkernel)fp));
	fact("cuFuncGetName of a CUkernel cast to CUfunction", cuFuncGetName(&name, (CUfunction)k));
#if CUDA_VERSION >= 12080
	fact("cuFuncGetParamInfo of the primary CUfunction", CUDA_SUCCESS);
#endif

	/* Attributes: set on the primary function, seen through the kernel in
	 * the second context? */
	int big = 100 * 1024;
	cudaFunction_t rt_big;
	cudaGetFuncBySymbol(&rt_big, (const void *)big_smem);
	cudaKernel_t rt_kb;
	cudaGetKernel(&rt_kb, (const void *)big_smem);
	cudaFuncSetAttribute((const void *)big_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, big);
	fact("launch big-smem kernel on primary stream after cudaFuncSetAttribute",
	     cuLaunchKernel((CUfunction)rt_big, 1, 1, 1, 32, 1, 1, big, s, args, NULL));
	fact("same kernel as CUkernel on the second context's stream",
	     cuLaunchKernel((CUfunction)rt_kb, 1, 1, 1, 32, 1, 1, big, t, args, NULL));
	fact("cuKernelSetAttribute(MAX_DYNAMIC_SHARED) for the device",
	     cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, big,
				  (CUkernel)rt_kb, dev));
	fact("then the CUkernel on the second context's stream",
	     cuLaunchKernel((CUfunction)rt_kb, 1, 1, 1, 32, 1, 1, big, t, args, NULL));

	/* Modules loaded by the program (cuModuleLoadData, as Triton does). */
	CUfunction mf = NULL;
	CK(cuFuncGetModule(&mod, fp));
	fact("cuModuleGetFunction by name in the primary's module",
	     cuModuleGetFunction(&mf, mod, name ? name : "x"));

	/* Events. */
	CUevent ep;
	CK(cuEventCreate(&ep, CU_EVENT_DISABLE_TIMING));
	fact("record a primary event on the second context's stream", cuEventRecord(ep, t));
	fact("record a second-context event on its stream (primary current)", cuEventRecord(eu, t));
	fact("primary stream waits a second-context event", cuStreamWaitEvent(s, eu, 0));
	CK(cuEventRecord(ep, s));
	fact("second-context stream waits a primary event", cuStreamWaitEvent(t, ep, 0));
	fact("cuEventSynchronize of a second-context event (primary current)",
	     cuEventSynchronize(eu));
	fact("cuEventQuery of a second-context event (primary current)", cuEventQuery(eu));
	fact("cuStreamSynchronize of the second context's stream (primary current)",
	     cuStreamSynchronize(t));
	fact("cuStreamQuery of the second context's stream (primary current)", cuStreamQuery(t));
	CUcontext sctx = NULL;
	CK(cuStreamGetCtx(t, &sctx));
	printf("fact %-72s %s\n", "cuStreamGetCtx of its stream names the second context",
	       sctx == uctx ? "ok" : "NO");

	/* Copies and memsets with the primary's memory on the second stream. */
	int *pinned;
	CK(cuMemAllocHost((void **)&pinned, 1 << 20));
	fact("cuMemsetD32Async of primary memory on the second stream",
	     cuMemsetD32Async((CUdeviceptr)d, 5, 1, t));
	fact("cuMemcpyDtoHAsync to primary-pinned memory on the second stream",
	     cuMemcpyDtoHAsync(pinned, (CUdeviceptr)d, 4, t));
	CK(cuStreamSynchronize(t));
	printf("fact %-72s %s\n", "the copy read the memset's value", pinned[0] == 5 ? "ok" : "NO");
	double a = now_us();
	CK(cuMemcpyHtoDAsync((CUdeviceptr)d, pinned, 1 << 20 > 4 ? 4 : 4, t));
	double b = now_us();
	printf("fact   pinned HtoD async on second stream returned in %.1f us\n", b - a);

	/* Graphs made in the primary context. */
	CUgraph g;
	CUgraphExec gx;
	CUstream cs;
	CK(cuStreamCreate(&cs, CU_STREAM_NON_BLOCKING));
	CK(cuStreamBeginCapture(cs, CU_STREAM_CAPTURE_MODE_RELAXED));
	add_one<<<1, 1, 0, (cudaStream_t)cs>>>(d);
	CK(cuStreamEndCapture(cs, &g));
	CK(cuGraphInstantiate(&gx, g, 0));
	fact("cuGraphLaunch of a primary graph on the second context's stream",
	     cuGraphLaunch(gx, t));
	fact("cuGraphLaunch of a primary graph on the primary's stream", cuGraphLaunch(gx, s));
	CK(cuCtxSynchronize());
	CK(cuCtxPushCurrent(uctx));
	CK(cuCtxSynchronize());
	CK(cuCtxPopCurrent(NULL));

	/* Costs. */
	size_t after = free_mem();
	printf("cost second context, its stream and first launches: %.1f MiB of device memory\n",
	       (before - after) / 1048576.0);
	const int n = 20000;
	for (int rep = 0; rep < 2; rep++) {
		double t0 = now_us();
		for (int i = 0; i < n; i++)
			cuLaunchKernel((CUfunction)k, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL);
		double t1 = now_us();
		CK(cuStreamSynchronize(s));
		double t2 = now_us();
		for (int i = 0; i < n; i++)
			cuLaunchKernel((CUfunction)k, 1, 1, 1, 1, 1, 1, 0, t, NULL, NULL);
		double t3 = now_us();
		CK(cuStreamSynchronize(t));
		double t4 = now_us();
		for (int i = 0; i < n; i++) {
			cuCtxPushCurrent(uctx);
			cuLaunchKernel((CUfunction)k, 1, 1, 1, 1, 1, 1, 0, t, NULL, NULL);
			cuCtxPopCurrent(NULL);
		}
		double t5 = now_us();
		CK(cuStreamSynchronize(t));
		double t6 = now_us();
		for (int i = 0; i < n; i++) {
			cuEventRecord(eu, t);
			cuStreamWaitEvent(s, eu, 0);
		}
		double t7 = now_us();
		CK(cuCtxSynchronize());
		if (rep)
			printf("cost per launch: primary stream %.2f us, second-context stream %.2f us, "
			       "with push/pop %.2f us; record on second + wait on primary %.2f us\n",
			       (t1 - t0) / n, (t3 - t2) / n, (t5 - t4) / n, (t7 - t6) / n);
	}
	CK(cuMemcpyDtoH(&h, (CUdeviceptr)d, 4));
	printf("fact   counter %d\n", h);
	return 0;
}
