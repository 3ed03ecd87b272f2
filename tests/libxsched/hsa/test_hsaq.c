// SPDX-License-Identifier: MIT
/*
 * hip/hsaq.c (Lv3 on ROCm: the HSA queue behind each stream) against the fake
 * HSA runtime (fake_hsa.c, a libhsa-runtime64.so.1 of its own) and the fake GPU
 * runtime of the core's tests (streams).  The hooks under test are the ones
 * this program links (hsa_queue_create/destroy); their real functions are the
 * fake library's, found as on ROCm (RTLD_NEXT, node ROCR_1).  Preemptors come
 * from the mock platform: one mock queue per ring.
 */
#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_rt.h"
#include "../unit/util.h"
#include "../../../libxsched/src/interpose/hip/hsaq.h"
#include "fake_hsa.h"

static struct mock_platform *mp;
static struct {
	struct xsched_xqueue *xq;
	uint64_t ring;
	uint32_t mock;
} att[16];
static unsigned int natt;

static int mock_attach(struct xsched_xqueue *xq, uint64_t ring, const char **via)
{
	uint32_t id = mock_queue_create(mp, 64);

	*via = "the mock";
	att[natt].xq = xq;
	att[natt].ring = ring;
	att[natt].mock = id;
	natt++;
	return xsched_set_preemptor(xq, &mp->plat, id);
}

static void setup(void)
{
	fake_auto = true;
	fake_init();
	mp = mock_create(false, XSCHED_LV3);
	xs_hsaq_set_attach(mock_attach);
}

static void teardown(void)
{
	xs_hsaq_settle();
	xsi_runtime_fini(&fake_rt);
	mock_destroy(mp);
}

static hsa_queue_t *queue_new(void)
{
	hsa_agent_t agent = { 1 };
	hsa_queue_t *q = NULL;

	ASSERT_EQ(hsa_queue_create(agent, 256, HSA_QUEUE_TYPE_MULTI, NULL, NULL,
				   UINT32_MAX, UINT32_MAX, &q), HSA_STATUS_SUCCESS);
	ASSERT_TRUE(q != NULL);
	return q;
}

static struct xsi_stream *stream_new(int32_t prio)
{
	struct fake_stream *f = fake_stream_new(prio, 0);
	struct xsi_stream *s = xsi_stream_get(&fake_rt, (uintptr_t)f, 0);

	ASSERT_TRUE(s != NULL);
	return s;
}

/* One observed launch on @s that writes @n packets into each of @qs. */
static void launch(struct xsi_stream *s, hsa_queue_t *a, hsa_queue_t *b)
{
	xsi_hip_launch_observe_begin(s);
	if (a)
		fake_hsa_dispatch(a, 1);
	if (b)
		fake_hsa_dispatch(b, 1);
	xsi_hip_launch_observe_end(s);
}

static struct xs_hsaq_stream_info info(struct xsi_stream *s)
{
	struct xs_hsaq_stream_info i;

	ASSERT_EQ(xs_hsaq_stream_info(s, &i), 0);
	return i;
}

static uint64_t ring(hsa_queue_t *q)
{
	return (uint64_t)(uintptr_t)q->base_address;
}

TEST(hsaq_two_streams_on_two_queues_get_lv3_on_their_own_rings)
{
	struct xsi_stream *a, *b;
	hsa_queue_t *qa, *qb;
	struct xsched_xq_info xi;
	unsigned int i;

	setup();
	qa = queue_new();
	qb = queue_new();
	a = stream_new(0);
	b = stream_new(5);
	launch(a, qa, NULL);
	launch(b, qb, NULL);
	ASSERT_EQ(info(a).ring, ring(qa));
	ASSERT_EQ(info(a).queue_id, qa->id);
	ASSERT_EQ(info(b).ring, ring(qb));
	ASSERT_EQ(info(a).sharers, 1);
	xs_hsaq_settle();
	ASSERT_EQ(natt, 2);
	for (i = 0; i < natt; i++) {
		bool is_a = att[i].xq == xsi_stream_xqueue(a);

		ASSERT_TRUE(is_a || att[i].xq == xsi_stream_xqueue(b));
		ASSERT_EQ(att[i].ring, ring(is_a ? qa : qb));
	}
	ASSERT_TRUE(info(a).preempted);
	ASSERT_EQ(info(a).level, XSCHED_LV3);
	ASSERT_EQ(xsched_query(xsi_stream_xqueue(b), &xi, sizeof(xi)), 0);
	ASSERT_EQ(xi.level, XSCHED_LV3);
	ASSERT_EQ(xs_hsaq_shared_line()[0], 0);
	/* once known, more launches change nothing */
	launch(a, qa, qb);
	ASSERT_EQ(info(a).ring, ring(qa));
	teardown();
}

TEST(hsaq_lv3_stream_is_suspended_with_save_for_a_higher_priority_one)
{
	struct xsi_stream *lo, *hi;
	hsa_queue_t *ql, *qh;
	struct mock_queue *m;
	unsigned int i;

	setup();
	ql = queue_new();
	qh = queue_new();
	lo = stream_new(0);
	hi = stream_new(5);
	launch(lo, ql, NULL);
	launch(hi, qh, NULL);
	xs_hsaq_settle();
	ASSERT_EQ(info(lo).level, XSCHED_LV3);
	for (i = 0; i < natt && att[i].xq != xsi_stream_xqueue(lo); i++)
		;
	ASSERT_TRUE(i < natt);
	m = mock_q(mp, att[i].mock);
	/* both busy: the policy stops the low one's hardware queue with SAVE */
	fake_auto = false;
	ASSERT_EQ(fakeLaunch(xsi_stream_handle(lo), 1), 0);
	ASSERT_EQ(fakeLaunch(xsi_stream_handle(hi), 2), 0);
	ASSERT_TRUE(WAIT_UNTIL(m->suspend_calls >= 1, 2000));
	ASSERT_EQ(m->mode, XS_MODE_SAVE);
	/* the high one completes: the low one is resumed */
	fake_complete((struct fake_stream *)xsi_stream_handle(hi), 100);
	ASSERT_TRUE(WAIT_UNTIL(m->resume_calls >= 1, 2000));
	fake_complete((struct fake_stream *)xsi_stream_handle(lo), 100);
	teardown();
}

TEST(hsaq_streams_sharing_a_queue_stay_at_lv1_and_are_reported)
{
	struct xsi_stream *a, *b;
	hsa_queue_t *q;
	char want[64];

	setup();
	q = queue_new();
	a = stream_new(0);
	b = stream_new(7);
	launch(a, q, NULL);
	xs_hsaq_settle();
	ASSERT_EQ(info(a).level, XSCHED_LV3);	/* alone so far */
	launch(b, q, NULL);
	ASSERT_EQ(info(b).ring, ring(q));
	ASSERT_EQ(info(a).sharers, 2);
	snprintf(want, sizeof(want), "stream %#lx", (unsigned long)xsi_stream_handle(a));
	ASSERT_TRUE(strstr(xs_hsaq_shared_line(), want) != NULL);
	snprintf(want, sizeof(want), "stream %#lx", (unsigned long)xsi_stream_handle(b));
	ASSERT_TRUE(strstr(xs_hsaq_shared_line(), want) != NULL);
	ASSERT_TRUE(strstr(xs_hsaq_shared_line(), "DIFFERENT PRIORITIES") != NULL);
	/* a's next launch takes it back to Lv1; b never got a preemptor */
	launch(a, q, NULL);
	xs_hsaq_settle();
	ASSERT_EQ(info(a).level, XSCHED_LV1);
	ASSERT_TRUE(!info(b).preempted);
	ASSERT_EQ(natt, 1);
	teardown();
}

TEST(hsaq_ambiguous_launches_are_retried)
{
	struct xsi_stream *a;
	hsa_queue_t *q1, *q2;

	setup();
	q1 = queue_new();
	q2 = queue_new();
	a = stream_new(0);
	launch(a, q1, q2);		/* two queues moved */
	ASSERT_EQ(info(a).ring, 0);
	ASSERT_EQ(info(a).tries, 1);
	launch(a, NULL, NULL);		/* none moved */
	ASSERT_EQ(info(a).ring, 0);
	ASSERT_EQ(info(a).tries, 2);
	launch(a, q2, NULL);
	ASSERT_EQ(info(a).ring, ring(q2));
	teardown();
}

static pthread_barrier_t bar;

static void *other_launch(void *arg)
{
	struct xsi_stream *s = arg;

	xsi_hip_launch_observe_begin(s);
	pthread_barrier_wait(&bar);	/* inside the window */
	pthread_barrier_wait(&bar);	/* the other launch is done */
	xsi_hip_launch_observe_end(s);
	return NULL;
}

TEST(hsaq_overlapping_launch_on_another_thread_is_not_trusted)
{
	struct xsi_stream *a, *b;
	hsa_queue_t *q1, *q2;
	pthread_t t;

	setup();
	q1 = queue_new();
	q2 = queue_new();
	a = stream_new(0);
	b = stream_new(0);
	pthread_barrier_init(&bar, NULL, 2);
	ASSERT_EQ(pthread_create(&t, NULL, other_launch, b), 0);
	pthread_barrier_wait(&bar);
	/* only q1 moves in our window, but b's launch is open: it may be b's */
	launch(a, q1, NULL);
	pthread_barrier_wait(&bar);
	pthread_join(t, NULL);
	ASSERT_EQ(info(a).ring, 0);
	ASSERT_EQ(info(a).tries, 1);
	launch(a, q1, NULL);
	ASSERT_EQ(info(a).ring, ring(q1));
	(void)q2;
	pthread_barrier_destroy(&bar);
	teardown();
}

TEST(hsaq_gives_up_after_the_last_try)
{
	struct xsi_stream *a;
	hsa_queue_t *q;
	unsigned int i;

	setup();
	q = queue_new();
	a = stream_new(0);
	for (i = 0; i < XS_HSAQ_TRIES; i++)
		launch(a, NULL, NULL);
	ASSERT_TRUE(info(a).gave_up);
	launch(a, q, NULL);
	ASSERT_EQ(info(a).ring, 0);
	teardown();
}

TEST(hsaq_destroyed_queue_ring_reused_by_a_new_queue)
{
	struct xsi_stream *a, *c;
	hsa_queue_t *q1, *q3;
	uint64_t r1, id1;

	setup();
	q1 = queue_new();
	a = stream_new(0);
	launch(a, q1, NULL);
	r1 = ring(q1);
	id1 = q1->id;
	ASSERT_EQ(info(a).ring, r1);
	ASSERT_EQ(hsa_queue_destroy(q1), HSA_STATUS_SUCCESS);
	ASSERT_EQ(info(a).ring, 0);	/* its queue is gone */
	q3 = queue_new();
	ASSERT_EQ(ring(q3), r1);	/* the same ring memory again */
	ASSERT_NE(q3->id, id1);
	c = stream_new(0);
	launch(c, q3, NULL);
	ASSERT_EQ(info(c).ring, r1);
	ASSERT_EQ(info(c).queue_id, q3->id);
	ASSERT_EQ(info(c).sharers, 1);	/* not shared with a's old queue */
	ASSERT_EQ(fake_hsa_live(), 1);
	teardown();
}

/* The child's verdict on a fork test: 0 passed, else the failed step (an
 * ASSERT in the child exits 1). */
static int child_lv3_again(const struct xsi_stream *parents)
{
	struct xs_hsaq_stream_info pi;
	struct xsi_stream *c;
	hsa_queue_t *qc;

	/* A stale table hangs the settle below: the alarm makes that a failure. */
	alarm(10);
	/* The parent's stream and its queue are not the child's. */
	if (!xs_hsaq_stream_info(parents, &pi) && pi.ring)
		return 2;
	qc = queue_new();
	c = stream_new(0);
	launch(c, qc, NULL);
	xs_hsaq_settle();
	if (info(c).ring != ring(qc))
		return 3;
	if (info(c).level != XSCHED_LV3)
		return 4;
	return 0;
}

/*
 * fork() after a stream got its queue and the helper thread ran: the child
 * has no helper thread and none of the parent's queues, yet its own new
 * stream on its own new queue must reach Lv3 (before the fix: the job waited
 * for a helper that the child does not have, and the settle never returned).
 */
TEST(hsaq_fork_child_starts_empty_and_reaches_lv3)
{
	struct xsi_stream *a;
	hsa_queue_t *qa;
	int status;
	pid_t pid;

	setup();
	qa = queue_new();
	a = stream_new(0);
	launch(a, qa, NULL);
	xs_hsaq_settle();
	ASSERT_EQ(info(a).level, XSCHED_LV3);
	fflush(NULL);
	pid = fork();
	ASSERT_TRUE(pid >= 0);
	if (!pid)
		_exit(child_lv3_again(a));
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		xt_fail(__FILE__, __LINE__, "the child died of signal %d (SIGALRM: a hang)",
			WTERMSIG(status));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	/* the parent's own state is untouched */
	ASSERT_EQ(info(a).ring, ring(qa));
	teardown();
}
