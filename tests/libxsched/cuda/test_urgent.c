// SPDX-License-Identifier: MIT
/* Description: the urgent context: which streams move, the calls it carries, synchronize, destroy, capture. */
/*
 * Host tests of the urgent context (XSCHED_CUDA_LV3, issue 24) against the
 * fake libcuda (fake_libcuda.h: contexts, modules, libraries, events and
 * graphs as the real driver has them across contexts): the work of a
 * stream above the lowest priority runs on a twin stream in a context the
 * library owns, the program's handles unchanged.  Linked into test_cuda
 * (its main runs these too); each test runs in its own forked process and
 * sets XSCHED_CUDA_LV3 before its first CUDA call.
 * Its functions, events and gather are in test_urgent_functions.c,
 * test_urgent_events.c and test_urgent_gather.c; the fake's own tests in
 * tests/fakes/test_fake_libcuda.c.
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
#include "cuda_helpers.h"

CUresult cuLaunchKernel_ptsz(CUfunction, unsigned int, unsigned int, unsigned int,
			     unsigned int, unsigned int, unsigned int, unsigned int,
			     CUstream, void **, void **);
CUresult cuStreamSynchronize_ptsz(CUstream);
CUresult cuStreamQuery_ptsz(CUstream);

/* ---- placement: which streams move ---- */

TEST(urgent_stream_work_runs_in_the_urgent_context)
{
	CUstream hi, lo;
	CUcontext c = NULL, primary = NULL;
	int prio = 0;

	lv3("1");
	ASSERT_EQ(cuCtxGetCurrent(&primary), CUDA_SUCCESS);
	hi = mk(-1);
	lo = mk(0);
	go(CK(20, MS), hi);
	go(CK(21, MS), lo);
	ASSERT_URGENT(rec_of(20), hi);
	ASSERT_IN_PLACE(rec_of(21), lo);
	/* The program's handle is unchanged. */
	ASSERT_EQ(cuStreamGetCtx(hi, &c), CUDA_SUCCESS);
	ASSERT_TRUE(c == primary);
	ASSERT_EQ(fake_stream_ctx(hi), 0);
	ASSERT_EQ(cuStreamGetPriority(hi, &prio), CUDA_SUCCESS);
	ASSERT_EQ(prio, -1);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
}

TEST(every_priority_above_the_lowest_is_urgent)
{
	CUstream s[5];
	int i;

	lv3("1");
	for (i = 0; i < 5; i++)
		s[i] = mk(-1 - i);	/* -1 .. -5, the greatest */
	for (i = 0; i < 5; i++)
		go(CK(22 + i, 0), s[i]);
	for (i = 0; i < 5; i++)
		ASSERT_URGENT(rec_of(22 + i), s[i]);
}

TEST(lowest_legacy_and_per_thread_streams_never_move)
{
	CUstream hi, lo;
	CUfunction a, b, c, d;

	lv3("1");
	a = CK(27, 0);
	b = CK(28, 0);
	c = CK(29, 0);
	d = CK(30, 0);
	hi = mk(-2);
	lo = mk(0);
	go(a, hi);		/* an urgent stream exists and has worked */
	go(b, lo);
	go(c, NULL);		/* the legacy default stream */
	ASSERT_EQ(cuLaunchKernel_ptsz(d, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_SUCCESS);
	ASSERT_URGENT(rec_of(27), hi);
	ASSERT_IN_PLACE(rec_of(28), lo);
	ASSERT_EQ(rec_of(29).ctx, 0);
	ASSERT_EQ(rec_of(29).stream, 0);
	ASSERT_EQ(rec_of(30).ctx, 0);
	ASSERT_EQ(rec_of(30).stream, -(int)syscall(SYS_gettid));
}

TEST(one_urgent_context_made_at_the_first_urgent_call)
{
	CUstream lo, hi, hi2;

	lv3("1");
	lo = mk(0);
	go(CK(31, 0), lo);
	ASSERT_EQ(cuStreamSynchronize(lo), CUDA_SUCCESS);
	ASSERT_EQ(fake_ctx_count(), 0);	/* no urgent call yet */
	hi = mk(-1);
	hi2 = mk(-4);
	go(CK(32, 0), hi);
	ASSERT_EQ(fake_ctx_count(), 1);
	go(CK(33, 0), hi2);
	go(CK(34, 0), hi);
	ASSERT_EQ(fake_ctx_count(), 1);	/* one per device */
	ASSERT_URGENT(rec_of(32), hi);
	ASSERT_URGENT(rec_of(33), hi2);
	ASSERT_URGENT(rec_of(34), hi);
	ASSERT_NE(rec_of(32).stream, rec_of(33).stream);	/* a twin per stream */
	ASSERT_EQ(rec_of(32).stream, rec_of(34).stream);
}

TEST(no_urgent_context_without_urgent_streams)
{
	CUstream a, b;
	CUmodule m;
	CUevent e;

	lv3("1");
	a = mk(0);
	b = mk(0);
	m = mod_load("fakecubin k35=1000000");
	go(func_of(m, "k35"), a);
	go(CK(36, MS), b);
	go(K(37, MS), NULL);
	ASSERT_EQ(cuEventCreate(&e, 0), CUDA_SUCCESS);
	ASSERT_EQ(cuEventRecord(e, a), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamWaitEvent(b, e, 0), CUDA_SUCCESS);
	ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
	ASSERT_EQ(fake_ctx_count(), 0);
	ASSERT_EQ(off_primary(), 0);
}

TEST(lv3_off_moves_nothing)
{
	CUstream hi;

	lv3("0");
	hi = mk(-1);
	go(CK(38, MS), hi);
	go(func_of(mod_load("fakecubin k39=0"), "k39"), hi);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	ASSERT_IN_PLACE(rec_of(38), hi);
	ASSERT_IN_PLACE(rec_of(39), hi);
	ASSERT_EQ(fake_ctx_count(), 0);
}

TEST(urgent_calls_leave_the_programs_context_current)
{
	CUstream hi;
	CUcontext cur = NULL, before = NULL;
	CUmodule m;
	CUevent e;

	lv3("1");
	ASSERT_EQ(cuCtxGetCurrent(&before), CUDA_SUCCESS);
	hi = mk(-1);
	go(CK(40, MS), hi);
	ASSERT_EQ(cuEventCreate(&e, 0), CUDA_SUCCESS);
	ASSERT_EQ(cuEventRecord(e, hi), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	ASSERT_EQ(fake_ctx_current(), 0);
	ASSERT_EQ(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
	ASSERT_TRUE(cur == before);
	/* What the program makes next is the primary's. */
	m = mod_load("fakecubin k41=0");
	ASSERT_EQ(fake_event_ctx(e), 0);
	ASSERT_EQ(fake_stream_ctx(mk(0)), 0);
	go(func_of(m, "k41"), NULL);
	ASSERT_EQ(rec_of(41).ctx, 0);
}

/* ---- other scheduled calls ---- */

TEST(copies_run_in_the_urgent_context)
{
	CUstream hi;
	CUdeviceptr d1, d2;
	void *h;
	int from, n, in;

	lv3("1");
	hi = mk(-1);
	ASSERT_EQ(cuMemAlloc(&d1, 64), CUDA_SUCCESS);
	ASSERT_EQ(cuMemAlloc(&d2, 64), CUDA_SUCCESS);
	ASSERT_EQ(cuMemAllocHost(&h, 64), CUDA_SUCCESS);
	from = fake_log_count();
	ASSERT_EQ(cuMemcpyAsync(d1, d2, 64, hi), CUDA_SUCCESS);
	ASSERT_EQ(cuMemcpyHtoDAsync(d1, h, 64, hi), CUDA_SUCCESS);
	ASSERT_EQ(cuMemcpyDtoHAsync(h, d1, 64, hi), CUDA_SUCCESS);
	ASSERT_EQ(cuMemcpyDtoDAsync(d2, d1, 64, hi), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	n = count_kind(from, FAKE_COPY, URGENT, &in);
	ASSERT_EQ(n, 4);
	ASSERT_EQ(in, 4);
	ASSERT_EQ(cuMemFree(d1), CUDA_SUCCESS);
	ASSERT_EQ(cuMemFree(d2), CUDA_SUCCESS);
	ASSERT_EQ(cuMemFreeHost(h), CUDA_SUCCESS);
}

TEST(memsets_run_in_the_urgent_context)
{
	CUstream hi;
	CUdeviceptr d;
	int from, n, in;

	lv3("1");
	hi = mk(-1);
	ASSERT_EQ(cuMemAlloc(&d, 4096), CUDA_SUCCESS);
	from = fake_log_count();
	ASSERT_EQ(cuMemsetD8Async(d, 1, 64, hi), CUDA_SUCCESS);
	ASSERT_EQ(cuMemsetD16Async(d, 1, 32, hi), CUDA_SUCCESS);
	ASSERT_EQ(cuMemsetD32Async(d, 1, 16, hi), CUDA_SUCCESS);
	ASSERT_EQ(cuMemsetD2D8Async(d, 64, 1, 64, 4, hi), CUDA_SUCCESS);
	ASSERT_EQ(cuMemsetD2D16Async(d, 64, 1, 32, 4, hi), CUDA_SUCCESS);
	ASSERT_EQ(cuMemsetD2D32Async(d, 64, 1, 16, 4, hi), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	n = count_kind(from, FAKE_MEMSET, URGENT, &in);
	ASSERT_EQ(n, 6);
	ASSERT_EQ(in, 6);
	ASSERT_EQ(cuMemFree(d), CUDA_SUCCESS);
}

static int host_ran;

static void host_fn(void *p)
{
	__atomic_store_n((int *)p, 1, __ATOMIC_RELEASE);
}

TEST(host_function_runs_in_the_urgent_context_after_earlier_work)
{
	CUstream hi;
	struct fake_rec k, h;

	lv3("1");
	hi = mk(-1);
	go(CK(65, 10 * MS), hi);
	ASSERT_EQ(cuLaunchHostFunc(hi, host_fn, &host_ran), CUDA_SUCCESS);
	ASSERT_TRUE(WAIT_UNTIL(__atomic_load_n(&host_ran, __ATOMIC_ACQUIRE), 2000));
	k = rec_of(65);
	h = rec_of(FAKE_HOST_FN);
	ASSERT_URGENT(h, hi);
	ASSERT_GE(h.start, k.end);
}

TEST(memory_wait_and_write_run_in_the_urgent_context)
{
	CUstream hi;
	CUdeviceptr d;
	int from, n, in;

	lv3("1");
	hi = mk(-1);
	ASSERT_EQ(cuMemAlloc(&d, 64), CUDA_SUCCESS);
	from = fake_log_count();
	ASSERT_EQ(cuStreamWriteValue32(hi, d, 1, 0), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamWaitValue32(hi, d, 1, CU_STREAM_WAIT_VALUE_GEQ), CUDA_SUCCESS);
	go(CK(66, 0), hi);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	n = count_kind(from, FAKE_WRITE_VALUE, URGENT, &in);
	ASSERT_EQ(n, 1);
	ASSERT_EQ(in, 1);
	n = count_at(from, FAKE_WAIT_VALUE, (void *)(uintptr_t)d, URGENT, &in);
	ASSERT_EQ(n, 1);	/* the program's (the gather's waits are on its own word) */
	ASSERT_EQ(in, 1);
	ASSERT_URGENT(rec_of(66), hi);
	ASSERT_EQ(cuMemFree(d), CUDA_SUCCESS);
}

/* A graph launched on the twin keeps the stream's order; the driver runs
 * it in the context it was instantiated in (the program's). */
TEST(graph_launch_on_an_urgent_stream_keeps_its_order)
{
	CUstream hi, lo;
	CUgraph g;
	CUgraphExec x;
	struct fake_rec r;

	lv3("1");
	hi = mk(-1);
	lo = mk(0);
	ASSERT_EQ(cuStreamBeginCapture(lo, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	go(K(67, 2 * MS), lo);
	go(CK(68, 3 * MS), lo);
	ASSERT_EQ(cuStreamEndCapture(lo, &g), CUDA_SUCCESS);
	ASSERT_EQ(cuGraphInstantiate(&x, g, 0), CUDA_SUCCESS);
	go(CK(226, 4 * MS), hi);
	ASSERT_EQ(cuGraphLaunch(x, hi), CUDA_SUCCESS);
	go(CK(227, 1 * MS), hi);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	ASSERT_URGENT(rec_of(226), hi);
	r = rec_of(FAKE_GRAPH);
	ASSERT_EQ(r.stream, rec_of(226).stream);	/* on the twin */
	ASSERT_EQ(r.ctx, 0);			/* run by the program's context */
	ASSERT_EQ(r.nodes, 2);
	ASSERT_EQ(r.end - r.start, 5 * MS);
	ASSERT_GE(r.start, rec_of(226).end);
	ASSERT_GE(rec_of(227).start, r.end);
}

/* ---- synchronize, query, destroy, capture ---- */

TEST(stream_synchronize_and_query_of_an_urgent_stream_cover_its_twin)
{
	CUstream hi;

	lv3("1");
	hi = mk(-1);
	go(CK(80, 100 * MS), hi);
	ASSERT_URGENT(rec_of(80), hi);
	ASSERT_EQ(cuStreamQuery(hi), CUDA_ERROR_NOT_READY);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	ASSERT_GE(fake_now(), rec_of(80).end);
	ASSERT_EQ(cuStreamQuery(hi), CUDA_SUCCESS);
}

TEST(per_thread_synchronize_and_query_of_an_urgent_stream_cover_its_twin)
{
	CUstream hi;

	lv3("1");
	hi = mk(-1);
	go(CK(100, 100 * MS), hi);
	ASSERT_URGENT(rec_of(100), hi);
	ASSERT_EQ(cuStreamQuery_ptsz(hi), CUDA_ERROR_NOT_READY);
	ASSERT_EQ(cuStreamSynchronize_ptsz(hi), CUDA_SUCCESS);
	ASSERT_GE(fake_now(), rec_of(100).end);
}

TEST(ctx_synchronize_covers_the_urgent_context)
{
	CUstream hi;

	lv3("1");
	hi = mk(-1);
	go(CK(81, 100 * MS), hi);
	ASSERT_URGENT(rec_of(81), hi);
	ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
	ASSERT_GE(fake_now(), rec_of(81).end);
}

/* CUDA 12.9's cuCtxSynchronize_v2 names the context: the program's own,
 * given explicitly, covers its urgent context as NULL does. */
TEST(ctx_synchronize_v2_of_a_named_context_covers_the_urgent_context)
{
	CUcontext cur;
	CUstream hi;

	lv3("1");
	hi = mk(-1);
	ASSERT_EQ(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
	go(CK(222, 100 * MS), hi);
	ASSERT_URGENT(rec_of(222), hi);
	ASSERT_EQ(cuCtxSynchronize_v2(cur), CUDA_SUCCESS);
	ASSERT_GE(fake_now(), rec_of(222).end);
	go(CK(223, 100 * MS), hi);
	ASSERT_URGENT(rec_of(223), hi);
	ASSERT_EQ(cuCtxSynchronize_v2(NULL), CUDA_SUCCESS);
	ASSERT_GE(fake_now(), rec_of(223).end);
}

/* A context synchronize ends the bursts of its own context's urgent streams
 * only (another context's leaves their work running).  In mode auto the
 * first burst runs natively and the second gathered: where a launch lands
 * tells which burst it is in. */
TEST(ctx_synchronize_ends_only_its_own_contexts_bursts)
{
	CUcontext b, old;
	CUstream hi;

	lv3("1");
	setenv("XSCHED_CUDA_LV3_MODE", "auto", 1);
	hi = mk(-1);
	ASSERT_EQ(cuCtxCreate(&b, NULL, 0, 0), CUDA_SUCCESS);
	ASSERT_EQ(cuCtxPopCurrent(&old), CUDA_SUCCESS);
	go(CK(228, MS), hi);
	ASSERT_IN_PLACE(rec_of(228), hi);	/* burst 0: native */
	ASSERT_EQ(cuCtxSynchronize_v2(b), CUDA_SUCCESS);
	ASSERT_EQ(cuCtxPushCurrent(b), CUDA_SUCCESS);
	ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
	ASSERT_EQ(cuCtxPopCurrent(&old), CUDA_SUCCESS);
	go(CK(229, MS), hi);
	ASSERT_IN_PLACE(rec_of(229), hi);	/* still burst 0 */
	ASSERT_EQ(cuCtxSynchronize_v2(NULL), CUDA_SUCCESS);
	go(CK(230, MS), hi);
	ASSERT_URGENT(rec_of(230), hi);		/* burst 1: gathered */
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
}

TEST(stream_destroy_leaks_no_twin)
{
	int live, events, i;

	lv3("1");
	go(CK(82, 0), mk(-1));		/* the urgent context exists */
	live = fake_live_streams();
	events = 0;
	for (i = 0; i < 21; i++) {
		CUstream hi = mk(-1 - i % 5);

		go(CK(83, 0), hi);
		ASSERT_URGENT(rec_of(83), hi);
		ASSERT_EQ(cuStreamDestroy(hi), CUDA_SUCCESS);
		if (i == 0)
			events = fake_live_events();	/* the library's own, made once */
	}
	ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
	ASSERT_EQ(fake_live_streams(), live);
	ASSERT_EQ(fake_live_events(), events);	/* nor the twins' join events */
}

TEST(stream_destroy_with_twin_work_pending_lets_it_run)
{
	CUstream hi;

	lv3("1");
	hi = mk(-1);
	go(CK(84, 150 * MS), hi);
	ASSERT_EQ(cuStreamDestroy(hi), CUDA_SUCCESS);
	ASSERT_TRUE(fake_now() < rec_of(84).end);	/* returned at once */
	ASSERT_URGENT(rec_of(84), hi);
	ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
	ASSERT_GE(fake_now(), rec_of(84).end);
}

TEST(capture_on_an_urgent_stream_records_on_the_programs_stream)
{
	CUstream hi, lo;
	CUgraph g;
	CUgraphExec x;
	CUstreamCaptureStatus st;
	CUdeviceptr d;
	struct fake_rec pre, cap, r;
	int i, joined = 0;

	lv3("1");
	hi = mk(-1);
	lo = mk(0);
	ASSERT_EQ(cuMemAlloc(&d, 64), CUDA_SUCCESS);
	go(CK(85, 20 * MS), hi);		/* the twin's earlier work */
	ASSERT_EQ(cuStreamBeginCapture(hi, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamIsCapturing(hi, &st), CUDA_SUCCESS);
	ASSERT_EQ(st, CU_STREAM_CAPTURE_STATUS_ACTIVE);
	go(CK(86, 2 * MS), hi);
	ASSERT_EQ(cuMemsetD8Async(d, 0, 64, hi), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamEndCapture(hi, &g), CUDA_SUCCESS);
	pre = rec_of(85);
	cap = rec_of(86);
	ASSERT_URGENT(pre, hi);
	ASSERT_EQ(cap.captured, 1);
	ASSERT_EQ(cap.stream, fake_stream_id(hi));
	ASSERT_EQ(cap.ctx, 0);
	/* The program's stream joined the twin's earlier work before the
	 * capture: a command on it, not captured, ending after K(85). */
	for (i = 0; i < fake_log_count(); i++) {
		fake_log_get(i, &r);
		if (r.stream == fake_stream_id(hi) && !r.captured && r.ctx == 0 &&
		    r.submit <= cap.submit && r.end >= pre.end)
			joined = 1;
	}
	ASSERT_TRUE(joined);
	ASSERT_EQ(cuGraphInstantiate(&x, g, 0), CUDA_SUCCESS);
	ASSERT_EQ(cuGraphLaunch(x, lo), CUDA_SUCCESS);
	r = rec_of(FAKE_GRAPH);
	ASSERT_EQ(r.nodes, 2);	/* the launch and the memset */
	ASSERT_IN_PLACE(r, lo);
	ASSERT_EQ(cuStreamSynchronize(lo), CUDA_SUCCESS);
	/* After the capture the stream is urgent again. */
	go(CK(87, 0), hi);
	ASSERT_URGENT(rec_of(87), hi);
	ASSERT_EQ(cuMemFree(d), CUDA_SUCCESS);
}

/* ---- Lv1 beside it ---- */

TEST(lower_stream_is_not_held_by_work_in_the_urgent_context)
{
	CUstream hi, lo;
	struct fake_rec h, r;
	CUfunction k88, k89, k90;

	lv3("1");
	hi = mk(-1);
	lo = mk(0);
	/* Loaded first: a library load waits for every context's work. */
	k88 = CK(88, 0);
	k89 = CK(89, 60 * MS);
	k90 = CK(90, MS);
	go(k90, lo);		/* its lazy load in the primary, before */
	go(k88, lo);
	go(k89, hi);
	go(k90, lo);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);	/* 89 has an end */
	h = rec_of(89);
	r = rec_of(90);
	ASSERT_URGENT(h, hi);
	ASSERT_IN_PLACE(r, lo);
	if (r.submit >= h.end)
		xt_fail(__FILE__, __LINE__, "the lower stream's launch was held until the urgent kernel in the urgent context ended (submitted %.1f ms after the urgent one's submit, its end at %.1f ms); expected not held: the driver time-slices",
			(double)(r.submit - h.submit) / 1e6, (double)(h.end - h.submit) / 1e6);
	ASSERT_LE(r.submit - h.submit, 20 * MS);
}

TEST(lower_stream_is_still_held_by_urgent_work_on_the_programs_stream)
{
	CUstream hi, lo;
	struct fake_rec h, r;

	lv3("1");
	hi = mk(-1);
	lo = mk(0);
	go(K(91, 0), lo);
	go(K(92, 40 * MS), hi);		/* uncarried: runs in the primary */
	go(K(93, MS), lo);
	h = rec_of(92);
	r = rec_of(93);
	ASSERT_IN_PLACE(h, hi);
	ASSERT_GE(r.submit, h.end);	/* Lv1 */
	ASSERT_LE(r.submit, h.end + 20 * MS);
}

/* ---- more translations ---- */

TEST(launch_arguments_reach_the_twin_unchanged)
{
	void *params[2] = { (void *)1, (void *)2 }, *extra[1] = { NULL };
	CUstream hi;
	CUfunction f;
	struct fake_rec r;

	lv3("1");
	hi = mk(-1);
	f = func_of(mod_load("fakecubin k101=0"), "k101");
	ASSERT_EQ(cuLaunchKernel(f, 7, 8, 9, 32, 2, 1, 4096, hi, params, extra), CUDA_SUCCESS);
	r = rec_of(101);
	ASSERT_URGENT(r, hi);
	ASSERT_TRUE(r.params == params);
	ASSERT_TRUE(r.extra == extra);
	ASSERT_EQ(r.grid[0], 7);
	ASSERT_EQ(r.grid[1], 8);
	ASSERT_EQ(r.grid[2], 9);
	ASSERT_EQ(r.block[0], 32);
	ASSERT_EQ(r.block[1], 2);
	ASSERT_EQ(r.smem, 4096);
	ASSERT_EQ(r.variant, FAKE_LEGACY);
}

TEST(uncarried_ex_launch_runs_on_the_programs_stream_config_unchanged)
{
	CUlaunchConfig cfg;
	CUstream hi;
	struct fake_rec r;

	lv3("1");
	hi = mk(-1);
	go(CK(102, 10 * MS), hi);
	memset(&cfg, 0, sizeof(cfg));
	cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
	cfg.blockDimX = cfg.blockDimY = cfg.blockDimZ = 1;
	cfg.hStream = hi;
	ASSERT_EQ(cuLaunchKernelEx(&cfg, K(103, MS), NULL, NULL), CUDA_SUCCESS);
	ASSERT_TRUE(cfg.hStream == hi);
	r = rec_of(103);
	ASSERT_IN_PLACE(r, hi);
	ASSERT_GE(r.start, rec_of(102).end);
}

static CUstream cb_stream;
static int cb_ran;

static void CUDA_CB stream_cb(CUstream h, CUresult st, void *p)
{
	(void)st;
	(void)p;
	cb_stream = h;
	__atomic_store_n(&cb_ran, 1, __ATOMIC_RELEASE);
}

TEST(stream_callback_gets_the_programs_stream)
{
	CUstream hi;

	lv3("1");
	hi = mk(-1);
	go(CK(104, 5 * MS), hi);
	ASSERT_EQ(cuStreamAddCallback(hi, stream_cb, NULL, 0), CUDA_SUCCESS);
	ASSERT_TRUE(WAIT_UNTIL(__atomic_load_n(&cb_ran, __ATOMIC_ACQUIRE), 2000));
	ASSERT_URGENT(rec_of(FAKE_HOST_FN), hi);
	if (cb_stream != hi)
		xt_fail(__FILE__, __LINE__, "the callback got stream %p (fake id %d); expected the program's %p (fake id %d)",
			(void *)cb_stream, fake_stream_id(cb_stream), (void *)hi, fake_stream_id(hi));
}

TEST(event_recorded_after_an_uncarried_launch_covers_it)
{
	CUstream hi, lo;
	CUevent e;

	/* Holds off: the lower stream's wait is the event's alone (a hold by
	 * the urgent stream's work would order it anyway). */
	setenv("XSCHED_CUDA_HOLD", "0", 1);
	lv3("1");
	hi = mk(-1);
	lo = mk(0);
	ASSERT_EQ(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
	go(CK(105, 0), hi);		/* the twin exists */
	go(K(106, 20 * MS), hi);	/* on the program's stream */
	ASSERT_EQ(cuEventRecord(e, hi), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamWaitEvent(lo, e, 0), CUDA_SUCCESS);
	go(CK(107, 0), lo);
	ASSERT_IN_PLACE(rec_of(106), hi);
	ASSERT_GE(rec_of(107).start, rec_of(106).end);
	ASSERT_EQ(cuEventSynchronize(e), CUDA_SUCCESS);
	ASSERT_GE(fake_now(), rec_of(106).end);
}

TEST(urgent_stream_joined_to_a_capture_records_into_it)
{
	CUstream hi, lo;
	CUevent fork_, join;
	CUgraph g;
	CUgraphExec x;
	struct fake_rec r;

	lv3("1");
	hi = mk(-1);
	lo = mk(0);
	ASSERT_EQ(cuEventCreate(&fork_, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
	ASSERT_EQ(cuEventCreate(&join, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
	go(CK(108, 0), hi);		/* the twin exists and has worked */
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	/* As PyTorch captures a side stream: fork into it, join back. */
	ASSERT_EQ(cuStreamBeginCapture(lo, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	go(CK(109, MS), lo);
	ASSERT_EQ(cuEventRecord(fork_, lo), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamWaitEvent(hi, fork_, 0), CUDA_SUCCESS);
	go(CK(110, 2 * MS), hi);
	ASSERT_EQ(cuEventRecord(join, hi), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamWaitEvent(lo, join, 0), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamEndCapture(lo, &g), CUDA_SUCCESS);
	r = rec_of(110);
	ASSERT_EQ(r.captured, 1);
	ASSERT_EQ(r.stream, fake_stream_id(hi));
	ASSERT_EQ(r.ctx, 0);
	ASSERT_EQ(cuGraphInstantiate(&x, g, 0), CUDA_SUCCESS);
	ASSERT_EQ(cuGraphLaunch(x, lo), CUDA_SUCCESS);
	r = rec_of(FAKE_GRAPH);
	ASSERT_EQ(r.end - r.start, 3 * MS);	/* both launches are in the graph */
	/* After the capture, hi's work goes to the urgent context again. */
	go(CK(111, 0), hi);
	ASSERT_URGENT(rec_of(111), hi);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
}

TEST(destroyed_urgent_handles_reused_by_lowest_streams_stay_put)
{
	CUstream hi, a, b;

	lv3("1");
	hi = mk(-1);
	go(CK(112, 0), hi);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamDestroy(hi), CUDA_SUCCESS);
	a = mk(0);		/* the fake hands destroyed handles out again */
	b = mk(0);
	go(CK(113, 0), a);
	go(CK(114, 0), b);
	ASSERT_TRUE(a == hi || b == hi);
	ASSERT_IN_PLACE(rec_of(113), a);
	ASSERT_IN_PLACE(rec_of(114), b);
}

TEST(event_destroy_leaks_no_twin_event)
{
	CUstream hi;
	int live = 0, i;

	lv3("1");
	hi = mk(-1);
	for (i = 0; i < 21; i++) {
		CUevent e;

		ASSERT_EQ(cuEventCreate(&e, 0), CUDA_SUCCESS);
		go(CK(115, 0), hi);
		ASSERT_EQ(cuEventRecord(e, hi), CUDA_SUCCESS);
		ASSERT_EQ(cuEventSynchronize(e), CUDA_SUCCESS);
		ASSERT_EQ(cuEventDestroy(e), CUDA_SUCCESS);
		if (i == 0)
			live = fake_live_events();	/* the library's own, made once */
	}
	ASSERT_TWIN_EVENT();
	ASSERT_EQ(fake_live_events(), live);
}

TEST(module_unload_unloads_its_twin)
{
	CUstream hi;
	CUmodule m;

	lv3("1");
	hi = mk(-1);
	m = mod_load("fakecubin k116=0");
	go(func_of(m, "k116"), hi);
	ASSERT_URGENT(rec_of(116), hi);
	ASSERT_EQ(fake_module_count(URGENT), 1);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	ASSERT_EQ(cuModuleUnload(m), CUDA_SUCCESS);
	ASSERT_EQ(fake_module_count(URGENT), 0);
}

TEST(sm_split_leaves_the_urgent_context_off)
{
	CUstream hi;

	lv3("1");
	setenv("XSCHED_CUDA_SM_SPLIT", "16", 1);
	hi = mk(-1);
	go(CK(117, 0), hi);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	ASSERT_EQ(fake_ctx_count(), 0);
	ASSERT_EQ(rec_of(117).ctx, 0);
	ASSERT_EQ(rec_of(117).stream, fake_stream_id(hi));
}

TEST(module_loaded_from_a_file_is_carried)
{
	char path[] = "/tmp/xc-urgent-cubin-XXXXXX";
	static const char img[] = "fakecubin k118=1000";
	int fd = mkstemp(path);
	CUstream hi;
	CUmodule m = NULL;

	lv3("1");
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(write(fd, img, sizeof(img)), (long)sizeof(img));
	close(fd);
	hi = mk(-1);
	ASSERT_EQ(cuModuleLoad(&m, path), CUDA_SUCCESS);
	unlink(path);		/* the library has its own copy by now */
	go(func_of(m, "k118"), hi);
	ASSERT_URGENT(rec_of(118), hi);
	ASSERT_EQ(rec_of(118).fn, FAKE_FN_MODULE);
}

/* How many commands of kernel @id reached the driver. */
static int kernel_records(int id)
{
	struct fake_rec r;
	int i, n = 0;

	for (i = 0; i < fake_log_count(); i++) {
		fake_log_get(i, &r);
		n += r.kernel == id;
	}
	return n;
}

TEST(launch_of_an_unloaded_modules_function_fails_as_without_lv3)
{
	CUstream hi;
	CUmodule m;
	CUfunction f;
	int n;

	lv3("1");
	hi = mk(-1);
	m = mod_load("fakecubin k119=0");
	f = func_of(m, "k119");
	go(f, hi);		/* its twin exists */
	ASSERT_URGENT(rec_of(119), hi);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	ASSERT_EQ(cuModuleUnload(m), CUDA_SUCCESS);
	n = kernel_records(119);
	ASSERT_EQ(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, hi, NULL, NULL),
		  CUDA_ERROR_INVALID_HANDLE);
	ASSERT_EQ(kernel_records(119), n);	/* nothing ran (a join may be logged) */
}

TEST(function_of_a_librarys_module_runs_as_its_kernel)
{
	CUstream hi;
	CUlibrary l;
	CUmodule m = NULL;
	struct fake_rec r;

	lv3("1");
	hi = mk(-1);
	l = lib_load("fakecubin k120=1000 k121=1000");
	ASSERT_EQ(cuLibraryGetModule(&m, l), CUDA_SUCCESS);
	go(func_of(m, "k120"), hi);
	r = rec_of(120);
	ASSERT_URGENT(r, hi);
	ASSERT_EQ(r.fn, FAKE_FN_KERNEL);
}

TEST(attribute_of_a_cukernels_function_reaches_its_kernel)
{
	CUstream hi;
	CUfunction ck, f = NULL;

	lv3("1");
	hi = mk(-1);
	ck = CK(122, 0);
	ASSERT_EQ(cuKernelGetFunction(&f, (CUkernel)ck), CUDA_SUCCESS);
	ASSERT_EQ(cuFuncSetAttribute(f, SMEM_ATTR, 100000), CUDA_SUCCESS);
	ASSERT_EQ(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 80000, hi, NULL, NULL), CUDA_SUCCESS);
	ASSERT_URGENT(rec_of(122), hi);
	ASSERT_EQ(rec_of(122).smem, 80000);
}

struct thr {
	CUstream hi;
	int cur;
};

static void *urgent_thread(void *p)
{
	struct thr *t = p;

	go(CK(123, MS), t->hi);
	ASSERT_EQ(cuStreamSynchronize(t->hi), CUDA_SUCCESS);
	t->cur = fake_ctx_current();
	return NULL;
}

TEST(urgent_calls_from_another_thread_leave_its_context_current)
{
	struct thr t;
	pthread_t th;

	lv3("1");
	t.hi = mk(-1);
	t.cur = -2;
	ASSERT_EQ(pthread_create(&th, NULL, urgent_thread, &t), 0);
	ASSERT_EQ(pthread_join(th, NULL), 0);
	ASSERT_URGENT(rec_of(123), t.hi);
	ASSERT_EQ(t.cur, 0);
	ASSERT_EQ(fake_ctx_current(), 0);
}

TEST(module_loaded_at_an_unloaded_modules_address_is_carried)
{
	CUstream hi;
	CUmodule a, b;
	CUfunction fa, fb;

	lv3("1");
	hi = mk(-1);
	a = mod_load("fakecubin k124=0");
	fa = func_of(a, "k124");
	go(fa, hi);
	ASSERT_URGENT(rec_of(124), hi);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	ASSERT_EQ(cuModuleUnload(a), CUDA_SUCCESS);
	b = mod_load("fakecubin k125=2000000");
	fb = func_of(b, "k125");
	ASSERT_TRUE(b == a && fb == fa);	/* the driver hands the addresses out again */
	go(fb, hi);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	ASSERT_URGENT(rec_of(125), hi);
	ASSERT_EQ(rec_of(125).end - rec_of(125).start, 2 * MS);
}

TEST(attribute_set_after_the_first_urgent_launch_reaches_a_librarys_kernel)
{
	CUstream hi;
	CUmodule m = NULL;
	CUfunction f;

	lv3("1");
	hi = mk(-1);
	ASSERT_EQ(cuLibraryGetModule(&m, lib_load("fakecubin k126=0")), CUDA_SUCCESS);
	f = func_of(m, "k126");
	go(f, hi);		/* resolved: runs as the library's CUkernel */
	ASSERT_URGENT(rec_of(126), hi);
	ASSERT_EQ(cuFuncSetAttribute(f, SMEM_ATTR, 100000), CUDA_SUCCESS);
	ASSERT_EQ(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 80000, hi, NULL, NULL), CUDA_SUCCESS);
	ASSERT_URGENT(rec_of(126), hi);
	ASSERT_EQ(rec_of(126).smem, 80000);
}
