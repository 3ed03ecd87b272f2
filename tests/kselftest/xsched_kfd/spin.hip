// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel the kfd hardware tests preempt (kfd_hw.c): every workgroup
 * counts itself as started, then spins until the host sets *flag, and
 * writes how long it spun.  A workgroup that is restarted instead of
 * resumed counts itself twice.
 *
 *   hipcc --genco --offload-arch=gfx942 -O2 -o spin.co spin.hip
 */
#include <hip/hip_runtime.h>

extern "C" __global__ void xkfd_spin(volatile unsigned long long *flag,
				     unsigned long long *started,
				     unsigned long long *out)
{
	unsigned long long n = 0;

	if (threadIdx.x == 0)
		atomicAdd(started, 1ULL);
	while (__atomic_load_n(flag, __ATOMIC_RELAXED) == 0)
		n++;
	if (threadIdx.x == 0)
		out[blockIdx.x] = n + 1;
}
