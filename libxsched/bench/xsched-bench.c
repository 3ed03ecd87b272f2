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
 *    against one direct SIM_SUBMIT ioctl.
 *
 * Absolute figures from a TCG VM are slow and noisy; compare within a run.
 */
#include <errno.h>
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
#include <xsched.h>

enum mode { M_NONE, M_LV1, M_LV2, M_LV3, M_COUNT };
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
	.launches = 2000,
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
	ret = xsched_sim_queue_create(sim, 1024, &s->qid);
	if (ret)
		die("SIM_QUEUE_CREATE", ret);
	ret = xsched_sim_alloc(sim, (uint64_t)words * 8, &s->dst, &cpu);
	if (ret)
		die("SIM_MEM_ALLOC", ret);
	if (raw) {
		/* Registered without arbitration: only to read its counters. */
		memset(&reg, 0, sizeof(reg));
		reg.backend = XSCHED_BACKEND_SIM;
		reg.handle = s->qid;
		ret = ioctl(xsched_sim_fd(sim), XSCHED_IOC_REGISTER, &reg);
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

static uint64_t stream_steps(struct stream *s)
{
	struct xsched_queue_info qi;
	struct xsched_xq_info info;

	if (s->xq) {
		if (xsched_query(s->xq, &info))
			return 0;
		return info.hw_steps_done;
	}
	memset(&qi, 0, sizeof(qi));
	if (ioctl(s->qfd, XSCHED_IOC_QUERY, &qi) < 0)
		return 0;
	return qi.steps_done;
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

static uint64_t pct(uint64_t *v, int n, double p)
{
	int i = (int)(p * (n - 1) + 0.5);

	return v[i];
}

struct result {
	uint64_t p50, p99;	/* urgent latency, ns */
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
	uint64_t t_start, t_end, steps0 = 0, steps1 = 0, next;
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

	t_start = now_ns();
	if (batch)
		steps0 = stream_steps(&bs);
	if (urgent) {
		/* A full-width kernel of 4 short steps: about 1 ms alone. */
		struct xsched_sim_packet up = packet(us.dst, opt.slots, 4, opt.step_ns);

		next = now_ns();
		for (i = 0; i < opt.samples + opt.warmup; i++) {
			uint64_t t0;
			struct timespec ts;

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
		usleep((useconds_t)((opt.samples + opt.warmup) * opt.period_us));
	}
	t_end = now_ns();
	if (batch) {
		struct xsched_xq_info info;

		steps1 = stream_steps(&bs);
		atomic_store(&f.stop, true);
		pthread_join(ft, NULL);
		if (f.err)
			die("batch kernel", f.err);
		stream_wait(&bs, bs.seq);
		r.steps_per_s = (double)(steps1 - steps0) * 1e9 / (double)(t_end - t_start);
		if (bs.xq && !xsched_query(bs.xq, &info)) {
			r.suspends = info.suspends;
			if (info.hw_suspends)
				r.susp_us = (double)info.hw_total_suspend_ns / 1e3 /
					    (double)info.hw_suspends;
		}
		stream_close(&bs);
	}
	if (urgent) {
		qsort(lat, (size_t)n, sizeof(*lat), cmp_u64);
		r.p50 = pct(lat, n, 0.50);
		r.p99 = pct(lat, n, 0.99);
		stream_close(&us);
	}
	xsched_sim_close(sim);
	free(lat);
	return r;
}

/*
 * Mean ns per launch call over opt.launches calls of a one-step packet, best
 * of 5 rounds; *e2e: the same including waiting for all of them to complete.
 */
static double launch_cost(enum mode m, double *e2e)
{
	struct xsched_sim *sim;
	struct stream s;
	struct xsched_sim_packet p;
	double best = 1e30;
	int round, i, ret;

	ret = xsched_sim_open(&sim, NULL);
	if (ret)
		die("xsched_sim_open", ret);
	stream_open(&s, sim, m == M_NONE, (unsigned int)m, 0, 1);
	p = packet(s.dst, 1, 1, 0);
	for (round = 0; round < 5; round++) {
		uint64_t t0 = now_ns(), t;

		for (i = 0; i < opt.launches; i++) {
			ret = stream_submit(&s, &p);
			if (ret == -EAGAIN) {	/* raw: ring full, count the wait too */
				stream_wait(&s, s.seq);
				i--;
				continue;
			}
			if (ret)
				die("launch", ret);
		}
		t = now_ns() - t0;
		if ((double)t / opt.launches < best)
			best = (double)t / opt.launches;
		stream_wait(&s, s.seq);
		t = now_ns() - t0;
		if (!round || (double)t / opt.launches < *e2e)
			*e2e = (double)t / opt.launches;
	}
	stream_close(&s);
	xsched_sim_close(sim);
	return best;
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
		"                    [--threshold N] [--batch N] [--launches N] [--quick]\n");
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
	struct xsched_version ver;
	struct xsched_sim *sim;
	struct result alone_u, alone_b, r;
	double direct, direct_e2e = 0;
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
	if (opt.samples < 2 || opt.period_us < 100 || opt.launches < 1)
		usage();

	ret = xsched_sim_open(&sim, NULL);
	if (ret)
		die("cannot open /dev/xsched (is xsched_kfd loaded?)", ret);
	memset(&ver, 0, sizeof(ver));
	if (ioctl(xsched_sim_fd(sim), XSCHED_IOC_VERSION, &ver) < 0)
		die("VERSION", errno);
	xsched_sim_close(sim);
	opt.slots = ver.sim_cus * ver.sim_waves_per_cu;

	printf("xsched-bench: sim GPU %u CUs x %u wave slots; urgent: %u workgroups x 4 steps of %llu us every %d us, %d samples\n",
	       ver.sim_cus, ver.sim_waves_per_cu, opt.slots,
	       (unsigned long long)(opt.step_ns / 1000), opt.period_us, opt.samples);
	printf("batch: kernels of %u workgroups (2 per slot), 4 outstanding; Lv1 threshold %u, batch %u\n\n",
	       2 * opt.slots, opt.threshold, opt.batch);

	alone_u = measure(M_NONE, true, false, 1);
	printf("urgent alone: P50 %.1f us, P99 %.1f us\n\n", alone_u.p50 / 1e3,
	       alone_u.p99 / 1e3);
	printf("%-8s %-5s %11s %11s %7s %7s %10s %9s %9s\n", "wg_ms", "mode", "urg_p50_us",
	       "urg_p99_us", "p50_x", "p99_x", "batch_x", "suspends", "susp_us");
	for (w = 0; w < opt.nwg; w++) {
		uint32_t steps = (uint32_t)(opt.wg_ms[w] * 1e6 / (double)opt.step_ns + 0.5);

		if (!steps)
			steps = 1;
		alone_b = measure(M_NONE, false, true, steps);
		for (m = M_NONE; m < M_COUNT; m++) {
			r = measure(m, true, true, steps);
			printf("%-8.2f %-5s %11.1f %11.1f %7.2f %7.2f %10.2f %9llu %9.1f\n",
			       opt.wg_ms[w], mode_name[m], r.p50 / 1e3, r.p99 / 1e3,
			       (double)r.p50 / (double)alone_u.p50,
			       (double)r.p99 / (double)alone_u.p99,
			       alone_b.steps_per_s > 0 ? r.steps_per_s / alone_b.steps_per_s : 0,
			       (unsigned long long)r.suspends, r.susp_us);
			fflush(stdout);
		}
	}

	printf("\nper-launch cost, one XQueue alone (one 1-step packet per call, %d calls, best of 5):\n",
	       opt.launches);
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
