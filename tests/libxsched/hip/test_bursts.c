// SPDX-License-Identifier: MIT
/* Description: the hold chosen per burst of an urgent HIP stream (interpose/bursts.c). */
/*
 * Host tests of the HIP interposer's default (XSCHED_HIP_HOLD unset: each
 * burst of an urgent stream holds the lower streams or not, as measured to
 * pay) against the fake libamdhip64.so.5.  The fake runs each stream on its
 * own timeline, so a hold never shortens an urgent burst here: once each of
 * the two modes ran its first bursts (mode.c: native and lv1 in turn), the
 * choice settles on native, and lv1 is tried again only after a backoff.
 * A burst's mode shows in what it did to the lower stream: a lower launch
 * made during an lv1 burst waits for the urgent kernel's end, one made
 * during a native burst does not.  Linked into test_hip (its main runs
 * "--bursts" for bursts_logged_body()); each test runs in its own forked
 * process, and check-hip sets XSCHED_HIP_HOLD=1, which these unset.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_libamdhip64.h"
#include "harness.h"
#include "hip_helpers.h"

enum burst_end { BY_STREAM, BY_EVENT, BY_DEVICE, BY_COPY };

static int most_in_flight(int id);

#define K_URGENT 180	/* the urgent stream's kernel, 2 ms */
#define K_LOWER 181	/* a lower launch inside each burst */

/* @n bursts on @hi: a 2 ms kernel, a launch on @lo, then the end @how;
 * held[i]: burst i's lower launch reached the runtime only once the urgent
 * kernel had ended. */
static void run_bursts(hipStream_t hi, hipStream_t lo, int n, enum burst_end how, bool *held)
{
	uint64_t end[128];
	struct fake_rec r;
	hipEvent_t ev = NULL;
	int i, nu = 0, nl = 0;

	ASSERT_LE(n, 128);
	if (how == BY_EVENT)
		ASSERT_EQ(hipEventCreate(&ev), hipSuccess);
	for (i = 0; i < n; i++) {
		launch(hi, K_URGENT, 2 * MS);
		launch(lo, K_LOWER, 0);
		if (how == BY_STREAM) {
			ASSERT_EQ(hipStreamSynchronize(hi), hipSuccess);
		} else if (how == BY_EVENT) {
			ASSERT_EQ(hipEventRecord(ev, hi), hipSuccess);
			ASSERT_EQ(hipEventSynchronize(ev), hipSuccess);
		} else if (how == BY_DEVICE) {
			ASSERT_EQ(hipDeviceSynchronize(), hipSuccess);
		} else {
			char src[8] = "result", dst[8];

			ASSERT_EQ(hipMemcpyWithStream(dst, src, sizeof(dst),
						      hipMemcpyDeviceToHost, hi), hipSuccess);
		}
	}
	for (i = 0; i < fake_log_count(); i++) {
		fake_log_get(i, &r);
		if (r.kernel == K_URGENT && nu < n)
			end[nu++] = r.end;
		else if (r.kernel == K_LOWER && nl < nu) {
			held[nl] = r.submit >= end[nl];
			nl++;
		}
	}
	ASSERT_EQ(nu, n);
	ASSERT_EQ(nl, n);
	if (ev)
		ASSERT_EQ(hipEventDestroy(ev), hipSuccess);
}

static int count_held(const bool *held, int from, int to)
{
	int i, n = 0;

	for (i = from; i < to; i++)
		n += held[i];
	return n;
}

/* The choice's first bursts run each mode in turn (lv1 the 2nd to 4th, 6th
 * and 7th: five of the first eleven, and a native burst after an lv1 one
 * holds nothing, however that one ended); then native wins (holds buy
 * nothing here) and lv1 is tried once after its backoff: bursts 30-59 hold
 * the lower stream at most twice. */
static void holds_stop_where_they_buy_nothing(enum burst_end how)
{
	hipStream_t hi, lo;
	bool held[60];

	unsetenv("XSCHED_HIP_HOLD");	/* read at the first HIP call */
	hi = mk(-1);
	lo = mk(0);
	run_bursts(hi, lo, 60, how, held);
	ASSERT_EQ(count_held(held, 0, 11), 5);
	ASSERT_EQ(held[4] || held[7], false);
	ASSERT_LE(count_held(held, 30, 60), 2);
}

TEST(urgent_bursts_stop_holding_where_holds_buy_nothing)
{
	holds_stop_where_they_buy_nothing(BY_STREAM);
}

TEST(urgent_bursts_ended_by_an_event_synchronize_are_chosen_too)
{
	holds_stop_where_they_buy_nothing(BY_EVENT);
}

TEST(urgent_bursts_ended_by_a_device_synchronize_are_chosen_too)
{
	holds_stop_where_they_buy_nothing(BY_DEVICE);
}

/* PyTorch's copy of a result to the host, on ROCm: a synchronous copy on
 * the stream, which ends its burst. */
TEST(urgent_bursts_ended_by_a_synchronous_copy_are_chosen_too)
{
	holds_stop_where_they_buy_nothing(BY_COPY);
}

/* XSCHED_HIP_HOLD=1: every burst of an urgent stream holds, as before the
 * choice. */
TEST(every_urgent_burst_holds_with_xsched_hip_hold_1)
{
	hipStream_t hi, lo;
	bool held[30];

	setenv("XSCHED_HIP_HOLD", "1", 1);
	hi = mk(-1);
	lo = mk(0);
	run_bursts(hi, lo, 30, BY_STREAM, held);
	ASSERT_EQ(count_held(held, 0, 30), 30);
}

/* A stream of normal priority has no choice: it never holds anyone (it is
 * the lowest here), and an urgent stream's choice does not touch it. */
TEST(only_urgent_streams_choose)
{
	hipStream_t mid, lo;
	bool held[20];

	unsetenv("XSCHED_HIP_HOLD");
	mid = mk(0);
	lo = mk(1);
	run_bursts(mid, lo, 20, BY_STREAM, held);
	ASSERT_EQ(count_held(held, 0, 20), 20);
}

/* A fork while an urgent stream chooses (its burst in progress): the
 * child's own urgent stream chooses from scratch (its first burst native,
 * its second held), and the parent's goes on. */
TEST(fork_child_of_a_choosing_process_chooses_anew)
{
	hipStream_t hi, lo;
	bool held[4];
	int status;
	pid_t pid;

	unsetenv("XSCHED_HIP_HOLD");
	hi = mk(-1);
	lo = mk(0);
	run_bursts(hi, lo, 3, BY_STREAM, held);
	launch(hi, 182, MS);		/* a burst in progress */
	pid = fork();
	if (pid == 0) {
		hipStream_t chi = mk(-1), clo = mk(0);

		run_bursts(chi, clo, 2, BY_STREAM, held);
		_exit(!held[0] && held[1] ? 0 : 3);
	}
	ASSERT_TRUE(pid > 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	ASSERT_EQ(hipStreamSynchronize(hi), hipSuccess);
}

/* An urgent stream destroyed in the middle of a held burst: the lower
 * stream is neither held by it nor capped after (its work done). */
TEST(urgent_stream_destroyed_in_a_held_burst_holds_nothing_after)
{
	hipStream_t hi, lo;
	bool held[2];
	int i;

	unsetenv("XSCHED_HIP_HOLD");
	setenv("XSCHED_THRESHOLD", "4", 1);
	setenv("XSCHED_BATCH", "2", 1);
	hi = mk(-1);
	lo = mk(0);
	run_bursts(hi, lo, 1, BY_STREAM, held);	/* native; the next holds */
	launch(hi, 183, 5 * MS);
	ASSERT_EQ(hipStreamDestroy(hi), hipSuccess);
	ASSERT_EQ(hipStreamSynchronize(lo), hipSuccess);
	usleep(10000);			/* its work done */
	for (i = 0; i < 12; i++)
		launch(lo, 184, 2 * MS);
	ASSERT_EQ(hipStreamSynchronize(lo), hipSuccess);
	ASSERT_GE(most_in_flight(184), 10);
}

/* The most launches of kernel @id in flight at once, from the fake's log. */
static int most_in_flight(int id)
{
	struct fake_rec r, o;
	int i, j, most = 0;

	for (i = 0; i < fake_log_count(); i++) {
		int n = 1;

		fake_log_get(i, &r);
		if (r.kernel != id)
			continue;
		for (j = 0; j < i; j++) {
			fake_log_get(j, &o);
			if (o.kernel == id && o.end > r.submit)
				n++;
		}
		if (n > most)
			most = n;
	}
	return most;
}

static void flood(hipStream_t lo, int id)
{
	int i;

	for (i = 0; i < 12; i++)
		launch(lo, id, 2 * MS);
	ASSERT_EQ(hipStreamSynchronize(lo), hipSuccess);
}

/* The cap follows the choice: a lower stream keeps at most the threshold in
 * flight only while the urgent stream's next burst will hold (armed one
 * burst ahead), not before its first burst (native) nor once native won. */
TEST(lower_stream_is_capped_only_around_held_bursts)
{
	hipStream_t hi, lo;
	bool held[40];

	unsetenv("XSCHED_HIP_HOLD");
	setenv("XSCHED_THRESHOLD", "4", 1);
	setenv("XSCHED_BATCH", "2", 1);
	hi = mk(-1);
	lo = mk(0);
	flood(lo, 190);			/* the first burst will be native */
	run_bursts(hi, lo, 1, BY_STREAM, held);
	ASSERT_EQ(held[0], false);
	flood(lo, 191);			/* the second will hold */
	run_bursts(hi, lo, 30, BY_STREAM, held);
	flood(lo, 192);			/* native won */
	ASSERT_GE(most_in_flight(190), 10);
	ASSERT_LE(most_in_flight(191), 4);
	ASSERT_GE(most_in_flight(192), 10);
}

/* "--bursts": a dozen bursts, for the debug log; "--stale-event": ten
 * bursts that each query an event recorded in the first one. */
int bursts_logged_body(bool stale)
{
	hipStream_t hi = mk(-1), lo = mk(0);
	hipEvent_t ev;
	bool held[12];
	int i;

	if (!stale) {
		run_bursts(hi, lo, 12, BY_STREAM, held);
		return 0;
	}
	ASSERT_EQ(hipEventCreate(&ev), hipSuccess);
	launch(hi, K_URGENT, 0);
	ASSERT_EQ(hipEventRecord(ev, hi), hipSuccess);
	ASSERT_EQ(hipStreamSynchronize(hi), hipSuccess);
	for (i = 0; i < 10; i++) {
		launch(hi, K_URGENT, 0);
		ASSERT_EQ(hipEventQuery(ev), hipSuccess);	/* long complete */
		launch(hi, K_URGENT, 0);
		ASSERT_EQ(hipStreamSynchronize(hi), hipSuccess);
	}
	return 0;
}

/* How many times @what is in @out. */
static int count_in(const char *out, const char *what)
{
	int n = 0;

	for (; (out = strstr(out, what)); out++)
		n++;
	return n;
}

/* An event of an earlier burst, polled (PyTorch's allocator queries old
 * events), does not end the burst in progress: eleven bursts, not 21. */
TEST(an_old_event_polled_ends_no_burst)
{
	char out[1 << 18];

	ASSERT_EQ(run_self("XSCHED_HIP_HOLD= XSCHED_LOG=debug", "--stale-event", out, sizeof(out)),
		  0);
	ASSERT_EQ(count_in(out, "a burst begins"), 11);
}

/* The debug log names each burst's mode at its first call, and the ready
 * line says the holds are chosen. */
TEST(debug_log_names_each_bursts_mode)
{
	char out[1 << 18];

	ASSERT_EQ(run_self("XSCHED_HIP_HOLD= XSCHED_LOG=debug", "--bursts", out, sizeof(out)), 0);
	expect_line(out, "a burst begins: native, holds nothing");
	expect_line(out, "a burst begins: lv1, lower streams held");
	expect_line(out, "urgent streams' holds chosen per burst");
}
