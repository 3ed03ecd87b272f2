// SPDX-License-Identifier: MIT
/*
 * Host tests of the library's default with the urgent context off: each
 * urgent stream's bursts run with Lv1 holds or without, as measured best
 * (XSCHED_CUDA_HOLD unset or auto; interpose/mode.c's modes lv1 and native), so
 * that holds which buy the urgent job nothing stop costing the batch job.
 * In the fake driver streams never slow each other: holds buy nothing
 * there, and after their first measured bursts they stop.  The tests that
 * count bursts after the first measurements price the batch job at the
 * most (XSCHED_CUDA_LV3_PRICE=100): a host stall of the loaded test
 * machine inside a synchronize lengthens a native burst's wait by as much
 * as Lv1 would have to save at the default price (the choice's price is
 * tested on traces, test_mode.c).  Linked into test_cuda; each test runs
 * in its own process.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fake_libcuda.h"
#include "harness.h"
#include "cuda_helpers.h"

#define BURST_NS (20 * MS)	/* a held launch is this late: no host stall is */

/* One urgent burst on @hi (kernel 2 * @i + 20), a lower stream's launch in
 * the middle of it (2 * @i + 21), ended by @sync; true: the lower launch
 * was held until the burst's work ended. */
static bool burst_held(CUstream hi, CUstream lo, int i, CUresult (*sync)(CUstream))
{
	struct fake_rec h, l;

	launch(hi, 2 * i + 20, BURST_NS);
	launch(lo, 2 * i + 21, 0);
	ASSERT_EQ(sync(hi), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamSynchronize(lo), CUDA_SUCCESS);
	h = rec_of(2 * i + 20);
	l = rec_of(2 * i + 21);
	return l.submit >= h.end;
}

static CUresult ctx_sync(CUstream unused)
{
	(void)unused;
	return cuCtxSynchronize();
}

/* An event recorded on @h, then synchronized (cuEventSynchronize). */
static CUresult event_sync(CUstream h)
{
	static CUevent ev;

	if (!ev)
		ASSERT_EQ(cuEventCreate(&ev, 0), CUDA_SUCCESS);
	ASSERT_EQ(cuEventRecord(ev, h), CUDA_SUCCESS);
	return cuEventSynchronize(ev);
}

/* Bursts @from to @to - 1: how many held the lower stream. */
static int held_in(CUstream hi, CUstream lo, int from, int to, CUresult (*sync)(CUstream))
{
	int i, n = 0;

	for (i = from; i < to; i++)
		n += burst_held(hi, lo, i, sync);
	return n;
}

/* The first bursts measure each way in turn: half of them hold. */
TEST(hold_default_measures_bursts_with_holds_and_without)
{
	CUstream hi, lo;

	unsetenv("XSCHED_CUDA_HOLD");
	hi = mk(-1);
	lo = mk(0);
	ASSERT_EQ(held_in(hi, lo, 0, 10, cuStreamSynchronize), 5);
}

/* Holds that buy nothing stop: after the first ten bursts only the rare
 * try of Lv1 holds the lower stream. */
TEST(hold_default_stops_holds_that_buy_nothing)
{
	CUstream hi, lo;

	setenv("XSCHED_CUDA_HOLD", "auto", 1);
	setenv("XSCHED_CUDA_LV3_PRICE", "100", 1);
	hi = mk(-1);
	lo = mk(0);
	ASSERT_EQ(held_in(hi, lo, 0, 10, cuStreamSynchronize), 5);
	ASSERT_LE(held_in(hi, lo, 10, 70, cuStreamSynchronize), 3);
}

/* A stream made with the default flags (it synchronizes with the legacy
 * stream) is urgent to the choice as well: no urgent context is involved. */
TEST(hold_default_chooses_for_a_blocking_urgent_stream)
{
	CUstream hi = NULL, lo;

	unsetenv("XSCHED_CUDA_HOLD");
	setenv("XSCHED_CUDA_LV3_PRICE", "100", 1);
	ASSERT_EQ(cuStreamCreateWithPriority(&hi, 0, -1), CUDA_SUCCESS);
	lo = mk(0);
	ASSERT_EQ(held_in(hi, lo, 0, 10, cuStreamSynchronize), 5);
	ASSERT_LE(held_in(hi, lo, 10, 40, cuStreamSynchronize), 2);
}

/* A context synchronize ends the bursts it covers, as a stream's does. */
TEST(hold_default_bursts_end_at_a_context_synchronize)
{
	CUstream hi, lo;

	unsetenv("XSCHED_CUDA_HOLD");
	setenv("XSCHED_CUDA_LV3_PRICE", "100", 1);
	hi = mk(-1);
	lo = mk(0);
	ASSERT_EQ(held_in(hi, lo, 0, 10, ctx_sync), 5);
	ASSERT_LE(held_in(hi, lo, 10, 40, ctx_sync), 2);
}

/* An event synchronize ends the burst of the stream that recorded it, as
 * a stream's synchronize does (with the urgent context off too). */
TEST(hold_default_bursts_end_at_an_event_synchronize)
{
	CUstream hi, lo;

	unsetenv("XSCHED_CUDA_HOLD");
	setenv("XSCHED_CUDA_LV3_PRICE", "100", 1);
	hi = mk(-1);
	lo = mk(0);
	ASSERT_EQ(held_in(hi, lo, 0, 10, event_sync), 5);
	ASSERT_LE(held_in(hi, lo, 10, 40, event_sync), 2);
}

/* @n kernels (ids @id and up) of 2 ms launched on @lo at once, then
 * synchronized: the most of them in flight together. */
static int flood(CUstream lo, int id, int n)
{
	int i;

	for (i = 0; i < n; i++)
		launch(lo, id + i, 2 * MS);
	ASSERT_EQ(cuStreamSynchronize(lo), CUDA_SUCCESS);
	return most_in_flight(lo, id);
}

/* Lv1's cap (at most `threshold` calls of a lower stream in flight) costs
 * the batch job and buys the urgent job latency only around held bursts:
 * a lower stream is capped while the urgent stream's next burst will hold
 * (before its first call, so that call finds a short queue) and not once
 * the choice stopped holding; each change is in the debug log. */
TEST(hold_default_caps_lower_streams_only_around_held_bursts)
{
	FILE *f = err_capture();
	CUstream hi, lo;
	const char *e;

	unsetenv("XSCHED_CUDA_HOLD");
	setenv("XSCHED_CUDA_LV3_PRICE", "100", 1);
	setenv("XSCHED_THRESHOLD", "4", 1);
	setenv("XSCHED_BATCH", "2", 1);
	setenv("XSCHED_LOG", "debug", 1);
	hi = mk(-1);
	lo = mk(0);
	ASSERT_EQ(held_in(hi, lo, 0, 1, cuStreamSynchronize), 0);	/* native; lv1 next */
	ASSERT_LE(flood(lo, 100, 12), 4);
	ASSERT_EQ(held_in(hi, lo, 1, 10, cuStreamSynchronize), 5);	/* then native is best */
	ASSERT_GE(flood(lo, 200, 12), 10);
	e = err_read(f);
	ASSERT_GE(count_of(e, "no longer caps lower streams"), 1);
	ASSERT_GE(count_of(e, ": caps lower streams"), 1);
	fclose(f);
}

/* An urgent stream destroyed while its cap is armed caps nothing after:
 * its program side goes with it. */
TEST(hold_default_cap_goes_with_its_urgent_stream)
{
	CUstream hi, lo;

	unsetenv("XSCHED_CUDA_HOLD");
	setenv("XSCHED_THRESHOLD", "4", 1);
	setenv("XSCHED_BATCH", "2", 1);
	hi = mk(-1);
	lo = mk(0);
	ASSERT_EQ(held_in(hi, lo, 0, 1, cuStreamSynchronize), 0);	/* native; lv1 next */
	ASSERT_LE(flood(lo, 100, 12), 4);
	ASSERT_EQ(cuStreamDestroy(hi), CUDA_SUCCESS);
	ASSERT_GE(flood(lo, 200, 12), 10);
}

/* A synchronize ends the burst of a stream that another thread destroys
 * meanwhile (the test seam destroys it between the lookup and the burst's
 * end): what the synchronize found stays valid until it is done with it
 * (ASan sees any use after free), and the stream, gone, arms no cap
 * though its next burst would hold. */
TEST(hold_default_burst_ends_on_a_stream_destroyed_meanwhile)
{
	CUstream hi, lo;

	unsetenv("XSCHED_CUDA_HOLD");
	setenv("XSCHED_THRESHOLD", "4", 1);
	setenv("XSCHED_BATCH", "2", 1);
	hi = mk(-1);
	lo = mk(0);
	launch(hi, 20, 2 * MS);
	setenv("XSCHED_TEST_DESTROY_IN_SYNC", "1", 1);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);	/* native; lv1 next */
	unsetenv("XSCHED_TEST_DESTROY_IN_SYNC");
	ASSERT_GE(flood(lo, 100, 12), 10);
	ASSERT_EQ(cuStreamDestroy(hi), CUDA_SUCCESS);
}

/* XSCHED_CUDA_HOLD=1: every burst holds (the default before the choice). */
TEST(hold_one_holds_every_burst)
{
	CUstream hi, lo;

	setenv("XSCHED_CUDA_HOLD", "1", 1);
	hi = mk(-1);
	lo = mk(0);
	ASSERT_EQ(held_in(hi, lo, 0, 30, cuStreamSynchronize), 30);
}

/* Equal priorities: nothing is urgent, nothing is held or measured. */
TEST(hold_default_never_holds_equal_streams)
{
	CUstream a, b;

	unsetenv("XSCHED_CUDA_HOLD");
	a = mk(0);
	b = mk(0);
	ASSERT_EQ(held_in(a, b, 0, 10, cuStreamSynchronize), 0);
}

/* The log says which way holds go, at start and at each change. */
TEST(hold_default_is_named_in_the_log)
{
	FILE *f = err_capture();
	CUstream hi, lo;
	const char *e;

	unsetenv("XSCHED_CUDA_HOLD");
	setenv("XSCHED_LOG", "debug", 1);
	hi = mk(-1);
	lo = mk(0);
	(void)held_in(hi, lo, 0, 2, cuStreamSynchronize);
	e = err_read(f);
	ASSERT_EQ(count_of(e, "holds chosen per burst"), 1);
	ASSERT_EQ(count_of(e, "its bursts hold lower streams (Lv1) where that is measured to pay"), 1);
	fclose(f);
}

/* What three urgent bursts (and a synchronize with none) log at
 * XSCHED_LOG=info with XSCHED_CUDA_BURST_LOG=@value (from *@f). */
static const char *burst_log_of(const char *value, FILE **f)
{
	CUstream hi, lo;

	*f = err_capture();
	unsetenv("XSCHED_CUDA_HOLD");
	setenv("XSCHED_LOG", "info", 1);
	setenv("XSCHED_CUDA_BURST_LOG", value, 1);
	hi = mk(-1);
	lo = mk(0);
	(void)held_in(hi, lo, 0, 3, cuStreamSynchronize);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);	/* no burst: none told */
	return err_read(*f);
}

/* An event of an earlier burst, polled (PyTorch's allocator queries old
 * events), ends no burst: ten bursts that each query an event recorded in
 * the first, between two launches, are eleven bursts told, not 21. */
TEST(hold_default_an_old_event_polled_ends_no_burst)
{
	FILE *f = err_capture();
	CUevent old;
	CUstream hi;
	int i;

	unsetenv("XSCHED_CUDA_HOLD");
	setenv("XSCHED_LOG", "info", 1);
	setenv("XSCHED_CUDA_BURST_LOG", "1", 1);
	hi = mk(-1);
	ASSERT_EQ(cuEventCreate(&old, 0), CUDA_SUCCESS);
	launch(hi, 20, 0);
	ASSERT_EQ(cuEventRecord(old, hi), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	for (i = 0; i < 10; i++) {
		launch(hi, 21, 0);
		ASSERT_EQ(cuEventQuery(old), CUDA_SUCCESS);	/* long complete */
		launch(hi, 22, 0);
		ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	}
	ASSERT_EQ(count_of(err_read(f), ": burst "), 11);
	fclose(f);
}

/* XSCHED_CUDA_BURST_LOG=1 tells each urgent burst once, in order, with its
 * mode and times, at XSCHED_LOG=info (traces of real bursts for the
 * choice's host tests); a bad value is a config error and tells none. */
TEST(hold_default_bursts_are_told_with_the_burst_log)
{
	FILE *f;
	const char *e = burst_log_of("1", &f);

	ASSERT_EQ(count_of(e, ": burst "), 3);
	ASSERT_EQ(lines_with(e, ": burst 1: native, span ", " us, idle before 0 us", NULL), 1);
	ASSERT_EQ(lines_with(e, ": burst 2: lv1, span ", " wait ", NULL), 1);
	ASSERT_EQ(lines_with(e, ": burst 3: ", " idle before ", NULL), 1);
	fclose(f);
}

TEST(hold_default_burst_log_bad_value_is_a_config_error)
{
	FILE *f;
	const char *e = burst_log_of("yes", &f);

	ASSERT_EQ(lines_with(e, "XSCHED_CUDA_BURST_LOG='yes'", "not 0 or 1", NULL), 1);
	ASSERT_EQ(count_of(e, ": burst "), 0);
	fclose(f);
}

/* A set-up of one call a burst, then bursts of two calls 2 ms apart (a host
 * time 40x the set-up's floor of 50 us): what was measured on the set-up is
 * forgotten, once, and said so. */
TEST(hold_default_setup_measurements_are_forgotten_and_told)
{
	FILE *f = err_capture();
	CUstream hi;
	const char *e;
	int i;

	unsetenv("XSCHED_CUDA_HOLD");
	setenv("XSCHED_LOG", "info", 1);
	hi = mk(-1);
	for (i = 0; i < 40; i++) {
		launch(hi, 20, 0);
		ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	}
	for (i = 0; i < 40; i++) {
		launch(hi, 21, 0);
		usleep(2000);
		launch(hi, 22, 0);
		ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	}
	e = err_read(f);
	ASSERT_EQ(lines_with(e, "host time changed 8-fold or more", "every mode is measured again", NULL), 1);
	fclose(f);
}
