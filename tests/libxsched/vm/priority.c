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

#include "vmutil.h"

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
static int lv3_shape(struct vm_env *env, int32_t uprio, struct seen *s)
{
	struct xsched_attr ab = vm_attr(XSCHED_LV3, 0), au = vm_attr(XSCHED_LV3, uprio);
	struct xsched_xqueue *batch, *urg;
	struct xsched_sim_packet p;
	struct vm_buf bb, ub;
	uint64_t t0, seq;

	memset(s, 0, sizeof(*s));
	CHECK_EQ(vm_buf_alloc(env, &bb, vm_words(env->slots)), 0);
	CHECK_EQ(vm_buf_alloc(env, &ub, vm_words(1)), 0);
	CHECK_EQ(vm_new_xq(env, &batch, &ab), 0);
	CHECK_EQ(vm_new_xq(env, &urg, &au), 0);
	p = vm_packet(bb.gpu, env->slots, 100, 2 * MS, 9);
	CHECK_EQ(xsched_submit(batch, &p, 1, NULL), 0);
	CHECK_EQ(wait_started(bb.cpu, env->slots, 100, env->slots), 0);

	p = vm_packet(ub.gpu, 1, 5, MS / 2, 1);
	t0 = vm_now_ns();
	CHECK_EQ(xsched_submit(urg, &p, 1, &seq), 0);
	CHECK_EQ(xsched_wait(urg, seq, -1), 0);
	s->lat_ns = vm_now_ns() - t0;
	/* Batch workgroups have 100+ ms left: reading late cannot change this. */
	s->batch_wgs_done = wgs_done(bb.cpu, env->slots, 100);
	CHECK(vm_check_output(ub.cpu, 1, 5, 1, "urgent"), "urgent output differs");

	CHECK_EQ(xsched_synchronize(batch), 0);
	CHECK(vm_check_output(bb.cpu, env->slots, 100, 9, "batch"), "batch output differs");
	CHECK_EQ(xsched_query(batch, &s->batch, sizeof(s->batch)), 0);
	s->suspend_decision = decided(xsched_xqueue_id(batch), XSCHED_ACT_SUSPEND,
				      XSCHED_WHY_HIGHER_BUSY, xsched_xqueue_id(urg));
	s->resume_decision = decided(xsched_xqueue_id(batch), XSCHED_ACT_RESUME,
				     XSCHED_WHY_HIGHER_IDLE, 0);
	CHECK_EQ(xsched_xqueue_destroy(urg), 0);
	CHECK_EQ(xsched_xqueue_destroy(batch), 0);
	return 0;
}

static int lv3_urgent_overtakes_a_running_batch_kernel(struct vm_env *env)
{
	struct seen none, prio;

	if (lv3_shape(env, 0, &none) || lv3_shape(env, URG_PRIO, &prio))
		return 1;
	printf("#   urgent kernel beside 200 ms batch workgroups on every slot: no policy %llu us (%u batch workgroups finished first), priority %llu us (%u), %llu batch suspends, %llu bytes saved\n",
	       (unsigned long long)(none.lat_ns / 1000), none.batch_wgs_done,
	       (unsigned long long)(prio.lat_ns / 1000), prio.batch_wgs_done,
	       (unsigned long long)prio.batch.hw_suspends,
	       (unsigned long long)prio.batch.hw_saved_bytes);
	/* The shape: without a policy the urgent kernel waits for a workgroup. */
	CHECK(none.batch_wgs_done > 0, "no batch workgroup finished before the urgent kernel even without a policy");
	CHECK_EQ(none.batch.hw_suspends, 0);
	/* With it: completed before any batch workgroup, the GPU saved them. */
	CHECK_EQ(prio.batch_wgs_done, 0);
	CHECK(prio.batch.hw_suspends >= 1, "the module never suspended the batch queue");
	CHECK(prio.batch.hw_saved_bytes > 0, "no wave state was saved");
	CHECK(prio.suspend_decision, "no suspend decision");
	CHECK(prio.resume_decision, "no resume decision");
	return 0;
}

/*
 * Lv2: 320 batch workgroups of 20 ms (10 steps of 2 ms) keep every slot
 * busy when an urgent kernel of one 60 ms workgroup per slot arrives.
 * Drained, the batch queue dispatches nothing new, each slot its workgroup
 * frees goes to the urgent kernel, and at some moment every urgent
 * workgroup runs at once while the batch runs no step.  Round-robin sharing
 * never gets there: every other free slot goes back to the batch queue.
 */
static int lv2_shape(struct vm_env *env, int32_t uprio, struct seen *s)
{
	struct xsched_attr ab = vm_attr(XSCHED_LV2, 0), au = vm_attr(XSCHED_LV3, uprio);
	uint32_t bgrid = 20 * env->slots, ugrid = env->slots;
	const uint32_t bsteps = 10, usteps = 60;
	struct xsched_xqueue *batch, *urg;
	struct xsched_sim_packet p;
	struct vm_buf bb, ub;
	uint64_t t0, seq;

	memset(s, 0, sizeof(*s));
	CHECK_EQ(vm_buf_alloc(env, &bb, vm_words(bgrid)), 0);
	CHECK_EQ(vm_buf_alloc(env, &ub, vm_words(ugrid)), 0);
	CHECK_EQ(vm_new_xq(env, &batch, &ab), 0);
	CHECK_EQ(vm_new_xq(env, &urg, &au), 0);
	p = vm_packet(bb.gpu, bgrid, bsteps, 2 * MS, 10);
	CHECK_EQ(xsched_submit(batch, &p, 1, NULL), 0);
	/* Running, and its workgroups already staggered. */
	CHECK_EQ(wait_started(bb.cpu, bgrid, bsteps, env->slots + env->slots / 2), 0);

	p = vm_packet(ub.gpu, ugrid, usteps, MS, 2);
	t0 = vm_now_ns();
	CHECK_EQ(xsched_submit(urg, &p, 1, &seq), 0);
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
	CHECK_EQ(xsched_wait(urg, seq, -1), 0);
	s->lat_ns = vm_now_ns() - t0;
	CHECK(vm_check_output(ub.cpu, ugrid, usteps, 2, "urgent"), "urgent output differs");

	CHECK_EQ(xsched_synchronize(batch), 0);
	CHECK(vm_check_output(bb.cpu, bgrid, bsteps, 10, "batch"), "batch output differs");
	CHECK_EQ(xsched_query(batch, &s->batch, sizeof(s->batch)), 0);
	s->suspend_decision = decided(xsched_xqueue_id(batch), XSCHED_ACT_SUSPEND,
				      XSCHED_WHY_HIGHER_BUSY, xsched_xqueue_id(urg));
	CHECK_EQ(xsched_xqueue_destroy(urg), 0);
	CHECK_EQ(xsched_xqueue_destroy(batch), 0);
	return 0;
}

static int lv2_drained_batch_leaves_every_slot_to_the_urgent_kernel(struct vm_env *env)
{
	struct seen none, prio;

	if (lv2_shape(env, 0, &none) || lv2_shape(env, URG_PRIO, &prio))
		return 1;
	printf("#   urgent kernel (60 ms per slot) beside 20 ms batch workgroups: no policy %llu us, every slot urgent %s; priority %llu us, every slot urgent %s, batch %s, %llu batch suspends\n",
	       (unsigned long long)(none.lat_ns / 1000), none.every_slot ? "yes" : "never",
	       (unsigned long long)(prio.lat_ns / 1000), prio.every_slot ? "yes" : "never",
	       prio.batch_frozen ? "ran no step meanwhile" : "kept running",
	       (unsigned long long)prio.batch.hw_suspends);
	CHECK(!none.every_slot, "round robin alone gave the urgent kernel every slot: the shape cannot tell a policy");
	CHECK_EQ(none.batch.hw_suspends, 0);
	CHECK(prio.every_slot, "the urgent kernel never had every slot at once: the batch queue kept dispatching beside it");
	CHECK(prio.batch_frozen, "the batch queue ran steps while every slot was the urgent kernel's");
	CHECK_EQ(prio.batch_partial, 0);	/* drained: whole workgroups only */
	CHECK(prio.batch.hw_suspends >= 1, "the module never suspended the batch queue");
	CHECK_EQ(prio.batch.hw_saved_bytes, 0);	/* DRAIN saves nothing */
	CHECK(prio.suspend_decision, "no suspend decision");
	return 0;
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

static int lv1_shape(struct vm_env *env, int32_t uprio, struct seen *s)
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
	CHECK_EQ(vm_buf_alloc(env, &bb, LV1_KERNELS * vm_words(bgrid)), 0);
	CHECK_EQ(vm_buf_alloc(env, &ub, vm_words(ugrid)), 0);
	CHECK_EQ(vm_new_xq(env, &batch, &ab), 0);
	CHECK_EQ(vm_new_xq(env, &urg, &au), 0);
	for (k = 0; k < LV1_KERNELS; k++) {
		p = vm_packet(bb.gpu + (uint64_t)k * vm_words(bgrid) * 8, bgrid, LV1_BSTEPS, MS,
			      100 + k);
		CHECK_EQ(xsched_submit(batch, &p, 1, NULL), 0);
	}
	t0 = vm_now_ns();
	while (kernels_started(&bb, bgrid) < 3) {
		CHECK(vm_now_ns() - t0 < 10000 * MS, "the batch kernels did not start");
		usleep(POLL_US);
	}

	p = vm_packet(ub.gpu, ugrid, usteps, MS, 3);
	s0 = kernels_started(&bb, bgrid);
	t0 = vm_now_ns();
	CHECK_EQ(xsched_submit(urg, &p, 1, &seq), 0);
	/* The last count read while the urgent kernel was still unfinished. */
	last = s0;
	for (;;) {
		uint32_t n = kernels_started(&bb, bgrid);

		if (wgs_done(ub.cpu, ugrid, usteps) == ugrid)
			break;
		last = n;
		usleep(POLL_US);
	}
	CHECK_EQ(xsched_wait(urg, seq, -1), 0);
	s->lat_ns = vm_now_ns() - t0;
	s->kernels_started = last - s0;
	CHECK(vm_check_output(ub.cpu, ugrid, usteps, 3, "urgent"), "urgent output differs");

	CHECK_EQ(xsched_synchronize(batch), 0);
	for (k = 0; k < LV1_KERNELS; k++)
		CHECK(vm_check_output(bb.cpu + (uint64_t)k * vm_words(bgrid), bgrid,
				      LV1_BSTEPS, 100 + k, "batch"), "batch kernel %u", k);
	CHECK_EQ(xsched_query(batch, &s->batch, sizeof(s->batch)), 0);
	CHECK(s->batch.max_in_flight <= LV1_THRESHOLD, "%llu in flight",
	      (unsigned long long)s->batch.max_in_flight);
	s->suspend_decision = decided(xsched_xqueue_id(batch), XSCHED_ACT_SUSPEND,
				      XSCHED_WHY_HIGHER_BUSY, xsched_xqueue_id(urg));
	CHECK_EQ(xsched_xqueue_destroy(urg), 0);
	CHECK_EQ(xsched_xqueue_destroy(batch), 0);
	return 0;
}

static int lv1_held_batch_starts_no_kernel_while_urgent_runs(struct vm_env *env)
{
	struct seen none, prio;

	if (lv1_shape(env, 0, &none) || lv1_shape(env, URG_PRIO, &prio))
		return 1;
	printf("#   urgent kernel beside 4 ms batch kernels at threshold %d: no policy %llu us, %u batch kernels started meanwhile; priority %llu us, %u started\n",
	       LV1_THRESHOLD, (unsigned long long)(none.lat_ns / 1000), none.kernels_started,
	       (unsigned long long)(prio.lat_ns / 1000), prio.kernels_started);
	CHECK(none.kernels_started > LV1_THRESHOLD + 1,
	      "only %u batch kernels started beside the urgent one even without a policy: the shape cannot tell a hold",
	      none.kernels_started);
	CHECK(prio.kernels_started <= LV1_THRESHOLD + 1,
	      "%u batch kernels started while the urgent kernel ran: the batch queue was not held",
	      prio.kernels_started);
	/* Lv1 holds launches; the hardware queue itself is never suspended. */
	CHECK_EQ(prio.batch.hw_suspends, 0);
	CHECK(prio.suspend_decision, "no suspend decision");
	return 0;
}

/* The same long batch kernel beside an urgent queue of equal priority (no
 * preemption) and of higher priority at Lv3: the ratio shows the policy. */
static int lv3_priority_cuts_urgent_latency_against_equal_priority(struct vm_env *env)
{
	struct seen none, prio;

	if (lv3_shape(env, 0, &none) || lv3_shape(env, URG_PRIO, &prio))
		return 1;
	printf("#   urgent latency: equal priority %llu us, higher priority %llu us\n",
	       (unsigned long long)(none.lat_ns / 1000), (unsigned long long)(prio.lat_ns / 1000));
	CHECK(none.lat_ns > 2 * prio.lat_ns, "equal %llu us vs priority %llu us",
	      (unsigned long long)(none.lat_ns / 1000), (unsigned long long)(prio.lat_ns / 1000));
	return 0;
}

static int equal_priorities_make_no_decisions(struct vm_env *env)
{
	struct xsched_attr a = vm_attr(XSCHED_LV3, 3);
	struct xsched_xqueue *q1, *q2;
	struct xsched_decision d[4];
	struct xsched_xq_info info;
	struct xsched_sim_packet p;
	struct vm_buf b;

	CHECK_EQ(vm_buf_alloc(env, &b, 2 * vm_words(32)), 0);
	CHECK_EQ(vm_new_xq(env, &q1, &a), 0);
	CHECK_EQ(vm_new_xq(env, &q2, &a), 0);
	p = vm_packet(b.gpu, 32, 10, MS, 1);
	CHECK_EQ(xsched_submit(q1, &p, 1, NULL), 0);
	p = vm_packet(b.gpu + vm_words(32) * 8, 32, 10, MS, 2);
	CHECK_EQ(xsched_submit(q2, &p, 1, NULL), 0);
	CHECK_EQ(xsched_synchronize(q1), 0);
	CHECK_EQ(xsched_synchronize(q2), 0);
	CHECK_EQ(xsched_decisions(d, 4, sizeof(*d)), 0);
	CHECK(vm_check_output(b.cpu, 32, 10, 1, "q1"), "q1");
	CHECK(vm_check_output(b.cpu + vm_words(32), 32, 10, 2, "q2"), "q2");
	CHECK_EQ(xsched_query(q1, &info, sizeof(info)), 0);
	CHECK_EQ(info.hw_suspends, 0);
	CHECK_EQ(xsched_query(q2, &info, sizeof(info)), 0);
	CHECK_EQ(info.hw_suspends, 0);
	CHECK_EQ(xsched_xqueue_destroy(q1), 0);
	CHECK_EQ(xsched_xqueue_destroy(q2), 0);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct vm_test tests[] = {
		{ "lv3_urgent_overtakes_a_running_batch_kernel", lv3_urgent_overtakes_a_running_batch_kernel },
		{ "lv2_drained_batch_leaves_every_slot_to_the_urgent_kernel",
		  lv2_drained_batch_leaves_every_slot_to_the_urgent_kernel },
		{ "lv1_held_batch_starts_no_kernel_while_urgent_runs",
		  lv1_held_batch_starts_no_kernel_while_urgent_runs },
		{ "lv3_priority_cuts_urgent_latency_against_equal_priority", lv3_priority_cuts_urgent_latency_against_equal_priority },
		{ "equal_priorities_make_no_decisions", equal_priorities_make_no_decisions },
	};

	return vm_run("priority", tests, sizeof(tests) / sizeof(tests[0]), argc, argv);
}
