// SPDX-License-Identifier: GPL-2.0
/*
 * Random ioctls, with random and half-plausible arguments, on client fds,
 * queue fds and foreign fds, interleaved with closes, re-registrations,
 * fault injection and the sim's HWS model with the arbiter's batches on and
 * off.  Blocking calls are cut short by an interval timer.
 * Afterwards the module must still compute correctly, and its live-object
 * counters (debugfs xsched/objects) must be back where they were before the
 * fuzzer opened anything: it left no object behind.  The seed is printed; XSCHED_SEED replays a run, XSCHED_FUZZ_ITERATIONS
 * makes it longer.
 */
#include <signal.h>
#include <sys/time.h>

#include "xsched_test.h"

#define ITERATIONS	20000
#define NQ		8
#define ARBITER_BATCH_PARAM	"/sys/module/xsched_kfd/parameters/arbiter_batch"

static const unsigned long cmds[] = {
	XSCHED_IOC_VERSION, XSCHED_IOC_SIM_MEM_ALLOC, XSCHED_IOC_SIM_QUEUE_CREATE,
	XSCHED_IOC_SIM_SUBMIT, XSCHED_IOC_SIM_WAIT, XSCHED_IOC_SIM_QUEUE_DESTROY,
	XSCHED_IOC_REGISTER,
	XSCHED_IOC_KFD_ATTACH, XSCHED_IOC_SUSPEND, XSCHED_IOC_RESUME,
	XSCHED_IOC_QUERY, XSCHED_IOC_SET_PRIORITY,
};

static void on_alarm(int sig)
{
	(void)sig;
}

/* Make a random argument plausible enough to reach deep into the module. */
static void sanitize(unsigned long cmd, void *arg, uint64_t *rng, uint64_t dst,
		     struct xsched_sim_packet *pkts, const int *sfd)
{
	unsigned int i;

	switch (cmd) {
	case XSCHED_IOC_SIM_MEM_ALLOC: {
		struct xsched_sim_mem *m = arg;

		memset(m, 0, sizeof(*m));
		m->size = xs_rand_range(rng, 0, 3 * XS_PAGE);
		break;
	}
	case XSCHED_IOC_SIM_QUEUE_CREATE: {
		struct xsched_sim_queue_create *c = arg;

		memset(c, 0, sizeof(*c));
		c->ring_size = 1u << xs_rand_range(rng, 0, 13);
		break;
	}
	case XSCHED_IOC_SIM_SUBMIT: {
		struct xsched_sim_submit *s = arg;

		memset(s, 0, sizeof(*s));
		s->queue_id = xs_rand_range(rng, 0, NQ);
		s->count = xs_rand_range(rng, 0, 4);
		s->packets = (uintptr_t)pkts;
		for (i = 0; i < 4; i++) {
			pkts[i] = xs_packet(xs_rand_range(rng, 1, 20),
					    xs_rand_range(rng, 1, 50),
					    xs_rand_range(rng, 0, 200) * XS_US,
					    xs_rand(rng),
					    /* sometimes unmapped: a run-time fault */
					    xs_rand_range(rng, 0, 50) ? dst : 0xdead000, 0);
			if (xs_rand_range(rng, 0, 1))
				pkts[i].kernel = XSCHED_SIM_KERNEL_MARK;
		}
		break;
	}
	case XSCHED_IOC_SIM_WAIT: {
		struct xsched_sim_wait *w = arg;

		memset(w, 0, sizeof(*w));
		w->queue_id = xs_rand_range(rng, 0, NQ);
		w->seq = xs_rand_range(rng, 0, 40);
		w->timeout_ns = xs_rand_range(rng, 0, 2 * XS_MS);
		break;
	}
	case XSCHED_IOC_SIM_QUEUE_DESTROY: {
		struct xsched_sim_queue_destroy *d = arg;

		memset(d, 0, sizeof(*d));
		d->queue_id = xs_rand_range(rng, 0, NQ);
		break;
	}
	case XSCHED_IOC_REGISTER: {
		struct xsched_register *r = arg;

		memset(r, 0, sizeof(*r));
		r->backend = xs_rand_range(rng, 0, 2);
		r->flags = xs_rand_range(rng, 0, 1);
		r->handle = xs_rand_range(rng, 0, NQ);
		r->backend_fd = (__u32)sfd[xs_rand_range(rng, 0, 1)];
		r->priority = (int32_t)xs_rand_range(rng, 0, 6) - 3;
		break;
	}
	case XSCHED_IOC_SUSPEND: {
		struct xsched_suspend *s = arg;

		memset(s, 0, sizeof(*s));
		s->mode = xs_rand_range(rng, 0, 3);
		s->flags = xs_rand_range(rng, 0, 1);
		s->grace_ns = xs_rand_range(rng, 0, 2) * XS_MS;
		break;
	}
	case XSCHED_IOC_RESUME:
	case XSCHED_IOC_QUERY:
	case XSCHED_IOC_SET_PRIORITY:
	case XSCHED_IOC_KFD_ATTACH:
		memset(arg, 0, 64);
		if (cmd == XSCHED_IOC_SET_PRIORITY)
			((struct xsched_set_priority *)arg)->priority =
				(int32_t)xs_rand_range(rng, 0, 6) - 3;
		break;
	}
}

TEST(random_ioctls_leave_the_module_working)
{
	struct itimerval it = { { 0, 3000 }, { 0, 3000 } };
	struct sigaction sa = { .sa_handler = on_alarm };
	struct xsched_sim_packet pkts[4];
	int cfd[2], sfd[2], qfd[16], nq = 0, nullfd, fd, ret, i;
	uint64_t rng, dst, counts[4] = { 0 };
	unsigned char arg[256];
	struct xsched_version ver;
	struct xs_objects before, after;
	const char *env = getenv("XSCHED_FUZZ_ITERATIONS");
	int iterations = env ? atoi(env) : ITERATIONS;
	uint64_t end;

	if (access(XS_DEV_PATH, F_OK))
		SKIP(return, "no " XS_DEV_PATH ": %s (is xsched_kfd.ko loaded?)",
		     strerror(errno));
	ret = xs_debugfs_ready();
	if (ret)
		SKIP(return, "%s: %s (the object counters need CONFIG_DEBUG_FS)",
		     XS_DEBUGFS_DIR, xs_err(ret));
	/* Before the fuzzer's first client: all it creates must go again. */
	ret = xs_objects_read(&before);
	ASSERT_LT(0, ret) TH_LOG("%s: %s", XS_OBJECTS_PATH, xs_err(ret));
	ASSERT_EQ(0, xs_client_open(&cfd[0], &ver));
	ASSERT_EQ(0, xs_client_open(&cfd[1], NULL));
	ASSERT_EQ(0, xs_sim_open(&sfd[0], NULL));
	ASSERT_EQ(0, xs_sim_open(&sfd[1], NULL));
	ASSERT_EQ(0, xs_mem_alloc(sfd[0], 4096, &dst));
	nullfd = open("/dev/null", O_RDWR);
	ASSERT_LE(0, nullfd);
	rng = xs_seed("fuzz");
	xs_knob_write("save_timeout_ms", 50);

	sigemptyset(&sa.sa_mask);
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));	/* no SA_RESTART */
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));

	for (i = 0; i < iterations; i++) {
		unsigned long cmd = cmds[xs_rand_range(&rng, 0, sizeof(cmds) / sizeof(cmds[0]) - 1)];
		uint64_t pick = xs_rand_range(&rng, 0, 99);
		void *p = arg;

		if (pick < 3 && nq) {		/* close a queue fd */
			int k = xs_rand_range(&rng, 0, nq - 1);

			close(qfd[k]);
			qfd[k] = qfd[--nq];
			continue;
		}
		if (pick < 4) {			/* poke a fault or HWS-model knob */
			switch (xs_rand_range(&rng, 0, 3)) {
			case 0:
				xs_knob_write("fail_resume", xs_rand_range(&rng, 0, 1));
				break;
			case 1:
				xs_knob_write("fail_save", xs_rand_range(&rng, 0, 1));
				break;
			case 2:
				xs_knob_write("hws", xs_rand_range(&rng, 0, 1));
				break;
			default:
				xs_write_file(ARBITER_BATCH_PARAM,
					      xs_rand_range(&rng, 0, 1) ? "Y" : "N");
			}
			continue;
		}
		if (pick < 8)
			cmd = xs_rand(&rng);	/* an unknown command */

		if (xs_rand_range(&rng, 0, 1)) {
			for (size_t b = 0; b < sizeof(arg); b++)
				arg[b] = xs_rand(&rng);
		} else {
			sanitize(cmd, arg, &rng, dst, pkts, sfd);
		}
		if (xs_rand_range(&rng, 0, 30) == 0)
			p = (void *)(uintptr_t)(xs_rand_range(&rng, 0, 1) ? 8 : 0xffff800000000000ull);

		pick = xs_rand_range(&rng, 0, 9);
		if (pick < 5)	/* a client or a sim fd */
			fd = (pick & 2 ? sfd : cfd)[pick & 1];
		else if (pick < 9 && nq)
			fd = qfd[xs_rand_range(&rng, 0, nq - 1)];
		else
			fd = pick == 9 ? nullfd : 1000;

		ret = ioctl(fd, cmd, p);
		if (ret >= 0 && cmd == XSCHED_IOC_REGISTER && fd != nullfd) {
			if (nq < 16)
				qfd[nq++] = ret;
			else
				close(ret);
		}
		counts[ret >= 0 ? 0 : errno == EINTR ? 1 : errno == ENOTTY ? 2 : 3]++;
	}
	it.it_value.tv_usec = 0;
	it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	ksft_print_msg("%d ioctls: %llu ok, %llu EINTR, %llu ENOTTY, %llu other errors\n",
		       iterations, (unsigned long long)counts[0],
		       (unsigned long long)counts[1], (unsigned long long)counts[2],
		       (unsigned long long)counts[3]);
	xs_knob_write("fail_resume", 0);
	xs_knob_write("fail_save", 0);
	xs_knob_write("hws", 0);
	xs_write_file(ARBITER_BATCH_PARAM, "Y");
	xs_knob_write("save_timeout_ms", 1000);

	while (nq)
		close(qfd[--nq]);
	close(sfd[0]);
	close(sfd[1]);
	close(cfd[0]);
	close(cfd[1]);
	close(nullfd);

	/* Still computing correctly. */
	{
		struct xs_buf b;
		uint64_t seq, want[8];
		uint32_t id;
		int c, sc, q;

		ASSERT_EQ(0, xs_client_open(&c, NULL));
		ASSERT_EQ(0, xs_sim_open(&sc, NULL));
		ASSERT_EQ(0, xs_buf_alloc(sc, 4096, &b));
		ASSERT_EQ(0, xs_queue_create(sc, 4, &id, NULL));
		q = xs_register(c, sc, id, 0, NULL);
		ASSERT_LE(0, q);
		struct xsched_sim_packet pk = xs_mark_packet(8, 30, 50 * XS_US, 5, b.gpu_addr, 0);

		xs_marks_clear(&pk, b.map);
		ASSERT_EQ(0, xs_submit(sc, id, &pk, 1, &seq));
		ASSERT_EQ(0, xs_suspend(q, XSCHED_MODE_SAVE, 0, 0, NULL));
		ASSERT_EQ(0, xs_resume(q, NULL));
		ASSERT_EQ(0, xs_wait(sc, id, seq, 30 * XS_SEC, NULL));
		xs_ref_packet(&pk, NULL, want);
		EXPECT_EQ(-1, xs_first_mismatch(b.map, want, 8));
		XS_EXPECT_MARKS(&pk, b.map);
		close(q);
		xs_buf_free(&b);
		close(sc);
		close(c);
	}

	/* Nothing left: an arbiter pass may hold a closed queue a moment. */
	end = xs_now_ns() + 10 * XS_SEC;
	do {
		ASSERT_LT(0, xs_objects_read(&after));
		ret = xs_objects_diff(&before, &after);
		if (ret < 0)
			break;
		xs_sleep_ns(10 * XS_MS);
	} while (xs_now_ns() < end);
	EXPECT_EQ(-1, ret) TH_LOG("%s: %ld after the fuzzer, %ld before it",
				  after.name[ret < 0 ? 0 : ret],
				  after.count[ret < 0 ? 0 : ret],
				  before.count[ret < 0 ? 0 : ret]);
	for (i = 0; i < after.n; i++)
		ksft_print_msg("objects after the fuzzer: %s %ld\n", after.name[i],
			       after.count[i]);
}

TEST_HARNESS_MAIN
