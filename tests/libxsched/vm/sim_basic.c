// SPDX-License-Identifier: MIT
/* libxsched on the module's sim GPU: one XQueue at a time. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "vmutil.h"

static int outputs_match_cpu_reference_at_each_level(struct vm_env *env)
{
	unsigned int level;

	for (level = 1; level <= 3; level++) {
		struct xsched_attr a = vm_attr(level, 0);
		struct xsched_xqueue *xq;
		struct vm_buf b;
		uint32_t grid = 2 * env->slots + 3, k;
		char what[64];

		CHECK_EQ(vm_buf_alloc(env, &b, vm_words(grid) * 8), 0);
		CHECK_EQ(vm_new_xq(env, &xq, &a), 0);
		for (k = 0; k < 8; k++) {
			struct xsched_sim_packet p = vm_packet(b.gpu + k * vm_words(grid) * 8,
							       grid, 20 + k, 10000, 1000 + k);

			CHECK_EQ(xsched_submit(xq, &p, 1, NULL), 0);
		}
		CHECK_EQ(xsched_synchronize(xq), 0);
		for (k = 0; k < 8; k++) {
			snprintf(what, sizeof(what), "Lv%u kernel %u", level, k);
			CHECK(vm_check_output(b.cpu + k * vm_words(grid), grid, 20 + k, 1000 + k, what),
			      "output differs");
		}
		CHECK_EQ(xsched_xqueue_destroy(xq), 0);
	}
	return 0;
}

static int query_counts_commands_and_steps(struct vm_env *env)
{
	struct xsched_attr a = vm_attr(XSCHED_LV3, 0);
	struct xsched_sim_packet p[4];
	struct xsched_xqueue *xq;
	struct xsched_xq_info info;
	struct vm_buf b;
	uint64_t seq;
	int i;

	CHECK_EQ(vm_buf_alloc(env, &b, 4 * vm_words(16)), 0);
	CHECK_EQ(vm_new_xq(env, &xq, &a), 0);
	for (i = 0; i < 4; i++)
		p[i] = vm_packet(b.gpu + (uint64_t)i * vm_words(16) * 8, 16, 10, 0, (uint64_t)i);
	CHECK_EQ(xsched_submit(xq, p, 4, &seq), 0);
	CHECK_EQ(seq, 4);
	CHECK_EQ(xsched_wait(xq, 4, 10000000000LL), 0);
	CHECK_EQ(xsched_query(xq, &info, sizeof(info)), 0);
	CHECK_EQ(info.submitted, 4);
	CHECK_EQ(info.launched, 4);
	CHECK_EQ(info.completed, 4);
	CHECK_EQ(info.level, XSCHED_LV3);
	CHECK_EQ(info.state, XSCHED_XQ_ACTIVE);
	CHECK_EQ(info.hw_steps_done, 4 * 16 * 10);
	for (i = 0; i < 4; i++)
		CHECK(vm_check_output(b.cpu + (uint64_t)i * vm_words(16), 16, 10, (uint64_t)i,
				      "zero-time kernel"), "kernel %d", i);
	CHECK_EQ(xsched_xqueue_destroy(xq), 0);
	return 0;
}

static int lv3_suspend_saves_partway_and_resume_finishes(struct vm_env *env)
{
	struct xsched_attr a = vm_attr(XSCHED_LV3, 0);
	struct xsched_xqueue *xq;
	struct xsched_xq_info i1, i2;
	struct xsched_sim_packet p;
	struct vm_buf b;
	uint32_t grid = env->slots;

	CHECK_EQ(vm_buf_alloc(env, &b, vm_words(grid)), 0);
	CHECK_EQ(vm_new_xq(env, &xq, &a), 0);
	/* Every wave slot busy for 100 steps of 2 ms. */
	p = vm_packet(b.gpu, grid, 100, 2000000, 77);
	CHECK_EQ(xsched_submit(xq, &p, 1, NULL), 0);
	usleep(40000);
	CHECK_EQ(xsched_suspend(xq, 0), 0);
	CHECK_EQ(xsched_query(xq, &i1, sizeof(i1)), 0);
	CHECK_EQ(i1.state, XSCHED_XQ_SUSPENDED);
	CHECK_EQ(i1.hw_suspends, 1);
	CHECK(i1.hw_saved_bytes > 0, "saved %llu bytes", (unsigned long long)i1.hw_saved_bytes);
	CHECK(i1.hw_steps_done > 0 && i1.hw_steps_done < (uint64_t)grid * 100,
	      "steps done %llu", (unsigned long long)i1.hw_steps_done);
	/* The memory agrees: every workgroup stopped partway, no step twice. */
	CHECK_EQ(vm_marks_sum(b.cpu, grid), i1.hw_steps_done);
	CHECK_EQ(vm_marks_between(b.cpu, grid, 1, 99), grid);
	usleep(30000);
	CHECK_EQ(xsched_query(xq, &i2, sizeof(i2)), 0);
	CHECK_EQ(i2.hw_steps_done, i1.hw_steps_done);	/* stopped means stopped */
	CHECK_EQ(xsched_wait(xq, 1, 0), -ETIMEDOUT);
	CHECK_EQ(xsched_resume(xq), 0);
	CHECK_EQ(xsched_synchronize(xq), 0);
	CHECK(vm_check_output(b.cpu, grid, 100, 77, "resumed kernel"), "output differs");
	CHECK_EQ(xsched_xqueue_destroy(xq), 0);
	return 0;
}

static int lv2_suspend_drains_running_workgroups(struct vm_env *env)
{
	struct xsched_attr a = vm_attr(XSCHED_LV2, 0);
	struct xsched_xqueue *xq;
	struct xsched_xq_info i1, i2;
	struct xsched_sim_packet p;
	struct vm_buf b;
	uint32_t grid = 6 * env->slots;

	CHECK_EQ(vm_buf_alloc(env, &b, vm_words(grid)), 0);
	CHECK_EQ(vm_new_xq(env, &xq, &a), 0);
	p = vm_packet(b.gpu, grid, 10, 1000000, 78);
	CHECK_EQ(xsched_submit(xq, &p, 1, NULL), 0);
	usleep(15000);
	CHECK_EQ(xsched_suspend(xq, 0), 0);
	CHECK_EQ(xsched_query(xq, &i1, sizeof(i1)), 0);
	CHECK_EQ(i1.state, XSCHED_XQ_SUSPENDED);
	CHECK_EQ(i1.hw_saved_bytes, 0);		/* drained, nothing saved */
	CHECK(i1.hw_steps_done % 10 == 0, "a workgroup stopped halfway: %llu steps",
	      (unsigned long long)i1.hw_steps_done);
	/* The memory agrees: whole workgroups only, as many steps as counted. */
	CHECK_EQ(vm_marks_sum(b.cpu, grid), i1.hw_steps_done);
	CHECK_EQ(vm_marks_between(b.cpu, grid, 1, 9), 0);
	usleep(30000);
	CHECK_EQ(xsched_query(xq, &i2, sizeof(i2)), 0);
	CHECK_EQ(i2.hw_steps_done, i1.hw_steps_done);
	CHECK_EQ(xsched_resume(xq), 0);
	CHECK_EQ(xsched_synchronize(xq), 0);
	CHECK(vm_check_output(b.cpu, grid, 10, 78, "drained kernel"), "output differs");
	CHECK_EQ(xsched_xqueue_destroy(xq), 0);
	return 0;
}

static int lv1_keeps_threshold_in_flight(struct vm_env *env)
{
	struct xsched_attr a = vm_attr(XSCHED_LV1, 0);
	struct xsched_xqueue *xq;
	struct xsched_xq_info info;
	struct vm_buf b;
	uint32_t k;

	a.flags |= XSCHED_ATTR_THRESHOLD | XSCHED_ATTR_BATCH;
	a.threshold = 3;
	a.batch = 2;
	CHECK_EQ(vm_buf_alloc(env, &b, 40 * vm_words(4)), 0);
	CHECK_EQ(vm_new_xq(env, &xq, &a), 0);
	for (k = 0; k < 40; k++) {
		struct xsched_sim_packet p = vm_packet(b.gpu + k * vm_words(4) * 8, 4, 5,
						       100000, k);

		CHECK_EQ(xsched_submit(xq, &p, 1, NULL), 0);
	}
	CHECK_EQ(xsched_query(xq, &info, sizeof(info)), 0);
	CHECK(info.buffered >= 30, "buffered %llu", (unsigned long long)info.buffered);
	CHECK_EQ(xsched_synchronize(xq), 0);
	CHECK_EQ(xsched_query(xq, &info, sizeof(info)), 0);
	CHECK(info.max_in_flight <= 3, "%llu in flight", (unsigned long long)info.max_in_flight);
	for (k = 0; k < 40; k++)
		CHECK(vm_check_output(b.cpu + k * vm_words(4), 4, 5, k, "Lv1 kernel"),
		      "kernel %u", k);
	CHECK_EQ(xsched_xqueue_destroy(xq), 0);
	return 0;
}

static int destroy_resumes_a_suspended_queue_and_finishes_its_work(struct vm_env *env)
{
	struct xsched_attr a = vm_attr(XSCHED_LV3, 0);
	struct xsched_xqueue *xq;
	struct xsched_sim_packet p;
	struct vm_buf b;

	CHECK_EQ(vm_buf_alloc(env, &b, vm_words(32)), 0);
	CHECK_EQ(vm_new_xq(env, &xq, &a), 0);
	CHECK_EQ(xsched_suspend(xq, 0), 0);
	p = vm_packet(b.gpu, 32, 10, 100000, 5);
	CHECK_EQ(xsched_submit(xq, &p, 1, NULL), 0);
	CHECK_EQ(xsched_xqueue_destroy(xq), 0);
	CHECK(vm_check_output(b.cpu, 32, 10, 5, "after destroy"), "output differs");
	return 0;
}

static int priority_above_zero_registers_with_cap_sys_nice(struct vm_env *env)
{
	struct xsched_attr a = vm_attr(XSCHED_LV3, XSCHED_PRIO_MAX);
	struct xsched_xqueue *xq;
	struct xsched_xq_info info;

	CHECK_EQ(vm_new_xq(env, &xq, &a), 0);
	CHECK_EQ(xsched_query(xq, &info, sizeof(info)), 0);
	CHECK_EQ(info.priority, XSCHED_PRIO_MAX);
	CHECK_EQ(xsched_set_priority(xq, -5), 0);
	CHECK_EQ(xsched_set_priority(xq, 5), 0);
	CHECK_EQ(xsched_xqueue_destroy(xq), 0);
	return 0;
}

static int sim_open_rejects_a_missing_device(struct vm_env *env)
{
	struct xsched_sim *s;

	(void)env;
	CHECK_EQ(xsched_sim_open(&s, "/dev/does-not-exist"), -ENOENT);
	CHECK_EQ(xsched_xqueue_create_sim(NULL, env->sim, 0, NULL), -EINVAL);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct vm_test tests[] = {
		{ "outputs_match_cpu_reference_at_each_level", outputs_match_cpu_reference_at_each_level },
		{ "query_counts_commands_and_steps", query_counts_commands_and_steps },
		{ "lv3_suspend_saves_partway_and_resume_finishes", lv3_suspend_saves_partway_and_resume_finishes },
		{ "lv2_suspend_drains_running_workgroups", lv2_suspend_drains_running_workgroups },
		{ "lv1_keeps_threshold_in_flight", lv1_keeps_threshold_in_flight },
		{ "destroy_resumes_a_suspended_queue_and_finishes_its_work", destroy_resumes_a_suspended_queue_and_finishes_its_work },
		{ "priority_above_zero_registers_with_cap_sys_nice", priority_above_zero_registers_with_cap_sys_nice },
		{ "sim_open_rejects_a_missing_device", sim_open_rejects_a_missing_device },
	};

	return vm_run("sim_basic", tests, sizeof(tests) / sizeof(tests[0]), argc, argv);
}
