// SPDX-License-Identifier: GPL-2.0
/*
 * The module's cross-process arbiter (XSCHED_REGISTER_ARBITRATE): while an
 * arbitrated queue of higher priority has unfinished work, lower ones are
 * suspended, in whichever process they live, and resumed afterwards with
 * their work intact: results equal to the CPU reference and, by the step
 * marks of MARK kernels, every step executed exactly once.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "xsched_test.h"

/*
 * Batch workgroups are long so that without preemption an urgent kernel would
 * wait, and long against the CPU time the arbiter and the save take on a slow
 * kernel in a VM short of CPU (up to about 100 ms).
 */
#define BATCH_STEPS	80
#define BATCH_STEP_NS	(10 * XS_MS)		/* 800 ms per workgroup */
#define WAIT_NS		(30 * XS_SEC)
#define ARBITER_BATCH_PARAM	"/sys/module/xsched_kfd/parameters/arbiter_batch"

static int reg_arb(int cfd, int sfd, uint32_t id, int32_t prio)
{
	return xs_register_flags(cfd, sfd, id, prio, XSCHED_REGISTER_ARBITRATE, NULL);
}

FIXTURE(arb) {
	int cfd;
	struct xsched_version ver;
	int sfd;
	struct xsched_sim_info sim;
	struct xs_buf out;
	uint32_t id;
	int qfd;
	struct xsched_sim_packet pkt;
	uint64_t seq;
};

FIXTURE_SETUP(arb)
{
	XS_CLIENT_OPEN_OR_SKIP(self->cfd, self->ver);
	XS_SIM_OPEN_OR_SKIP(self->sfd, self->sim);
	ASSERT_EQ(0, xs_buf_alloc(self->sfd, 16 * xs_slots(&self->sim), &self->out));
	ASSERT_EQ(0, xs_queue_create(self->sfd, 16, &self->id, NULL));
	self->qfd = reg_arb(self->cfd, self->sfd, self->id, -1);
	ASSERT_LE(0, self->qfd) TH_LOG("register arbitrated: %s", xs_err(self->qfd));
	self->pkt = xs_mark_packet(xs_slots(&self->sim), BATCH_STEPS, BATCH_STEP_NS, 7,
				   self->out.gpu_addr, 0);
	xs_marks_clear(&self->pkt, self->out.map);
}

FIXTURE_TEARDOWN(arb)
{
	/* What the HWS tests change, back to the defaults (harmless elsewhere). */
	xs_knob_write("hws", 0);
	xs_write_file(ARBITER_BATCH_PARAM, "Y");
	if (self->cfd < 0)
		return;
	close(self->qfd);
	xs_buf_free(&self->out);
	close(self->cfd);
	close(self->sfd);
}

/* Batch kernel output, step marks and step count: exactly the CPU reference. */
static void check_batch_done(struct __test_metadata *_metadata,
			     FIXTURE_DATA(arb) *self)
{
	uint32_t n = self->pkt.grid;
	uint64_t want[n];
	struct xsched_queue_info info;

	ASSERT_EQ(0, xs_wait(self->sfd, self->id, self->seq, WAIT_NS, NULL));
	xs_ref_packet(&self->pkt, NULL, want);
	EXPECT_EQ(-1, xs_first_mismatch(self->out.map, want, n));
	XS_EXPECT_MARKS(&self->pkt, self->out.map);
	ASSERT_EQ(0, xs_query(self->qfd, &info));
	EXPECT_EQ((uint64_t)n * BATCH_STEPS, info.steps_done);
}

/*
 * Runs an urgent queue in a child process (its own client) and returns the
 * latency of one short kernel in ns through a pipe, or 0 on error.
 */
static uint64_t urgent_in_child(int32_t prio, uint32_t steps, uint64_t step_ns)
{
	uint64_t lat = 0;
	int pfd[2];
	pid_t pid;

	if (pipe(pfd))
		return 0;
	pid = fork();
	if (pid == 0) {
		struct xs_buf b;
		uint64_t seq, t0;
		uint32_t id;
		int cfd, sfd, qfd;

		close(pfd[0]);
		if (xs_client_open(&cfd, NULL) || xs_sim_open(&sfd, NULL) ||
		    xs_buf_alloc(sfd, 4096, &b) ||
		    xs_queue_create(sfd, 4, &id, NULL))
			_exit(1);
		qfd = reg_arb(cfd, sfd, id, prio);
		if (qfd < 0)
			_exit(2);
		struct xsched_sim_packet p = xs_packet(4, steps, step_ns, 3, b.gpu_addr, 0);

		t0 = xs_now_ns();
		if (xs_submit(sfd, id, &p, 1, &seq) || xs_wait(sfd, id, seq, WAIT_NS, NULL))
			_exit(3);
		lat = xs_now_ns() - t0;
		if (b.map[1] != xs_ref_workgroup(3, 1, steps, NULL))
			_exit(4);
		if (write(pfd[1], &lat, sizeof(lat)) != sizeof(lat))
			_exit(5);
		_exit(0);
	}
	close(pfd[1]);
	if (pid > 0) {
		int st;

		if (read(pfd[0], &lat, sizeof(lat)) != sizeof(lat))
			lat = 0;
		waitpid(pid, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			lat = 0;
	}
	close(pfd[0]);
	return lat;
}

TEST_F(arb, urgent_process_preempts_batch_process)
{
	struct xsched_queue_info info;
	uint64_t lat;

	ASSERT_EQ(0, xs_submit(self->sfd, self->id, &self->pkt, 1, &self->seq));
	ASSERT_EQ(0, xs_wait_steps(self->qfd, 1, WAIT_NS));

	lat = urgent_in_child(0, 5, XS_MS);
	ASSERT_NE(0, lat) TH_LOG("urgent child failed");
	ksft_print_msg("urgent kernel beside a batch workgroup of %llu ms: %.2f ms\n",
		       BATCH_STEPS * BATCH_STEP_NS / XS_MS, lat / 1e6);
	/* Without preemption it waits for a 200 ms workgroup to end. */
	EXPECT_LT(lat * 2, BATCH_STEPS * BATCH_STEP_NS);

	ASSERT_EQ(0, xs_query(self->qfd, &info));
	EXPECT_EQ(1, info.arbitrated);
	EXPECT_LE(1, info.arbiter_suspends);
	EXPECT_LE(1, info.suspends);
	EXPECT_EQ(XSCHED_MODE_SAVE, info.last_mode);
	check_batch_done(_metadata, self);
	ASSERT_EQ(0, xs_wait_state(self->qfd, XSCHED_STATE_ACTIVE, WAIT_NS));
}

TEST_F(arb, manual_suspend_and_resume_are_refused)
{
	EXPECT_EQ(-EBUSY, xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	EXPECT_EQ(-EBUSY, xs_resume(self->qfd, NULL));
}

TEST_F(arb, unknown_register_flag_is_rejected)
{
	struct xsched_register r = {
		.backend = XSCHED_BACKEND_SIM,
		.flags = XSCHED_REGISTER_FLAGS << 1,
		.handle = self->id,
		.backend_fd = (__u32)self->sfd,
	};

	EXPECT_EQ(-EINVAL, xs_ioctl(self->cfd, XSCHED_IOC_REGISTER, &r));
}

TEST_F(arb, equal_priority_queues_are_left_alone)
{
	struct xsched_queue_info info;
	uint32_t id2;
	uint64_t seq2;
	int q2;

	ASSERT_EQ(0, xs_queue_create(self->sfd, 4, &id2, NULL));
	q2 = reg_arb(self->cfd, self->sfd, id2, -1);
	ASSERT_LE(0, q2);
	struct xsched_sim_packet p = xs_packet(2, 20, XS_MS, 1, self->out.gpu_addr, 0);

	self->pkt.steps = 20;
	self->pkt.step_ns = XS_MS;
	ASSERT_EQ(0, xs_submit(self->sfd, self->id, &self->pkt, 1, &self->seq));
	ASSERT_EQ(0, xs_submit(self->sfd, id2, &p, 1, &seq2));
	ASSERT_EQ(0, xs_wait(self->sfd, id2, seq2, WAIT_NS, NULL));
	ASSERT_EQ(0, xs_wait(self->sfd, self->id, self->seq, WAIT_NS, NULL));
	ASSERT_EQ(0, xs_query(self->qfd, &info));
	EXPECT_EQ(0, info.arbiter_suspends);
	ASSERT_EQ(0, xs_query(q2, &info));
	EXPECT_EQ(0, info.arbiter_suspends);
	close(q2);
}

TEST_F(arb, closing_the_busy_urgent_queue_resumes_batch)
{
	uint32_t uid;
	uint64_t useq;
	int uq;

	ASSERT_EQ(0, xs_submit(self->sfd, self->id, &self->pkt, 1, &self->seq));
	ASSERT_EQ(0, xs_wait_steps(self->qfd, 1, WAIT_NS));
	ASSERT_EQ(0, xs_queue_create(self->sfd, 4, &uid, NULL));
	uq = reg_arb(self->cfd, self->sfd, uid, 0);
	ASSERT_LE(0, uq);
	/* Long enough that it is still busy when closed. */
	struct xsched_sim_packet p = xs_packet(1, 1000, 10 * XS_MS, 1,
					       self->out.gpu_addr, 0);

	ASSERT_EQ(0, xs_submit(self->sfd, uid, &p, 1, &useq));
	ASSERT_EQ(0, xs_wait_state(self->qfd, XSCHED_STATE_SUSPENDED, WAIT_NS));
	close(uq);
	ASSERT_EQ(0, xs_wait_state(self->qfd, XSCHED_STATE_ACTIVE, WAIT_NS));
	/* The unregistered queue still runs p, writing out[0]; compare the rest. */
	ASSERT_EQ(0, xs_wait(self->sfd, self->id, self->seq, WAIT_NS, NULL));
	uint64_t want[self->pkt.grid];

	xs_ref_packet(&self->pkt, NULL, want);
	EXPECT_EQ(-1, xs_first_mismatch(self->out.map + 1, want + 1, self->pkt.grid - 1));
	XS_EXPECT_MARKS(&self->pkt, self->out.map);
}

TEST_F(arb, raising_priority_swaps_who_runs)
{
	uint64_t useq;
	uint32_t uid;
	struct xs_buf ub;
	int uq;

	ASSERT_EQ(0, xs_buf_alloc(self->sfd, 4096, &ub));
	ASSERT_EQ(0, xs_queue_create(self->sfd, 4, &uid, NULL));
	uq = reg_arb(self->cfd, self->sfd, uid, 0);
	ASSERT_LE(0, uq);
	struct xsched_sim_packet p = xs_mark_packet(xs_slots(&self->sim), 40, 5 * XS_MS, 2,
						    ub.gpu_addr, 0);

	xs_marks_clear(&p, ub.map);
	ASSERT_EQ(0, xs_submit(self->sfd, uid, &p, 1, &useq));
	ASSERT_EQ(0, xs_submit(self->sfd, self->id, &self->pkt, 1, &self->seq));
	ASSERT_EQ(0, xs_wait_state(self->qfd, XSCHED_STATE_SUSPENDED, WAIT_NS));
	EXPECT_EQ(XSCHED_STATE_ACTIVE, xs_state(uq));

	ASSERT_EQ(0, xs_set_priority(self->qfd, 1));	/* root: CAP_SYS_NICE */
	ASSERT_EQ(0, xs_wait_state(uq, XSCHED_STATE_SUSPENDED, WAIT_NS));
	ASSERT_EQ(0, xs_wait_state(self->qfd, XSCHED_STATE_ACTIVE, WAIT_NS));
	check_batch_done(_metadata, self);
	/* Batch idle: the other queue gets the GPU back and finishes correctly. */
	ASSERT_EQ(0, xs_wait(self->sfd, uid, useq, WAIT_NS, NULL));
	EXPECT_EQ(-1, xs_packet_mismatch(&p, NULL, ub.map));
	XS_EXPECT_MARKS(&p, ub.map);
	close(uq);
	xs_buf_free(&ub);
}

TEST_F(arb, killed_urgent_process_releases_batch)
{
	int pfd[2];
	pid_t pid;
	char c;

	ASSERT_EQ(0, xs_submit(self->sfd, self->id, &self->pkt, 1, &self->seq));
	ASSERT_EQ(0, xs_wait_steps(self->qfd, 1, WAIT_NS));
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct xs_buf b;
		uint64_t seq;
		uint32_t id;
		int cfd, sfd;

		if (xs_client_open(&cfd, NULL) || xs_sim_open(&sfd, NULL) ||
		    xs_buf_alloc(sfd, 4096, &b) ||
		    xs_queue_create(sfd, 4, &id, NULL) || reg_arb(cfd, sfd, id, 0) < 0)
			_exit(1);
		struct xsched_sim_packet p = xs_packet(1, 1000, 10 * XS_MS, 1, b.gpu_addr, 0);

		if (xs_submit(sfd, id, &p, 1, &seq))
			_exit(2);
		if (write(pfd[1], "x", 1) != 1)
			_exit(3);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	ASSERT_EQ(1, read(pfd[0], &c, 1));
	close(pfd[0]);
	ASSERT_EQ(0, xs_wait_state(self->qfd, XSCHED_STATE_SUSPENDED, WAIT_NS));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ASSERT_EQ(0, xs_wait_state(self->qfd, XSCHED_STATE_ACTIVE, WAIT_NS));
	check_batch_done(_metadata, self);
}

/*
 * The sim's HWS model (debugfs sim/hws): every suspend and resume is a
 * runlist update that preempts the whole device, as on gfx9.  When one
 * urgent kernel makes the arbiter stop NQ batch queues (and the fixture's
 * idle one), and later resume them, batching makes that 2 runlist updates
 * instead of 2 * (NQ + 1); every
 * batch kernel still ends with exactly its reference output.
 *
 * The urgent kernel needs every wave slot, so it cannot finish before the
 * arbiter has stopped the batch queues, however late its pass runs on a slow
 * kernel.  The count is read once the batch kernels are done: a queue shows
 * resumed while the pass that resumed it still has its batch to end.
 */
#define NQ		4
#define HWS_STEPS	100	/* 200 ms batch workgroups: still running when the urgent kernel comes */

/* runlist_updates - @before, once it reaches @expect or 5 s have passed. */
static int hws_updates(uint64_t before, uint64_t expect, uint64_t *updates)
{
	uint64_t end = xs_now_ns() + 5 * XS_SEC, now = 0;
	int ret;

	for (;;) {
		ret = xs_knob_read("runlist_updates", &now);
		if (ret)
			return ret;
		*updates = now - before;
		if (*updates >= expect || xs_now_ns() > end)
			return 0;
		xs_sleep_ns(XS_MS);
	}
}

static void hws_round(struct __test_metadata *_metadata, FIXTURE_DATA(arb) *self,
		      bool batch, uint64_t expect, uint64_t *updates)
{
	uint32_t slots = xs_slots(&self->sim);
	struct xsched_sim_packet p[NQ];
	struct xsched_queue_info info;
	uint64_t seq[NQ], useq, before = 0, t0, t1;
	struct xs_buf b[NQ], ub;
	uint32_t id[NQ], uid;
	int qfd[NQ], uq, i;

	XS_DEBUGFS_OR_SKIP();
	ASSERT_EQ(0, xs_write_file(ARBITER_BATCH_PARAM, batch ? "Y" : "N"));
	ASSERT_EQ(0, xs_knob_write("hws", 1));
	/* The urgent queue first: nothing slow between batch start and urgent submit. */
	ASSERT_EQ(0, xs_buf_alloc(self->sfd, 4096, &ub));
	ASSERT_EQ(0, xs_queue_create(self->sfd, 4, &uid, NULL));
	uq = reg_arb(self->cfd, self->sfd, uid, 0);
	ASSERT_LE(0, uq);
	struct xsched_sim_packet up = xs_packet(slots, 5, XS_MS, 3, ub.gpu_addr, 0);

	for (i = 0; i < NQ; i++) {
		ASSERT_EQ(0, xs_buf_alloc(self->sfd, 4096, &b[i]));
		ASSERT_EQ(0, xs_queue_create(self->sfd, 4, &id[i], NULL));
		qfd[i] = reg_arb(self->cfd, self->sfd, id[i], -1);
		ASSERT_LE(0, qfd[i]);
		p[i] = xs_mark_packet(2, HWS_STEPS, 2 * XS_MS, 10 + i, b[i].gpu_addr, 0);
		xs_marks_clear(&p[i], b[i].map);
		ASSERT_EQ(0, xs_submit(self->sfd, id[i], &p[i], 1, &seq[i]));
	}
	for (i = 0; i < NQ; i++)
		ASSERT_EQ(0, xs_wait_steps(qfd[i], 1, WAIT_NS));

	ASSERT_EQ(0, xs_knob_read("runlist_updates", &before));
	t0 = xs_now_ns();
	ASSERT_EQ(0, xs_submit(self->sfd, uid, &up, 1, &useq));
	ASSERT_EQ(0, xs_wait(self->sfd, uid, useq, WAIT_NS, NULL));
	EXPECT_EQ(-1, xs_packet_mismatch(&up, NULL, ub.map));
	/* Every batch queue was stopped once and is running again. */
	for (i = 0; i < NQ; i++) {
		uint64_t end = xs_now_ns() + WAIT_NS;

		do {
			ASSERT_EQ(0, xs_query(qfd[i], &info));
			if (info.resumes >= 1 && info.state == XSCHED_STATE_ACTIVE)
				break;
			/* Done and never stopped: no resume is coming. */
			ASSERT_FALSE(!info.arbiter_suspends && info.rptr == info.wptr)
				TH_LOG("batch queue %d finished before the arbiter stopped it", i);
			xs_sleep_ns(XS_MS);
		} while (xs_now_ns() < end);
		EXPECT_EQ(1, info.arbiter_suspends);
		EXPECT_EQ(1, info.resumes);
		EXPECT_EQ(XSCHED_STATE_ACTIVE, info.state);
	}
	t1 = xs_now_ns();
	for (i = 0; i < NQ; i++) {
		uint64_t want[2];

		ASSERT_EQ(0, xs_wait(self->sfd, id[i], seq[i], WAIT_NS, NULL));
		xs_ref_packet(&p[i], NULL, want);
		EXPECT_EQ(-1, xs_first_mismatch(b[i].map, want, 2));
		XS_EXPECT_MARKS(&p[i], b[i].map);
		ASSERT_EQ(0, xs_query(qfd[i], &info));
		EXPECT_EQ(2 * HWS_STEPS, info.steps_done);
		close(qfd[i]);
		xs_buf_free(&b[i]);
	}
	ASSERT_EQ(0, hws_updates(before, expect, updates));
	TH_LOG("# figure: arbiter_batch=%d: %d queues stopped and resumed with %llu runlist updates in %.1f ms",
	       batch, NQ + 1, (unsigned long long)*updates, (t1 - t0) / 1e6);
	close(uq);
	xs_buf_free(&ub);
}

TEST_F(arb, hws_batch_makes_one_runlist_update_per_pass)
{
	uint64_t updates = 0;

	hws_round(_metadata, self, true, 2, &updates);
	EXPECT_EQ(2, updates);
}

TEST_F(arb, hws_without_batch_updates_once_per_queue)
{
	uint64_t updates = 0;

	hws_round(_metadata, self, false, 2 * (NQ + 1), &updates);
	/* The fixture's idle queue (priority -1) is stopped and resumed too. */
	EXPECT_EQ(2 * (NQ + 1), updates);
}

/*
 * Queues registered and closed while the arbiter passes run (HWS model and
 * batches on): a pass holds references to queues being closed, and must
 * neither call their backend once released nor lose a suspension.  Every
 * urgent kernel meanwhile completes with its reference output, and so does
 * every churned queue's kernel once its registration is closed: a queue the
 * arbiter left stopped would never finish it.
 */
struct churn {
	volatile int stop;
	int err;
	unsigned int rounds;
};

/* Where churn_round() failed. */
enum {
	CHURN_OK, CHURN_OPEN, CHURN_ALLOC, CHURN_CREATE, CHURN_REGISTER,
	CHURN_SUBMIT, CHURN_WAIT_REGISTERED,
	CHURN_STOPPED,		/* its kernel never completed: a lost suspension */
	CHURN_RESULT,		/* completed with a wrong result */
	CHURN_MARKS,		/* completed with a step run twice or lost */
};

static const char *const churn_what[] = {
	"ok", "open", "buffer", "queue create", "register", "submit",
	"wait while registered",
	"kernel never completed after its registration closed (left stopped)",
	"result differs from the CPU reference",
	"step marks differ: a step ran twice or was lost",
};

/*
 * One client per round: a MARK kernel on an arbitrated queue of priority -1
 * (the urgent queue's kernels stop it), whose registration is closed at
 * once, while it runs, or once it is done; then the kernel completes on the
 * client, exactly.  Every fourth round closes the client at once instead,
 * which frees its sim queue while a pass may still hold the registration.
 */
static int churn_round(unsigned int round)
{
	struct xsched_sim_packet p;
	struct xs_buf b;
	uint64_t seq;
	uint32_t id;
	int cfd, sfd, qfd = -1, ret = CHURN_OK;

	if (xs_client_open(&cfd, NULL))
		return CHURN_OPEN;
	if (xs_sim_open(&sfd, NULL)) {
		close(cfd);
		return CHURN_OPEN;
	}
	if (xs_buf_alloc(sfd, 4096, &b)) {
		close(sfd);
		close(cfd);
		return CHURN_ALLOC;
	}
	p = xs_mark_packet(2, 4, XS_MS, 5 + round, b.gpu_addr, 0);
	xs_marks_clear(&p, b.map);
	if (xs_queue_create(sfd, 4, &id, NULL))
		ret = CHURN_CREATE;
	if (!ret) {
		qfd = reg_arb(cfd, sfd, id, -1);
		if (qfd < 0)
			ret = CHURN_REGISTER;
	}
	if (!ret && xs_submit(sfd, id, &p, 1, &seq))
		ret = CHURN_SUBMIT;
	if (!ret && round % 4 == 1)
		xs_sleep_ns(XS_MS);
	else if (!ret && round % 4 == 2 && xs_wait(sfd, id, seq, WAIT_NS, NULL))
		ret = CHURN_WAIT_REGISTERED;
	if (qfd >= 0)
		close(qfd);
	if (!ret && round % 4 != 3) {
		/* 4 ms of work, no longer arbitrated: 5 s is plenty. */
		if (xs_wait(sfd, id, seq, 5 * XS_SEC, NULL))
			ret = CHURN_STOPPED;
		else if (xs_packet_mismatch(&p, NULL, b.map) != -1)
			ret = CHURN_RESULT;
		else if (xs_marks_not(&p, b.map, p.steps) != -1)
			ret = CHURN_MARKS;
	}
	xs_buf_free(&b);
	close(sfd);
	close(cfd);
	return ret;
}

static void *churn_thread(void *arg)
{
	struct churn *c = arg;

	while (!c->stop && !c->err)
		c->err = churn_round(c->rounds++);
	return NULL;
}

TEST_F(arb, queues_closed_while_the_arbiter_acts_on_them)
{
	struct churn c[3] = {};
	uint64_t useq, before = 0, after = 0, t_end;
	pthread_t th[3];
	unsigned int i, n = 0;
	struct xs_buf ub;
	uint32_t uid;
	int uq;

	XS_DEBUGFS_OR_SKIP();
	ASSERT_EQ(0, xs_knob_write("hws", 1));
	ASSERT_EQ(0, xs_knob_read("runlist_updates", &before));
	ASSERT_EQ(0, xs_buf_alloc(self->sfd, 4096, &ub));
	ASSERT_EQ(0, xs_queue_create(self->sfd, 4, &uid, NULL));
	uq = reg_arb(self->cfd, self->sfd, uid, 0);
	ASSERT_LE(0, uq);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, churn_thread, &c[i]));
	t_end = xs_now_ns() + 2 * XS_SEC;
	while (xs_now_ns() < t_end) {
		struct xsched_sim_packet up = xs_mark_packet(1, 2, XS_MS, 40 + n % 8,
							     ub.gpu_addr, 0);

		xs_marks_clear(&up, ub.map);
		ASSERT_EQ(0, xs_submit(self->sfd, uid, &up, 1, &useq));
		ASSERT_EQ(0, xs_wait(self->sfd, uid, useq, WAIT_NS, NULL));
		EXPECT_EQ(xs_ref_workgroup(40 + n % 8, 0, 2, NULL), ub.map[0]);
		XS_EXPECT_MARKS(&up, ub.map);
		n++;
		xs_sleep_ns(2 * XS_MS);
	}
	for (i = 0; i < 3; i++) {
		c[i].stop = 1;
		pthread_join(th[i], NULL);
		EXPECT_EQ(CHURN_OK, c[i].err)
			TH_LOG("churn thread %u, round %u: %s", i, c[i].rounds - 1,
			       churn_what[c[i].err]);
		EXPECT_LT(0, c[i].rounds);
	}
	ASSERT_EQ(0, xs_knob_read("runlist_updates", &after));
	TH_LOG("# figure: %u urgent kernels beside %u+%u+%u short-lived queues, %llu runlist updates",
	       n, c[0].rounds, c[1].rounds, c[2].rounds,
	       (unsigned long long)(after - before));
	/* The arbiter did act (the fixture's idle queue alone guarantees it). */
	EXPECT_LT(0, after - before);
	/* Nothing stays stopped once the urgent queue is idle. */
	t_end = xs_now_ns() + WAIT_NS;
	while (xs_table_count_stopped() && xs_now_ns() < t_end)
		xs_sleep_ns(XS_MS);
	EXPECT_EQ(0, xs_table_count_stopped());
	EXPECT_EQ(XSCHED_STATE_ACTIVE, xs_state(self->qfd));
	close(uq);
	xs_buf_free(&ub);
}

TEST_HARNESS_MAIN
