// SPDX-License-Identifier: MIT
/*
 * decision_load: a load, not a test (no result line), for the tools suite's
 * timeline test (tests/tools/run.sh).  Two XQueues at Lv3 on the sim GPU,
 * batch at priority 0 and urgent at priority 10: the urgent kernel arrives
 * while the batch kernel holds every wave slot, so the in-process policy
 * suspends the batch XQueue because the urgent one has work, and resumes it
 * when the urgent one is idle.
 *
 * Prints "batch ID", "urgent ID" (library XQueue ids, as in the log), "pid
 * PID", and how many of those two decisions the library recorded (so a
 * missing trace line is told apart from a missing decision).  Exits 0 when
 * the work completed correctly, 1 otherwise.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vmutil.h"

#define MS 1000000ULL

/* Not a test: a load for the tools suite; a failed step says why and stops. */
#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		printf("#   %s:%d: %s: ", __FILE__, __LINE__, #cond);	\
		printf(__VA_ARGS__);					\
		printf("\n");						\
		return 1;						\
	}								\
} while (0)

#define CHECK_EQ(got, want) do {					\
	long long _g = (long long)(got), _w = (long long)(want);	\
	if (_g != _w) {							\
		printf("#   %s:%d: %s: expected %lld (%s), got %lld\n",	\
		       __FILE__, __LINE__, #got, _w, #want, _g);	\
		return 1;						\
	}								\
} while (0)

static int count(uint32_t queue, uint32_t action, uint32_t reason, uint32_t other)
{
	struct xsched_decision d[64];
	int n = xsched_decisions(d, 64, sizeof(*d)), i, c = 0;

	for (i = 0; i < n; i++)
		if (d[i].queue == queue && d[i].action == action &&
		    d[i].reason == reason && (!other || d[i].other == other))
			c++;
	return c;
}

static int run(struct vm_env *env)
{
	struct xsched_attr ab = vm_attr(XSCHED_LV3, 0), au = vm_attr(XSCHED_LV3, 10);
	struct xsched_xqueue *batch, *urg;
	struct xsched_sim_packet p;
	struct vm_buf bb, ub;
	uint64_t seq, t0;

	CHECK_EQ(vm_buf_alloc(env, &bb, vm_words(env->slots)), 0);
	CHECK_EQ(vm_buf_alloc(env, &ub, vm_words(1)), 0);
	CHECK_EQ(vm_new_xq(env, &batch, &ab), 0);
	CHECK_EQ(vm_new_xq(env, &urg, &au), 0);
	printf("batch %u\nurgent %u\npid %d\n", xsched_xqueue_id(batch),
	       xsched_xqueue_id(urg), (int)getpid());
	fflush(stdout);

	/* 100 steps of 2 ms on every slot: the GPU is full when urgent comes. */
	p = vm_packet(bb.gpu, env->slots, 100, 2 * MS, 9);
	CHECK_EQ(xsched_submit(batch, &p, 1, NULL), 0);
	t0 = vm_now_ns();
	while (vm_marks_between(bb.cpu, env->slots, 1, 100) < env->slots) {
		CHECK(vm_now_ns() - t0 < 10000 * MS, "the batch kernel did not start");
		usleep(1000);
	}
	p = vm_packet(ub.gpu, 1, 5, MS / 2, 1);
	CHECK_EQ(xsched_submit(urg, &p, 1, &seq), 0);
	CHECK_EQ(xsched_wait(urg, seq, -1), 0);
	CHECK_EQ(xsched_synchronize(batch), 0);
	CHECK(vm_check_output(ub.cpu, 1, 5, 1, "urgent"), "urgent output differs");
	CHECK(vm_check_output(bb.cpu, env->slots, 100, 9, "batch"), "batch output differs");
	printf("decisions suspend %d resume %d\n",
	       count(xsched_xqueue_id(batch), XSCHED_ACT_SUSPEND, XSCHED_WHY_HIGHER_BUSY,
		     xsched_xqueue_id(urg)),
	       count(xsched_xqueue_id(batch), XSCHED_ACT_RESUME, XSCHED_WHY_HIGHER_IDLE, 0));
	CHECK_EQ(xsched_xqueue_destroy(urg), 0);
	CHECK_EQ(xsched_xqueue_destroy(batch), 0);
	return 0;
}

int main(void)
{
	struct vm_env env;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!vm_env_open(&env))
		return 1;
	ret = run(&env);
	vm_env_close(&env);
	return ret;
}
