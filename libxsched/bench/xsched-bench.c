// SPDX-License-Identifier: MIT
/*
 * xsched-bench: what libxsched's levels buy and cost on the sim GPU.
 *
 * 1. Urgent work (a short kernel every period) beside batch work (long
 *    kernels, several workgroup lengths) that keeps every wave slot busy.
 *    For each batch workgroup length and each mode, urgent P50/P99 latency
 *    relative to the urgent work alone, and batch throughput (wave steps per
 *    second) relative to the batch work alone.  Modes:
 *      none  both queues submit with SIM_SUBMIT directly, no libxsched
 *      lv1   libxsched, batch XQueue at Lv1 (progressive launching)
 *      lv2   libxsched, batch XQueue at Lv2 (module DRAIN)
 *      lv3   libxsched, batch XQueue at Lv3 (module SAVE)
 *    The urgent XQueue has priority 10, the batch XQueue 0.
 * 2. Per-launch cost: ns per xsched_submit() of one packet at each level
 *    against one direct SIM_SUBMIT ioctl, with fewer launches per round than
 *    the ring holds, so no call waits for ring space.
 *
 * Each case has one measured window: warm-up samples (and a warm-up launch
 * round) run first and are left out; batch steps and suspends are counters
 * read at the window's start and end.  A percentile is printed only where at
 * least TAIL_MIN samples lie above it, else "-" (P90) or the maximum,
 * headed "max" (P99).
 *
 * Absolute figures from a TCG VM are slow and noisy; compare within a run.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/xsched_kfd.h>
#include <linux/xsched_sim.h>
#include <xsched-sim.h>

enum mode { M_NONE, M_LV1, M_LV2, M_LV3, M_COUNT };

/* Ring entries of every queue here; a launch round stays below it. */
#define RING		1024
/* A percentile means something only with this many samples above it. */
#define TAIL_MIN	10
/* Measured launch rounds, after one warm-up round. */
#define ROUNDS		5
static const char *const mode_name[M_COUNT] = { "none", "lv1", "lv2", "lv3" };

static struct {
	int samples;
	int period_us;
	int warmup;
	unsigned int threshold, batch;
	int launches;
	double wg_ms[8];
	int nwg;
	uint32_t slots;
	uint64_t step_ns;
} opt = {
	.samples = 150,
	.period_us = 8000,
	.warmup = 3,
	.threshold = 4,
	.batch = 2,
	.launches = 500,
	.wg_ms = { 1, 4, 16 },
	.nwg = 3,
	.step_ns = 250000,
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "xsched-bench: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

/* One submission stream: raw (direct ioctls) or an XQueue. */
struct stream {
	struct xsched_sim *sim;
	uint32_t qid;
	int qfd;			/* registered queue fd, for QUERY */
	struct xsched_xqueue *xq;	/* NULL: raw */
	uint64_t dst;
	uint64_t seq;
};

static void stream_open(struct stream *s, struct xsched_sim *sim, bool raw,
			unsigned int level, int32_t prio, uint32_t words)
{
	struct xsched_register reg;
	void *cpu;
	int ret;

	memset(s, 0, sizeof(*s));
	s->sim = sim;
	s->qfd = -1;
	ret = xsched_sim_queue_create(sim, RING, &s->qid);
	if (ret)
		die("SIM_QUEUE_CREATE", ret);
	ret = xsched_sim_alloc(sim, (uint64_t)words * 8, &s->dst, &cpu);
	if (ret)
		die("SIM_MEM_ALLOC", ret);
	if (raw) {
		/* Registered without arbitration: only to read its counters. */
		static int raw_cfd = -1;

		if (raw_cfd < 0)
			raw_cfd = open("/dev/" XSCHED_DEVICE_NAME, O_RDWR | O_CLOEXEC);
		if (raw_cfd < 0)
			die("open /dev/" XSCHED_DEVICE_NAME, errno);
		memset(&reg, 0, sizeof(reg));
		reg.backend = XSCHED_BACKEND_SIM;
		reg.handle = s->qid;
		reg.backend_fd = (uint32_t)xsched_sim_fd(sim);
		ret = ioctl(raw_cfd, XSCHED_IOC_REGISTER, &reg);
		if (ret < 0)
			die("REGISTER", errno);
		s->qfd = (int)reg.queue_fd;
	} else {
		struct xsched_attr a;

		memset(&a, 0, sizeof(a));
		a.flags = XSCHED_ATTR_LEVEL | XSCHED_ATTR_PRIORITY |
			  XSCHED_ATTR_THRESHOLD | XSCHED_ATTR_BATCH;
		a.level = level;
		a.priority = prio;
		a.threshold = opt.threshold;
		a.batch = opt.batch;
		ret = xsched_xqueue_create_sim(&s->xq, sim, s->qid, &a);
		if (ret)
			die("xsched_xqueue_create_sim", ret);
	}
}

static void stream_close(struct stream *s)
{
	if (s->xq)
		xsched_xqueue_destroy(s->xq);
	if (s->qfd >= 0)
		close(s->qfd);
}

static int stream_submit(struct stream *s, const struct xsched_sim_packet *p)
{
	struct xsched_sim_submit sub;

	if (s->xq)
		return xsched_submit(s->xq, p, 1, &s->seq);
	memset(&sub, 0, sizeof(sub));
	sub.queue_id = s->qid;
	sub.count = 1;
	sub.packets = (uint64_t)(uintptr_t)p;
	if (ioctl(xsched_sim_fd(s->sim), XSCHED_IOC_SIM_SUBMIT, &sub) < 0)
		return -errno;
	s->seq = sub.seq;
	return 0;
}

static int stream_wait(struct stream *s, uint64_t seq)
{
	struct xsched_sim_wait w;

	if (s->xq)
		return xsched_wait(s->xq, seq, -1);
	memset(&w, 0, sizeof(w));
	w.queue_id = s->qid;
	w.seq = seq;
	w.timeout_ns = 60ULL * 1000000000ULL;
	return ioctl(xsched_sim_fd(s->sim), XSCHED_IOC_SIM_WAIT, &w) < 0 ? -errno : 0;
}

/* A stream's counters at one instant. */
struct snap {
	uint64_t t, steps, suspends, hw_suspends, hw_suspend_ns;
};

static void stream_snap(struct stream *s, struct snap *sn)
{
	struct xsched_queue_info qi;
	struct xsched_xq_info info;
	int ret;

	memset(sn, 0, sizeof(*sn));
	if (s->xq) {
		ret = xsched_query(s->xq, &info, sizeof(info));
		if (ret)
			die("xsched_query", ret);
		sn->steps = info.hw_steps_done;
		sn->suspends = info.suspends;
		sn->hw_suspends = info.hw_suspends;
		sn->hw_suspend_ns = info.hw_total_suspend_ns;
	} else {
		memset(&qi, 0, sizeof(qi));
		if (ioctl(s->qfd, XSCHED_IOC_QUERY, &qi) < 0)
			die("QUERY", errno);
		sn->steps = qi.steps_done;
	}
	sn->t = now_ns();
}

static struct xsched_sim_packet packet(uint64_t dst, uint32_t grid, uint32_t steps,
				       uint64_t step_ns)
{
	struct xsched_sim_packet p;

	memset(&p, 0, sizeof(p));
	p.kernel = XSCHED_SIM_KERNEL_ACCUMULATE;
	p.grid = grid;
	p.steps = steps;
	p.step_ns = step_ns;
	p.seed = 1;
	p.dst = dst;
	return p;
}

/* The batch feeder: keeps `depth` long kernels outstanding until told to stop. */
struct feeder {
	struct stream *s;
	struct xsched_sim_packet p;
	int depth;
	atomic_bool stop;
	int err;
	uint64_t kernels;
};

static void *feed(void *arg)
{
	struct feeder *f = arg;

	while (!atomic_load(&f->stop) && !f->err) {
		f->err = stream_submit(f->s, &f->p);
		if (f->err)
			break;
		f->kernels++;
		if (f->s->seq > (uint64_t)f->depth)
			f->err = stream_wait(f->s, f->s->seq - (uint64_t)f->depth);
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Whether @n samples put at least TAIL_MIN above the @p-th percentile. */
static bool pct_ok(int n, int p)
{
	return (long)n * (100 - p) >= TAIL_MIN * 100L;
}

/* Nearest-rank percentile of the sorted @v; 0 where pct_ok() says no. */
static uint64_t pct(const uint64_t *v, int n, int p)
{
	int i = (n * p + 99) / 100;

	if (!pct_ok(n, p))
		return 0;
	return v[i ? i - 1 : 0];
}

static const char *tail_name(int n)
{
	return pct_ok(n, 99) ? "p99" : "max";
}

/* @ns in us, @width wide, or "-" where the percentile was not computed. */
static const char *fmt_us(char *buf, size_t len, uint64_t ns, int width)
{
	if (ns)
		snprintf(buf, len, "%*.1f", width, (double)ns / 1e3);
	else
		snprintf(buf, len, "%*s", width, "-");
	return buf;
}

/* "%7.2f" of @a / @b, or "-" where either percentile was not computed. */
static const char *ratio(char *buf, size_t len, uint64_t a, uint64_t b)
{
	if (a && b)
		snprintf(buf, len, "%7.2f", (double)a / (double)b);
	else
		snprintf(buf, len, "%7s", "-");
	return buf;
}

struct result {
	uint64_t p50, p90, tail;	/* urgent latency, ns; tail: P99 or max */
	double steps_per_s;	/* batch */
	uint64_t suspends;
	double susp_us;		/* batch: mean module suspend latency */
};

/*
 * One measurement: @urgent / @batch say whether each stream runs.
 * @wg_steps: steps per batch workgroup.
 */
static struct result measure(enum mode m, bool urgent, bool batch, uint32_t wg_steps)
{
	struct stream us, bs;
	struct feeder f;
	struct xsched_sim *sim;
	struct result r;
	uint64_t *lat = calloc((size_t)opt.samples, sizeof(uint64_t));
	struct snap s0, s1;
	uint64_t next;
	pthread_t ft;
	int i, n = 0, ret;
	bool raw = m == M_NONE;

	memset(&r, 0, sizeof(r));
	if (!lat)
		die("calloc", ENOMEM);
	ret = xsched_sim_open(&sim, NULL);
	if (ret)
		die("xsched_sim_open", ret);
	if (urgent)
		stream_open(&us, sim, raw, XSCHED_LV3, 10, opt.slots);
	if (batch) {
		stream_open(&bs, sim, raw, (unsigned int)m, 0, 2 * opt.slots);
		memset(&f, 0, sizeof(f));
		f.s = &bs;
		f.depth = 4;
		/* Two rounds of waves over every slot. */
		f.p = packet(bs.dst, 2 * opt.slots, wg_steps, opt.step_ns);
		atomic_init(&f.stop, false);
		pthread_create(&ft, NULL, feed, &f);
		usleep(20000);	/* let it fill the GPU */
	}

	/*
	 * The window opens after the warm-up samples and closes when the last
	 * measured one completes; a stream that does not run leaves its snap
	 * holding only the time.
	 */
	memset(&s0, 0, sizeof(s0));
	memset(&s1, 0, sizeof(s1));
	if (urgent) {
		/* A full-width kernel of 4 short steps: about 1 ms alone. */
		struct xsched_sim_packet up = packet(us.dst, opt.slots, 4, opt.step_ns);

		next = now_ns();
		for (i = 0; i < opt.samples + opt.warmup; i++) {
			uint64_t t0;
			struct timespec ts;

			if (i == opt.warmup) {
				if (batch)
					stream_snap(&bs, &s0);
				s0.t = now_ns();
			}
			next += (uint64_t)opt.period_us * 1000;
			ts.tv_sec = (time_t)(next / 1000000000ULL);
			ts.tv_nsec = (long)(next % 1000000000ULL);
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
			t0 = now_ns();
			ret = stream_submit(&us, &up);
			if (!ret)
				ret = stream_wait(&us, us.seq);
			if (ret)
				die("urgent kernel", ret);
			if (i >= opt.warmup)
				lat[n++] = now_ns() - t0;
			if (now_ns() > next)
				next = now_ns();	/* fell behind: no catch-up burst */
		}
	} else {
		usleep((useconds_t)(opt.warmup * opt.period_us));
		stream_snap(&bs, &s0);
		usleep((useconds_t)(opt.samples * opt.period_us));
	}
	if (batch)
		stream_snap(&bs, &s1);
	s1.t = now_ns();
	if (batch) {
		atomic_store(&f.stop, true);
		pthread_join(ft, NULL);
		if (f.err)
			die("batch kernel", f.err);
		stream_wait(&bs, bs.seq);
		r.steps_per_s = (double)(s1.steps - s0.steps) * 1e9 / (double)(s1.t - s0.t);
		r.suspends = s1.suspends - s0.suspends;
		if (s1.hw_suspends > s0.hw_suspends)
			r.susp_us = (double)(s1.hw_suspend_ns - s0.hw_suspend_ns) / 1e3 /
				    (double)(s1.hw_suspends - s0.hw_suspends);
		stream_close(&bs);
	}
	if (urgent) {
		qsort(lat, (size_t)n, sizeof(*lat), cmp_u64);
		r.p50 = pct(lat, n, 50);
		r.p90 = pct(lat, n, 90);
		r.tail = pct_ok(n, 99) ? pct(lat, n, 99) : lat[n - 1];
		stream_close(&us);
	}
	xsched_sim_close(sim);
	free(lat);
	return r;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Mean ns per launch call over opt.launches calls of a one-step packet, the
 * median of ROUNDS rounds after a warm-up round; *e2e: the same including
 * waiting for all of them to complete.  A round starts on an empty ring and
 * launches fewer commands than it holds, so a call never waits for room.
 */
static double launch_cost(enum mode m, double *e2e)
{
	struct xsched_sim *sim;
	struct stream s;
	struct xsched_sim_packet p;
	double call[ROUNDS], all[ROUNDS];
	int round, i, ret;

	ret = xsched_sim_open(&sim, NULL);
	if (ret)
		die("xsched_sim_open", ret);
	stream_open(&s, sim, m == M_NONE, (unsigned int)m, 0, 1);
	p = packet(s.dst, 1, 1, 0);
	for (round = -1; round < ROUNDS; round++) {
		uint64_t t0 = now_ns(), t;

		for (i = 0; i < opt.launches; i++) {
			ret = stream_submit(&s, &p);
			if (ret)
				die("launch", ret);
		}
		t = now_ns() - t0;
		ret = stream_wait(&s, s.seq);
		if (ret)
			die("launch wait", ret);
		if (round < 0)
			continue;	/* warm-up */
		call[round] = (double)t / opt.launches;
		all[round] = (double)(now_ns() - t0) / opt.launches;
	}
	stream_close(&s);
	xsched_sim_close(sim);
	qsort(call, ROUNDS, sizeof(call[0]), cmp_double);
	qsort(all, ROUNDS, sizeof(all[0]), cmp_double);
	*e2e = all[ROUNDS / 2];
	return call[ROUNDS / 2];
}

static void parse_wg(const char *s)
{
	char *copy = strdup(s), *tok, *save = NULL;

	opt.nwg = 0;
	for (tok = strtok_r(copy, ",", &save); tok && opt.nwg < 8;
	     tok = strtok_r(NULL, ",", &save)) {
		double v = atof(tok);

		if (v <= 0) {
			fprintf(stderr, "xsched-bench: bad workgroup length '%s'\n", tok);
			exit(2);
		}
		opt.wg_ms[opt.nwg++] = v;
	}
	free(copy);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: xsched-bench [--samples N] [--period-us US] [--wg-ms A,B,C]\n"
		"                    [--threshold N] [--batch N] [--launches N (below %d)] [--quick]\n",
		RING);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "samples", required_argument, NULL, 's' },
		{ "period-us", required_argument, NULL, 'p' },
		{ "wg-ms", required_argument, NULL, 'w' },
		{ "threshold", required_argument, NULL, 't' },
		{ "batch", required_argument, NULL, 'b' },
		{ "launches", required_argument, NULL, 'l' },
		{ "quick", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	struct xsched_sim_info ver;
	struct xsched_sim *sim;
	struct result alone_u, alone_b, r;
	double direct, direct_e2e = 0;
	char tail_col[16];
	int c, w, ret;
	enum mode m;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 's': opt.samples = atoi(optarg); break;
		case 'p': opt.period_us = atoi(optarg); break;
		case 'w': parse_wg(optarg); break;
		case 't': opt.threshold = (unsigned int)atoi(optarg); break;
		case 'b': opt.batch = (unsigned int)atoi(optarg); break;
		case 'l': opt.launches = atoi(optarg); break;
		case 'q': opt.samples = 20; opt.launches = 500; break;
		default: usage();
		}
	}
	if (opt.samples < 2 || opt.period_us < 100 || opt.launches < 1 ||
	    opt.launches >= RING)
		usage();

	ret = xsched_sim_open(&sim, NULL);
	if (ret)
		die("cannot open /dev/xsched and /dev/xsched_sim (are xsched_kfd and xsched_sim loaded?)", ret);
	memset(&ver, 0, sizeof(ver));
	if (ioctl(xsched_sim_fd(sim), XSCHED_IOC_SIM_INFO, &ver) < 0)
		die("SIM_INFO", errno);
	xsched_sim_close(sim);
	opt.slots = ver.cus * ver.waves_per_cu;

	printf("xsched-bench: sim GPU %u CUs x %u wave slots; urgent: %u workgroups x 4 steps of %llu us every %d us, %d samples after %d warm-up\n",
	       ver.cus, ver.waves_per_cu, opt.slots,
	       (unsigned long long)(opt.step_ns / 1000), opt.period_us, opt.samples,
	       opt.warmup);
	printf("batch: kernels of %u workgroups (2 per slot), 4 outstanding; Lv1 threshold %u, batch %u\n\n",
	       2 * opt.slots, opt.threshold, opt.batch);

	alone_u = measure(M_NONE, true, false, 1);
	{
		char b50[24], b90[24], btail[24];

		printf("urgent alone (%d samples): P50 %s us, P90 %s us, %s %s us\n",
		       opt.samples, fmt_us(b50, sizeof(b50), alone_u.p50, 0),
		       fmt_us(b90, sizeof(b90), alone_u.p90, 0), tail_name(opt.samples),
		       fmt_us(btail, sizeof(btail), alone_u.tail, 0));
		printf("(a percentile needs %d samples above it: P90 from %d samples, P99 from %d)\n\n",
		       TAIL_MIN, TAIL_MIN * 10, TAIL_MIN * 100);
	}
	snprintf(tail_col, sizeof(tail_col), "urg_%s_us", tail_name(opt.samples));
	printf("%-8s %-5s %11s %11s %11s %7s %7s %10s %9s %9s\n", "wg_ms", "mode",
	       "urg_p50_us", "urg_p90_us", tail_col, "p50_x", "p90_x",
	       "batch_x", "suspends", "susp_us");
	for (w = 0; w < opt.nwg; w++) {
		uint32_t steps = (uint32_t)(opt.wg_ms[w] * 1e6 / (double)opt.step_ns + 0.5);

		if (!steps)
			steps = 1;
		alone_b = measure(M_NONE, false, true, steps);
		for (m = M_NONE; m < M_COUNT; m++) {
			char b50[24], b90[24], btail[24], x50[24], x90[24];

			r = measure(m, true, true, steps);
			printf("%-8.2f %-5s %s %s %s %s %s %10.2f %9llu %9.1f\n",
			       opt.wg_ms[w], mode_name[m], fmt_us(b50, sizeof(b50), r.p50, 11),
			       fmt_us(b90, sizeof(b90), r.p90, 11),
			       fmt_us(btail, sizeof(btail), r.tail, 11),
			       ratio(x50, sizeof(x50), r.p50, alone_u.p50),
			       ratio(x90, sizeof(x90), r.p90, alone_u.p90),
			       alone_b.steps_per_s > 0 ? r.steps_per_s / alone_b.steps_per_s : 0,
			       (unsigned long long)r.suspends, r.susp_us);
			fflush(stdout);
		}
	}

	printf("\nper-launch cost, one XQueue alone (one 1-step packet per call, %d calls on a ring of %d,\n"
	       "median of %d rounds after a warm-up round):\n", opt.launches, RING, ROUNDS);
	printf("  call: time in the submit call; e2e: submit all, then wait for all, per command\n");
	printf("  (Lv1 buffers: its call is cheap, the worker thread does the ioctl)\n");
	direct = launch_cost(M_NONE, &direct_e2e);
	printf("%-24s call %8.0f ns            e2e %8.0f ns\n", "direct SIM_SUBMIT", direct,
	       direct_e2e);
	for (m = M_LV1; m < M_COUNT; m++) {
		double e2e = 0, ns = launch_cost(m, &e2e);

		printf("xsched_submit %-10s call %8.0f ns (%+6.0f) e2e %8.0f ns (%+6.0f)\n",
		       mode_name[m], ns, ns - direct, e2e, e2e - direct_e2e);
	}
	return 0;
}
