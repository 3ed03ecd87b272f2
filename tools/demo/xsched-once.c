// SPDX-License-Identifier: GPL-2.0
/*
 * xsched-once: one urgent request preempting the batch queue, for a
 * timeline (`make demo` records it with `xschedctl timeline`).  A batch
 * queue (priority -1) fills every wave slot of the sim GPU with long
 * kernels; after 100 ms one short kernel arrives on an urgent queue
 * (priority 0).  Both are arbitrated: the module suspends the batch queue
 * (SAVE) because the urgent one is busy, and resumes it after.  Prints the
 * urgent request's latency; exits 0, or 1 if a call failed.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/xsched_kfd.h>
#include <linux/xsched_sim.h>

static int dev;		/* /dev/xsched: registration */
static int simdev;	/* /dev/xsched_sim: memory, queues, packets */

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* A sim queue registered for the arbiter; returns its sim queue id. */
static uint32_t queue(int prio, int *fd)
{
	struct xsched_sim_queue_create c = { .ring_size = 16 };
	struct xsched_register r = {
		.backend = XSCHED_BACKEND_SIM, .flags = XSCHED_REGISTER_ARBITRATE,
		.priority = prio,
	};

	if (ioctl(simdev, XSCHED_IOC_SIM_QUEUE_CREATE, &c))
		die("XSCHED_IOC_SIM_QUEUE_CREATE");
	r.handle = c.queue_id;
	r.backend_fd = (__u32)simdev;
	*fd = ioctl(dev, XSCHED_IOC_REGISTER, &r);
	if (*fd < 0)
		die("XSCHED_IOC_REGISTER");
	return c.queue_id;
}

static uint64_t submit(uint32_t q, uint32_t grid, uint32_t steps, uint64_t step_ns,
		       uint64_t dst)
{
	struct xsched_sim_packet p = {
		.kernel = XSCHED_SIM_KERNEL_ACCUMULATE, .grid = grid,
		.steps = steps, .step_ns = step_ns, .seed = 1, .dst = dst,
	};
	struct xsched_sim_submit s = { .queue_id = q, .count = 1, .packets = (uintptr_t)&p };

	if (ioctl(simdev, XSCHED_IOC_SIM_SUBMIT, &s))
		die("XSCHED_IOC_SIM_SUBMIT");
	return s.seq;
}

int main(void)
{
	struct xsched_sim_mem m = { .size = 1 << 16 };
	struct xsched_sim_info v = {};
	int bfd, ufd;
	uint32_t bq, uq, slots;
	uint64_t t0, seq;

	dev = open("/dev/" XSCHED_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (dev < 0)
		die("open /dev/xsched (is xsched_kfd.ko loaded?)");
	simdev = open("/dev/" XSCHED_SIM_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (simdev < 0)
		die("open /dev/" XSCHED_SIM_DEVICE_NAME " (is xsched_sim.ko loaded?)");
	if (ioctl(simdev, XSCHED_IOC_SIM_INFO, &v) || ioctl(simdev, XSCHED_IOC_SIM_MEM_ALLOC, &m))
		die("XSCHED_IOC_SIM_INFO/SIM_MEM_ALLOC");
	slots = v.cus * v.waves_per_cu;
	bq = queue(-1, &bfd);
	uq = queue(0, &ufd);
	/* Workgroups of 40 x 10 ms: the batch kernel runs on well past the request. */
	submit(bq, slots, 40, 10000000, m.gpu_addr);
	usleep(100000);
	t0 = now_ns();
	seq = submit(uq, 4, 10, 100000, m.gpu_addr + 32768);
	{
		struct xsched_sim_wait w = {
			.queue_id = uq, .seq = seq, .timeout_ns = 60ull * 1000000000ull,
		};

		if (ioctl(simdev, XSCHED_IOC_SIM_WAIT, &w))
			die("XSCHED_IOC_SIM_WAIT");
	}
	printf("urgent request: %.2f ms while the batch queue filled the GPU\n",
	       (now_ns() - t0) / 1e6);
	/* Let the arbiter resume the batch queue, so the timeline shows it. */
	usleep(50000);
	close(ufd);
	close(bfd);
	close(simdev);
	close(dev);
	return 0;
}
