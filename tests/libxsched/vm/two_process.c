// SPDX-License-Identifier: MIT
/*
 * Two XQueues of different priority in two processes, on the sim GPU.
 *
 * A batch process runs one kernel whose workgroups fill every wave slot and
 * last BATCH_STEPS x BATCH_STEP_NS each; an urgent process (forked, its own
 * /dev/xsched client) submits short kernels at a higher priority while it
 * runs.  In arbiter mode both XQueues are registered with the module's
 * arbiter, which saves the batch queue for the urgent kernels: urgent latency
 * must be well below the batch workgroup length.  Without arbiter mode the
 * in-process policies of the two processes cannot see each other, so the
 * urgent kernels wait for batch workgroups; that latency is only printed.
 * Both outputs must equal the CPU reference, step marks included (every step
 * exactly once), either way.  Only a ratio against a length set by the test is asserted, never an
 * absolute time.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vm_test.h"

/*
 * The workgroup is simulated time; the arbiter's pass and the CUs' save cost
 * CPU time, which a debug kernel in a VM short of CPU stretches past 100 ms.
 */
#define BATCH_STEPS	80
#define BATCH_STEP_NS	10000000ULL			/* 10 ms */
#define BATCH_WG_NS	(BATCH_STEPS * BATCH_STEP_NS)	/* 800 ms */
#define URG_KERNELS	3
#define URG_GRID	4
#define URG_STEPS	5
#define URG_STEP_NS	500000ULL			/* 0.5 ms: 2.5 ms kernels */
#define URG_PRIO	10

struct urgent_result {
	int err;		/* 0, or a negative errno */
	int line;		/* where it failed */
	uint64_t lat_ns[URG_KERNELS];
	uint64_t steps_done;
	uint32_t arbiter;
	int suspend_ret;	/* xsched_suspend() on the urgent XQueue */
};

static struct xsched_attr attr(int32_t prio, uint32_t arbiter)
{
	struct xsched_attr a;

	memset(&a, 0, sizeof(a));
	a.flags = XSCHED_ATTR_LEVEL | XSCHED_ATTR_PRIORITY | XSCHED_ATTR_ARBITER;
	a.level = XSCHED_LV3;
	a.priority = prio;
	a.arbiter = arbiter;
	return a;
}

static int read_full(int fd, void *buf, size_t n)
{
	char *p = buf;

	while (n) {
		ssize_t r = read(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -EIO;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

#define URG_TRY(expr) do {						\
	int _r = (expr);						\
	if (_r) {							\
		res.err = _r < 0 ? _r : -EIO;				\
		res.line = __LINE__;					\
		goto out;						\
	}								\
} while (0)

/*
 * The urgent process: its own client and XQueue; says 'r' once registered,
 * waits for 'g', runs URG_KERNELS short kernels one after another (each timed
 * from submit to completion) and writes a struct urgent_result.
 */
static void urgent_process(uint32_t arbiter, int to_parent, int from_parent)
{
	struct xsched_attr a = attr(URG_PRIO, arbiter);
	struct urgent_result res;
	struct xsched_xqueue *xq = NULL;
	struct xsched_xq_info info;
	struct xsched_sim *sim = NULL;
	uint64_t gpu, seq, t0;
	uint32_t qid, k;
	void *cpu;
	char c;

	memset(&res, 0, sizeof(res));
	URG_TRY(xsched_sim_open(&sim, NULL));
	URG_TRY(xsched_sim_alloc(sim, URG_KERNELS * vm_words(URG_GRID) * 8, &gpu, &cpu));
	memset(cpu, 0, URG_KERNELS * vm_words(URG_GRID) * 8);
	URG_TRY(xsched_sim_queue_create(sim, 16, &qid));
	URG_TRY(xsched_xqueue_create_sim(&xq, sim, qid, &a));
	URG_TRY(write(to_parent, "r", 1) != 1);
	URG_TRY(read_full(from_parent, &c, 1));
	for (k = 0; k < URG_KERNELS; k++) {
		struct xsched_sim_packet p = vm_packet(gpu + (uint64_t)k * vm_words(URG_GRID) * 8,
						       URG_GRID, URG_STEPS, URG_STEP_NS,
						       50 + k);

		if (k)
			usleep(10000);
		t0 = vm_now_ns();
		URG_TRY(xsched_submit(xq, &p, 1, &seq));
		URG_TRY(xsched_wait(xq, seq, -1));
		res.lat_ns[k] = vm_now_ns() - t0;
	}
	for (k = 0; k < URG_KERNELS; k++)
		URG_TRY(!vm_check_output((uint64_t *)cpu + (size_t)k * vm_words(URG_GRID), URG_GRID,
					 URG_STEPS, 50 + k, "urgent"));
	URG_TRY(xsched_query(xq, &info, sizeof(info)));
	res.steps_done = info.hw_steps_done;
	res.arbiter = info.arbiter;
	res.suspend_ret = xsched_suspend(xq, 0);
	if (!res.suspend_ret)
		(void)xsched_resume(xq);
out:
	if (xq)
		(void)xsched_xqueue_destroy(xq);
	if (sim)
		xsched_sim_close(sim);
	if (write(to_parent, &res, sizeof(res)) != sizeof(res))
		_exit(3);
	fflush(stdout);
	_exit(res.err ? 1 : 0);
}

static int count_arbiter_decisions(uint32_t queue, uint32_t action)
{
	struct xsched_decision d[XSCHED_DECISION_LOG_SIZE];
	int n = xsched_decisions(d, XSCHED_DECISION_LOG_SIZE, sizeof(*d)), i, k = 0;

	for (i = 0; i < n; i++)
		if (d[i].queue == queue && d[i].action == action &&
		    d[i].reason == XSCHED_WHY_ARBITER)
			k++;
	return k;
}

struct pair_result {
	struct urgent_result urg;
	uint64_t max_lat_ns;
	struct xsched_xq_info batch;
	int arb_suspend_decisions, arb_resume_decisions;
	int batch_suspend_ret;
};

/* The batch process (this one) beside a forked urgent process. */
static void run_pair(struct __test_metadata *_metadata,
		     struct vm_env *env, uint32_t arbiter, struct pair_result *pr)
{
	struct xsched_attr a = attr(0, arbiter);
	int up[2], down[2], status, i;
	struct xsched_xqueue *batch;
	struct xsched_sim_packet p;
	struct vm_buf bb;
	uint64_t bseq, t0;
	uint32_t qid;
	pid_t pid;
	char c;

	memset(pr, 0, sizeof(*pr));
	ASSERT_EQ(0, vm_buf_alloc(env, &bb, vm_words(env->slots)));
	ASSERT_EQ(0, xsched_sim_queue_create(env->sim, 16, &qid));
	/* Fork before this process has any XQueue (and library threads). */
	ASSERT_TRUE(!pipe(up) && !pipe(down)) TH_LOG("pipe: %s", strerror(errno));
	fflush(stdout);
	pid = fork();
	ASSERT_TRUE(pid >= 0) TH_LOG("fork: %s", strerror(errno));
	if (pid == 0) {
		close(up[0]);
		close(down[1]);
		urgent_process(arbiter, up[1], down[0]);
	}
	close(up[1]);
	close(down[0]);
	if (read_full(up[0], &c, 1)) {
		/* The child failed before registering: get its reason. */
		waitpid(pid, &status, 0);
		ASSERT_TRUE(0) TH_LOG("the urgent process failed to start");
	}

	ASSERT_EQ(0, xsched_xqueue_create_sim(&batch, env->sim, qid, &a));
	p = vm_packet(bb.gpu, env->slots, BATCH_STEPS, BATCH_STEP_NS, 77);
	ASSERT_EQ(0, xsched_submit(batch, &p, 1, &bseq));
	/* Wait until the batch workgroups run (occupy every slot). */
	t0 = vm_now_ns();
	for (;;) {
		ASSERT_EQ(0, xsched_query(batch, &pr->batch, sizeof(pr->batch)));
		if (pr->batch.hw_steps_done >= env->slots)
			break;
		ASSERT_TRUE(vm_now_ns() - t0 < 10000000000ULL)
			TH_LOG("the batch kernel did not start");
		usleep(1000);
	}
	pr->batch_suspend_ret = xsched_suspend(batch, XSCHED_SUSPEND_NONBLOCK);
	if (!pr->batch_suspend_ret) {
		ASSERT_EQ(0, xsched_resume(batch));
	}
	ASSERT_EQ(1, write(down[1], "g", 1));
	ASSERT_EQ(0, read_full(up[0], &pr->urg, sizeof(pr->urg)));
	waitpid(pid, &status, 0);
	close(up[0]);
	close(down[1]);
	ASSERT_TRUE(!pr->urg.err)
		TH_LOG("urgent process: %s at line %d", strerror(-pr->urg.err), pr->urg.line);
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("urgent process status %d", status);

	ASSERT_EQ(0, xsched_synchronize(batch));
	ASSERT_TRUE(vm_check_output(bb.cpu, env->slots, BATCH_STEPS, 77, "batch"))
		TH_LOG("batch output differs from the CPU reference");
	ASSERT_EQ(0, xsched_query(batch, &pr->batch, sizeof(pr->batch)));
	/* Every step exactly once: none lost or repeated across saves. */
	ASSERT_EQ((uint64_t)env->slots * BATCH_STEPS, pr->batch.hw_steps_done);
	ASSERT_EQ((uint64_t)URG_KERNELS * URG_GRID * URG_STEPS, pr->urg.steps_done);
	for (i = 0; i < URG_KERNELS; i++)
		if (pr->urg.lat_ns[i] > pr->max_lat_ns)
			pr->max_lat_ns = pr->urg.lat_ns[i];
	pr->arb_suspend_decisions = count_arbiter_decisions(xsched_xqueue_id(batch),
							    XSCHED_ACT_SUSPEND);
	pr->arb_resume_decisions = count_arbiter_decisions(xsched_xqueue_id(batch),
							   XSCHED_ACT_RESUME);
	ASSERT_EQ(0, xsched_xqueue_destroy(batch));
}

static void print_pair(const char *what, const struct pair_result *pr)
{
	printf("#   %s: urgent latency %llu, %llu, %llu us (max %llu us = %.3f of the %llu ms batch workgroup); batch: %llu arbiter suspends, %d/%d arbiter decisions seen\n",
	       what, (unsigned long long)(pr->urg.lat_ns[0] / 1000),
	       (unsigned long long)(pr->urg.lat_ns[1] / 1000),
	       (unsigned long long)(pr->urg.lat_ns[2] / 1000),
	       (unsigned long long)(pr->max_lat_ns / 1000),
	       (double)pr->max_lat_ns / (double)BATCH_WG_NS,
	       (unsigned long long)(BATCH_WG_NS / 1000000),
	       (unsigned long long)pr->batch.hw_arbiter_suspends,
	       pr->arb_suspend_decisions, pr->arb_resume_decisions);
}

TEST_F_TIMEOUT(vm, arbiter_urgent_process_preempts_batch_process, 300)
{
	struct vm_env *env = &self->env;
	struct pair_result pr;

	run_pair(_metadata, env, 1, &pr);
	print_pair("arbiter on", &pr);
	ASSERT_EQ(1, pr.batch.arbiter);
	ASSERT_EQ(1, pr.urg.arbiter);
	/* One owner of an arbitrated queue's state: the module. */
	ASSERT_EQ(-EBUSY, pr.batch_suspend_ret);
	ASSERT_EQ(-EBUSY, pr.urg.suspend_ret);
	ASSERT_TRUE(pr.batch.hw_arbiter_suspends >= 1)
		TH_LOG("the module's arbiter never suspended the batch queue");
	ASSERT_TRUE(pr.max_lat_ns * 2 < BATCH_WG_NS)
		TH_LOG("urgent latency %llu us is not below half the %llu ms batch workgroup",
		       (unsigned long long)(pr.max_lat_ns / 1000),
		       (unsigned long long)(BATCH_WG_NS / 1000000));
	/* The library saw it happen and logged it. */
	ASSERT_TRUE(pr.arb_suspend_decisions >= 1) TH_LOG("no arbiter suspend decision recorded");
	ASSERT_TRUE(pr.arb_resume_decisions >= 1) TH_LOG("no arbiter resume decision recorded");
}

TEST_F_TIMEOUT(vm, no_arbiter_two_processes_do_not_see_each_other, 300)
{
	struct vm_env *env = &self->env;
	struct pair_result pr;

	run_pair(_metadata, env, 0, &pr);
	print_pair("arbiter off", &pr);
	ASSERT_EQ(0, pr.batch.arbiter);
	ASSERT_EQ(0, pr.batch.hw_arbiter_suspends);
	ASSERT_EQ(0, pr.batch_suspend_ret);	/* the library's own hold works */
	ASSERT_EQ(0, pr.urg.suspend_ret);
}

TEST_HARNESS_MAIN
