/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xsched_sim.ko, the sim backend: a software GPU faithful enough for the
 * core's tests.  A test device (netdevsim's pattern): its own module and its
 * own device node, /dev/xsched_sim, whose fd is a context of device memory and
 * queues (include/uapi/linux/xsched_sim.h).  It registers the sim backend with
 * xsched_kfd.ko (backend.c), which reaches it only through xsim_ops.
 *
 * The device is open to every user, so its work is bounded (a shared server
 * must survive a hostile one): a CU with a free slot looks only at the
 * runnable list (queues with a workgroup to start or a wave to restore), so
 * idle queues cost nothing; grace ends are kept on a list of their own; a CU
 * takes the lock per wave slot, not for a whole pass; every step is charged at
 * least sim_min_step_ns of simulated time and a wave that falls behind real
 * time loses the backlog instead of catching up at full speed, so the CU
 * threads' CPU time is bounded by slots / sim_min_step_ns steps a second
 * whatever users submit; queues and memory are limited per user
 * (sim_user_queues, sim_user_mem_mb) and charged to the caller's memory
 * cgroup.
 *
 * Locking: xsim.lock (spinlock) protects every queue's ring pointers, run
 * state, save area, the runnable and grace lists and every CU's slots.  It
 * nests inside xsched_queue.lock and outside xsched_queue.state_lock.
 * xsim_vm.lock (mutex) protects a sim fd's buffer and queue tables;
 * xsim.users_lock (mutex) the per-user table and counts, and
 * xsim.rings_lock (spinlock) the writers of xsim.rings; both are taken
 * inside xsim_vm.lock, never with xsim.lock held.
 *
 * This header is the sim's own (its test interface, the uAPI, is
 * include/uapi/linux/xsched_sim.h), shared by its files, one per concept,
 * each of which calls only files listed after it:
 *
 *   main.c     the module: init and exit, the debugfs fault injection knobs
 *   backend.c  the backend ops the core calls, and binding a queue to it
 *   fd.c       /dev/xsched_sim: one sim context per open, its ioctls, mmap
 *   queue.c    sim queues: create, destroy, release, submit, wait; rings
 *   cu.c       compute units and their waves: dispatch, steps, trap, save
 *   save.c     a queue's run state: suspend (DRAIN, SAVE), grace, the save
 *              watchdog, completion, restart, reset
 *   hws.c      the HWS cost model, and the batch ops
 *   mem.c      device memory: a sim fd's buffers, addresses, mmap
 *   user.c     per-user limits
 *   dev.c      the device: its state, its parameters, the CUs' work lists
 */
#ifndef XSCHED_SIM_H
#define XSCHED_SIM_H

#include <linux/atomic.h>
#include <linux/hashtable.h>
#include <linux/kref.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <linux/xsched_sim.h>

#include "xsched.h"

enum xsim_run {
	XSIM_RUN,		/* dispatching */
	XSIM_DRAIN,		/* no new workgroups; started ones finish */
	XSIM_SAVE_GRACE,	/* no new workgroups; trap when grace expires */
	XSIM_SAVE,		/* trapping: every resident wave saves */
	XSIM_STOPPED,		/* suspended */
	XSIM_FAILED,		/* reset or faulted */
};

enum xsim_phase {
	XSIM_FREE,
	XSIM_RESTORING,
	XSIM_RUNNING,
	XSIM_SAVING,
};

/* One wave's architectural state; also the record format of the save area. */
struct xsim_wave_state {
	u64 packet;		/* ring index of its packet */
	u32 wg;
	u32 step;		/* program position */
	u64 remaining_ns;	/* of the current step */
	u64 acc;		/* registers */
	u32 lds[XSCHED_SIM_LDS_WORDS];
};

struct xsim_queue;

struct xsim_wave {
	struct xsim_queue *q;		/* NULL when the slot is free */
	enum xsim_phase phase;
	ktime_t deadline;		/* end of the current step, save or restore */
	struct xsched_sim_packet pkt;	/* what the CP read from the ring */
	struct xsim_wave_state st;
};

struct xsim_cu {
	struct task_struct *thread;
	wait_queue_head_t wq;
	bool kick;			/* under xsim.lock */
	struct xsim_wave *waves;
};

struct xsim_buffer {
	void *vaddr;
	u64 size;
};

/* What one user holds on the sim, for sim_user_queues and sim_user_mem_mb. */
struct xsim_user {
	struct list_head node;		/* xsim.users */
	kuid_t uid;
	unsigned int vms;		/* sim fds (xsim_vm) pointing here */
	unsigned int queues;
	u64 mem_bytes;
};

/* A sim fd's GPU address space: its device memory and its sim queues. */
struct xsim_vm {
	struct kref ref;
	struct xsim_user *user;		/* who opened it, charged for what it holds */
	struct mutex lock;		/* protects bufs[] and queues[] */
	struct xsim_buffer bufs[XSCHED_SIM_MEM_BUFFERS];
	struct xsim_queue *queues[XSCHED_SIM_QUEUES];
};

struct xsim_queue {
	struct kref ref;		/* vm->queues[] slot and registration */
	struct xsim_vm *vm;		/* holds a reference */
	u32 id;
	struct list_head node;		/* xsim.queues */
	struct hlist_node ring_node;	/* xsim.rings, while in its sim fd */
	struct rcu_head rcu;		/* xsim.rings readers may still look */
	struct list_head run_node;	/* xsim.runnable, while xsim_queue_runnable() */
	struct list_head grace_node;	/* xsim.graced, while grace_end is set */
	wait_queue_head_t wq;		/* completions, for SIM_WAIT */
	/*
	 * Constant: the ring address it was created with (0: none), and the
	 * address space that address belongs to (mmgrab(): the pointer stays
	 * unique while the queue lives).
	 */
	u64 ring_addr;
	struct mm_struct *mm;
	struct delayed_work watchdog;
	unsigned long watchdog_at;	/* under xsim.lock: when a save is hung */

	/* Under xsim.lock: */
	struct xsched_queue *xq;	/* registration, or NULL */
	struct xsched_sim_packet *ring;
	u32 ring_size;
	u64 wptr;			/* packets submitted */
	u64 rptr;			/* packets completed */
	u32 next_wg;			/* of packet rptr, next to dispatch */
	u32 wg_done;			/* of packet rptr */
	u32 resident;			/* waves in CU slots */
	enum xsim_run run;
	u32 seq;			/* suspend being served */
	ktime_t grace_end;		/* DRAIN limit / SAVE trap time; 0: none */
	bool hang_save;			/* injected: waves never finish saving */
	int error;
	u64 steps_done;
	u64 suspend_saved_bytes;
	struct xsim_wave_state *save_area;
	u32 save_cap;
	u32 nsaved;
};

/* The sim device, one per module (dev.c). */
struct xsim_dev {
	spinlock_t lock;		/* see the top of this file */
	struct list_head queues;	/* every sim queue */
	/* Queues with a ring address, in their sim fd: see queue.c. */
	spinlock_t rings_lock;
	DECLARE_HASHTABLE(rings, 10);
	struct list_head runnable;	/* queues a free slot can take work from, round robin */
	struct list_head graced;	/* queues with a grace end */
	struct xsim_cu *cus;
	unsigned int ncu, nwaves;
	struct dentry *dir;
	/* Fault injection knobs, debugfs. */
	u32 save_delay_us;
	u32 fail_save;
	u32 fail_resume;
	u32 save_timeout_ms;
	/*
	 * A backend that stops answering, for the core's checks: the next N
	 * suspends report the queue stopped at once and leave it running
	 * (fake_suspend), or are accepted and never acted on (ignore_suspend).
	 */
	u32 fake_suspend;
	u32 ignore_suspend;
	/*
	 * The HWS cost model, debugfs: while hws is set, every suspend and
	 * resume is a runlist update that preempts the whole device, as on
	 * gfx9 with HWS: it is counted, and every running wave of the other
	 * queues loses a save and a restore.  Inside a batch (the arbiter's
	 * batch_begin/batch_end) the updates become one.
	 */
	u32 hws;
	u32 hws_update_us;		/* what the caller of one update waits */
	u64 runlist_updates;
	u32 batch_depth;		/* under lock */
	bool batch_pending;		/* under lock */
	atomic64_t mem_bytes;		/* device memory of every client */
	struct mutex users_lock;	/* protects users and their counts */
	struct list_head users;		/* struct xsim_user */
};

/* dev.c */
extern struct xsim_dev xsim;
extern unsigned int sim_save_ns, sim_restore_ns, sim_min_step_ns;
int xsim_dev_init(void);
void xsim_queue_requeue(struct xsim_queue *q);
void xsim_queue_set_grace(struct xsim_queue *q, ktime_t end);
void xsim_kick_all(void);
void xsim_queue_evict(struct xsim_queue *q);

/* user.c */
struct xsim_user *xsim_user_get(kuid_t uid);
void xsim_user_put(struct xsim_user *u);
int xsim_user_charge(struct xsim_user *u, int queues, s64 bytes);

/* mem.c */
void *xsim_translate(struct xsim_vm *vm, u64 addr, u64 len);
struct xsim_vm *xsim_vm_create(void);
void xsim_vm_release(struct kref *ref);
int xsim_mem_alloc(struct xsim_vm *vm, struct xsched_sim_mem *m);
int xsim_mmap(struct xsim_vm *vm, struct vm_area_struct *vma);

/* hws.c */
bool xsim_hws_update(struct xsim_queue *except);
void xsim_hws_wait(bool updated);
void *xsim_op_batch_begin(struct xsched_queue *const *qs, unsigned int n);
void xsim_op_batch_end(void *batch);

/* save.c, under xsim.lock but for the watchdog */
void xsim_queue_check_stopped(struct xsim_queue *q);
void xsim_queue_fail(struct xsim_queue *q, int err);
ktime_t xsim_check_graces(ktime_t now);
void xsim_queue_restart(struct xsim_queue *q);
void xsim_watchdog(struct work_struct *work);

/* cu.c */
int xsim_start_cus(void);
void xsim_stop_cus(void);

/* queue.c */
struct xsim_queue *xsim_find_ring(struct mm_struct *mm, u64 ring);
u32 xsim_ring_bucket(struct mm_struct *mm, u64 ring);
int xsim_queue_create(struct xsim_vm *vm, struct xsched_sim_queue_create *c);
void xsim_queue_release(struct kref *ref);
int xsim_queue_destroy(struct xsim_vm *vm,
		       const struct xsched_sim_queue_destroy *d);
int xsim_submit(struct xsim_vm *vm, struct xsched_sim_submit *s);
int xsim_wait(struct xsim_vm *vm, struct xsched_sim_wait *wt);
void xsim_vm_put(struct xsim_vm *vm);

/* fd.c */
extern const struct file_operations xsim_fops;
extern struct miscdevice xsim_misc;

/* backend.c */
extern const struct xsched_backend_ops xsim_ops;

#endif /* XSCHED_SIM_H */
