// SPDX-License-Identifier: MIT
/* The in-process fixed-priority policy and the decision log. */
#include <stdlib.h>
#include <time.h>

#include "util.h"

static struct xsched_xqueue *mkq(struct mock_platform *mp, uint32_t h,
				 unsigned int level, int32_t prio)
{
	struct xsched_attr a = attr_lv(level, prio);
	struct xsched_xqueue *xq;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), 0);
	return xq;
}

TEST(policy_higher_busy_suspends_lower_at_lv3_with_save)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t hl = mock_queue_create(mp, 64), hh = mock_queue_create(mp, 64);
	struct xsched_xqueue *lo = mkq(mp, hl, XSCHED_LV3, 0);
	struct xsched_xqueue *hi = mkq(mp, hh, XSCHED_LV3, 5);

	submit_n(lo, 0, 4, NULL, 0);
	ASSERT_EQ(mock_state(mp, hl), XS_HW_ACTIVE);
	submit_n(hi, 100, 1, NULL, 0);
	/* Suspended by the applier thread, not by the submitting one. */
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, hl) == XS_HW_SUSPENDED, 2000));
	ASSERT_EQ(mock_q(mp, hl)->mode, XS_MODE_SAVE);
	ASSERT_EQ(mock_state(mp, hh), XS_HW_ACTIVE);
	ASSERT_EQ(xq_info(lo).hold, XSCHED_HOLD_POLICY);
	ASSERT_EQ(xq_state(lo), XSCHED_XQ_SUSPENDED);
	mock_complete(mp, hh, 1);
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, hl) == XS_HW_ACTIVE, 2000));
	/* The library's side follows the module call. */
	ASSERT_TRUE(WAIT_UNTIL(xq_info(lo).hold == 0, 2000));
	mock_complete(mp, hl, 4);
	ASSERT_EQ(xsched_xqueue_destroy(hi), 0);
	ASSERT_EQ(xsched_xqueue_destroy(lo), 0);
	mock_destroy(mp);
}

TEST(policy_lower_lv2_queue_is_drained)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t hl = mock_queue_create(mp, 64), hh = mock_queue_create(mp, 64);
	struct xsched_xqueue *lo = mkq(mp, hl, XSCHED_LV2, -3);
	struct xsched_xqueue *hi = mkq(mp, hh, XSCHED_LV3, 0);

	submit_n(hi, 0, 1, NULL, 0);
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, hl) == XS_HW_SUSPENDED, 2000));
	ASSERT_EQ(mock_q(mp, hl)->mode, XS_MODE_DRAIN);
	mock_complete(mp, hh, 1);
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, hl) == XS_HW_ACTIVE, 2000));
	ASSERT_EQ(xsched_xqueue_destroy(hi), 0);
	ASSERT_EQ(xsched_xqueue_destroy(lo), 0);
	mock_destroy(mp);
}

TEST(policy_lower_lv1_queue_stops_launching)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t hl = mock_queue_create(mp, 64), hh = mock_queue_create(mp, 64);
	struct xsched_attr a = attr_lv1(0, 2, 1);
	struct xsched_xqueue *lo, *hi = mkq(mp, hh, XSCHED_LV3, 1);

	ASSERT_EQ(xsched_xqueue_create(&lo, &mp->plat, hl, &a), 0);
	submit_n(hi, 0, 1, NULL, 0);
	submit_n(lo, 0, 5, NULL, 0);
	/* Lv1: no module suspend, nothing launched while hi has work. */
	ASSERT_EQ(mock_q(mp, hl)->suspend_calls, 0);
	ASSERT_EQ(mock_wptr(mp, hl), 0);
	ASSERT_EQ(xq_info(lo).buffered, 5);
	mock_complete(mp, hh, 1);
	ASSERT_TRUE(WAIT_UNTIL(mock_wptr(mp, hl) == 2, 2000));
	while (mock_rptr(mp, hl) < 5) {
		mock_complete(mp, hl, 1);
		usleep(500);
	}
	ASSERT_EQ(xsched_xqueue_destroy(hi), 0);
	ASSERT_EQ(xsched_xqueue_destroy(lo), 0);
	mock_destroy(mp);
}

TEST(policy_lv1_higher_queue_holds_lower_until_its_buffer_drains)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t hl = mock_queue_create(mp, 64), hh = mock_queue_create(mp, 64);
	struct xsched_attr a = attr_lv1(9, 2, 1);
	struct xsched_xqueue *hi, *lo = mkq(mp, hl, XSCHED_LV3, 0);

	ASSERT_EQ(xsched_xqueue_create(&hi, &mp->plat, hh, &a), 0);
	submit_n(hi, 0, 4, NULL, 0);
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, hl) == XS_HW_SUSPENDED, 2000));
	mock_complete(mp, hh, 2);
	usleep(20000);
	/* Two still buffered or in flight: still held. */
	ASSERT_EQ(mock_state(mp, hl), XS_HW_SUSPENDED);
	while (mock_rptr(mp, hh) < 4) {
		mock_complete(mp, hh, 1);
		usleep(500);
	}
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, hl) == XS_HW_ACTIVE, 2000));
	ASSERT_EQ(xsched_xqueue_destroy(hi), 0);
	ASSERT_EQ(xsched_xqueue_destroy(lo), 0);
	mock_destroy(mp);
}

TEST(policy_equal_priorities_do_not_suspend_each_other)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h1 = mock_queue_create(mp, 64), h2 = mock_queue_create(mp, 64);
	struct xsched_xqueue *a = mkq(mp, h1, XSCHED_LV3, 2);
	struct xsched_xqueue *b = mkq(mp, h2, XSCHED_LV3, 2);
	struct xsched_decision d[4];

	submit_n(a, 0, 3, NULL, 0);
	submit_n(b, 0, 3, NULL, 0);
	ASSERT_EQ(mock_state(mp, h1), XS_HW_ACTIVE);
	ASSERT_EQ(mock_state(mp, h2), XS_HW_ACTIVE);
	ASSERT_EQ(xsched_decisions(d, 4, sizeof(*d)), 0);
	mock_complete(mp, h1, 3);
	mock_complete(mp, h2, 3);
	ASSERT_EQ(xsched_xqueue_destroy(a), 0);
	ASSERT_EQ(xsched_xqueue_destroy(b), 0);
	mock_destroy(mp);
}

TEST(policy_three_priorities_cascade)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h0 = mock_queue_create(mp, 64), h1 = mock_queue_create(mp, 64),
		 h2 = mock_queue_create(mp, 64);
	struct xsched_xqueue *q0 = mkq(mp, h0, XSCHED_LV3, 0);
	struct xsched_xqueue *q1 = mkq(mp, h1, XSCHED_LV3, 1);
	struct xsched_xqueue *q2 = mkq(mp, h2, XSCHED_LV3, 2);

	submit_n(q1, 0, 1, NULL, 0);
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, h0) == XS_HW_SUSPENDED, 2000));
	ASSERT_EQ(mock_state(mp, h1), XS_HW_ACTIVE);
	submit_n(q2, 0, 1, NULL, 0);
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, h1) == XS_HW_SUSPENDED, 2000));
	ASSERT_EQ(mock_state(mp, h0), XS_HW_SUSPENDED);
	ASSERT_EQ(mock_state(mp, h2), XS_HW_ACTIVE);
	/* q2 idle: q1 runs again, q0 still waits for q1. */
	mock_complete(mp, h2, 1);
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, h1) == XS_HW_ACTIVE, 2000));
	ASSERT_EQ(mock_state(mp, h0), XS_HW_SUSPENDED);
	mock_complete(mp, h1, 1);
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, h0) == XS_HW_ACTIVE, 2000));
	ASSERT_EQ(xsched_xqueue_destroy(q2), 0);
	ASSERT_EQ(xsched_xqueue_destroy(q1), 0);
	ASSERT_EQ(xsched_xqueue_destroy(q0), 0);
	mock_destroy(mp);
}

TEST(policy_idle_higher_queue_holds_nobody)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t hl = mock_queue_create(mp, 64), hh = mock_queue_create(mp, 64);
	struct xsched_xqueue *lo = mkq(mp, hl, XSCHED_LV3, 0);
	struct xsched_xqueue *hi = mkq(mp, hh, XSCHED_LV3, 50);

	submit_n(lo, 0, 3, NULL, 0);
	ASSERT_EQ(mock_state(mp, hl), XS_HW_ACTIVE);
	ASSERT_EQ(mock_q(mp, hl)->suspend_calls, 0);
	mock_complete(mp, hl, 3);
	ASSERT_EQ(xsched_xqueue_destroy(hi), 0);
	ASSERT_EQ(xsched_xqueue_destroy(lo), 0);
	mock_destroy(mp);
}

TEST(policy_queue_created_while_higher_busy_is_held_at_once)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t hh = mock_queue_create(mp, 64), hl = mock_queue_create(mp, 64);
	struct xsched_xqueue *hi = mkq(mp, hh, XSCHED_LV3, 3);
	struct xsched_xqueue *lo;

	submit_n(hi, 0, 1, NULL, 0);
	lo = mkq(mp, hl, XSCHED_LV3, 0);
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, hl) == XS_HW_SUSPENDED, 2000));
	mock_complete(mp, hh, 1);
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, hl) == XS_HW_ACTIVE, 2000));
	ASSERT_EQ(xsched_xqueue_destroy(hi), 0);
	ASSERT_EQ(xsched_xqueue_destroy(lo), 0);
	mock_destroy(mp);
}

TEST(policy_priority_change_reevaluates)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t ha = mock_queue_create(mp, 64), hb = mock_queue_create(mp, 64);
	struct xsched_xqueue *a = mkq(mp, ha, XSCHED_LV3, 0);
	struct xsched_xqueue *b = mkq(mp, hb, XSCHED_LV3, 0);
	struct xsched_decision d[8];
	int n;

	submit_n(a, 0, 1, NULL, 0);
	submit_n(b, 0, 1, NULL, 0);
	ASSERT_EQ(mock_state(mp, ha), XS_HW_ACTIVE);
	ASSERT_EQ(xsched_set_priority(b, 4), 0);
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, ha) == XS_HW_SUSPENDED, 2000));
	ASSERT_EQ(xsched_set_priority(a, 9), 0);
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, hb) == XS_HW_SUSPENDED, 2000));
	ASSERT_EQ(mock_state(mp, ha), XS_HW_ACTIVE);
	n = xsched_decisions(d, 8, sizeof(*d));
	ASSERT_EQ(n, 3);
	ASSERT_EQ(d[0].reason, XSCHED_WHY_PRIORITY);
	ASSERT_EQ(d[1].action, XSCHED_ACT_RESUME);
	ASSERT_EQ(d[1].queue, xsched_xqueue_id(a));
	ASSERT_EQ(d[2].action, XSCHED_ACT_SUSPEND);
	ASSERT_EQ(d[2].queue, xsched_xqueue_id(b));
	mock_complete(mp, ha, 1);
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, hb) == XS_HW_ACTIVE, 2000));
	mock_complete(mp, hb, 1);
	ASSERT_EQ(xsched_xqueue_destroy(a), 0);
	ASSERT_EQ(xsched_xqueue_destroy(b), 0);
	mock_destroy(mp);
}

TEST(policy_user_hold_outlives_policy_release)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t hl = mock_queue_create(mp, 64), hh = mock_queue_create(mp, 64);
	struct xsched_xqueue *lo = mkq(mp, hl, XSCHED_LV3, 0);
	struct xsched_xqueue *hi = mkq(mp, hh, XSCHED_LV3, 1);

	submit_n(hi, 0, 1, NULL, 0);
	ASSERT_EQ(xsched_suspend(lo, 0), 0);
	ASSERT_EQ(xq_info(lo).hold, XSCHED_HOLD_USER | XSCHED_HOLD_POLICY);
	ASSERT_EQ(mock_q(mp, hl)->suspend_calls, 1);	/* one hardware suspend */
	mock_complete(mp, hh, 1);
	ASSERT_TRUE(WAIT_UNTIL(xq_info(lo).hold == XSCHED_HOLD_USER, 2000));
	ASSERT_EQ(mock_state(mp, hl), XS_HW_SUSPENDED);
	ASSERT_EQ(xsched_resume(lo), 0);
	ASSERT_EQ(mock_state(mp, hl), XS_HW_ACTIVE);
	ASSERT_EQ(xsched_xqueue_destroy(hi), 0);
	ASSERT_EQ(xsched_xqueue_destroy(lo), 0);
	mock_destroy(mp);
}

TEST(policy_failed_higher_queue_releases_lower)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t hl = mock_queue_create(mp, 64), hh = mock_queue_create(mp, 64);
	struct xsched_xqueue *lo = mkq(mp, hl, XSCHED_LV3, 0);
	struct xsched_xqueue *hi = mkq(mp, hh, XSCHED_LV3, 1);
	struct xsched_decision d[4];
	int n;

	submit_n(hi, 0, 1, NULL, 0);
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, hl) == XS_HW_SUSPENDED, 2000));
	mock_fail(mp, hh);
	/* The record follows the resume: wait for it, not for the state. */
	ASSERT_TRUE(WAIT_UNTIL(xsched_decisions(d, 4, sizeof(*d)) >= 2, 2000));
	ASSERT_EQ(mock_state(mp, hl), XS_HW_ACTIVE);
	n = xsched_decisions(d, 4, sizeof(*d));
	ASSERT_EQ(n, 2);
	ASSERT_EQ(d[1].action, XSCHED_ACT_RESUME);
	ASSERT_EQ(d[1].reason, XSCHED_WHY_FAILED);
	ASSERT_EQ(xq_state(hi), XSCHED_XQ_FAILED);
	ASSERT_EQ(xsched_xqueue_destroy(hi), 0);
	ASSERT_EQ(xsched_xqueue_destroy(lo), 0);
	mock_destroy(mp);
}

TEST(policy_destroyed_higher_queue_releases_lower)
{
	struct mock_platform *mp = mock_create(true, 3);
	uint32_t hl = mock_queue_create(mp, 64), hh = mock_queue_create(mp, 64);
	struct xsched_xqueue *lo = mkq(mp, hl, XSCHED_LV3, 0);
	struct xsched_xqueue *hi = mkq(mp, hh, XSCHED_LV3, 1);
	uint64_t cnt[3] = { 0 };

	submit_n(hi, 0, 3, cnt, 2000000);
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, hl) == XS_HW_SUSPENDED, 2000));
	ASSERT_EQ(xsched_xqueue_destroy(hi), 0);	/* waits for its work */
	ASSERT_EQ(cnt[2], 1);
	ASSERT_EQ(mock_state(mp, hl), XS_HW_ACTIVE);
	ASSERT_EQ(xsched_xqueue_destroy(lo), 0);
	mock_destroy(mp);
}

TEST(policy_decision_records_queue_reason_and_duration)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t hl = mock_queue_create(mp, 64), hh = mock_queue_create(mp, 64);
	struct xsched_xqueue *lo = mkq(mp, hl, XSCHED_LV3, 0);
	struct xsched_xqueue *hi = mkq(mp, hh, XSCHED_LV3, 1);
	struct xsched_decision d[4];

	submit_n(hi, 0, 1, NULL, 0);
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, hl) == XS_HW_SUSPENDED, 2000));
	usleep(10000);
	mock_complete(mp, hh, 1);
	/* The record follows the resume: wait for it, not for the state. */
	ASSERT_TRUE(WAIT_UNTIL(xsched_decisions(d, 4, sizeof(*d)) >= 2, 2000));
	ASSERT_EQ(mock_state(mp, hl), XS_HW_ACTIVE);
	ASSERT_EQ(xsched_decisions(d, 4, sizeof(*d)), 2);
	ASSERT_EQ(d[0].seq, 1);
	ASSERT_EQ(d[0].action, XSCHED_ACT_SUSPEND);
	ASSERT_EQ(d[0].reason, XSCHED_WHY_HIGHER_BUSY);
	ASSERT_EQ(d[0].queue, xsched_xqueue_id(lo));
	ASSERT_EQ(d[0].other, xsched_xqueue_id(hi));
	ASSERT_EQ(d[0].level, XSCHED_LV3);
	ASSERT_EQ(d[0].error, 0);
	ASSERT_EQ(d[1].seq, 2);
	ASSERT_EQ(d[1].action, XSCHED_ACT_RESUME);
	ASSERT_EQ(d[1].reason, XSCHED_WHY_HIGHER_IDLE);
	ASSERT_EQ(d[1].other, xsched_xqueue_id(hi));
	ASSERT_GE(d[1].duration_ns, 10000000);
	ASSERT_GE(d[1].time_ns, d[0].time_ns + d[1].duration_ns);
	ASSERT_GE(xq_info(lo).suspended_ns, 10000000);
	ASSERT_EQ(xsched_decisions(d, 1, sizeof(*d)), 1);	/* the last one only */
	ASSERT_EQ(d[0].seq, 2);
	ASSERT_EQ(xsched_decisions(NULL, 0, sizeof(struct xsched_decision)), 0);
	ASSERT_EQ(xsched_xqueue_destroy(hi), 0);
	ASSERT_EQ(xsched_xqueue_destroy(lo), 0);
	mock_destroy(mp);
}

TEST(policy_decision_log_keeps_the_most_recent)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_xqueue *xq = mkq(mp, h, XSCHED_LV3, 0);
	static struct xsched_decision d[XSCHED_DECISION_LOG_SIZE + 10];
	int i, n;

	for (i = 0; i < 700; i++) {
		ASSERT_EQ(xsched_suspend(xq, 0), 0);
		ASSERT_EQ(xsched_resume(xq), 0);
	}
	n = xsched_decisions(d, XSCHED_DECISION_LOG_SIZE + 10, sizeof(*d));
	ASSERT_EQ(n, XSCHED_DECISION_LOG_SIZE);
	ASSERT_EQ(d[0].seq, 1400 - XSCHED_DECISION_LOG_SIZE + 1);
	ASSERT_EQ(d[n - 1].seq, 1400);
	for (i = 1; i < n; i++)
		ASSERT_EQ(d[i].seq, d[i - 1].seq + 1);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(policy_debug_log_prints_one_line_per_decision)
{
	struct mock_platform *mp;
	uint32_t hl, hh;
	struct xsched_xqueue *lo, *hi;
	struct xsched_decision d[8];
	char *out;

	setenv("XSCHED_LOG", "debug", 1);
	xs_config_reload();
	mp = mock_create(false, 3);
	hl = mock_queue_create(mp, 64);
	hh = mock_queue_create(mp, 64);
	stderr_begin();
	lo = mkq(mp, hl, XSCHED_LV3, 0);
	hi = mkq(mp, hh, XSCHED_LV3, 1);
	submit_n(hi, 0, 1, NULL, 0);
	mock_complete(mp, hh, 1);
	/* The decision is recorded (and its line written) after the resume
	 * reached the queue: wait for the record, not the queue's state. */
	ASSERT_TRUE(WAIT_UNTIL(xsched_decisions(d, 8, sizeof(*d)) >= 2, 2000));
	ASSERT_EQ(mock_state(mp, hl), XS_HW_ACTIVE);
	out = stderr_end();
	ASSERT_EQ(count_substr(out, "debug: suspend q"), 1);
	ASSERT_EQ(count_substr(out, "debug: resume q"), 1);
	/* Which queue, why, for how long. */
	ASSERT_TRUE(strstr(out, "suspend q1 (prio 0, Lv3 save): q2 (prio 1) has work"));
	ASSERT_TRUE(strstr(out, "resume q1 (prio 0, Lv3 save): higher-priority queues idle, by q2, was stopped "));
	ASSERT_TRUE(strstr(out, "was stopped "));
	ASSERT_EQ(xsched_xqueue_destroy(hi), 0);
	ASSERT_EQ(xsched_xqueue_destroy(lo), 0);
	mock_destroy(mp);
}

TEST(policy_silent_by_default)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t hl = mock_queue_create(mp, 64), hh = mock_queue_create(mp, 64);
	struct xsched_xqueue *lo, *hi;
	char *out;

	stderr_begin();
	lo = mkq(mp, hl, XSCHED_LV3, 0);
	hi = mkq(mp, hh, XSCHED_LV3, 1);
	submit_n(hi, 0, 1, NULL, 0);
	mock_complete(mp, hh, 1);
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, hl) == XS_HW_ACTIVE, 2000));
	ASSERT_EQ(xsched_xqueue_destroy(hi), 0);
	ASSERT_EQ(xsched_xqueue_destroy(lo), 0);
	out = stderr_end();
	ASSERT_EQ(strlen(out), 0);
	mock_destroy(mp);
}

struct arrivals {
	struct xsched_xqueue *xq;
	uint64_t *cnt;
	int n;
	unsigned int seed;
};

static void *urgent_arrivals(void *arg)
{
	struct arrivals *ar = arg;
	int i;

	for (i = 0; i < ar->n; i++) {
		struct mock_cmd c = cmd_tag(1000000 + (uint32_t)i, &ar->cnt[i],
					    (uint64_t)(rand_r(&ar->seed) % 300) * 1000);

		usleep((useconds_t)(rand_r(&ar->seed) % 3000));
		if (xsched_submit(ar->xq, &c, 1, NULL))
			abort();
		if (rand_r(&ar->seed) % 2 && xsched_synchronize(ar->xq))
			abort();
	}
	return NULL;
}

static void exactly_once_random_urgent(unsigned int level)
{
	struct mock_platform *mp = mock_create(true, 3);
	uint32_t hl = mock_queue_create(mp, 64), hh = mock_queue_create(mp, 64);
	struct xsched_attr al = attr_lv1(0, 4, 2), ah = attr_lv(XSCHED_LV3, 10);
	static uint64_t bc[300], uc[60];
	struct xsched_xqueue *lo, *hi;
	struct arrivals ar;
	uint32_t i, next_b = 0, next_u = 0;
	pthread_t t;

	memset(bc, 0, sizeof(bc));
	memset(uc, 0, sizeof(uc));
	al.level = level;
	ASSERT_EQ(xsched_xqueue_create(&lo, &mp->plat, hl, &al), 0);
	ASSERT_EQ(xsched_xqueue_create(&hi, &mp->plat, hh, &ah), 0);
	ar.xq = hi;
	ar.cnt = uc;
	ar.n = 60;
	ar.seed = 12345;
	pthread_create(&t, NULL, urgent_arrivals, &ar);
	submit_n(lo, 0, 300, bc, 300000);
	pthread_join(t, NULL);
	ASSERT_EQ(xsched_synchronize(hi), 0);
	ASSERT_EQ(xsched_synchronize(lo), 0);
	for (i = 0; i < 300; i++)
		ASSERT_EQ(bc[i], 1);
	for (i = 0; i < 60; i++)
		ASSERT_EQ(uc[i], 1);
	/* Each queue's commands in submission order. */
	for (i = 0; i < mp->nlog; i++) {
		if (mp->log[i].queue == hl)
			ASSERT_EQ(mp->log[i].tag, next_b++);
		else
			ASSERT_EQ(mp->log[i].tag, 1000000 + next_u++);
	}
	ASSERT_EQ(next_b, 300);
	ASSERT_EQ(next_u, 60);
	ASSERT_GE(xq_info(lo).suspends, 1);
	ASSERT_EQ(xq_info(lo).suspends, xq_info(lo).resumes);
	ASSERT_EQ(xsched_xqueue_destroy(hi), 0);
	ASSERT_EQ(xsched_xqueue_destroy(lo), 0);
	mock_destroy(mp);
}

TEST(policy_exactly_once_under_random_urgent_arrivals_lv1)
{
	exactly_once_random_urgent(XSCHED_LV1);
}

TEST(policy_exactly_once_under_random_urgent_arrivals_lv2)
{
	exactly_once_random_urgent(XSCHED_LV2);
}

TEST(policy_exactly_once_under_random_urgent_arrivals_lv3)
{
	exactly_once_random_urgent(XSCHED_LV3);
}

TEST(policy_idle_unwatched_queue_does_not_hold_a_new_lower_queue)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t hh = mock_queue_create(mp, 64), hl = mock_queue_create(mp, 64);
	struct xsched_xqueue *hi = mkq(mp, hh, XSCHED_LV3, 5), *lo;
	struct xsched_decision d[4];

	/* Nobody below hi: its completion is not watched, nobody waits for it. */
	submit_n(hi, 0, 2, NULL, 0);
	mock_complete(mp, hh, 2);
	lo = mkq(mp, hl, XSCHED_LV3, 0);
	ASSERT_EQ(mock_state(mp, hl), XS_HW_ACTIVE);
	ASSERT_EQ(xsched_decisions(d, 4, sizeof(*d)), 0);
	/* And once lo exists, hi's next burst is watched to its end. */
	submit_n(hi, 2, 1, NULL, 0);
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, hl) == XS_HW_SUSPENDED, 2000));
	mock_complete(mp, hh, 1);
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, hl) == XS_HW_ACTIVE, 2000));
	ASSERT_EQ(xsched_xqueue_destroy(hi), 0);
	ASSERT_EQ(xsched_xqueue_destroy(lo), 0);
	mock_destroy(mp);
}

TEST(policy_raised_priority_of_idle_queue_holds_nobody)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t ha = mock_queue_create(mp, 64), hb = mock_queue_create(mp, 64);
	struct xsched_xqueue *a = mkq(mp, ha, XSCHED_LV3, 0);
	struct xsched_xqueue *b = mkq(mp, hb, XSCHED_LV3, 0);

	submit_n(b, 0, 1, NULL, 0);
	mock_complete(mp, hb, 1);	/* b is idle, though nobody looked */
	ASSERT_EQ(xsched_set_priority(b, 9), 0);
	ASSERT_EQ(mock_state(mp, ha), XS_HW_ACTIVE);
	ASSERT_EQ(xsched_xqueue_destroy(a), 0);
	ASSERT_EQ(xsched_xqueue_destroy(b), 0);
	mock_destroy(mp);
}

/* ---- the applier thread ---- */

static void *count_queues(void *arg)
{
	*(int *)arg = xs_sched_count();	/* takes sched.lock */
	return NULL;
}

static atomic_int hook_lock_free;	/* 1: sched.lock was free, -1: held */
static atomic_int hook_entered;

/* A slow preemptor call (an ioctl that waits for a save) that checks, from
 * another thread, that nobody holds the library's global lock meanwhile. */
static void slow_checking_suspend(struct mock_queue *q)
{
	struct timespec ts;
	pthread_t t;
	int n = -1;

	(void)q;
	atomic_fetch_add(&hook_entered, 1);
	ASSERT_EQ(pthread_create(&t, NULL, count_queues, &n), 0);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 1;
	if (pthread_timedjoin_np(t, NULL, &ts)) {
		atomic_store(&hook_lock_free, -1);
		pthread_detach(t);	/* it ends once the lock is dropped */
	} else {
		atomic_store(&hook_lock_free, n == 2 ? 1 : -1);
	}
	usleep(100000);
}

TEST(applier_suspends_off_the_submitting_thread_and_submit_does_not_wait)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t hl = mock_queue_create(mp, 64), hh = mock_queue_create(mp, 64);
	struct xsched_xqueue *lo = mkq(mp, hl, XSCHED_LV3, 0);
	struct xsched_xqueue *hi = mkq(mp, hh, XSCHED_LV3, 5);
	uint64_t t0, submit_ns;

	mock_q(mp, hl)->suspend_hook = slow_checking_suspend;
	submit_n(lo, 0, 2, NULL, 0);
	t0 = xs_now_ns();
	submit_n(hi, 0, 1, NULL, 0);
	submit_ns = xs_now_ns() - t0;
	/* The hold is decided at once; the suspend call comes from the applier. */
	ASSERT_EQ(xq_info(lo).hold, XSCHED_HOLD_POLICY);
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, hl) == XS_HW_SUSPENDED, 2000));
	ASSERT_TRUE(!pthread_equal(mock_q(mp, hl)->suspend_thread, pthread_self()));
	/* The submit did not wait for the 100 ms suspend call. */
	ASSERT_LE(submit_ns, 25000000);
	ASSERT_EQ(xq_state(lo), XSCHED_XQ_SUSPENDED);
	mock_complete(mp, hh, 1);
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, hl) == XS_HW_ACTIVE, 2000));
	mock_complete(mp, hl, 2);
	ASSERT_EQ(xsched_xqueue_destroy(hi), 0);
	ASSERT_EQ(xsched_xqueue_destroy(lo), 0);
	mock_destroy(mp);
}

TEST(applier_calls_the_preemptor_without_the_global_lock)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t hl = mock_queue_create(mp, 64), hh = mock_queue_create(mp, 64);
	struct xsched_xqueue *lo = mkq(mp, hl, XSCHED_LV3, 0);
	struct xsched_xqueue *hi = mkq(mp, hh, XSCHED_LV3, 5);

	mock_q(mp, hl)->suspend_hook = slow_checking_suspend;
	submit_n(lo, 0, 1, NULL, 0);
	submit_n(hi, 0, 1, NULL, 0);
	ASSERT_TRUE(WAIT_UNTIL(atomic_load(&hook_lock_free) != 0, 3000));
	ASSERT_EQ(atomic_load(&hook_lock_free), 1);
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, hl) == XS_HW_SUSPENDED, 2000));
	mock_complete(mp, hh, 1);
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, hl) == XS_HW_ACTIVE, 2000));
	mock_complete(mp, hl, 1);
	ASSERT_EQ(xsched_xqueue_destroy(hi), 0);
	ASSERT_EQ(xsched_xqueue_destroy(lo), 0);
	mock_destroy(mp);
}

/* A user request on an XQueue whose suspend the applier is in waits for
 * it, then acts on the state the applier left: one hardware suspend. */
TEST(applier_user_suspend_during_a_policy_suspend_waits_for_it)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t hl = mock_queue_create(mp, 64), hh = mock_queue_create(mp, 64);
	struct xsched_xqueue *lo = mkq(mp, hl, XSCHED_LV3, 0);
	struct xsched_xqueue *hi = mkq(mp, hh, XSCHED_LV3, 5);

	mock_q(mp, hl)->suspend_hook = slow_checking_suspend;
	submit_n(lo, 0, 1, NULL, 0);
	submit_n(hi, 0, 1, NULL, 0);
	ASSERT_TRUE(WAIT_UNTIL(atomic_load(&hook_entered) == 1, 2000));
	ASSERT_EQ(xsched_suspend(lo, XSCHED_SUSPEND_NONBLOCK), 0);
	/* No second suspend call (each one enters the hook first). */
	ASSERT_EQ(atomic_load(&hook_entered), 1);
	ASSERT_EQ(mock_q(mp, hl)->suspend_calls, 1);
	ASSERT_EQ(mock_state(mp, hl), XS_HW_SUSPENDED);
	mock_complete(mp, hh, 1);
	ASSERT_TRUE(WAIT_UNTIL(xq_info(lo).hold == XSCHED_HOLD_USER, 2000));
	ASSERT_EQ(mock_state(mp, hl), XS_HW_SUSPENDED);
	ASSERT_EQ(xsched_resume(lo), 0);
	ASSERT_EQ(mock_state(mp, hl), XS_HW_ACTIVE);
	mock_complete(mp, hl, 1);
	ASSERT_EQ(xsched_xqueue_destroy(hi), 0);
	ASSERT_EQ(xsched_xqueue_destroy(lo), 0);
	mock_destroy(mp);
}

/* The cap's predicate: strictly lower than the device's highest only. */
TEST(policy_cap_is_for_strictly_lower_priorities)
{
	ASSERT_TRUE(xs_policy_capped(0, 1));
	ASSERT_TRUE(xs_policy_capped(XSCHED_PRIO_MIN, XSCHED_PRIO_MAX));
	ASSERT_TRUE(!xs_policy_capped(1, 1));
	ASSERT_TRUE(!xs_policy_capped(2, 1));
	ASSERT_TRUE(!xs_policy_capped(XSCHED_PRIO_MAX, XSCHED_PRIO_MAX));
}
