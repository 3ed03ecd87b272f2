// SPDX-License-Identifier: GPL-2.0
/*
 * The arbiter with ties: several busy queues of one priority (two inference
 * servers of one tier) beside lower queues (a training job).  Every queue
 * below a tied top must stop, in whichever process or (arbiter_cross_user)
 * user the tied queues live; a tied queue going idle releases nothing while
 * another of its priority is busy; once all are idle the lower queues
 * resume and finish exactly (results and step marks).
 *
 * The tied queues are busy before the lower queues are registered, so the
 * first pass that sees the lower queues sees the tie: an arbiter that
 * stopped only below a single busy queue would stop none of them.
 */
#include "xsched_test.h"

#define PARAM_DIR	"/sys/module/xsched_kfd/parameters/"
#define CROSS_USER	PARAM_DIR "arbiter_cross_user"
#define WAIT_NS		(30 * XS_SEC)
#define OTHER_UID	65534	/* nobody */
#define THIRD_UID	65533
#define MAX_TIED	3
#define NLOW		2
/*
 * How long a lower queue may take to stop once the tie is busy: the
 * arbiter reacts in milliseconds, a debug kernel in a VM short of CPU
 * within 150 ms.  The tied kernels last longer.
 */
#define STOP_NS		(8 * XS_SEC)
#define TIE_STEP_NS	(10 * XS_MS)

static int reg_arb(int cfd, int sfd, uint32_t id, int32_t prio)
{
	return xs_register_flags(cfd, sfd, id, prio, XSCHED_REGISTER_ARBITRATE, NULL);
}

/* One arbitrated queue of this process, with one kernel. */
struct aq {
	uint32_t id;
	int qfd;
	struct xs_buf b;
	struct xsched_sim_packet p;
	uint64_t seq;
};

FIXTURE(tie) {
	int cfd;
	struct xsched_version ver;
	int sfd;
	struct xsched_sim_info sim;
	char cross_user[8];
};

FIXTURE_SETUP(tie)
{
	XS_CLIENT_OPEN_OR_SKIP(self->cfd, self->ver);
	XS_SIM_OPEN_OR_SKIP(self->sfd, self->sim);
	xs_param_read(CROSS_USER, self->cross_user, sizeof(self->cross_user));
}

FIXTURE_TEARDOWN(tie)
{
	if (self->cross_user[0])
		xs_write_file(CROSS_USER, self->cross_user);
	if (self->sfd >= 0)
		close(self->sfd);
	if (self->cfd >= 0)
		close(self->cfd);
}

/* Registers @q at @prio and gives it a MARK kernel of @grid x @steps. */
static int aq_start(FIXTURE_DATA(tie) *self, struct aq *q, int32_t prio,
		    uint32_t grid, uint32_t steps, uint64_t step_ns, uint64_t seed)
{
	int ret;

	q->qfd = -1;
	ret = xs_buf_alloc(self->sfd, 8 * 4096, &q->b);
	if (!ret)
		ret = xs_queue_create(self->sfd, 4, &q->id, NULL);
	if (ret)
		return ret;
	q->qfd = reg_arb(self->cfd, self->sfd, q->id, prio);
	if (q->qfd < 0)
		return q->qfd;
	q->p = xs_mark_packet(grid, steps, step_ns, seed, q->b.gpu_addr, 0);
	xs_marks_clear(&q->p, q->b.map);
	return xs_submit(self->sfd, q->id, &q->p, 1, &q->seq);
}

static void aq_stop(struct aq *q)
{
	if (q->qfd >= 0)
		close(q->qfd);
	xs_buf_free(&q->b);
}

/* Is @q's kernel still running (registered, not finished)? */
static bool aq_busy(const struct aq *q)
{
	struct xsched_queue_info info;

	return !xs_query(q->qfd, &info) && info.rptr != info.wptr;
}

/* Its kernel completed with the CPU reference's result and step marks. */
static void aq_check_done(struct __test_metadata *_metadata,
			  FIXTURE_DATA(tie) *self, struct aq *q, const char *who)
{
	ASSERT_EQ(0, xs_wait(self->sfd, q->id, q->seq, WAIT_NS, NULL))
		TH_LOG("%s: its kernel never completed", who);
	EXPECT_EQ(-1, xs_packet_mismatch(&q->p, NULL, q->b.map))
		TH_LOG("%s: result differs from the CPU reference", who);
	XS_EXPECT_MARKS(&q->p, q->b.map);
}

/*
 * Waits until @low is stopped by the arbiter while @tied (@n queues of this
 * process, or none) are all busy: a stop that came only once one of them
 * was idle is not a stop beside the tie.
 */
static void wait_stopped(struct __test_metadata *_metadata, struct aq *low,
			 const char *who, struct aq *tied, int n)
{
	uint64_t end = xs_now_ns() + STOP_NS;
	struct xsched_queue_info info;
	int i, busy;

	for (;;) {
		ASSERT_EQ(0, xs_query(low->qfd, &info));
		/* Read after the lower queue: busy now, so busy then. */
		for (i = 0, busy = 0; i < n; i++)
			busy += aq_busy(&tied[i]);
		ASSERT_EQ(n, busy)
			TH_LOG("%s (priority %d): %s when one of the %d busy queues of one higher priority went idle, expected suspended while they all were",
			       who, info.priority, xs_state_name(info.state), n);
		if (info.state == XSCHED_STATE_SUSPENDED)
			break;
		ASSERT_LT(xs_now_ns(), end)
			TH_LOG("%s (priority %d): %s %.1f s after %d busy queues of one higher priority were there, expected suspended",
			       who, info.priority, xs_state_name(info.state),
			       STOP_NS / 1e9, n ? n : 2);
		xs_sleep_ns(XS_MS);
	}
	EXPECT_LE(1, info.arbiter_suspends);
}

/*
 * Once a tied queue is idle, @low (@nlow queues) stay stopped while
 * @busy (@nbusy queues) are: checked past the resume delay (1 ms) many
 * times over.
 */
static void expect_still_stopped(struct __test_metadata *_metadata,
				 struct aq *low, int nlow, struct aq *busy, int nbusy)
{
	struct xsched_queue_info info;
	int i, j;

	xs_sleep_ns(200 * XS_MS);
	for (i = 0; i < nlow; i++) {
		ASSERT_EQ(0, xs_query(low[i].qfd, &info));
		/* Read after the lower queue: busy now, so busy then. */
		for (j = 0; j < nbusy; j++)
			ASSERT_TRUE(aq_busy(&busy[j]))
				TH_LOG("a higher kernel finished too early to tell");
		EXPECT_EQ(XSCHED_STATE_SUSPENDED, info.state)
			TH_LOG("lower queue %d (priority %d): %s while %d queues of a higher priority are still busy",
			       i, info.priority, xs_state_name(info.state), nbusy);
	}
}

/* Lower queues at -1 and -2, registered and given work beside the tie. */
static void start_low(struct __test_metadata *_metadata, FIXTURE_DATA(tie) *self,
		      struct aq *low)
{
	int i, ret;

	for (i = 0; i < NLOW; i++) {
		ret = aq_start(self, &low[i], -1 - i, 2, 40, 5 * XS_MS, 20 + i);
		ASSERT_EQ(0, ret) TH_LOG("lower queue %d: %s", i, xs_err(ret));
	}
}

/*
 * @n busy queues of priority 0 in this process, then the lower queues:
 * all of these stop, and finish exactly once the tie is idle.
 */
static void tie_in_process(struct __test_metadata *_metadata,
			   FIXTURE_DATA(tie) *self, int n)
{
	struct aq tied[MAX_TIED], low[NLOW];
	char who[32];
	int i, ret;

	for (i = 0; i < n; i++) {
		/* 3 s each: long against the arbiter's reaction. */
		ret = aq_start(self, &tied[i], 0, 1, 300, TIE_STEP_NS, 1 + i);
		ASSERT_EQ(0, ret) TH_LOG("tied queue %d: %s", i, xs_err(ret));
	}
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, xs_wait_steps(tied[i].qfd, 1, WAIT_NS));
	start_low(_metadata, self, low);
	for (i = 0; i < NLOW; i++) {
		snprintf(who, sizeof(who), "lower queue %d", i);
		wait_stopped(_metadata, &low[i], who, tied, n);
	}
	for (i = 0; i < n; i++) {
		snprintf(who, sizeof(who), "tied queue %d", i);
		aq_check_done(_metadata, self, &tied[i], who);
	}
	for (i = 0; i < NLOW; i++) {
		snprintf(who, sizeof(who), "lower queue %d", i);
		aq_check_done(_metadata, self, &low[i], who);
		EXPECT_EQ(0, xs_wait_state(low[i].qfd, XSCHED_STATE_ACTIVE, WAIT_NS));
		aq_stop(&low[i]);
	}
	for (i = 0; i < n; i++)
		aq_stop(&tied[i]);
}

TEST_F_TIMEOUT(tie, two_busy_queues_tied_at_the_top_stop_the_lower_queues, 120)
{
	tie_in_process(_metadata, self, 2);
}

TEST_F_TIMEOUT(tie, three_busy_queues_tied_at_the_top_stop_the_lower_queues, 120)
{
	tie_in_process(_metadata, self, 3);
}

/* A child's urgent queue: priority 0, one kernel of 10 s, busy on return. */
static int busy_child(void *arg, int up, int down)
{
	struct xsched_sim_packet p;
	struct xs_buf b;
	uint64_t seq;
	uint32_t id;
	int cfd, sfd, qfd, ret;

	(void)arg;
	(void)up;
	(void)down;
	ret = xs_client_open(&cfd, NULL) ?: xs_sim_open(&sfd, NULL);
	if (!ret)
		ret = xs_buf_alloc(sfd, 4096, &b);
	if (!ret)
		ret = xs_queue_create(sfd, 4, &id, NULL);
	if (ret)
		return ret;
	qfd = reg_arb(cfd, sfd, id, 0);
	if (qfd < 0)
		return qfd;
	p = xs_packet(1, 1000, TIE_STEP_NS, 3, b.gpu_addr, 0);
	ret = xs_submit(sfd, id, &p, 1, &seq);
	/* Its fds stay open until the parent lets it exit. */
	return ret ?: xs_wait_steps(qfd, 1, WAIT_NS);
}

/* Two children (@uid1, @uid2) tied at 0, then this process's lower queues. */
static void tie_in_children(struct __test_metadata *_metadata,
			    FIXTURE_DATA(tie) *self, uid_t uid1, uid_t uid2)
{
	struct xs_other o[2];
	struct aq low[NLOW];
	char who[32];
	int i, ret;

	ASSERT_EQ(0, xs_other_start(&o[0], uid1, busy_child, NULL));
	ASSERT_EQ(0, xs_other_start(&o[1], uid2, busy_child, NULL));
	for (i = 0; i < 2; i++) {
		ret = xs_other_result(&o[i]);
		ASSERT_EQ(0, ret) TH_LOG("child %d (uid %u): %s", i,
					 i ? uid2 : uid1, xs_err(ret));
	}
	start_low(_metadata, self, low);
	for (i = 0; i < NLOW; i++) {
		snprintf(who, sizeof(who), "lower queue %d", i);
		wait_stopped(_metadata, &low[i], who, NULL, 0);
	}
	/*
	 * The children exit: their registrations close, the tie is gone.  The
	 * second holds a copy of the first one's pipe: it goes first.
	 */
	xs_other_stop(&o[1]);
	xs_other_stop(&o[0]);
	for (i = 0; i < NLOW; i++) {
		snprintf(who, sizeof(who), "lower queue %d", i);
		aq_check_done(_metadata, self, &low[i], who);
		aq_stop(&low[i]);
	}
}

TEST_F_TIMEOUT(tie, queues_tied_in_two_processes_stop_a_third_process_queues, 120)
{
	tie_in_children(_metadata, self, 0, 0);
}

TEST_F_TIMEOUT(tie, queues_tied_across_users_stop_the_lower_queues_with_cross_user, 120)
{
	ASSERT_EQ(0, xs_write_file(CROSS_USER, "Y"));
	tie_in_children(_metadata, self, OTHER_UID, THIRD_UID);
}

TEST_F_TIMEOUT(tie, tied_queues_at_two_levels_stop_and_release_in_turn, 120)
{
	struct aq top[2], mid[2], low;
	char who[32];
	int i, ret;

	/* 2 s at priority 1, then two queues of 4 s at 0, then one at -1. */
	for (i = 0; i < 2; i++) {
		ret = aq_start(self, &top[i], 1, 1, 200, TIE_STEP_NS, 1 + i);
		ASSERT_EQ(0, ret) TH_LOG("top queue %d: %s", i, xs_err(ret));
	}
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, xs_wait_steps(top[i].qfd, 1, WAIT_NS));
	for (i = 0; i < 2; i++) {
		ret = aq_start(self, &mid[i], 0, 1, 400, TIE_STEP_NS, 5 + i);
		ASSERT_EQ(0, ret) TH_LOG("middle queue %d: %s", i, xs_err(ret));
	}
	ret = aq_start(self, &low, -1, 2, 40, 5 * XS_MS, 9);
	ASSERT_EQ(0, ret) TH_LOG("low queue: %s", xs_err(ret));
	for (i = 0; i < 2; i++) {
		snprintf(who, sizeof(who), "middle queue %d", i);
		wait_stopped(_metadata, &mid[i], who, top, 2);
	}
	wait_stopped(_metadata, &low, "low queue", top, 2);

	/* The top tie idle: the middle tie runs, and keeps the low queue stopped. */
	for (i = 0; i < 2; i++) {
		snprintf(who, sizeof(who), "top queue %d", i);
		aq_check_done(_metadata, self, &top[i], who);
	}
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, xs_wait_state(mid[i].qfd, XSCHED_STATE_ACTIVE, WAIT_NS));
	expect_still_stopped(_metadata, &low, 1, mid, 2);
	for (i = 0; i < 2; i++) {
		snprintf(who, sizeof(who), "middle queue %d", i);
		aq_check_done(_metadata, self, &mid[i], who);
	}
	aq_check_done(_metadata, self, &low, "low queue");
	EXPECT_EQ(0, xs_wait_state(low.qfd, XSCHED_STATE_ACTIVE, WAIT_NS));
	aq_stop(&low);
	for (i = 0; i < 2; i++) {
		aq_stop(&mid[i]);
		aq_stop(&top[i]);
	}
}

TEST_F_TIMEOUT(tie, one_tied_queue_going_idle_leaves_the_lower_queues_stopped, 120)
{
	struct aq tied[2], low[NLOW];
	char who[32];
	int i, ret;

	/* 2 s and 6 s. */
	ret = aq_start(self, &tied[0], 0, 1, 200, TIE_STEP_NS, 1);
	ASSERT_EQ(0, ret) TH_LOG("short tied queue: %s", xs_err(ret));
	ret = aq_start(self, &tied[1], 0, 1, 600, TIE_STEP_NS, 2);
	ASSERT_EQ(0, ret) TH_LOG("long tied queue: %s", xs_err(ret));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, xs_wait_steps(tied[i].qfd, 1, WAIT_NS));
	start_low(_metadata, self, low);
	for (i = 0; i < NLOW; i++) {
		snprintf(who, sizeof(who), "lower queue %d", i);
		wait_stopped(_metadata, &low[i], who, tied, 2);
	}
	aq_check_done(_metadata, self, &tied[0], "short tied queue");
	expect_still_stopped(_metadata, low, NLOW, &tied[1], 1);
	aq_check_done(_metadata, self, &tied[1], "long tied queue");
	for (i = 0; i < NLOW; i++) {
		snprintf(who, sizeof(who), "lower queue %d", i);
		aq_check_done(_metadata, self, &low[i], who);
		EXPECT_EQ(0, xs_wait_state(low[i].qfd, XSCHED_STATE_ACTIVE, WAIT_NS));
		aq_stop(&low[i]);
	}
	aq_stop(&tied[0]);
	aq_stop(&tied[1]);
}

TEST_HARNESS_MAIN
