// SPDX-License-Identifier: GPL-2.0
/*
 * xsched_sim.ko, the sim backend: a software GPU faithful enough for the
 * core's tests.  A test device (netdevsim's pattern): its own module and its
 * own device node, /dev/xsched_sim, whose fd is a context of device memory and
 * queues (include/uapi/linux/xsched_sim.h).  It registers the sim backend with
 * xsched_kfd.ko (backend.c), which reaches it only through xsim_ops.
 *
 * Compute units are kernel threads, each with wave slots.  A queue is a ring of
 * dispatch packets with read and write pointers; packets run in order, each
 * workgroup as one wave of @steps steps.  Time is simulated with deadlines: a
 * wave's step completes at its deadline, and only then changes its registers
 * and LDS, so a trap at any moment leaves a consistent wave whose position,
 * registers, LDS and remaining step time are written to the queue's save area
 * (SAVE).  DRAIN stops dispatch and lets started waves finish.  There is no
 * separate command processor thread: a CU with a free slot dispatches under
 * the device lock, which is what keeps dispatch exactly-once.
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
 * Ring addresses: a queue may be created with the user address of the ring it
 * stands for (as KFD knows each queue's ring base).  Such a queue is in
 * xsim.rings, a hash table keyed by (mm, ring address), while it is in its
 * sim fd.  Registration by ring (XSCHED_REGISTER_BY_RING) looks it up under
 * RCU alone, takes a reference with kref_get_unless_zero() (queues are freed
 * after a grace period) and binds it under its vm's lock as registration by
 * id does.  Any user can loop on that lookup (ENOENT costs one bucket), so it
 * takes neither xsim.lock, which every CU, SUBMIT and WAIT needs, nor any
 * lock at all; xsim.rings_lock serialises only the writers (create, destroy,
 * close), and makes the EEXIST check and the insertion one step.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/kthread.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/log2.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/unaligned.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include <linux/xsched_sim.h>

#include "xsched.h"

static unsigned int sim_cus = 4;
module_param(sim_cus, uint, 0444);
MODULE_PARM_DESC(sim_cus, "Compute units of the sim GPU (1-64, default 4)");

static unsigned int sim_waves_per_cu = 4;
module_param(sim_waves_per_cu, uint, 0444);
MODULE_PARM_DESC(sim_waves_per_cu, "Wave slots per sim compute unit (1-16, default 4)");

static unsigned int sim_save_ns = 20000;
module_param(sim_save_ns, uint, 0644);
MODULE_PARM_DESC(sim_save_ns, "Time to save one wave's state, ns (default 20000)");

/* /dev/xsched_sim is open to every user: bound what they can pin together. */
static unsigned int sim_mem_max_mb = 512;
module_param(sim_mem_max_mb, uint, 0644);
MODULE_PARM_DESC(sim_mem_max_mb, "Sim device memory of all sim fds together, MiB (default 512)");

static unsigned int sim_restore_ns = 20000;
module_param(sim_restore_ns, uint, 0644);
MODULE_PARM_DESC(sim_restore_ns, "Time to restore one wave's state, ns (default 20000)");

/*
 * Every step takes at least this much simulated time: zero-time kernels
 * cannot spin the CU threads.  With 16 slots the default bounds the sim to
 * 160,000 steps a second.
 */
static unsigned int sim_min_step_ns = 100000;
module_param(sim_min_step_ns, uint, 0644);
MODULE_PARM_DESC(sim_min_step_ns,
		 "Simulated time every step is charged at least, ns (1000-10000000, default 100000)");

/* Per-user limits: /dev/xsched_sim is open to every user. */
static unsigned int sim_user_queues = 4096;
module_param(sim_user_queues, uint, 0644);
MODULE_PARM_DESC(sim_user_queues,
		 "Sim queues one user may have at once; more give EDQUOT, except with CAP_SYS_RESOURCE (default 4096)");

static unsigned int sim_user_fds = 1024;
module_param(sim_user_fds, uint, 0644);
MODULE_PARM_DESC(sim_user_fds,
		 "Sim contexts (open sim fds, and closed ones a registration holds) one user may have; more give EDQUOT, except with CAP_SYS_RESOURCE (default 1024)");

static unsigned int sim_user_mem_mb = 256;
module_param(sim_user_mem_mb, uint, 0644);
MODULE_PARM_DESC(sim_user_mem_mb,
		 "Sim device memory one user may hold, MiB; more gives EDQUOT, except with CAP_SYS_RESOURCE (default 256)");

/*
 * Steps one wave may run in one visit of its CU.  A wave further behind
 * real time than that drops the rest (the sim runs slower than simulated
 * time), so a late CU thread never catches up at full speed.
 */
#define XSIM_BURST	64

/* Device addresses: buffer i lives at (i + 1) << 32, which is also its mmap offset. */
#define XSIM_ADDR_SHIFT	32

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

static struct {
	spinlock_t lock;		/* see the top of this file */
	struct list_head queues;	/* every sim queue */
	/* Queues with a ring address, in their sim fd: see the top of this file. */
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
} xsim;

/* Whether a free slot can take work from @q: a wave to restore or to start. */
static bool xsim_queue_runnable(const struct xsim_queue *q)
{
	if (q->nsaved)
		return q->run == XSIM_RUN || q->run == XSIM_DRAIN;
	return q->run == XSIM_RUN && q->rptr != q->wptr &&
	       q->next_wg < q->ring[q->rptr & (q->ring_size - 1)].grid;
}

/* Put @q on or off the runnable list after any change of what it can run. */
static void xsim_queue_requeue(struct xsim_queue *q)
{
	bool runnable = xsim_queue_runnable(q);

	lockdep_assert_held(&xsim.lock);
	if (runnable && list_empty(&q->run_node))
		list_add_tail(&q->run_node, &xsim.runnable);
	else if (!runnable && !list_empty(&q->run_node))
		list_del_init(&q->run_node);
}

static void xsim_queue_set_grace(struct xsim_queue *q, ktime_t end)
{
	lockdep_assert_held(&xsim.lock);
	q->grace_end = end;
	if (end && list_empty(&q->grace_node))
		list_add_tail(&q->grace_node, &xsim.graced);
	else if (!end && !list_empty(&q->grace_node))
		list_del_init(&q->grace_node);
}

static void xsim_kick_all(void)
{
	unsigned int i;

	lockdep_assert_held(&xsim.lock);
	for (i = 0; i < xsim.ncu; i++) {
		xsim.cus[i].kick = true;
		wake_up(&xsim.cus[i].wq);
	}
}

/* Resolve @len bytes at device address @addr of @vm, or NULL (a GPU fault). */
static void *xsim_translate(struct xsim_vm *vm, u64 addr, u64 len)
{
	u64 idx = (addr >> XSIM_ADDR_SHIFT) - 1;
	u64 off = addr & ((1ULL << XSIM_ADDR_SHIFT) - 1);
	void *vaddr;

	if (idx >= XSCHED_SIM_MEM_BUFFERS)
		return NULL;
	/* Buffers are published once and live as long as the vm. */
	vaddr = smp_load_acquire(&vm->bufs[idx].vaddr);
	if (!vaddr || off + len > vm->bufs[idx].size)
		return NULL;
	return vaddr + off;
}

static void xsim_queue_report_stopped(struct xsim_queue *q)
{
	lockdep_assert_held(&xsim.lock);
	q->run = XSIM_STOPPED;
	xsim_queue_set_grace(q, 0);
	xsim_queue_requeue(q);
	cancel_delayed_work(&q->watchdog);
	if (q->xq)
		xsched_queue_suspend_done(q->xq, q->seq, 0,
					  q->suspend_saved_bytes);
}

/* A suspend completes once none of the queue's waves is left running. */
static void xsim_queue_check_stopped(struct xsim_queue *q)
{
	lockdep_assert_held(&xsim.lock);
	switch (q->run) {
	case XSIM_DRAIN:
		/* Saved waves are started workgroups: drain finishes them too. */
		if (!q->resident && !q->nsaved)
			xsim_queue_report_stopped(q);
		break;
	case XSIM_SAVE_GRACE:
	case XSIM_SAVE:
		if (!q->resident)
			xsim_queue_report_stopped(q);
		break;
	default:
		break;
	}
}

/* Reset: the queue's waves are killed, its unfinished work fails. */
static void xsim_queue_fail(struct xsim_queue *q, int err)
{
	unsigned int c, w;

	lockdep_assert_held(&xsim.lock);
	if (q->run == XSIM_FAILED)
		return;
	for (c = 0; c < xsim.ncu; c++) {
		for (w = 0; w < xsim.nwaves; w++) {
			struct xsim_wave *wave = &xsim.cus[c].waves[w];

			if (wave->q == q)
				wave->q = NULL;
		}
	}
	q->resident = 0;
	q->nsaved = 0;
	q->run = XSIM_FAILED;
	q->error = err;
	xsim_queue_set_grace(q, 0);
	xsim_queue_requeue(q);
	cancel_delayed_work(&q->watchdog);
	wake_up_all(&q->wq);
	if (q->xq)
		xsched_queue_failed(q->xq, err);
}

/* The wave's copy of its packet, every step charged at least sim_min_step_ns. */
static void xsim_wave_load(struct xsim_wave *w, const struct xsched_sim_packet *p)
{
	w->pkt = *p;
	w->pkt.step_ns = max_t(u64, p->step_ns,
			       clamp(READ_ONCE(sim_min_step_ns), 1000U, 10000000U));
}

static bool xsim_dispatch_from(struct xsim_queue *q, struct xsim_wave *w,
			       ktime_t now)
{
	const struct xsched_sim_packet *p;
	u64 *src;

	if (q->nsaved && (q->run == XSIM_RUN || q->run == XSIM_DRAIN)) {
		/* Restore before anything new: these waves were already started. */
		w->st = q->save_area[--q->nsaved];
		xsim_wave_load(w, &q->ring[w->st.packet & (q->ring_size - 1)]);
		w->phase = XSIM_RESTORING;
		w->deadline = ktime_add_ns(now, READ_ONCE(sim_restore_ns));
		goto placed;
	}
	if (q->run != XSIM_RUN || q->rptr == q->wptr)
		return false;
	p = &q->ring[q->rptr & (q->ring_size - 1)];
	if (q->next_wg >= p->grid)
		return false;	/* packets run in order: wait for this one */

	memset(&w->st, 0, sizeof(w->st));
	xsim_wave_load(w, p);
	w->st.packet = q->rptr;
	w->st.wg = q->next_wg;
	w->st.remaining_ns = w->pkt.step_ns;
	if (p->src) {
		src = xsim_translate(q->vm, p->src + (u64)w->st.wg * 8, 8);
		if (!src) {
			xsim_queue_fail(q, -EFAULT);
			return false;
		}
		w->st.acc = get_unaligned(src);
	} else {
		w->st.acc = xsched_sim_init(p->seed, w->st.wg);
	}
	q->next_wg++;
	w->phase = XSIM_RUNNING;
	w->deadline = ktime_add_ns(now, w->pkt.step_ns);
placed:
	w->q = q;
	q->resident++;
	return true;
}

/*
 * Fill a free slot from the next runnable queue, round robin: the queue
 * served goes to the back.  A queue on the list always has something to
 * place, unless it faults doing so (it fails and leaves the list).
 */
static bool xsim_dispatch(struct xsim_wave *w, ktime_t now)
{
	struct xsim_queue *q;
	bool placed;

	while (!list_empty(&xsim.runnable)) {
		q = list_first_entry(&xsim.runnable, struct xsim_queue, run_node);
		list_move_tail(&q->run_node, &xsim.runnable);
		placed = xsim_dispatch_from(q, w, now);
		xsim_queue_requeue(q);
		if (placed)
			return true;
		if (WARN_ON_ONCE(!list_empty(&q->run_node)))
			list_del_init(&q->run_node);
	}
	return false;
}

static void xsim_wave_save(struct xsim_wave *w)
{
	struct xsim_queue *q = w->q;

	q->save_area[q->nsaved++] = w->st;
	q->suspend_saved_bytes += sizeof(w->st);
	w->q = NULL;
	q->resident--;
	xsim_queue_check_stopped(q);
}

static void xsim_wave_finish(struct xsim_wave *w)
{
	struct xsim_queue *q = w->q;
	u64 *dst;

	dst = xsim_translate(q->vm, w->pkt.dst + (u64)w->st.wg * 8, 8);
	if (!dst) {
		xsim_queue_fail(q, -EFAULT);
		return;
	}
	put_unaligned(xsched_sim_finish(w->st.acc, w->st.lds), dst);
	w->q = NULL;
	q->resident--;
	if (++q->wg_done == w->pkt.grid) {
		q->rptr++;
		q->next_wg = 0;
		q->wg_done = 0;
		xsim_queue_requeue(q);
		wake_up_all(&q->wq);
		if (q->xq)
			xsched_queue_wake(q->xq, q->rptr, q->wptr);
	}
	xsim_queue_check_stopped(q);
}

/*
 * Every CU pass looks at every grace end (DRAIN limit, SAVE trap time) on
 * xsim.graced, so it is kept even when the queue has no wave on any CU (a
 * DRAIN waiting to restore saved waves while other queues hold every slot).
 */
static void xsim_queue_check_grace(struct xsim_queue *q, ktime_t now)
{
	if (!q->grace_end || ktime_before(now, q->grace_end))
		return;
	xsim_queue_set_grace(q, 0);
	if (q->run == XSIM_DRAIN) {
		/* Drain took too long: undo it, report the timeout. */
		q->run = XSIM_RUN;
		xsim_queue_requeue(q);
		if (q->xq)
			xsched_queue_suspend_done(q->xq, q->seq, -ETIMEDOUT, 0);
		xsim_kick_all();
	} else if (q->run == XSIM_SAVE_GRACE) {
		q->run = XSIM_SAVE;
		xsim_kick_all();
	}
}

/* Act on grace ends that passed; the earliest one still ahead, or KTIME_MAX. */
static ktime_t xsim_check_graces(ktime_t now)
{
	ktime_t next = KTIME_MAX;
	struct xsim_queue *q, *tmp;

	lockdep_assert_held(&xsim.lock);
	list_for_each_entry_safe(q, tmp, &xsim.graced, grace_node) {
		xsim_queue_check_grace(q, now);
		if (q->grace_end && ktime_before(q->grace_end, next))
			next = q->grace_end;
	}
	return next;
}

/*
 * Execute the wave's current step: registers and LDS, and for MARK its mark
 * in device memory.  Returns false if the mark faulted (the queue failed).
 */
static bool xsim_wave_step(struct xsim_wave *w)
{
	struct xsim_queue *q = w->q;
	u64 *mark;

	if (w->pkt.kernel == XSCHED_SIM_KERNEL_MARK) {
		mark = xsim_translate(q->vm, w->pkt.dst +
				      ((u64)w->pkt.grid + w->st.wg) * 8, 8);
		if (!mark) {
			xsim_queue_fail(q, -EFAULT);
			return false;
		}
		put_unaligned(get_unaligned(mark) + 1, mark);
	}
	w->st.acc = xsched_sim_step(w->st.acc, w->st.step, w->st.lds);
	w->st.step++;
	q->steps_done++;
	return true;
}

/* Advance one wave to @now.  Returns false if the slot became free. */
static bool xsim_wave_advance(struct xsim_wave *w, ktime_t now)
{
	struct xsim_queue *q = w->q;
	unsigned int burst = 0;

	if (q->run == XSIM_SAVE && w->phase != XSIM_SAVING) {
		/* The trap: keep the unfinished part of the current step. */
		if (w->phase == XSIM_RUNNING)
			w->st.remaining_ns = ktime_after(w->deadline, now) ?
				ktime_to_ns(ktime_sub(w->deadline, now)) : 0;
		w->phase = XSIM_SAVING;
		w->deadline = q->hang_save ? KTIME_MAX :
			ktime_add_ns(now, READ_ONCE(sim_save_ns) +
				     (u64)READ_ONCE(xsim.save_delay_us) * NSEC_PER_USEC);
	}

	while (!ktime_before(now, w->deadline)) {
		switch (w->phase) {
		case XSIM_SAVING:
			xsim_wave_save(w);
			return false;
		case XSIM_RESTORING:
			w->phase = XSIM_RUNNING;
			w->deadline = ktime_add_ns(w->deadline, w->st.remaining_ns);
			break;
		case XSIM_RUNNING:
			if (!xsim_wave_step(w))
				return false;
			if (w->st.step == w->pkt.steps) {
				xsim_wave_finish(w);
				return false;
			}
			w->st.remaining_ns = w->pkt.step_ns;
			w->deadline = ktime_add_ns(w->deadline, w->pkt.step_ns);
			/* Too far behind: drop the backlog rather than spin. */
			if (++burst == XSIM_BURST) {
				if (!ktime_after(w->deadline, now))
					w->deadline = ktime_add_ns(now, w->pkt.step_ns);
				return true;
			}
			break;
		default:
			return false;
		}
	}
	return true;
}

static int xsim_cu_thread(void *data)
{
	struct xsim_cu *cu = data;
	ktime_t now, next;
	unsigned int i;

	while (!kthread_should_stop()) {
		spin_lock(&xsim.lock);
		cu->kick = false;
		now = ktime_get();
		next = xsim_check_graces(now);
		spin_unlock(&xsim.lock);
		/* The lock is held for one slot at a time: others get in between. */
		for (i = 0; i < xsim.nwaves; i++) {
			struct xsim_wave *w = &cu->waves[i];

			spin_lock(&xsim.lock);
			if (!w->q && !xsim_dispatch(w, now)) {
				spin_unlock(&xsim.lock);
				continue;
			}
			if (!xsim_wave_advance(w, now)) {
				/* Freed: let the slot pick up work right away. */
				next = now;
			} else if (ktime_before(w->deadline, next)) {
				next = w->deadline;
			}
			spin_unlock(&xsim.lock);
		}

		if (!ktime_after(next, now)) {
			cond_resched();
			continue;
		}
		if (next == KTIME_MAX)
			wait_event_interruptible(cu->wq, READ_ONCE(cu->kick) ||
						 kthread_should_stop());
		else
			wait_event_interruptible_hrtimeout(cu->wq, READ_ONCE(cu->kick) ||
							   kthread_should_stop(),
							   ktime_sub(next, now));
	}
	return 0;
}

static void xsim_watchdog(struct work_struct *work)
{
	struct xsim_queue *q = container_of(to_delayed_work(work),
					    struct xsim_queue, watchdog);

	spin_lock(&xsim.lock);
	/*
	 * The deadline too: this run may have been armed by a save that
	 * completed, and started late, after a resume and the next SAVE.
	 */
	if ((q->run == XSIM_SAVE || q->run == XSIM_SAVE_GRACE) &&
	    time_after_eq(jiffies, q->watchdog_at)) {
		pr_warn("xsched: sim queue %u: wave save timed out, resetting queue\n",
			q->id);
		xsim_queue_fail(q, -ETIMEDOUT);
	}
	spin_unlock(&xsim.lock);
}

/* Backend ops: the core calls these with xsched_queue.lock held. */

/*
 * With the HWS model on, @except's suspend or resume is one runlist update
 * of the whole device, or part of the batch under way.  Returns whether the
 * caller must now wait for the update (xsim_hws_wait(), unlocked).
 */
static bool xsim_hws_update(struct xsim_queue *except)
{
	u64 cost = (u64)READ_ONCE(sim_save_ns) + READ_ONCE(sim_restore_ns);
	unsigned int c, w;

	lockdep_assert_held(&xsim.lock);
	if (!xsim.hws)
		return false;
	if (xsim.batch_depth) {
		xsim.batch_pending = true;
		return false;
	}
	xsim.runlist_updates++;
	for (c = 0; c < xsim.ncu; c++) {
		for (w = 0; w < xsim.nwaves; w++) {
			struct xsim_wave *wave = &xsim.cus[c].waves[w];

			if (wave->q && wave->q != except &&
			    wave->phase == XSIM_RUNNING)
				wave->deadline = ktime_add_ns(wave->deadline, cost);
		}
	}
	return true;
}

/* The caller of a runlist update waits for the firmware, as update_queue() does. */
static void xsim_hws_wait(bool updated)
{
	unsigned int us = min(READ_ONCE(xsim.hws_update_us), 100000U);

	if (updated && us)
		usleep_range(us, us + us / 8 + 1);
}

static int xsim_op_suspend(struct xsched_queue *xq, u32 mode, u64 grace_ns,
			   u32 seq)
{
	struct xsim_queue *q = xq->priv;
	unsigned long timeout;
	bool updated = false;
	int ret = 0;

	spin_lock(&xsim.lock);
	if (q->run == XSIM_FAILED) {
		ret = -EIO;
		goto out;
	}
	if (xsim.ignore_suspend) {
		xsim.ignore_suspend--;
		goto out;
	}
	if (xsim.fake_suspend) {
		xsim.fake_suspend--;
		xsched_queue_suspend_done(xq, seq, 0, 0);
		goto out;
	}
	q->seq = seq;
	q->suspend_saved_bytes = 0;
	q->hang_save = false;
	/* The CUs running the queue's waves act on it: no timer resolution limit. */
	xsim_queue_set_grace(q, grace_ns ? ktime_add_ns(ktime_get(), grace_ns) : 0);
	if (mode == XSCHED_MODE_DRAIN) {
		q->run = XSIM_DRAIN;
	} else {
		if (xsim.fail_save) {
			xsim.fail_save--;
			q->hang_save = true;
		}
		q->run = grace_ns ? XSIM_SAVE_GRACE : XSIM_SAVE;
		timeout = nsecs_to_jiffies(grace_ns) +
			  msecs_to_jiffies(READ_ONCE(xsim.save_timeout_ms)) + 1;
		q->watchdog_at = jiffies + timeout;
		mod_delayed_work(system_wq, &q->watchdog, timeout);
	}
	xsim_queue_requeue(q);
	updated = xsim_hws_update(q);
	xsim_kick_all();
	xsim_queue_check_stopped(q);
out:
	spin_unlock(&xsim.lock);
	xsim_hws_wait(updated);
	return ret;
}

/* Let the queue dispatch again; a trap in progress is cancelled. */
static void xsim_queue_restart(struct xsim_queue *q)
{
	unsigned int c, w;
	ktime_t now = ktime_get();

	lockdep_assert_held(&xsim.lock);
	/* Saving waves continue where they were; saved ones are restored. */
	for (c = 0; c < xsim.ncu; c++) {
		for (w = 0; w < xsim.nwaves; w++) {
			struct xsim_wave *wave = &xsim.cus[c].waves[w];

			if (wave->q == q && wave->phase == XSIM_SAVING) {
				wave->phase = XSIM_RUNNING;
				wave->deadline = ktime_add_ns(now,
							      wave->st.remaining_ns);
			}
		}
	}
	q->run = XSIM_RUN;
	q->hang_save = false;
	xsim_queue_set_grace(q, 0);
	xsim_queue_requeue(q);
	cancel_delayed_work(&q->watchdog);
	xsim_kick_all();
}

static int xsim_op_resume(struct xsched_queue *xq)
{
	struct xsim_queue *q = xq->priv;
	bool updated = false;
	int ret = 0;

	spin_lock(&xsim.lock);
	if (q->run == XSIM_FAILED) {
		ret = -EIO;
	} else if (xsim.fail_resume) {
		xsim.fail_resume--;
		ret = -EIO;
	} else {
		xsim_queue_restart(q);
		updated = xsim_hws_update(q);
	}
	spin_unlock(&xsim.lock);
	xsim_hws_wait(updated);
	return ret;
}

static void xsim_op_progress(struct xsched_queue *xq, struct xsched_progress *p)
{
	struct xsim_queue *q = xq->priv;

	spin_lock(&xsim.lock);
	p->rptr = q->rptr;
	p->wptr = q->wptr;
	p->steps_done = q->steps_done;
	p->saved_waves = q->nsaved;
	p->save_area_size = (u64)q->save_cap * sizeof(struct xsim_wave_state);
	p->hw_queue_id = q->id;
	spin_unlock(&xsim.lock);
}

static void xsim_queue_release(struct kref *ref);

static void xsim_op_release(struct xsched_queue *xq)
{
	struct xsim_queue *q = xq->priv;

	spin_lock(&xsim.lock);
	/* Nothing stays stopped without an owner, even if resume failed. */
	if (q->run != XSIM_RUN && q->run != XSIM_FAILED)
		xsim_queue_restart(q);
	q->xq = NULL;
	xq->priv = NULL;
	spin_unlock(&xsim.lock);
	xsched_queue_put(xq);
	kref_put(&q->ref, xsim_queue_release);
}

/* Only the HWS model has anything to batch; NULL tells batch_end so. */
static void *xsim_op_batch_begin(struct xsched_queue *const *qs, unsigned int n)
{
	void *batch = NULL;

	spin_lock(&xsim.lock);
	if (xsim.hws) {
		xsim.batch_depth++;
		batch = &xsim;
	}
	spin_unlock(&xsim.lock);
	return batch;
}

static void xsim_op_batch_end(void *batch)
{
	bool updated = false;

	if (!batch)
		return;
	spin_lock(&xsim.lock);
	if (!--xsim.batch_depth && xsim.batch_pending) {
		xsim.batch_pending = false;
		updated = xsim_hws_update(NULL);
	}
	spin_unlock(&xsim.lock);
	xsim_hws_wait(updated);
}

static struct xsched_queue *xsim_op_bind(int fd, u64 handle, s32 priority);
static struct xsched_queue *xsim_op_bind_ring(u64 ring, s32 priority);

static const struct xsched_backend_ops xsim_ops = {
	.name = "sim",
	.owner = THIS_MODULE,
	.bind = xsim_op_bind,
	.bind_ring = xsim_op_bind_ring,
	.modes = BIT(XSCHED_MODE_DRAIN) | BIT(XSCHED_MODE_SAVE),
	.suspend = xsim_op_suspend,
	.resume = xsim_op_resume,
	.progress = xsim_op_progress,
	.release = xsim_op_release,
	.batch_begin = xsim_op_batch_begin,
	.batch_end = xsim_op_batch_end,
};

/* Client side: device memory, queues, submission. */

/*
 * The calling user's entry for one more sim fd, created on first use:
 * -EDQUOT past sim_user_fds (unless the caller has CAP_SYS_RESOURCE).
 */
static struct xsim_user *xsim_user_get(kuid_t uid)
{
	struct xsim_user *u;

	/* capable() only past the limit: it audits every denial. */
	mutex_lock(&xsim.users_lock);
	list_for_each_entry(u, &xsim.users, node) {
		if (uid_eq(u->uid, uid)) {
			if (u->vms >= READ_ONCE(sim_user_fds) &&
			    !capable(CAP_SYS_RESOURCE))
				u = ERR_PTR(-EDQUOT);
			else
				u->vms++;
			goto out;
		}
	}
	if (!READ_ONCE(sim_user_fds) && !capable(CAP_SYS_RESOURCE)) {
		u = ERR_PTR(-EDQUOT);
		goto out;
	}
	/* Shared by the user's sim fds: not charged to one of them. */
	u = kzalloc(sizeof(*u), GFP_KERNEL);
	if (!u) {
		u = ERR_PTR(-ENOMEM);
		goto out;
	}
	u->uid = uid;
	u->vms = 1;
	list_add(&u->node, &xsim.users);
out:
	mutex_unlock(&xsim.users_lock);
	return u;
}

static void xsim_user_put(struct xsim_user *u)
{
	mutex_lock(&xsim.users_lock);
	if (!--u->vms) {
		WARN_ON(u->queues || u->mem_bytes);
		list_del(&u->node);
		kfree(u);
	}
	mutex_unlock(&xsim.users_lock);
}

/*
 * Charge @queues queues and @bytes of memory to @u: -EDQUOT past
 * sim_user_queues or sim_user_mem_mb, unless the caller has
 * CAP_SYS_RESOURCE.  Negative values uncharge.
 */
static int xsim_user_charge(struct xsim_user *u, int queues, s64 bytes)
{
	int ret = 0;

	mutex_lock(&xsim.users_lock);
	if ((queues > 0 && u->queues + queues > READ_ONCE(sim_user_queues)) ||
	    (bytes > 0 && u->mem_bytes + bytes >
			  (u64)READ_ONCE(sim_user_mem_mb) << 20)) {
		if (!capable(CAP_SYS_RESOURCE)) {
			ret = -EDQUOT;
			goto out;
		}
	}
	u->queues += queues;
	u->mem_bytes += bytes;
out:
	mutex_unlock(&xsim.users_lock);
	return ret;
}

static struct xsim_vm *xsim_vm_create(void)
{
	struct xsim_vm *vm = kzalloc(sizeof(*vm), GFP_KERNEL_ACCOUNT);
	struct xsim_user *u;

	if (!vm)
		return ERR_PTR(-ENOMEM);
	u = xsim_user_get(current_euid());
	if (IS_ERR(u)) {
		kfree(vm);
		return ERR_CAST(u);
	}
	vm->user = u;
	kref_init(&vm->ref);
	mutex_init(&vm->lock);
	xsched_obj_inc(XSCHED_OBJ_SIM_VM);
	return vm;
}

static void xsim_vm_release(struct kref *ref)
{
	struct xsim_vm *vm = container_of(ref, struct xsim_vm, ref);
	int i;

	for (i = 0; i < XSCHED_SIM_MEM_BUFFERS; i++) {
		if (!vm->bufs[i].vaddr)
			continue;
		vfree(vm->bufs[i].vaddr);
		atomic64_sub(vm->bufs[i].size, &xsim.mem_bytes);
		xsim_user_charge(vm->user, 0, -(s64)vm->bufs[i].size);
		xsched_obj_dec(XSCHED_OBJ_SIM_BUFFER);
	}
	xsim_user_put(vm->user);
	mutex_destroy(&vm->lock);
	kfree(vm);
	xsched_obj_dec(XSCHED_OBJ_SIM_VM);
}

static void xsim_ring_remove(struct xsim_queue *q);

/* The sim fd is closed: drop its queues; registered ones live on. */
static void xsim_vm_put(struct xsim_vm *vm)
{
	struct xsim_queue *q;
	int i;

	mutex_lock(&vm->lock);
	for (i = 0; i < XSCHED_SIM_QUEUES; i++) {
		q = vm->queues[i];
		vm->queues[i] = NULL;
		if (!q)
			continue;
		xsim_ring_remove(q);
		kref_put(&q->ref, xsim_queue_release);
	}
	mutex_unlock(&vm->lock);
	kref_put(&vm->ref, xsim_vm_release);
}

static int xsim_mem_alloc(struct xsim_vm *vm, struct xsched_sim_mem *m)
{
	u64 size;
	void *p;
	int i, ret;

	if (m->flags || m->reserved0 || m->reserved[0] || m->reserved[1])
		return -EINVAL;
	if (!m->size || m->size > XSCHED_SIM_MEM_MAX)
		return -EINVAL;
	size = PAGE_ALIGN(m->size);

	mutex_lock(&vm->lock);
	for (i = 0; i < XSCHED_SIM_MEM_BUFFERS; i++)
		if (!vm->bufs[i].vaddr)
			break;
	if (i == XSCHED_SIM_MEM_BUFFERS) {
		mutex_unlock(&vm->lock);
		return -ENOSPC;
	}
	ret = xsim_user_charge(vm->user, 0, size);
	if (ret) {
		mutex_unlock(&vm->lock);
		return ret;
	}
	ret = -ENOMEM;
	if (atomic64_add_return(size, &xsim.mem_bytes) >
	    (s64)READ_ONCE(sim_mem_max_mb) << 20)
		goto err_pool;
	/* Charged to the caller's memory cgroup; xsim_mmap() maps it page by page. */
	p = __vmalloc(size, GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!p)
		goto err_pool;
	xsched_obj_inc(XSCHED_OBJ_SIM_BUFFER);
	vm->bufs[i].size = size;
	/* Pairs with xsim_translate(), which runs without vm->lock. */
	smp_store_release(&vm->bufs[i].vaddr, p);
	mutex_unlock(&vm->lock);
	m->gpu_addr = (u64)(i + 1) << XSIM_ADDR_SHIFT;
	return 0;

err_pool:
	atomic64_sub(size, &xsim.mem_bytes);
	xsim_user_charge(vm->user, 0, -(s64)size);
	mutex_unlock(&vm->lock);
	return ret;
}

static int xsim_mmap(struct xsim_vm *vm, struct vm_area_struct *vma)
{
	u64 addr = (u64)vma->vm_pgoff << PAGE_SHIFT;
	u64 len = vma->vm_end - vma->vm_start;
	unsigned long uaddr;
	void *p;
	int ret;

	/* Device memory is shared: a private copy would silently diverge. */
	if (!(vma->vm_flags & VM_SHARED) ||
	    vma->vm_pgoff > (U64_MAX >> PAGE_SHIFT))
		return -EINVAL;
	p = xsim_translate(vm, addr, len);
	if (!p || !PAGE_ALIGNED(p))
		return -EINVAL;
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	/*
	 * Page by page: an accounted __vmalloc() area is not VM_USERMAP, which
	 * remap_vmalloc_range() wants, and vmalloc_user() cannot be accounted.
	 */
	for (uaddr = vma->vm_start; uaddr < vma->vm_end; uaddr += PAGE_SIZE) {
		ret = vm_insert_page(vma, uaddr, vmalloc_to_page(p));
		if (ret)
			return ret;
		p += PAGE_SIZE;
	}
	return 0;
}

static u64 xsim_ring_key(struct mm_struct *mm, u64 ring)
{
	return ring ^ (u64)(uintptr_t)mm;
}

/*
 * The queue of address space @mm created with ring address @ring that is
 * still in its sim fd; under RCU or xsim.rings_lock.  A queue found under
 * RCU may be on its way out: take it with kref_get_unless_zero().
 */
static struct xsim_queue *xsim_find_ring(struct mm_struct *mm, u64 ring)
{
	struct xsim_queue *q;

	hash_for_each_possible_rcu(xsim.rings, q, ring_node,
				   xsim_ring_key(mm, ring),
				   lockdep_is_held(&xsim.rings_lock))
		if (q->ring_addr == ring && q->mm == mm)
			return q;
	return NULL;
}

/* Its sim fd let go of @q (closed, or QUEUE_DESTROY): its ring is free. */
static void xsim_ring_remove(struct xsim_queue *q)
{
	if (!q->ring_addr)
		return;
	spin_lock(&xsim.rings_lock);
	hash_del_rcu(&q->ring_node);
	spin_unlock(&xsim.rings_lock);
}

static int xsim_queue_create(struct xsim_vm *vm, struct xsched_sim_queue_create *c)
{
	struct xsim_queue *q;
	int i, ret;

	if (c->flags || c->reserved0 || c->reserved[0])
		return -EINVAL;
	if (c->ring_size < 2 || c->ring_size > XSCHED_SIM_RING_MAX ||
	    !is_power_of_2(c->ring_size))
		return -EINVAL;

	q = kzalloc(sizeof(*q), GFP_KERNEL_ACCOUNT);
	if (!q)
		return -ENOMEM;
	kref_init(&q->ref);
	init_waitqueue_head(&q->wq);
	INIT_DELAYED_WORK(&q->watchdog, xsim_watchdog);
	INIT_LIST_HEAD(&q->node);
	INIT_HLIST_NODE(&q->ring_node);
	INIT_LIST_HEAD(&q->run_node);
	INIT_LIST_HEAD(&q->grace_node);
	q->ring_size = c->ring_size;
	q->ring = kvcalloc(c->ring_size, sizeof(*q->ring), GFP_KERNEL_ACCOUNT);
	/* Every slot of the GPU may hold one of this queue's waves. */
	q->save_cap = xsim.ncu * xsim.nwaves;
	q->save_area = __vmalloc(array_size(q->save_cap, sizeof(*q->save_area)),
				 GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	ret = -ENOMEM;
	if (!q->ring || !q->save_area)
		goto err_free;

	mutex_lock(&vm->lock);
	for (i = 0; i < XSCHED_SIM_QUEUES; i++)
		if (!vm->queues[i])
			break;
	if (i == XSCHED_SIM_QUEUES) {
		mutex_unlock(&vm->lock);
		ret = -ENOSPC;
		goto err_free;
	}
	/* Uncharged when the queue is released (xsim_queue_release()). */
	ret = xsim_user_charge(vm->user, 1, 0);
	if (ret) {
		mutex_unlock(&vm->lock);
		goto err_free;
	}
	if (c->ring_addr) {
		q->ring_addr = c->ring_addr;
		q->mm = current->mm;
		mmgrab(q->mm);
	}
	q->id = i;
	q->vm = vm;
	if (q->ring_addr) {
		/* Checked and listed in one step: a ring names one queue. */
		spin_lock(&xsim.rings_lock);
		if (xsim_find_ring(q->mm, q->ring_addr)) {
			spin_unlock(&xsim.rings_lock);
			xsim_user_charge(vm->user, -1, 0);
			mutex_unlock(&vm->lock);
			ret = -EEXIST;
			goto err_free;
		}
		hash_add_rcu(xsim.rings, &q->ring_node,
			     xsim_ring_key(q->mm, q->ring_addr));
		spin_unlock(&xsim.rings_lock);
	}
	kref_get(&vm->ref);
	vm->queues[i] = q;
	spin_lock(&xsim.lock);
	list_add_tail(&q->node, &xsim.queues);
	spin_unlock(&xsim.lock);
	mutex_unlock(&vm->lock);

	xsched_obj_inc(XSCHED_OBJ_SIM_QUEUE);
	c->queue_id = i;
	c->save_area_size = (u64)q->save_cap * sizeof(*q->save_area);
	return 0;

err_free:
	if (q->mm)
		mmdrop(q->mm);
	vfree(q->save_area);
	kvfree(q->ring);
	kfree(q);
	return ret;
}

static void xsim_queue_release(struct kref *ref)
{
	struct xsim_queue *q = container_of(ref, struct xsim_queue, ref);
	unsigned int c, w;

	spin_lock(&xsim.lock);
	/* Nobody can reach the queue any more: take its waves off the CUs. */
	for (c = 0; c < xsim.ncu; c++)
		for (w = 0; w < xsim.nwaves; w++)
			if (xsim.cus[c].waves[w].q == q)
				xsim.cus[c].waves[w].q = NULL;
	list_del(&q->node);
	list_del(&q->run_node);
	list_del(&q->grace_node);
	spin_unlock(&xsim.lock);
	/* Taken out of xsim.rings when its sim fd let go of it. */
	WARN_ON_ONCE(!hlist_unhashed(&q->ring_node));
	cancel_delayed_work_sync(&q->watchdog);
	xsim_user_charge(q->vm->user, -1, 0);
	kref_put(&q->vm->ref, xsim_vm_release);
	if (q->mm)
		mmdrop(q->mm);
	vfree(q->save_area);
	kvfree(q->ring);
	/* A BY_RING lookup under RCU may still be looking at it. */
	kfree_rcu(q, rcu);
	xsched_obj_dec(XSCHED_OBJ_SIM_QUEUE);
}

/*
 * The owner destroys queue @d->queue_id while it goes on, as with KFD's
 * AMDKFD_IOC_DESTROY_QUEUE: the slot (its id) is free for the next create
 * at once, and a registration keeps only the dead queue, failed with
 * ENODEV: what the kfd backend's queue identity check gives on hardware.
 */
static int xsim_queue_destroy(struct xsim_vm *vm,
			      const struct xsched_sim_queue_destroy *d)
{
	struct xsim_queue *q;

	if (d->flags || d->reserved[0])
		return -EINVAL;
	if (d->queue_id >= XSCHED_SIM_QUEUES)
		return -ENOENT;
	mutex_lock(&vm->lock);
	q = vm->queues[d->queue_id];
	vm->queues[d->queue_id] = NULL;
	if (!q) {
		mutex_unlock(&vm->lock);
		return -ENOENT;
	}
	/*
	 * Id and ring address are freed in one step under vm->lock, which a
	 * create holds across its ring check: one that gets the id never
	 * finds the ring still taken (EEXIST).
	 */
	xsim_ring_remove(q);		/* its ring address is free too */
	spin_lock(&xsim.lock);
	xsim_queue_fail(q, -ENODEV);
	spin_unlock(&xsim.lock);
	mutex_unlock(&vm->lock);
	kref_put(&q->ref, xsim_queue_release);
	return 0;
}

static struct xsim_queue *xsim_queue_get(struct xsim_vm *vm, u64 id)
{
	struct xsim_queue *q = NULL;

	if (id >= XSCHED_SIM_QUEUES)
		return NULL;
	mutex_lock(&vm->lock);
	q = vm->queues[id];
	if (q)
		kref_get(&q->ref);
	mutex_unlock(&vm->lock);
	return q;
}

static int xsim_packet_check(const struct xsched_sim_packet *p)
{
	if ((p->kernel != XSCHED_SIM_KERNEL_ACCUMULATE &&
	     p->kernel != XSCHED_SIM_KERNEL_MARK) || p->flags ||
	    p->reserved[0] || p->reserved[1])
		return -EINVAL;
	if (!p->grid || p->grid > XSCHED_SIM_GRID_MAX)
		return -EINVAL;
	if (!p->steps || p->steps > XSCHED_SIM_STEPS_MAX)
		return -EINVAL;
	if (p->step_ns > XSCHED_SIM_STEP_NS_MAX)
		return -EINVAL;
	return 0;
}

static int xsim_submit(struct xsim_vm *vm, struct xsched_sim_submit *s)
{
	struct xsched_sim_packet *pkts;
	struct xsim_queue *q;
	u32 i;
	int ret;

	if (s->flags || s->reserved0 || s->reserved[0] || s->reserved[1])
		return -EINVAL;
	if (!s->count || s->count > XSCHED_SIM_SUBMIT_MAX)
		return -EINVAL;
	q = xsim_queue_get(vm, s->queue_id);
	if (!q)
		return -ENOENT;

	pkts = memdup_array_user(u64_to_user_ptr(s->packets), s->count,
				 sizeof(*pkts));
	if (IS_ERR(pkts)) {
		ret = PTR_ERR(pkts);
		goto out_put;
	}
	for (i = 0; i < s->count; i++) {
		ret = xsim_packet_check(&pkts[i]);
		if (ret)
			goto out_free;
	}

	spin_lock(&xsim.lock);
	if (q->run == XSIM_FAILED) {
		ret = -EIO;
	} else if (q->wptr - q->rptr + s->count > q->ring_size) {
		ret = -EAGAIN;
	} else {
		for (i = 0; i < s->count; i++)
			q->ring[(q->wptr + i) & (q->ring_size - 1)] = pkts[i];
		q->wptr += s->count;
		s->seq = q->wptr;
		xsim_queue_requeue(q);
		/* The doorbell. */
		xsim_kick_all();
		if (q->xq)
			xsched_queue_wake(q->xq, q->rptr, q->wptr);
		ret = 0;
	}
	spin_unlock(&xsim.lock);
out_free:
	kfree(pkts);
out_put:
	kref_put(&q->ref, xsim_queue_release);
	return ret;
}

static int xsim_wait(struct xsim_vm *vm, struct xsched_sim_wait *wt)
{
	struct xsim_queue *q;
	ktime_t timeout;
	u64 wptr;
	long ret;

	if (wt->flags || wt->reserved[0] || wt->reserved[1])
		return -EINVAL;
	q = xsim_queue_get(vm, wt->queue_id);
	if (!q)
		return -ENOENT;

	spin_lock(&xsim.lock);
	wptr = q->wptr;
	spin_unlock(&xsim.lock);
	if (wt->seq > wptr) {
		ret = -EINVAL;
		goto out;
	}

#define XSIM_WAIT_DONE (READ_ONCE(q->rptr) >= wt->seq || \
			READ_ONCE(q->run) == XSIM_FAILED)
	timeout = ns_to_ktime(min_t(u64, wt->timeout_ns, KTIME_MAX / 2));
	if (!wt->timeout_ns)
		ret = XSIM_WAIT_DONE ? 0 : -ETIME;
	else
		ret = wait_event_interruptible_hrtimeout(q->wq, XSIM_WAIT_DONE,
							 timeout);
#undef XSIM_WAIT_DONE
	if (ret == -ERESTARTSYS)
		ret = -EINTR;
	else if (ret == -ETIME)
		ret = -ETIMEDOUT;

	spin_lock(&xsim.lock);
	wt->completed = q->rptr;
	/* Work that completed before a failure still counts as done. */
	if (q->rptr < wt->seq && q->run == XSIM_FAILED)
		ret = -EIO;
	else if (q->rptr >= wt->seq)
		ret = 0;
	spin_unlock(&xsim.lock);
out:
	kref_put(&q->ref, xsim_queue_release);
	return ret;
}

/* Register queue @id of @vm; with @expect, only if that is still the queue. */
static struct xsched_queue *xsim_register(struct xsim_vm *vm, u64 id,
					  struct xsim_queue *expect, s32 priority)
{
	struct xsched_queue *xq;
	struct xsim_queue *q;

	if (id >= XSCHED_SIM_QUEUES)
		return ERR_PTR(-ENOENT);
	/* vm->lock makes the EEXIST check and the binding one step. */
	mutex_lock(&vm->lock);
	q = vm->queues[id];
	if (!q || (expect && q != expect)) {
		xq = ERR_PTR(-ENOENT);
		goto out;
	}
	if (READ_ONCE(q->xq)) {
		xq = ERR_PTR(-EEXIST);
		goto out;
	}
	xq = xsched_queue_create(XSCHED_BACKEND_SIM, &xsim_ops, q, &xsim,
				 priority);
	if (IS_ERR(xq))
		goto out;
	/* The registration holds a reference on each side until release. */
	kref_get(&q->ref);
	kref_get(&xq->ref);
	spin_lock(&xsim.lock);
	q->xq = xq;
	if (q->run == XSIM_FAILED)
		xsched_queue_failed(xq, q->error);
	spin_unlock(&xsim.lock);
out:
	mutex_unlock(&vm->lock);
	return xq;
}

/* debugfs: reset a registered sim queue by uid. */
static int xsim_reset_set(void *data, u64 uid)
{
	struct xsched_queue *xq = xsched_queue_get_by_uid(uid);
	int ret = 0;

	if (!xq)
		return -ENOENT;
	if (xq->ops != &xsim_ops) {
		ret = -EINVAL;
	} else {
		/* priv is cleared under the lock when the queue is released. */
		spin_lock(&xsim.lock);
		if (xq->priv)
			xsim_queue_fail(xq->priv, -EIO);
		else
			ret = -ENOENT;
		spin_unlock(&xsim.lock);
	}
	xsched_queue_put(xq);
	return ret;
}
DEFINE_DEBUGFS_ATTRIBUTE(xsim_reset_fops, NULL, xsim_reset_set, "%llu\n");

static const struct file_operations xsim_fops;

/* XSCHED_IOC_REGISTER of the core, backend sim: @fd is the sim fd owning @handle. */
static struct xsched_queue *xsim_op_bind(int fd, u64 handle, s32 priority)
{
	struct xsched_queue *xq;
	struct file *file;

	file = fget(fd);
	if (!file)
		return ERR_PTR(-EBADF);
	/* Only a sim fd carries an xsim_vm. */
	if (file->f_op != &xsim_fops)
		xq = ERR_PTR(-EINVAL);
	else
		xq = xsim_register(file->private_data, handle, NULL, priority);
	fput(file);
	return xq;
}

/* XSCHED_REGISTER_BY_RING: the caller's queue created with ring address @ring. */
static struct xsched_queue *xsim_op_bind_ring(u64 ring, s32 priority)
{
	struct xsched_queue *xq;
	struct xsim_queue *q;

	rcu_read_lock();
	q = xsim_find_ring(current->mm, ring);
	if (q && !kref_get_unless_zero(&q->ref))
		q = NULL;
	rcu_read_unlock();
	if (!q)
		return ERR_PTR(-ENOENT);
	/* Our reference keeps q->vm; its sim fd may close meanwhile (ENOENT). */
	xq = xsim_register(q->vm, q->id, q, priority);
	kref_put(&q->ref, xsim_queue_release);
	return xq;
}

/* The device: /dev/xsched_sim, one sim context (xsim_vm) per open. */

static int xsim_open(struct inode *inode, struct file *file)
{
	struct xsim_vm *vm = xsim_vm_create();

	if (IS_ERR(vm))
		return PTR_ERR(vm);
	file->private_data = vm;
	return 0;
}

static int xsim_release(struct inode *inode, struct file *file)
{
	xsim_vm_put(file->private_data);
	return 0;
}

static int xsim_file_mmap(struct file *file, struct vm_area_struct *vma)
{
	return xsim_mmap(file->private_data, vma);
}

static long xsim_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct xsim_vm *vm = file->private_data;
	void __user *uarg = (void __user *)arg;
	union {
		struct xsched_sim_info i;
		struct xsched_sim_mem m;
		struct xsched_sim_queue_create qc;
		struct xsched_sim_submit s;
		struct xsched_sim_wait w;
		struct xsched_sim_queue_destroy d;
	} u;
	long ret;

	switch (cmd) {
	case XSCHED_IOC_SIM_INFO:
		memset(&u.i, 0, sizeof(u.i));
		u.i.cus = xsim.ncu;
		u.i.waves_per_cu = xsim.nwaves;
		u.i.wave_state_bytes = sizeof(struct xsim_wave_state);
		return copy_to_user(uarg, &u.i, sizeof(u.i)) ? -EFAULT : 0;
	case XSCHED_IOC_SIM_MEM_ALLOC:
	case XSCHED_IOC_SIM_QUEUE_CREATE:
	case XSCHED_IOC_SIM_SUBMIT:
	case XSCHED_IOC_SIM_WAIT:
	case XSCHED_IOC_SIM_QUEUE_DESTROY:
		break;
	default:
		return -ENOTTY;
	}
	if (copy_from_user(&u, uarg, _IOC_SIZE(cmd)))
		return -EFAULT;
	/* In only: nothing to write back. */
	if (cmd == XSCHED_IOC_SIM_QUEUE_DESTROY)
		return xsim_queue_destroy(vm, &u.d);
	/*
	 * Probe that the results can be written back before anything is
	 * created: a read-only argument must not leave a buffer, queue or
	 * submission behind an EFAULT.  Only a concurrent munmap() or
	 * mprotect() can still make the final copy fail.
	 */
	if (copy_to_user(uarg, &u, _IOC_SIZE(cmd)))
		return -EFAULT;

	switch (cmd) {
	case XSCHED_IOC_SIM_MEM_ALLOC:
		ret = xsim_mem_alloc(vm, &u.m);
		break;
	case XSCHED_IOC_SIM_QUEUE_CREATE:
		ret = xsim_queue_create(vm, &u.qc);
		break;
	case XSCHED_IOC_SIM_SUBMIT:
		ret = xsim_submit(vm, &u.s);
		break;
	default:
		ret = xsim_wait(vm, &u.w);
		/* completed is reported on timeout and failure too */
		if (ret && ret != -EFAULT && copy_to_user(uarg, &u, _IOC_SIZE(cmd)))
			return -EFAULT;
		break;
	}
	if (!ret && copy_to_user(uarg, &u, _IOC_SIZE(cmd)))
		return -EFAULT;
	return ret;
}

static const struct file_operations xsim_fops = {
	.owner = THIS_MODULE,
	.open = xsim_open,
	.release = xsim_release,
	.unlocked_ioctl = xsim_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = xsim_file_mmap,
	.llseek = noop_llseek,
};

static struct miscdevice xsim_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = XSCHED_SIM_DEVICE_NAME,
	.fops = &xsim_fops,
	.mode = 0666,
};

static void xsim_stop_cus(void);

static int __init xsim_init(void)
{
	unsigned int i;
	int ret;

	if (!sim_cus || sim_cus > 64 || !sim_waves_per_cu || sim_waves_per_cu > 16) {
		pr_err("xsched: sim_cus must be 1-64 and sim_waves_per_cu 1-16\n");
		return -EINVAL;
	}
	spin_lock_init(&xsim.lock);
	INIT_LIST_HEAD(&xsim.queues);
	spin_lock_init(&xsim.rings_lock);
	hash_init(xsim.rings);
	INIT_LIST_HEAD(&xsim.runnable);
	INIT_LIST_HEAD(&xsim.graced);
	mutex_init(&xsim.users_lock);
	INIT_LIST_HEAD(&xsim.users);
	xsim.ncu = sim_cus;
	xsim.nwaves = sim_waves_per_cu;
	xsim.save_timeout_ms = 1000;
	xsim.hws_update_us = 100;
	xsim.cus = kcalloc(xsim.ncu, sizeof(*xsim.cus), GFP_KERNEL);
	if (!xsim.cus)
		return -ENOMEM;
	for (i = 0; i < xsim.ncu; i++) {
		struct xsim_cu *cu = &xsim.cus[i];

		init_waitqueue_head(&cu->wq);
		cu->waves = kcalloc(xsim.nwaves, sizeof(*cu->waves), GFP_KERNEL);
		if (!cu->waves) {
			ret = -ENOMEM;
			goto err;
		}
		cu->thread = kthread_run(xsim_cu_thread, cu, "xsched_cu/%u", i);
		if (IS_ERR(cu->thread)) {
			ret = PTR_ERR(cu->thread);
			cu->thread = NULL;
			goto err;
		}
	}

	xsim.dir = debugfs_create_dir("sim", xsched_debugfs_dir());
	debugfs_create_u32("save_delay_us", 0644, xsim.dir, &xsim.save_delay_us);
	debugfs_create_u32("fail_save", 0644, xsim.dir, &xsim.fail_save);
	debugfs_create_u32("fail_resume", 0644, xsim.dir, &xsim.fail_resume);
	debugfs_create_u32("save_timeout_ms", 0644, xsim.dir, &xsim.save_timeout_ms);
	debugfs_create_u32("fake_suspend", 0644, xsim.dir, &xsim.fake_suspend);
	debugfs_create_u32("ignore_suspend", 0644, xsim.dir, &xsim.ignore_suspend);
	debugfs_create_u32("hws", 0644, xsim.dir, &xsim.hws);
	debugfs_create_u32("hws_update_us", 0644, xsim.dir, &xsim.hws_update_us);
	debugfs_create_u64("runlist_updates", 0444, xsim.dir, &xsim.runlist_updates);
	debugfs_create_file_unsafe("reset_queue", 0200, xsim.dir, NULL,
				   &xsim_reset_fops);
	ret = misc_register(&xsim_misc);
	if (ret)
		goto err_debugfs;
	ret = xsched_backend_register(XSCHED_BACKEND_SIM, &xsim_ops);
	if (ret)
		goto err_misc;
	pr_info("xsched_sim: /dev/%s ready (a test device), %u CUs x %u waves\n",
		XSCHED_SIM_DEVICE_NAME, xsim.ncu, xsim.nwaves);
	return 0;

err_misc:
	misc_deregister(&xsim_misc);
err_debugfs:
	debugfs_remove_recursive(xsim.dir);
err:
	xsim_stop_cus();
	return ret;
}

/*
 * Every sim fd and every queue registered from one pins the module, so at
 * exit no queue is left and no bind can start.
 */
static void __exit xsim_exit(void)
{
	xsched_backend_unregister(XSCHED_BACKEND_SIM, &xsim_ops);
	misc_deregister(&xsim_misc);
	debugfs_remove_recursive(xsim.dir);
	xsim_stop_cus();
}

static void xsim_stop_cus(void)
{
	unsigned int i;

	if (!xsim.cus)
		return;
	for (i = 0; i < xsim.ncu; i++) {
		if (xsim.cus[i].thread)
			kthread_stop(xsim.cus[i].thread);
		kfree(xsim.cus[i].waves);
	}
	kfree(xsim.cus);
	xsim.cus = NULL;
	WARN_ON(!list_empty(&xsim.queues));
}

module_init(xsim_init);
module_exit(xsim_exit);
MODULE_DESCRIPTION("xsched sim GPU: a software GPU backend for tests");
MODULE_LICENSE("GPL");
