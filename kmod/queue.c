// SPDX-License-Identifier: GPL-2.0
/*
 * xsched core: the queue object, its fd and its state machine.
 *
 *   ACTIVE --suspend--> SUSPENDING --backend done--> SUSPENDED --resume--> ACTIVE
 *                           |  \--resume (cancel)-----------------------> ACTIVE
 *                           \--drain grace expired--------------------> ACTIVE
 *   any --backend fault/reset--> FAILED (terminal: the backend is not called again)
 *
 * A queue fd owns one registration.  Its release resumes a suspended queue
 * first, so nothing stays stopped once its owner is gone.
 */
#include <linux/anon_inodes.h>
#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "xsched.h"
#include "trace.h"

#define XSCHED_GRACE_MAX_NS	(60ULL * NSEC_PER_SEC)

static DEFINE_IDA(xsched_uid_ida);
/* All registered queues, for debugfs and fault injection by uid. */
static LIST_HEAD(xsched_queues);
static DEFINE_MUTEX(xsched_queues_lock);

static const char *const xsched_state_names[] = {
	[XSCHED_STATE_ACTIVE] = "active",
	[XSCHED_STATE_SUSPENDING] = "suspending",
	[XSCHED_STATE_SUSPENDED] = "suspended",
	[XSCHED_STATE_FAILED] = "failed",
};

/* Modes by number, and the sets a backend offers by BIT(mode) (drain 2, save 4). */
static const char *const xsched_mode_names[] = {
	[XSCHED_MODE_DRAIN] = "drain",
	[XSCHED_MODE_SAVE] = "save",
};

static const char *const xsched_modes_names[] = {
	"-", "-", "drain", "drain", "save", "save", "drain,save", "drain,save",
};

static const char *const xsched_backend_names[] = {
	[XSCHED_BACKEND_SIM] = "sim",
	[XSCHED_BACKEND_KFD] = "kfd",
};

int xsched_priority_check(s32 priority, s32 old)
{
	if (priority < XSCHED_PRIO_MIN || priority > XSCHED_PRIO_MAX)
		return -EINVAL;
	/* As for CPU nice values: raising urgency above the default is privileged. */
	if (priority > 0 && priority > old && !capable(CAP_SYS_NICE))
		return -EPERM;
	return 0;
}

/*
 * The arbiter: one work item that looks at every arbitrated queue of every
 * process.  The highest priority among busy queues (unfinished work) wins;
 * every arbitrated queue below it is suspended (SAVE if its backend can,
 * else DRAIN, without blocking) and resumed once it has been allowed to run
 * for arbiter_resume_delay_us, which keeps a bursty urgent queue from making
 * the batch queue thrash.  Busy-ness is re-read every arbiter_poll_us while
 * anything is busy or stopped (kfd queues have no completion events), and at
 * once when a backend reports a submission or completion.
 *
 * A pass takes references to the arbitrated queues under xsched_queues_lock
 * and drops the lock before it reads progress or calls a backend: a kfd
 * progress read or an HWS preemption can take milliseconds, and must not
 * hold up registering or closing queues.  The suspends and resumes one pass
 * decides are handed to the backend together (batch_begin/batch_end), so
 * that HWS can apply them with one preemption of the device.  The arb_*
 * fields are written only by the arbiter work, which never runs twice at
 * once.
 */
static unsigned int arbiter_resume_delay_us = 1000;
module_param(arbiter_resume_delay_us, uint, 0644);
MODULE_PARM_DESC(arbiter_resume_delay_us,
		 "Time a suspended queue waits, once allowed, before the arbiter resumes it (default 1000)");

static unsigned int arbiter_poll_us = 1000;
module_param(arbiter_poll_us, uint, 0644);
MODULE_PARM_DESC(arbiter_poll_us,
		 "How often the arbiter re-reads queue progress while any queue is busy, and poll() on queues without progress events (default 1000)");

static bool arbiter_batch = true;
module_param(arbiter_batch, bool, 0644);
MODULE_PARM_DESC(arbiter_batch,
		 "Let a backend apply the suspends and resumes of one arbiter pass together (default Y)");

/*
 * Test only: the next N suspends each log a WARN.  `make check` uses it to prove
 * that a kernel splat fails the suite that caused it (Documentation/testing.rst).
 */
static unsigned int debug_inject_warn;
module_param(debug_inject_warn, uint, 0600);
MODULE_PARM_DESC(debug_inject_warn,
		 "Test only: make the next N suspends log a kernel WARNING (default 0)");

static void xsched_inject_warn(void)
{
	unsigned int n = READ_ONCE(debug_inject_warn);

	while (n && !try_cmpxchg(&debug_inject_warn, &n, n - 1))
		;
	WARN(n, "xsched: injected warning (debug_inject_warn)\n");
}

static void xsched_arbiter(struct work_struct *work);
static DECLARE_WORK(xsched_arbiter_work, xsched_arbiter);
/* Microsecond delays: a jiffy (4 ms at HZ=250) would dwarf them. */
static struct hrtimer xsched_arbiter_timer;

static void xsched_arbiter_kick(void)
{
	queue_work(system_wq, &xsched_arbiter_work);
}

static enum hrtimer_restart xsched_arbiter_timer_fn(struct hrtimer *t)
{
	xsched_arbiter_kick();
	return HRTIMER_NORESTART;
}

static enum hrtimer_restart xsched_poll_timer_fn(struct hrtimer *t)
{
	struct xsched_queue *q = container_of(t, struct xsched_queue, poll_timer);

	wake_up_all(&q->wq);
	return HRTIMER_NORESTART;
}

struct xsched_queue *xsched_queue_create(u32 backend,
					 const struct xsched_backend_ops *ops,
					 void *priv, s32 priority)
{
	struct xsched_queue *q;
	int uid;

	q = kzalloc(sizeof(*q), GFP_KERNEL_ACCOUNT);
	if (!q)
		return ERR_PTR(-ENOMEM);
	uid = ida_alloc_min(&xsched_uid_ida, 1, GFP_KERNEL);
	if (uid < 0) {
		kfree(q);
		return ERR_PTR(uid);
	}
	kref_init(&q->ref);
	/* The caller runs in the backend's module: it is pinned already. */
	__module_get(ops->owner);
	q->uid = uid;
	q->backend = backend;
	q->ops = ops;
	q->priv = priv;
	q->priority = priority;
	q->state = XSCHED_STATE_ACTIVE;
	/* Registration runs in the ioctl of the registering process. */
	q->pid = task_tgid_nr(current);
	get_task_comm(q->comm, current);
	mutex_init(&q->lock);
	spin_lock_init(&q->state_lock);
	init_waitqueue_head(&q->wq);
	INIT_LIST_HEAD(&q->waiters);
	hrtimer_init(&q->poll_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	q->poll_timer.function = xsched_poll_timer_fn;

	mutex_lock(&xsched_queues_lock);
	list_add_tail(&q->node, &xsched_queues);
	mutex_unlock(&xsched_queues_lock);
	xsched_obj_inc(XSCHED_OBJ_QUEUE);
	return q;
}
EXPORT_SYMBOL_GPL(xsched_queue_create);

static void xsched_queue_free(struct kref *ref)
{
	struct xsched_queue *q = container_of(ref, struct xsched_queue, ref);

	const struct xsched_backend_ops *ops = q->ops;

	ida_free(&xsched_uid_ida, q->uid);
	mutex_destroy(&q->lock);
	kfree(q);
	xsched_obj_dec(XSCHED_OBJ_QUEUE);
	module_put(ops->owner);
}

void xsched_queue_put(struct xsched_queue *q)
{
	kref_put(&q->ref, xsched_queue_free);
}
EXPORT_SYMBOL_GPL(xsched_queue_put);

/*
 * References to the registered queues (only arbitrated ones if @arb), taken
 * under xsched_queues_lock so that the caller can work on them without it.
 * Returns the count and sets *out (kvfree() it after putting each queue),
 * or -ENOMEM.
 */
static int xsched_queues_snapshot(struct xsched_queue ***out, bool arb)
{
	struct xsched_queue **v = NULL, *q;
	unsigned int n, cap = 0, i;

	for (;;) {
		n = 0;
		mutex_lock(&xsched_queues_lock);
		list_for_each_entry(q, &xsched_queues, node) {
			if (arb && !q->arbitrated)
				continue;
			if (n < cap) {
				kref_get(&q->ref);
				v[n] = q;
			}
			n++;
		}
		mutex_unlock(&xsched_queues_lock);
		if (!n) {	/* emptied meanwhile */
			kvfree(v);
			v = NULL;
		}
		if (n <= cap)
			break;
		/* More than room for: let go and try again, larger. */
		for (i = 0; i < cap; i++)
			xsched_queue_put(v[i]);
		kvfree(v);
		cap = n + 16;
		v = kvmalloc_array(cap, sizeof(*v), GFP_KERNEL);
		if (!v)
			return -ENOMEM;
	}
	*out = v;
	return n;
}

static void xsched_queues_snapshot_put(struct xsched_queue **v, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		xsched_queue_put(v[i]);
	kvfree(v);
}

/* Progress of a queue the caller holds a reference to, but not its fd. */
static bool xsched_queue_progress_ref(struct xsched_queue *q,
				      struct xsched_progress *p)
{
	bool ok;

	memset(p, 0, sizeof(*p));
	mutex_lock(&q->lock);
	ok = !q->released;
	if (ok)
		q->ops->progress(q, p);
	mutex_unlock(&q->lock);
	return ok;
}

struct xsched_queue *xsched_queue_get_by_uid(u32 uid)
{
	struct xsched_queue *q, *found = NULL;

	mutex_lock(&xsched_queues_lock);
	list_for_each_entry(q, &xsched_queues, node) {
		if (q->uid == uid) {
			kref_get(&q->ref);
			found = q;
			break;
		}
	}
	mutex_unlock(&xsched_queues_lock);
	return found;
}
EXPORT_SYMBOL_GPL(xsched_queue_get_by_uid);

/* The backend saw work submitted or completed; its pointers are now these. */
void xsched_queue_wake(struct xsched_queue *q, u64 rptr, u64 wptr)
{
	trace_xsched_queue_progress(q->uid, rptr, wptr);
	wake_up_all(&q->wq);
	if (q->arbitrated)
		xsched_arbiter_kick();
}
EXPORT_SYMBOL_GPL(xsched_queue_wake);

/* A blocked XSCHED_IOC_SUSPEND: told the outcome of its own suspend. */
struct xsched_waiter {
	struct list_head node;		/* q->waiters, under state_lock */
	u32 seq;
	bool done;
	int result;
	u64 ns, saved_bytes;
};

/* The suspend numbered @seq ended: tell its waiters.  state_lock held. */
static void xsched_waiters_done(struct xsched_queue *q, u32 seq, int result,
				u64 ns, u64 saved_bytes)
{
	struct xsched_waiter *w;

	lockdep_assert_held(&q->state_lock);
	list_for_each_entry(w, &q->waiters, node) {
		if (w->seq != seq || w->done)
			continue;
		w->result = result;
		w->ns = ns;
		w->saved_bytes = saved_bytes;
		WRITE_ONCE(w->done, true);
	}
}

/* Called by the backend when the suspend numbered @seq has stopped the queue. */
void xsched_queue_suspend_done(struct xsched_queue *q, u32 seq, int err,
			       u64 saved_bytes)
{
	bool by_arbiter;
	pid_t pid;
	u32 mode, busy_uid;
	s32 busy_prio;
	u64 ns;

	spin_lock(&q->state_lock);
	/* A late report for a suspend that was cancelled or superseded. */
	if (q->state != XSCHED_STATE_SUSPENDING || q->seq != seq) {
		spin_unlock(&q->state_lock);
		return;
	}
	ns = ktime_to_ns(ktime_sub(ktime_get(), q->suspend_start));
	xsched_waiters_done(q, seq, err, ns, saved_bytes);
	if (err) {
		/* The backend has undone the suspend (drain grace expired). */
		q->state = XSCHED_STATE_ACTIVE;
		q->last_error = err;
		q->faults++;
		q->stopped_ns += ns;
	} else {
		q->state = XSCHED_STATE_SUSPENDED;
		q->suspended_at = ktime_get();
		q->suspends++;
		q->last_suspend_ns = ns;
		q->total_suspend_ns += ns;
		q->max_suspend_ns = max(q->max_suspend_ns, ns);
		q->last_saved_bytes = saved_bytes;
		q->saved_bytes += saved_bytes;
	}
	mode = q->mode;
	by_arbiter = q->by_arbiter;
	pid = q->suspender;
	busy_uid = q->busy_uid;
	busy_prio = q->busy_prio;
	spin_unlock(&q->state_lock);
	trace_xsched_queue_suspend(q->uid, mode, ns, saved_bytes, err,
				   by_arbiter, pid, busy_uid, busy_prio);
	wake_up_all(&q->wq);
}
EXPORT_SYMBOL_GPL(xsched_queue_suspend_done);

/* Called by the backend when the queue was reset or faulted. */
void xsched_queue_failed(struct xsched_queue *q, int err)
{
	spin_lock(&q->state_lock);
	if (q->state == XSCHED_STATE_FAILED) {
		spin_unlock(&q->state_lock);
		return;
	}
	if (q->state == XSCHED_STATE_SUSPENDING)
		xsched_waiters_done(q, q->seq, err == -ETIMEDOUT ? err : -EIO, 0, 0);
	if (q->state == XSCHED_STATE_SUSPENDING || q->state == XSCHED_STATE_SUSPENDED)
		q->stopped_ns += ktime_to_ns(ktime_sub(ktime_get(), q->suspend_start));
	q->state = XSCHED_STATE_FAILED;
	q->last_error = err;
	q->faults++;
	spin_unlock(&q->state_lock);
	trace_xsched_queue_fault(q->uid, err);
	wake_up_all(&q->wq);
}
EXPORT_SYMBOL_GPL(xsched_queue_failed);

static u32 xsched_queue_state(struct xsched_queue *q)
{
	u32 state;

	spin_lock(&q->state_lock);
	state = q->state;
	spin_unlock(&q->state_lock);
	return state;
}

/*
 * Start a suspend; on success *seq identifies it.  @w (or NULL) is queued
 * to learn its outcome, before the backend can report it; the caller takes
 * it off q->waiters.  @busy: the arbiter suspends @q because @busy (of
 * priority @busy_prio) has work; NULL: the calling process asked.
 */
static int xsched_queue_start_suspend(struct xsched_queue *q, u32 mode,
				      u64 grace_ns, u32 *seq,
				      struct xsched_waiter *w,
				      struct xsched_queue *busy, s32 busy_prio)
{
	pid_t pid = busy ? 0 : task_tgid_nr(current);

	int ret;

	lockdep_assert_held(&q->lock);
	spin_lock(&q->state_lock);
	switch (q->state) {
	case XSCHED_STATE_FAILED:
		ret = -EIO;
		break;
	case XSCHED_STATE_SUSPENDING:
	case XSCHED_STATE_SUSPENDED:
		ret = -EALREADY;
		break;
	default:
		ret = 0;
		q->state = XSCHED_STATE_SUSPENDING;
		q->mode = mode;
		q->seq++;
		q->suspend_start = ktime_get();
		q->by_arbiter = busy;
		q->suspender = pid;
		q->busy_uid = busy ? busy->uid : 0;
		q->busy_prio = busy_prio;
		if (w) {
			w->seq = q->seq;
			list_add_tail(&w->node, &q->waiters);
		}
		break;
	}
	*seq = q->seq;
	spin_unlock(&q->state_lock);
	if (ret)
		return ret;

	ret = q->ops->suspend(q, mode, grace_ns, *seq);
	if (ret) {
		spin_lock(&q->state_lock);
		if (w)
			list_del(&w->node);
		if (q->state == XSCHED_STATE_SUSPENDING && q->seq == *seq) {
			q->state = XSCHED_STATE_ACTIVE;
			/* EAGAIN: nothing was done, try again; not a fault. */
			if (ret != -EAGAIN) {
				q->last_error = ret;
				q->faults++;
			}
		}
		spin_unlock(&q->state_lock);
		trace_xsched_queue_suspend(q->uid, mode, 0, 0, ret, busy, pid,
					   busy ? busy->uid : 0, busy_prio);
	}
	return ret;
}

static int xsched_queue_suspend(struct xsched_queue *q, struct xsched_suspend *s)
{
	bool block = !(s->flags & XSCHED_SUSPEND_NONBLOCK);
	struct xsched_waiter w = {};
	int ret;
	u32 seq;

	if (s->flags & ~XSCHED_SUSPEND_FLAGS || s->reserved[0] || s->reserved[1])
		return -EINVAL;
	s->latency_ns = 0;
	s->saved_bytes = 0;
	if (s->mode != XSCHED_MODE_DRAIN && s->mode != XSCHED_MODE_SAVE)
		return -EINVAL;
	if (s->grace_ns > XSCHED_GRACE_MAX_NS)
		return -EINVAL;
	if (!(q->ops->modes & BIT(s->mode)))
		return -EOPNOTSUPP;
	xsched_inject_warn();
	if (q->arbitrated)
		return -EBUSY;

	mutex_lock(&q->lock);
	ret = xsched_queue_start_suspend(q, s->mode, s->grace_ns, &seq,
					 block ? &w : NULL, NULL, 0);
	/* Resume (which cancels) and query must go on while we wait. */
	mutex_unlock(&q->lock);
	if (ret || !block)
		return ret;

	ret = wait_event_interruptible(q->wq, READ_ONCE(w.done) ||
				       READ_ONCE(q->seq) != seq ||
				       READ_ONCE(q->state) != XSCHED_STATE_SUSPENDING);
	/*
	 * Our suspend's own outcome, even if other threads have resumed and
	 * suspended the queue again since.  Not done: a resume cancelled it
	 * before the backend finished, or a signal came first (the suspend
	 * goes on; QUERY shows its outcome).
	 */
	spin_lock(&q->state_lock);
	list_del(&w.node);
	if (w.done) {
		ret = w.result;
		if (!ret) {
			s->latency_ns = w.ns;
			s->saved_bytes = w.saved_bytes;
		}
	} else {
		ret = ret ? -EINTR : -ECANCELED;
	}
	spin_unlock(&q->state_lock);
	return ret;
}

static int xsched_queue_do_resume(struct xsched_queue *q, u64 *suspended_ns)
{
	u32 state;
	int ret;

	lockdep_assert_held(&q->lock);
	state = xsched_queue_state(q);
	if (state == XSCHED_STATE_FAILED)
		return -EIO;
	if (state == XSCHED_STATE_ACTIVE)
		return -EALREADY;

	ret = q->ops->resume(q);
	spin_lock(&q->state_lock);
	if (ret) {
		/*
		 * The queue stays as it was: still stopped, saved state kept.
		 * If the backend failed it meanwhile, that error stands.
		 */
		if (q->state != XSCHED_STATE_FAILED && ret != -EAGAIN) {
			q->last_error = ret;
			q->faults++;
		}
		spin_unlock(&q->state_lock);
		trace_xsched_queue_resume(q->uid, 0, ret);
		return ret;
	}
	/*
	 * Only a completed suspend counts as resumed; a cancelled one never
	 * stopped the queue (suspended_ns 0).  FAILED stays sticky if the
	 * backend failed the queue meanwhile.
	 */
	*suspended_ns = 0;
	if (q->state == XSCHED_STATE_SUSPENDED) {
		*suspended_ns = ktime_to_ns(ktime_sub(ktime_get(), q->suspended_at));
		q->resumes++;
	}
	if (q->state != XSCHED_STATE_FAILED) {
		q->stopped_ns += ktime_to_ns(ktime_sub(ktime_get(), q->suspend_start));
		q->state = XSCHED_STATE_ACTIVE;
	}
	spin_unlock(&q->state_lock);
	trace_xsched_queue_resume(q->uid, *suspended_ns, 0);
	wake_up_all(&q->wq);
	return 0;
}

static int xsched_queue_resume(struct xsched_queue *q, struct xsched_resume *r)
{
	int ret;

	if (r->flags || r->reserved0 || r->reserved[0] || r->reserved[1])
		return -EINVAL;
	r->suspended_ns = 0;
	if (q->arbitrated)
		return -EBUSY;
	mutex_lock(&q->lock);
	ret = xsched_queue_do_resume(q, &r->suspended_ns);
	mutex_unlock(&q->lock);
	return ret;
}

static int xsched_queue_query(struct xsched_queue *q, struct xsched_queue_info *i)
{
	struct xsched_progress p = {};
	int k;

	if (i->flags)
		return -EINVAL;
	for (k = 0; k < ARRAY_SIZE(i->reserved); k++)
		if (i->reserved[k])
			return -EINVAL;

	/* Progress first: the backend lock nests outside state_lock. */
	q->ops->progress(q, &p);
	memset(i, 0, sizeof(*i));
	i->rptr = p.rptr;
	i->wptr = p.wptr;
	i->steps_done = p.steps_done;
	i->saved_waves = p.saved_waves;
	i->save_area_size = p.save_area_size;

	spin_lock(&q->state_lock);
	i->state = q->state;
	i->backend = q->backend;
	i->priority = q->priority;
	i->queue_uid = q->uid;
	i->last_mode = q->mode;
	i->last_error = q->last_error;
	i->suspends = q->suspends;
	i->resumes = q->resumes;
	i->faults = q->faults;
	i->last_suspend_ns = q->last_suspend_ns;
	i->total_suspend_ns = q->total_suspend_ns;
	i->max_suspend_ns = q->max_suspend_ns;
	i->saved_bytes = q->saved_bytes;
	i->arbiter_suspends = q->arbiter_suspends;
	spin_unlock(&q->state_lock);
	i->arbitrated = q->arbitrated;
	i->modes = q->ops->modes;
	return 0;
}

static int xsched_queue_set_priority(struct xsched_queue *q,
				     struct xsched_set_priority *sp)
{
	int ret;

	if (sp->flags || sp->reserved[0] || sp->reserved[1])
		return -EINVAL;
	mutex_lock(&q->lock);
	ret = xsched_priority_check(sp->priority, q->priority);
	if (!ret) {
		spin_lock(&q->state_lock);
		q->priority = sp->priority;
		spin_unlock(&q->state_lock);
	}
	mutex_unlock(&q->lock);
	if (!ret && q->arbitrated)
		xsched_arbiter_kick();
	return ret;
}

/*
 * The queue mutex, for the arbiter.  Inside a batch a device may be halted
 * for every process: never sleep there on a queue (its close may be waiting
 * on its owner); the next pass tries again.
 */
static bool xsched_arbiter_lock(struct xsched_queue *q, bool in_batch)
{
	if (in_batch)
		return mutex_trylock(&q->lock);
	mutex_lock(&q->lock);
	return true;
}

/* Suspend @q for the arbiter, which decided @top must run. */
static void xsched_arbiter_stop(struct xsched_queue *q, bool in_batch,
				struct xsched_queue *top, s32 prio, s32 top_prio,
				ktime_t now)
{
	u32 mode = q->ops->modes & BIT(XSCHED_MODE_SAVE) ? XSCHED_MODE_SAVE :
							   XSCHED_MODE_DRAIN;
	int ret = -EAGAIN;
	u32 seq;

	if (xsched_arbiter_lock(q, in_batch)) {
		ret = q->released ? -ENODEV :
			xsched_queue_start_suspend(q, mode, 0, &seq, NULL, top,
						   top_prio);
		mutex_unlock(&q->lock);
	}
	/* EALREADY: stopped already (by an earlier pass): resume it later. */
	if (!ret || ret == -EALREADY) {
		WRITE_ONCE(q->arb_stopped, true);
		q->arb_stopped_at = now;
	}
	if (!ret) {
		spin_lock(&q->state_lock);
		q->arbiter_suspends++;
		spin_unlock(&q->state_lock);
	}
	trace_xsched_arbiter_decision(q->uid, prio, true, top->uid, top_prio, 0,
				      ret);
}

/* Resume @q, which the arbiter stopped and has allowed long enough. */
static void xsched_arbiter_go(struct xsched_queue *q, bool in_batch, s32 prio,
			      ktime_t now)
{
	int ret = -EAGAIN;
	u64 ns;

	if (xsched_arbiter_lock(q, in_batch)) {
		ret = q->released ? -ENODEV : xsched_queue_do_resume(q, &ns);
		mutex_unlock(&q->lock);
	}
	/*
	 * EALREADY: the suspend already undid itself; EIO: failed for good;
	 * ENODEV: closed.  Any other failure is retried on the next pass.
	 */
	if (!ret || ret == -EALREADY || ret == -ENODEV ||
	    xsched_queue_state(q) == XSCHED_STATE_FAILED)
		WRITE_ONCE(q->arb_stopped, false);
	trace_xsched_arbiter_decision(q->uid, prio, false, 0, 0,
				      ktime_to_ns(ktime_sub(now, q->arb_stopped_at)),
				      ret);
}

enum xsched_arb_act { XSCHED_ARB_NONE, XSCHED_ARB_STOP, XSCHED_ARB_GO };

/* One queue of a pass. */
struct xsched_arb_entry {
	s32 prio;		/* read once per pass */
	u8 act;			/* enum xsched_arb_act */
	bool failed;
};

/* A backend's batch for one arbiter pass. */
struct xsched_arb_batch {
	const struct xsched_backend_ops *ops;	/* NULL: none begun */
	void *cookie;
};

/*
 * Hand each backend the queues this pass acts on, so that it can apply
 * them together.  @tmp has room for every queue of the pass.
 */
static void xsched_arbiter_batch(struct xsched_queue **v,
				 const struct xsched_arb_entry *e,
				 unsigned int n, struct xsched_queue **tmp,
				 struct xsched_arb_batch *b)
{
	const struct xsched_backend_ops *ops;
	unsigned int i, j, k;

	for (i = 0; i < n; i++) {
		ops = v[i]->ops;
		if (e[i].act == XSCHED_ARB_NONE || b[v[i]->backend].ops ||
		    !ops->batch_begin)
			continue;
		for (j = i, k = 0; j < n; j++)
			if (e[j].act != XSCHED_ARB_NONE && v[j]->ops == ops)
				tmp[k++] = v[j];
		if (k < 2)
			continue;
		b[v[i]->backend].cookie = ops->batch_begin(tmp, k);
		b[v[i]->backend].ops = ops;
	}
}

static void xsched_arbiter(struct work_struct *work)
{
	s64 poll = max_t(s64, (s64)READ_ONCE(arbiter_poll_us) * NSEC_PER_USEC,
			 NSEC_PER_USEC);
	s64 delay = (s64)READ_ONCE(arbiter_resume_delay_us) * NSEC_PER_USEC;
	struct xsched_arb_batch batch[XSCHED_BACKEND_NR] = {};
	struct xsched_queue **v, **tmp, *q, *top = NULL;
	struct xsched_arb_entry *e;
	unsigned int i, n, nact = 0;
	struct xsched_progress p;
	ktime_t now = ktime_get();
	s32 top_prio = 0;
	bool again = false;
	s64 next = poll, waited;
	int ret;

	BUILD_BUG_ON(ARRAY_SIZE(xsched_backend_names) != XSCHED_BACKEND_NR);
	ret = xsched_queues_snapshot(&v, true);
	if (ret <= 0) {
		if (ret)	/* no memory: try again later */
			hrtimer_start(&xsched_arbiter_timer, ns_to_ktime(poll),
				      HRTIMER_MODE_REL);
		return;
	}
	n = ret;
	/* Room for n pointers (batching), then the entries. */
	tmp = kvzalloc(n * (sizeof(*tmp) + sizeof(*e)), GFP_KERNEL);
	if (!tmp) {
		xsched_queues_snapshot_put(v, n);
		hrtimer_start(&xsched_arbiter_timer, ns_to_ktime(poll),
			      HRTIMER_MODE_REL);
		return;
	}
	e = (struct xsched_arb_entry *)(tmp + n);

	/* Who is busy, and the highest priority among them. */
	for (i = 0; i < n; i++) {
		q = v[i];
		e[i].prio = READ_ONCE(q->priority);
		if (xsched_queue_state(q) == XSCHED_STATE_FAILED ||
		    !xsched_queue_progress_ref(q, &p) ||
		    xsched_queue_state(q) == XSCHED_STATE_FAILED) {
			e[i].failed = true;
			continue;
		}
		if (p.rptr == p.wptr)
			continue;
		again = true;
		if (!top || e[i].prio > top_prio) {
			top = q;
			top_prio = e[i].prio;
		}
	}
	/* Decide. */
	for (i = 0; i < n; i++) {
		q = v[i];
		if (e[i].failed)
			continue;
		if (top && q != top && e[i].prio < top_prio) {
			q->arb_allowed_since = 0;
			again = true;
			if (!q->arb_stopped) {
				e[i].act = XSCHED_ARB_STOP;
				nact++;
			}
			continue;
		}
		if (!q->arb_stopped)
			continue;
		if (!q->arb_allowed_since)
			q->arb_allowed_since = now;
		waited = ktime_to_ns(ktime_sub(now, q->arb_allowed_since));
		again = true;
		if (waited < delay) {
			next = min(next, delay - waited);
			continue;
		}
		e[i].act = XSCHED_ARB_GO;
		nact++;
	}
	/* Act, in one batch per backend where there is more than one thing to do. */
	if (nact > 1 && READ_ONCE(arbiter_batch))
		xsched_arbiter_batch(v, e, n, tmp, batch);
	for (i = 0; i < n; i++) {
		bool in_batch = batch[v[i]->backend].ops;

		if (e[i].act == XSCHED_ARB_STOP)
			xsched_arbiter_stop(v[i], in_batch, top, e[i].prio,
					    top_prio, now);
		else if (e[i].act == XSCHED_ARB_GO)
			xsched_arbiter_go(v[i], in_batch, e[i].prio, now);
		/* What failed or had to wait is tried again on the next pass. */
		if ((e[i].act == XSCHED_ARB_GO && v[i]->arb_stopped) ||
		    (e[i].act == XSCHED_ARB_STOP && !v[i]->arb_stopped))
			next = min(next, poll);
	}
	for (i = 0; i < XSCHED_BACKEND_NR; i++)
		if (batch[i].ops)
			batch[i].ops->batch_end(batch[i].cookie);
	kvfree(tmp);
	xsched_queues_snapshot_put(v, n);
	if (again)
		hrtimer_start(&xsched_arbiter_timer, ns_to_ktime(max_t(s64, next, 1000)),
			      HRTIMER_MODE_REL);
}

void xsched_queue_set_arbitrated(struct xsched_queue *q)
{
	mutex_lock(&xsched_queues_lock);
	q->arbitrated = true;
	mutex_unlock(&xsched_queues_lock);
	xsched_arbiter_kick();
}

/*
 * Copy in, run, copy out.  Every struct is copied whole so that reserved
 * fields can be checked; _IOC_SIZE of the command fixes the size.
 */
static long xsched_queue_ioctl(struct file *file, unsigned int cmd,
			       unsigned long arg)
{
	struct xsched_queue *q = file->private_data;
	void __user *uarg = (void __user *)arg;
	union {
		struct xsched_suspend s;
		struct xsched_resume r;
		struct xsched_queue_info i;
		struct xsched_set_priority p;
	} u;
	long ret;

	switch (cmd) {
	case XSCHED_IOC_SUSPEND:
	case XSCHED_IOC_RESUME:
	case XSCHED_IOC_QUERY:
	case XSCHED_IOC_SET_PRIORITY:
		break;
	default:
		return -ENOTTY;
	}
	if (copy_from_user(&u, uarg, _IOC_SIZE(cmd)))
		return -EFAULT;
	/* As on the client: fail before acting if results cannot be returned. */
	if ((_IOC_DIR(cmd) & _IOC_READ) && copy_to_user(uarg, &u, _IOC_SIZE(cmd)))
		return -EFAULT;

	switch (cmd) {
	case XSCHED_IOC_SUSPEND:
		ret = xsched_queue_suspend(q, &u.s);
		break;
	case XSCHED_IOC_RESUME:
		ret = xsched_queue_resume(q, &u.r);
		break;
	case XSCHED_IOC_QUERY:
		ret = xsched_queue_query(q, &u.i);
		break;
	default:
		return xsched_queue_set_priority(q, &u.p);
	}
	/* Outputs are valid on success only; EINTR leaves the suspend running. */
	if (!ret && (_IOC_DIR(cmd) & _IOC_READ) &&
	    copy_to_user(uarg, &u, _IOC_SIZE(cmd)))
		return -EFAULT;
	return ret;
}

static __poll_t xsched_queue_poll(struct file *file, poll_table *wait)
{
	struct xsched_queue *q = file->private_data;
	struct xsched_progress p = {};
	__poll_t mask = 0;
	u32 state;

	poll_wait(file, &q->wq, wait);
	q->ops->progress(q, &p);
	state = xsched_queue_state(q);
	if (p.rptr == p.wptr)
		mask |= EPOLLIN | EPOLLRDNORM;
	else if (q->ops->polled && state != XSCHED_STATE_FAILED &&
		 !hrtimer_is_queued(&q->poll_timer))
		/*
		 * Nothing wakes a waiter when the GPU catches up: a timer does,
		 * and each poll it causes arms it again while work is left.
		 */
		hrtimer_start(&q->poll_timer,
			      ns_to_ktime(max(READ_ONCE(arbiter_poll_us), 100U) *
					  NSEC_PER_USEC),
			      HRTIMER_MODE_REL);
	if (state == XSCHED_STATE_SUSPENDED)
		mask |= EPOLLPRI;
	if (state == XSCHED_STATE_FAILED)
		mask |= EPOLLERR;
	return mask;
}

/*
 * Undo a registration.  Off the list first, so that no new pass of the
 * arbiter or debugfs finds the queue; one that holds a reference already
 * sees ->released under q->lock and calls nothing.  Then the queue is
 * resumed if stopped, and the backend lets go (restarting the queue itself
 * if resume failed).
 */
static void xsched_queue_unregister(struct xsched_queue *q)
{
	u64 ns;
	int ret;

	mutex_lock(&xsched_queues_lock);
	list_del(&q->node);
	mutex_unlock(&xsched_queues_lock);
	trace_xsched_queue_unregister(q->uid);

	mutex_lock(&q->lock);
	ret = xsched_queue_do_resume(q, &ns);
	if (ret && ret != -EALREADY && ret != -EIO)
		pr_warn("xsched: queue %u: resume on close failed (%d), forcing it\n",
			q->uid, ret);
	q->ops->release(q);
	q->released = true;
	mutex_unlock(&q->lock);
	/* No poller is left once the file is released. */
	hrtimer_cancel(&q->poll_timer);
	xsched_queue_put(q);
}

static int xsched_queue_release(struct inode *inode, struct file *file)
{
	xsched_queue_unregister(file->private_data);
	return 0;
}

static const struct file_operations xsched_queue_fops = {
	.owner = THIS_MODULE,
	.release = xsched_queue_release,
	.unlocked_ioctl = xsched_queue_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.poll = xsched_queue_poll,
	.llseek = noop_llseek,
};

/*
 * Give @q its fd.  The fd number is written to userspace before the fd is
 * installed, so a fault leaves no fd behind.  On error the registration is
 * undone here.
 */
int xsched_queue_install_fd(struct xsched_queue *q, struct xsched_register *reg,
			    struct xsched_register __user *ureg)
{
	struct file *file;
	int fd;

	fd = get_unused_fd_flags(O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		xsched_queue_unregister(q);
		return fd;
	}
	file = anon_inode_getfile("[xsched-queue]", &xsched_queue_fops, q,
				  O_RDWR | O_CLOEXEC);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		xsched_queue_unregister(q);
		return PTR_ERR(file);
	}
	reg->queue_fd = fd;
	reg->queue_uid = q->uid;
	if (copy_to_user(ureg, reg, sizeof(*reg))) {
		/* fput() runs the release, which unregisters q. */
		put_unused_fd(fd);
		fput(file);
		return -EFAULT;
	}
	trace_xsched_queue_register(q->uid, q->backend, q->priority,
				    q->arbitrated, q->pid, q->comm);
	fd_install(fd, file);
	return fd;
}

static int xsched_queues_show(struct seq_file *m, void *unused)
{
	struct xsched_queue **v, *q;
	struct xsched_progress p;
	u64 stopped;
	int i, n;

	seq_puts(m, "uid backend state prio arbiter rptr wptr steps suspends resumes faults last_ns max_ns total_ns saved_bytes saved_waves last_error pid stopped_ns arbiter_suspends modes mode comm\n");
	n = xsched_queues_snapshot(&v, false);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		q = v[i];
		if (!xsched_queue_progress_ref(q, &p))
			continue;	/* closed meanwhile */
		spin_lock(&q->state_lock);
		stopped = q->stopped_ns;
		/* The interval still going on counts up to now. */
		if (q->state == XSCHED_STATE_SUSPENDING ||
		    q->state == XSCHED_STATE_SUSPENDED)
			stopped += ktime_to_ns(ktime_sub(ktime_get(), q->suspend_start));
		seq_printf(m, "%u %s %s %d %s %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %u %d %d %llu %llu %s %s ",
			   q->uid, xsched_backend_names[q->backend],
			   xsched_state_names[q->state], q->priority,
			   !q->arbitrated ? "-" :
			   READ_ONCE(q->arb_stopped) ? "stopped" : "run",
			   p.rptr, p.wptr, p.steps_done, q->suspends,
			   q->resumes, q->faults, q->last_suspend_ns,
			   q->max_suspend_ns, q->total_suspend_ns,
			   q->saved_bytes, p.saved_waves, q->last_error,
			   q->pid, stopped, q->arbiter_suspends,
			   xsched_modes_names[q->ops->modes & 7],
			   q->mode ? xsched_mode_names[q->mode] : "-");
		spin_unlock(&q->state_lock);
		/* A command may hold spaces: escaped as \040, like /proc/mounts. */
		seq_escape(m, q->comm, " \t\n\\");
		seq_putc(m, '\n');
	}
	xsched_queues_snapshot_put(v, n);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(xsched_queues);

void xsched_queues_init(void)
{
	hrtimer_init(&xsched_arbiter_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	xsched_arbiter_timer.function = xsched_arbiter_timer_fn;
}

void xsched_queues_debugfs(struct dentry *root)
{
	debugfs_create_file("queues", 0444, root, NULL, &xsched_queues_fops);
}

void xsched_queues_exit(void)
{
	/* No queue is left, so a last pass cannot re-arm the timer. */
	cancel_work_sync(&xsched_arbiter_work);
	hrtimer_cancel(&xsched_arbiter_timer);
	cancel_work_sync(&xsched_arbiter_work);
	/* Every queue fd holds a module reference: none can be left. */
	WARN_ON(!list_empty(&xsched_queues));
	ida_destroy(&xsched_uid_ida);
}
