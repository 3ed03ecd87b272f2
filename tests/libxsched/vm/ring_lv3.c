// SPDX-License-Identifier: MIT
/*
 * Lv3 by ring address, the path hip/hsaq.c takes for a HIP stream once it knows
 * the stream's HSA queue: a runtime (here the test, as the stand-in HSA
 * runtime will) creates a sim queue with ring_addr = its ring; libxsched's
 * default attach (xs_hsaq_attach_default: the sim by ring address, else
 * kfd) gives a call XQueue that preemptor, and a suspend at Lv3 stops the
 * runtime's long kernel partway (SAVE) and resume finishes it, each step
 * exactly once.  A ring that is no queue of this process gets no preemptor.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vm_test.h"
#include "../../../libxsched/src/interpose/hip/hsaq.h"

/* The call XQueue's completion marks: nothing is submitted through it here. */
static int mark_record(void *ctx, void **mark)
{
	(void)ctx;
	*mark = NULL;
	return 0;
}

static int mark_wait(void *ctx, void *mark, int64_t timeout_ns)
{
	(void)ctx; (void)mark; (void)timeout_ns;
	return 0;
}

static void mark_free(void *ctx, void *mark)
{
	(void)ctx; (void)mark;
}

static const struct xsched_call_ops ops = { NULL, mark_record, mark_wait, mark_free };

static void *ring_page(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int sim_queue_with_ring(struct vm_env *env, uint64_t ring, uint32_t *id)
{
	struct xsched_sim_queue_create c;

	memset(&c, 0, sizeof(c));
	c.ring_size = 16;
	c.ring_addr = ring;
	if (ioctl(xsched_sim_fd(env->sim), XSCHED_IOC_SIM_QUEUE_CREATE, &c) < 0)
		return -errno;
	*id = c.queue_id;
	return 0;
}

TEST_F_TIMEOUT(vm, save_and_resume_by_ring, 300)
{
	struct vm_env *env = &self->env;
	struct xsched_attr a = vm_attr(XSCHED_LV1, 0);
	const uint32_t grid = 2 * env->slots, steps = 300;
	struct xsched_sim_packet p;
	struct xsched_sim_submit sub;
	struct xsched_sim_wait w;
	struct xsched_xq_info info;
	struct xsched_xqueue *xq;
	const char *via = "?";
	struct vm_buf buf;
	uint64_t ring, done;
	uint32_t id = 0;
	void *page = ring_page();

	ASSERT_TRUE(page != NULL) TH_LOG("mmap");
	ring = (uint64_t)(uintptr_t)page;
	ASSERT_EQ(0, sim_queue_with_ring(env, ring, &id));
	ASSERT_EQ(0, vm_buf_alloc(env, &buf, vm_words(grid)));
	ASSERT_EQ(0, xsched_xqueue_create_calls(&xq, &ops, NULL, &a));
	ASSERT_EQ(0, xs_hsaq_attach_default(xq, ring, &via));
	ASSERT_TRUE(strstr(via, "sim") != NULL)
		TH_LOG("attached by %s, expected the sim by ring", via);
	ASSERT_EQ(0, xsched_set_level(xq, XSCHED_LV3));

	/* The runtime's own kernel, written into its queue, not through xsched. */
	p = vm_packet(buf.gpu, grid, steps, 200000, 0x71e9);
	memset(&sub, 0, sizeof(sub));
	sub.queue_id = id;
	sub.count = 1;
	sub.packets = (uint64_t)(uintptr_t)&p;
	ASSERT_EQ(0, ioctl(xsched_sim_fd(env->sim), XSCHED_IOC_SIM_SUBMIT, &sub));
	while (vm_marks_sum(buf.cpu, grid) < env->slots)
		usleep(1000);

	ASSERT_EQ(0, xsched_suspend(xq, 0));
	ASSERT_EQ(0, xsched_query(xq, &info, sizeof(info)));
	done = vm_marks_sum(buf.cpu, grid);
	printf("# suspended by ring at Lv%u: %llu of %llu steps done, %llu bytes saved, %llu us\n",
	       info.level, (unsigned long long)done,
	       (unsigned long long)grid * steps, (unsigned long long)info.hw_saved_bytes,
	       (unsigned long long)(info.hw_last_suspend_ns / 1000));
	ASSERT_EQ(XSCHED_LV3, info.level);
	ASSERT_EQ(1, info.hw_suspends);
	ASSERT_TRUE(info.hw_saved_bytes > 0) TH_LOG("SAVE saved no wave state");
	ASSERT_TRUE(done < (uint64_t)grid * steps) TH_LOG("not stopped partway");
	usleep(20000);
	ASSERT_EQ(done, vm_marks_sum(buf.cpu, grid));	/* stopped means stopped */
	ASSERT_EQ(0, xsched_resume(xq));

	memset(&w, 0, sizeof(w));
	w.queue_id = id;
	w.seq = sub.seq;
	w.timeout_ns = 120ULL * 1000000000ULL;
	ASSERT_EQ(0, ioctl(xsched_sim_fd(env->sim), XSCHED_IOC_SIM_WAIT, &w));
	ASSERT_TRUE(vm_check_output(buf.cpu, grid, steps, 0x71e9, "kernel stopped by ring"))
		TH_LOG("output");
	ASSERT_EQ(0, xsched_xqueue_destroy(xq));
	munmap(page, 4096);
}

TEST_F_TIMEOUT(vm, unknown_ring_gets_no_preemptor, 300)
{
	struct xsched_attr a = vm_attr(XSCHED_LV1, 0);
	struct xsched_xqueue *xq;
	const char *via = "?";
	void *page = ring_page();
	int ret;

	ASSERT_TRUE(page != NULL) TH_LOG("mmap");
	ASSERT_EQ(0, xsched_xqueue_create_calls(&xq, &ops, NULL, &a));
	/* no sim queue has this ring, and the VM has no KFD */
	ret = xs_hsaq_attach_default(xq, (uint64_t)(uintptr_t)page, &via);
	ASSERT_TRUE(ret < 0) TH_LOG("attached a ring no queue has, by %s", via);
	ASSERT_EQ(-EOPNOTSUPP, xsched_set_level(xq, XSCHED_LV3));
	ASSERT_EQ(0, xsched_xqueue_destroy(xq));
	munmap(page, 4096);
}

TEST_HARNESS_MAIN
