// SPDX-License-Identifier: GPL-2.0
/*
 * xsched-load SECONDS: known work on the sim GPU for the tools tests to look
 * at with xschedctl list/top/timeline.  Three queues:
 *
 *   batch   priority -1, arbitrated: long kernels, always queued
 *   urgent  priority  5, arbitrated: a short kernel every 50 ms, so the
 *           arbiter suspends the batch queue because this one is busy
 *   manual  priority -2, not arbitrated: long kernels, suspended (SAVE) and
 *           resumed by this process itself every other tick
 *
 * Prints "batch UID", "urgent UID", "manual UID" and "pid PID" at once, then
 * runs for SECONDS and exits 0 (1 on any failed call).  Priority 5 needs
 * CAP_SYS_NICE: run as root.
 *
 * xsched-load SECONDS plain: for xschedctl's administrator commands, the batch
 * queue and, instead of the other two, "plain UID": priority 0, not
 * arbitrated, long kernels, never suspended by this process.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/xsched_kfd.h>
#include <linux/xsched_sim.h>

static int dev;		/* /dev/xsched: registration */
static int simdev;	/* /dev/xsched_sim: memory, queues, packets */

struct q {
	uint32_t id, uid;
	int fd;
	uint64_t seq;
};

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void open_queue(struct q *q, int prio, uint32_t flags)
{
	struct xsched_sim_queue_create c = { .ring_size = 64 };
	struct xsched_register r = { .backend = XSCHED_BACKEND_SIM, .flags = flags };

	if (ioctl(simdev, XSCHED_IOC_SIM_QUEUE_CREATE, &c))
		die("XSCHED_IOC_SIM_QUEUE_CREATE");
	r.handle = c.queue_id;
	r.priority = prio;
	r.backend_fd = (__u32)simdev;
	q->fd = ioctl(dev, XSCHED_IOC_REGISTER, &r);
	if (q->fd < 0)
		die("XSCHED_IOC_REGISTER");
	q->id = c.queue_id;
	q->uid = r.queue_uid;
}

static void submit(struct q *q, uint32_t grid, uint32_t steps, uint64_t step_ns,
		   uint64_t dst)
{
	struct xsched_sim_packet p = {
		.kernel = XSCHED_SIM_KERNEL_ACCUMULATE, .grid = grid,
		.steps = steps, .step_ns = step_ns, .seed = 7, .dst = dst,
	};
	struct xsched_sim_submit s = {
		.queue_id = q->id, .count = 1, .packets = (uintptr_t)&p,
	};

	if (ioctl(simdev, XSCHED_IOC_SIM_SUBMIT, &s))
		die("XSCHED_IOC_SIM_SUBMIT");
	q->seq = s.seq;
}

static uint64_t completed(struct q *q, uint64_t seq, uint64_t timeout_ns)
{
	struct xsched_sim_wait w = {
		.queue_id = q->id, .seq = seq, .timeout_ns = timeout_ns,
	};

	if (ioctl(simdev, XSCHED_IOC_SIM_WAIT, &w) && errno != ETIMEDOUT)
		die("XSCHED_IOC_SIM_WAIT");
	return w.completed;
}

/* Keep two long kernels queued. */
static void top_up(struct q *q, uint32_t grid, uint64_t dst)
{
	while (q->seq - completed(q, q->seq, 0) < 2)
		submit(q, grid, 20, 5000000, dst);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct xsched_sim_mem m = { .size = 1 << 16 };
	struct xsched_sim_info v = {};
	struct q batch = {}, urgent = {}, manual = {};
	uint64_t end, tick = 0;
	uint32_t slots;
	bool plain;
	int secs;

	plain = argc == 3 && !strcmp(argv[2], "plain");
	if ((argc != 2 && !plain) || (secs = atoi(argv[1])) <= 0) {
		fprintf(stderr, "usage: xsched-load SECONDS [plain]\n");
		return 2;
	}
	dev = open("/dev/" XSCHED_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (dev < 0)
		die("/dev/" XSCHED_DEVICE_NAME);
	simdev = open("/dev/" XSCHED_SIM_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (simdev < 0)
		die("open /dev/" XSCHED_SIM_DEVICE_NAME " (is xsched_sim.ko loaded?)");
	if (ioctl(simdev, XSCHED_IOC_SIM_INFO, &v) || ioctl(simdev, XSCHED_IOC_SIM_MEM_ALLOC, &m))
		die("XSCHED_IOC_SIM_INFO/SIM_MEM_ALLOC");
	slots = v.cus * v.waves_per_cu;
	if (plain) {
		open_queue(&batch, -1, XSCHED_REGISTER_ARBITRATE);
		open_queue(&manual, 0, 0);
		printf("batch %u\nplain %u\npid %d\n", batch.uid, manual.uid, (int)getpid());
		fflush(stdout);
		end = now_ns() + (uint64_t)secs * 1000000000ull;
		while (now_ns() < end) {
			usleep(50000);
			top_up(&batch, slots, m.gpu_addr);
			top_up(&manual, slots / 2, m.gpu_addr + 8 * slots);
		}
		return 0;
	}
	open_queue(&batch, -1, XSCHED_REGISTER_ARBITRATE);
	open_queue(&urgent, 5, XSCHED_REGISTER_ARBITRATE);
	open_queue(&manual, -2, 0);
	printf("batch %u\nurgent %u\nmanual %u\npid %d\n", batch.uid, urgent.uid,
	       manual.uid, (int)getpid());
	fflush(stdout);

	end = now_ns() + (uint64_t)secs * 1000000000ull;
	while (now_ns() < end) {
		usleep(50000);
		top_up(&batch, slots, m.gpu_addr);
		top_up(&manual, slots / 2, m.gpu_addr + 8 * slots);
		if (tick++ % 2 == 0) {
			struct xsched_suspend s = { .mode = XSCHED_MODE_SAVE };

			if (ioctl(manual.fd, XSCHED_IOC_SUSPEND, &s))
				die("XSCHED_IOC_SUSPEND");
		} else {
			struct xsched_resume r = {};

			if (ioctl(manual.fd, XSCHED_IOC_RESUME, &r))
				die("XSCHED_IOC_RESUME");
		}
		submit(&urgent, 4, 10, 100000, m.gpu_addr + 32768);
		if (completed(&urgent, urgent.seq, 60ull * 1000000000ull) < urgent.seq)
			die("urgent kernel did not complete");
	}
	/* Closing resumes the manual queue; the kernels left are dropped with the client. */
	close(manual.fd);
	close(urgent.fd);
	close(batch.fd);
	close(simdev);
	close(dev);
	return 0;
}
