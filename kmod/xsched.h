/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xsched core: queue objects, their state machine and the backend ops table.
 *
 * The core knows nothing about hardware.  A backend (kfd.c, or a module of its
 * own such as xsched_sim.ko, registered through backend.c) binds a hardware
 * queue to a struct xsched_queue and implements suspend/resume; the
 * core owns the state, the counters, the queue fd and the tracepoints, so the
 * same paths run for every backend.
 *
 * Lock order: xsched_arb_lock (registration) -> xsched_queues_lock (only to
 * take references, never held further); [kfd batch: amdgpu's kfd_sch_mutex]
 * -> xsched_queue.lock (mutex) -> backend locks -> arbiter domain lock ->
 * xsched_queue.state_lock.
 * Backends call xsched_queue_suspend_done() / xsched_queue_failed() /
 * xsched_queue_wake() with their own spinlock held, never with state_lock held.
 */
#ifndef XSCHED_H
#define XSCHED_H

#include <linux/hrtimer.h>
#include <linux/kref.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uaccess.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xsched_kfd.h>

#include "compat.h"

struct dentry;
struct module;
struct xsched_arb_domain;
struct xsched_queue;
struct xsched_client;
struct xsched_waiter;

#define XSCHED_BACKEND_NR	(XSCHED_BACKEND_KFD + 1)
/* The longest grace period of a suspend. */
#define XSCHED_GRACE_MAX_NS	(60ULL * NSEC_PER_SEC)

/* An ioctl number without its size: the struct may grow (uapi header). */
#define XSCHED_IOC_NOSIZE(cmd)	((cmd) & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT))

/*
 * Copy in an ioctl struct of @usize bytes (the caller's, _IOC_SIZE) into
 * the module's @ksize: -EINVAL below @min (the first published size),
 * fields past a smaller @usize zero, -E2BIG for non-zero bytes past @ksize.
 */
static inline int xsched_arg_in(void *k, size_t ksize, size_t min,
				const void __user *u, size_t usize)
{
	if (usize < min)
		return -EINVAL;
	return copy_struct_from_user(k, ksize, u, usize);
}

/* What a backend reports about a queue's progress for XSCHED_IOC_QUERY / poll. */
struct xsched_progress {
	u64 rptr;
	u64 wptr;
	u64 steps_done;
	u64 save_area_size;
	u32 saved_waves;
	u32 gpu_id;		/* kfd: KFD's gpu_id; sim: 0 */
	u32 hw_queue_id;	/* kfd: KFD's queue id; sim: the sim queue id */
};

struct xsched_backend_ops {
	const char *name;
	struct module *owner;	/* pinned while any queue of the backend lives */
	/*
	 * A backend in a module of its own (backend.c): resolve
	 * XSCHED_IOC_REGISTER's @handle, with @fd an fd of the backend's own
	 * device that owns it, into a new queue (xsched_queue_create()), or
	 * an ERR_PTR.  Called with a reference on @owner held.
	 */
	struct xsched_queue *(*bind)(int fd, u64 handle, s32 priority);
	/*
	 * Optional.  XSCHED_REGISTER_BY_RING: the queue of the calling
	 * process whose ring address is @ring, as bind() does for a handle.
	 */
	struct xsched_queue *(*bind_ring)(u64 ring, s32 priority);
	u32 modes;	/* BIT(XSCHED_MODE_*) this backend can do */
	/*
	 * No wakeup on progress (kfd: the GPU writes the read pointer into
	 * user memory): poll() re-reads progress on a timer instead.
	 */
	bool polled;
	/*
	 * Start stopping the queue.  Completion is reported, possibly before
	 * this returns, by xsched_queue_suspend_done(q, seq, ...).
	 */
	int (*suspend)(struct xsched_queue *q, u32 mode, u64 grace_ns, u32 seq);
	/* Undo a completed or still running suspend. */
	int (*resume)(struct xsched_queue *q);
	void (*progress)(struct xsched_queue *q, struct xsched_progress *p);
	/*
	 * The registration is gone: restart the queue if it is still stopped
	 * (whatever resume said before), and make sure no callback reaches @q
	 * after this returns.
	 */
	void (*release)(struct xsched_queue *q);
	/*
	 * Optional.  The arbiter is about to suspend or resume the @n queues
	 * in @qs (all of this backend) in one pass, through the calls above.
	 * A backend whose every suspend is a global operation (HWS) may make
	 * them one.  Called without any queue lock; batch_end() always
	 * follows, with what batch_begin() returned (NULL included).
	 */
	/* @qs is valid during the call only, and may hold released queues. */
	void *(*batch_begin)(struct xsched_queue *const *qs, unsigned int n);
	void (*batch_end)(void *batch);
};

/*
 * A queue's place in its arbitration domain (arbiter.c).  Everything but
 * @dom and @user is under the domain's lock.
 */
struct xsched_arb_queue {
	struct xsched_arb_domain *dom;	/* NULL once unregistered */
	kuid_t user;			/* who registered it, for the per-user limit */
	struct list_head node;		/* its priority's running or stopped list */
	struct list_head busy_node;	/* its priority's busy list, while busy */
	struct list_head event_node;	/* dom->events: progress to read again */
	struct list_head poll_node;	/* dom->polled (backends without events) */
	s32 prio;			/* the lists it is on */
	bool linked;			/* on them: registered and not failed */
	bool busy;			/* unfinished work, when last read */
	bool stopped;			/* the arbiter suspended it (debugfs reads it) */
	ktime_t stopped_at;
};

struct xsched_queue {
	struct kref ref;
	u32 uid;
	u32 backend;
	const struct xsched_backend_ops *ops;
	void *priv;			/* backend's queue */
	/* The device it runs on: queues of one device are arbitrated together. */
	const void *device;
	struct list_head node;		/* xsched_queues, under xsched_queues_lock */
	pid_t pid;			/* process that registered it (init namespace) */
	char comm[TASK_COMM_LEN];	/* its command */
	kuid_t owner;			/* its effective uid: XSCHED_IOC_ADMIN's rule */

	struct mutex lock;		/* serialises suspend/resume/set_priority/release */
	bool released;			/* under lock: the backend let go, call nothing */

	spinlock_t state_lock;		/* protects everything below */
	u32 state;			/* enum xsched_state */
	u32 seq;			/* number of the current/last suspend */
	u32 mode;			/* of the current/last suspend */
	int last_error;
	s32 priority;
	ktime_t suspend_start;
	ktime_t suspended_at;
	u64 last_saved_bytes;
	u64 suspends, resumes, faults;
	u64 last_suspend_ns, total_suspend_ns, max_suspend_ns;
	u64 saved_bytes;
	u64 stopped_ns;			/* time suspending or suspended, ended intervals */
	/* Who asked for the current/last suspend (tracepoint xsched_queue_suspend). */
	bool by_arbiter;
	/* XSCHED_IOC_ADMIN asked: the owner's RESUME gives EBUSY while it lasts. */
	bool by_admin;
	pid_t suspender;		/* caller's pid, or 0 for the arbiter */
	u32 busy_uid;			/* the arbiter's reason: this queue was busy, */
	s32 busy_prio;			/* at this priority */
	struct list_head waiters;	/* blocked suspenders (struct xsched_waiter) */
	/*
	 * A stopped queue must not run: the step count the backend reported
	 * once it was SUSPENDED (valid while stop_gen stays), to compare
	 * later reads with.  stop_gen moves whenever the queue starts or
	 * stops being held stopped (a suspend completes, a resume begins or
	 * fails), so a read that straddles one is not compared.
	 */
	u32 stop_gen;
	bool resuming;
	bool stop_snap_valid;
	u64 stop_steps;
	u32 timeout_seq;		/* the suspend timeout_work watches, */
	unsigned long timeout_at;	/* and when it is overdue (jiffies) */
	wait_queue_head_t wq;		/* state changes and progress (poll) */
	struct hrtimer poll_timer;	/* ops->polled: wakes pollers */
	/* A suspend the backend does not complete in time fails the queue. */
	struct delayed_work timeout_work;

	/* Arbiter (arbitrated is set before the fd exists, then constant). */
	bool arbitrated;
	struct xsched_arb_queue arb;
	u64 arbiter_suspends;		/* under state_lock, like the counters */
};

/*
 * objects.c: live object counts, in debugfs "objects": tests check they
 * return to zero once every fd is closed, which catches leaks the module
 * unload cannot (plain kmalloc memory does not pin the module).
 */
enum xsched_obj {
	XSCHED_OBJ_CLIENT,
	XSCHED_OBJ_QUEUE,
	XSCHED_OBJ_SIM_VM,
	XSCHED_OBJ_SIM_QUEUE,
	XSCHED_OBJ_SIM_BUFFER,
	XSCHED_OBJ_KFD_ATTACH,
	XSCHED_OBJ_KFD_QUEUE,
	XSCHED_OBJ_NR,
};

void xsched_obj_inc(enum xsched_obj obj);
void xsched_obj_dec(enum xsched_obj obj);
void xsched_objects_debugfs(struct dentry *root);
/* At unload: reports every count that is not zero. */
void xsched_objects_exit(void);

/* queue.c: the queue object */
struct xsched_queue *xsched_queue_create(u32 backend,
					 const struct xsched_backend_ops *ops,
					 void *priv, const void *device,
					 s32 priority);
void xsched_queue_put(struct xsched_queue *q);
struct xsched_queue *xsched_queue_get_by_uid(u32 uid);
void xsched_queue_unlist(struct xsched_queue *q);
void xsched_queue_suspend_done(struct xsched_queue *q, u32 seq, int err,
			       u64 saved_bytes);
void xsched_queue_save_cancelled(struct xsched_queue *q, u64 saved_bytes);
void xsched_queue_failed(struct xsched_queue *q, int err);
void xsched_queue_wake(struct xsched_queue *q, u64 rptr, u64 wptr);
int xsched_priority_check(s32 priority, s32 old);
void xsched_queues_debugfs(struct dentry *root);
void xsched_queues_exit(void);

/* A blocked XSCHED_IOC_SUSPEND: told the outcome of its own suspend. */
struct xsched_waiter {
	struct list_head node;		/* q->waiters, under state_lock */
	u32 seq;
	bool done;
	int result;
	u64 ns, saved_bytes;
};

/* queue.c, the state machine as the queue fd and the arbiter drive it */
u32 xsched_queue_state(struct xsched_queue *q);
/* The backend's progress, checked; the caller holds the fd or q->lock. */
void xsched_queue_read_progress(struct xsched_queue *q, struct xsched_progress *p);
bool xsched_queue_progress_ref(struct xsched_queue *q, struct xsched_progress *p);
int xsched_queue_start_suspend(struct xsched_queue *q, u32 mode, u64 grace_ns,
			       u32 *seq, struct xsched_waiter *w,
			       struct xsched_queue *busy, s32 busy_prio, bool admin);
int xsched_queue_do_resume(struct xsched_queue *q, u64 *suspended_ns);

/* queue_fd.c: the queue fd */
int xsched_queue_install_fd(struct xsched_queue *q, struct xsched_register *reg,
			    struct xsched_register __user *ureg, size_t usize);
/* The queue fd's ioctls, also for XSCHED_IOC_ADMIN (@admin: on its behalf). */
int xsched_queue_suspend(struct xsched_queue *q, struct xsched_suspend *s,
			 bool admin);
int xsched_queue_resume(struct xsched_queue *q, struct xsched_resume *r,
			bool admin);
int xsched_queue_set_priority(struct xsched_queue *q,
			      struct xsched_set_priority *sp);

/*
 * What a queue tells its arbiter.  queue.c and queue_fd.c call the arbiter
 * only through this table, which arbiter.c installs at init; arbiter.c
 * drives queues through queue.c's state machine above.  So the files depend
 * one way (arbiter.c -> queue.c), and queue.c builds and can be tested
 * without it.
 */
struct xsched_queue_arbiter {
	/* XSCHED_REGISTER_ARBITRATE: 0 or -EDQUOT/-ENOMEM, before the fd exists. */
	int (*add)(struct xsched_queue *q);
	/* The queue's fd is gone; no pass touches @q once this returns. */
	void (*remove)(struct xsched_queue *q);
	/* Progress, failure: look at @q again (any context but state_lock held). */
	void (*event)(struct xsched_queue *q);
	void (*set_priority)(struct xsched_queue *q, s32 priority);
	/* How often progress is polled for backends without events, us. */
	unsigned int (*poll_us)(void);
};

void xsched_queue_set_arbiter(const struct xsched_queue_arbiter *arb);
/* The table installed (queue.c); NULL before init and after exit. */
extern const struct xsched_queue_arbiter *xsched_queue_arb;

/* arbiter.c */
int xsched_arbiter_init(void);
void xsched_arbiter_exit(void);

/* admin.c: XSCHED_IOC_ADMIN */
long xsched_admin_ioctl(struct xsched_admin __user *ua);

/* backend.c */
int xsched_backend_register(u32 backend, const struct xsched_backend_ops *ops);
void xsched_backend_unregister(u32 backend, const struct xsched_backend_ops *ops);
const struct xsched_backend_ops *xsched_backend_get(u32 backend);
void xsched_backend_put(const struct xsched_backend_ops *ops);
bool xsched_backend_loaded(u32 backend);

/* main.c: the debugfs folder a backend module puts its own knobs in */
struct dentry *xsched_debugfs_dir(void);

/*
 * The kfd backend, real amdgpu queues (kfd*.c, kfd_backend.h); kfd_none.c
 * answers -ENODEV in its place when built without KFD_SRC.
 */
struct xkfd_attach;
/* kfd_attach.c */
bool xkfd_available(void);
int xkfd_attach(struct xkfd_attach **attach, struct xsched_kfd_attach *a);
void xkfd_detach(struct xkfd_attach *attach);
/* kfd.c */
struct xsched_queue *xkfd_register(struct xkfd_attach *attach, u64 ring,
				   s32 priority);
/* Test knobs in the core's debugfs folder (kfd_model.c: the KFD model). */
void xkfd_debugfs(struct dentry *root);

#endif /* XSCHED_H */
