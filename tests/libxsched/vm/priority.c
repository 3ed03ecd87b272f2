// SPDX-License-Identifier: MIT
/*
 * Two XQueues of different priority in one process, on the sim GPU: the
 * urgent one must overtake work the batch one already gave the GPU, at each
 * level in the way that level can.
 *
 * The sim fills free wave slots round robin across queues, so an urgent
 * kernel gets some of the GPU whatever the policy does.  Each test therefore
 * asserts what only a held batch queue produces, read from the hardware
 * (the kernels' step marks in device memory, the module's suspend counts)
 * and never from the library's own bookkeeping, and runs the same shape once
 * without a policy (both XQueues at priority 0) to show that the shape tells
 * the two apart.  Only orderings, counts and ratios measured in one run are
 * asserted, never absolute times.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "vm_test.h"

#define MS 1000000ULL
#define URG_PRIO 10
#define POLL_US 1000

static bool decided(uint32_t queue, uint32_t action, uint32_t reason, uint32_t other)
{
	struct xsched_decision d[64];
	int n = xsched_decisions(d, 64, sizeof(*d)), i;

	for (i = 0; i < n; i++)
		if (d[i].queue == queue && d[i].action == action &&
		    d[i].reason == reason && (!other || d[i].other == other))
			return true;
	return false;
}

/* Workgroups of a kernel that have executed all their @steps, by their marks. */
static uint32_t wgs_done(const uint64_t *dst, uint32_t grid, uint32_t steps)
{
	return vm_marks_between(dst, grid, steps, steps);
}

/* Waits (at most 10 s) until @n workgroups of a kernel have started. */
static int wait_started(const uint64_t *dst, uint32_t grid, uint32_t steps, uint32_t n)
{
	uint64_t t0 = vm_now_ns();

	while (vm_marks_between(dst, grid, 1, steps) < n) {
		if (vm_now_ns() - t0 > 10000 * MS)
			return -ETIMEDOUT;
		usleep(POLL_US);
	}
	return 0;
}

/* What one run of a shape saw. */
struct seen {
	uint64_t lat_ns;		/* urgent kernel, submit to completion */
	uint32_t batch_wgs_done;	/* Lv3: batch workgroups finished by then */
	bool every_slot;		/* Lv2: the urgent kernel held every slot at once */
	bool batch_frozen;		/* Lv2: ... and the batch ran no step meanwhile */
	uint32_t batch_partial;		/* Lv2: batch workgroups halfway meanwhile */
	uint32_t kernels_started;	/* Lv1: batch kernels started while urgent ran */
	struct xsched_xq_info batch;	/* at the end */
	bool suspend_decision, resume_decision;
};

/*
 * Lv3: every wave slot holds a workgroup of a 200 ms batch kernel (100 steps
 * of 2 ms) when a one-workgroup urgent kernel of 2.5 ms arrives.  Without a
 * policy it needs a free slot, so a batch workgroup finishes first; with it
 * the batch waves are saved mid-kernel and none finishes before it.
 */
static void lv3_shape(struct __test_metadata *_metadata,
		      struct vm_env *env, int32_t uprio, struct seen *s)
{
	struct xsched_attr ab = vm_attr(XSCHED_LV3, 0), au = vm_attr(XSCHED_LV3, uprio);
	struct xsched_xqueue *batch, *urg;
	struct xsched_sim_packet p;
	struct vm_buf bb, ub;
	uint64_t t0, seq;

	memset(s, 0, sizeof(*s));
	ASSERT_EQ(0, vm_buf_alloc(env, &bb, vm_words(env->slots)));
	ASSERT_EQ(0, vm_buf_alloc(env, &ub, vm_words(1)));
	ASSERT_EQ(0, vm_new_xq(env, &batch, &ab));
	ASSERT_EQ(0, vm_new_xq(env, &urg, &au));
	p = vm_packet(bb.gpu, env->slots, 100, 2 * MS, 9);
	ASSERT_EQ(0, xsched_submit(batch, &p, 1, NULL));
	ASSERT_EQ(0, wait_started(bb.cpu, env->slots, 100, env->slots));

	p = vm_packet(ub.gpu, 1, 5, MS / 2, 1);
	t0 = vm_now_ns();
	ASSERT_EQ(0, xsched_submit(urg, &p, 1, &seq));
	ASSERT_EQ(0, xsched_wait(urg, seq, -1));
	s->lat_ns = vm_now_ns() - t0;
	/* Batch workgroups have 100+ ms left: reading late cannot change this. */
	s->batch_wgs_done = wgs_done(bb.cpu, env->slots, 100);
	ASSERT_TRUE(vm_check_output(ub.cpu, 1, 5, 1, "urgent")) TH_LOG("urgent output differs");

	ASSERT_EQ(0, xsched_synchronize(batch));
	ASSERT_TRUE(vm_check_output(bb.cpu, env->slots, 100, 9, "batch"))
		TH_LOG("batch output differs");
	ASSERT_EQ(0, xsched_query(batch, &s->batch, sizeof(s->batch)));
	s->suspend_decision = decided(xsched_xqueue_id(batch), XSCHED_ACT_SUSPEND,
				      XSCHED_WHY_HIGHER_BUSY, xsched_xqueue_id(urg));
	s->resume_decision = decided(xsched_xqueue_id(batch), XSCHED_ACT_RESUME,
				     XSCHED_WHY_HIGHER_IDLE, 0);
	ASSERT_EQ(0, xsched_xqueue_destroy(urg));
	ASSERT_EQ(0, xsched_xqueue_destroy(batch));
}

TEST_F_TIMEOUT(vm, lv3_urgent_overtakes_a_running_batch_kernel, 300)
{
	struct vm_env *env = &self->env;
	struct seen none, prio;

	lv3_shape(_metadata, env, 0, &none);
	lv3_shape(_metadata, env, URG_PRIO, &prio);
	printf("#   urgent kernel beside 200 ms batch workgroups on every slot: no policy %llu us (%u batch workgroups finished first), priority %llu us (%u), %llu batch suspends, %llu bytes saved\n",
	       (unsigned long long)(none.lat_ns / 1000), none.batch_wgs_done,
	       (unsigned long long)(prio.lat_ns / 1000), prio.batch_wgs_done,
	       (unsigned long long)prio.batch.hw_suspends,
	       (unsigned long long)prio.batch.hw_saved_bytes);
	/* The shape: without a policy the urgent kernel waits for a workgroup. */
	ASSERT_TRUE(none.batch_wgs_done > 0)
		TH_LOG("no batch workgroup finished before the urgent kernel even without a policy");
	ASSERT_EQ(0, none.batch.hw_suspends);
	/*
	 * With it: completed before any batch workgroup, in a slot the
	 * module's SAVE freed.  The suspend itself need not have completed:
	 * once the urgent kernel is done the library resumes the batch queue,
	 * which cancels a save whose last waves a late CU thread has not
	 * written yet (a loaded guest: 4 of 150 runs on 7.3, with a resume of
	 * suspended_ns 0 in the trace).  The bytes written count either way.
	 */
	ASSERT_EQ(0, prio.batch_wgs_done);
	ASSERT_TRUE(prio.batch.hw_saved_bytes > 0)
		TH_LOG("the module saved no wave of the batch queue");
	ASSERT_EQ(0, none.batch.hw_saved_bytes);
	ASSERT_TRUE(prio.suspend_decision) TH_LOG("no suspend decision");
	ASSERT_TRUE(prio.resume_decision) TH_LOG("no resume decision");
}

/*
 * Lv2: 320 batch workgroups of 20 ms (10 steps of 2 ms) keep every slot
 * busy when an urgent kernel of one 60 ms workgroup per slot arrives.
 * Drained, the batch queue dispatches nothing new, each slot its workgroup
 * frees goes to the urgent kernel, and at some moment every urgent
 * workgroup runs at once while the batch runs no step.  Round-robin sharing
 * never gets there: every other free slot goes back to the batch queue.
 */
static void lv2_shape(struct __test_metadata *_metadata,
		      struct vm_env *env, int32_t uprio, struct seen *s)
{
	struct xsched_attr ab = vm_attr(XSCHED_LV2, 0), au = vm_attr(XSCHED_LV3, uprio);
	uint32_t bgrid = 20 * env->slots, ugrid = env->slots;
	const uint32_t bsteps = 10, usteps = 60;
	struct xsched_xqueue *batch, *urg;
	struct xsched_sim_packet p;
	struct vm_buf bb, ub;
	uint64_t t0, seq;

	memset(s, 0, sizeof(*s));
	ASSERT_EQ(0, vm_buf_alloc(env, &bb, vm_words(bgrid)));
	ASSERT_EQ(0, vm_buf_alloc(env, &ub, vm_words(ugrid)));
	ASSERT_EQ(0, vm_new_xq(env, &batch, &ab));
	ASSERT_EQ(0, vm_new_xq(env, &urg, &au));
	p = vm_packet(bb.gpu, bgrid, bsteps, 2 * MS, 10);
	ASSERT_EQ(0, xsched_submit(batch, &p, 1, NULL));
	/* Running, and its workgroups already staggered. */
	ASSERT_EQ(0, wait_started(bb.cpu, bgrid, bsteps, env->slots + env->slots / 2));

	p = vm_packet(ub.gpu, ugrid, usteps, MS, 2);
	t0 = vm_now_ns();
	ASSERT_EQ(0, xsched_submit(urg, &p, 1, &seq));
	while (wgs_done(ub.cpu, ugrid, usteps) < ugrid) {
		uint32_t before, after, partial;
		uint64_t a, b;

		/*
		 * An urgent workgroup seen started before and unfinished after
		 * held its slot in between: all of them, every slot.
		 */
		before = vm_marks_between(ub.cpu, ugrid, 1, usteps - 1);
		a = vm_marks_sum(bb.cpu, bgrid);
		partial = vm_marks_between(bb.cpu, bgrid, 1, bsteps - 1);
		usleep(3000);
		b = vm_marks_sum(bb.cpu, bgrid);
		after = vm_marks_between(ub.cpu, ugrid, 1, usteps - 1);
		if (before == ugrid && after == ugrid) {
			s->every_slot = true;
			s->batch_frozen = a == b;
			s->batch_partial = partial;
			break;
		}
		usleep(POLL_US);
	}
	ASSERT_EQ(0, xsched_wait(urg, seq, -1));
	s->lat_ns = vm_now_ns() - t0;
	ASSERT_TRUE(vm_check_output(ub.cpu, ugrid, usteps, 2, "urgent"))
		TH_LOG("urgent output differs");

	ASSERT_EQ(0, xsched_synchronize(batch));
	ASSERT_TRUE(vm_check_output(bb.cpu, bgrid, bsteps, 10, "batch"))
		TH_LOG("batch output differs");
	ASSERT_EQ(0, xsched_query(batch, &s->batch, sizeof(s->batch)));
	s->suspend_decision = decided(xsched_xqueue_id(batch), XSCHED_ACT_SUSPEND,
				      XSCHED_WHY_HIGHER_BUSY, xsched_xqueue_id(urg));
	ASSERT_EQ(0, xsched_xqueue_destroy(urg));
	ASSERT_EQ(0, xsched_xqueue_destroy(batch));
}

TEST_F_TIMEOUT(vm, lv2_drained_batch_leaves_every_slot_to_the_urgent_kernel, 300)
{
	struct vm_env *env = &self->env;
	struct seen none, prio;

	lv2_shape(_metadata, env, 0, &none);
	lv2_shape(_metadata, env, URG_PRIO, &prio);
	printf("#   urgent kernel (60 ms per slot) beside 20 ms batch workgroups: no policy %llu us, every slot urgent %s; priority %llu us, every slot urgent %s, batch %s, %llu batch suspends\n",
	       (unsigned long long)(none.lat_ns / 1000), none.every_slot ? "yes" : "never",
	       (unsigned long long)(prio.lat_ns / 1000), prio.every_slot ? "yes" : "never",
	       prio.batch_frozen ? "ran no step meanwhile" : "kept running",
	       (unsigned long long)prio.batch.hw_suspends);
	ASSERT_TRUE(!none.every_slot)
		TH_LOG("round robin alone gave the urgent kernel every slot: the shape cannot tell a policy");
	ASSERT_EQ(0, none.batch.hw_suspends);
	ASSERT_TRUE(prio.every_slot)
		TH_LOG("the urgent kernel never had every slot at once: the batch queue kept dispatching beside it");
	ASSERT_TRUE(prio.batch_frozen)
		TH_LOG("the batch queue ran steps while every slot was the urgent kernel's");
	ASSERT_EQ(0, prio.batch_partial);	/* drained: whole workgroups only */
	ASSERT_TRUE(prio.batch.hw_suspends >= 1)
		TH_LOG("the module never suspended the batch queue");
	ASSERT_EQ(0, prio.batch.hw_saved_bytes);	/* DRAIN saves nothing */
	ASSERT_TRUE(prio.suspend_decision) TH_LOG("no suspend decision");
}

/*
 * Lv1: 60 short batch kernels (two 2 ms workgroups per slot each), at most 2
 * in flight, are queued when an urgent kernel of 32 such workgroups per slot
 * arrives.  Held, the batch queue launches nothing more: while the urgent
 * kernel runs the GPU starts at most the 2 batch kernels already in flight
 * (one more for a launch racing the hold).  Without a policy the batch
 * kernels keep coming and share the GPU with it.  (Workgroups are short and
 * many: a queue whose next packet waits for its current one to finish gives
 * its free slots away, so long urgent or few batch workgroups would leave
 * the urgent kernel most of the GPU even without a hold.)
 */
#define LV1_KERNELS	60
#define LV1_THRESHOLD	2
#define LV1_BSTEPS	2
#define LV1_USTEPS	2

static uint32_t kernels_started(const struct vm_buf *bb, uint32_t grid)
{
	uint32_t k, n = 0;

	for (k = 0; k < LV1_KERNELS; k++)
		n += vm_marks_sum(bb->cpu + (uint64_t)k * vm_words(grid), grid) > 0;
	return n;
}

static void lv1_shape(struct __test_metadata *_metadata,
		      struct vm_env *env, int32_t uprio, struct seen *s)
{
	struct xsched_attr ab = vm_attr(XSCHED_LV1, 0), au = vm_attr(XSCHED_LV3, uprio);
	uint32_t bgrid = 2 * env->slots, ugrid = 32 * env->slots, k, s0, last;
	const uint32_t usteps = LV1_USTEPS;
	struct xsched_xqueue *batch, *urg;
	struct xsched_sim_packet p;
	struct vm_buf bb, ub;
	uint64_t t0, seq;

	memset(s, 0, sizeof(*s));
	ab.flags |= XSCHED_ATTR_THRESHOLD | XSCHED_ATTR_BATCH;
	ab.threshold = LV1_THRESHOLD;
	ab.batch = 1;
	ASSERT_EQ(0, vm_buf_alloc(env, &bb, LV1_KERNELS * vm_words(bgrid)));
	ASSERT_EQ(0, vm_buf_alloc(env, &ub, vm_words(ugrid)));
	ASSERT_EQ(0, vm_new_xq(env, &batch, &ab));
	ASSERT_EQ(0, vm_new_xq(env, &urg, &au));
	for (k = 0; k < LV1_KERNELS; k++) {
		p = vm_packet(bb.gpu + (uint64_t)k * vm_words(bgrid) * 8, bgrid, LV1_BSTEPS, MS,
			      100 + k);
		ASSERT_EQ(0, xsched_submit(batch, &p, 1, NULL));
	}
	t0 = vm_now_ns();
	while (kernels_started(&bb, bgrid) < 3) {
		ASSERT_TRUE(vm_now_ns() - t0 < 10000 * MS)
			TH_LOG("the batch kernels did not start");
		usleep(POLL_US);
	}

	p = vm_packet(ub.gpu, ugrid, usteps, MS, 3);
	s0 = kernels_started(&bb, bgrid);
	t0 = vm_now_ns();
	ASSERT_EQ(0, xsched_submit(urg, &p, 1, &seq));
	/* The last count read while the urgent kernel was still unfinished. */
	last = s0;
	for (;;) {
		uint32_t n = kernels_started(&bb, bgrid);

		if (wgs_done(ub.cpu, ugrid, usteps) == ugrid)
			break;
		last = n;
		usleep(POLL_US);
	}
	ASSERT_EQ(0, xsched_wait(urg, seq, -1));
	s->lat_ns = vm_now_ns() - t0;
	s->kernels_started = last - s0;
	ASSERT_TRUE(vm_check_output(ub.cpu, ugrid, usteps, 3, "urgent"))
		TH_LOG("urgent output differs");

	ASSERT_EQ(0, xsched_synchronize(batch));
	for (k = 0; k < LV1_KERNELS; k++) {
		ASSERT_TRUE(vm_check_output(bb.cpu + (uint64_t)k * vm_words(bgrid), bgrid, LV1_BSTEPS,
					    100 + k, "batch"))
			TH_LOG("batch kernel %u", k);
	}
	ASSERT_EQ(0, xsched_query(batch, &s->batch, sizeof(s->batch)));
	ASSERT_TRUE(s->batch.max_in_flight <= LV1_THRESHOLD)
		TH_LOG("%llu in flight", (unsigned long long)s->batch.max_in_flight);
	s->suspend_decision = decided(xsched_xqueue_id(batch), XSCHED_ACT_SUSPEND,
				      XSCHED_WHY_HIGHER_BUSY, xsched_xqueue_id(urg));
	ASSERT_EQ(0, xsched_xqueue_destroy(urg));
	ASSERT_EQ(0, xsched_xqueue_destroy(batch));
}

TEST_F_TIMEOUT(vm, lv1_held_batch_starts_no_kernel_while_urgent_runs, 300)
{
	struct vm_env *env = &self->env;
	struct seen none, prio;

	lv1_shape(_metadata, env, 0, &none);
	lv1_shape(_metadata, env, URG_PRIO, &prio);
	printf("#   urgent kernel beside 4 ms batch kernels at threshold %d: no policy %llu us, %u batch kernels started meanwhile; priority %llu us, %u started\n",
	       LV1_THRESHOLD, (unsigned long long)(none.lat_ns / 1000), none.kernels_started,
	       (unsigned long long)(prio.lat_ns / 1000), prio.kernels_started);
	ASSERT_TRUE(none.kernels_started > LV1_THRESHOLD + 1)
		TH_LOG("only %u batch kernels started beside the urgent one even without a policy: the shape cannot tell a hold",
		       none.kernels_started);
	ASSERT_TRUE(prio.kernels_started <= LV1_THRESHOLD + 1)
		TH_LOG("%u batch kernels started while the urgent kernel ran: the batch queue was not held",
		       prio.kernels_started);
	/* Lv1 holds launches; the hardware queue itself is never suspended. */
	ASSERT_EQ(0, prio.batch.hw_suspends);
	ASSERT_TRUE(prio.suspend_decision) TH_LOG("no suspend decision");
}

/* The same long batch kernel beside an urgent queue of equal priority (no
 * preemption) and of higher priority at Lv3: the ratio shows the policy. */
TEST_F_TIMEOUT(vm, lv3_priority_cuts_urgent_latency_against_equal_priority, 300)
{
	struct vm_env *env = &self->env;
	struct seen none, prio;

	lv3_shape(_metadata, env, 0, &none);
	lv3_shape(_metadata, env, URG_PRIO, &prio);
	printf("#   urgent latency: equal priority %llu us, higher priority %llu us\n",
	       (unsigned long long)(none.lat_ns / 1000), (unsigned long long)(prio.lat_ns / 1000));
	ASSERT_TRUE(none.lat_ns > 2 * prio.lat_ns)
		TH_LOG("equal %llu us vs priority %llu us",
		       (unsigned long long)(none.lat_ns / 1000),
		       (unsigned long long)(prio.lat_ns / 1000));
}

TEST_F_TIMEOUT(vm, equal_priorities_make_no_decisions, 300)
{
	struct vm_env *env = &self->env;
	struct xsched_attr a = vm_attr(XSCHED_LV3, 3);
	struct xsched_xqueue *q1, *q2;
	struct xsched_decision d[4];
	struct xsched_xq_info info;
	struct xsched_sim_packet p;
	struct vm_buf b;

	ASSERT_EQ(0, vm_buf_alloc(env, &b, 2 * vm_words(32)));
	ASSERT_EQ(0, vm_new_xq(env, &q1, &a));
	ASSERT_EQ(0, vm_new_xq(env, &q2, &a));
	p = vm_packet(b.gpu, 32, 10, MS, 1);
	ASSERT_EQ(0, xsched_submit(q1, &p, 1, NULL));
	p = vm_packet(b.gpu + vm_words(32) * 8, 32, 10, MS, 2);
	ASSERT_EQ(0, xsched_submit(q2, &p, 1, NULL));
	ASSERT_EQ(0, xsched_synchronize(q1));
	ASSERT_EQ(0, xsched_synchronize(q2));
	ASSERT_EQ(0, xsched_decisions(d, 4, sizeof(*d)));
	ASSERT_TRUE(vm_check_output(b.cpu, 32, 10, 1, "q1")) TH_LOG("q1");
	ASSERT_TRUE(vm_check_output(b.cpu + vm_words(32), 32, 10, 2, "q2")) TH_LOG("q2");
	ASSERT_EQ(0, xsched_query(q1, &info, sizeof(info)));
	ASSERT_EQ(0, info.hw_suspends);
	ASSERT_EQ(0, xsched_query(q2, &info, sizeof(info)));
	ASSERT_EQ(0, info.hw_suspends);
	ASSERT_EQ(0, xsched_xqueue_destroy(q1));
	ASSERT_EQ(0, xsched_xqueue_destroy(q2));
}

TEST_HARNESS_MAIN
