// SPDX-License-Identifier: MIT
/* Description: the urgent context's events: records and waits order streams across the two contexts. */
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

/* ---- events ---- */

TEST(event_recorded_on_an_urgent_stream_orders_a_lower_stream)
{
	CUstream hi, lo;
	CUevent e;
	struct fake_rec a, b;

	lv3("1");
	hi = mk(-1);
	lo = mk(0);
	ASSERT_EQ(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
	go(CK(69, 20 * MS), hi);
	ASSERT_EQ(cuEventRecord(e, hi), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamWaitEvent(lo, e, 0), CUDA_SUCCESS);
	go(CK(70, MS), lo);
	a = rec_of(69);
	b = rec_of(70);
	ASSERT_URGENT(a, hi);
	ASSERT_IN_PLACE(b, lo);
	ASSERT_GE(b.start, a.end);
	ASSERT_TWIN_EVENT();	/* the twin event's record */
}

TEST(event_record_with_flags_on_an_urgent_stream_orders_a_lower_stream)
{
	CUstream hi, lo;
	CUevent e;

	lv3("1");
	hi = mk(-1);
	lo = mk(0);
	ASSERT_EQ(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
	go(CK(71, 20 * MS), hi);
	ASSERT_EQ(cuEventRecordWithFlags(e, hi, 0), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamWaitEvent(lo, e, 0), CUDA_SUCCESS);
	go(CK(72, MS), lo);
	ASSERT_URGENT(rec_of(71), hi);
	ASSERT_TWIN_EVENT();
	ASSERT_GE(rec_of(72).start, rec_of(71).end);
}

TEST(urgent_stream_waits_an_event_of_a_lower_stream)
{
	CUstream hi, lo;
	CUevent e;
	struct fake_rec a, b;

	lv3("1");
	hi = mk(-1);
	lo = mk(0);
	ASSERT_EQ(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
	go(CK(73, 20 * MS), lo);
	ASSERT_EQ(cuEventRecord(e, lo), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamWaitEvent(hi, e, 0), CUDA_SUCCESS);
	go(CK(74, MS), hi);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	a = rec_of(73);
	b = rec_of(74);
	ASSERT_IN_PLACE(a, lo);
	ASSERT_URGENT(b, hi);
	ASSERT_GE(b.start, a.end);
}

TEST(event_wait_between_two_urgent_streams_is_kept)
{
	CUstream h1, h2;
	CUevent e;

	lv3("1");
	h1 = mk(-1);
	h2 = mk(-2);
	ASSERT_EQ(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
	go(CK(75, 20 * MS), h1);
	ASSERT_EQ(cuEventRecord(e, h1), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamWaitEvent(h2, e, 0), CUDA_SUCCESS);
	go(CK(76, MS), h2);
	ASSERT_URGENT(rec_of(76), h2);
	ASSERT_GE(rec_of(76).start, rec_of(75).end);
}

TEST(event_synchronize_query_and_elapsed_time_follow_the_urgent_record)
{
	CUstream hi;
	CUevent a, b;
	float ms = 0;

	lv3("1");
	hi = mk(-1);
	ASSERT_EQ(cuEventCreate(&a, 0), CUDA_SUCCESS);
	ASSERT_EQ(cuEventCreate(&b, 0), CUDA_SUCCESS);
	go(CK(77, 0), hi);
	ASSERT_EQ(cuEventRecord(a, hi), CUDA_SUCCESS);
	go(CK(78, 30 * MS), hi);
	ASSERT_EQ(cuEventRecord(b, hi), CUDA_SUCCESS);
	ASSERT_URGENT(rec_of(78), hi);
	ASSERT_TWIN_EVENT();
	ASSERT_EQ(cuEventQuery(b), CUDA_ERROR_NOT_READY);
	ASSERT_EQ(cuEventSynchronize(b), CUDA_SUCCESS);
	ASSERT_GE(fake_now(), rec_of(78).end);
	ASSERT_EQ(cuEventQuery(b), CUDA_SUCCESS);
	ASSERT_EQ(cuEventElapsedTime(&ms, a, b), CUDA_SUCCESS);
	ASSERT_GE(ms * 1000, 29900);	/* the kernel between them, and the gap */
	ASSERT_LE(ms * 1000, 60000);	/* between two calls of this thread */
}

TEST(event_uses_its_last_record_whichever_context)
{
	CUstream hi, lo;
	CUevent e, s;
	float ms = 0;

	lv3("1");
	hi = mk(-1);
	lo = mk(0);
	ASSERT_EQ(cuEventCreate(&e, 0), CUDA_SUCCESS);
	ASSERT_EQ(cuEventCreate(&s, 0), CUDA_SUCCESS);
	/* Recorded on the urgent stream behind a long kernel, then again on an
	 * idle lower stream: the last record is done. */
	go(CK(79, 200 * MS), hi);
	ASSERT_EQ(cuEventRecord(e, hi), CUDA_SUCCESS);
	ASSERT_URGENT(rec_of(79), hi);
	ASSERT_TWIN_EVENT();
	ASSERT_EQ(cuEventQuery(e), CUDA_ERROR_NOT_READY);
	ASSERT_EQ(cuEventRecord(e, lo), CUDA_SUCCESS);
	ASSERT_EQ(cuEventQuery(e), CUDA_SUCCESS);
	ASSERT_EQ(cuEventSynchronize(e), CUDA_SUCCESS);
	ASSERT_TRUE(fake_now() < rec_of(79).end);
	/* And back: recorded on the urgent stream last. */
	ASSERT_EQ(cuEventRecord(s, lo), CUDA_SUCCESS);
	ASSERT_EQ(cuEventRecord(e, hi), CUDA_SUCCESS);
	ASSERT_EQ(cuEventQuery(e), CUDA_ERROR_NOT_READY);
	ASSERT_EQ(cuEventSynchronize(e), CUDA_SUCCESS);
	ASSERT_GE(fake_now(), rec_of(79).end);
	/* Elapsed time between a primary record and an urgent one. */
	ASSERT_EQ(cuEventElapsedTime(&ms, s, e), CUDA_SUCCESS);
	ASSERT_GE(ms, 150.0);
}
