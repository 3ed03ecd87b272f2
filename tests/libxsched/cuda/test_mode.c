// SPDX-License-Identifier: MIT
/*
 * Tests of the urgent stream's mode choice (libxsched/src/interpose/
 * cuda_mode.c), called directly: latencies in, modes out.  Linked into
 * test_cuda (its main runs these too).
 */
#include <string.h>

#include "cuda_mode.h"
#include "harness.h"

static const bool all[XM_NMODES] = { true, true, true, true };

/* One burst: its mode, which then takes lat[mode] us. */
static enum xm_mode burst(struct xm_state *st, const uint32_t lat[XM_NMODES])
{
	enum xm_mode m = xm_begin(st);

	xm_end(st, lat[m]);
	return m;
}

/* @n bursts; how many ran in each mode. */
static void run(struct xm_state *st, const uint32_t lat[XM_NMODES], int n, int count[XM_NMODES])
{
	memset(count, 0, sizeof(int) * XM_NMODES);
	while (n--)
		count[burst(st, lat)]++;
}

TEST(mode_each_is_measured_then_the_fastest_runs)
{
	struct xm_state st;
	const uint32_t lat[XM_NMODES] = { 20000, 5700, 4800, 19000 };	/* beside a GEMM */
	int c[XM_NMODES];

	xm_init(&st, -1, all);
	ASSERT_EQ(xm_begin(&st), XM_NATIVE);	/* the first burst runs as without the library */
	xm_end(&st, lat[XM_NATIVE]);
	run(&st, lat, XM_NMODES * XM_WIN - 1, c);
	ASSERT_EQ(c[XM_NATIVE], XM_WIN - 1);
	ASSERT_EQ(c[XM_CTX], XM_WIN);
	ASSERT_EQ(c[XM_GATHER], XM_WIN);
	ASSERT_EQ(c[XM_LV1], XM_WIN);
	ASSERT_EQ(st.best, XM_GATHER);
	run(&st, lat, 15, c);
	ASSERT_EQ(c[XM_GATHER], 15);	/* no try before XM_BACKOFF_MIN bursts */
}

TEST(mode_costlier_must_be_clearly_faster)
{
	struct xm_state st;
	const uint32_t lat[XM_NMODES] = { 4000, 3700, 3650, 3800 };	/* alone: within the margin */
	int c[XM_NMODES];

	xm_init(&st, -1, all);
	run(&st, lat, XM_NMODES * XM_WIN, c);
	ASSERT_EQ(st.best, XM_NATIVE);
	run(&st, lat, 200, c);
	ASSERT_GE(c[XM_NATIVE], 190);
}

TEST(mode_loser_by_far_is_tried_rarely_but_still_tried)
{
	struct xm_state st;
	const uint32_t lat[XM_NMODES] = { 120000, 5000, 5100, 110000 };	/* beside SDPA */
	int c[XM_NMODES];

	xm_init(&st, -1, all);
	run(&st, lat, XM_NMODES * XM_WIN, c);
	run(&st, lat, 2000, c);
	/* Its tries cost under 1% of the requests: a P99 is not spent. */
	ASSERT_GE(c[XM_NATIVE], 1);
	ASSERT_LE(c[XM_NATIVE] + c[XM_LV1], 16);
}

TEST(mode_alike_modes_do_not_take_turns)
{
	struct xm_state st;
	uint32_t lat[XM_NMODES] = { 120000, 5500, 5000, 110000 };
	int i, changes = 0;
	enum xm_mode was;

	xm_init(&st, -1, all);
	for (i = 0; i < XM_NMODES * XM_WIN; i++)
		burst(&st, lat);
	was = st.best;
	for (i = 0; i < 2000; i++) {
		/* 10% apart, each with noise of +-8% */
		lat[XM_CTX] = 5500 + (uint32_t)((i * 7919) % 880) - 440;
		lat[XM_GATHER] = 5000 + (uint32_t)((i * 104729) % 800) - 400;
		burst(&st, lat);
		changes += st.best != was;
		was = st.best;
	}
	ASSERT_LE(changes, 3);	/* 5 without the hysteresis */
}

TEST(mode_a_change_of_neighbour_is_seen)
{
	struct xm_state st;
	const uint32_t busy[XM_NMODES] = { 20000, 5700, 4800, 19000 };
	const uint32_t idle[XM_NMODES] = { 3500, 3700, 5000, 3500 };	/* the batch job ended */
	int c[XM_NMODES], n = 0;

	xm_init(&st, -1, all);
	run(&st, busy, 200, c);
	ASSERT_EQ(st.best, XM_GATHER);
	while (st.best != XM_NATIVE && n < 2000) {
		burst(&st, idle);
		n++;
	}
	ASSERT_EQ(st.best, XM_NATIVE);
	ASSERT_LE(n, 1100);	/* within the longest backoff */
}

TEST(mode_forced_is_kept_and_missing_modes_never_run)
{
	struct xm_state st;
	const uint32_t lat[XM_NMODES] = { 20000, 5700, 100, 30000 };
	const bool no_gather[XM_NMODES] = { true, true, false, true };
	int c[XM_NMODES];

	xm_init(&st, XM_CTX, all);
	run(&st, lat, 100, c);
	ASSERT_EQ(c[XM_CTX], 100);
	xm_init(&st, -1, no_gather);
	run(&st, lat, 500, c);
	ASSERT_EQ(c[XM_GATHER], 0);
	ASSERT_EQ(st.best, XM_CTX);
	xm_init(&st, XM_GATHER, no_gather);	/* forced to what cannot run: chosen */
	ASSERT_EQ(st.forced, -1);
}

TEST(mode_lv1_is_chosen_only_when_clearly_faster)
{
	struct xm_state st;
	const uint32_t near[XM_NMODES] = { 4800, 4700, 5500, 4500 };
	const uint32_t far[XM_NMODES] = { 4800, 4700, 5500, 3700 };	/* beside ResNet-50 b16 */
	int c[XM_NMODES];

	xm_init(&st, -1, all);
	run(&st, near, 200, c);
	ASSERT_EQ(st.best, XM_NATIVE);	/* its holds cost the batch job: not for 6% */
	xm_init(&st, -1, all);
	run(&st, far, 200, c);
	ASSERT_EQ(st.best, XM_LV1);
}

TEST(mode_names_parse)
{
	ASSERT_EQ(xm_parse(NULL), -1);
	ASSERT_EQ(xm_parse("auto"), -1);
	ASSERT_EQ(xm_parse("native"), XM_NATIVE);
	ASSERT_EQ(xm_parse("ctx"), XM_CTX);
	ASSERT_EQ(xm_parse("gather"), XM_GATHER);
	ASSERT_EQ(xm_parse("lv1"), XM_LV1);
	ASSERT_EQ(xm_parse("fast"), -2);
	ASSERT_TRUE(!strcmp(xm_name(XM_GATHER), "gather"));
}
