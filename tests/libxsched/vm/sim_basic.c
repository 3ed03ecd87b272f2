// SPDX-License-Identifier: MIT
/* libxsched on the module's sim GPU: one XQueue at a time. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "vm_test.h"

TEST_F_TIMEOUT(vm, outputs_match_cpu_reference_at_each_level, 300)
{
	struct vm_env *env = &self->env;
	unsigned int level;

	for (level = 1; level <= 3; level++) {
		struct xsched_attr a = vm_attr(level, 0);
		struct xsched_xqueue *xq;
		struct vm_buf b;
		uint32_t grid = 2 * env->slots + 3, k;
		char what[64];

		ASSERT_EQ(0, vm_buf_alloc(env, &b, vm_words(grid) * 8));
		ASSERT_EQ(0, vm_new_xq(env, &xq, &a));
		for (k = 0; k < 8; k++) {
			struct xsched_sim_packet p = vm_packet(b.gpu + k * vm_words(grid) * 8,
							       grid, 20 + k, 10000, 1000 + k);

			ASSERT_EQ(0, xsched_submit(xq, &p, 1, NULL));
		}
		ASSERT_EQ(0, xsched_synchronize(xq));
		for (k = 0; k < 8; k++) {
			snprintf(what, sizeof(what), "Lv%u kernel %u", level, k);
			ASSERT_TRUE(vm_check_output(b.cpu + k * vm_words(grid), grid, 20 + k,
						    1000 + k, what))
				TH_LOG("output differs");
		}
		ASSERT_EQ(0, xsched_xqueue_destroy(xq));
	}
}

TEST_F_TIMEOUT(vm, query_counts_commands_and_steps, 300)
{
	struct vm_env *env = &self->env;
	struct xsched_attr a = vm_attr(XSCHED_LV3, 0);
	struct xsched_sim_packet p[4];
	struct xsched_xqueue *xq;
	struct xsched_xq_info info;
	struct vm_buf b;
	uint64_t seq;
	int i;

	ASSERT_EQ(0, vm_buf_alloc(env, &b, 4 * vm_words(16)));
	ASSERT_EQ(0, vm_new_xq(env, &xq, &a));
	for (i = 0; i < 4; i++)
		p[i] = vm_packet(b.gpu + (uint64_t)i * vm_words(16) * 8, 16, 10, 0, (uint64_t)i);
	ASSERT_EQ(0, xsched_submit(xq, p, 4, &seq));
	ASSERT_EQ(4, seq);
	ASSERT_EQ(0, xsched_wait(xq, 4, 10000000000LL));
	ASSERT_EQ(0, xsched_query(xq, &info, sizeof(info)));
	ASSERT_EQ(4, info.submitted);
	ASSERT_EQ(4, info.launched);
	ASSERT_EQ(4, info.completed);
	ASSERT_EQ(XSCHED_LV3, info.level);
	ASSERT_EQ(XSCHED_XQ_ACTIVE, info.state);
	ASSERT_EQ(4 * 16 * 10, info.hw_steps_done);
	for (i = 0; i < 4; i++) {
		ASSERT_TRUE(vm_check_output(b.cpu + (uint64_t)i * vm_words(16), 16, 10,
					    (uint64_t)i, "zero-time kernel"))
			TH_LOG("kernel %d", i);
	}
	ASSERT_EQ(0, xsched_xqueue_destroy(xq));
}

TEST_F_TIMEOUT(vm, lv3_suspend_saves_partway_and_resume_finishes, 300)
{
	struct vm_env *env = &self->env;
	struct xsched_attr a = vm_attr(XSCHED_LV3, 0);
	struct xsched_xqueue *xq;
	struct xsched_xq_info i1, i2;
	struct xsched_sim_packet p;
	struct vm_buf b;
	uint32_t grid = env->slots;

	ASSERT_EQ(0, vm_buf_alloc(env, &b, vm_words(grid)));
	ASSERT_EQ(0, vm_new_xq(env, &xq, &a));
	/* Every wave slot busy for 100 steps of 2 ms. */
	p = vm_packet(b.gpu, grid, 100, 2000000, 77);
	ASSERT_EQ(0, xsched_submit(xq, &p, 1, NULL));
	usleep(40000);
	ASSERT_EQ(0, xsched_suspend(xq, 0));
	ASSERT_EQ(0, xsched_query(xq, &i1, sizeof(i1)));
	ASSERT_EQ(XSCHED_XQ_SUSPENDED, i1.state);
	ASSERT_EQ(1, i1.hw_suspends);
	ASSERT_TRUE(i1.hw_saved_bytes > 0)
		TH_LOG("saved %llu bytes", (unsigned long long)i1.hw_saved_bytes);
	ASSERT_TRUE(i1.hw_steps_done > 0 && i1.hw_steps_done < (uint64_t)grid * 100)
		TH_LOG("steps done %llu", (unsigned long long)i1.hw_steps_done);
	/* The memory agrees: every workgroup stopped partway, no step twice. */
	ASSERT_EQ(i1.hw_steps_done, vm_marks_sum(b.cpu, grid));
	ASSERT_EQ(grid, vm_marks_between(b.cpu, grid, 1, 99));
	usleep(30000);
	ASSERT_EQ(0, xsched_query(xq, &i2, sizeof(i2)));
	ASSERT_EQ(i1.hw_steps_done, i2.hw_steps_done);	/* stopped means stopped */
	ASSERT_EQ(-ETIMEDOUT, xsched_wait(xq, 1, 0));
	ASSERT_EQ(0, xsched_resume(xq));
	ASSERT_EQ(0, xsched_synchronize(xq));
	ASSERT_TRUE(vm_check_output(b.cpu, grid, 100, 77, "resumed kernel"))
		TH_LOG("output differs");
	ASSERT_EQ(0, xsched_xqueue_destroy(xq));
}

TEST_F_TIMEOUT(vm, lv2_suspend_drains_running_workgroups, 300)
{
	struct vm_env *env = &self->env;
	struct xsched_attr a = vm_attr(XSCHED_LV2, 0);
	struct xsched_xqueue *xq;
	struct xsched_xq_info i1, i2;
	struct xsched_sim_packet p;
	struct vm_buf b;
	uint32_t grid = 6 * env->slots;

	ASSERT_EQ(0, vm_buf_alloc(env, &b, vm_words(grid)));
	ASSERT_EQ(0, vm_new_xq(env, &xq, &a));
	p = vm_packet(b.gpu, grid, 10, 1000000, 78);
	ASSERT_EQ(0, xsched_submit(xq, &p, 1, NULL));
	usleep(15000);
	ASSERT_EQ(0, xsched_suspend(xq, 0));
	ASSERT_EQ(0, xsched_query(xq, &i1, sizeof(i1)));
	ASSERT_EQ(XSCHED_XQ_SUSPENDED, i1.state);
	ASSERT_EQ(0, i1.hw_saved_bytes);		/* drained, nothing saved */
	ASSERT_TRUE(i1.hw_steps_done % 10 == 0)
		TH_LOG("a workgroup stopped halfway: %llu steps",
		       (unsigned long long)i1.hw_steps_done);
	/* The memory agrees: whole workgroups only, as many steps as counted. */
	ASSERT_EQ(i1.hw_steps_done, vm_marks_sum(b.cpu, grid));
	ASSERT_EQ(0, vm_marks_between(b.cpu, grid, 1, 9));
	usleep(30000);
	ASSERT_EQ(0, xsched_query(xq, &i2, sizeof(i2)));
	ASSERT_EQ(i1.hw_steps_done, i2.hw_steps_done);
	ASSERT_EQ(0, xsched_resume(xq));
	ASSERT_EQ(0, xsched_synchronize(xq));
	ASSERT_TRUE(vm_check_output(b.cpu, grid, 10, 78, "drained kernel"))
		TH_LOG("output differs");
	ASSERT_EQ(0, xsched_xqueue_destroy(xq));
}

TEST_F_TIMEOUT(vm, lv1_keeps_threshold_in_flight, 300)
{
	struct vm_env *env = &self->env;
	struct xsched_attr a = vm_attr(XSCHED_LV1, 0);
	struct xsched_xqueue *xq;
	struct xsched_xq_info info;
	struct vm_buf b;
	uint32_t k;

	a.flags |= XSCHED_ATTR_THRESHOLD | XSCHED_ATTR_BATCH;
	a.threshold = 3;
	a.batch = 2;
	ASSERT_EQ(0, vm_buf_alloc(env, &b, 40 * vm_words(4)));
	ASSERT_EQ(0, vm_new_xq(env, &xq, &a));
	/* Kernels of 10 ms: submitting 40 takes far less than the 70 ms in
	 * which 7 would complete, also in a loaded TCG guest (with 0.5 ms
	 * kernels, 3.5 ms, it once saw 29 buffered). */
	for (k = 0; k < 40; k++) {
		struct xsched_sim_packet p = vm_packet(b.gpu + k * vm_words(4) * 8, 4, 5,
						       2000000, k);

		ASSERT_EQ(0, xsched_submit(xq, &p, 1, NULL));
	}
	ASSERT_EQ(0, xsched_query(xq, &info, sizeof(info)));
	ASSERT_TRUE(info.buffered >= 30) TH_LOG("buffered %llu", (unsigned long long)info.buffered);
	ASSERT_EQ(0, xsched_synchronize(xq));
	ASSERT_EQ(0, xsched_query(xq, &info, sizeof(info)));
	ASSERT_TRUE(info.max_in_flight <= 3)
		TH_LOG("%llu in flight", (unsigned long long)info.max_in_flight);
	for (k = 0; k < 40; k++) {
		ASSERT_TRUE(vm_check_output(b.cpu + k * vm_words(4), 4, 5, k, "Lv1 kernel"))
			TH_LOG("kernel %u", k);
	}
	ASSERT_EQ(0, xsched_xqueue_destroy(xq));
}

TEST_F_TIMEOUT(vm, destroy_resumes_a_suspended_queue_and_finishes_its_work, 300)
{
	struct vm_env *env = &self->env;
	struct xsched_attr a = vm_attr(XSCHED_LV3, 0);
	struct xsched_xqueue *xq;
	struct xsched_sim_packet p;
	struct vm_buf b;

	ASSERT_EQ(0, vm_buf_alloc(env, &b, vm_words(32)));
	ASSERT_EQ(0, vm_new_xq(env, &xq, &a));
	ASSERT_EQ(0, xsched_suspend(xq, 0));
	p = vm_packet(b.gpu, 32, 10, 100000, 5);
	ASSERT_EQ(0, xsched_submit(xq, &p, 1, NULL));
	ASSERT_EQ(0, xsched_xqueue_destroy(xq));
	ASSERT_TRUE(vm_check_output(b.cpu, 32, 10, 5, "after destroy")) TH_LOG("output differs");
}

TEST_F_TIMEOUT(vm, priority_above_zero_registers_with_cap_sys_nice, 300)
{
	struct vm_env *env = &self->env;
	struct xsched_attr a = vm_attr(XSCHED_LV3, XSCHED_PRIO_MAX);
	struct xsched_xqueue *xq;
	struct xsched_xq_info info;

	ASSERT_EQ(0, vm_new_xq(env, &xq, &a));
	ASSERT_EQ(0, xsched_query(xq, &info, sizeof(info)));
	ASSERT_EQ(XSCHED_PRIO_MAX, info.priority);
	ASSERT_EQ(0, xsched_set_priority(xq, -5));
	ASSERT_EQ(0, xsched_set_priority(xq, 5));
	ASSERT_EQ(0, xsched_xqueue_destroy(xq));
}

TEST_F_TIMEOUT(vm, sim_open_rejects_a_missing_device, 300)
{
	struct vm_env *env = &self->env;
	struct xsched_sim *s;

	ASSERT_EQ(-ENOENT, xsched_sim_open(&s, "/dev/does-not-exist"));
	ASSERT_EQ(-EINVAL, xsched_xqueue_create_sim(NULL, env->sim, 0, NULL));
}

TEST_HARNESS_MAIN
