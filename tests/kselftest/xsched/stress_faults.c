// SPDX-License-Identifier: GPL-2.0
/*
 * stress_faults: several sim queues run MARK kernels while they are
 * suspended and resumed at random (by the test, or by the arbiter) and the
 * sim's fault knobs fire at random: slow saves, hung saves (the watchdog
 * resets the queue), failed resumes, queue resets.  The knobs are global:
 * "the next SAVE hangs" hits whichever queue saves next, the arbiter's
 * suspends of another queue included, so the verdict never trusts who
 * injected what.  It reads each queue's state instead, and holds every
 * workgroup of every packet to one of the documented outcomes:
 *
 *   - the packet completed (SIM_WAIT 0): result and marks exactly the CPU
 *     reference's;
 *   - its queue FAILED before it completed: each workgroup either finished
 *     (exact result, every step marked once) or never wrote its result
 *     (result untouched, fewer marks than steps): partial work of a reset
 *     queue, as Documentation/uapi.rst says.
 *
 * Anything else is a lost or repeated write, and fails with what was seen.
 * XSCHED_STRESS_S sets the run time (default 20 s), XSCHED_SEED the seed.
 */
#include "xsched_test.h"

#define NQ		4
#define MAX_GRID	16

struct sq {
	uint32_t id;
	int qfd;
	uint32_t uid;
	struct xs_buf b;		/* results [0, grid), marks [grid, 2 grid) */
	struct xsched_sim_packet pkt;
	uint64_t ref[MAX_GRID];
	uint64_t seq;
	bool busy;			/* a packet is in flight */
	bool suspended;			/* by the test */
};

struct tally {
	unsigned long exact, failed_packets, finished_wgs, unfinished_wgs;
	unsigned long queues_failed, suspends, faults;
	unsigned long bad;		/* workgroups with neither outcome */
};

FIXTURE(sf) {
	int cfd;
	struct xsched_version ver;
	int sfd;
	struct xsched_sim_info sim;
	unsigned int slots;
	uint64_t rng;
	struct sq q[NQ];
	struct tally t;
	uint64_t save_timeout_ms;
};

FIXTURE_VARIANT(sf) {
	bool arbiter;		/* the arbiter suspends, not the test */
};

FIXTURE_VARIANT_ADD(sf, direct) { .arbiter = false };
FIXTURE_VARIANT_ADD(sf, arbiter) { .arbiter = true };

static int sq_open(FIXTURE_DATA(sf) *self, const FIXTURE_VARIANT(sf) *variant,
		   struct sq *q, int prio)
{
	int ret = xs_queue_create(self->sfd, 16, &q->id, NULL);

	if (ret)
		return ret;
	q->qfd = xs_register_flags(self->cfd, self->sfd, q->id, prio,
				   variant->arbiter ? XSCHED_REGISTER_ARBITRATE : 0,
				   &q->uid);
	q->busy = false;
	q->suspended = false;
	return q->qfd < 0 ? q->qfd : 0;
}

FIXTURE_SETUP(sf)
{
	int i;

	for (i = 0; i < NQ; i++)
		self->q[i].qfd = -1;
	XS_CLIENT_OPEN_OR_SKIP(self->cfd, self->ver);
	XS_SIM_OPEN_OR_SKIP(self->sfd, self->sim);
	XS_DEBUGFS_OR_SKIP();
	self->slots = xs_slots(&self->sim);
	ASSERT_EQ(0, xs_knob_read("save_timeout_ms", &self->save_timeout_ms));
	/* A hung save is reset soon; a slow one (save_delay_us) is not hung. */
	ASSERT_EQ(0, xs_knob_write("save_timeout_ms", 200));
	self->rng = xs_seed(_metadata->name);
	for (i = 0; i < NQ; i++) {
		ASSERT_EQ(0, xs_buf_alloc(self->sfd, 2 * MAX_GRID * sizeof(uint64_t),
					  &self->q[i].b));
		/* Arbitrated: priorities 0..NQ-1, so the higher ones stop the lower. */
		ASSERT_EQ(0, sq_open(self, variant, &self->q[i], variant->arbiter ? -i : 0));
	}
}

FIXTURE_TEARDOWN(sf)
{
	int i;

	xs_knob_write("fail_save", 0);
	xs_knob_write("fail_resume", 0);
	xs_knob_write("save_delay_us", 0);
	if (self->save_timeout_ms)
		xs_knob_write("save_timeout_ms", self->save_timeout_ms);
	for (i = 0; i < NQ; i++)
		if (self->q[i].qfd >= 0)
			close(self->q[i].qfd);
	if (self->cfd >= 0)
		close(self->cfd);
	if (self->sfd > 0)
		close(self->sfd);
}

/* A new packet on @q: 0, or -EIO if the queue failed since it was last seen. */
static int submit(struct __test_metadata *_metadata, FIXTURE_DATA(sf) *self,
		  struct sq *q)
{
	uint32_t grid = xs_rand_range(&self->rng, 1, self->slots + 2 < MAX_GRID ?
						    self->slots + 2 : MAX_GRID);
	uint32_t steps = xs_rand_range(&self->rng, 4, 40);
	int ret;

	q->pkt = xs_mark_packet(grid, steps, XS_MS, xs_rand(&self->rng),
				q->b.gpu_addr, 0);
	memset(q->b.map, 0, 2 * grid * sizeof(uint64_t));
	xs_ref_packet(&q->pkt, NULL, q->ref);
	ret = xs_submit(self->sfd, q->id, &q->pkt, 1, &q->seq);
	if (ret == -EIO)
		return ret;
	EXPECT_EQ(0, ret) TH_LOG("submit on queue %u: %s", q->uid, xs_err(ret));
	q->busy = !ret;
	return 0;
}

/*
 * The packet in flight on @q ended: @completed it did, or its queue failed
 * (with @err) before it did.  Every workgroup must be one of the documented
 * outcomes (top of the file).
 */
static void verdict(struct __test_metadata *_metadata, FIXTURE_DATA(sf) *self,
		    struct sq *q, bool completed, int err)
{
	const struct xsched_sim_packet *p = &q->pkt;
	unsigned long bad = self->t.bad;
	uint64_t got, marks;
	uint32_t wg;

	for (wg = 0; wg < p->grid; wg++) {
		got = q->b.map[wg];
		marks = q->b.map[p->grid + wg];
		if (got == q->ref[wg] && marks == p->steps) {
			if (!completed)
				self->t.finished_wgs++;
			continue;
		}
		if (!completed && !got && marks < p->steps) {
			self->t.unfinished_wgs++;
			continue;
		}
		/* The first one says what it is; the run stops after this round. */
		if (self->t.bad++)
			continue;
		EXPECT_TRUE(false)
			TH_LOG("queue %u packet seq %llu workgroup %u of %u: result %#llx (reference %#llx), %llu of %u steps marked; the packet %s: %s",
			       q->uid, (unsigned long long)q->seq, wg, p->grid,
			       (unsigned long long)got, (unsigned long long)q->ref[wg],
			       (unsigned long long)marks, p->steps,
			       completed ? "completed" : "did not complete, its queue failed",
			       marks > p->steps ? "a step ran twice" :
			       got && got != q->ref[wg] ? "a wrong result" :
			       completed || marks == p->steps ? "a result lost" :
			       "a result without its steps");
	}
	if (completed && bad == self->t.bad)
		self->t.exact++;
	else if (!completed)
		self->t.failed_packets++;
	(void)err;
}

/* The state of @q's registration, and its last error. */
static int sq_state(struct sq *q, int *err)
{
	struct xsched_queue_info info;

	if (xs_query(q->qfd, &info))
		return -1;
	*err = info.last_error;
	return info.state;
}

/* @q FAILED (a reset, a hung save): a new queue in its place. */
static void replace(struct __test_metadata *_metadata, FIXTURE_DATA(sf) *self,
		    const FIXTURE_VARIANT(sf) *variant, struct sq *q, int prio)
{
	struct xsched_sim_queue_destroy d = { .queue_id = q->id };
	int err = 0, state = sq_state(q, &err);

	EXPECT_EQ(XSCHED_STATE_FAILED, state);
	EXPECT_TRUE(err == -ETIMEDOUT || err == -EIO)
		TH_LOG("queue %u failed with %d", q->uid, err);
	self->t.queues_failed++;
	close(q->qfd);
	ASSERT_EQ(0, xs_ioctl(self->sfd, XSCHED_IOC_SIM_QUEUE_DESTROY, &d));
	ASSERT_EQ(0, sq_open(self, variant, q, prio));
}

/*
 * Looks at @q: a finished packet is checked and, with @more, replaced; a
 * failed queue is checked and replaced.
 */
static void step(struct __test_metadata *_metadata, FIXTURE_DATA(sf) *self,
		 const FIXTURE_VARIANT(sf) *variant, struct sq *q, int prio,
		 bool more)
{
	int ret;

	if (q->busy) {
		ret = xs_wait(self->sfd, q->id, q->seq, 0, NULL);
		if (!ret) {
			verdict(_metadata, self, q, true, 0);
			q->busy = false;
		} else if (ret == -EIO) {
			verdict(_metadata, self, q, false, 0);
			replace(_metadata, self, variant, q, prio);
		} else {
			ASSERT_EQ(-ETIMEDOUT, ret) TH_LOG("wait: %s", xs_err(ret));
		}
	}
	/* It may fail between the last look and the submit. */
	if (!q->busy && more && submit(_metadata, self, q) == -EIO) {
		replace(_metadata, self, variant, q, prio);
		ASSERT_EQ(0, submit(_metadata, self, q));
	}
}

/* One random action of the test: a suspend or resume (direct), or a fault. */
static void act(struct __test_metadata *_metadata, FIXTURE_DATA(sf) *self,
		const FIXTURE_VARIANT(sf) *variant)
{
	struct sq *q = &self->q[xs_rand(&self->rng) % NQ];
	unsigned int r = xs_rand(&self->rng) % 100;
	uint32_t mode;
	int ret;

	if (r < 3) {
		xs_knob_write("fail_save", 1);
		self->t.faults++;
	} else if (r < 6) {
		xs_knob_write("fail_resume", 1);
		self->t.faults++;
	} else if (r < 9) {
		xs_knob_write("save_delay_us", xs_rand_range(&self->rng, 0, 3000));
		self->t.faults++;
	} else if (r < 10) {
		xs_knob_write("reset_queue", q->uid);
		self->t.faults++;
	} else if (!variant->arbiter && r < 60) {
		if (q->suspended) {
			ret = xs_resume(q->qfd, NULL);
			/* A failed resume leaves it suspended, to retry. */
			if (ret != -EIO || xs_state(q->qfd) == XSCHED_STATE_FAILED)
				q->suspended = false;
			EXPECT_TRUE(!ret || ret == -EIO) TH_LOG("resume: %s", xs_err(ret));
		} else {
			mode = xs_rand(&self->rng) & 1 ? XSCHED_MODE_SAVE : XSCHED_MODE_DRAIN;
			ret = xs_suspend(q->qfd, mode, 0, 0, NULL);
			EXPECT_TRUE(!ret || ret == -ETIMEDOUT || ret == -EIO)
				TH_LOG("%s suspend: %s", xs_mode_name(mode), xs_err(ret));
			q->suspended = !ret;
			self->t.suspends += !ret;
		}
	}
}

TEST_F_TIMEOUT(sf, faults_leave_every_write_exact_or_documented, 600)
{
	const char *env = getenv("XSCHED_STRESS_S");
	uint64_t end = xs_now_ns() + (env ? strtoull(env, NULL, 0) : 20) * XS_SEC;
	uint64_t t0;
	int i, err;

	for (i = 0; i < NQ; i++)
		ASSERT_EQ(0, submit(_metadata, self, &self->q[i]));
	while (xs_now_ns() < end && !self->t.bad) {
		for (i = 0; i < NQ; i++)
			step(_metadata, self, variant, &self->q[i],
			     variant->arbiter ? -i : 0, true);
		act(_metadata, self, variant);
		xs_sleep_ns(xs_rand_range(&self->rng, 0, 3 * XS_MS));
	}
	/* No more faults; let every packet end one way or the other. */
	xs_knob_write("fail_save", 0);
	xs_knob_write("fail_resume", 0);
	xs_knob_write("save_delay_us", 0);
	for (i = 0; i < NQ; i++) {
		struct sq *q = &self->q[i];

		if (q->suspended && xs_state(q->qfd) != XSCHED_STATE_FAILED)
			EXPECT_EQ(0, xs_resume(q->qfd, NULL));
		q->suspended = false;
		t0 = xs_now_ns();
		while (q->busy && xs_now_ns() - t0 < 30 * XS_SEC) {
			step(_metadata, self, variant, q, variant->arbiter ? -i : 0,
			     false);
			if (q->busy)
				xs_sleep_ns(XS_MS);
		}
		if (q->busy && sq_state(q, &err) != XSCHED_STATE_FAILED) {
			struct xsched_queue_info info = {};

			xs_query(q->qfd, &info);
			EXPECT_TRUE(false)
				TH_LOG("queue %u: its last packet never ended: %s, %llu of %llu packets done, %llu arbiter suspends, last error %d",
				       q->uid, xs_state_name(info.state),
				       (unsigned long long)info.rptr,
				       (unsigned long long)info.wptr,
				       (unsigned long long)info.arbiter_suspends,
				       info.last_error);
		}
	}
	ksft_print_msg("%s: %lu packets exact, %lu on queues that failed (%lu workgroups finished, %lu not), %lu queues failed, %lu test suspends, %lu faults injected, %lu workgroups wrong\n",
		       _metadata->name, self->t.exact, self->t.failed_packets,
		       self->t.finished_wgs, self->t.unfinished_wgs,
		       self->t.queues_failed, self->t.suspends, self->t.faults,
		       self->t.bad);
	EXPECT_LT(0, self->t.exact);
}

TEST_HARNESS_MAIN
