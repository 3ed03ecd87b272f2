// SPDX-License-Identifier: MIT
/*
 * Arbiter mode: Lv2/Lv3 XQueues registered with the module's cross-process
 * arbiter (played here by the test through mock_arbiter_suspend/resume) are
 * left alone by the in-process policy; Lv1 XQueues are still scheduled in
 * the process; what the arbiter does shows up as "arbiter" decisions.
 */
#include <stdlib.h>

#include "util.h"

static struct xsched_attr attr_arb(unsigned int level, int32_t prio, uint32_t on)
{
	struct xsched_attr a = attr_lv(level, prio);

	a.flags |= XSCHED_ATTR_ARBITER;
	a.arbiter = on;
	return a;
}

static struct xsched_xqueue *mkq_arb(struct mock_platform *mp, uint32_t h,
				     unsigned int level, int32_t prio)
{
	struct xsched_attr a = attr_arb(level, prio, 1);
	struct xsched_xqueue *xq;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), 0);
	return xq;
}

/* How many decisions on @queue with @action and @reason are in the log. */
static int count_decisions(uint32_t queue, uint32_t action, uint32_t reason)
{
	struct xsched_decision d[XSCHED_DECISION_LOG_SIZE];
	int n = xsched_decisions(d, XSCHED_DECISION_LOG_SIZE, sizeof(*d)), i, k = 0;

	for (i = 0; i < n; i++)
		if (d[i].queue == queue && d[i].action == action && d[i].reason == reason)
			k++;
	return k;
}

static uint64_t last_duration(uint32_t queue, uint32_t action)
{
	struct xsched_decision d[XSCHED_DECISION_LOG_SIZE];
	int n = xsched_decisions(d, XSCHED_DECISION_LOG_SIZE, sizeof(*d)), i;

	for (i = n - 1; i >= 0; i--)
		if (d[i].queue == queue && d[i].action == action)
			return d[i].duration_ns;
	return 0;
}

TEST(arbiter_lv2_lv3_are_registered_with_the_arbiter_lv1_is_not)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h1 = mock_queue_create(mp, 64), h2 = mock_queue_create(mp, 64),
		 h3 = mock_queue_create(mp, 64), h4 = mock_queue_create(mp, 64);
	struct xsched_xqueue *q3 = mkq_arb(mp, h1, XSCHED_LV3, 0);
	struct xsched_xqueue *q2 = mkq_arb(mp, h2, XSCHED_LV2, 0);
	struct xsched_xqueue *q1 = mkq_arb(mp, h3, XSCHED_LV1, 0);
	struct xsched_xqueue *q0;
	struct xsched_attr off = attr_arb(XSCHED_LV3, 0, 0);

	ASSERT_EQ(xsched_xqueue_create(&q0, &mp->plat, h4, &off), 0);
	ASSERT_TRUE(mock_q(mp, h1)->arbitrated);
	ASSERT_TRUE(mock_q(mp, h2)->arbitrated);
	ASSERT_TRUE(!mock_q(mp, h3)->arbitrated);
	ASSERT_TRUE(!mock_q(mp, h4)->arbitrated);
	ASSERT_EQ(xq_info(q3).arbiter, 1);
	ASSERT_EQ(xq_info(q2).arbiter, 1);
	ASSERT_EQ(xq_info(q1).arbiter, 0);
	ASSERT_EQ(xq_info(q0).arbiter, 0);
	ASSERT_EQ(xsched_xqueue_destroy(q0), 0);
	ASSERT_EQ(xsched_xqueue_destroy(q1), 0);
	ASSERT_EQ(xsched_xqueue_destroy(q2), 0);
	ASSERT_EQ(xsched_xqueue_destroy(q3), 0);
	mock_destroy(mp);
}

TEST(arbiter_attr_bad_values_and_platform_without_arbiter)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_attr a = attr_arb(XSCHED_LV3, 0, 2);
	struct xsched_xqueue *xq;
	char *out;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), -EINVAL);
	a = attr_arb(XSCHED_LV3, 0, 1);
	a.reserved[0] = 1;
	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), -EINVAL);
	mp->ops.set_arbiter = NULL;	/* a platform with no arbiter */
	a = attr_arb(XSCHED_LV3, 0, 1);
	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), -EOPNOTSUPP);
	ASSERT_TRUE(!mock_q(mp, h)->bound);
	/* From the environment: one message, and in-process scheduling. */
	setenv("XSCHED_ARBITER", "1", 1);
	xs_config_reload();
	stderr_begin();
	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, NULL), 0);
	out = stderr_end();
	ASSERT_EQ(count_substr(out, "\n"), 1);
	ASSERT_TRUE(strstr(out, "XSCHED_ARBITER=1 but platform mock has no arbiter"));
	ASSERT_EQ(xq_info(xq).arbiter, 0);
	ASSERT_TRUE(!mock_q(mp, h)->arbitrated);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(arbiter_policy_leaves_arbitrated_queues_alone)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t hl = mock_queue_create(mp, 64), hh = mock_queue_create(mp, 64);
	struct xsched_xqueue *lo = mkq_arb(mp, hl, XSCHED_LV3, 0);
	struct xsched_xqueue *hi = mkq_arb(mp, hh, XSCHED_LV3, 5);
	struct xsched_decision d[4];

	submit_n(lo, 0, 4, NULL, 0);
	submit_n(hi, 100, 2, NULL, 0);
	usleep(20000);
	/* Without arbiter mode lo would be suspended by now (test_policy.c). */
	ASSERT_EQ(mock_q(mp, hl)->suspend_calls, 0);
	ASSERT_EQ(mock_q(mp, hl)->resume_calls, 0);
	ASSERT_EQ(mock_state(mp, hl), XS_HW_ACTIVE);
	ASSERT_EQ(xq_info(lo).hold, 0);
	ASSERT_EQ(xq_state(lo), XSCHED_XQ_ACTIVE);
	ASSERT_EQ(xsched_decisions(d, 4, sizeof(*d)), 0);
	/* A priority change goes to the module and still makes no decision. */
	ASSERT_EQ(xsched_set_priority(lo, 9), 0);
	ASSERT_EQ(mock_q(mp, hl)->priority, 9);
	ASSERT_EQ(mock_q(mp, hh)->suspend_calls, 0);
	ASSERT_EQ(xsched_decisions(d, 4, sizeof(*d)), 0);
	mock_complete(mp, hh, 2);
	mock_complete(mp, hl, 4);
	ASSERT_EQ(xsched_synchronize(hi), 0);
	ASSERT_EQ(xsched_synchronize(lo), 0);
	ASSERT_EQ(xsched_decisions(d, 4, sizeof(*d)), 0);
	ASSERT_EQ(mock_q(mp, hl)->suspend_calls + mock_q(mp, hl)->resume_calls, 0);
	ASSERT_EQ(xsched_xqueue_destroy(hi), 0);
	ASSERT_EQ(xsched_xqueue_destroy(lo), 0);
	mock_destroy(mp);
}

TEST(arbiter_user_suspend_and_resume_give_ebusy)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64), h1 = mock_queue_create(mp, 64);
	struct xsched_xqueue *xq = mkq_arb(mp, h, XSCHED_LV3, 0);
	struct xsched_xqueue *lv1 = mkq_arb(mp, h1, XSCHED_LV1, 0);

	ASSERT_EQ(xsched_suspend(xq, 0), -EBUSY);
	ASSERT_EQ(xsched_suspend(xq, XSCHED_SUSPEND_NONBLOCK), -EBUSY);
	ASSERT_EQ(xsched_resume(xq), -EBUSY);
	ASSERT_EQ(mock_q(mp, h)->suspend_calls, 0);
	ASSERT_EQ(mock_q(mp, h)->resume_calls, 0);
	ASSERT_EQ(xq_info(xq).hold, 0);
	/* Lv1 in arbiter mode is the library's: user holds work. */
	ASSERT_EQ(xsched_suspend(lv1, 0), 0);
	ASSERT_EQ(xq_info(lv1).hold, XSCHED_HOLD_USER);
	ASSERT_EQ(xsched_resume(lv1), 0);
	ASSERT_EQ(xsched_xqueue_destroy(lv1), 0);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

/* An arbitrated XQueue still holds lower Lv1 XQueues of its process; an Lv1
 * XQueue (not arbitrated) holds no arbitrated one. */
TEST(arbiter_lv1_queues_stay_scheduled_in_process)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t ha = mock_queue_create(mp, 64), h1 = mock_queue_create(mp, 64),
		 hb = mock_queue_create(mp, 64), h2 = mock_queue_create(mp, 64);
	struct xsched_attr a1 = attr_arb(XSCHED_LV1, 0, 1), a2 = attr_arb(XSCHED_LV1, 9, 1);
	struct xsched_xqueue *hi = mkq_arb(mp, ha, XSCHED_LV3, 5), *lo1, *hi1, *lo;

	a1.flags |= XSCHED_ATTR_THRESHOLD | XSCHED_ATTR_BATCH;
	a1.threshold = 2;
	a1.batch = 1;
	ASSERT_EQ(xsched_xqueue_create(&lo1, &mp->plat, h1, &a1), 0);
	submit_n(hi, 0, 1, NULL, 0);
	submit_n(lo1, 0, 3, NULL, 0);
	ASSERT_EQ(mock_wptr(mp, h1), 0);	/* held: nothing launched */
	ASSERT_EQ(xq_info(lo1).hold, XSCHED_HOLD_POLICY);
	ASSERT_EQ(count_decisions(xsched_xqueue_id(lo1), XSCHED_ACT_SUSPEND,
				  XSCHED_WHY_HIGHER_BUSY), 1);
	mock_complete(mp, ha, 1);
	ASSERT_TRUE(WAIT_UNTIL(mock_wptr(mp, h1) == 2, 2000));
	while (mock_rptr(mp, h1) < 3) {
		mock_complete(mp, h1, 1);
		usleep(500);
	}
	ASSERT_EQ(xsched_synchronize(lo1), 0);

	/* An urgent Lv1 XQueue is not seen by the module: it holds nobody
	 * arbitrated, in this process or another. */
	lo = mkq_arb(mp, hb, XSCHED_LV3, 0);
	ASSERT_EQ(xsched_xqueue_create(&hi1, &mp->plat, h2, &a2), 0);
	submit_n(lo, 0, 2, NULL, 0);
	submit_n(hi1, 0, 1, NULL, 0);
	ASSERT_EQ(mock_q(mp, hb)->suspend_calls, 0);
	ASSERT_EQ(mock_state(mp, hb), XS_HW_ACTIVE);
	mock_complete(mp, h2, 1);
	mock_complete(mp, hb, 2);
	ASSERT_EQ(xsched_xqueue_destroy(hi1), 0);
	ASSERT_EQ(xsched_xqueue_destroy(lo), 0);
	ASSERT_EQ(xsched_xqueue_destroy(lo1), 0);
	ASSERT_EQ(xsched_xqueue_destroy(hi), 0);
	mock_destroy(mp);
}

TEST(arbiter_suspend_and_resume_are_recorded_as_arbiter_decisions)
{
	struct mock_platform *mp;
	struct xsched_xqueue *xq;
	struct xsched_xq_info info;
	uint32_t h, id;
	char *out;

	setenv("XSCHED_LOG", "debug", 1);
	xs_config_reload();
	mp = mock_create(false, 3);
	h = mock_queue_create(mp, 64);
	stderr_begin();
	xq = mkq_arb(mp, h, XSCHED_LV3, 0);
	id = xsched_xqueue_id(xq);
	submit_n(xq, 0, 3, NULL, 0);
	ASSERT_EQ(mock_arbiter_suspend(mp, h), 0);
	ASSERT_TRUE(WAIT_UNTIL(count_decisions(id, XSCHED_ACT_SUSPEND,
					       XSCHED_WHY_ARBITER) == 1, 2000));
	info = xq_info(xq);
	ASSERT_EQ(info.state, XSCHED_XQ_SUSPENDED);
	ASSERT_EQ(info.hold, XSCHED_HOLD_ARBITER);
	ASSERT_EQ(info.hw_arbiter_suspends, 1);
	ASSERT_EQ(info.suspends, 1);
	usleep(5000);
	ASSERT_EQ(mock_arbiter_resume(mp, h), 0);
	ASSERT_TRUE(WAIT_UNTIL(count_decisions(id, XSCHED_ACT_RESUME,
					       XSCHED_WHY_ARBITER) == 1, 2000));
	ASSERT_GE(last_duration(id, XSCHED_ACT_RESUME), 4000000);
	info = xq_info(xq);
	ASSERT_EQ(info.state, XSCHED_XQ_ACTIVE);
	ASSERT_EQ(info.hold, 0);
	ASSERT_EQ(info.resumes, 1);
	/* Once more: the monitor goes back to watching the stop fd. */
	ASSERT_EQ(mock_arbiter_suspend(mp, h), 0);
	ASSERT_TRUE(WAIT_UNTIL(count_decisions(id, XSCHED_ACT_SUSPEND,
					       XSCHED_WHY_ARBITER) == 2, 2000));
	ASSERT_EQ(mock_arbiter_resume(mp, h), 0);
	ASSERT_TRUE(WAIT_UNTIL(count_decisions(id, XSCHED_ACT_RESUME,
					       XSCHED_WHY_ARBITER) == 2, 2000));
	/* The library itself never suspended or resumed it. */
	ASSERT_EQ(mock_q(mp, h)->suspend_calls + mock_q(mp, h)->resume_calls, 0);
	mock_complete(mp, h, 3);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	out = stderr_end();
	ASSERT_EQ(count_substr(out, ": arbiter: the module stopped it"), 2);
	ASSERT_EQ(count_substr(out, ": arbiter: the module resumed it"), 2);
	ASSERT_TRUE(!strcmp(xsched_reason_name(XSCHED_WHY_ARBITER), "arbiter"));
	mock_destroy(mp);
}

TEST(arbiter_set_level_moves_between_module_and_process)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64), hh = mock_queue_create(mp, 64);
	struct xsched_xqueue *xq = mkq_arb(mp, h, XSCHED_LV3, 0);
	struct xsched_xqueue *hi = mkq_arb(mp, hh, XSCHED_LV3, 5);

	ASSERT_EQ(mock_q(mp, h)->binds, 1);
	ASSERT_EQ(xsched_set_level(xq, XSCHED_LV2), 0);	/* still arbitrated */
	ASSERT_EQ(mock_q(mp, h)->binds, 1);
	ASSERT_EQ(xsched_set_level(xq, XSCHED_LV1), 0);
	ASSERT_EQ(mock_q(mp, h)->binds, 2);
	ASSERT_TRUE(!mock_q(mp, h)->arbitrated);
	ASSERT_EQ(xq_info(xq).arbiter, 0);
	/* Now the in-process policy holds it while hi has work. */
	submit_n(hi, 0, 1, NULL, 0);
	submit_n(xq, 0, 2, NULL, 0);
	ASSERT_EQ(mock_wptr(mp, h), 0);
	ASSERT_EQ(xq_info(xq).hold, XSCHED_HOLD_POLICY);
	mock_complete(mp, hh, 1);
	ASSERT_TRUE(WAIT_UNTIL(mock_wptr(mp, h) == 2, 2000));
	mock_complete(mp, h, 2);
	ASSERT_EQ(xsched_synchronize(xq), 0);
	ASSERT_EQ(xsched_set_level(xq, XSCHED_LV3), 0);
	ASSERT_EQ(mock_q(mp, h)->binds, 3);
	ASSERT_TRUE(mock_q(mp, h)->arbitrated);
	ASSERT_EQ(xq_info(xq).arbiter, 1);
	ASSERT_EQ(xsched_suspend(xq, 0), -EBUSY);
	ASSERT_EQ(xsched_xqueue_destroy(hi), 0);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

/* Random arbiter suspends and resumes of a running arbitrated XQueue, in
 * auto mode: every command completes exactly once, in order. */
TEST(arbiter_random_stops_keep_exactly_once)
{
	struct mock_platform *mp = mock_create(true, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_xqueue *xq = mkq_arb(mp, h, XSCHED_LV3, 0);
	enum { N = 200 };
	uint64_t *cnt = calloc(N, sizeof(*cnt));
	unsigned int seed = 7, i, stops = 0;
	struct mock_exec *log;

	ASSERT_TRUE(cnt);
	submit_n(xq, 0, N, cnt, 200000);	/* 40 ms of work */
	for (i = 0; i < 30 && mock_rptr(mp, h) < N; i++) {
		usleep(200 + rand_r(&seed) % 1500);
		if (!mock_arbiter_suspend(mp, h)) {
			stops++;
			usleep(200 + rand_r(&seed) % 1500);
			ASSERT_EQ(mock_arbiter_resume(mp, h), 0);
		}
	}
	ASSERT_EQ(xsched_synchronize(xq), 0);
	for (i = 0; i < N; i++)
		ASSERT_EQ(cnt[i], 1);
	log = mp->log;
	for (i = 0; i < N; i++)
		ASSERT_EQ(log[i].tag, i);
	ASSERT_GE(stops, 1);
	ASSERT_EQ(xq_info(xq).hw_arbiter_suspends, stops);
	ASSERT_EQ(mock_q(mp, h)->suspend_calls + mock_q(mp, h)->resume_calls, 0);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	free(cnt);
	mock_destroy(mp);
}
