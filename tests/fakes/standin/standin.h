/* SPDX-License-Identifier: MIT */
/*
 * What the test-only stand-in runtimes (libhsa-runtime64.so.1 and
 * libamdhip64.so.5 in this folder) agree on beyond the real HSA API.  Never
 * installed; see Documentation/hip.rst, "Tests on the sim GPU".
 *
 * Kernel dispatch packets (hsa_kernel_dispatch_packet_t):
 *   kernel_object    a sim kernel number, enum xsched_sim_kernel (on ROCm it
 *                    is the address of a kernel descriptor in code memory)
 *   grid             grid_size_x / workgroup_size_x workgroups (rounded up)
 *   kernarg_address  a struct standin_kernarg: the C layout of the test
 *                    kernels' parameters (uint64_t *dst, const uint64_t *src,
 *                    uint32_t steps, uint64_t step_ns, uint64_t seed); dst and
 *                    src are process addresses of memory from
 *                    hsa_amd_memory_pool_allocate (src may be NULL)
 * Agent dispatch packets (hsa_agent_dispatch_packet_t) carry the copies and
 * memsets that CLR runs as blit kernels or SDMA: type is enum standin_agent_op,
 * arg[0] the destination, arg[1] the source (copy) or byte value (memset),
 * arg[2] the byte count.  The packet processor runs them in queue order.
 */
#ifndef STANDIN_H
#define STANDIN_H

#include <stdint.h>

struct standin_kernarg {
	uint64_t dst;
	uint64_t src;
	uint32_t steps;
	uint32_t pad;
	uint64_t step_ns;
	uint64_t seed;
};

enum standin_agent_op {
	STANDIN_AGENT_COPY = 0x8001,
	STANDIN_AGENT_MEMSET = 0x8002,
};

#endif
