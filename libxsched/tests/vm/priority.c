// SPDX-License-Identifier: MIT
/*
 * Two XQueues of different priority in one process, on the sim GPU: the
 * urgent one must overtake work the batch one already gave the GPU, at each
 * level in the way that level can.  Only orderings and ratios measured in one
 * run are asserted, never absolute times.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "vmutil.h"

/* Submit one urgent kernel and time it to completion; also say whether the
 * batch queue's command @bseq was still unfinished when it completed. */
static int urgent_once(struct xsched_xqueue *urg, struct vm_buf *ub, uint64_t seed,
		       struct xsched_xqueue *batch, uint64_t bseq,
		       uint64_t *lat_ns, bool *batch_pending)
{
	struct xsched_sim_packet p = vm_packet(ub->gpu, 1, 5, 500000, seed);
	uint64_t t0 = vm_now_ns(), seq;
	int ret;

	ret = xsched_submit(urg, &p, 1, &seq);
	if (ret)
		return ret;
	ret = xsched_wait(urg, seq, -1);
	if (ret)
		return ret;
	*lat_ns = vm_now_ns() - t0;
	*batch_pending = xsched_wait(batch, bseq, 0) == -ETIMEDOUT;
	return vm_check_output(ub->cpu, 1, 5, seed, "urgent") ? 0 : -EBADMSG;
}

static bool decided(uint32_t queue, uint32_t action, uint32_t reason, uint32_t other)
{
	struct xsched_decision d[64];
	int n = xsched_decisions(d, 64), i;

	for (i = 0; i < n; i++)
		if (d[i].queue == queue && d[i].action == action &&
		    d[i].reason == reason && (!other || d[i].other == other))
			return true;
	return false;
}

/* Batch: every wave slot busy with one long workgroup. */
static int lv3_urgent_overtakes_a_running_batch_kernel(struct vm_env *env)
{
	struct xsched_attr ab = vm_attr(XSCHED_LV3, 0), au = vm_attr(XSCHED_LV3, 10);
	struct xsched_xqueue *batch, *urg;
	struct xsched_xq_info info;
	struct xsched_sim_packet p;
	struct vm_buf bb, ub;
	uint64_t lat, bseq;
	bool pending;

	CHECK_EQ(vm_buf_alloc(env, &bb, vm_words(env->slots)), 0);
	CHECK_EQ(vm_buf_alloc(env, &ub, vm_words(1)), 0);
	CHECK_EQ(vm_new_xq(env, &batch, &ab), 0);
	CHECK_EQ(vm_new_xq(env, &urg, &au), 0);
	p = vm_packet(bb.gpu, env->slots, 100, 2000000, 9);	/* 200 ms */
	CHECK_EQ(xsched_submit(batch, &p, 1, &bseq), 0);
	usleep(30000);
	CHECK_EQ(urgent_once(urg, &ub, 1, batch, bseq, &lat, &pending), 0);
	CHECK(pending, "the batch kernel finished before the urgent one (%llu us)",
	      (unsigned long long)(lat / 1000));
	CHECK_EQ(xsched_synchronize(batch), 0);
	CHECK(vm_check_output(bb.cpu, env->slots, 100, 9, "batch"), "batch output differs");
	CHECK_EQ(xsched_query(batch, &info), 0);
	CHECK(info.hw_saved_bytes > 0, "nothing was saved");
	CHECK(decided(xsched_xqueue_id(batch), XSCHED_ACT_SUSPEND, XSCHED_WHY_HIGHER_BUSY,
		      xsched_xqueue_id(urg)), "no suspend decision");
	CHECK(decided(xsched_xqueue_id(batch), XSCHED_ACT_RESUME, XSCHED_WHY_HIGHER_IDLE, 0),
	      "no resume decision");
	printf("#   urgent latency %llu us beside a running 200 ms batch kernel\n",
	       (unsigned long long)(lat / 1000));
	CHECK_EQ(xsched_xqueue_destroy(urg), 0);
	CHECK_EQ(xsched_xqueue_destroy(batch), 0);
	return 0;
}

/* Batch: many short workgroups; a drain waits for the running ones only. */
static int lv2_urgent_runs_between_batch_workgroups(struct vm_env *env)
{
	struct xsched_attr ab = vm_attr(XSCHED_LV2, 0), au = vm_attr(XSCHED_LV3, 10);
	uint32_t grid = 10 * env->slots;
	struct xsched_xqueue *batch, *urg;
	struct xsched_sim_packet p;
	struct vm_buf bb, ub;
	uint64_t lat, bseq;
	bool pending;

	CHECK_EQ(vm_buf_alloc(env, &bb, vm_words(grid)), 0);
	CHECK_EQ(vm_buf_alloc(env, &ub, vm_words(1)), 0);
	CHECK_EQ(vm_new_xq(env, &batch, &ab), 0);
	CHECK_EQ(vm_new_xq(env, &urg, &au), 0);
	p = vm_packet(bb.gpu, grid, 10, 2000000, 10);	/* 10 rounds of 20 ms */
	CHECK_EQ(xsched_submit(batch, &p, 1, &bseq), 0);
	usleep(30000);
	CHECK_EQ(urgent_once(urg, &ub, 2, batch, bseq, &lat, &pending), 0);
	CHECK(pending, "the batch kernel finished before the urgent one");
	CHECK_EQ(xsched_synchronize(batch), 0);
	CHECK(vm_check_output(bb.cpu, grid, 10, 10, "batch"), "batch output differs");
	CHECK(decided(xsched_xqueue_id(batch), XSCHED_ACT_SUSPEND, XSCHED_WHY_HIGHER_BUSY,
		      xsched_xqueue_id(urg)), "no suspend decision");
	printf("#   urgent latency %llu us beside 20 ms batch workgroups\n",
	       (unsigned long long)(lat / 1000));
	CHECK_EQ(xsched_xqueue_destroy(urg), 0);
	CHECK_EQ(xsched_xqueue_destroy(batch), 0);
	return 0;
}

/* Batch: many kernels queued; Lv1 keeps most of them in the library. */
static int lv1_urgent_overtakes_buffered_batch_kernels(struct vm_env *env)
{
	struct xsched_attr ab = vm_attr(XSCHED_LV1, 0), au = vm_attr(XSCHED_LV3, 10);
	struct xsched_xqueue *batch, *urg;
	struct xsched_xq_info info;
	struct vm_buf bb, ub;
	uint64_t lat, bseq = 0;
	bool pending;
	uint32_t k;

	ab.flags |= XSCHED_ATTR_THRESHOLD | XSCHED_ATTR_BATCH;
	ab.threshold = 2;
	ab.batch = 1;
	CHECK_EQ(vm_buf_alloc(env, &bb, 30 * vm_words(env->slots)), 0);
	CHECK_EQ(vm_buf_alloc(env, &ub, vm_words(1)), 0);
	CHECK_EQ(vm_new_xq(env, &batch, &ab), 0);
	CHECK_EQ(vm_new_xq(env, &urg, &au), 0);
	for (k = 0; k < 30; k++) {
		struct xsched_sim_packet p = vm_packet(bb.gpu + (uint64_t)k * vm_words(env->slots) * 8,
						       env->slots, 5, 1000000, 100 + k);

		CHECK_EQ(xsched_submit(batch, &p, 1, &bseq), 0);
	}
	usleep(20000);
	CHECK_EQ(urgent_once(urg, &ub, 3, batch, bseq, &lat, &pending), 0);
	CHECK_EQ(xsched_query(batch, &info), 0);
	CHECK(pending, "all 30 batch kernels finished before the urgent one");
	CHECK(info.completed < 25, "%llu batch kernels done by then",
	      (unsigned long long)info.completed);
	CHECK_EQ(xsched_synchronize(batch), 0);
	for (k = 0; k < 30; k++)
		CHECK(vm_check_output(bb.cpu + (uint64_t)k * vm_words(env->slots), env->slots, 5, 100 + k,
				      "batch"), "batch kernel %u", k);
	CHECK_EQ(xsched_query(batch, &info), 0);
	CHECK(info.max_in_flight <= 2, "%llu in flight", (unsigned long long)info.max_in_flight);
	printf("#   urgent latency %llu us beside 5 ms batch kernels at threshold 2\n",
	       (unsigned long long)(lat / 1000));
	CHECK_EQ(xsched_xqueue_destroy(urg), 0);
	CHECK_EQ(xsched_xqueue_destroy(batch), 0);
	return 0;
}

/* The same long batch kernel beside an urgent queue of equal priority (no
 * preemption) and of higher priority at Lv3: the ratio shows the policy. */
static int lv3_priority_cuts_urgent_latency_against_equal_priority(struct vm_env *env)
{
	uint64_t lat[2];
	int run;

	for (run = 0; run < 2; run++) {
		struct xsched_attr ab = vm_attr(XSCHED_LV3, 0), au = vm_attr(XSCHED_LV3, run ? 10 : 0);
		struct xsched_xqueue *batch, *urg;
		struct xsched_sim_packet p;
		struct vm_buf bb, ub;
		uint64_t bseq;
		bool pending;

		CHECK_EQ(vm_buf_alloc(env, &bb, vm_words(env->slots)), 0);
		CHECK_EQ(vm_buf_alloc(env, &ub, vm_words(1)), 0);
		CHECK_EQ(vm_new_xq(env, &batch, &ab), 0);
		CHECK_EQ(vm_new_xq(env, &urg, &au), 0);
		p = vm_packet(bb.gpu, env->slots, 50, 4000000, 11);	/* 200 ms */
		CHECK_EQ(xsched_submit(batch, &p, 1, &bseq), 0);
		usleep(20000);
		CHECK_EQ(urgent_once(urg, &ub, 4, batch, bseq, &lat[run], &pending), 0);
		CHECK_EQ(xsched_synchronize(batch), 0);
		CHECK(vm_check_output(bb.cpu, env->slots, 50, 11, "batch"), "batch output differs");
		CHECK_EQ(xsched_xqueue_destroy(urg), 0);
		CHECK_EQ(xsched_xqueue_destroy(batch), 0);
	}
	printf("#   urgent latency: equal priority %llu us, higher priority %llu us\n",
	       (unsigned long long)(lat[0] / 1000), (unsigned long long)(lat[1] / 1000));
	CHECK(lat[0] > 2 * lat[1], "equal %llu us vs priority %llu us",
	      (unsigned long long)(lat[0] / 1000), (unsigned long long)(lat[1] / 1000));
	return 0;
}

static int equal_priorities_make_no_decisions(struct vm_env *env)
{
	struct xsched_attr a = vm_attr(XSCHED_LV3, 3);
	struct xsched_xqueue *q1, *q2;
	struct xsched_decision d[4];
	struct xsched_sim_packet p;
	struct vm_buf b;

	CHECK_EQ(vm_buf_alloc(env, &b, 2 * vm_words(32)), 0);
	CHECK_EQ(vm_new_xq(env, &q1, &a), 0);
	CHECK_EQ(vm_new_xq(env, &q2, &a), 0);
	p = vm_packet(b.gpu, 32, 10, 1000000, 1);
	CHECK_EQ(xsched_submit(q1, &p, 1, NULL), 0);
	p = vm_packet(b.gpu + vm_words(32) * 8, 32, 10, 1000000, 2);
	CHECK_EQ(xsched_submit(q2, &p, 1, NULL), 0);
	CHECK_EQ(xsched_synchronize(q1), 0);
	CHECK_EQ(xsched_synchronize(q2), 0);
	CHECK_EQ(xsched_decisions(d, 4), 0);
	CHECK(vm_check_output(b.cpu, 32, 10, 1, "q1"), "q1");
	CHECK(vm_check_output(b.cpu + vm_words(32), 32, 10, 2, "q2"), "q2");
	CHECK_EQ(xsched_xqueue_destroy(q1), 0);
	CHECK_EQ(xsched_xqueue_destroy(q2), 0);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct vm_test tests[] = {
		{ "lv3_urgent_overtakes_a_running_batch_kernel", lv3_urgent_overtakes_a_running_batch_kernel },
		{ "lv2_urgent_runs_between_batch_workgroups", lv2_urgent_runs_between_batch_workgroups },
		{ "lv1_urgent_overtakes_buffered_batch_kernels", lv1_urgent_overtakes_buffered_batch_kernels },
		{ "lv3_priority_cuts_urgent_latency_against_equal_priority", lv3_priority_cuts_urgent_latency_against_equal_priority },
		{ "equal_priorities_make_no_decisions", equal_priorities_make_no_decisions },
	};

	return vm_run("priority", tests, sizeof(tests) / sizeof(tests[0]), argc, argv);
}
