// SPDX-License-Identifier: GPL-2.0
/*
 * faults: every fault-injection knob of the sim GPU (debugfs
 * xsched/sim/{save_delay_us,fail_save,save_timeout_ms,fail_resume,
 * reset_queue,fake_suspend,ignore_suspend}) and run-time memory faults.  Each must give a clear errno,
 * a consistent QUERY, no hang, and no lost or repeated work where the queue
 * survives (results and MARK step marks exactly the CPU reference); a
 * FAILED queue is never handed to the backend again.  Also the
 * suspend paths that need a slow save to be seen: EINTR and ECANCELED.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>

#include "xsched_test.h"

/*
 * The save watchdog: short where a save is meant to hang (fail_save), long
 * elsewhere so that a slow save (save_delay_us) is never mistaken for a hung one.
 */
#define SAVE_TIMEOUT_MS		300
#define SLOW_SAVE_TIMEOUT_MS	10000

/* The core's limit on a suspend the backend never completes, shortened. */
#define SUSPEND_TIMEOUT		"/sys/module/xsched_kfd/parameters/suspend_timeout_ms"
#define SHORT_SUSPEND_TIMEOUT_MS	300

/* Device address of no buffer: the sim maps buffer i at (i + 1) << 32. */
#define UNMAPPED_ADDR	(0x7eULL << 32)

FIXTURE(fl) {
	int cfd;
	struct xsched_version ver;
	int sfd;
	struct xsched_sim_info sim;
	unsigned int slots;
	uint32_t id;
	uint32_t uid;
	int qfd;
	struct xs_buf dst;
	struct xsched_sim_packet pkt;
	uint64_t seq;
	uint64_t save_timeout_ms;	/* to restore */
	char suspend_timeout_ms[16];	/* to restore */
};

FIXTURE_SETUP(fl)
{
	self->qfd = -1;
	XS_CLIENT_OPEN_OR_SKIP(self->cfd, self->ver);
	XS_SIM_OPEN_OR_SKIP(self->sfd, self->sim);
	XS_DEBUGFS_OR_SKIP();
	ASSERT_EQ(0, xs_knob_read("save_timeout_ms", &self->save_timeout_ms));
	ASSERT_EQ(0, xs_knob_write("save_timeout_ms", SLOW_SAVE_TIMEOUT_MS));
	xs_param_read(SUSPEND_TIMEOUT, self->suspend_timeout_ms,
		      sizeof(self->suspend_timeout_ms));
	ASSERT_NE(0, self->suspend_timeout_ms[0]);
	self->slots = xs_slots(&self->sim);
	ASSERT_LT(0, self->slots);
	ASSERT_EQ(0, xs_buf_alloc(self->sfd, 2 * self->slots * sizeof(uint64_t),
				  &self->dst));
	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &self->id, NULL));
	self->qfd = xs_register(self->cfd, self->sfd, self->id, 0, &self->uid);
	ASSERT_LE(0, self->qfd) TH_LOG("register: %s", xs_err(self->qfd));
}

FIXTURE_TEARDOWN(fl)
{
	xs_knob_write("save_delay_us", 0);
	xs_knob_write("fail_save", 0);
	xs_knob_write("fail_resume", 0);
	xs_knob_write("fake_suspend", 0);
	xs_knob_write("ignore_suspend", 0);
	if (self->suspend_timeout_ms[0])
		xs_write_file(SUSPEND_TIMEOUT, self->suspend_timeout_ms);
	if (self->save_timeout_ms)
		xs_knob_write("save_timeout_ms", self->save_timeout_ms);
	if (self->qfd >= 0)
		close(self->qfd);
	if (self->cfd >= 0)
		close(self->cfd);
	/* 0 if the client was missing: setup skipped before the sim */
	if (self->sfd > 0)
		close(self->sfd);
}

static uint64_t knob(struct __test_metadata *_metadata, const char *name)
{
	uint64_t v = ~0ULL;

	EXPECT_EQ(0, xs_knob_read(name, &v)) TH_LOG("reading %s", name);
	return v;
}

/*
 * Submits a MARK kernel of @grid x @steps x @step_ns on @id and waits until
 * it runs; it writes the fixture's buffer unless @dst_addr is given (fresh,
 * zeroed device memory).
 */
static void start_on(struct __test_metadata *_metadata, FIXTURE_DATA(fl) *self,
		     uint32_t id, int qfd, uint32_t grid, uint32_t steps,
		     uint64_t step_ns, uint64_t *dst_addr)
{
	ASSERT_GE(self->slots, grid);
	self->pkt = xs_mark_packet(grid, steps, step_ns, 0xfa017000 + grid * 7 + steps,
				   dst_addr ? *dst_addr : self->dst.gpu_addr, 0);
	if (!dst_addr)
		xs_marks_clear(&self->pkt, self->dst.map);
	ASSERT_EQ(0, xs_submit(self->sfd, id, &self->pkt, 1, &self->seq));
	ASSERT_EQ(0, xs_wait_steps(qfd, 1, 10 * XS_SEC));
}

static void start(struct __test_metadata *_metadata, FIXTURE_DATA(fl) *self,
		  uint32_t grid, uint32_t steps, uint64_t step_ns)
{
	start_on(_metadata, self, self->id, self->qfd, grid, steps, step_ns, NULL);
}

/* The fixture queue's kernel completes with exact output, marks and step count. */
static void finish(struct __test_metadata *_metadata, FIXTURE_DATA(fl) *self,
		   uint64_t steps_total)
{
	struct xsched_queue_info info;
	long bad;
	int ret;

	ret = xs_wait(self->sfd, self->id, self->seq, 60 * XS_SEC, NULL);
	ASSERT_EQ(0, ret) TH_LOG("wait: %s", xs_err(ret));
	bad = xs_packet_mismatch(&self->pkt, NULL, self->dst.map);
	EXPECT_EQ(-1, bad) TH_LOG("workgroup %ld differs from the CPU reference", bad);
	XS_EXPECT_MARKS(&self->pkt, self->dst.map);
	EXPECT_EQ(0, xs_wait_no_saved_waves(self->qfd, 10 * XS_SEC));
	ASSERT_EQ(0, xs_query(self->qfd, &info));
	EXPECT_EQ(XSCHED_STATE_ACTIVE, info.state);
	EXPECT_EQ(steps_total, info.steps_done)
		TH_LOG("steps run %llu, expected exactly %llu",
		       (unsigned long long)info.steps_done,
		       (unsigned long long)steps_total);
}

/*
 * A FAILED queue: QUERY says so with @err, poll says POLLERR, and every
 * operation on it gives EIO without reaching the backend.
 */
static void expect_failed(struct __test_metadata *_metadata,
			  FIXTURE_DATA(fl) *self, uint32_t id, int qfd, int err)
{
	struct xsched_sim_packet p = xs_packet(1, 1, 0, 1, self->dst.gpu_addr, 0);
	struct xsched_queue_info info, later;
	uint64_t seq, done;
	int ev;

	ASSERT_EQ(0, xs_query(qfd, &info));
	EXPECT_EQ(XSCHED_STATE_FAILED, info.state)
		TH_LOG("state %s", xs_state_name(info.state));
	EXPECT_EQ(err, info.last_error)
		TH_LOG("last_error %d (%s), expected %d (%s)", info.last_error,
		       strerror(-info.last_error), err, strerror(-err));
	EXPECT_LE(1, info.faults);
	EXPECT_EQ(0, info.saved_waves);
	ev = xs_poll(qfd, POLLIN | POLLPRI | POLLERR, 0);
	EXPECT_TRUE(ev & POLLERR) TH_LOG("revents %#x", ev);
	EXPECT_FALSE(ev & POLLPRI) TH_LOG("revents %#x", ev);

	EXPECT_EQ(-EIO, xs_suspend(qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	EXPECT_EQ(-EIO, xs_suspend(qfd, XSCHED_MODE_DRAIN, 0, 0, NULL));
	EXPECT_EQ(-EIO, xs_suspend(qfd, XSCHED_MODE_SAVE, XSCHED_SUSPEND_NONBLOCK,
				   0, NULL));
	EXPECT_EQ(-EIO, xs_resume(qfd, NULL));
	EXPECT_EQ(-EIO, xs_submit(self->sfd, id, &p, 1, &seq));
	done = ~0ULL;
	if (info.wptr > info.rptr) {
		EXPECT_EQ(-EIO, xs_wait(self->sfd, id, info.wptr, 5 * XS_SEC, &done));
		EXPECT_EQ(info.rptr, done) TH_LOG("completed is reported on EIO");
	}
	/* it stays put: no progress, no change of state */
	xs_sleep_ns(20 * XS_MS);
	ASSERT_EQ(0, xs_query(qfd, &later));
	EXPECT_EQ(XSCHED_STATE_FAILED, later.state);
	EXPECT_EQ(info.steps_done, later.steps_done);
	EXPECT_EQ(info.rptr, later.rptr);
	EXPECT_EQ(info.last_error, later.last_error);
}

TEST_F_TIMEOUT(fl, save_delay_slows_every_save, 60)
{
	const uint64_t delay_us = 20000;
	uint64_t fast[5], slow[5], fast50, slow50;
	struct xsched_suspend out;
	int i;

	start(_metadata, self, 4, 400, 5 * XS_MS);	/* 2 s kernel */
	for (i = 0; i < 10; i++) {
		if (i == 5) {
			ASSERT_EQ(0, xs_knob_write("save_delay_us", delay_us));
		}
		ASSERT_EQ(0, xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, &out));
		if (i < 5) {
			fast[i] = out.latency_ns;
		} else {
			slow[i - 5] = out.latency_ns;
			EXPECT_LE(delay_us * XS_US, out.latency_ns)
				TH_LOG("SAVE with save_delay_us=%llu took %llu ns",
				       (unsigned long long)delay_us,
				       (unsigned long long)out.latency_ns);
		}
		EXPECT_LT(0, out.saved_bytes);
		ASSERT_EQ(0, xs_resume(self->qfd, NULL));
		xs_sleep_ns(5 * XS_MS);
	}
	ASSERT_EQ(0, xs_knob_write("save_delay_us", 0));
	fast50 = xs_percentile(fast, 5, 50);
	slow50 = xs_percentile(slow, 5, 50);
	ksft_print_msg("SAVE P50 %.3f ms, with save_delay_us=%llu %.3f ms\n",
		       fast50 / 1e6, (unsigned long long)delay_us, slow50 / 1e6);
	EXPECT_LT(2 * fast50, slow50);
	finish(_metadata, self, xs_packet_steps(&self->pkt));
}

TEST_F_TIMEOUT(fl, fail_save_times_out_and_fails_queue, 60)
{
	struct xsched_suspend out;
	uint64_t t0, took, done;
	int ret;

	start(_metadata, self, 2, 400, 5 * XS_MS);
	ASSERT_EQ(0, xs_knob_write("save_timeout_ms", SAVE_TIMEOUT_MS));
	ASSERT_EQ(0, xs_knob_write("fail_save", 1));
	t0 = xs_now_ns();
	ret = xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, &out);
	took = xs_now_ns() - t0;
	ASSERT_EQ(-ETIMEDOUT, ret) TH_LOG("hung SAVE: %s", xs_err(ret));
	EXPECT_LE(SAVE_TIMEOUT_MS * XS_MS, took)
		TH_LOG("returned after %llu ns, before the %d ms watchdog",
		       (unsigned long long)took, SAVE_TIMEOUT_MS);
	EXPECT_EQ(0, knob(_metadata, "fail_save")) TH_LOG("count not consumed");
	done = ~0ULL;
	EXPECT_EQ(-EIO, xs_wait(self->sfd, self->id, self->seq, 5 * XS_SEC, &done));
	EXPECT_EQ(0, done);
	expect_failed(_metadata, self, self->id, self->qfd, -ETIMEDOUT);
}

/*
 * The core's view of a queue it failed because its backend stopped
 * answering: FAILED with @err, POLLERR, and EIO for every operation; and
 * once its fd is closed the work still finishes (release restarts the
 * queue) and nothing is left stopped.
 */
static void expect_core_failed(struct __test_metadata *_metadata,
			       FIXTURE_DATA(fl) *self, int err)
{
	struct xsched_queue_info info;
	int ev, ret;

	ASSERT_EQ(0, xs_query(self->qfd, &info));
	EXPECT_EQ(XSCHED_STATE_FAILED, info.state)
		TH_LOG("state %s", xs_state_name(info.state));
	EXPECT_EQ(err, info.last_error)
		TH_LOG("last_error %d (%s), expected %d (%s)", info.last_error,
		       strerror(-info.last_error), err, strerror(-err));
	ev = xs_poll(self->qfd, POLLIN | POLLPRI | POLLERR, 0);
	EXPECT_TRUE(ev & POLLERR) TH_LOG("revents %#x", ev);
	EXPECT_EQ(-EIO, xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	EXPECT_EQ(-EIO, xs_resume(self->qfd, NULL));
	ASSERT_EQ(0, close(self->qfd));
	self->qfd = -1;
	ret = xs_wait(self->sfd, self->id, self->seq, 30 * XS_SEC, NULL);
	EXPECT_EQ(0, ret) TH_LOG("work of the closed queue: %s", xs_err(ret));
	EXPECT_EQ(0, xs_table_count_stopped());
}

/*
 * A backend that accepts a suspend and never completes it (a firmware or
 * scheduler hang): the blocking caller gets ETIMEDOUT once the core's
 * suspend_timeout_ms has passed, and the queue is FAILED.
 */
TEST_F_TIMEOUT(fl, suspend_never_completed_fails_queue_with_etimedout, 60)
{
	uint64_t t0, took;
	char ms[16];
	int ret;

	snprintf(ms, sizeof(ms), "%d", SHORT_SUSPEND_TIMEOUT_MS);
	ASSERT_EQ(0, xs_write_file(SUSPEND_TIMEOUT, ms));
	start(_metadata, self, 2, 400, 5 * XS_MS);	/* 2 s kernel */
	ASSERT_EQ(0, xs_knob_write("ignore_suspend", 1));
	t0 = xs_now_ns();
	ret = xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, NULL);
	took = xs_now_ns() - t0;
	ASSERT_EQ(-ETIMEDOUT, ret) TH_LOG("unanswered SAVE: %s", xs_err(ret));
	EXPECT_LE(SHORT_SUSPEND_TIMEOUT_MS * XS_MS, took)
		TH_LOG("gave up after %llu ns, before suspend_timeout_ms",
		       (unsigned long long)took);
	EXPECT_EQ(0, knob(_metadata, "ignore_suspend")) TH_LOG("count not consumed");
	expect_core_failed(_metadata, self, -ETIMEDOUT);
}

/*
 * A backend that reports a suspend done while the queue goes on running:
 * the core sees the step count move while the queue is SUSPENDED and fails
 * it with EPROTO.
 */
TEST_F_TIMEOUT(fl, suspended_queue_that_runs_fails_with_eproto, 60)
{
	struct xsched_queue_info info;
	uint64_t t0;

	start(_metadata, self, 2, 400, 5 * XS_MS);	/* 2 s kernel */
	ASSERT_EQ(0, xs_knob_write("fake_suspend", 1));
	ASSERT_EQ(0, xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	EXPECT_EQ(0, knob(_metadata, "fake_suspend")) TH_LOG("count not consumed");
	t0 = xs_now_ns();
	do {
		xs_sleep_ns(10 * XS_MS);
		ASSERT_EQ(0, xs_query(self->qfd, &info));
	} while (info.state == XSCHED_STATE_SUSPENDED && xs_now_ns() - t0 < 10 * XS_SEC);
	expect_core_failed(_metadata, self, -EPROTO);
}

TEST_F_TIMEOUT(fl, fail_save_counts_save_suspends_only, 60)
{
	uint32_t id[2];
	int qfd[2], i, ret;
	uint64_t addr;

	/* two more busy queues on the same client */
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id[i], NULL));
		qfd[i] = xs_register(self->cfd, self->sfd, id[i], 0, NULL);
		ASSERT_LE(0, qfd[i]);
		ASSERT_EQ(0, xs_mem_alloc(self->sfd, XS_PAGE, &addr));
		start_on(_metadata, self, id[i], qfd[i], 2, 400, 5 * XS_MS, &addr);
	}
	start(_metadata, self, 2, 100, 5 * XS_MS);

	ASSERT_EQ(0, xs_knob_write("save_timeout_ms", SAVE_TIMEOUT_MS));
	ASSERT_EQ(0, xs_knob_write("fail_save", 2));
	/* a DRAIN does not use the count */
	ASSERT_EQ(0, xs_suspend(self->qfd, XSCHED_MODE_DRAIN, 0, 0, NULL));
	EXPECT_EQ(2, knob(_metadata, "fail_save"));
	ASSERT_EQ(0, xs_resume(self->qfd, NULL));
	/* the next two SAVEs hang and fail their queues */
	for (i = 0; i < 2; i++) {
		ret = xs_suspend(qfd[i], XSCHED_MODE_SAVE, 0, 0, NULL);
		EXPECT_EQ(-ETIMEDOUT, ret) TH_LOG("SAVE %d: %s", i, xs_err(ret));
		EXPECT_EQ(XSCHED_STATE_FAILED, xs_state(qfd[i]));
		EXPECT_EQ(1 - i, knob(_metadata, "fail_save"));
	}
	/* the third works */
	ret = xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, NULL);
	EXPECT_EQ(0, ret) TH_LOG("SAVE after the count ran out: %s", xs_err(ret));
	ASSERT_EQ(0, xs_resume(self->qfd, NULL));
	finish(_metadata, self, xs_packet_steps(&self->pkt));
	for (i = 0; i < 2; i++)
		close(qfd[i]);
}

TEST_F_TIMEOUT(fl, fail_resume_keeps_queue_suspended_until_retry, 60)
{
	struct xsched_queue_info info, before;
	int ret, i, ev;

	start(_metadata, self, self->slots, 100, 5 * XS_MS);
	ASSERT_EQ(0, xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	ASSERT_EQ(0, xs_query(self->qfd, &before));
	ASSERT_LT(0, before.saved_waves);
	ASSERT_EQ(0, xs_knob_write("fail_resume", 2));
	for (i = 0; i < 2; i++) {
		ret = xs_resume(self->qfd, NULL);
		EXPECT_EQ(-EIO, ret) TH_LOG("resume %d: %s", i, xs_err(ret));
		ASSERT_EQ(0, xs_query(self->qfd, &info));
		EXPECT_EQ(XSCHED_STATE_SUSPENDED, info.state)
			TH_LOG("state %s after a failed resume",
			       xs_state_name(info.state));
		EXPECT_EQ(-EIO, info.last_error);
		EXPECT_EQ(before.faults + i + 1, info.faults);
		EXPECT_EQ(before.saved_waves, info.saved_waves)
			TH_LOG("saved state lost by a failed resume");
		EXPECT_EQ(before.steps_done, info.steps_done);
		EXPECT_EQ(0, info.resumes);
		ev = xs_poll(self->qfd, POLLPRI | POLLERR, 0);
		EXPECT_EQ(POLLPRI, ev) TH_LOG("revents %#x", ev);
	}
	EXPECT_EQ(0, knob(_metadata, "fail_resume"));
	ret = xs_resume(self->qfd, NULL);
	ASSERT_EQ(0, ret) TH_LOG("retry: %s", xs_err(ret));
	ASSERT_EQ(0, xs_query(self->qfd, &info));
	EXPECT_EQ(1, info.resumes);
	finish(_metadata, self, xs_packet_steps(&self->pkt));
}

TEST_F_TIMEOUT(fl, fail_resume_on_close_still_restarts_queue, 60)
{
	int ret;

	start(_metadata, self, self->slots, 60, 5 * XS_MS);
	ASSERT_EQ(0, xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	ASSERT_EQ(0, xs_knob_write("fail_resume", 1));
	ASSERT_EQ(0, close(self->qfd));
	self->qfd = -1;
	ret = xs_wait(self->sfd, self->id, self->seq, 30 * XS_SEC, NULL);
	ASSERT_EQ(0, ret) TH_LOG("work of a queue closed while suspended: %s",
				 xs_err(ret));
	EXPECT_EQ(0, xs_table_count_stopped());
	self->qfd = xs_register(self->cfd, self->sfd, self->id, 0, NULL);
	ASSERT_LE(0, self->qfd);
	finish(_metadata, self, xs_packet_steps(&self->pkt));
}

/*
 * A reset frees the wave slots its queue held, and another queue's work
 * waiting for one runs at once.  Here every slot holds a wave of a hung
 * save: no CU has a step to time, so each waits to be woken, and only the
 * reset that ends the save (the watchdog's) can wake them.
 */
TEST_F_TIMEOUT(fl, slots_freed_by_reset_run_waiting_work, 60)
{
	struct xsched_sim_packet p;
	struct xs_buf other;
	uint64_t seq;
	uint32_t id2;
	int ret;

	ASSERT_EQ(0, xs_buf_alloc(self->sfd, XS_PAGE, &other));
	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id2, NULL));
	/* Every slot, for 2 s; then a one-workgroup kernel waits for one. */
	start(_metadata, self, self->slots, 400, 5 * XS_MS);
	ASSERT_EQ(0, xs_wait_steps(self->qfd, 2 * self->slots, 10 * XS_SEC));
	p = xs_packet(1, 3, 0, 0x51075, other.gpu_addr, 0);
	ASSERT_EQ(0, xs_submit(self->sfd, id2, &p, 1, &seq));
	xs_sleep_ns(50 * XS_MS);
	ASSERT_EQ(-ETIMEDOUT, xs_wait(self->sfd, id2, seq, 0, NULL))
		TH_LOG("the kernel found a free slot: the slots were not all taken");

	ASSERT_EQ(0, xs_knob_write("save_timeout_ms", SAVE_TIMEOUT_MS));
	ASSERT_EQ(0, xs_knob_write("fail_save", 1));
	ret = xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, NULL);
	ASSERT_EQ(-ETIMEDOUT, ret) TH_LOG("hung SAVE: %s", xs_err(ret));
	ret = xs_wait(self->sfd, id2, seq, 5 * XS_SEC, NULL);
	EXPECT_EQ(0, ret)
		TH_LOG("the kernel waiting for a slot, after the reset freed them all: %s",
		       xs_err(ret));
	EXPECT_EQ(xs_ref_workgroup(0x51075, 0, 3, NULL), other.map[0]);
	expect_failed(_metadata, self, self->id, self->qfd, -ETIMEDOUT);
}

TEST_F_TIMEOUT(fl, reset_queue_fails_busy_queue_with_eio, 60)
{
	uint64_t done;

	start(_metadata, self, self->slots, 200, 5 * XS_MS);
	ASSERT_EQ(0, xs_knob_write("reset_queue", self->uid));
	done = ~0ULL;
	EXPECT_EQ(-EIO, xs_wait(self->sfd, self->id, self->seq, 5 * XS_SEC, &done));
	EXPECT_EQ(0, done);
	expect_failed(_metadata, self, self->id, self->qfd, -EIO);
}

TEST_F_TIMEOUT(fl, reset_queue_fails_suspended_queue, 60)
{
	char state[24];

	start(_metadata, self, self->slots, 200, 5 * XS_MS);
	ASSERT_EQ(0, xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	ASSERT_EQ(0, xs_knob_write("reset_queue", self->uid));
	expect_failed(_metadata, self, self->id, self->qfd, -EIO);
	ASSERT_EQ(0, close(self->qfd));
	self->qfd = -1;
	EXPECT_EQ(0, xs_table_state(self->uid, state, sizeof(state)));
	EXPECT_EQ(0, xs_table_count_stopped());
}

TEST_F_TIMEOUT(fl, failed_queue_never_reaches_backend, 60)
{
	start(_metadata, self, self->slots, 200, 5 * XS_MS);
	ASSERT_EQ(0, xs_knob_write("reset_queue", self->uid));
	ASSERT_EQ(0, xs_wait_state(self->qfd, XSCHED_STATE_FAILED, 5 * XS_SEC));
	/* knobs the backend would consume stay untouched */
	ASSERT_EQ(0, xs_knob_write("fail_save", 1));
	ASSERT_EQ(0, xs_knob_write("fail_resume", 1));
	ASSERT_EQ(0, xs_knob_write("save_delay_us", 2000000));
	EXPECT_EQ(-EIO, xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	EXPECT_EQ(-EIO, xs_suspend(self->qfd, XSCHED_MODE_DRAIN, 0, 0, NULL));
	EXPECT_EQ(-EIO, xs_resume(self->qfd, NULL));
	EXPECT_EQ(1, knob(_metadata, "fail_save"))
		TH_LOG("a FAILED queue's SAVE reached the backend");
	EXPECT_EQ(1, knob(_metadata, "fail_resume"))
		TH_LOG("a FAILED queue's resume reached the backend");
	/* a second reset of a FAILED queue changes nothing */
	EXPECT_EQ(0, xs_knob_write("reset_queue", self->uid));
	expect_failed(_metadata, self, self->id, self->qfd, -EIO);
	ASSERT_EQ(0, xs_knob_write("fail_save", 0));
	ASSERT_EQ(0, xs_knob_write("fail_resume", 0));
	ASSERT_EQ(0, xs_knob_write("save_delay_us", 0));
}

TEST_F(fl, reset_unknown_queue_is_enoent)
{
	EXPECT_EQ(-ENOENT, xs_knob_write("reset_queue", 0));
	EXPECT_EQ(-ENOENT, xs_knob_write("reset_queue", 0xfffffff0ULL));
	EXPECT_EQ(XSCHED_STATE_ACTIVE, xs_state(self->qfd));
}

/* Submits one packet whose dst or src is bad and expects an EFAULT fault. */
static void expect_memory_fault(struct __test_metadata *_metadata,
				FIXTURE_DATA(fl) *self,
				struct xsched_sim_packet *p)
{
	uint64_t seq, done = ~0ULL;
	int ret;

	ASSERT_EQ(0, xs_submit(self->sfd, self->id, p, 1, &seq))
		TH_LOG("device addresses are not checked at submit");
	ret = xs_wait(self->sfd, self->id, seq, 10 * XS_SEC, &done);
	EXPECT_EQ(-EIO, ret) TH_LOG("wait: %s", xs_err(ret));
	EXPECT_EQ(seq - 1, done);
	expect_failed(_metadata, self, self->id, self->qfd, -EFAULT);
}

TEST_F(fl, bad_dst_address_faults_queue_with_efault)
{
	struct xsched_sim_packet p = xs_packet(4, 3, 0, 1, UNMAPPED_ADDR, 0);

	expect_memory_fault(_metadata, self, &p);
}

TEST_F(fl, bad_src_address_faults_queue_with_efault)
{
	struct xsched_sim_packet p = xs_packet(4, 3, 0, 1, self->dst.gpu_addr,
					       UNMAPPED_ADDR);

	expect_memory_fault(_metadata, self, &p);
}

TEST_F(fl, dst_past_end_of_buffer_faults_queue_with_efault)
{
	uint32_t entries = self->dst.map_size / sizeof(uint64_t);
	struct xsched_sim_packet p = xs_packet(entries + 1, 2, 0, 1,
					       self->dst.gpu_addr, 0);

	expect_memory_fault(_metadata, self, &p);
}

/* A MARK packet whose results fit its buffer but whose marks do not. */
TEST_F(fl, marks_past_end_of_buffer_fault_queue_with_efault)
{
	uint32_t entries = self->dst.map_size / sizeof(uint64_t);
	struct xsched_sim_packet p = xs_mark_packet(entries, 2, 0, 1,
						    self->dst.gpu_addr, 0);

	expect_memory_fault(_metadata, self, &p);
}

TEST_F(fl, memory_fault_stops_later_packets_only)
{
	struct xs_buf other;
	struct xsched_sim_packet p[3];
	uint64_t seq, done = ~0ULL;
	uint32_t id2;
	int qfd2, ret;

	/* packet 1 fine, packet 2 faults, packet 3 never runs */
	ASSERT_EQ(0, xs_buf_alloc(self->sfd, XS_PAGE, &other));
	p[0] = xs_packet(2, 3, 0, 5, self->dst.gpu_addr, 0);
	p[1] = xs_packet(2, 3, 0, 6, UNMAPPED_ADDR, 0);
	p[2] = xs_packet(2, 3, 0, 7, other.gpu_addr, 0);
	ASSERT_EQ(0, xs_submit(self->sfd, self->id, p, 3, &seq));
	ret = xs_wait(self->sfd, self->id, 3, 10 * XS_SEC, &done);
	EXPECT_EQ(-EIO, ret) TH_LOG("wait: %s", xs_err(ret));
	EXPECT_EQ(1, done);
	EXPECT_EQ(0, xs_wait(self->sfd, self->id, 1, 0, NULL));
	EXPECT_EQ(xs_ref_workgroup(5, 1, 3, NULL), self->dst.map[1]);
	EXPECT_EQ(0xa5a5a5a5a5a5a5a5ULL, other.map[0])
		TH_LOG("a packet after the fault ran");
	expect_failed(_metadata, self, self->id, self->qfd, -EFAULT);

	/* another queue of the same client is not affected */
	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id2, NULL));
	qfd2 = xs_register(self->cfd, self->sfd, id2, 0, NULL);
	ASSERT_LE(0, qfd2);
	p[2] = xs_packet(2, 3, 0, 7, other.gpu_addr, 0);
	ASSERT_EQ(0, xs_submit(self->sfd, id2, &p[2], 1, &seq));
	ASSERT_EQ(0, xs_wait(self->sfd, id2, seq, 10 * XS_SEC, NULL));
	EXPECT_EQ(xs_ref_workgroup(7, 0, 3, NULL), other.map[0]);
	EXPECT_EQ(XSCHED_STATE_ACTIVE, xs_state(qfd2));
	close(qfd2);
}

TEST_F_TIMEOUT(fl, suspend_interrupted_by_signal_goes_on, 60)
{
	struct sigaction sa = { .sa_handler = xs_interrupt_handler };	/* no SA_RESTART */
	struct itimerval it = { .it_value = { .tv_usec = 50000 } };
	int ret, ev;

	start(_metadata, self, 2, 200, 5 * XS_MS);
	ASSERT_EQ(0, xs_knob_write("save_delay_us", 300000));
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
	ret = xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, NULL);
	EXPECT_EQ(-EINTR, ret) TH_LOG("slow SAVE hit by a signal: %s", xs_err(ret));
	ret = xs_state(self->qfd);
	EXPECT_TRUE(ret == XSCHED_STATE_SUSPENDING || ret == XSCHED_STATE_SUSPENDED)
		TH_LOG("state %s after EINTR", xs_state_name(ret));
	ev = xs_poll(self->qfd, POLLPRI, 20000);
	EXPECT_EQ(POLLPRI, ev) TH_LOG("the suspend never completed (revents %#x)", ev);
	EXPECT_EQ(XSCHED_STATE_SUSPENDED, xs_state(self->qfd));
	ASSERT_EQ(0, xs_knob_write("save_delay_us", 0));
	ASSERT_EQ(0, xs_resume(self->qfd, NULL));
	finish(_metadata, self, xs_packet_steps(&self->pkt));
}

struct suspender {
	int qfd;
	int ret;
};

static void *blocking_save(void *arg)
{
	struct suspender *s = arg;

	s->ret = xs_suspend(s->qfd, XSCHED_MODE_SAVE, 0, 0, NULL);
	return NULL;
}

TEST_F_TIMEOUT(fl, resume_cancels_slow_blocking_suspend, 60)
{
	struct suspender s = { .ret = 1 };
	struct xsched_queue_info info;
	uint64_t suspended_ns = ~0ULL;
	pthread_t t;
	int ret;

	start(_metadata, self, 2, 200, 5 * XS_MS);
	ASSERT_EQ(0, xs_knob_write("save_delay_us", 300000));
	s.qfd = self->qfd;
	ASSERT_EQ(0, pthread_create(&t, NULL, blocking_save, &s));
	ret = xs_wait_state(self->qfd, XSCHED_STATE_SUSPENDING, 10 * XS_SEC);
	EXPECT_EQ(0, ret) TH_LOG("never saw SUSPENDING");
	ret = xs_resume(self->qfd, &suspended_ns);
	EXPECT_EQ(0, ret) TH_LOG("resume of a SUSPENDING queue: %s", xs_err(ret));
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(-ECANCELED, s.ret) TH_LOG("cancelled suspend: %s", xs_err(s.ret));
	EXPECT_EQ(0, suspended_ns);
	ASSERT_EQ(0, xs_query(self->qfd, &info));
	EXPECT_EQ(XSCHED_STATE_ACTIVE, info.state);
	EXPECT_EQ(0, info.suspends);
	EXPECT_EQ(0, info.resumes);
	ASSERT_EQ(0, xs_knob_write("save_delay_us", 0));
	finish(_metadata, self, xs_packet_steps(&self->pkt));
}

TEST_F_TIMEOUT(fl, resume_cancels_nonblock_suspend, 60)
{
	int ret;

	start(_metadata, self, 2, 200, 5 * XS_MS);
	ASSERT_EQ(0, xs_knob_write("save_delay_us", 300000));
	ASSERT_EQ(0, xs_suspend(self->qfd, XSCHED_MODE_SAVE,
				XSCHED_SUSPEND_NONBLOCK, 0, NULL));
	EXPECT_EQ(XSCHED_STATE_SUSPENDING, xs_state(self->qfd));
	ret = xs_resume(self->qfd, NULL);
	EXPECT_EQ(0, ret) TH_LOG("resume of a SUSPENDING queue: %s", xs_err(ret));
	EXPECT_EQ(XSCHED_STATE_ACTIVE, xs_state(self->qfd));
	/* and it does not turn SUSPENDED later */
	xs_sleep_ns(400 * XS_MS);
	EXPECT_EQ(XSCHED_STATE_ACTIVE, xs_state(self->qfd));
	EXPECT_EQ(0, xs_poll(self->qfd, POLLPRI, 0));
	ASSERT_EQ(0, xs_knob_write("save_delay_us", 0));
	finish(_metadata, self, xs_packet_steps(&self->pkt));
}

TEST_F_TIMEOUT(fl, poll_wakes_on_fault, 60)
{
	struct xsched_sim_packet p;
	uint64_t seq, t0;
	int ev;

	/* the wave writes its bad dst at the end, 30 x 10 ms from now */
	p = xs_packet(1, 30, 10 * XS_MS, 3, UNMAPPED_ADDR, 0);
	ASSERT_EQ(0, xs_submit(self->sfd, self->id, &p, 1, &seq));
	t0 = xs_now_ns();
	ev = xs_poll(self->qfd, POLLIN | POLLPRI, 30000);
	ksft_print_msg("poll returned %#x after %.1f ms\n", ev,
		       (xs_now_ns() - t0) / 1e6);
	EXPECT_TRUE(ev & POLLERR) TH_LOG("revents %#x: the fault did not wake poll()", ev);
	expect_failed(_metadata, self, self->id, self->qfd, -EFAULT);
}

TEST_HARNESS_MAIN
