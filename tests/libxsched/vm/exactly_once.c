// SPDX-License-Identifier: MIT
/*
 * Exactly-once under the policy: a batch XQueue keeps the sim GPU busy with
 * kernels of random shapes while urgent XQueues receive many kernels at random
 * times, so the batch queue is held and released over and over: at Lv2/Lv3
 * the module suspends its hardware queue (DRAIN or SAVE, often mid-kernel;
 * checked in the module's own count), at Lv1 the library stops launching
 * (what that hold does on the GPU is priority.c's Lv1 test).  Every kernel's output must equal the CPU
 * reference: no workgroup lost, none run twice, no step skipped; the kernels'
 * step marks in device memory (MARK kernels) must say each step ran exactly
 * once, which a workgroup re-run from its first step cannot fake.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vm_test.h"

#define BATCH_KERNELS 40
#define URGENT_KERNELS 60

struct kern {
	uint32_t grid, steps;
	uint64_t seed;
	uint64_t off;		/* word offset in the buffer */
};

struct stream {
	struct xsched_xqueue *xq;
	struct vm_buf buf;
	struct kern k[URGENT_KERNELS > BATCH_KERNELS ? URGENT_KERNELS : BATCH_KERNELS];
	int n;
	uint64_t step_ns;
	unsigned int seed;
	bool random_gaps;
	int err;
};

static int make_stream(struct vm_env *env, struct stream *s, unsigned int level,
		       int32_t prio, int n, uint32_t max_grid, uint32_t max_steps,
		       uint64_t step_ns, unsigned int seed)
{
	struct xsched_attr a;
	uint64_t words = 0;
	uint32_t qid;
	int i, ret;

	memset(s, 0, sizeof(*s));
	s->n = n;
	s->step_ns = step_ns;
	s->seed = seed;
	for (i = 0; i < n; i++) {
		s->k[i].grid = 1 + (uint32_t)rand_r(&s->seed) % max_grid;
		s->k[i].steps = 1 + (uint32_t)rand_r(&s->seed) % max_steps;
		s->k[i].seed = ((uint64_t)rand_r(&s->seed) << 32) | (uint64_t)i;
		s->k[i].off = words;
		words += vm_words(s->k[i].grid);
	}
	ret = vm_buf_alloc(env, &s->buf, (uint32_t)words);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.flags = XSCHED_ATTR_LEVEL | XSCHED_ATTR_PRIORITY;
	a.level = level;
	a.priority = prio;
	if (level == XSCHED_LV1) {
		a.flags |= XSCHED_ATTR_THRESHOLD | XSCHED_ATTR_BATCH;
		a.threshold = 4;
		a.batch = 2;
	}
	ret = xsched_sim_queue_create(env->sim, 64, &qid);
	if (ret)
		return ret;
	return xsched_xqueue_create_sim(&s->xq, env->sim, qid, &a);
}

static void *feed(void *arg)
{
	struct stream *s = arg;
	int i;

	for (i = 0; i < s->n && !s->err; i++) {
		struct xsched_sim_packet p = vm_packet(s->buf.gpu + s->k[i].off * 8,
						       s->k[i].grid, s->k[i].steps,
						       s->step_ns, s->k[i].seed);

		if (s->random_gaps)
			usleep((useconds_t)(rand_r(&s->seed) % 8000));
		s->err = xsched_submit(s->xq, &p, 1, NULL);
		/* Sometimes wait, so that the queue goes idle and busy again. */
		if (!s->err && s->random_gaps && rand_r(&s->seed) % 3 == 0)
			s->err = xsched_synchronize(s->xq);
	}
	if (!s->err)
		s->err = xsched_synchronize(s->xq);
	return NULL;
}

static int check_stream(struct __test_metadata *_metadata, struct stream *s, const char *name)
{
	char what[64];
	int i;

	for (i = 0; i < s->n; i++) {
		snprintf(what, sizeof(what), "%s kernel %d", name, i);
		ASSERT_TRUE(vm_check_output(s->buf.cpu + s->k[i].off, s->k[i].grid, s->k[i].steps,
					    s->k[i].seed, what))
			TH_LOG("output differs");
	}
	return 0;
}

static void run(struct __test_metadata *_metadata,
		struct vm_env *env, unsigned int batch_level, int urgent_streams)
{
	struct stream *b, *u;
	struct xsched_xq_info info;
	pthread_t tb, tu[2];
	int i;

	b = calloc(1, sizeof(*b));
	u = calloc(2, sizeof(*u));
	ASSERT_TRUE(b && u) TH_LOG("out of memory");
	/* Batch: up to 3 waves per slot, up to 40 steps of 0.5 ms. */
	ASSERT_EQ(0, make_stream(env, b, batch_level, 0, BATCH_KERNELS, 3 * env->slots, 40,
			     500000, 7 + batch_level));
	for (i = 0; i < urgent_streams; i++) {
		ASSERT_EQ(0, make_stream(env, &u[i], XSCHED_LV3, 10 + i, URGENT_KERNELS,
				     env->slots, 8, 200000, 100 + (unsigned int)i));
		u[i].random_gaps = true;
	}
	pthread_create(&tb, NULL, feed, b);
	for (i = 0; i < urgent_streams; i++)
		pthread_create(&tu[i], NULL, feed, &u[i]);
	pthread_join(tb, NULL);
	for (i = 0; i < urgent_streams; i++)
		pthread_join(tu[i], NULL);
	ASSERT_EQ(0, b->err);
	for (i = 0; i < urgent_streams; i++) {
		ASSERT_EQ(0, u[i].err);
	}
	ASSERT_EQ(0, check_stream(_metadata, b, "batch"));
	for (i = 0; i < urgent_streams; i++) {
		ASSERT_EQ(0, check_stream(_metadata, &u[i], "urgent"));
	}
	ASSERT_EQ(0, xsched_query(b->xq, &info, sizeof(info)));
	printf("#   batch Lv%u: held %llu times (%llu us), %llu hardware suspends, %llu bytes saved\n",
	       batch_level, (unsigned long long)info.suspends,
	       (unsigned long long)(info.suspended_ns / 1000),
	       (unsigned long long)info.hw_suspends,
	       (unsigned long long)info.hw_saved_bytes);
	ASSERT_EQ(info.resumes, info.suspends);
	if (batch_level == XSCHED_LV1) {
		/*
		 * Coverage, from the library's own count: its stop path ran.
		 * Lv1 never suspends the hardware queue.
		 */
		ASSERT_TRUE(info.suspends >= 3)
			TH_LOG("the library held the batch queue only %llu times",
			       (unsigned long long)info.suspends);
		ASSERT_EQ(0, info.hw_suspends);
	} else {
		/* The module's count of suspends that completed on the GPU. */
		ASSERT_TRUE(info.hw_suspends >= 3)
			TH_LOG("the module suspended the batch queue only %llu times",
			       (unsigned long long)info.hw_suspends);
		if (batch_level == XSCHED_LV3) {
			ASSERT_TRUE(info.hw_saved_bytes > 0) TH_LOG("no wave was saved mid-kernel");
		} else {
			ASSERT_EQ(0, info.hw_saved_bytes);
		}
	}
	ASSERT_EQ(BATCH_KERNELS, info.completed);
	for (i = 0; i < urgent_streams; i++) {
		ASSERT_EQ(0, xsched_xqueue_destroy(u[i].xq));
	}
	ASSERT_EQ(0, xsched_xqueue_destroy(b->xq));
	free(b);
	free(u);
}

TEST_F_TIMEOUT(vm, batch_lv1_random_urgent_arrivals, 300)
{
	struct vm_env *env = &self->env;
	run(_metadata, env, XSCHED_LV1, 1);
}

TEST_F_TIMEOUT(vm, batch_lv2_random_urgent_arrivals, 300)
{
	struct vm_env *env = &self->env;
	run(_metadata, env, XSCHED_LV2, 1);
}

TEST_F_TIMEOUT(vm, batch_lv3_random_urgent_arrivals, 300)
{
	struct vm_env *env = &self->env;
	run(_metadata, env, XSCHED_LV3, 1);
}

TEST_F_TIMEOUT(vm, batch_lv3_two_urgent_priorities, 300)
{
	struct vm_env *env = &self->env;
	run(_metadata, env, XSCHED_LV3, 2);
}

TEST_HARNESS_MAIN
