/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * xsched_kfd: suspend and resume GPU queues for priority scheduling.
 *
 * Object model (see Documentation/uapi.rst for every errno):
 *
 *   open("/dev/xsched")          -> client fd
 *   client: XSCHED_IOC_REGISTER  -> queue fd (one per registered queue)
 *   client: XSCHED_IOC_ADMIN     -> act on any registered queue by its uid
 *   close(queue fd)              -> unregisters; a suspended queue is resumed
 *   close(client fd)             -> its sim memory and sim queues go away once no
 *                                   queue fd refers to them any more
 *
 * The sim backend is a software GPU inside the module.  Its queues are created on
 * the client (XSCHED_IOC_SIM_QUEUE_CREATE), fed with dispatch packets
 * (XSCHED_IOC_SIM_SUBMIT) and waited on (XSCHED_IOC_SIM_WAIT); they are then
 * registered like any hardware queue.  The kfd backend registers real amdgpu
 * queues by ring base address after XSCHED_IOC_KFD_ATTACH.
 *
 * Every struct has fixed-width fields, an explicit flags word and reserved
 * fields that must be zero; unknown flags or non-zero reserved fields give
 * EINVAL, so the ABI can grow.
 */
#ifndef _UAPI_LINUX_XSCHED_KFD_H
#define _UAPI_LINUX_XSCHED_KFD_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define XSCHED_API_VERSION	1
#define XSCHED_DEVICE_NAME	"xsched"

/* Backends, also the bit numbers of xsched_version.backends. */
enum xsched_backend {
	XSCHED_BACKEND_SIM = 0,
	XSCHED_BACKEND_KFD = 1,
};

/* Suspend modes.  DRAIN is preemption level 2, SAVE is level 3. */
enum xsched_mode {
	XSCHED_MODE_DRAIN = 1,	/* stop dispatching, running workgroups finish */
	XSCHED_MODE_SAVE = 2,	/* trap running waves, save their state (CWSR) */
};

/* Queue states as reported by XSCHED_IOC_QUERY. */
enum xsched_state {
	XSCHED_STATE_ACTIVE = 0,
	XSCHED_STATE_SUSPENDING = 1,	/* suspend requested, waves still on the GPU */
	XSCHED_STATE_SUSPENDED = 2,
	XSCHED_STATE_FAILED = 3,	/* reset or faulted; terminal */
};

#define XSCHED_PRIO_MIN		(-100)
#define XSCHED_PRIO_MAX		100

/* XSCHED_IOC_VERSION */
struct xsched_version {
	__u32 api_version;		/* out: XSCHED_API_VERSION */
	__u32 backends;			/* out: bit (1 << XSCHED_BACKEND_*) if usable */
	__u32 sim_cus;			/* out: compute units of the sim GPU */
	__u32 sim_waves_per_cu;		/* out: wave slots per compute unit */
	__u32 sim_wave_state_bytes;	/* out: bytes one saved wave occupies */
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
#define XSCHED_SIM_MEM_BUFFERS	64	/* per client */

/* XSCHED_IOC_SIM_QUEUE_CREATE */
struct xsched_sim_queue_create {
	__u32 ring_size;	/* in: packets, power of two, 2..XSCHED_SIM_RING_MAX */
	__u32 flags;		/* in: must be 0 */
	__u32 queue_id;		/* out: id of the sim queue within this client */
	__u32 reserved0;	/* in: must be 0 */
	__u64 save_area_size;	/* out: bytes of the queue's CWSR save area */
	__u64 reserved[2];	/* in: must be 0 */
};

#define XSCHED_SIM_RING_MAX	4096
#define XSCHED_SIM_QUEUES	64	/* per client */

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
	__u64 step_ns;		/* simulated time per step, 0..XSCHED_SIM_STEP_NS_MAX */
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

/* XSCHED_IOC_REGISTER: register a queue of a backend, get a queue fd. */
struct xsched_register {
	__u32 backend;		/* in: enum xsched_backend */
	__u32 flags;		/* in: XSCHED_REGISTER_* */
	__u64 handle;		/* in: sim: queue_id; kfd: ring base address */
	__s32 priority;		/* in: XSCHED_PRIO_MIN..MAX, > 0 needs CAP_SYS_NICE */
	__u32 reserved0;	/* in: must be 0 */
	__u32 queue_fd;		/* out: the new fd (also the ioctl's return value) */
	__u32 queue_uid;	/* out: module-wide id, as in debugfs and traces */
	__u64 reserved[2];	/* in: must be 0 */
};

/*
 * The module's arbiter manages the queue: while an arbitrated queue of higher
 * priority (of any process of the same user on the same device; of any user
 * with the module parameter arbiter_cross_user) has unfinished work, this one
 * is suspended at the best mode its backend has, and resumed once none has
 * for arbiter_resume_delay_us.  SUSPEND/RESUME on such a queue give EBUSY.
 * Each user may have arbiter_max_queues arbitrated queues (EDQUOT).
 */
#define XSCHED_REGISTER_ARBITRATE	(1U << 0)
#define XSCHED_REGISTER_FLAGS		XSCHED_REGISTER_ARBITRATE

/* XSCHED_IOC_KFD_ATTACH: attach the calling process's KFD process. */
struct xsched_kfd_attach {
	__u32 kfd_fd;		/* in: an open /dev/kfd fd of the caller */
	__u32 flags;		/* in: must be 0 */
	__u32 gpu_count;	/* out: devices of the KFD process */
	__u32 reserved0;	/* in: must be 0 */
	__u64 reserved[3];	/* in: must be 0 */
};

/* XSCHED_IOC_SUSPEND (queue fd) */
struct xsched_suspend {
	__u32 mode;		/* in: enum xsched_mode */
	__u32 flags;		/* in: XSCHED_SUSPEND_* */
	/*
	 * in: SAVE: time waves may finish on their own before they are
	 *     trapped (0: trap at once); DRAIN: longest wait for running
	 *     workgroups (0: no limit), past it the suspend is undone and
	 *     fails with ETIMEDOUT.  At most 60 s.
	 */
	__u64 grace_ns;
	__u64 latency_ns;	/* out: blocking: request to queue stopped */
	__u64 saved_bytes;	/* out: blocking: wave state written by this suspend */
	__u64 reserved[2];	/* in: must be 0 */
};

/* Return at once; completion shows as POLLPRI and in XSCHED_IOC_QUERY. */
#define XSCHED_SUSPEND_NONBLOCK	(1U << 0)
#define XSCHED_SUSPEND_FLAGS	XSCHED_SUSPEND_NONBLOCK

/* XSCHED_IOC_RESUME (queue fd) */
struct xsched_resume {
	__u32 flags;		/* in: must be 0 */
	__u32 reserved0;	/* in: must be 0 */
	__u64 suspended_ns;	/* out: how long the queue was stopped */
	__u64 reserved[2];	/* in: must be 0 */
};

/* XSCHED_IOC_QUERY (queue fd) */
struct xsched_queue_info {
	__u32 flags;		/* in: must be 0 */
	__u32 state;		/* out: enum xsched_state */
	__u32 backend;		/* out: enum xsched_backend */
	__s32 priority;		/* out */
	__u32 queue_uid;	/* out */
	__u32 last_mode;	/* out: mode of the last suspend, 0 if none */
	/* out: negative errno of the last failed suspend or resume, or of
	 * the fault that failed the queue
	 */
	__s32 last_error;
	__u32 saved_waves;	/* out: waves now held in the save area */
	__u64 rptr;		/* out: packets completed (sim) or AQL read dispatch id (kfd) */
	__u64 wptr;		/* out: packets submitted (sim) or AQL write dispatch id (kfd) */
	__u64 steps_done;	/* out: sim: wave steps executed, ever */
	__u64 suspends;		/* out: completed suspends */
	__u64 resumes;		/* out: completed resumes */
	__u64 faults;		/* out: failed suspends/resumes (not EAGAIN) and queue faults */
	__u64 last_suspend_ns;	/* out: latency of the last completed suspend */
	__u64 total_suspend_ns;	/* out: sum of completed suspend latencies */
	__u64 max_suspend_ns;	/* out */
	__u64 saved_bytes;	/* out: wave state bytes written, ever */
	__u64 save_area_size;	/* out: bytes */
	__u64 arbiter_suspends;	/* out: suspends the arbiter started */
	__u32 arbitrated;	/* out: 1 if registered with XSCHED_REGISTER_ARBITRATE */
	/* out: bit (1 << XSCHED_MODE_*) for each mode the queue's backend offers */
	__u32 modes;
	__u64 reserved[2];	/* in: must be 0 */
};

/* XSCHED_IOC_SET_PRIORITY (queue fd) */
struct xsched_set_priority {
	/* in: XSCHED_PRIO_MIN..MAX, raising above 0 needs CAP_SYS_NICE */
	__s32 priority;
	__u32 flags;		/* in: must be 0 */
	__u64 reserved[2];	/* in: must be 0 */
};

/*
 * XSCHED_IOC_ADMIN (client fd): change the priority of, suspend or resume any
 * registered queue, named by its uid.  Queues of another user need
 * CAP_SYS_ADMIN; raising a priority above 0 needs CAP_SYS_NICE.
 *
 * Extensible: @size is sizeof(struct xsched_admin) as the caller was built.
 * The module takes fields past a smaller @size as zero and refuses non-zero
 * bytes past the end of the struct it knows (E2BIG), as sched_setattr() and
 * openat2() do; outputs are written up to @size.  Fields another op does not
 * use must be zero.
 */
enum xsched_admin_op {
	XSCHED_ADMIN_SET_PRIORITY = 1,
	XSCHED_ADMIN_SUSPEND = 2,
	XSCHED_ADMIN_RESUME = 3,
};

struct xsched_admin {
	__u32 size;		/* in: sizeof(struct xsched_admin) */
	__u32 op;		/* in: enum xsched_admin_op */
	__u32 queue_uid;	/* in: as in XSCHED_IOC_REGISTER, debugfs, traces */
	__u32 flags;		/* in: XSCHED_ADMIN_* */
	__s32 priority;		/* in: SET_PRIORITY: XSCHED_PRIO_MIN..MAX */
	__u32 mode;		/* in: SUSPEND: enum xsched_mode */
	__u64 grace_ns;		/* in: SUSPEND: as in struct xsched_suspend */
	__u64 latency_ns;	/* out: SUSPEND, blocking: request to queue stopped */
	__u64 saved_bytes;	/* out: SUSPEND, blocking: wave state written */
	__u64 suspended_ns;	/* out: RESUME: how long the queue was stopped */
	__u64 reserved[2];	/* in: must be 0 */
};

#define XSCHED_ADMIN_SIZE_VER0	72	/* the first published struct */

/* SUSPEND only: return at once, as XSCHED_SUSPEND_NONBLOCK. */
#define XSCHED_ADMIN_NONBLOCK	(1U << 0)
#define XSCHED_ADMIN_FLAGS	XSCHED_ADMIN_NONBLOCK

#define XSCHED_IOC_MAGIC	0xC6

/* On the client fd (/dev/xsched) */
#define XSCHED_IOC_VERSION	 _IOR(XSCHED_IOC_MAGIC, 0x00, struct xsched_version)
#define XSCHED_IOC_SIM_MEM_ALLOC _IOWR(XSCHED_IOC_MAGIC, 0x01, struct xsched_sim_mem)
#define XSCHED_IOC_SIM_QUEUE_CREATE _IOWR(XSCHED_IOC_MAGIC, 0x02, struct xsched_sim_queue_create)
#define XSCHED_IOC_SIM_SUBMIT	 _IOWR(XSCHED_IOC_MAGIC, 0x03, struct xsched_sim_submit)
#define XSCHED_IOC_SIM_WAIT	 _IOWR(XSCHED_IOC_MAGIC, 0x04, struct xsched_sim_wait)
#define XSCHED_IOC_REGISTER	 _IOWR(XSCHED_IOC_MAGIC, 0x05, struct xsched_register)
#define XSCHED_IOC_KFD_ATTACH	 _IOWR(XSCHED_IOC_MAGIC, 0x06, struct xsched_kfd_attach)
/* The size is in the struct, not the number, so that the number never changes. */
#define XSCHED_IOC_ADMIN	 _IO(XSCHED_IOC_MAGIC, 0x07)

/* On a queue fd */
#define XSCHED_IOC_SUSPEND	 _IOWR(XSCHED_IOC_MAGIC, 0x40, struct xsched_suspend)
#define XSCHED_IOC_RESUME	 _IOWR(XSCHED_IOC_MAGIC, 0x41, struct xsched_resume)
#define XSCHED_IOC_QUERY	 _IOWR(XSCHED_IOC_MAGIC, 0x42, struct xsched_queue_info)
#define XSCHED_IOC_SET_PRIORITY	 _IOW(XSCHED_IOC_MAGIC, 0x43, struct xsched_set_priority)

/*
 * Queue fd poll():
 *   POLLIN  the queue has no unfinished work (rptr == wptr)
 *   POLLPRI the queue is suspended (a non-blocking suspend has completed)
 *   POLLERR the queue has failed
 */

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

#endif /* _UAPI_LINUX_XSCHED_KFD_H */
