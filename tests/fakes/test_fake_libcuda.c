// SPDX-License-Identifier: MIT
/* Description: the fake libcuda itself: what the real driver does across contexts. */
/*
 * Linked into test_cuda (its main runs these too) with the interposer
 * preloaded, as the urgent context's tests are (tests/libxsched/cuda/
 * test_urgent.c); each test runs in its own forked process.
 *
 * The fake's priority range is [0 least, -5 greatest]: -1..-5 are urgent.
 * The urgent context is the first context the process creates: id 1 in
 * fake_rec.ctx; the primary is 0.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fake_libcuda.h"
#include "harness.h"
#include "../libxsched/cuda/cuda_helpers.h"

/* ---- the fake itself: what the real driver does across contexts ---- */

TEST(fake_ctx_create_pushes_and_pop_restores)
{
	CUcontext c = NULL, cur = NULL, popped = NULL;

	lv3("0");
	ASSERT_EQ(fake_ctx_current(), 0);
	ASSERT_EQ(cuCtxCreate(&c, NULL, 0, 0), CUDA_SUCCESS);
	ASSERT_EQ(fake_ctx_current(), 1);
	ASSERT_EQ(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
	ASSERT_TRUE(cur == c);
	ASSERT_EQ(fake_ctx_count(), 1);
	ASSERT_EQ(cuCtxPopCurrent(&popped), CUDA_SUCCESS);
	ASSERT_TRUE(popped == c);
	ASSERT_EQ(fake_ctx_current(), 0);
	ASSERT_EQ(cuCtxDestroy(c), CUDA_SUCCESS);
	ASSERT_EQ(fake_ctx_count(), 0);
}

TEST(fake_function_of_another_context_is_refused)
{
	CUcontext c, old;
	CUstream s, p;
	CUfunction f, ck;
	int n;

	lv3("0");
	p = mk(0);
	f = func_of(mod_load("fakecubin k3=1000"), "k3");
	ck = CK(4, 1000);
	ASSERT_EQ(cuCtxCreate(&c, NULL, 0, 0), CUDA_SUCCESS);
	s = mk(0);
	ASSERT_EQ(cuCtxPopCurrent(&old), CUDA_SUCCESS);
	ASSERT_EQ(fake_stream_ctx(s), 1);
	ASSERT_EQ(fake_stream_ctx(p), 0);
	n = fake_log_count();
	ASSERT_EQ(cuLaunchKernel(K(2, 0), 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL),
		  CUDA_ERROR_INVALID_HANDLE);
	ASSERT_EQ(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL),
		  CUDA_ERROR_INVALID_HANDLE);
	ASSERT_EQ(fake_log_count(), n);	/* nothing ran */
	go(ck, s);			/* a CUkernel runs anywhere */
	ASSERT_EQ(rec_of(4).ctx, 1);
	ASSERT_EQ(rec_of(4).fn, FAKE_FN_KERNEL);
	go(f, p);
	ASSERT_EQ(rec_of(3).ctx, 0);
	ASSERT_EQ(rec_of(3).fn, FAKE_FN_MODULE);
}

TEST(fake_event_of_another_context_cannot_be_recorded)
{
	CUcontext c, old;
	CUevent e0, e1;
	CUstream s, p;

	lv3("0");
	p = mk(0);
	ASSERT_EQ(cuEventCreate(&e0, 0), CUDA_SUCCESS);
	ASSERT_EQ(cuCtxCreate(&c, NULL, 0, 0), CUDA_SUCCESS);
	s = mk(0);
	ASSERT_EQ(cuEventCreate(&e1, 0), CUDA_SUCCESS);
	ASSERT_EQ(cuCtxPopCurrent(&old), CUDA_SUCCESS);
	ASSERT_EQ(fake_event_ctx(e0), 0);
	ASSERT_EQ(fake_event_ctx(e1), 1);
	ASSERT_EQ(cuEventRecord(e0, s), CUDA_ERROR_INVALID_HANDLE);
	ASSERT_EQ(cuEventRecord(e1, p), CUDA_ERROR_INVALID_HANDLE);
	go(CK(5, 20 * MS), s);
	ASSERT_EQ(cuEventRecord(e1, s), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamWaitEvent(p, e1, 0), CUDA_SUCCESS);	/* across contexts */
	go(K(6, 0), p);
	ASSERT_GE(rec_of(6).start, rec_of(5).end);
	ASSERT_EQ(cuEventSynchronize(e1), CUDA_SUCCESS);
	ASSERT_EQ(cuEventQuery(e1), CUDA_SUCCESS);
}

TEST(fake_ctx_synchronize_covers_the_current_context_only)
{
	CUcontext c, old;
	CUstream s, p;
	uint64_t t;

	lv3("0");
	p = mk(0);
	ASSERT_EQ(cuCtxCreate(&c, NULL, 0, 0), CUDA_SUCCESS);
	s = mk(0);
	ASSERT_EQ(cuCtxPopCurrent(&old), CUDA_SUCCESS);
	go(CK(7, 150 * MS), s);
	go(K(8, 5 * MS), p);
	ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
	t = fake_now();
	ASSERT_GE(t, rec_of(8).end);
	ASSERT_TRUE(t < rec_of(7).end);
	ASSERT_EQ(cuCtxPushCurrent(c), CUDA_SUCCESS);
	ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
	ASSERT_GE(fake_now(), rec_of(7).end);
	ASSERT_EQ(cuCtxPopCurrent(&old), CUDA_SUCCESS);
}

TEST(fake_dynamic_shared_memory_over_48k_needs_the_attribute)
{
	CUstream p;
	CUmodule m;
	CUfunction f, ck;
	int v = 0;

	lv3("0");
	p = mk(0);
	m = mod_load("fakecubin k9=0 k10=0");
	f = func_of(m, "k9");
	ck = CK(11, 0);
	ASSERT_EQ(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 80000, p, NULL, NULL),
		  CUDA_ERROR_INVALID_VALUE);
	ASSERT_EQ(cuFuncSetAttribute(f, SMEM_ATTR, 100000), CUDA_SUCCESS);
	ASSERT_EQ(cuFuncGetAttribute(&v, SMEM_ATTR, f), CUDA_SUCCESS);
	ASSERT_EQ(v, 100000);
	ASSERT_EQ(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 80000, p, NULL, NULL), CUDA_SUCCESS);
	ASSERT_EQ(cuLaunchKernel(func_of(m, "k10"), 1, 1, 1, 1, 1, 1, 80000, p, NULL, NULL),
		  CUDA_ERROR_INVALID_VALUE);	/* per function */
	ASSERT_EQ(cuLaunchKernel(ck, 1, 1, 1, 1, 1, 1, 80000, p, NULL, NULL),
		  CUDA_ERROR_INVALID_VALUE);
	ASSERT_EQ(cuKernelSetAttribute(SMEM_ATTR, 100000, (CUkernel)ck, 0), CUDA_SUCCESS);
	ASSERT_EQ(cuLaunchKernel(ck, 1, 1, 1, 1, 1, 1, 80000, p, NULL, NULL), CUDA_SUCCESS);
}

TEST(fake_names_tell_kernels_from_functions)
{
	CUfunction ck, f = NULL;
	CUmodule m = NULL;
	const char *n = NULL;

	lv3("0");
	ck = kernel_of(lib_load("fakecubin k12=0 gemm=0"), "gemm");
	ASSERT_EQ(cuKernelGetName(&n, (CUkernel)ck), CUDA_SUCCESS);
	ASSERT_TRUE(!strcmp(n, "gemm"));
	ASSERT_EQ(cuFuncGetName(&n, ck), CUDA_ERROR_INVALID_HANDLE);
	ASSERT_EQ(cuFuncGetModule(&m, ck), CUDA_ERROR_INVALID_HANDLE);
	ASSERT_EQ(cuKernelGetFunction(&f, (CUkernel)ck), CUDA_SUCCESS);
	ASSERT_EQ(cuFuncGetName(&n, f), CUDA_SUCCESS);
	ASSERT_TRUE(!strcmp(n, "gemm"));
	ASSERT_EQ(cuKernelGetName(&n, (CUkernel)f), CUDA_ERROR_INVALID_HANDLE);
	ASSERT_EQ(cuKernelGetName(&n, (CUkernel)K(13, 0)), CUDA_ERROR_INVALID_HANDLE);
	ASSERT_EQ(cuFuncGetName(&n, K(13, 0)), CUDA_SUCCESS);
	ASSERT_EQ(cuFuncGetModule(&m, f), CUDA_SUCCESS);
	ASSERT_EQ(cuModuleLoadData(&m, "notacubin k1=0"), CUDA_ERROR_INVALID_IMAGE);
}

static void CUDA_CB count_call(void *p)
{
	__atomic_add_fetch((int *)p, 1, __ATOMIC_RELEASE);
}

/* A graph of the primary launched on another context's stream runs there
 * in order, but in the primary (where it was instantiated), as the real
 * driver runs it; its host nodes are called once the rest ended, at every
 * launch. */
TEST(fake_graph_runs_in_the_context_it_was_instantiated_in)
{
	CUcontext c, old;
	CUstream s, p;
	CUgraph g;
	CUgraphExec x;
	struct fake_rec r;
	static int calls;

	lv3("0");
	p = mk(0);
	ASSERT_EQ(cuCtxCreate(&c, NULL, 0, 0), CUDA_SUCCESS);
	s = mk(0);
	ASSERT_EQ(cuCtxPopCurrent(&old), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamBeginCapture(p, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	go(K(14, 3 * MS), p);
	ASSERT_EQ(cuLaunchHostFunc(p, count_call, &calls), CUDA_SUCCESS);
	go(K(15, 2 * MS), p);
	ASSERT_EQ(cuStreamEndCapture(p, &g), CUDA_SUCCESS);
	ASSERT_EQ(fake_host_fns_called(), 0);
	ASSERT_EQ(cuGraphInstantiate(&x, g, 0), CUDA_SUCCESS);
	ASSERT_EQ(cuGraphLaunch(x, s), CUDA_SUCCESS);
	ASSERT_EQ(cuGraphLaunch(x, s), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamSynchronize(s), CUDA_SUCCESS);
	r = rec_of(FAKE_GRAPH);
	ASSERT_EQ(r.ctx, 0);
	ASSERT_EQ(r.stream, fake_stream_id(s));
	ASSERT_EQ(r.nodes, 3);
	ASSERT_EQ(r.end - r.start, 5 * MS);
	while (__atomic_load_n(&calls, __ATOMIC_ACQUIRE) < 2 && fake_now() < r.end + 1000 * MS)
		usleep(1000);
	ASSERT_EQ(__atomic_load_n(&calls, __ATOMIC_ACQUIRE), 2);
}

/* A host node the fake cannot keep is refused, never dropped from its graph. */
TEST(fake_capture_refuses_a_host_node_it_cannot_keep)
{
	CUstream p;
	CUgraph g;
	CUgraphExec x;
	static int calls;
	int i;

	lv3("0");
	p = mk(0);
	ASSERT_EQ(cuStreamBeginCapture(p, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	for (i = 0; i < 8; i++)
		ASSERT_EQ(cuLaunchHostFunc(p, count_call, &calls), CUDA_SUCCESS);
	ASSERT_EQ(cuLaunchHostFunc(p, count_call, &calls), CUDA_ERROR_OUT_OF_MEMORY);
	ASSERT_EQ(cuStreamEndCapture(p, &g), CUDA_SUCCESS);
	ASSERT_EQ(cuGraphInstantiate(&x, g, 0), CUDA_SUCCESS);
	ASSERT_EQ(cuGraphLaunch(x, p), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamSynchronize(p), CUDA_SUCCESS);
	for (i = 0; i < 1000 && __atomic_load_n(&calls, __ATOMIC_ACQUIRE) < 8; i++)
		usleep(1000);
	ASSERT_EQ(__atomic_load_n(&calls, __ATOMIC_ACQUIRE), 8);
}
