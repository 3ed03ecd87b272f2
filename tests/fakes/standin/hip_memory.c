// SPDX-License-Identifier: MIT
/*
 * The stand-in HIP runtime's memory: device and host allocations, copies and
 * memsets on a stream (agent dispatch packets), captured or run.
 */
#include "hip_standin.h"

/* ---- memory ---- */

EXPORT hipError_t hipMalloc(void **ptr, size_t size)
{
	hipError_t e = init();

	if (e)
		return ret(e);
	if (!ptr)
		return ret(hipErrorInvalidValue);
	if (size == 0) {
		*ptr = NULL;
		return hipSuccess;
	}
	if (hsa_amd_memory_pool_allocate(g_pool, size, 0, ptr) != HSA_STATUS_SUCCESS)
		return ret(hipErrorOutOfMemory);
	return hipSuccess;
}

EXPORT hipError_t hipFree(void *ptr)
{
	if (!ptr)
		return hipSuccess;
	hipDeviceSynchronize();	/* as CLR: nothing may still use it */
	return hsa_amd_memory_pool_free(ptr) == HSA_STATUS_SUCCESS ? hipSuccess :
	       ret(hipErrorInvalidValue);
}

EXPORT hipError_t hipHostMalloc(void **ptr, size_t size, unsigned int flags)
{
	(void)flags;
	if (!ptr || posix_memalign(ptr, 4096, size ? size : 1))
		return ret(hipErrorOutOfMemory);
	return hipSuccess;
}

EXPORT hipError_t hipHostFree(void *ptr)
{
	free(ptr);
	return hipSuccess;
}

/* Record a command in @s's capture instead of running it. */
hipError_t capture_add(struct ihipStream_t *s, const struct node *n)
{
	struct node *c = malloc(sizeof(*c));

	if (!c)
		return ret(hipErrorOutOfMemory);
	*c = *n;
	c->next = NULL;
	*s->capture->tail = c;
	s->capture->tail = &c->next;
	return hipSuccess;
}

static hipError_t copy_on(hipStream_t stream, void *dst, const void *src, size_t n, bool spt,
			  bool sync)
{
	STREAM_OR_FAIL(s, stream, spt);
	if (n == 0)
		return hipSuccess;
	if (!dst || !src)
		return ret(hipErrorInvalidValue);
	if (s->capture)
		return capture_add(s, &(struct node){ .type = NODE_COPY, .a0 = (uintptr_t)dst,
						      .a1 = (uintptr_t)src, .a2 = n });
	put_agent(s, STANDIN_AGENT_COPY, (uintptr_t)dst, (uintptr_t)src, n);
	return sync ? stream_sync(stream, spt) : hipSuccess;
}

EXPORT hipError_t hipMemcpyAsync(void *dst, const void *src, size_t n, hipMemcpyKind kind,
				 hipStream_t stream)
{
	(void)kind;	/* all memory is addressable from the host here */
	return copy_on(stream, dst, src, n, false, false);
}

EXPORT hipError_t hipMemcpyAsync_spt(void *dst, const void *src, size_t n, hipMemcpyKind kind,
				     hipStream_t stream)
{
	(void)kind;
	return copy_on(stream, dst, src, n, true, false);
}

EXPORT hipError_t hipMemcpy(void *dst, const void *src, size_t n, hipMemcpyKind kind)
{
	(void)kind;
	return copy_on(NULL, dst, src, n, false, true);
}

EXPORT hipError_t hipMemcpy_spt(void *dst, const void *src, size_t n, hipMemcpyKind kind)
{
	(void)kind;
	return copy_on(NULL, dst, src, n, true, true);
}

EXPORT hipError_t hipMemcpyWithStream(void *dst, const void *src, size_t n, hipMemcpyKind kind,
				      hipStream_t stream)
{
	(void)kind;
	return copy_on(stream, dst, src, n, false, true);
}

EXPORT hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, void *src, size_t n, hipStream_t stream)
{
	return copy_on(stream, dst, src, n, false, false);
}

EXPORT hipError_t hipMemcpyDtoHAsync(void *dst, hipDeviceptr_t src, size_t n, hipStream_t stream)
{
	return copy_on(stream, dst, src, n, false, false);
}

EXPORT hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src, size_t n,
				     hipStream_t stream)
{
	return copy_on(stream, dst, src, n, false, false);
}

static hipError_t memset_on(hipStream_t stream, void *dst, int value, size_t n, bool spt,
			    bool sync)
{
	STREAM_OR_FAIL(s, stream, spt);
	if (n == 0)
		return hipSuccess;
	if (!dst)
		return ret(hipErrorInvalidValue);
	if (s->capture)
		return capture_add(s, &(struct node){ .type = NODE_MEMSET, .a0 = (uintptr_t)dst,
						      .a1 = (uint8_t)value, .a2 = n });
	put_agent(s, STANDIN_AGENT_MEMSET, (uintptr_t)dst, (uint8_t)value, n);
	return sync ? stream_sync(stream, spt) : hipSuccess;
}

EXPORT hipError_t hipMemsetAsync(void *dst, int value, size_t n, hipStream_t stream)
{
	return memset_on(stream, dst, value, n, false, false);
}

EXPORT hipError_t hipMemset(void *dst, int value, size_t n)
{
	return memset_on(NULL, dst, value, n, false, true);
}

EXPORT hipError_t hipMemset_spt(void *dst, int value, size_t n)
{
	return memset_on(NULL, dst, value, n, true, true);
}
