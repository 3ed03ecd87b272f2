// SPDX-License-Identifier: MIT
/* Description: the urgent context's gather (cuda/gather.c) and mode choice (interpose/mode.c). */
/*
 * Host tests of the urgent context (XSCHED_CUDA_LV3, issue 24) against the
 * fake libcuda (fake_libcuda.h: contexts, modules, libraries, events and
 * graphs as the real driver has them across contexts): the work of a
 * stream above the lowest priority runs on a twin stream in a context the
 * library owns, the program's handles unchanged.  Linked into test_cuda
 * (its main runs these too); each test runs in its own forked process and
 * sets XSCHED_CUDA_LV3 before its first CUDA call.
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

/* ---- the gather (cuda/gather.c) and the mode choice (interpose/mode.c) ---- */

TEST(gathered_burst_starts_at_its_synchronize)
{
	CUstream hi;
	CUfunction a, b;
	int in;

	lv3("1");
	slow_watchdog();
	hi = mk(-1);
	a = CK(200, MS);
	b = CK(201, MS);
	go(a, hi);		/* the first launch of each is not gathered (it loads) */
	go(b, hi);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	go(a, hi);
	go(b, hi);
	usleep(10000);		/* 5 modelled kernels' time */
	ASSERT_TRUE(rec_of(200).pending && rec_of(201).pending);
	ASSERT_GE(count_kind(0, FAKE_WAIT_VALUE, URGENT, &in), 1);	/* the gate */
	ASSERT_EQ(in, count_kind(0, FAKE_WAIT_VALUE, URGENT, &in));
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	ASSERT_TRUE(!rec_of(200).pending && !rec_of(201).pending);
	ASSERT_GE(rec_of(201).start, rec_of(200).end);
}

/* A gate closed while another thread opens the gates (the test seam opens
 * them between the two steps of the close) is still seen: its stream's
 * synchronize does not wait for ever (it did, on an H100). */
TEST(gate_closed_beside_an_opening_is_never_left_unseen)
{
	CUstream hi1, hi2;
	CUfunction a, b;
	double t0;

	lv3("1");
	slow_watchdog();
	hi1 = mk(-1);
	hi2 = mk(-1);
	a = CK(204, MS);
	b = CK(205, MS);
	go(a, hi1);		/* the first launches load: not gathered */
	go(b, hi2);
	ASSERT_EQ(cuStreamSynchronize(hi1), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamSynchronize(hi2), CUDA_SUCCESS);
	go(a, hi1);		/* a gate is closed */
	setenv("XSCHED_TEST_OPEN_IN_CLOSE", "1", 1);
	go(b, hi2);		/* another closes while they open */
	unsetenv("XSCHED_TEST_OPEN_IN_CLOSE");
	t0 = now_ms();
	ASSERT_EQ(cuStreamSynchronize(hi2), CUDA_SUCCESS);
	ASSERT_LE(now_ms() - t0, 5000.0);	/* not the watchdog's 20 s, not for ever */
	ASSERT_EQ(cuStreamSynchronize(hi1), CUDA_SUCCESS);
}

static void CUDA_CB set_flag(void *p)
{
	__atomic_store_n((int *)p, 1, __ATOMIC_RELEASE);
}

/* A host node of a graph may be what the program waits for, spinning on
 * memory it writes: the graph is not gathered (it waited for the
 * watchdog). */
TEST(graph_with_a_host_node_is_not_gathered)
{
	CUstream hi, lo;
	CUgraph g;
	CUgraphExec x;
	CUfunction f;
	static int flag;
	double t0;

	lv3("1");
	slow_watchdog();
	hi = mk(-1);
	lo = mk(0);
	ASSERT_EQ(cuStreamBeginCapture(lo, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	go(K(224, MS), lo);
	ASSERT_EQ(cuLaunchHostFunc(lo, set_flag, &flag), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamEndCapture(lo, &g), CUDA_SUCCESS);
	ASSERT_EQ(cuGraphInstantiate(&x, g, 0), CUDA_SUCCESS);
	f = CK(225, MS);
	go(f, hi);		/* the first launch loads: not gathered */
	go(f, hi);		/* a gathered burst */
	ASSERT_EQ(cuGraphLaunch(x, hi), CUDA_SUCCESS);
	t0 = now_ms();
	while (!__atomic_load_n(&flag, __ATOMIC_ACQUIRE) && now_ms() - t0 < 5000)
		usleep(1000);
	ASSERT_TRUE(__atomic_load_n(&flag, __ATOMIC_ACQUIRE));
	ASSERT_LE(now_ms() - t0, 1000.0);	/* not the watchdog's 20 s */
	ASSERT_GE(rec_of(FAKE_GRAPH).start, rec_of(225).end);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
}

TEST(first_launch_of_a_function_is_not_gathered)
{
	CUstream hi;
	CUfunction a, b;
	double t0;

	lv3("1");
	slow_watchdog();
	hi = mk(-1);
	a = CK(202, MS);
	b = CK(203, MS);
	go(a, hi);
	go(a, hi);		/* gathered from here */
	t0 = now_ms();
	go(b, hi);		/* loads b, which waits for the context's work */
	ASSERT_LE(now_ms() - t0, 1000.0);
	usleep(10000);
	ASSERT_TRUE(!rec_of(203).pending);	/* and b is not held back */
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
}

TEST(code_loads_beside_a_gathered_burst_open_the_gates)
{
	CUstream hi;
	CUfunction a, f;
	CUmodule m;
	double t0;

	lv3("1");
	slow_watchdog();
	hi = mk(-1);
	a = CK(216, MS);
	m = mod_load("fakecubin k217=0");
	f = func_of(m, "k217");
	go(a, hi);
	go(a, hi);
	t0 = now_ms();
	(void)CK(218, 0);	/* a library load waits for every context's work */
	ASSERT_LE(now_ms() - t0, 1000.0);
	go(a, hi);
	t0 = now_ms();
	go(f, hi);		/* its module loaded again in the urgent context */
	ASSERT_LE(now_ms() - t0, 1000.0);
	ASSERT_URGENT(rec_of(217), hi);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
}

TEST(copy_with_host_memory_opens_the_gates_first)
{
	CUstream hi;
	CUdeviceptr d;
	char buf[64];
	double t0;
	CUfunction f;

	lv3("1");
	slow_watchdog();
	hi = mk(-1);
	ASSERT_EQ(cuMemAlloc(&d, sizeof(buf)), CUDA_SUCCESS);
	f = CK(204, MS);
	go(f, hi);
	go(f, hi);
	t0 = now_ms();
	/* Pageable: the driver returns when the copy ended. */
	ASSERT_EQ(cuMemcpyDtoHAsync(buf, d, sizeof(buf), hi), CUDA_SUCCESS);
	ASSERT_LE(now_ms() - t0, 1000.0);
	ASSERT_TRUE(!rec_of(204).pending);
	ASSERT_EQ(cuMemFree(d), CUDA_SUCCESS);
}

TEST(lower_stream_synchronize_opens_only_what_it_waits_for)
{
	CUstream hi, lo;
	CUevent e;
	CUfunction f;
	double t0;

	lv3("1");
	slow_watchdog();
	hi = mk(-1);
	lo = mk(0);
	ASSERT_EQ(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
	f = CK(205, MS);
	go(f, hi);
	go(f, hi);
	go(K(206, 0), lo);
	ASSERT_EQ(cuStreamSynchronize(lo), CUDA_SUCCESS);
	ASSERT_TRUE(rec_of(205).pending);	/* a batch thread's wait leaves it */
	ASSERT_EQ(cuEventRecord(e, hi), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamWaitEvent(lo, e, 0), CUDA_SUCCESS);
	go(K(207, 0), lo);
	t0 = now_ms();
	ASSERT_EQ(cuStreamSynchronize(lo), CUDA_SUCCESS);	/* now it waits for it */
	ASSERT_LE(now_ms() - t0, 1000.0);
	ASSERT_TRUE(!rec_of(205).pending);
	ASSERT_GE(rec_of(207).start, rec_of(205).end);
}

TEST(watchdog_starts_a_burst_nobody_waits_for)
{
	CUstream hi;
	CUfunction f;
	FILE *err;

	lv3("1");
	setenv("XSCHED_CUDA_GATHER_MAX_MS", "30", 1);
	setenv("XSCHED_LOG", "info", 1);
	err = err_capture();
	hi = mk(-1);
	f = CK(208, MS);
	go(f, hi);
	go(f, hi);
	usleep(200000);
	ASSERT_TRUE(!rec_of(208).pending);
	ASSERT_EQ(lines_with(err_read(err), "watchdog", "XSCHED_CUDA_GATHER_MAX_MS", NULL), 1);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
}

TEST(gate_opens_before_the_drivers_queue_could_fill)
{
	CUstream hi;
	CUfunction f;
	int i, first = -1;
	struct fake_rec r;

	lv3("1");
	slow_watchdog();
	hi = mk(-1);
	f = CK(209, 0);
	go(f, hi);
	for (i = 0; i < 300; i++) {
		if (i == 1)
			first = fake_log_count();
		go(f, hi);
	}
	usleep(5000);
	ASSERT_EQ(fake_log_get(first, &r), 0);
	ASSERT_EQ(r.kernel, 209);
	ASSERT_TRUE(!r.pending);	/* 256 calls behind a gate open it */
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
}

TEST(mode_ctx_gathers_nothing)
{
	CUstream hi;
	CUfunction f;
	int in;

	lv3("1");
	setenv("XSCHED_CUDA_LV3_MODE", "ctx", 1);
	hi = mk(-1);
	f = CK(210, MS);
	go(f, hi);
	go(f, hi);
	usleep(10000);
	ASSERT_URGENT(rec_of(210), hi);
	ASSERT_TRUE(!rec_of(210).pending);
	ASSERT_EQ(count_kind(0, FAKE_WAIT_VALUE, URGENT, &in), 0);
}

/* Without the gather (no pinned memory for its gate) the urgent context
 * still runs: ctx is a mode of its own, not the gather's. */
TEST(mode_ctx_runs_with_the_gather_off)
{
	CUstream hi;
	CUfunction f;
	FILE *err;

	lv3("1");
	setenv("XSCHED_CUDA_LV3_MODE", "ctx", 1);
	fake_fail_host_alloc(1);
	err = err_capture();
	hi = mk(-1);
	f = CK(217, MS);
	go(f, hi);
	go(f, hi);
	usleep(10000);
	ASSERT_EQ(lines_with(err_read(err), "gather", "pinned memory", NULL), 1);
	ASSERT_URGENT(rec_of(217), hi);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
}

TEST(mode_native_runs_in_place_and_holds_nothing_lv1_holds)
{
	CUstream hi, lo;
	struct fake_rec h, r;
	int m;

	for (m = 0; m < 2; m++) {
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			lv3("1");
			setenv("XSCHED_CUDA_LV3_MODE", m ? "lv1" : "native", 1);
			hi = mk(-1);
			lo = mk(0);
			go(K(211, 0), lo);
			go(CK(212, 40 * MS), hi);
			go(K(213, MS), lo);
			h = rec_of(212);
			r = rec_of(213);
			ASSERT_IN_PLACE(h, hi);
			if (m)
				ASSERT_GE(r.submit, h.end);	/* held */
			else
				ASSERT_LE(r.submit, h.start + 20 * MS);
			_exit(0);
		}
		ASSERT_EQ(waitpid(pid, &st, 0), pid);
		ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
}

TEST(mode_auto_measures_each_mode_in_turn_in_stream_order)
{
	CUstream hi;
	CUfunction f;
	struct fake_rec r[4];
	int i, first[4];

	lv3("1");
	unsetenv("XSCHED_CUDA_LV3_MODE");
	hi = mk(-1);
	f = CK(214, MS);
	for (i = 0; i < 4; i++) {	/* native, ctx, gather, lv1 */
		first[i] = fake_log_count();
		go(f, hi);
		go(f, hi);
		ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	}
	for (i = 0; i < 4; i++) {
		int j = first[i];

		do
			ASSERT_EQ(fake_log_get(j++, &r[i]), 0);
		while (r[i].kernel != 214);
	}
	ASSERT_IN_PLACE(r[0], hi);
	ASSERT_URGENT(r[1], hi);
	ASSERT_URGENT(r[2], hi);
	ASSERT_IN_PLACE(r[3], hi);
	for (i = 1; i < 4; i++)
		ASSERT_GE(r[i].start, r[i - 1].end);
}

/* @var=@val is told once as a config error; the urgent stream still runs. */
static void bad_value_is_told(const char *var, const char *val, int id)
{
	FILE *err;
	CUstream hi;

	lv3("1");
	setenv(var, val, 1);
	err = err_capture();
	hi = mk(-1);
	go(CK(id, 0), hi);
	ASSERT_EQ(lines_with(err_read(err), var, val, NULL), 1);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
}

TEST(mode_bad_value_is_a_config_error)
{
	bad_value_is_told("XSCHED_CUDA_LV3_MODE", "fastest", 215);
}

TEST(price_bad_value_is_a_config_error)
{
	bad_value_is_told("XSCHED_CUDA_LV3_PRICE", "cheap", 216);
}

TEST(mode_auto_bursts_end_at_an_event_synchronize_too)
{
	CUstream hi;
	CUfunction f;
	CUevent e;
	struct fake_rec r;
	int i, from;

	lv3("1");
	unsetenv("XSCHED_CUDA_LV3_MODE");
	hi = mk(-1);
	ASSERT_EQ(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
	f = CK(219, MS);
	go(f, hi);		/* burst 0: native */
	ASSERT_EQ(cuEventRecord(e, hi), CUDA_SUCCESS);
	ASSERT_EQ(cuEventSynchronize(e), CUDA_SUCCESS);
	from = fake_log_count();
	go(f, hi);		/* burst 1: in the urgent context */
	for (i = from; fake_log_get(i, &r) == 0 && r.kernel != 219; i++)
		;
	ASSERT_URGENT(r, hi);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
}

TEST(synchronous_copy_after_a_dependence_opens_the_gates)
{
	CUstream hi;
	CUevent e;
	CUfunction f;
	CUdeviceptr d;
	char buf[16];
	double t0;

	lv3("1");
	slow_watchdog();
	hi = mk(-1);
	ASSERT_EQ(cuMemAlloc(&d, sizeof(buf)), CUDA_SUCCESS);
	ASSERT_EQ(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
	f = CK(220, MS);
	go(f, hi);
	go(f, hi);
	ASSERT_EQ(cuEventRecord(e, hi), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamWaitEvent(CU_STREAM_LEGACY, e, 0), CUDA_SUCCESS);
	t0 = now_ms();
	/* On the legacy stream, after its wait for the gathered kernels. */
	ASSERT_EQ(cuMemcpyDtoH(buf, d, sizeof(buf)), CUDA_SUCCESS);
	ASSERT_LE(now_ms() - t0, 1000.0);
	ASSERT_TRUE(!rec_of(220).pending);
	ASSERT_EQ(cuMemFree(d), CUDA_SUCCESS);
}

TEST(mode_auto_bursts_end_at_a_context_synchronize_too)
{
	CUstream hi;
	CUfunction f;
	struct fake_rec r;
	int i, from;

	lv3("1");
	unsetenv("XSCHED_CUDA_LV3_MODE");
	hi = mk(-1);
	f = CK(221, MS);
	go(f, hi);		/* burst 0: native */
	ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
	from = fake_log_count();
	go(f, hi);		/* burst 1: in the urgent context */
	for (i = from; fake_log_get(i, &r) == 0 && r.kernel != 221; i++)
		;
	ASSERT_URGENT(r, hi);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
}
