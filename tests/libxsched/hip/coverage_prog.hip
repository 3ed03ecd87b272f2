// SPDX-License-Identifier: MIT
// A small HIP program for the coverage check (tests/libxsched/hip/coverage.py): compiled
// by Debian's hipcc for gfx90a; only its import table is read (it never runs).
#include <hip/hip_runtime.h>
#include <cstdio>
__global__ void add(int *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] += 1; }
int main() {
  int *d = nullptr; hipStream_t s; hipEvent_t e0, e1;
  if (hipMalloc(&d, 1024 * sizeof(int)) != hipSuccess) { printf("no device\n"); }
  hipStreamCreateWithPriority(&s, 0, -1);
  hipEventCreate(&e0); hipEventCreate(&e1);
  hipEventRecord(e0, s);
  add<<<4, 256, 0, s>>>(d, 1024);
  hipLaunchKernelGGL(add, dim3(4), dim3(256), 0, 0, d, 1024);
  hipMemsetAsync(d, 0, 4096, s);
  hipEventRecord(e1, s);
  hipStreamWaitEvent(0, e1, 0);
  hipStreamSynchronize(s); hipDeviceSynchronize();
  float ms; hipEventElapsedTime(&ms, e0, e1);
  hipStreamDestroy(s); hipFree(d);
  return 0;
}
