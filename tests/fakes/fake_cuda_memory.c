// SPDX-License-Identifier: MIT
/* Description: the fake libcuda's memory: allocations, page-locked host memory, copies, memsets. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fake_libcuda_internal.h"

/* ---- memory: device allocations and page-locked host memory ---- */

#define MAX_MEM 256
static struct {
	uintptr_t base;
	size_t n;
	int pinned;		/* 1: page-locked host memory, 0: device memory */
} mems[MAX_MEM];

/* Device memory is host memory here (the fake's kernels do not run). */
static CUresult mem_add(void **p, size_t n, int pinned)
{
	int i;

	*p = calloc(1, n ? n : 1);
	if (!*p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&mu);
	for (i = 0; i < MAX_MEM && mems[i].base; i++)
		;
	if (i < MAX_MEM) {
		mems[i].base = (uintptr_t)*p;
		mems[i].n = n ? n : 1;
		mems[i].pinned = pinned;
	}
	pthread_mutex_unlock(&mu);
	if (i == MAX_MEM) {
		free(*p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	return CUDA_SUCCESS;
}

static CUresult mem_free(uintptr_t p, int pinned)
{
	int i;

	pthread_mutex_lock(&mu);
	for (i = 0; i < MAX_MEM && (mems[i].base != p || mems[i].pinned != pinned); i++)
		;
	if (i < MAX_MEM)
		mems[i].base = 0;
	pthread_mutex_unlock(&mu);
	if (i == MAX_MEM)
		return CUDA_ERROR_INVALID_VALUE;
	free((void *)p);
	return CUDA_SUCCESS;
}

/* mu held: host memory the driver must stage (not page-locked, not device). */
static int pageable(uintptr_t p)
{
	int i;

	if (!p)
		return 0;
	for (i = 0; i < MAX_MEM; i++)
		if (mems[i].base && p >= mems[i].base && p - mems[i].base < mems[i].n)
			return 0;
	return 1;
}

API CUresult cuMemAlloc_v2(CUdeviceptr *d, size_t n)
{
	void *p;
	CUresult r = mem_add(&p, n, 0);

	*d = r == CUDA_SUCCESS ? (CUdeviceptr)(uintptr_t)p : 0;
	return r;
}

API CUresult cuMemFree_v2(CUdeviceptr d)
{
	return mem_free((uintptr_t)d, 0);
}

API CUresult cuMemAllocHost_v2(void **p, size_t n)
{
	return mem_add(p, n, 1);
}

static atomic_int host_alloc_fails;

API void fake_fail_host_alloc(int n)
{
	atomic_store(&host_alloc_fails, n);
}

API CUresult cuMemHostAlloc(void **p, size_t n, unsigned int flags)
{
	(void)flags;
	if (atomic_load(&host_alloc_fails) > 0 && atomic_fetch_sub(&host_alloc_fails, 1) > 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	return mem_add(p, n, 1);
}

/* Unified addressing: a mapped pinned allocation's device address is its
 * host address. */
API CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned int flags)
{
	if (!d || !p || flags)
		return CUDA_ERROR_INVALID_VALUE;
	*d = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

API CUresult cuMemFreeHost(void *p)
{
	return mem_free((uintptr_t)p, 1);
}

/* ---- copies ---- */

/* A copy from or to pageable memory returns once it ended. */
static CUresult memcpy_async(CUdeviceptr d, CUdeviceptr src, CUstream h, int ptsz)
{
	struct fake_rec *r;
	int idx, block;

	pthread_mutex_lock(&mu);
	if (stream_of(h, ptsz)->destroyed) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	r = log_add(stream_of(h, ptsz), FAKE_COPY, ptsz, 1000);
	idx = (int)(r - logv);
	block = !r->captured && (pageable((uintptr_t)d) || pageable((uintptr_t)src));
	pthread_mutex_unlock(&mu);
	if (block) {
		fake_rec_wait(idx);
		pthread_mutex_lock(&mu);
		logv[idx].ret = fake_now();
		pthread_mutex_unlock(&mu);
	}
	return CUDA_SUCCESS;
}

API CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h)
{
	(void)n;
	return memcpy_async(d, s, h, 0);
}

API CUresult cuMemcpyAsync_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h)
{
	(void)n;
	return memcpy_async(d, s, h, 1);
}

/* Through the exported cuMemcpyAsync, by the PLT (see fake_libcuda.h). */
API CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream h)
{
	return cuMemcpyAsync((CUdeviceptr)(uintptr_t)dst, src, n, h);
}

API CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n, CUstream h)
{
	return cuMemcpyAsync_ptsz((CUdeviceptr)(uintptr_t)dst, src, n, h);
}

API void *fake_self_call_target(void)
{
	return (void *)cuMemcpyAsync;
}

API void *fake_next_definition(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

/* Synchronous: on the legacy stream after its work; returns once it ended. */
API CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
	struct fake_rec *r;
	int idx;

	(void)dst;
	(void)src;
	(void)n;
	pthread_mutex_lock(&mu);
	r = log_add(stream_of(NULL, 0), FAKE_SYNC_COPY, 0, 1000);
	idx = (int)(r - logv);
	pthread_mutex_unlock(&mu);
	fake_rec_wait(idx);
	pthread_mutex_lock(&mu);
	logv[idx].ret = fake_now();
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

/* An ABI of cuMemcpyAsync that the interposer has no hook for (a later
 * driver's _v2): FAKE_CUDA_PROC_INTERNAL hands out an internal address for
 * "cuMemcpyAsync", which must then not be taken for the ABI we know. */
API CUresult cuMemcpyAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h);
API CUresult cuMemcpyAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h)
{
	(void)n;
	return memcpy_async(d, s, h, 0);
}

CUresult internal_memcpy(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h)
{
	return cuMemcpyAsync_v2(d, s, n, h);
}

API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream h)
{
	(void)n;
	return memcpy_async(dst, (CUdeviceptr)(uintptr_t)src, h, 0);
}

API CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src, size_t n, CUstream h)
{
	(void)n;
	return memcpy_async(dst, (CUdeviceptr)(uintptr_t)src, h, 1);
}

API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
{
	(void)n;
	return memcpy_async(dst, src, h, 0);
}

API CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
{
	(void)n;
	return memcpy_async(dst, src, h, 1);
}

/* ---- memsets: a command of 1 us on any context's stream (the memory is
 * not written) ---- */

static CUresult memset_async(CUdeviceptr d, CUstream h, int ptsz)
{
	struct fstream *s;

	if (!d)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mu);
	s = stream_of(h, ptsz);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	(void)log_add(s, FAKE_MEMSET, ptsz, 1000);
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

#define SET_DEF(n, T, pt)								\
	API CUresult n(CUdeviceptr d, T v, size_t count, CUstream h);			\
	API CUresult n(CUdeviceptr d, T v, size_t count, CUstream h)			\
	{										\
		(void)v;								\
		(void)count;								\
		return memset_async(d, h, pt);						\
	}
#define SET2D_DEF(n, T, pt)								\
	API CUresult n(CUdeviceptr d, size_t pitch, T v, size_t w, size_t ht, CUstream h); \
	API CUresult n(CUdeviceptr d, size_t pitch, T v, size_t w, size_t ht, CUstream h) \
	{										\
		(void)pitch;								\
		(void)v;								\
		(void)w;								\
		(void)ht;								\
		return memset_async(d, h, pt);						\
	}
SET_DEF(cuMemsetD8Async, unsigned char, 0)
SET_DEF(cuMemsetD8Async_ptsz, unsigned char, 1)
SET_DEF(cuMemsetD16Async, unsigned short, 0)
SET_DEF(cuMemsetD16Async_ptsz, unsigned short, 1)
SET_DEF(cuMemsetD32Async, unsigned int, 0)
SET_DEF(cuMemsetD32Async_ptsz, unsigned int, 1)
SET2D_DEF(cuMemsetD2D8Async, unsigned char, 0)
SET2D_DEF(cuMemsetD2D8Async_ptsz, unsigned char, 1)
SET2D_DEF(cuMemsetD2D16Async, unsigned short, 0)
SET2D_DEF(cuMemsetD2D16Async_ptsz, unsigned short, 1)
SET2D_DEF(cuMemsetD2D32Async, unsigned int, 0)
SET2D_DEF(cuMemsetD2D32Async_ptsz, unsigned int, 1)
