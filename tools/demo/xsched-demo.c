// SPDX-License-Identifier: GPL-2.0
/*
 * xsched-demo: an urgent queue of short periodic kernels beside a batch queue
 * of long kernels on the sim GPU.  For each way of preempting the batch queue
 * it prints the urgent queue's latency (submit to completion), its ratio to the
 * urgent queue running alone, the batch queue's throughput and the suspend
 * latency the module measured.  Every figure comes from one measured window
 * per case: warm-up requests run first and are left out, the batch work is
 * the module's step counter read at the window's start and end, and a
 * percentile is printed only where at least TAIL_MIN samples lie above it:
 * otherwise P90 prints "-" and the last column is the maximum, headed "max".
 *
 *   alone  urgent queue only
 *   none   batch queue running, no preemption
 *   drain  batch queue suspended with XSCHED_MODE_DRAIN (Lv2) per urgent kernel
 *   save   batch queue suspended with XSCHED_MODE_SAVE (Lv3) per urgent kernel
 *   arbiter both queues registered with XSCHED_REGISTER_ARBITRATE: the module
 *          suspends the batch queue by itself while the urgent one is busy
 *
 * A second table shows the global preemption of HWS (gfx9) on the sim's HWS
 * model: the GPU filled by 1, 4 or 16 arbitrated batch queues, an urgent
 * arbitrated queue beside them, with the arbiter's batches on and off.  It
 * needs debugfs (mounted if missing) and is skipped without it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#include <linux/xsched_kfd.h>
#include <linux/xsched_sim.h>

struct opts {
	unsigned int requests;
	unsigned int period_us;
	unsigned int batch_wg_ms;
	unsigned int urgent_steps;
	unsigned int urgent_step_us;
	bool samples;		/* -S: print every latency (make demo plots them) */
};

struct queue {
	uint32_t id;
	int fd;
	uint64_t seq;
};

/* Urgent requests run before each measured window, left out of every figure. */
#define WARMUP		5
/* A percentile means something only with this many samples above it. */
#define TAIL_MIN	10
/* Workgroup steps of one batch kernel (their total length is -b). */
#define BATCH_STEPS	20
/* Urgent requests per HWS-model case: P90 from 100 samples has 10 above it. */
#define HWS_REQUESTS	100

static int dev;		/* /dev/xsched: registration */
static int simdev;	/* /dev/xsched_sim: memory, queues, packets */
static uint32_t gpu_slots;
static uint64_t batch_addr, urgent_addr;
static atomic_bool batch_stop;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t mem_alloc(uint64_t size)
{
	struct xsched_sim_mem m = { .size = size };

	if (ioctl(simdev, XSCHED_IOC_SIM_MEM_ALLOC, &m))
		die("XSCHED_IOC_SIM_MEM_ALLOC");
	return m.gpu_addr;
}

static void queue_open(struct queue *q, int priority, uint32_t flags)
{
	struct xsched_sim_queue_create c = { .ring_size = 64 };
	struct xsched_register r = { .backend = XSCHED_BACKEND_SIM, .flags = flags };

	if (ioctl(simdev, XSCHED_IOC_SIM_QUEUE_CREATE, &c))
		die("XSCHED_IOC_SIM_QUEUE_CREATE");
	r.handle = c.queue_id;
	r.priority = priority;
	r.backend_fd = (__u32)simdev;
	q->fd = ioctl(dev, XSCHED_IOC_REGISTER, &r);
	if (q->fd < 0)
		die("XSCHED_IOC_REGISTER");
	q->id = c.queue_id;
	q->seq = 0;
}

static uint64_t submit(struct queue *q, uint32_t grid, uint32_t steps,
		       uint64_t step_ns, uint64_t dst)
{
	struct xsched_sim_packet p = {
		.kernel = XSCHED_SIM_KERNEL_ACCUMULATE,
		.grid = grid, .steps = steps, .step_ns = step_ns,
		.seed = 1, .dst = dst,
	};
	struct xsched_sim_submit s = {
		.queue_id = q->id, .count = 1, .packets = (uintptr_t)&p,
	};

	while (ioctl(simdev, XSCHED_IOC_SIM_SUBMIT, &s)) {
		if (errno != EAGAIN)
			die("XSCHED_IOC_SIM_SUBMIT");
		usleep(100);
	}
	return s.seq;
}

static int wait_seq(struct queue *q, uint64_t seq, uint64_t timeout_ns)
{
	struct xsched_sim_wait w = {
		.queue_id = q->id, .seq = seq, .timeout_ns = timeout_ns,
	};

	return ioctl(simdev, XSCHED_IOC_SIM_WAIT, &w) ? -errno : 0;
}

static struct queue batch_q, urgent_q;
static struct opts opt = {
	.requests = 150, .period_us = 15000, .batch_wg_ms = 40,
	.urgent_steps = 10, .urgent_step_us = 100,
};

/* Keeps two long kernels that fill every wave slot in flight. */
static void *batch_thread(void *arg)
{
	uint64_t step_ns = (uint64_t)opt.batch_wg_ms * 1000000ull / BATCH_STEPS;
	uint64_t last = 0, s;

	(void)arg;
	while (!atomic_load(&batch_stop)) {
		s = submit(&batch_q, gpu_slots, BATCH_STEPS, step_ns, batch_addr);
		if (last && wait_seq(&batch_q, last, 60ull * 1000000000ull))
			die("batch wait");
		last = s;
	}
	if (last && wait_seq(&batch_q, last, 60ull * 1000000000ull))
		die("batch wait");
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * -S: a case's latencies in one line, "xsched-samples<TAB>NAME<TAB>us us ...",
 * which `make demo` takes out of the output to draw the CDF plot.
 */
static void print_samples(const char *name, const uint64_t *v, unsigned int n)
{
	unsigned int i;

	if (!opt.samples)
		return;
	printf("xsched-samples\t%s\t", name);
	for (i = 0; i < n; i++)
		printf("%s%.1f", i ? " " : "", v[i] / 1e3);
	printf("\n");
}

/* Whether @n samples put at least TAIL_MIN above the @p-th percentile. */
static bool pct_ok(unsigned int n, unsigned int p)
{
	return (uint64_t)n * (100 - p) >= TAIL_MIN * 100;
}

/* Nearest-rank percentile of the sorted @v; 0 where pct_ok() says no. */
static uint64_t pct(const uint64_t *v, unsigned int n, unsigned int p)
{
	unsigned int i = (n * p + 99) / 100;

	if (!pct_ok(n, p))
		return 0;
	return v[i ? i - 1 : 0];
}

/* The last latency column: P99 where the samples allow it, else the maximum. */
static uint64_t tail(const uint64_t *v, unsigned int n)
{
	return pct_ok(n, 99) ? pct(v, n, 99) : v[n - 1];
}

static const char *tail_name(unsigned int n)
{
	return pct_ok(n, 99) ? "P99" : "max";
}

/* "%7.2f" of @a / @b, or "-" where either percentile was not computed. */
static const char *ratio(char *buf, size_t len, uint64_t a, uint64_t b)
{
	if (a && b)
		snprintf(buf, len, "%7.2f", (double)a / b);
	else
		snprintf(buf, len, "%7s", "-");
	return buf;
}

/* "%9.2f" of @ns in ms, or "-" where the percentile was not computed. */
static const char *ms(char *buf, size_t len, uint64_t ns)
{
	if (ns)
		snprintf(buf, len, "%9.2f", ns / 1e6);
	else
		snprintf(buf, len, "%9s", "-");
	return buf;
}

struct result {
	const char *name;
	uint64_t p50, p90, tail;
	double batch_per_s;
	uint64_t suspends, susp_mean_ns;
};

/* The module's counters of a queue at one instant. */
struct snap {
	uint64_t t, steps, suspends, suspend_ns;
};

static void snap(struct queue *q, struct snap *s)
{
	struct xsched_queue_info i = {};

	if (ioctl(q->fd, XSCHED_IOC_QUERY, &i))
		die("XSCHED_IOC_QUERY");
	s->t = now_ns();
	s->steps = i.steps_done;
	s->suspends = i.suspends;
	s->suspend_ns = i.total_suspend_ns;
}

/* One urgent request: suspend the batch queue in @mode (0: no call), run, resume. */
static uint64_t urgent_request(uint32_t mode)
{
	struct xsched_suspend sp = { .mode = mode };
	struct xsched_resume rs = {};
	uint64_t seq, t0, t;

	usleep(opt.period_us + (rand() % 1000));
	t0 = now_ns();
	if (mode && ioctl(batch_q.fd, XSCHED_IOC_SUSPEND, &sp))
		die("XSCHED_IOC_SUSPEND");
	seq = submit(&urgent_q, 4, opt.urgent_steps,
		     opt.urgent_step_us * 1000ull, urgent_addr);
	if (wait_seq(&urgent_q, seq, 60ull * 1000000000ull))
		die("urgent wait");
	t = now_ns();
	if (mode && ioctl(batch_q.fd, XSCHED_IOC_RESUME, &rs))
		die("XSCHED_IOC_RESUME");
	return t - t0;
}

/*
 * The window opens after WARMUP requests and closes when the last measured
 * one completes; the batch queue's steps and suspends are the module's
 * counters read at those two instants, so work done while the GPU filled, in
 * the warm-up or while the batch thread stops is not counted.
 */
static void run_case(const char *name, int with_batch, uint32_t mode,
		     struct result *res)
{
	uint64_t *lat = calloc(opt.requests, sizeof(*lat));
	struct snap s0, s1;
	unsigned int i;
	pthread_t th;

	if (!lat)
		die("calloc");
	memset(res, 0, sizeof(*res));
	fprintf(stderr, "xsched-demo: running '%s' (%u + %u warm-up urgent requests)...\n",
		name, opt.requests, WARMUP);
	atomic_store(&batch_stop, false);
	if (with_batch) {
		if (pthread_create(&th, NULL, batch_thread, NULL))
			die("pthread_create");
		/* Let the batch queue fill the GPU. */
		usleep(opt.batch_wg_ms * 1000 / 2);
	}
	for (i = 0; i < WARMUP; i++)
		urgent_request(mode);
	snap(&batch_q, &s0);
	for (i = 0; i < opt.requests; i++)
		lat[i] = urgent_request(mode);
	snap(&batch_q, &s1);
	if (with_batch) {
		atomic_store(&batch_stop, true);
		pthread_join(th, NULL);
	}
	qsort(lat, opt.requests, sizeof(*lat), cmp_u64);
	print_samples(name, lat, opt.requests);
	res->name = name;
	res->p50 = pct(lat, opt.requests, 50);
	res->p90 = pct(lat, opt.requests, 90);
	res->tail = tail(lat, opt.requests);
	if (with_batch) {
		/* Batch kernels' worth of steps the module ran in the window. */
		res->batch_per_s = (double)(s1.steps - s0.steps) /
				   ((double)gpu_slots * BATCH_STEPS) * 1e9 /
				   (double)(s1.t - s0.t);
		res->suspends = s1.suspends - s0.suspends;
		res->susp_mean_ns = res->suspends ?
			(s1.suspend_ns - s0.suspend_ns) / res->suspends : 0;
	}
	free(lat);
}

/* ---- HWS model ---- */

#define SIM_DEBUGFS	"/sys/kernel/debug/xsched/sim/"
#define BATCH_PARAM	"/sys/module/xsched_kfd/parameters/arbiter_batch"

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -1;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		ret = -1;
	close(fd);
	return ret;
}

static uint64_t read_u64(const char *path)
{
	char buf[32] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		die(path);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		die(path);
	return strtoull(buf, NULL, 0);
}

struct hws_result {
	unsigned int nq;
	bool batch;
	uint64_t p50, p90, tail;
	double updates_per_req;
	double batch_steps_per_s;
};

/*
 * @nq arbitrated batch queues whose long kernels fill every wave slot, one
 * urgent arbitrated queue submitting a short kernel every period, on a client
 * of its own (closing it ends the batch kernels at once).
 */
static uint64_t hws_steps(const struct queue *bq, unsigned int nq)
{
	uint64_t steps = 0;
	unsigned int i;

	for (i = 0; i < nq; i++) {
		struct xsched_queue_info info = {};

		if (ioctl(bq[i].fd, XSCHED_IOC_QUERY, &info))
			die("XSCHED_IOC_QUERY");
		steps += info.steps_done;
	}
	return steps;
}

static void hws_case(unsigned int nq, bool batch, struct hws_result *r)
{
	const unsigned int requests = HWS_REQUESTS;
	uint64_t *lat = calloc(requests, sizeof(*lat));
	struct queue *bq = calloc(nq, sizeof(*bq)), uq;
	uint64_t u0 = 0, u1, steps0 = 0, steps1, t0 = 0, t1, seq, addr;
	int main_dev = dev, main_simdev = simdev;
	unsigned int i;

	if (!lat || !bq)
		die("calloc");
	if (write_text(BATCH_PARAM, batch ? "Y" : "N"))
		die(BATCH_PARAM);
	dev = open("/dev/" XSCHED_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (dev < 0)
		die("open /dev/xsched");
	simdev = open("/dev/" XSCHED_SIM_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (simdev < 0)
		die("open /dev/" XSCHED_SIM_DEVICE_NAME " (is xsched_sim.ko loaded?)");
	addr = mem_alloc(4096);
	fprintf(stderr, "xsched-demo: HWS model, %u batch queues, batches %s...\n",
		nq, batch ? "on" : "off");
	for (i = 0; i < nq; i++) {
		queue_open(&bq[i], -1, XSCHED_REGISTER_ARBITRATE);
		/*
		 * Together they fill the GPU, for far longer (5 s) than the
		 * case lasts: closing the queue ends them.
		 */
		submit(&bq[i], gpu_slots / nq, 1000, 5000000ull, addr);
	}
	queue_open(&uq, 0, XSCHED_REGISTER_ARBITRATE);
	usleep(20000);
	/* Warm-up requests first, then the window: lat[] and every counter. */
	for (i = 0; i < WARMUP + requests; i++) {
		uint64_t t;

		if (i == WARMUP) {
			u0 = read_u64(SIM_DEBUGFS "runlist_updates");
			steps0 = hws_steps(bq, nq);
			t0 = now_ns();
		}
		usleep(opt.period_us / 2 + (rand() % 1000));
		t = now_ns();
		seq = submit(&uq, 4, opt.urgent_steps, opt.urgent_step_us * 1000ull,
			     addr + 2048);
		if (wait_seq(&uq, seq, 60ull * 1000000000ull))
			die("urgent wait");
		if (i >= WARMUP)
			lat[i - WARMUP] = now_ns() - t;
	}
	t1 = now_ns();
	u1 = read_u64(SIM_DEBUGFS "runlist_updates");
	steps1 = hws_steps(bq, nq);
	for (i = 0; i < nq; i++)
		close(bq[i].fd);
	close(uq.fd);
	close(simdev);
	close(dev);
	dev = main_dev;
	simdev = main_simdev;
	qsort(lat, requests, sizeof(*lat), cmp_u64);
	r->nq = nq;
	r->batch = batch;
	r->p50 = pct(lat, requests, 50);
	r->p90 = pct(lat, requests, 90);
	r->tail = tail(lat, requests);
	r->updates_per_req = (double)(u1 - u0) / requests;
	r->batch_steps_per_s = (double)(steps1 - steps0) * 1e9 / (double)(t1 - t0);
	free(lat);
	free(bq);
}

static void hws_table(void)
{
	static const unsigned int nqs[] = { 1, 4, 16 };
	struct hws_result r[6];
	unsigned int i, n = 0;

	if (access(SIM_DEBUGFS, F_OK))
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	if (write_text(SIM_DEBUGFS "hws", "1")) {
		printf("\n(HWS model table skipped: no %s)\n", SIM_DEBUGFS);
		return;
	}
	for (i = 0; i < sizeof(nqs) / sizeof(nqs[0]); i++) {
		if (gpu_slots % nqs[i])
			continue;
		hws_case(nqs[i], true, &r[n++]);
		hws_case(nqs[i], false, &r[n++]);
	}
	write_text(SIM_DEBUGFS "hws", "0");
	write_text(BATCH_PARAM, "Y");
	printf("\nHWS model (gfx9: every suspend or resume preempts the whole GPU, %llu us each)\n",
	       (unsigned long long)read_u64(SIM_DEBUGFS "hws_update_us"));
	printf("%u urgent requests per row after %u warm-up ones\n", HWS_REQUESTS, WARMUP);
	printf("%-13s %-8s %9s %9s %6s ms %16s %15s\n", "batch queues", "batches",
	       "P50 ms", "P90 ms", tail_name(HWS_REQUESTS), "updates/request",
	       "batch steps/s");
	for (i = 0; i < n; i++) {
		char b50[16], b90[16], btail[16];

		printf("%-13u %-8s %s %s %s %16.1f %15.1f\n", r[i].nq,
		       r[i].batch ? "on" : "off", ms(b50, sizeof(b50), r[i].p50),
		       ms(b90, sizeof(b90), r[i].p90), ms(btail, sizeof(btail), r[i].tail),
		       r[i].updates_per_req, r[i].batch_steps_per_s);
	}
	printf("\nupdates/request: runlist updates (device-wide preemptions) per urgent\n"
	       "kernel.  With batches the arbiter stops or resumes every batch queue of a\n"
	       "pass with one update; without, with one per queue.\n");
}

static void usage(void)
{
	fprintf(stderr,
		"usage: xsched-demo [-n requests] [-p period_us] [-b batch_workgroup_ms]\n"
		"                   [-s urgent_steps] [-t urgent_step_us] [-S]\n"
		"  -S  also print every urgent latency of each case (xsched-samples lines)\n");
	exit(2);
}

static unsigned int arg_uint(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v == 0 || v > 1000000)
		usage();
	return (unsigned int)v;
}

int main(int argc, char **argv)
{
	struct xsched_sim_info v = {};
	struct result r[5];
	int c, i;

	while ((c = getopt(argc, argv, "n:p:b:s:t:S")) != -1) {
		switch (c) {
		case 'n': opt.requests = arg_uint(optarg); break;
		case 'p': opt.period_us = arg_uint(optarg); break;
		case 'b': opt.batch_wg_ms = arg_uint(optarg); break;
		case 's': opt.urgent_steps = arg_uint(optarg); break;
		case 't': opt.urgent_step_us = arg_uint(optarg); break;
		case 'S': opt.samples = true; break;
		default: usage();
		}
	}
	srand(1);
	dev = open("/dev/" XSCHED_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (dev < 0)
		die("open /dev/xsched (is xsched_kfd.ko loaded?)");
	simdev = open("/dev/" XSCHED_SIM_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (simdev < 0)
		die("open /dev/" XSCHED_SIM_DEVICE_NAME " (is xsched_sim.ko loaded?)");
	if (ioctl(simdev, XSCHED_IOC_SIM_INFO, &v))
		die("XSCHED_IOC_SIM_INFO");
	gpu_slots = v.cus * v.waves_per_cu;
	batch_addr = mem_alloc(gpu_slots * 8);
	urgent_addr = mem_alloc(4096);
	queue_open(&batch_q, -1, 0);
	queue_open(&urgent_q, 0, 0);

	printf("sim GPU: %u CUs x %u wave slots; batch: %u workgroups of %u ms; urgent: 4 workgroups x %u steps x %u us, every %u us\n",
	       v.cus, v.waves_per_cu, gpu_slots, opt.batch_wg_ms,
	       opt.urgent_steps, opt.urgent_step_us, opt.period_us);
	run_case("alone", 0, 0, &r[0]);
	run_case("none (no preemption)", 1, 0, &r[1]);
	run_case("drain (Lv2)", 1, XSCHED_MODE_DRAIN, &r[2]);
	run_case("save (Lv3)", 1, XSCHED_MODE_SAVE, &r[3]);
	/* Fresh queues, registered for the module's arbiter. */
	close(batch_q.fd);
	close(urgent_q.fd);
	queue_open(&batch_q, -1, XSCHED_REGISTER_ARBITRATE);
	queue_open(&urgent_q, 0, XSCHED_REGISTER_ARBITRATE);
	run_case("arbiter (Lv3, module)", 1, 0, &r[4]);

	printf("\n%u urgent requests per row after %u warm-up ones\n", opt.requests, WARMUP);
	printf("%-22s %9s %9s %6s ms %7s %7s %11s %9s %16s\n", "urgent queue",
	       "P50 ms", "P90 ms", tail_name(opt.requests), "P50 x", "P90 x",
	       "batch it/s", "suspends", "mean suspend us");
	for (i = 0; i < 5; i++) {
		char b50[16], b90[16], btail[16], x50[16], x90[16];

		printf("%-22s %s %s %s %s %s %11.2f %9llu %16.1f\n",
		       r[i].name, ms(b50, sizeof(b50), r[i].p50),
		       ms(b90, sizeof(b90), r[i].p90), ms(btail, sizeof(btail), r[i].tail),
		       ratio(x50, sizeof(x50), r[i].p50, r[0].p50),
		       ratio(x90, sizeof(x90), r[i].p90, r[0].p90),
		       r[i].batch_per_s, (unsigned long long)r[i].suspends,
		       r[i].susp_mean_ns / 1e3);
	}
	printf("\nx: ratio to the urgent queue alone.  P90 and P99 are printed where at\n"
	       "least %d samples lie above them (P99: -n 1000 or more), else '-' and the\n"
	       "last column is the maximum.  batch it/s: batch kernels' worth of steps\n"
	       "the module ran inside the window.  Suspends and their mean latency are\n"
	       "the module's counters for the batch queue; in the arbiter row the module\n"
	       "made them on its own, with no suspend call from this program.\n", TAIL_MIN);
	/* Closed first: arbitrated, they would be stopped and resumed too. */
	close(batch_q.fd);
	close(urgent_q.fd);
	hws_table();
	close(simdev);
	close(dev);
	return 0;
}
