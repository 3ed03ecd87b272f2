// SPDX-License-Identifier: GPL-2.0
/*
 * cleanup: nothing stays suspended after its owner is gone.  Children are
 * SIGKILLed with queues suspended, in the middle of a blocking suspend and in
 * the middle of SIM_WAIT; afterwards the work of queues whose client
 * survived completes exactly and debugfs lists no stopped queue.  Closing a
 * queue fd resumes its queue; closing the client fd first keeps the queue fd
 * working.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include <stdatomic.h>

#include "xsched_test.h"

FIXTURE(cl) {
	int cfd;
	struct xsched_version ver;
	int sfd;
	struct xsched_sim_info sim;
	unsigned int slots;
	uint32_t id;
	struct xs_buf dst;
	struct xsched_sim_packet pkt;
	uint64_t seq;
	uint64_t save_timeout_ms;	/* to restore after slow_saves() */
	pid_t child;
};

FIXTURE_SETUP(cl)
{
	self->child = 0;
	XS_CLIENT_OPEN_OR_SKIP(self->cfd, self->ver);
	XS_SIM_OPEN_OR_SKIP(self->sfd, self->sim);
	self->slots = xs_slots(&self->sim);
	ASSERT_LT(0, self->slots);
	ASSERT_EQ(0, xs_buf_alloc(self->sfd, 2 * self->slots * sizeof(uint64_t),
				  &self->dst));
	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &self->id, NULL));
	XS_DEBUGFS_OR_SKIP();
}

FIXTURE_TEARDOWN(cl)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	xs_knob_write("save_delay_us", 0);
	if (self->save_timeout_ms)
		xs_knob_write("save_timeout_ms", self->save_timeout_ms);
	if (self->cfd >= 0)
		close(self->cfd);
	/* 0 if the client was missing: setup skipped before the sim */
	if (self->sfd > 0)
		close(self->sfd);
}

/*
 * Makes every wave save take @delay_us more, with the save watchdog far
 * enough out that a slow save is never taken for a hung one.
 */
static void slow_saves(struct __test_metadata *_metadata,
		       FIXTURE_DATA(cl) *self, uint64_t delay_us)
{
	if (!self->save_timeout_ms) {
		ASSERT_EQ(0, xs_knob_read("save_timeout_ms", &self->save_timeout_ms));
	}
	ASSERT_EQ(0, xs_knob_write("save_timeout_ms", 10000));
	ASSERT_EQ(0, xs_knob_write("save_delay_us", delay_us));
}

/* What a child reports through its pipe. */
struct report {
	int stage;
	int err;		/* 0 or -errno of the step it reports */
	uint32_t uids[8];
	int nuids;
};

static void child_report(int fd, int stage, int err, const uint32_t *uids,
			 int nuids)
{
	struct report r = { .stage = stage, .err = err, .nuids = nuids };

	if (nuids)
		memcpy(r.uids, uids, nuids * sizeof(*uids));
	if (write(fd, &r, sizeof(r)) != sizeof(r))
		_exit(3);
}

/* Reads the child's next report, waiting at most 30 s. */
static int read_report(int fd, struct report *r)
{
	int ev = xs_poll(fd, POLLIN, 30000);

	if (ev <= 0)
		return ev ? ev : -ETIMEDOUT;
	return read(fd, r, sizeof(*r)) == sizeof(*r) ? 0 : -EIO;
}

static void kill_child(struct __test_metadata *_metadata,
		       FIXTURE_DATA(cl) *self)
{
	int status;

	ASSERT_EQ(0, kill(self->child, SIGKILL));
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = 0;
	ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		TH_LOG("child ended on its own (status %#x) before the kill", status);
}

/* Submits the fixture's kernel: a MARK kernel of @grid x @steps x @step_ns. */
static void start_work(struct __test_metadata *_metadata,
		       FIXTURE_DATA(cl) *self, uint32_t grid, uint32_t steps,
		       uint64_t step_ns)
{
	ASSERT_GE(self->slots, grid);
	memset(self->dst.map, 0xa5, self->dst.map_size);
	self->pkt = xs_mark_packet(grid, steps, step_ns, 0xc1ea0000 + grid + steps,
				   self->dst.gpu_addr, 0);
	xs_marks_clear(&self->pkt, self->dst.map);
	ASSERT_EQ(0, xs_submit(self->sfd, self->id, &self->pkt, 1, &self->seq));
}

static void expect_output(struct __test_metadata *_metadata,
			  FIXTURE_DATA(cl) *self)
{
	long bad = xs_packet_mismatch(&self->pkt, NULL, self->dst.map);

	EXPECT_EQ(-1, bad) TH_LOG("workgroup %ld differs from the CPU reference", bad);
	XS_EXPECT_MARKS(&self->pkt, self->dst.map);
}

/*
 * The fixture's work completes on the client, exactly: right output, and
 * (registering the queue again, which also proves the old registration is
 * gone) steps_done equal to every step submitted so far.
 */
static void expect_work_done(struct __test_metadata *_metadata,
			     FIXTURE_DATA(cl) *self, uint64_t steps_total)
{
	struct xsched_queue_info info;
	int ret, qfd;

	ret = xs_wait(self->sfd, self->id, self->seq, 30 * XS_SEC, NULL);
	ASSERT_EQ(0, ret) TH_LOG("work of the surviving client: %s", xs_err(ret));
	expect_output(_metadata, self);
	qfd = xs_register(self->cfd, self->sfd, self->id, 0, NULL);
	ASSERT_LE(0, qfd) TH_LOG("re-register after the owner died: %s",
				 xs_err(qfd));
	ASSERT_EQ(0, xs_query(qfd, &info));
	EXPECT_EQ(XSCHED_STATE_ACTIVE, info.state);
	EXPECT_EQ(0, info.saved_waves);
	EXPECT_EQ(steps_total, info.steps_done);
	EXPECT_EQ(self->seq, info.rptr);
	close(qfd);
}

/* debugfs: @uid is gone and no queue at all is suspended or suspending. */
static void expect_unlisted(struct __test_metadata *_metadata,
			    const uint32_t *uids, int n)
{
	char state[24];
	int i;

	for (i = 0; i < n; i++) {
		EXPECT_EQ(0, xs_table_state(uids[i], state, sizeof(state)))
			TH_LOG("queue %u of the killed process still listed, %s",
			       uids[i], state);
	}
	EXPECT_EQ(0, xs_table_count_stopped());
}

TEST_F_TIMEOUT(cl, killed_with_suspended_queue_resumes_it, 60)
{
	struct report r;
	char state[24];
	int pfd[2];

	start_work(_metadata, self, self->slots, 60, 5 * XS_MS);
	ASSERT_EQ(0, pipe(pfd));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		/* registers the parent's queue on the shared client, stops it */
		uint32_t uid = 0;
		int qfd = xs_register(self->cfd, self->sfd, self->id, 0, &uid);

		if (qfd < 0) {
			child_report(pfd[1], 1, qfd, NULL, 0);
			_exit(1);
		}
		xs_wait_steps(qfd, 1, 10 * XS_SEC);
		child_report(pfd[1], 1,
			     xs_suspend(qfd, XSCHED_MODE_SAVE, 0, 0, NULL),
			     &uid, 1);
		for (;;)
			pause();
	}
	ASSERT_EQ(0, read_report(pfd[0], &r));
	ASSERT_EQ(0, r.err) TH_LOG("child's register/suspend: %s", xs_err(r.err));
	EXPECT_EQ(1, xs_table_state(r.uids[0], state, sizeof(state)));
	EXPECT_STREQ("suspended", state);
	EXPECT_EQ(-ETIMEDOUT, xs_wait(self->sfd, self->id, self->seq, 0, NULL));
	kill_child(_metadata, self);
	expect_unlisted(_metadata, r.uids, 1);
	expect_work_done(_metadata, self, xs_packet_steps(&self->pkt));
}

TEST_F_TIMEOUT(cl, killed_with_many_suspended_queues_leaves_none, 60)
{
	struct report r;
	int pfd[2], stopped;

	ASSERT_EQ(0, pipe(pfd));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		/* its own client: six busy queues, all stopped, both modes */
		struct xsched_sim_packet p;
		uint32_t uids[6] = { 0 }, id = 0;
		uint64_t addr = 0, seq;
		int cfd, sfd = -1, i, qfd, ret;

		ret = xs_client_open(&cfd, NULL);
		if (!ret)
			ret = xs_sim_open(&sfd, NULL);
		if (!ret)
			ret = xs_mem_alloc(sfd, XS_PAGE, &addr);
		for (i = 0; !ret && i < 6; i++) {
			p = xs_packet(2, 200, 5 * XS_MS, i, addr + 16 * i, 0);
			ret = xs_queue_create(sfd, 4, &id, NULL);
			if (!ret)
				ret = xs_submit(sfd, id, &p, 1, &seq);
			if (ret)
				break;
			qfd = xs_register(cfd, sfd, id, 0, &uids[i]);
			if (qfd < 0) {
				ret = qfd;
				break;
			}
			xs_wait_steps(qfd, 1, 10 * XS_SEC);
			ret = xs_suspend(qfd, i & 1 ? XSCHED_MODE_DRAIN :
					 XSCHED_MODE_SAVE,
					 i == 5 ? XSCHED_SUSPEND_NONBLOCK : 0,
					 0, NULL);
		}
		child_report(pfd[1], 1, ret, uids, 6);
		for (;;)
			pause();
	}
	ASSERT_EQ(0, read_report(pfd[0], &r));
	ASSERT_EQ(0, r.err) TH_LOG("child's setup: %s", xs_err(r.err));
	stopped = xs_table_count_stopped();
	EXPECT_LE(6, stopped) TH_LOG("debugfs lists %d stopped queues", stopped);
	kill_child(_metadata, self);
	expect_unlisted(_metadata, r.uids, 6);
	/* the module goes on working for everybody else */
	start_work(_metadata, self, 2, 3, 0);
	expect_work_done(_metadata, self, xs_packet_steps(&self->pkt));
}

TEST_F_TIMEOUT(cl, killed_mid_blocking_suspend_leaves_queue_running, 60)
{
	uint64_t deadline;
	char state[24] = "";
	struct report r;
	int pfd[2], ret;
	bool seen = false;

	/* each wave takes 300 ms to save: the suspend blocks for a while */
	slow_saves(_metadata, self, 300000);
	start_work(_metadata, self, 2, 100, 5 * XS_MS);
	ASSERT_EQ(0, pipe(pfd));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		uint32_t uid = 0;
		int qfd = xs_register(self->cfd, self->sfd, self->id, 0, &uid);

		if (qfd < 0) {
			child_report(pfd[1], 1, qfd, NULL, 0);
			_exit(1);
		}
		xs_wait_steps(qfd, 1, 10 * XS_SEC);
		child_report(pfd[1], 1, 0, &uid, 1);
		ret = xs_suspend(qfd, XSCHED_MODE_SAVE, 0, 0, NULL);
		child_report(pfd[1], 2, ret, &uid, 1);
		for (;;)
			pause();
	}
	ASSERT_EQ(0, read_report(pfd[0], &r));
	ASSERT_EQ(0, r.err) TH_LOG("child's register: %s", xs_err(r.err));
	deadline = xs_now_ns() + 5 * XS_SEC;
	while (xs_now_ns() < deadline) {
		ret = xs_table_state(r.uids[0], state, sizeof(state));
		ASSERT_EQ(1, ret);
		if (!strcmp(state, "suspending")) {
			seen = true;
			break;
		}
		xs_sleep_ns(XS_MS);
	}
	ASSERT_TRUE(seen) TH_LOG("never saw the queue SUSPENDING (last: %s)", state);
	kill_child(_metadata, self);
	ASSERT_EQ(0, xs_knob_write("save_delay_us", 0));
	expect_unlisted(_metadata, r.uids, 1);
	expect_work_done(_metadata, self, xs_packet_steps(&self->pkt));
}

TEST_F_TIMEOUT(cl, killed_mid_sim_wait_on_own_client, 60)
{
	struct report r;
	int pfd[2];

	ASSERT_EQ(0, pipe(pfd));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		struct xsched_sim_packet p;
		uint32_t id = 0, uid = 0;
		uint64_t addr = 0, seq = 0;
		int cfd, sfd = -1, qfd, ret;

		ret = xs_client_open(&cfd, NULL);
		if (!ret)
			ret = xs_sim_open(&sfd, NULL);
		if (!ret)
			ret = xs_mem_alloc(sfd, XS_PAGE, &addr);
		if (!ret)
			ret = xs_queue_create(sfd, 4, &id, NULL);
		p = xs_packet(1, 300, 10 * XS_MS, 1, addr, 0);	/* 3 s */
		if (!ret)
			ret = xs_submit(sfd, id, &p, 1, &seq);
		qfd = ret ? ret : xs_register(cfd, sfd, id, 0, &uid);
		child_report(pfd[1], 1, qfd < 0 ? qfd : 0, &uid, 1);
		ret = xs_wait(sfd, id, seq, 60 * XS_SEC, NULL);
		child_report(pfd[1], 2, ret, &uid, 1);
		_exit(0);
	}
	ASSERT_EQ(0, read_report(pfd[0], &r));
	ASSERT_EQ(0, r.err) TH_LOG("child's setup: %s", xs_err(r.err));
	xs_sleep_ns(100 * XS_MS);	/* well inside SIM_WAIT by now */
	kill_child(_metadata, self);
	expect_unlisted(_metadata, r.uids, 1);
	start_work(_metadata, self, 2, 3, 0);
	expect_work_done(_metadata, self, xs_packet_steps(&self->pkt));
}

TEST_F_TIMEOUT(cl, killed_mid_sim_wait_on_shared_client, 60)
{
	struct report r;
	int pfd[2];

	start_work(_metadata, self, self->slots, 50, 10 * XS_MS);	/* 0.5 s */
	ASSERT_EQ(0, pipe(pfd));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		int ret;

		child_report(pfd[1], 1, 0, NULL, 0);
		ret = xs_wait(self->sfd, self->id, self->seq, 60 * XS_SEC, NULL);
		child_report(pfd[1], 2, ret, NULL, 0);
		_exit(0);
	}
	ASSERT_EQ(0, read_report(pfd[0], &r));
	xs_sleep_ns(50 * XS_MS);
	kill_child(_metadata, self);
	expect_work_done(_metadata, self, xs_packet_steps(&self->pkt));
}

TEST_F_TIMEOUT(cl, killed_waiting_on_own_suspended_queue, 60)
{
	struct report r;
	int pfd[2];

	start_work(_metadata, self, self->slots, 60, 5 * XS_MS);
	ASSERT_EQ(0, pipe(pfd));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		/* stops the queue, then waits for work that cannot finish */
		uint32_t uid = 0;
		int qfd = xs_register(self->cfd, self->sfd, self->id, 0, &uid);
		int ret = qfd < 0 ? qfd : 0;

		if (!ret) {
			xs_wait_steps(qfd, 1, 10 * XS_SEC);
			ret = xs_suspend(qfd, XSCHED_MODE_SAVE, 0, 0, NULL);
		}
		child_report(pfd[1], 1, ret, &uid, 1);
		ret = xs_wait(self->sfd, self->id, self->seq, 60 * XS_SEC, NULL);
		child_report(pfd[1], 2, ret, &uid, 1);
		_exit(0);
	}
	ASSERT_EQ(0, read_report(pfd[0], &r));
	ASSERT_EQ(0, r.err) TH_LOG("child's register/suspend: %s", xs_err(r.err));
	xs_sleep_ns(50 * XS_MS);
	kill_child(_metadata, self);
	expect_unlisted(_metadata, r.uids, 1);
	expect_work_done(_metadata, self, xs_packet_steps(&self->pkt));
}

TEST_F_TIMEOUT(cl, closing_suspended_queue_fd_resumes_it, 60)
{
	const uint32_t modes[] = { XSCHED_MODE_SAVE, XSCHED_MODE_DRAIN };
	uint64_t steps = 0;
	uint32_t uid;
	int i, qfd;

	for (i = 0; i < 2; i++) {
		uint64_t before = steps;	/* of the packets already done */

		start_work(_metadata, self, self->slots, 40, 5 * XS_MS);
		steps += xs_packet_steps(&self->pkt);
		qfd = xs_register(self->cfd, self->sfd, self->id, 0, &uid);
		ASSERT_LE(0, qfd);
		ASSERT_EQ(0, xs_wait_steps(qfd, before + 1, 10 * XS_SEC));
		ASSERT_EQ(0, xs_suspend(qfd, modes[i], 0, 0, NULL));
		ASSERT_EQ(XSCHED_STATE_SUSPENDED, xs_state(qfd));
		ASSERT_EQ(0, close(qfd));
		expect_unlisted(_metadata, &uid, 1);
		expect_work_done(_metadata, self, steps);
	}
}

TEST_F_TIMEOUT(cl, closing_suspending_queue_fd_resumes_it, 60)
{
	uint64_t steps;
	uint32_t uid;
	int qfd, state;

	/* DRAIN of a 60 x 10 ms workgroup stays SUSPENDING for a while */
	start_work(_metadata, self, 1, 60, 10 * XS_MS);
	steps = xs_packet_steps(&self->pkt);
	qfd = xs_register(self->cfd, self->sfd, self->id, 0, &uid);
	ASSERT_LE(0, qfd);
	ASSERT_EQ(0, xs_wait_steps(qfd, 1, 10 * XS_SEC));
	ASSERT_EQ(0, xs_suspend(qfd, XSCHED_MODE_DRAIN, XSCHED_SUSPEND_NONBLOCK,
				0, NULL));
	state = xs_state(qfd);
	EXPECT_EQ(XSCHED_STATE_SUSPENDING, state)
		TH_LOG("state %s right after NONBLOCK DRAIN", xs_state_name(state));
	ASSERT_EQ(0, close(qfd));
	expect_unlisted(_metadata, &uid, 1);
	expect_work_done(_metadata, self, steps);

	/* and a slow SAVE caught half-way, once the new kernel runs */
	slow_saves(_metadata, self, 200000);
	start_work(_metadata, self, 2, 100, 5 * XS_MS);
	qfd = xs_register(self->cfd, self->sfd, self->id, 0, &uid);
	ASSERT_LE(0, qfd);
	ASSERT_EQ(0, xs_wait_steps(qfd, steps + 1, 10 * XS_SEC));
	steps += xs_packet_steps(&self->pkt);
	ASSERT_EQ(0, xs_suspend(qfd, XSCHED_MODE_SAVE, XSCHED_SUSPEND_NONBLOCK,
				0, NULL));
	state = xs_state(qfd);
	EXPECT_EQ(XSCHED_STATE_SUSPENDING, state)
		TH_LOG("state %s right after NONBLOCK slow SAVE", xs_state_name(state));
	ASSERT_EQ(0, close(qfd));
	ASSERT_EQ(0, xs_knob_write("save_delay_us", 0));
	expect_unlisted(_metadata, &uid, 1);
	expect_work_done(_metadata, self, steps);
}

TEST_F_TIMEOUT(cl, closing_client_first_keeps_queue_fd_working, 60)
{
	struct xsched_sim_packet p[2];
	struct xsched_queue_info info;
	uint64_t *ref, seq;
	struct xs_buf out;
	uint32_t uid;
	int qfd, ev;
	long bad;

	/* two packets: the second reads the first's output */
	ASSERT_EQ(0, xs_buf_alloc(self->sfd, self->slots * sizeof(uint64_t), &out));
	p[0] = xs_packet(self->slots, 30, 5 * XS_MS, 99, self->dst.gpu_addr, 0);
	p[1] = xs_packet(self->slots, 30, 5 * XS_MS, 98, out.gpu_addr,
			 self->dst.gpu_addr);
	ASSERT_EQ(0, xs_submit(self->sfd, self->id, p, 2, &seq));
	qfd = xs_register(self->cfd, self->sfd, self->id, 0, &uid);
	ASSERT_LE(0, qfd);
	ASSERT_EQ(0, close(self->cfd));
	self->cfd = -1;
	ASSERT_EQ(0, close(self->sfd));
	self->sfd = 0;

	ASSERT_EQ(0, xs_wait_steps(qfd, 1, 10 * XS_SEC));
	ASSERT_EQ(0, xs_suspend(qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	EXPECT_EQ(XSCHED_STATE_SUSPENDED, xs_state(qfd));
	ASSERT_EQ(0, xs_resume(qfd, NULL));
	ASSERT_EQ(0, xs_suspend(qfd, XSCHED_MODE_DRAIN, 0, 0, NULL));
	EXPECT_EQ(XSCHED_STATE_SUSPENDED, xs_state(qfd));
	ASSERT_EQ(0, xs_resume(qfd, NULL));
	ASSERT_EQ(0, xs_set_priority(qfd, -3));

	ev = xs_poll(qfd, POLLIN, 30000);
	ASSERT_EQ(POLLIN, ev & POLLIN) TH_LOG("work never finished (revents %#x)", ev);
	ASSERT_EQ(0, xs_query(qfd, &info));
	EXPECT_EQ(2, info.rptr);
	EXPECT_EQ(2, info.wptr);
	EXPECT_EQ(2 * xs_packet_steps(&p[0]), info.steps_done);
	EXPECT_EQ(2, info.suspends);
	EXPECT_EQ(2, info.resumes);
	EXPECT_EQ(-3, info.priority);

	/* the mapping outlives the client fd and shows the result */
	ref = calloc(self->slots, sizeof(*ref));
	ASSERT_NE(NULL, ref);
	xs_ref_packet(&p[0], NULL, ref);
	xs_ref_packet(&p[1], ref, ref);
	bad = xs_first_mismatch(out.map, ref, self->slots);
	EXPECT_EQ(-1, bad) TH_LOG("workgroup %ld differs from the CPU reference", bad);
	free(ref);
	ASSERT_EQ(0, close(qfd));
	expect_unlisted(_metadata, &uid, 1);
}

struct blocked_call {
	int fd;
	FIXTURE_DATA(cl) *self;
	int ret;
	atomic_int started;
};

static void *blocking_save(void *arg)
{
	struct blocked_call *b = arg;

	atomic_store(&b->started, 1);
	b->ret = xs_suspend(b->fd, XSCHED_MODE_SAVE, 0, 0, NULL);
	return NULL;
}

TEST_F_TIMEOUT(cl, closing_queue_fd_during_blocking_suspend_resumes_it, 60)
{
	struct blocked_call b = { .ret = 1 };
	uint32_t uid;
	pthread_t t;
	int qfd;

	slow_saves(_metadata, self, 300000);
	start_work(_metadata, self, 2, 100, 5 * XS_MS);
	qfd = xs_register(self->cfd, self->sfd, self->id, 0, &uid);
	ASSERT_LE(0, qfd);
	ASSERT_EQ(0, xs_wait_steps(qfd, 1, 10 * XS_SEC));
	b.fd = qfd;
	ASSERT_EQ(0, pthread_create(&t, NULL, blocking_save, &b));
	ASSERT_EQ(0, xs_wait_state(qfd, XSCHED_STATE_SUSPENDING, 10 * XS_SEC));
	/* the number goes away; the file lives until the suspend returns */
	ASSERT_EQ(0, close(qfd));
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(0, b.ret) TH_LOG("suspend on a closed fd number: %s", xs_err(b.ret));
	ASSERT_EQ(0, xs_knob_write("save_delay_us", 0));
	expect_unlisted(_metadata, &uid, 1);
	expect_work_done(_metadata, self, xs_packet_steps(&self->pkt));
}

static void *blocking_wait(void *arg)
{
	struct blocked_call *b = arg;

	atomic_store(&b->started, 1);
	b->ret = xs_wait(b->fd, b->self->id, b->self->seq, 30 * XS_SEC, NULL);
	return NULL;
}

TEST_F_TIMEOUT(cl, closing_client_fd_during_sim_wait, 60)
{
	struct blocked_call b = { .ret = 1, .self = self };
	pthread_t t;

	start_work(_metadata, self, self->slots, 30, 10 * XS_MS);	/* 0.3 s */
	b.fd = self->sfd;
	ASSERT_EQ(0, pthread_create(&t, NULL, blocking_wait, &b));
	while (!atomic_load(&b.started))
		xs_sleep_ns(XS_MS);
	xs_sleep_ns(20 * XS_MS);
	ASSERT_EQ(0, close(self->sfd));
	self->sfd = 0;
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(0, b.ret) TH_LOG("SIM_WAIT while the sim fd was closed: %s",
				   xs_err(b.ret));
	expect_output(_metadata, self);
}

TEST_F_TIMEOUT(cl, queue_fd_shared_with_child_resumes_on_last_close, 60)
{
	struct report r;
	char state[24];
	uint32_t uid;
	int pfd[2], qfd;

	start_work(_metadata, self, self->slots, 60, 5 * XS_MS);
	qfd = xs_register(self->cfd, self->sfd, self->id, 0, &uid);
	ASSERT_LE(0, qfd);
	ASSERT_EQ(0, xs_wait_steps(qfd, 1, 10 * XS_SEC));
	ASSERT_EQ(0, xs_suspend(qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	ASSERT_EQ(0, pipe(pfd));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		/* holds the inherited queue fd and does nothing */
		child_report(pfd[1], 1, 0, &uid, 1);
		for (;;)
			pause();
	}
	ASSERT_EQ(0, read_report(pfd[0], &r));
	/* our close is not the last one: the queue stays stopped */
	ASSERT_EQ(0, close(qfd));
	xs_sleep_ns(50 * XS_MS);
	EXPECT_EQ(-ETIMEDOUT, xs_wait(self->sfd, self->id, self->seq, 0, NULL))
		TH_LOG("resumed while the child still holds the queue fd");
	EXPECT_EQ(1, xs_table_state(uid, state, sizeof(state)));
	EXPECT_STREQ("suspended", state);
	kill_child(_metadata, self);
	expect_unlisted(_metadata, &uid, 1);
	expect_work_done(_metadata, self, xs_packet_steps(&self->pkt));
}

TEST_HARNESS_MAIN
