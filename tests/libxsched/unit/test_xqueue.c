// SPDX-License-Identifier: MIT
/* XQueue API and state machine on the mock platform. */
#include "util.h"

TEST(create_rejects_bad_attributes)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_xqueue *xq = (void *)1;
	struct xsched_attr a;

	a = attr_lv(XSCHED_LV3, 0);
	a.reserved[0] = 1;
	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), -EINVAL);
	ASSERT_TRUE(xq == NULL);
	a = attr_lv(XSCHED_LV3, 0);
	a.flags |= 1U << 20;
	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), -EINVAL);
	a = attr_lv(4, 0);
	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), -EINVAL);
	a = attr_lv(XSCHED_LV3, XSCHED_PRIO_MAX + 1);
	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), -EINVAL);
	a = attr_lv1(0, 0, 1);
	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), -EINVAL);
	a = attr_lv1(0, 4, 5);
	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), -EINVAL);
	a = attr_lv1(0, 128, 4);	/* more than the ring of 64 */
	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), -EINVAL);
	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, 99, NULL), -ENOENT);
	ASSERT_EQ(xsched_xqueue_create(NULL, &mp->plat, h, NULL), -EINVAL);
	/* Nothing stayed bound: a valid create works now. */
	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, NULL), 0);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(create_level_above_platform_is_eopnotsupp)
{
	struct mock_platform *mp = mock_create(false, 2);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_xqueue *xq;
	struct xsched_attr a = attr_lv(XSCHED_LV3, 0);

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), -EOPNOTSUPP);
	mock_destroy(mp);
}

TEST(default_level_is_platform_best)
{
	struct mock_platform *mp = mock_create(false, 2);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_xqueue *xq;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, NULL), 0);
	ASSERT_EQ(xq_info(xq).level, XSCHED_LV2);
	ASSERT_EQ(xq_info(xq).priority, 0);
	ASSERT_EQ(xq_info(xq).threshold, XSCHED_THRESHOLD_DEFAULT);
	ASSERT_EQ(xq_info(xq).batch, XSCHED_BATCH_DEFAULT);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(one_platform_queue_binds_once)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_xqueue *a, *b;

	ASSERT_EQ(xsched_xqueue_create(&a, &mp->plat, h, NULL), 0);
	ASSERT_EQ(xsched_xqueue_create(&b, &mp->plat, h, NULL), -EBUSY);
	ASSERT_EQ(xsched_xqueue_destroy(a), 0);
	mock_destroy(mp);
}

TEST(submit_numbers_commands_from_one)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct mock_cmd c[3] = { cmd_tag(1, NULL, 0), cmd_tag(2, NULL, 0),
				 cmd_tag(3, NULL, 0) };
	struct xsched_xqueue *xq;
	uint64_t seq = 0;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, NULL), 0);
	ASSERT_EQ(xsched_submit(xq, c, 1, &seq), 0);
	ASSERT_EQ(seq, 1);
	ASSERT_EQ(xsched_submit(xq, c, 3, &seq), 0);
	ASSERT_EQ(seq, 4);
	ASSERT_EQ(xsched_submit(xq, c, 0, &seq), -EINVAL);
	ASSERT_EQ(xsched_submit(xq, NULL, 1, &seq), -EINVAL);
	mock_complete(mp, h, 4);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(lv3_submit_reaches_hardware_before_return)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_attr a = attr_lv(XSCHED_LV3, 0);
	struct xsched_xqueue *xq;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), 0);
	submit_n(xq, 0, 40, NULL, 0);
	/* All 40 on the hardware queue, no threshold, no worker thread. */
	ASSERT_EQ(mock_wptr(mp, h), 40);
	ASSERT_TRUE(!xq->worker_running);
	ASSERT_EQ(xq_info(xq).buffered, 0);
	mock_complete(mp, h, 40);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(lv2_submit_reaches_hardware_before_return)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_attr a = attr_lv(XSCHED_LV2, 0);
	struct xsched_xqueue *xq;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), 0);
	submit_n(xq, 0, 20, NULL, 0);
	ASSERT_EQ(mock_wptr(mp, h), 20);
	ASSERT_TRUE(!xq->worker_running);
	mock_complete(mp, h, 20);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(large_submit_is_split_into_platform_chunks)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct mock_cmd c[20];
	struct xsched_xqueue *xq;
	uint64_t seq;
	int i;

	for (i = 0; i < 20; i++)
		c[i] = cmd_tag((uint32_t)i, NULL, 0);
	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, NULL), 0);
	ASSERT_EQ(xsched_submit(xq, c, 20, &seq), 0);
	ASSERT_EQ(seq, 20);
	ASSERT_EQ(mock_wptr(mp, h), 20);
	ASSERT_EQ(mock_q(mp, h)->launch_calls, 3);	/* max_submit is 8 */
	mock_complete(mp, h, 20);
	for (i = 0; i < 20; i++)
		ASSERT_EQ(mp->log[i].tag, i);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(wait_returns_once_command_completed)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_xqueue *xq;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, NULL), 0);
	submit_n(xq, 0, 3, NULL, 0);
	ASSERT_EQ(xsched_wait(xq, 1, 0), -ETIMEDOUT);
	mock_complete(mp, h, 1);
	ASSERT_EQ(xsched_wait(xq, 1, 0), 0);
	ASSERT_EQ(xsched_wait(xq, 2, 1000000), -ETIMEDOUT);
	ASSERT_EQ(xq_info(xq).completed, 1);
	mock_complete(mp, h, 2);
	ASSERT_EQ(xsched_synchronize(xq), 0);
	ASSERT_EQ(xq_info(xq).completed, 3);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(wait_for_unsubmitted_seq_is_einval)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_xqueue *xq;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, NULL), 0);
	ASSERT_EQ(xsched_wait(xq, 1, 0), -EINVAL);
	ASSERT_EQ(xsched_synchronize(xq), 0);	/* nothing submitted */
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(failed_hardware_queue_gives_eio)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_xqueue *xq;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, NULL), 0);
	submit_n(xq, 0, 2, NULL, 0);
	mock_complete(mp, h, 1);
	mock_fail(mp, h);
	ASSERT_EQ(xsched_wait(xq, 1, -1), 0);	/* completed before the failure */
	ASSERT_EQ(xsched_wait(xq, 2, -1), -EIO);
	struct mock_cmd c = cmd_tag(9, NULL, 0);

	ASSERT_EQ(xsched_submit(xq, &c, 1, NULL), -EIO);
	ASSERT_EQ(xq_state(xq), XSCHED_XQ_FAILED);
	ASSERT_EQ(xq_info(xq).last_error, -EIO);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

/* A launch the platform refuses fails the XQueue: nothing more reaches it. */
TEST(failed_launch_fails_the_xqueue)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_xqueue *xq;
	struct mock_cmd c = cmd_tag(1, NULL, 0);
	uint64_t calls;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, NULL), 0);
	mock_q(mp, h)->launch_err = -EIO;
	ASSERT_EQ(xsched_submit(xq, &c, 1, NULL), -EIO);
	ASSERT_EQ(xq_state(xq), XSCHED_XQ_FAILED);
	ASSERT_EQ(xq_info(xq).last_error, -EIO);
	calls = mock_q(mp, h)->launch_calls;
	/* The mock would take it now: the XQueue must not try. */
	ASSERT_EQ(xsched_submit(xq, &c, 1, NULL), -EIO);
	ASSERT_EQ(mock_q(mp, h)->launch_calls, calls);
	ASSERT_EQ(mock_wptr(mp, h), 0);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

static void *complete_later(void *arg)
{
	struct mock_platform *mp = arg;
	int i;

	for (i = 0; i < 100; i++) {
		usleep(1000);
		mock_complete(mp, 0, 2);
	}
	return NULL;
}

TEST(full_ring_submit_waits_for_room)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 4);
	struct xsched_xqueue *xq;
	pthread_t t;
	uint64_t cnt[12] = { 0 };
	int i;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, NULL), 0);
	pthread_create(&t, NULL, complete_later, mp);
	submit_n(xq, 0, 12, cnt, 0);	/* ring of 4: must wait for room */
	ASSERT_EQ(xsched_synchronize(xq), 0);
	pthread_join(t, NULL);
	ASSERT_LE(mock_q(mp, h)->max_in_flight, 4);
	for (i = 0; i < 12; i++)
		ASSERT_EQ(cnt[i], 1);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(user_suspend_lv3_saves_and_resume_restores)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_attr a = attr_lv(XSCHED_LV3, 0);
	struct xsched_xqueue *xq;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), 0);
	ASSERT_EQ(xsched_suspend(xq, 0), 0);
	ASSERT_EQ(mock_state(mp, h), XS_HW_SUSPENDED);
	ASSERT_EQ(mock_q(mp, h)->mode, XS_MODE_SAVE);
	ASSERT_EQ(xq_state(xq), XSCHED_XQ_SUSPENDED);
	ASSERT_EQ(xq_info(xq).hold, XSCHED_HOLD_USER);
	ASSERT_EQ(xsched_resume(xq), 0);
	ASSERT_EQ(mock_state(mp, h), XS_HW_ACTIVE);
	ASSERT_EQ(xq_state(xq), XSCHED_XQ_ACTIVE);
	ASSERT_EQ(xq_info(xq).suspends, 1);
	ASSERT_EQ(xq_info(xq).resumes, 1);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(user_suspend_lv2_drains)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_attr a = attr_lv(XSCHED_LV2, 0);
	struct xsched_xqueue *xq;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), 0);
	ASSERT_EQ(xsched_suspend(xq, XSCHED_SUSPEND_NONBLOCK), 0);
	ASSERT_EQ(mock_q(mp, h)->mode, XS_MODE_DRAIN);
	ASSERT_EQ(xsched_resume(xq), 0);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(suspend_twice_is_ealready_and_resume_unsuspended_is_ealready)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_xqueue *xq;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, NULL), 0);
	ASSERT_EQ(xsched_resume(xq), -EALREADY);
	ASSERT_EQ(xsched_suspend(xq, 0), 0);
	ASSERT_EQ(xsched_suspend(xq, 0), -EALREADY);
	ASSERT_EQ(xsched_suspend(xq, 0x80), -EINVAL);
	ASSERT_EQ(xsched_resume(xq), 0);
	ASSERT_EQ(xsched_resume(xq), -EALREADY);
	ASSERT_EQ(mock_q(mp, h)->suspend_calls, 1);
	ASSERT_EQ(mock_q(mp, h)->resume_calls, 1);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(suspend_refused_by_platform_is_reported_not_held)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_xqueue *xq;
	struct xsched_decision d[4];

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, NULL), 0);
	mock_q(mp, h)->suspend_err = -ETIMEDOUT;
	ASSERT_EQ(xsched_suspend(xq, 0), -ETIMEDOUT);
	ASSERT_EQ(xq_state(xq), XSCHED_XQ_ACTIVE);
	ASSERT_EQ(xq_info(xq).hold, 0);
	ASSERT_EQ(xsched_decisions(d, 4, sizeof(*d)), 1);
	ASSERT_EQ(d[0].action, XSCHED_ACT_SUSPEND);
	ASSERT_EQ(d[0].error, -ETIMEDOUT);
	/* It works the next time. */
	ASSERT_EQ(xsched_suspend(xq, 0), 0);
	ASSERT_EQ(xsched_resume(xq), 0);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(suspended_lv3_queue_still_accepts_launches)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_xqueue *xq;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, NULL), 0);
	ASSERT_EQ(xsched_suspend(xq, 0), 0);
	submit_n(xq, 0, 5, NULL, 0);
	ASSERT_EQ(mock_wptr(mp, h), 5);		/* in the ring, the queue is stopped */
	ASSERT_EQ(mock_complete(mp, h, 5), 0);
	ASSERT_EQ(xsched_resume(xq), 0);
	ASSERT_EQ(mock_complete(mp, h, 5), 5);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(set_level_refused_while_busy_allowed_when_idle)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_xqueue *xq;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, NULL), 0);
	submit_n(xq, 0, 2, NULL, 0);
	ASSERT_EQ(xsched_set_level(xq, XSCHED_LV1), -EBUSY);
	mock_complete(mp, h, 2);
	ASSERT_EQ(xsched_synchronize(xq), 0);
	ASSERT_EQ(xsched_set_level(xq, 7), -EINVAL);
	ASSERT_EQ(xsched_set_level(xq, XSCHED_LV1), 0);
	ASSERT_EQ(xq_info(xq).level, XSCHED_LV1);
	ASSERT_TRUE(xq->worker_running);
	ASSERT_EQ(xsched_set_level(xq, XSCHED_LV_DEFAULT), 0);
	ASSERT_EQ(xq_info(xq).level, XSCHED_LV3);
	ASSERT_TRUE(!xq->worker_running);
	ASSERT_EQ(xsched_suspend(xq, 0), 0);
	ASSERT_EQ(xsched_set_level(xq, XSCHED_LV2), -EBUSY);
	ASSERT_EQ(xsched_resume(xq), 0);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(set_level_above_platform_is_eopnotsupp)
{
	struct mock_platform *mp = mock_create(false, 1);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_xqueue *xq;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, NULL), 0);
	ASSERT_EQ(xq_info(xq).level, XSCHED_LV1);
	ASSERT_EQ(xsched_set_level(xq, XSCHED_LV2), -EOPNOTSUPP);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(set_priority_validates_range)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_xqueue *xq;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, NULL), 0);
	ASSERT_EQ(xsched_set_priority(xq, 101), -EINVAL);
	ASSERT_EQ(xsched_set_priority(xq, -101), -EINVAL);
	ASSERT_EQ(xsched_set_priority(xq, 7), 0);
	ASSERT_EQ(xq_info(xq).priority, 7);
	ASSERT_EQ(mock_q(mp, h)->priority, 7);	/* told to the platform too */
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(query_counts_submitted_launched_completed)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_xqueue *xq;
	struct xsched_xq_info i;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, NULL), 0);
	submit_n(xq, 0, 6, NULL, 0);
	mock_complete(mp, h, 4);
	ASSERT_EQ(xsched_wait(xq, 4, -1), 0);
	i = xq_info(xq);
	ASSERT_EQ(i.submitted, 6);
	ASSERT_EQ(i.launched, 6);
	ASSERT_EQ(i.completed, 4);
	ASSERT_EQ(i.buffered, 0);
	ASSERT_NE(i.id, 0);
	ASSERT_EQ(i.id, xsched_xqueue_id(xq));
	ASSERT_EQ(xsched_query(xq, NULL, sizeof(struct xsched_xq_info)), -EINVAL);
	mock_complete(mp, h, 2);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(destroy_waits_for_all_submitted_work)
{
	struct mock_platform *mp = mock_create(true, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_xqueue *xq;
	uint64_t cnt[30] = { 0 };
	int i;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, NULL), 0);
	submit_n(xq, 0, 30, cnt, 100000);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	for (i = 0; i < 30; i++)
		ASSERT_EQ(cnt[i], 1);
	mock_destroy(mp);
}

TEST(destroy_of_user_suspended_queue_resumes_and_finishes_it)
{
	struct mock_platform *mp = mock_create(true, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_xqueue *xq;
	uint64_t cnt[4] = { 0 };
	int i;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, NULL), 0);
	ASSERT_EQ(xsched_suspend(xq, 0), 0);
	submit_n(xq, 0, 4, cnt, 10000);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(cnt[i], 1);
	ASSERT_EQ(mock_state(mp, h), XS_HW_ACTIVE);
	mock_destroy(mp);
}

TEST(save_suspend_keeps_progress_of_running_command)
{
	struct mock_platform *mp = mock_create(true, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_attr a = attr_lv(XSCHED_LV3, 0);
	struct xsched_xqueue *xq;
	uint64_t cnt = 0, left;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), 0);
	/* Long enough that no stall of this thread lets it finish; started
	 * for sure before the suspend (a fixed sleep was not, on a loaded
	 * machine); cut short once the save is seen. */
	submit_n(xq, 0, 1, &cnt, 60000000000ULL);	/* 60 s */
	ASSERT_TRUE(WAIT_UNTIL(mock_started(mp, h), 2000));
	ASSERT_EQ(xsched_suspend(xq, 0), 0);	/* blocking: stopped on return */
	ASSERT_EQ(mock_state(mp, h), XS_HW_SUSPENDED);
	ASSERT_EQ(mock_q(mp, h)->saves_partway, 1);
	ASSERT_EQ(cnt, 0);
	/* The progress is kept: neither none nor all of it is left. */
	left = mock_cut_short(mp, h);
	ASSERT_TRUE(left > 0 && left < 60000000000ULL);
	ASSERT_EQ(xsched_resume(xq), 0);
	ASSERT_EQ(xsched_synchronize(xq), 0);
	ASSERT_EQ(cnt, 1);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}
