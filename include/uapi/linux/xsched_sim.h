/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * xsched_sim: the sim GPU, a TEST DEVICE.  Not for production: a server loads
 * xsched_kfd.ko alone.  The tests and the demo load xsched_sim.ko beside it;
 * it registers the sim backend with xsched_kfd.ko (see Documentation/sim.rst).
 *
 *   open("/dev/xsched_sim")       -> a sim context: device memory (mmap() on
 *                                    this fd) and sim queues
 *   XSCHED_IOC_SIM_QUEUE_CREATE   -> a queue id within this context: the
 *                                    lowest free one, as KFD hands them out
 *   XSCHED_IOC_SIM_QUEUE_DESTROY  -> the queue stops and its id is free; a
 *                                    registration of it fails (ENODEV)
 *   /dev/xsched's XSCHED_IOC_REGISTER with backend XSCHED_BACKEND_SIM,
 *   handle = queue id, backend_fd = this fd  -> a queue fd
 *   ... or with XSCHED_REGISTER_BY_RING, handle = the ring_addr the queue
 *   was created with, backend_fd = 0 (any sim fd of the calling process,
 *   as the kfd backend finds a queue by its ring base) -> a queue fd
 *   close(sim fd)                 -> its memory and queues go away once no
 *                                    queue fd refers to them any more
 *
 * The same argument rules as <linux/xsched_kfd.h>: unknown flags or non-zero
 * reserved fields give EINVAL.
 */
#ifndef _UAPI_LINUX_XSCHED_SIM_H
#define _UAPI_LINUX_XSCHED_SIM_H

#include <linux/ioctl.h>
#include <linux/types.h>
#include <linux/xsched_kfd.h>

#define XSCHED_SIM_DEVICE_NAME	"xsched_sim"

/* XSCHED_IOC_SIM_INFO: the sim GPU's shape. */
struct xsched_sim_info {
	__u32 cus;			/* out: compute units */
	__u32 waves_per_cu;		/* out: wave slots per compute unit */
	__u32 wave_state_bytes;		/* out: bytes one saved wave occupies */
	__u32 reserved0;		/* out: zero */
	__u64 reserved[4];		/* out: zero */
};

/* XSCHED_IOC_SIM_MEM_ALLOC: device memory of the sim GPU, mappable with mmap(). */
struct xsched_sim_mem {
	__u64 size;		/* in: bytes, 1..XSCHED_SIM_MEM_MAX */
	__u32 flags;		/* in: must be 0 */
	__u32 reserved0;	/* in: must be 0 */
	__u64 gpu_addr;		/* out: device address; also the mmap() offset */
	__u64 reserved[2];	/* in: must be 0 */
};

#define XSCHED_SIM_MEM_MAX	(64ULL << 20)
#define XSCHED_SIM_MEM_BUFFERS	64	/* per sim fd */

/* XSCHED_IOC_SIM_QUEUE_CREATE */
struct xsched_sim_queue_create {
	__u32 ring_size;	/* in: packets, power of two, 2..XSCHED_SIM_RING_MAX */
	__u32 flags;		/* in: must be 0 */
	__u32 queue_id;		/* out: id of the sim queue within this sim fd */
	__u32 reserved0;	/* in: must be 0 */
	__u64 save_area_size;	/* out: bytes of the queue's CWSR save area */
	/*
	 * in: the user address of the ring this queue stands for, as the
	 * process's runtime hands it out (hsa_queue_t.base_address); 0: none.
	 * The stand-in for KFD's ring base: /dev/xsched registers the queue by
	 * it (XSCHED_REGISTER_BY_RING).  Unique among the live sim queues of
	 * the calling process (EEXIST).
	 */
	__u64 ring_addr;
	__u64 reserved[1];	/* in: must be 0 */
};

/*
 * XSCHED_IOC_SIM_QUEUE_DESTROY: as KFD's AMDKFD_IOC_DESTROY_QUEUE, while
 * the process goes on: the queue's waves are dropped and its unfinished
 * work fails, its id and ring address are free for the next queue, and a
 * registration of it is FAILED with ENODEV, never naming the next queue.
 */
struct xsched_sim_queue_destroy {
	__u32 queue_id;		/* in */
	__u32 flags;		/* in: must be 0 */
	__u64 reserved[1];	/* in: must be 0 */
};

#define XSCHED_SIM_RING_MAX	4096
#define XSCHED_SIM_QUEUES	64	/* per sim fd */

/*
 * Built-in kernels of the sim GPU.  Each workgroup runs as one wave of
 * @steps steps, each @step_ns long.
 *
 * ACCUMULATE: acc = src ? src[wg] : seed ^ (wg * 0x9e3779b97f4a7c15);
 *   for (s = 0; s < steps; s++) {
 *           acc = xsched_sim_mix(acc + s);
 *           lds[s % XSCHED_SIM_LDS_WORDS] += (__u32)acc;
 *   }
 *   dst[wg] = acc ^ fold(lds)   (xsched_sim_init/step/finish below)
 * dst and src are device addresses of __u64 arrays of at least grid entries.
 * A step run twice, skipped, or run with lost registers or LDS changes dst.
 *
 * MARK: ACCUMULATE, and each step a wave executes also adds 1 to its
 *   workgroup's mark in device memory, dst[grid + wg] (dst holds 2 x grid
 *   entries, the results first).  A mark lives in memory, not in the wave's
 *   state, so no save or restore can take it back: a step run again after
 *   its registers and LDS were reset (which leaves the result right) still
 *   shows as one mark too many.  With the marks zeroed before the packet,
 *   every workgroup ends with exactly @steps.
 */
enum xsched_sim_kernel {
	XSCHED_SIM_KERNEL_ACCUMULATE = 1,
	XSCHED_SIM_KERNEL_MARK = 2,
};

#define XSCHED_SIM_LDS_WORDS	64
#define XSCHED_SIM_GRID_MAX	65536
#define XSCHED_SIM_STEPS_MAX	(1U << 20)
#define XSCHED_SIM_STEP_NS_MAX	10000000ULL	/* 10 ms */

/* A dispatch packet, as in an AQL ring.  Packets of one queue run in order. */
struct xsched_sim_packet {
	__u32 kernel;		/* enum xsched_sim_kernel */
	__u32 flags;		/* must be 0 */
	__u32 grid;		/* workgroups, 1..XSCHED_SIM_GRID_MAX */
	__u32 steps;		/* steps per workgroup, 1..XSCHED_SIM_STEPS_MAX */
	/* simulated time per step, 0..XSCHED_SIM_STEP_NS_MAX (sim_min_step_ns at least) */
	__u64 step_ns;
	__u64 seed;
	__u64 dst;		/* device address of the output */
	__u64 src;		/* device address of the input, or 0 */
	__u64 reserved[2];	/* must be 0 */
};

/* XSCHED_IOC_SIM_SUBMIT: copy packets into the ring and ring the doorbell. */
struct xsched_sim_submit {
	__u32 queue_id;		/* in */
	__u32 count;		/* in: packets, 1..XSCHED_SIM_SUBMIT_MAX */
	__u64 packets;		/* in: user pointer to count struct xsched_sim_packet */
	__u32 flags;		/* in: must be 0 */
	__u32 reserved0;	/* in: must be 0 */
	__u64 seq;		/* out: completion number of the last packet */
	__u64 reserved[2];	/* in: must be 0 */
};

#define XSCHED_SIM_SUBMIT_MAX	256

/* XSCHED_IOC_SIM_WAIT: wait until packet @seq of the queue has completed. */
struct xsched_sim_wait {
	__u32 queue_id;		/* in */
	__u32 flags;		/* in: must be 0 */
	__u64 seq;		/* in: completion number from XSCHED_IOC_SIM_SUBMIT */
	__u64 timeout_ns;	/* in: 0 polls once */
	__u64 completed;	/* out: packets completed so far */
	__u64 reserved[2];	/* in: must be 0 */
};

#define XSCHED_SIM_IOC_MAGIC	0xC7

/* On a /dev/xsched_sim fd */
#define XSCHED_IOC_SIM_INFO	 _IOR(XSCHED_SIM_IOC_MAGIC, 0x00, struct xsched_sim_info)
#define XSCHED_IOC_SIM_MEM_ALLOC _IOWR(XSCHED_SIM_IOC_MAGIC, 0x01, struct xsched_sim_mem)
#define XSCHED_IOC_SIM_QUEUE_CREATE \
	_IOWR(XSCHED_SIM_IOC_MAGIC, 0x02, struct xsched_sim_queue_create)
#define XSCHED_IOC_SIM_SUBMIT	 _IOWR(XSCHED_SIM_IOC_MAGIC, 0x03, struct xsched_sim_submit)
#define XSCHED_IOC_SIM_WAIT	 _IOWR(XSCHED_SIM_IOC_MAGIC, 0x04, struct xsched_sim_wait)
#define XSCHED_IOC_SIM_QUEUE_DESTROY \
	_IOW(XSCHED_SIM_IOC_MAGIC, 0x05, struct xsched_sim_queue_destroy)

/* The sim kernels' arithmetic, shared by the module and CPU references. */
static inline __u64 xsched_sim_mix(__u64 x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static inline __u64 xsched_sim_init(__u64 seed, __u32 wg)
{
	return seed ^ ((__u64)wg * 0x9e3779b97f4a7c15ULL);
}

static inline __u64 xsched_sim_step(__u64 acc, __u32 step, __u32 *lds)
{
	acc = xsched_sim_mix(acc + step);
	lds[step % XSCHED_SIM_LDS_WORDS] += (__u32)acc;
	return acc;
}

static inline __u64 xsched_sim_finish(__u64 acc, const __u32 *lds)
{
	__u64 fold = 0;
	int i;

	for (i = 0; i < XSCHED_SIM_LDS_WORDS; i++)
		fold = xsched_sim_mix(fold ^ lds[i]);
	return acc ^ fold;
}

#endif /* _UAPI_LINUX_XSCHED_SIM_H */
