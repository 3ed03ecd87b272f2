// SPDX-License-Identifier: MIT
/* Lv1: progressive launching on the mock platform. */
#include "util.h"

TEST(lv1_launches_directly_while_under_threshold)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_attr a = attr_lv1(0, 4, 2);
	struct xsched_xqueue *xq;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), 0);
	ASSERT_TRUE(xq->worker_running);
	submit_n(xq, 0, 3, NULL, 0);
	ASSERT_EQ(mock_wptr(mp, h), 3);
	ASSERT_EQ(xq_info(xq).buffered, 0);
	mock_complete(mp, h, 3);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(lv1_keeps_at_most_threshold_in_flight)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_attr a = attr_lv1(0, 4, 2);
	struct xsched_xqueue *xq;
	int round;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), 0);
	submit_n(xq, 0, 20, NULL, 0);
	ASSERT_EQ(mock_wptr(mp, h), 4);
	ASSERT_EQ(xq_info(xq).buffered, 16);
	for (round = 0; round < 30 && mock_rptr(mp, h) < 20; round++) {
		mock_complete(mp, h, 1);
		usleep(2000);
		ASSERT_LE(mock_wptr(mp, h) - mock_rptr(mp, h), 4);
	}
	ASSERT_EQ(xsched_synchronize(xq), 0);
	ASSERT_EQ(mock_q(mp, h)->max_in_flight, 4);
	ASSERT_EQ(xq_info(xq).max_in_flight, 4);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(lv1_refills_a_batch_at_a_time_when_backlogged)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_attr a = attr_lv1(0, 8, 4);
	struct xsched_xqueue *xq;
	struct mock_cmd c[20];
	int i;

	for (i = 0; i < 20; i++)
		c[i] = cmd_tag((uint32_t)i, NULL, 0);
	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), 0);
	/* One submit: the worker sees a backlog of 20 at once. */
	ASSERT_EQ(xsched_submit(xq, c, 20, NULL), 0);
	ASSERT_TRUE(WAIT_UNTIL(mock_wptr(mp, h) == 8, 2000));
	ASSERT_EQ(mock_wptr(mp, h), 8);
	/* Three completions: the first sync point (command 4) is not reached. */
	mock_complete(mp, h, 3);
	usleep(20000);
	ASSERT_EQ(mock_wptr(mp, h), 8);
	/* The fourth reaches it: four more are launched. */
	mock_complete(mp, h, 1);
	ASSERT_TRUE(WAIT_UNTIL(mock_wptr(mp, h) == 12, 2000));
	usleep(5000);
	ASSERT_EQ(mock_wptr(mp, h), 12);
	mock_complete(mp, h, 100);
	while (mock_rptr(mp, h) < 20) {
		usleep(1000);
		mock_complete(mp, h, 100);
	}
	ASSERT_EQ(xsched_synchronize(xq), 0);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(lv1_suspend_stops_launching_resume_continues)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_attr a = attr_lv1(0, 4, 1);
	struct xsched_xqueue *xq;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), 0);
	submit_n(xq, 0, 10, NULL, 0);
	ASSERT_EQ(mock_wptr(mp, h), 4);
	ASSERT_EQ(xsched_suspend(xq, 0), 0);
	/* Lv1 does not touch the hardware queue: in-flight work finishes. */
	ASSERT_EQ(mock_q(mp, h)->suspend_calls, 0);
	ASSERT_EQ(mock_complete(mp, h, 4), 4);
	usleep(20000);
	ASSERT_EQ(mock_wptr(mp, h), 4);
	submit_n(xq, 10, 2, NULL, 0);	/* buffered while suspended */
	ASSERT_EQ(mock_wptr(mp, h), 4);
	ASSERT_EQ(xq_info(xq).buffered, 8);
	ASSERT_EQ(xsched_resume(xq), 0);
	ASSERT_TRUE(WAIT_UNTIL(mock_wptr(mp, h) == 8, 2000));
	while (mock_rptr(mp, h) < 12) {
		mock_complete(mp, h, 1);
		usleep(500);
	}
	ASSERT_EQ(xsched_synchronize(xq), 0);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(lv1_wait_covers_buffered_commands)
{
	struct mock_platform *mp = mock_create(true, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_attr a = attr_lv1(0, 2, 1);
	struct xsched_xqueue *xq;
	uint64_t cnt[10] = { 0 };

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), 0);
	submit_n(xq, 0, 10, cnt, 200000);
	ASSERT_GE(xq_info(xq).buffered, 7);
	ASSERT_EQ(xsched_wait(xq, 10, -1), 0);
	ASSERT_EQ(cnt[9], 1);
	ASSERT_EQ(xq_info(xq).completed, 10);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(lv1_wait_times_out_on_buffered_command)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_attr a = attr_lv1(0, 2, 1);
	struct xsched_xqueue *xq;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), 0);
	submit_n(xq, 0, 5, NULL, 0);
	ASSERT_EQ(xsched_wait(xq, 5, 2000000), -ETIMEDOUT);
	while (mock_rptr(mp, h) < 5) {
		mock_complete(mp, h, 1);
		usleep(500);
	}
	ASSERT_EQ(xsched_wait(xq, 5, -1), 0);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(lv1_runs_every_command_once_in_order)
{
	struct mock_platform *mp = mock_create(true, 3);
	uint32_t h = mock_queue_create(mp, 16);
	struct xsched_attr a = attr_lv1(0, 3, 2);
	struct xsched_xqueue *xq;
	static uint64_t cnt[500];
	uint32_t i;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), 0);
	submit_n(xq, 0, 500, cnt, 1000);
	ASSERT_EQ(xsched_synchronize(xq), 0);
	for (i = 0; i < 500; i++) {
		ASSERT_EQ(cnt[i], 1);
		ASSERT_EQ(mp->log[i].tag, i);
	}
	ASSERT_LE(mock_q(mp, h)->max_in_flight, 3);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(lv1_set_lv1_validates_and_raising_threshold_launches_more)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_attr a = attr_lv1(0, 2, 1);
	struct xsched_xqueue *xq;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), 0);
	ASSERT_EQ(xsched_set_lv1(xq, 0, 1), -EINVAL);
	ASSERT_EQ(xsched_set_lv1(xq, 4, 5), -EINVAL);
	ASSERT_EQ(xsched_set_lv1(xq, 65, 1), -EINVAL);	/* ring is 64 */
	ASSERT_EQ(xsched_set_lv1(xq, 4, 0), -EINVAL);
	submit_n(xq, 0, 10, NULL, 0);
	ASSERT_EQ(mock_wptr(mp, h), 2);
	ASSERT_EQ(xsched_set_lv1(xq, 6, 3), 0);
	ASSERT_TRUE(WAIT_UNTIL(mock_wptr(mp, h) == 6, 2000));
	ASSERT_EQ(xq_info(xq).threshold, 6);
	ASSERT_EQ(xq_info(xq).batch, 3);
	while (mock_rptr(mp, h) < 10) {
		mock_complete(mp, h, 1);
		usleep(500);
	}
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(lv1_commands_buffered_while_suspended_survive_destroy)
{
	struct mock_platform *mp = mock_create(true, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_attr a = attr_lv1(0, 2, 1);
	struct xsched_xqueue *xq;
	uint64_t cnt[6] = { 0 };
	int i;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), 0);
	ASSERT_EQ(xsched_suspend(xq, 0), 0);
	submit_n(xq, 0, 6, cnt, 1000);
	ASSERT_EQ(mock_wptr(mp, h), 0);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	for (i = 0; i < 6; i++)
		ASSERT_EQ(cnt[i], 1);
	mock_destroy(mp);
}
