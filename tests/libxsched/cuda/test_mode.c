// SPDX-License-Identifier: MIT
/*
 * Tests of the urgent stream's mode choice (libxsched/src/interpose/
 * cuda_mode.c), called directly: latencies in, modes out.  Linked into
 * test_cuda (its main runs these too).
 */
#include <stdatomic.h>
#include <string.h>

#include "cuda_mode.h"
#include "harness.h"

static const bool all[XM_NMODES] = { true, true, true, true };

/* A neighbour's effect: each mode's wait (us) after a burst's last call;
 * the host's own time before it is the same in every mode. */
struct load {
	uint32_t wait[XM_NMODES];
	uint32_t host;
};

/* One burst: its mode, which then waits ld->wait[mode] us. */
static enum xm_mode burst(struct xm_state *st, const struct load *ld)
{
	enum xm_mode m = xm_begin(st);

	xm_end(st, ld->host + ld->wait[m], ld->wait[m]);
	return m;
}

/* @n bursts; how many ran in each mode. */
static void run(struct xm_state *st, const struct load *ld, int n, int count[XM_NMODES])
{
	memset(count, 0, sizeof(int) * XM_NMODES);
	while (n--)
		count[burst(st, ld)]++;
}

/* ResNet-18 b4 beside a GEMM that holds every SM (H200 medians). */
static const struct load gemm = {
	.wait = { [XM_NATIVE] = 19000, [XM_GATHER] = 3800, [XM_CTX] = 4700, [XM_LV1] = 18000 },
	.host = 1000,
};

TEST(mode_each_is_measured_then_the_cheapest_of_the_fastest_runs)
{
	struct xm_state st;
	int c[XM_NMODES];

	xm_init(&st, -1, all, 0);
	ASSERT_EQ(xm_begin(&st), XM_NATIVE);	/* the first burst runs as without the library */
	xm_end(&st, gemm.host + gemm.wait[XM_NATIVE], gemm.wait[XM_NATIVE]);
	run(&st, &gemm, XM_NMODES * XM_WIN - 1, c);
	ASSERT_EQ(c[XM_NATIVE], XM_WIN - 1);
	ASSERT_EQ(c[XM_CTX], XM_WIN);
	ASSERT_EQ(c[XM_GATHER], XM_WIN);
	ASSERT_EQ(c[XM_LV1], XM_WIN);
	ASSERT_EQ(st.best, XM_GATHER);
	run(&st, &gemm, 15, c);
	ASSERT_EQ(c[XM_GATHER], 15);	/* no try before XM_BACKOFF_MIN bursts */
}

TEST(mode_costlier_must_save_the_margin_of_the_span)
{
	struct xm_state st;
	/* Alone: the gather loses the host's overlap, the rest alike. */
	const struct load alone = {
		.wait = { [XM_NATIVE] = 3000, [XM_GATHER] = 4000, [XM_CTX] = 2800, [XM_LV1] = 2900 },
		.host = 1000,
	};
	/* An eager LLM decode loop beside training: the urgent context
	 * halves a wait that is 5% of a CPU-bound burst. */
	const struct load llm = {
		.wait = { [XM_NATIVE] = 600, [XM_GATHER] = 650, [XM_CTX] = 250, [XM_LV1] = 260 },
		.host = 10000,
	};
	/* The same waits on a short burst: worth it. */
	const struct load gpu = {
		.wait = { [XM_NATIVE] = 3000, [XM_GATHER] = 4500, [XM_CTX] = 1500, [XM_LV1] = 1400 },
		.host = 1000,
	};
	int c[XM_NMODES];

	xm_init(&st, -1, all, 0);
	run(&st, &alone, XM_NMODES * XM_WIN, c);
	ASSERT_EQ(st.best, XM_NATIVE);
	run(&st, &alone, 200, c);
	ASSERT_GE(c[XM_NATIVE], 190);
	xm_init(&st, -1, all, 0);
	run(&st, &llm, 200, c);
	ASSERT_EQ(st.best, XM_NATIVE);
	ASSERT_EQ(xm_margin(&st), 1060);	/* 10% of the median span */
	xm_init(&st, -1, all, 0);
	run(&st, &gpu, 200, c);
	ASSERT_EQ(st.best, XM_CTX);	/* Lv1 is no cheaper than 100 us faster */
}

TEST(mode_loser_by_far_is_tried_rarely_but_still_tried)
{
	const struct load sdpa = {
		.wait = { [XM_NATIVE] = 119000, [XM_GATHER] = 4100, [XM_CTX] = 4000, [XM_LV1] = 109000 },
		.host = 1000,
	};
	struct xm_state st;
	int c[XM_NMODES];

	xm_init(&st, -1, all, 0);
	run(&st, &sdpa, XM_NMODES * XM_WIN, c);
	run(&st, &sdpa, 2000, c);
	/* Its tries cost under 1% of the requests: a P99 is not spent. */
	ASSERT_GE(c[XM_NATIVE], 1);
	ASSERT_LE(c[XM_NATIVE] + c[XM_LV1], 16);
}

TEST(mode_alike_modes_do_not_take_turns)
{
	struct load ld = {
		.wait = { [XM_NATIVE] = 119000, [XM_GATHER] = 5000, [XM_CTX] = 4500, [XM_LV1] = 109000 },
		.host = 1000,
	};
	struct xm_state st;
	int i, changes = 0;
	enum xm_mode was;

	xm_init(&st, -1, all, 0);
	for (i = 0; i < XM_NMODES * XM_WIN; i++)
		burst(&st, &ld);
	was = st.best;
	for (i = 0; i < 2000; i++) {
		/* a margin (550 us) apart, each with noise of +-440 us */
		ld.wait[XM_GATHER] = 5050 + (uint32_t)((i * 7919) % 880) - 440;
		ld.wait[XM_CTX] = 4500 + (uint32_t)((i * 104729) % 880) - 440;
		burst(&st, &ld);
		changes += st.best != was;
		was = st.best;
	}
	ASSERT_LE(changes, 2);
}

TEST(mode_a_change_of_neighbour_is_seen)
{
	/* the batch job ended: every mode alike but the gather */
	const struct load idle = {
		.wait = { [XM_NATIVE] = 2900, [XM_GATHER] = 3900, [XM_CTX] = 3000, [XM_LV1] = 2900 },
		.host = 1000,
	};
	struct xm_state st;
	int c[XM_NMODES], n = 0;

	xm_init(&st, -1, all, 0);
	run(&st, &gemm, 200, c);
	ASSERT_EQ(st.best, XM_GATHER);
	while (st.best != XM_NATIVE && n < 2000) {
		burst(&st, &idle);
		n++;
	}
	ASSERT_EQ(st.best, XM_NATIVE);
	ASSERT_LE(n, 1100);	/* within the longest backoff */
}

TEST(mode_a_cheaper_mode_within_the_margin_replaces_a_faster_one)
{
	struct load ld = {
		.wait = { [XM_NATIVE] = 19000, [XM_GATHER] = 9000, [XM_CTX] = 3800, [XM_LV1] = 18000 },
		.host = 1000,
	};
	struct xm_state st;
	int c[XM_NMODES];
	uint32_t n = 0, due;

	xm_init(&st, -1, all, 0);
	run(&st, &ld, 200, c);
	ASSERT_EQ(st.best, XM_CTX);
	/* The gather now waits 200 us longer than the urgent context, under
	 * the margin (10% of a 4.8 ms burst): the batch job is spared the
	 * urgent context's switches.  Its next try decides, repeated at once
	 * until its median turns. */
	ld.wait[XM_GATHER] = 4000;
	due = st.next_try[XM_GATHER] - st.burst;
	while (st.best != XM_GATHER && n < 3000) {
		burst(&st, &ld);
		n++;
	}
	ASSERT_EQ(st.best, XM_GATHER);
	ASSERT_LE(n, due + XM_WIN / 2 + 1);
}

TEST(mode_forced_is_kept_and_missing_modes_never_run)
{
	const struct load ld = {
		.wait = { [XM_NATIVE] = 19000, [XM_GATHER] = 100, [XM_CTX] = 4700, [XM_LV1] = 29000 },
		.host = 1000,
	};
	const bool no_gather[XM_NMODES] = { [XM_NATIVE] = true, [XM_CTX] = true, [XM_LV1] = true };
	struct xm_state st;
	int c[XM_NMODES];

	xm_init(&st, XM_CTX, all, 0);
	run(&st, &ld, 100, c);
	ASSERT_EQ(c[XM_CTX], 100);
	xm_init(&st, -1, no_gather, 0);
	run(&st, &ld, 500, c);
	ASSERT_EQ(c[XM_GATHER], 0);
	ASSERT_EQ(st.best, XM_CTX);
	xm_init(&st, XM_GATHER, no_gather, 0);	/* forced to what cannot run: chosen */
	ASSERT_EQ(st.forced, -1);
}

TEST(mode_lv1_is_chosen_only_when_it_saves_the_margin)
{
	const struct load near = {	/* 300 us saved of a 4.8 ms burst */
		.wait = { [XM_NATIVE] = 3800, [XM_GATHER] = 4500, [XM_CTX] = 3700, [XM_LV1] = 3500 },
		.host = 1000,
	};
	const struct load far = {	/* beside ResNet-50 b16 */
		.wait = { [XM_NATIVE] = 3800, [XM_GATHER] = 4500, [XM_CTX] = 3700, [XM_LV1] = 2700 },
		.host = 1000,
	};
	struct xm_state st;
	int c[XM_NMODES];

	xm_init(&st, -1, all, 0);
	run(&st, &near, 200, c);
	ASSERT_EQ(st.best, XM_NATIVE);	/* its holds cost the batch job: not for 6% */
	xm_init(&st, -1, all, 0);
	run(&st, &far, 200, c);
	ASSERT_EQ(st.best, XM_LV1);
}

/* The tests above weigh waits alone (price 0); the price adds the batch
 * job's loss to every mode but native. */
TEST(mode_price_weighs_the_batch_jobs_loss)
{
	/* H100 medians: an LLM decode loop under CUDA graphs beside VGG-16
	 * training, where lv1 cost the training 9% ... */
	const struct load llm = {
		.wait = { [XM_NATIVE] = 1817, [XM_GATHER] = 2894, [XM_CTX] = 2788, [XM_LV1] = 803 },
		.host = 400,
	};
	/* ... and ResNet-18 beside the GEMM, where the gather cost it 2%. */
	const struct load big = {
		.wait = { [XM_NATIVE] = 24338, [XM_GATHER] = 870, [XM_CTX] = 1714, [XM_LV1] = 17276 },
		.host = 4000,
	};
	struct xm_state st;
	int c[XM_NMODES];

	xm_init(&st, -1, all, 0);
	run(&st, &llm, 300, c);
	ASSERT_EQ(st.best, XM_LV1);	/* waits alone: 1 ms saved is bought */
	xm_init(&st, -1, all, XM_PRICE_DEFAULT);
	run(&st, &llm, 300, c);
	ASSERT_EQ(st.best, XM_NATIVE);	/* not at three times its 0.8 ms */
	ASSERT_GE(c[XM_NATIVE], 270);
	xm_init(&st, -1, all, XM_PRICE_DEFAULT);
	run(&st, &big, 300, c);
	ASSERT_EQ(st.best, XM_GATHER);	/* 23 ms saved for 0.9 */
	ASSERT_GE(c[XM_GATHER], 270);
}

/* A try the choice would not take is not repeated at once: native here is
 * within the margin of the best (the gather) but not of the lowest (lv1),
 * and ran every burst when tries were judged against the best alone. */
TEST(mode_try_is_repeated_only_when_the_choice_would_take_it)
{
	struct load ld = {
		.wait = { [XM_NATIVE] = 2000, [XM_GATHER] = 110, [XM_CTX] = 500, [XM_LV1] = 100 },
		.host = 100,
	};
	struct xm_state st;
	int c[XM_NMODES];

	xm_init(&st, -1, all, XM_PRICE_DEFAULT);
	run(&st, &ld, 200, c);
	ASSERT_EQ(st.best, XM_GATHER);	/* lv1 scores 300, the gather 330 */
	ld.wait[XM_NATIVE] = 370;	/* over 300 + the 50 us margin */
	run(&st, &ld, 2000, c);
	ASSERT_EQ(st.best, XM_GATHER);
	ASSERT_LE(c[XM_NATIVE], 100);
	ASSERT_GE(c[XM_GATHER], 1800);
}

TEST(mode_price_parses)
{
	ASSERT_EQ(xm_parse_price(NULL), XM_PRICE_DEFAULT);
	ASSERT_EQ(xm_parse_price(""), XM_PRICE_DEFAULT);
	ASSERT_EQ(xm_parse_price("0"), 0);
	ASSERT_EQ(xm_parse_price("1.5"), 150);
	ASSERT_EQ(xm_parse_price("100"), 10000);
	ASSERT_EQ(xm_parse_price("101"), -1);
	ASSERT_EQ(xm_parse_price("-1"), -1);
	ASSERT_EQ(xm_parse_price("2x"), -1);
	ASSERT_EQ(xm_parse_price("nan"), -1);
	ASSERT_EQ(xm_parse_price("cheap"), -1);
}

/* Plain decimals only, whatever the program's locale: strtod() took these
 * (and a decimal comma under LC_NUMERIC=de_DE, "1.5" not). */
TEST(mode_price_takes_plain_decimals_only)
{
	ASSERT_EQ(xm_parse_price(".5"), 50);
	ASSERT_EQ(xm_parse_price("2."), 200);
	ASSERT_EQ(xm_parse_price("0.125"), 13);
	ASSERT_EQ(xm_parse_price("0.12499"), 12);
	ASSERT_EQ(xm_parse_price("100.00"), 10000);
	ASSERT_EQ(xm_parse_price("100.001"), -1);
	ASSERT_EQ(xm_parse_price("100.0001"), -1);
	ASSERT_EQ(xm_parse_price("100.0000"), 10000);
	ASSERT_EQ(xm_parse_price("99.9999"), 10000);
	ASSERT_EQ(xm_parse_price("100.01"), -1);
	ASSERT_EQ(xm_parse_price("99999999999999999999"), -1);
	ASSERT_EQ(xm_parse_price("1e1"), -1);
	ASSERT_EQ(xm_parse_price("inf"), -1);
	ASSERT_EQ(xm_parse_price("0x10"), -1);
	ASSERT_EQ(xm_parse_price(" 2"), -1);
	ASSERT_EQ(xm_parse_price("+2"), -1);
	ASSERT_EQ(xm_parse_price("1,5"), -1);
	ASSERT_EQ(xm_parse_price("."), -1);
	ASSERT_EQ(xm_parse_price("1.2.3"), -1);
}

static uint64_t clock_ns;

static uint64_t fake_now(void)
{
	return clock_ns;
}

TEST(mode_burst_wait_is_from_its_last_call)
{
	struct xm_burst b;

	xm_burst_init(&b, -1, all, XM_PRICE_DEFAULT);
	clock_ns = 1000000;
	ASSERT_EQ(xm_burst_mode(&b, fake_now), XM_NATIVE);	/* first call */
	clock_ns += 9000000;
	xm_burst_mode(&b, fake_now);				/* last call */
	ASSERT_TRUE(!xm_burst_end(&b, clock_ns + 100000, clock_ns + 500000, NULL));	/* its end */
	ASSERT_EQ(b.st.n[XM_NATIVE], 1);
	ASSERT_EQ(b.st.wait[XM_NATIVE][0], 500);
	ASSERT_EQ(b.st.span[0], 9500);
	ASSERT_TRUE(!xm_burst_end(&b, clock_ns + 800000, clock_ns + 900000, NULL));	/* no burst: nothing */
	ASSERT_EQ(b.st.nspan, 1);
	xm_burst_fini(&b);
}

/* Another thread's call while the stream synchronizes is not one that
 * synchronize waited for: the wait then counts from the synchronize's start
 * (it read about 0, from that call, before). */
TEST(mode_burst_wait_ignores_a_call_during_its_synchronize)
{
	struct xm_burst b;
	uint64_t since;

	xm_burst_init(&b, -1, all, XM_PRICE_DEFAULT);
	clock_ns = 1000000;
	xm_burst_mode(&b, fake_now);		/* its last call before the synchronize */
	since = clock_ns + 200000;		/* which begins 200 us later */
	clock_ns = since + 700000;
	xm_burst_mode(&b, fake_now);		/* another thread's call, 700 us into it */
	ASSERT_TRUE(!xm_burst_end(&b, since, clock_ns + 100000, NULL));	/* 100 us more */
	ASSERT_EQ(b.st.n[XM_NATIVE], 1);
	ASSERT_EQ(b.st.wait[XM_NATIVE][0], 800);
	xm_burst_fini(&b);
}

/* A burst never synchronized (a host polling memory) ends at its first
 * call XM_BURST_MAX_NS after its start, unmeasured; the next burst then
 * runs the best mode, not a try of another (it would not be seen either). */
TEST(mode_burst_never_synchronized_ends_and_nothing_is_tried)
{
	struct xm_burst b;
	int i, tried;

	xm_burst_init(&b, -1, all, XM_PRICE_DEFAULT);
	clock_ns = 1000000;
	ASSERT_EQ(xm_burst_mode(&b, fake_now), XM_NATIVE);
	clock_ns += 100000;
	ASSERT_TRUE(!xm_burst_end(&b, clock_ns, clock_ns + 100000, NULL));	/* measured */
	clock_ns += 1000000;
	ASSERT_EQ(xm_burst_mode(&b, fake_now), XM_GATHER);	/* the next try */
	for (i = 0; i < 5; i++) {
		clock_ns += XM_BURST_MAX_NS / 2 + 1;
		xm_burst_mode(&b, fake_now);
	}
	ASSERT_EQ(b.st.burst, 4);	/* cut twice (every XM_BURST_MAX_NS) */
	ASSERT_EQ(b.st.runs[XM_GATHER], 1);
	ASSERT_EQ(b.st.n[XM_GATHER], 0);	/* unmeasured */
	ASSERT_EQ(atomic_load(&b.mode), XM_NATIVE);	/* the best, no try */
	/* measured again: the tries go on */
	for (i = 0, tried = 0; i < XM_NMODES; i++) {
		clock_ns += 1000;
		ASSERT_TRUE(!xm_burst_end(&b, clock_ns, clock_ns + 100000, NULL));
		clock_ns += 1000;
		tried += xm_burst_mode(&b, fake_now) != XM_NATIVE;
	}
	ASSERT_GE(tried, 1);
	xm_burst_fini(&b);
}

/* A gathered burst the watchdog had to start ends at once, a loss of the
 * watchdog's time for the gather. */
TEST(mode_gathered_burst_the_watchdog_started_is_a_loss)
{
	struct xm_burst b;

	xm_burst_init(&b, -1, all, XM_PRICE_DEFAULT);
	clock_ns = 1000000;
	xm_burst_mode(&b, fake_now);
	ASSERT_TRUE(!xm_burst_end(&b, clock_ns, clock_ns + 100000, NULL));
	clock_ns += 1000000;
	ASSERT_EQ(xm_burst_mode(&b, fake_now), XM_GATHER);
	clock_ns += 20000000;
	ASSERT_TRUE(!xm_burst_cut(&b, 20000, clock_ns, NULL));
	ASSERT_EQ(b.st.n[XM_GATHER], 1);
	ASSERT_EQ(b.st.wait[XM_GATHER][0], 20000);
	ASSERT_TRUE(!atomic_load(&b.in));
	ASSERT_EQ(xm_burst_mode(&b, fake_now), XM_CTX);	/* a new burst, the next try */
	ASSERT_TRUE(!xm_burst_cut(&b, 20000, clock_ns, NULL));	/* not the gather's: kept */
	ASSERT_TRUE(atomic_load(&b.in));
	ASSERT_EQ(b.st.n[XM_CTX], 0);
	xm_burst_fini(&b);
}

TEST(mode_waits_name_each_mode_and_the_margin)
{
	struct xm_state st;
	char w[128];
	int c[XM_NMODES];

	xm_init(&st, -1, all, 0);
	run(&st, &gemm, XM_NMODES * XM_WIN, c);
	ASSERT_EQ(xm_waits(&st, w, sizeof(w)), (int)strlen(w));
	/* the margin: 10% of the median span of the last 16 bursts, 19 ms */
	ASSERT_TRUE(!strcmp(w, "native 19000, gather 3800, ctx 4700, lv1 18000; margin 1900"));
	ASSERT_GE(xm_waits(&st, w, 10), 10);	/* cut, as snprintf: the length it needed */
	ASSERT_TRUE(!strcmp(w, "native 19"));
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
