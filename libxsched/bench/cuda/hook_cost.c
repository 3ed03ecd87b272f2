// SPDX-License-Identifier: MIT
/*
 * The interposer's own cost per launch, on the host: 2M launches of a
 * zero-length kernel into the fake libcuda (tests/fakes/fake_libcuda.c), best of 5.  Run it
 * with and without LD_PRELOAD=libxsched-cuda.so; argument "low": the stream
 * is a lower stream (a higher one exists and is idle).  See
 * Documentation/cuda.rst for the build line.
 */
#include <stdio.h>
#include <time.h>
#include <cuda.h>
#include "fake_libcuda.h"
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
int main(int argc, char **argv){
	static struct fake_kernel k = {0, 1};
	CUstream s, hi; int n = 2000000, i, r; double best = 1e18;
	cuStreamCreateWithPriority(&s, 0, 0);
	if (argc > 1) { cuStreamCreateWithPriority(&hi, 0, -1); cuLaunchKernel((CUfunction)&k,1,1,1,1,1,1,0,hi,NULL,NULL); cuStreamSynchronize(hi); }
	for (r = 0; r < 5; r++) { double t0 = now();
	for (i = 0; i < n; i++) cuLaunchKernel((CUfunction)&k,1,1,1,1,1,1,0,s,NULL,NULL);
	double d = (now()-t0)/n; if (d < best) best = d; }
	printf("%.1f ns/launch\n", best); return 0; }
