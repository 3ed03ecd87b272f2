// SPDX-License-Identifier: MIT
/*
 * Refused platform calls and threads that meet: what the library keeps when a
 * suspend or launch is refused, and when creates, destroys and submits race.
 */
#include <dirent.h>
#include <stdatomic.h>

#include "util.h"

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	ASSERT_TRUE(d != NULL);
	while ((e = readdir(d)))
		n++;
	closedir(d);
	return n;
}

static struct mock_platform *churn_mp;
static atomic_int churn_stop;

static void *churn(void *arg)
{
	uint32_t h = (uint32_t)(uintptr_t)arg;
	int i;

	for (i = 0; i < 300 && !atomic_load(&churn_stop); i++) {
		struct xsched_xqueue *xq;
		struct xsched_attr a = attr_lv(XSCHED_LV3, (int32_t)h);

		ASSERT_EQ(xsched_xqueue_create(&xq, &churn_mp->plat, h, &a), 0);
		ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	}
	return NULL;
}

/* Destroying the last XQueue while another thread creates one returns (each
 * monitor has its own exit flag) and leaves no eventfd behind. */
TEST(destroy_while_another_thread_creates_neither_blocks_nor_leaks)
{
	pthread_t t[2];
	int fds0, i;

	churn_mp = mock_create(false, 3);
	mock_queue_create(churn_mp, 64);
	mock_queue_create(churn_mp, 64);
	fds0 = count_fds();
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)i);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	ASSERT_EQ(xs_sched_count(), 0);
	ASSERT_EQ(count_fds(), fds0);
	mock_destroy(churn_mp);
}

/* A policy suspend refused with EAGAIN (module reset, busy arbiter pass) is
 * retried: a queue marked held is never left running. */
TEST(policy_suspend_refused_with_eagain_is_retried)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t hl = mock_queue_create(mp, 64), hh = mock_queue_create(mp, 64);
	struct xsched_attr al = attr_lv(XSCHED_LV3, 0), ah = attr_lv(XSCHED_LV3, 5);
	struct xsched_xqueue *lo, *hi;

	ASSERT_EQ(xsched_xqueue_create(&lo, &mp->plat, hl, &al), 0);
	ASSERT_EQ(xsched_xqueue_create(&hi, &mp->plat, hh, &ah), 0);
	submit_n(lo, 0, 2, NULL, 0);
	mock_q(mp, hl)->suspend_err = -EAGAIN;
	submit_n(hi, 0, 1, NULL, 0);
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, hl) == XS_HW_SUSPENDED, 2000));
	ASSERT_EQ(xq_state(lo), XSCHED_XQ_SUSPENDED);
	mock_complete(mp, hh, 1);
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, hl) == XS_HW_ACTIVE, 2000));
	mock_complete(mp, hl, 2);
	ASSERT_EQ(xsched_xqueue_destroy(hi), 0);
	ASSERT_EQ(xsched_xqueue_destroy(lo), 0);
	mock_destroy(mp);
}

static void *destroy_thread(void *arg)
{
	return (void *)(intptr_t)xsched_xqueue_destroy(arg);
}

/* Destroying a queue the policy holds resumes it and returns while the higher
 * queue is still busy, as xsched.h says. */
TEST(destroying_a_held_queue_does_not_wait_for_the_higher_one)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t hl = mock_queue_create(mp, 64), hh = mock_queue_create(mp, 64);
	struct xsched_attr al = attr_lv(XSCHED_LV3, 0), ah = attr_lv(XSCHED_LV3, 5);
	struct xsched_xqueue *lo, *hi;
	pthread_t t;
	void *ret;

	ASSERT_EQ(xsched_xqueue_create(&lo, &mp->plat, hl, &al), 0);
	ASSERT_EQ(xsched_xqueue_create(&hi, &mp->plat, hh, &ah), 0);
	submit_n(lo, 0, 2, NULL, 0);
	submit_n(hi, 0, 1, NULL, 0);	/* never completes during the destroy */
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, hl) == XS_HW_SUSPENDED, 2000));
	pthread_create(&t, NULL, destroy_thread, lo);
	ASSERT_TRUE(WAIT_UNTIL(mock_state(mp, hl) == XS_HW_ACTIVE, 2000));
	mock_complete(mp, hl, 2);
	pthread_join(t, &ret);
	ASSERT_EQ((intptr_t)ret, 0);
	/* It blocks nobody on its way out either. */
	ASSERT_EQ(mock_state(mp, hh), XS_HW_ACTIVE);
	mock_complete(mp, hh, 1);
	ASSERT_EQ(xsched_xqueue_destroy(hi), 0);
	mock_destroy(mp);
}

struct batch_arg {
	struct xsched_xqueue *xq;
	uint32_t base;
};

static void *submit_batches(void *arg)
{
	struct batch_arg *b = arg;
	struct mock_cmd c[8];
	int r, i;

	for (r = 0; r < 20; r++) {
		for (i = 0; i < 8; i++)
			c[i] = cmd_tag(b->base + (uint32_t)(r * 8 + i), NULL, 20000);
		ASSERT_EQ(xsched_submit(b->xq, c, 8, NULL), 0);
	}
	return NULL;
}

/* A multi-command submit that waits for ring room reaches the ring as one
 * run: another thread's submit never lands between its commands. */
TEST(multi_command_submit_is_atomic)
{
	struct mock_platform *mp = mock_create(true, 3);
	uint32_t h = mock_queue_create(mp, 4);
	struct xsched_attr a = attr_lv(XSCHED_LV3, 0);
	struct batch_arg b[2];
	struct xsched_xqueue *xq;
	pthread_t t[2];
	uint32_t i, k;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), 0);
	for (i = 0; i < 2; i++) {
		b[i].xq = xq;
		b[i].base = i * 1000;
		pthread_create(&t[i], NULL, submit_batches, &b[i]);
	}
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	ASSERT_EQ(xsched_synchronize(xq), 0);
	ASSERT_EQ(mp->nlog, 320);
	for (i = 0; i < 320; i += 8)
		for (k = 1; k < 8; k++)
			ASSERT_EQ(mp->log[i + k].tag, mp->log[i].tag + k);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

/* A launch refused for a passing reason (-EBUSY) fails that submit and is
 * recorded, the XQueue stays usable; -EIO fails the XQueue. */
TEST(transient_launch_error_is_not_fatal)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_xqueue *xq;
	struct mock_cmd c = cmd_tag(1, NULL, 0);

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, NULL), 0);
	mock_q(mp, h)->launch_err = -EBUSY;
	ASSERT_EQ(xsched_submit(xq, &c, 1, NULL), -EBUSY);
	ASSERT_EQ(xq_state(xq), XSCHED_XQ_ACTIVE);
	ASSERT_EQ(xq_info(xq).last_error, -EBUSY);
	ASSERT_EQ(xsched_submit(xq, &c, 1, NULL), 0);
	mock_complete(mp, h, 1);
	ASSERT_EQ(xsched_synchronize(xq), 0);
	/* -EIO still is the end. */
	mock_q(mp, h)->launch_err = -EIO;
	ASSERT_EQ(xsched_submit(xq, &c, 1, NULL), -EIO);
	ASSERT_EQ(xq_state(xq), XSCHED_XQ_FAILED);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

/* After a launch refused with EAGAIN and nothing in flight, the Lv1 worker
 * retries by itself: buffered commands do not wait for the next submit. */
TEST(lv1_worker_retries_after_eagain_with_nothing_in_flight)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_attr a = attr_lv1(0, 2, 1);
	struct xsched_xqueue *xq;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), 0);
	ASSERT_EQ(xsched_suspend(xq, 0), 0);
	submit_n(xq, 0, 3, NULL, 0);
	ASSERT_EQ(mock_wptr(mp, h), 0);
	mock_q(mp, h)->launch_err = -EAGAIN;
	ASSERT_EQ(xsched_resume(xq), 0);
	ASSERT_TRUE(WAIT_UNTIL(mock_wptr(mp, h) == 2, 2000));
	while (mock_rptr(mp, h) < 3) {
		mock_complete(mp, h, 1);
		usleep(500);
	}
	ASSERT_EQ(xsched_synchronize(xq), 0);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

/* The Lv1 worker refills as soon as there is room for what is buffered, not
 * at multiples of batch: one buffered command goes out after one completion. */
TEST(lv1_refills_as_soon_as_there_is_room_for_what_is_buffered)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_attr a = attr_lv1(0, 8, 4);
	struct xsched_xqueue *xq;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), 0);
	submit_n(xq, 0, 9, NULL, 0);
	ASSERT_EQ(mock_wptr(mp, h), 8);
	mock_complete(mp, h, 1);
	ASSERT_TRUE(WAIT_UNTIL(mock_wptr(mp, h) == 9, 2000));
	mock_complete(mp, h, 8);
	ASSERT_EQ(xsched_synchronize(xq), 0);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

/* destroy() returns only once the monitor (which polls a busy queue that
 * holds others) dropped its reference: the hardware queue is unbound and
 * can be bound again at once, with no -EBUSY. */
TEST(destroy_releases_the_hardware_queue_before_returning)
{
	struct mock_platform *mp = mock_create(true, 3);
	uint32_t hl = mock_queue_create(mp, 64), hh = mock_queue_create(mp, 64);
	struct xsched_attr al = attr_lv(XSCHED_LV3, 0), ah = attr_lv(XSCHED_LV3, 5);
	struct xsched_xqueue *lo, *hi;
	int i;

	ASSERT_EQ(xsched_xqueue_create(&lo, &mp->plat, hl, &al), 0);
	for (i = 0; i < 50; i++) {
		ASSERT_EQ(xsched_xqueue_create(&hi, &mp->plat, hh, &ah), 0);
		submit_n(lo, 0, 1, NULL, 0);
		/* Busy with a lower one held: the monitor polls it. */
		submit_n(hi, 0, 2, NULL, 200000);
		ASSERT_EQ(xsched_xqueue_destroy(hi), 0);
	}
	ASSERT_EQ(xsched_xqueue_destroy(lo), 0);
	mock_destroy(mp);
}
