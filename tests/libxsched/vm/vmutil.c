// SPDX-License-Identifier: MIT
/* Helpers for the VM tests; see vmutil.h. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vmutil.h"

uint64_t vm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

bool vm_env_open(struct vm_env *env)
{
	int ret;

	memset(env, 0, sizeof(*env));
	ret = xsched_sim_open(&env->sim, NULL);
	if (ret) {
		printf("# cannot open the sim GPU (/dev/xsched, /dev/xsched_sim): %s\n",
		       strerror(-ret));
		return false;
	}
	if (ioctl(xsched_sim_fd(env->sim), XSCHED_IOC_SIM_INFO, &env->info) < 0) {
		printf("# XSCHED_IOC_SIM_INFO: %s\n", strerror(errno));
		xsched_sim_close(env->sim);
		return false;
	}
	env->slots = env->info.cus * env->info.waves_per_cu;
	return true;
}

void vm_env_close(struct vm_env *env)
{
	xsched_sim_close(env->sim);
	env->sim = NULL;
}

int vm_buf_alloc(struct vm_env *env, struct vm_buf *b, uint32_t words)
{
	void *cpu;
	int ret;

	ret = xsched_sim_alloc(env->sim, (uint64_t)words * 8, &b->gpu, &cpu);
	if (ret)
		return ret;
	b->cpu = cpu;
	b->words = words;
	memset(cpu, 0, (size_t)words * 8);
	return 0;
}

struct xsched_sim_packet vm_packet(uint64_t dst, uint32_t grid, uint32_t steps,
				   uint64_t step_ns, uint64_t seed)
{
	struct xsched_sim_packet p;

	memset(&p, 0, sizeof(p));
	p.kernel = XSCHED_SIM_KERNEL_MARK;
	p.grid = grid;
	p.steps = steps;
	p.step_ns = step_ns;
	p.seed = seed;
	p.dst = dst;
	return p;
}

static uint64_t reference(uint64_t seed, uint32_t wg, uint32_t steps)
{
	__u32 lds[XSCHED_SIM_LDS_WORDS];
	uint64_t acc = xsched_sim_init(seed, wg);
	uint32_t s;

	memset(lds, 0, sizeof(lds));
	for (s = 0; s < steps; s++)
		acc = xsched_sim_step(acc, s, lds);
	return xsched_sim_finish(acc, lds);
}

bool vm_check_output(const uint64_t *dst, uint32_t grid, uint32_t steps,
		     uint64_t seed, const char *what)
{
	uint32_t wg;

	for (wg = 0; wg < grid; wg++) {
		uint64_t want = reference(seed, wg, steps);

		if (dst[wg] != want) {
			printf("#   %s: workgroup %u of %u: got %016llx, CPU reference %016llx\n",
			       what, wg, grid, (unsigned long long)dst[wg],
			       (unsigned long long)want);
			return false;
		}
		if (dst[grid + wg] != steps) {
			printf("#   %s: workgroup %u of %u executed %llu steps by its marks, expected exactly %u (a step re-run or lost)\n",
			       what, wg, grid, (unsigned long long)dst[grid + wg], steps);
			return false;
		}
	}
	return true;
}

uint64_t vm_marks_sum(const uint64_t *dst, uint32_t grid)
{
	uint64_t sum = 0;
	uint32_t wg;

	for (wg = 0; wg < grid; wg++)
		sum += __atomic_load_n(&dst[grid + wg], __ATOMIC_RELAXED);
	return sum;
}

uint32_t vm_marks_between(const uint64_t *dst, uint32_t grid, uint64_t lo,
			  uint64_t hi)
{
	uint32_t wg, n = 0;

	for (wg = 0; wg < grid; wg++) {
		uint64_t m = __atomic_load_n(&dst[grid + wg], __ATOMIC_RELAXED);

		n += m >= lo && m <= hi;
	}
	return n;
}

struct xsched_attr vm_attr(unsigned int level, int32_t prio)
{
	struct xsched_attr a;

	memset(&a, 0, sizeof(a));
	a.flags = XSCHED_ATTR_LEVEL | XSCHED_ATTR_PRIORITY;
	a.level = level;
	a.priority = prio;
	return a;
}

int vm_new_xq(struct vm_env *env, struct xsched_xqueue **xq,
	      const struct xsched_attr *a)
{
	uint32_t qid;
	int ret;

	ret = xsched_sim_queue_create(env->sim, 256, &qid);
	if (ret)
		return ret;
	return xsched_xqueue_create_sim(xq, env->sim, qid, a);
}
