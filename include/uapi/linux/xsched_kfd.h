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
 *
 * The kfd backend registers real amdgpu queues by ring base address after
 * XSCHED_IOC_KFD_ATTACH.  The sim backend is a software GPU for tests, in a
 * module of its own (xsched_sim.ko, <linux/xsched_sim.h>); its queues are
 * registered here with the fd of its device.  A production load has no sim:
 * XSCHED_IOC_VERSION does not report it and registering a sim queue gives
 * ENODEV.
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

/*
 * Growing structs.  Every ioctl's struct may grow at its end; the ioctl
 * number carries the size the caller was built with (_IOC_SIZE), and the
 * module takes any size from the first published one (XSCHED_*_SIZE_VER0)
 * up: fields past a smaller size read as zero and are not written back,
 * non-zero bytes past the struct the module knows give E2BIG (as openat2()
 * and clone3() do), a size below the first published one EINVAL.  A module
 * that does so reports XSCHED_CAP_SIZED_IOCTLS; older ones answer ENOTTY to
 * any size but their own.
 */

/* XSCHED_IOC_VERSION */
struct xsched_version {
	__u32 api_version;		/* out: XSCHED_API_VERSION */
	__u32 backends;			/* out: bit (1 << XSCHED_BACKEND_*) if usable */
	__u32 reserved0[4];		/* out: zero (the sim's sizes: XSCHED_IOC_SIM_INFO) */
	__u64 caps;			/* out: XSCHED_CAP_* the module has */
	__u64 reserved[3];		/* out: zero */
};

#define XSCHED_VERSION_SIZE_VER0	56

/* Capabilities: what the module can do, beyond api_version 1. */
#define XSCHED_CAP_SIZED_IOCTLS	(1ULL << 0)	/* structs may grow, see above */
#define XSCHED_CAP_SUSPEND_SEQ	(1ULL << 1)	/* SUSPEND's seq, QUERY's suspend_seq */
#define XSCHED_CAP_ADMIN	(1ULL << 2)	/* XSCHED_IOC_ADMIN */

/* XSCHED_IOC_REGISTER: register a queue of a backend, get a queue fd. */
struct xsched_register {
	__u32 backend;		/* in: enum xsched_backend */
	__u32 flags;		/* in: XSCHED_REGISTER_* */
	/* in: sim: queue_id; kfd: ring base address; BY_RING: ring address */
	__u64 handle;
	__s32 priority;		/* in: XSCHED_PRIO_MIN..MAX, > 0 needs CAP_SYS_NICE */
	/* in: sim: the /dev/xsched_sim fd that created queue @handle; kfd: 0 */
	__u32 backend_fd;
	__u32 queue_fd;		/* out: the new fd (also the ioctl's return value) */
	__u32 queue_uid;	/* out: module-wide id, as in debugfs and traces */
	__u64 reserved[2];	/* in: must be 0 */
};

#define XSCHED_REGISTER_SIZE_VER0	48

/*
 * The module's arbiter manages the queue: while an arbitrated queue of higher
 * priority (of any process of the same user on the same device; of any user
 * with the module parameter arbiter_cross_user) has unfinished work, this one
 * is suspended at the best mode its backend has, and resumed once none has
 * for arbiter_resume_delay_us.  SUSPEND/RESUME on such a queue give EBUSY.
 * Each user may have arbiter_max_queues arbitrated queues (EDQUOT).
 */
#define XSCHED_REGISTER_ARBITRATE	(1U << 0)
/*
 * @handle is the ring address of a queue of the calling process (its address
 * space), as its runtime hands it out (hsa_queue_t.base_address), and
 * @backend_fd must be 0.  kfd: what @handle always is (the flag changes
 * nothing).  sim: the live sim queue the calling process created with that
 * ring_addr, through any of its sim fds (struct xsched_sim_queue_create).
 */
#define XSCHED_REGISTER_BY_RING		(1U << 1)
#define XSCHED_REGISTER_FLAGS		(XSCHED_REGISTER_ARBITRATE | \
					 XSCHED_REGISTER_BY_RING)

/* XSCHED_IOC_KFD_ATTACH: attach the calling process's KFD process. */
struct xsched_kfd_attach {
	__u32 kfd_fd;		/* in: an open /dev/kfd fd of the caller */
	__u32 flags;		/* in: must be 0 */
	__u32 gpu_count;	/* out: devices of the KFD process */
	__u32 reserved0;	/* in: must be 0 */
	__u64 reserved[3];	/* in: must be 0 */
};

#define XSCHED_KFD_ATTACH_SIZE_VER0	40

/* XSCHED_IOC_SUSPEND (queue fd) */
struct xsched_suspend {
	__u32 mode;		/* in: enum xsched_mode */
	__u32 flags;		/* in: XSCHED_SUSPEND_* */
	/*
	 * in: SAVE: time waves may finish on their own before they are
	 *     trapped (0: trap at once); DRAIN: longest wait for running
	 *     workgroups (0: the most, 60 s), past it the suspend is undone
	 *     and fails with ETIMEDOUT.  At most 60 s.
	 */
	__u64 grace_ns;
	__u64 latency_ns;	/* out: blocking: request to queue stopped */
	__u64 saved_bytes;	/* out: blocking: wave state written by this suspend */
	__u64 reserved[2];	/* in: must be 0 */
	/*
	 * out: the number of this suspend (XSCHED_CAP_SUSPEND_SEQ), also for
	 * NONBLOCK: it is done when QUERY's suspend_seq is this and the state
	 * SUSPENDED; a larger suspend_seq means another suspend followed.
	 */
	__u32 seq;
	__u32 reserved1;	/* in: must be 0 */
};

#define XSCHED_SUSPEND_SIZE_VER0	48

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

#define XSCHED_RESUME_SIZE_VER0	32

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
	__u32 suspend_seq;	/* out: number of the current or last suspend, 0 if none */
	/*
	 * out: the hardware queue: kfd: KFD's gpu_id and queue id (as ROCr's
	 * debugger API names them); sim: 0 and the sim queue id
	 */
	__u32 gpu_id;
	__u32 hw_queue_id;
	__u32 reserved1;	/* in: must be 0 */
};

#define XSCHED_QUERY_SIZE_VER0	152

/* XSCHED_IOC_SET_PRIORITY (queue fd) */
struct xsched_set_priority {
	/* in: XSCHED_PRIO_MIN..MAX, raising above 0 needs CAP_SYS_NICE */
	__s32 priority;
	__u32 flags;		/* in: must be 0 */
	__u64 reserved[2];	/* in: must be 0 */
};

#define XSCHED_SET_PRIORITY_SIZE_VER0	24

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
/* 0x01-0x04 were the sim's, now on /dev/xsched_sim: never reuse them here. */
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

#endif /* _UAPI_LINUX_XSCHED_KFD_H */
