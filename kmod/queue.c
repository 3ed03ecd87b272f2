// SPDX-License-Identifier: GPL-2.0
/*
 * xsched core: the queue object and its state machine.  Its fd (the
 * ioctls, poll and the release that undoes a registration) is queue_fd.c,
 * which drives the queue through the functions here.
 *
 *   ACTIVE --suspend--> SUSPENDING --backend done--> SUSPENDED --resume--> ACTIVE
 *                           |  \--resume (cancel)-----------------------> ACTIVE
 *                           \--drain grace expired--------------------> ACTIVE
 *   any --backend fault/reset--> FAILED (terminal: the backend is not called again)
 *
 * A queue fd owns one registration.  Its release resumes a suspended queue
 * first, so nothing stays stopped once its owner is gone.
 *
 * The core does not trust a backend to answer.  A suspend still SUSPENDING
 * suspend_timeout_ms after its grace period fails the queue with ETIMEDOUT
 * (a DRAIN without a grace period gets the longest one, so that it ends
 * too), and a queue whose step count moves while it is SUSPENDED fails with
 * EPROTO: its backend said it stopped and it did not.  Either way every
 * waiter, and the arbiter, learn it at once, and nothing waits on the
 * backend again.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/debugfs.h>
#include <linux/hrtimer.h>
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "xsched.h"
#include "trace.h"

static DEFINE_IDA(xsched_uid_ida);
/* All registered queues, for debugfs and fault injection by uid. */
static LIST_HEAD(xsched_queues);
static DEFINE_MUTEX(xsched_queues_lock);

/*
 * The arbiter, installed by arbiter.c before /dev/xsched exists and removed
 * after the last queue is gone (every queue pins the module).
 */
const struct xsched_queue_arbiter *xsched_queue_arb;

void xsched_queue_set_arbiter(const struct xsched_queue_arbiter *arb)
{
	WRITE_ONCE(xsched_queue_arb, arb);
}

static void xsched_queue_arbiter_event(struct xsched_queue *q)
{
	if (q->arbitrated)
		xsched_queue_arb->event(q);
}

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
 * How long past its grace period a suspend may stay SUSPENDING before the
 * core gives up on the backend.  Longer than the backends' own limits (the
 * sim's save watchdog, KFD's preemption timeout), which fail the queue with
 * their own errors first.
 */
static unsigned int suspend_timeout_ms = 10000;
module_param(suspend_timeout_ms, uint, 0644);
MODULE_PARM_DESC(suspend_timeout_ms,
		 "A suspend not completed this long after its grace period fails the queue with ETIMEDOUT (100-600000, default 10000)");

static void xsched_queue_timeout_fn(struct work_struct *work);

static enum hrtimer_restart xsched_poll_timer_fn(struct hrtimer *t)
{
	struct xsched_queue *q = container_of(t, struct xsched_queue, poll_timer);

	wake_up_all(&q->wq);
	return HRTIMER_NORESTART;
}

struct xsched_queue *xsched_queue_create(u32 backend,
					 const struct xsched_backend_ops *ops,
					 void *priv, const void *device,
					 s32 priority)
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
	q->device = device;
	q->priority = priority;
	q->state = XSCHED_STATE_ACTIVE;
	/* Registration runs in the ioctl of the registering process. */
	q->pid = task_tgid_nr(current);
	get_task_comm(q->comm, current);
	q->owner = current_euid();
	mutex_init(&q->lock);
	spin_lock_init(&q->state_lock);
	init_waitqueue_head(&q->wq);
	INIT_LIST_HEAD(&q->waiters);
	xsched_hrtimer_setup(&q->poll_timer, xsched_poll_timer_fn,
			     CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	INIT_DELAYED_WORK(&q->timeout_work, xsched_queue_timeout_fn);

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
 * References to the registered queues, taken under xsched_queues_lock so
 * that the caller can work on them without it.  Returns the count and sets
 * *out (kvfree() it after putting each queue), or -ENOMEM.
 */
static int xsched_queues_snapshot(struct xsched_queue ***out)
{
	struct xsched_queue **v = NULL, *q;
	unsigned int n, cap = 0, i;

	for (;;) {
		n = 0;
		mutex_lock(&xsched_queues_lock);
		list_for_each_entry(q, &xsched_queues, node) {
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
bool xsched_queue_progress_ref(struct xsched_queue *q, struct xsched_progress *p)
{
	bool ok;

	memset(p, 0, sizeof(*p));
	mutex_lock(&q->lock);
	ok = !q->released;
	if (ok)
		xsched_queue_read_progress(q, p);
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

/* Off the list of registered queues: no new pass or debugfs read finds @q. */
void xsched_queue_unlist(struct xsched_queue *q)
{
	mutex_lock(&xsched_queues_lock);
	list_del(&q->node);
	mutex_unlock(&xsched_queues_lock);
}

/* The backend saw work submitted or completed; its pointers are now these. */
void xsched_queue_wake(struct xsched_queue *q, u64 rptr, u64 wptr)
{
	trace_xsched_queue_progress(q->uid, rptr, wptr);
	wake_up_all(&q->wq);
	xsched_queue_arbiter_event(q);
}
EXPORT_SYMBOL_GPL(xsched_queue_wake);

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
	bool by_arbiter, by_admin;
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
		q->stop_gen++;
		q->stop_snap_valid = false;
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
	by_admin = q->by_admin;
	pid = q->suspender;
	busy_uid = q->busy_uid;
	busy_prio = q->busy_prio;
	spin_unlock(&q->state_lock);
	trace_xsched_queue_suspend(q->uid, mode, ns, saved_bytes, err,
				   by_arbiter, by_admin, pid, busy_uid, busy_prio);
	wake_up_all(&q->wq);
}
EXPORT_SYMBOL_GPL(xsched_queue_suspend_done);

/*
 * The backend's resume cancelled a SAVE after it had written @saved_bytes
 * of wave state (the waves saved so far are restored).  The suspend never
 * completed and is not counted, but the bytes were written: saved_bytes
 * counts every byte of wave state written (uAPI), and it is the trace a
 * cancelled save leaves (an urgent kernel took a slot it freed).
 */
void xsched_queue_save_cancelled(struct xsched_queue *q, u64 saved_bytes)
{
	spin_lock(&q->state_lock);
	q->saved_bytes += saved_bytes;
	spin_unlock(&q->state_lock);
}
EXPORT_SYMBOL_GPL(xsched_queue_save_cancelled);

/*
 * Fail @q with @err; with @pred, only while @pred says so (state_lock held).
 * Returns whether it failed it.
 */
static bool xsched_queue_fail_if(struct xsched_queue *q, int err,
				 bool (*pred)(struct xsched_queue *q, void *arg),
				 void *arg)
{
	spin_lock(&q->state_lock);
	if (q->state == XSCHED_STATE_FAILED || (pred && !pred(q, arg))) {
		spin_unlock(&q->state_lock);
		return false;
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
	/* Its work will never finish: it must not hold others back. */
	xsched_queue_arbiter_event(q);
	return true;
}

/* Called by the backend when the queue was reset or faulted. */
void xsched_queue_failed(struct xsched_queue *q, int err)
{
	xsched_queue_fail_if(q, err, NULL, NULL);
}
EXPORT_SYMBOL_GPL(xsched_queue_failed);

/*
 * Is the suspend the timeout was armed for still SUSPENDING past its
 * deadline?  The deadline is checked too: a run of the work that a
 * completed suspend armed can start late, after a resume and the next
 * suspend armed it again.  state_lock held.
 */
static bool xsched_queue_overdue(struct xsched_queue *q, void *unused)
{
	return q->state == XSCHED_STATE_SUSPENDING && q->seq == q->timeout_seq &&
	       time_after_eq(jiffies, q->timeout_at);
}

static void xsched_queue_timeout_fn(struct work_struct *work)
{
	struct xsched_queue *q = container_of(to_delayed_work(work),
					      struct xsched_queue, timeout_work);

	if (xsched_queue_fail_if(q, -ETIMEDOUT, xsched_queue_overdue, NULL))
		pr_warn_ratelimited("xsched: queue %u: the %s backend did not complete a suspend in time, queue failed\n",
				    q->uid, q->ops->name);
}

struct xsched_stop_read {
	u32 gen;	/* q->stop_gen before the read */
	u64 steps;	/* what the backend reported */
};

/*
 * Is the step count read (a struct xsched_stop_read) a lie?  The first read
 * of a stop is what later ones are compared with.  state_lock held.
 */
static bool xsched_queue_lied(struct xsched_queue *q, void *arg)
{
	const struct xsched_stop_read *r = arg;

	if (q->state != XSCHED_STATE_SUSPENDED || q->resuming ||
	    q->stop_gen != r->gen)
		return false;
	if (!q->stop_snap_valid) {
		q->stop_snap_valid = true;
		q->stop_steps = r->steps;
		return false;
	}
	return r->steps != q->stop_steps;
}

/*
 * The backend's progress of @q, checked: a queue held SUSPENDED whose steps
 * still move fails with EPROTO (its backend lied about stopping it).  The
 * state is read before and after, so a read that a suspend's completion or
 * a resume overlaps is never compared.
 */
void xsched_queue_read_progress(struct xsched_queue *q, struct xsched_progress *p)
{
	struct xsched_stop_read r;
	bool check;

	spin_lock(&q->state_lock);
	r.gen = q->stop_gen;
	check = q->state == XSCHED_STATE_SUSPENDED && !q->resuming;
	spin_unlock(&q->state_lock);
	q->ops->progress(q, p);
	r.steps = p->steps_done;
	if (check && xsched_queue_fail_if(q, -EPROTO, xsched_queue_lied, &r))
		pr_warn_ratelimited("xsched: queue %u: the %s backend reported it stopped, but it runs; queue failed\n",
				    q->uid, q->ops->name);
}

u32 xsched_queue_state(struct xsched_queue *q)
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
 * priority @busy_prio) has work; NULL: the calling process asked, as an
 * administrator (XSCHED_IOC_ADMIN) if @admin.
 */
int xsched_queue_start_suspend(struct xsched_queue *q, u32 mode, u64 grace_ns,
			       u32 *seq, struct xsched_waiter *w,
			       struct xsched_queue *busy, s32 busy_prio, bool admin)
{
	pid_t pid = busy ? 0 : task_tgid_nr(current);

	int ret;

	lockdep_assert_held(&q->lock);
	/* "No limit" is the longest grace: every suspend ends (see the top). */
	if (mode == XSCHED_MODE_DRAIN && !grace_ns)
		grace_ns = XSCHED_GRACE_MAX_NS;
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
		q->by_admin = admin;
		q->suspender = pid;
		q->busy_uid = busy ? busy->uid : 0;
		q->busy_prio = busy_prio;
		/*
		 * Counted before the backend is asked: it may complete the
		 * suspend before it returns, and a QUERY that sees the queue
		 * SUSPENDED by the arbiter must see it counted.
		 */
		if (busy)
			q->arbiter_suspends++;
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
	if (!ret) {
		unsigned long timeout = nsecs_to_jiffies(grace_ns) +
			msecs_to_jiffies(clamp(READ_ONCE(suspend_timeout_ms),
					       100U, 600000U)) + 1;

		/* Done already (kfd, an idle sim queue): the work finds that. */
		spin_lock(&q->state_lock);
		q->timeout_seq = *seq;
		q->timeout_at = jiffies + timeout;
		spin_unlock(&q->state_lock);
		mod_delayed_work(system_wq, &q->timeout_work, timeout);
	} else {
		spin_lock(&q->state_lock);
		if (w)
			list_del(&w->node);
		if (busy)
			q->arbiter_suspends--;	/* never started */
		if (q->state == XSCHED_STATE_SUSPENDING && q->seq == *seq) {
			q->state = XSCHED_STATE_ACTIVE;
			/* EAGAIN: nothing was done, try again; not a fault. */
			if (ret != -EAGAIN) {
				q->last_error = ret;
				q->faults++;
			}
		}
		spin_unlock(&q->state_lock);
		trace_xsched_queue_suspend(q->uid, mode, 0, 0, ret, busy, admin,
					   pid, busy ? busy->uid : 0, busy_prio);
	}
	return ret;
}

int xsched_queue_do_resume(struct xsched_queue *q, u64 *suspended_ns)
{
	u32 state;
	int ret;

	lockdep_assert_held(&q->lock);
	state = xsched_queue_state(q);
	if (state == XSCHED_STATE_FAILED)
		return -EIO;
	if (state == XSCHED_STATE_ACTIVE)
		return -EALREADY;

	/* From here until it is ACTIVE the queue may run again. */
	spin_lock(&q->state_lock);
	q->resuming = true;
	q->stop_gen++;
	spin_unlock(&q->state_lock);
	ret = q->ops->resume(q);
	spin_lock(&q->state_lock);
	q->resuming = false;
	q->stop_gen++;
	q->stop_snap_valid = false;
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

/* An administrator's suspend is in force: its owner may not undo it. */
static int xsched_queues_show(struct seq_file *m, void *unused)
{
	struct xsched_queue **v, *q;
	struct xsched_progress p;
	u64 stopped;
	int i, n;

	seq_puts(m, "uid backend state prio arbiter rptr wptr steps suspends resumes faults last_ns max_ns total_ns saved_bytes saved_waves last_error pid stopped_ns arbiter_suspends modes mode comm\n");
	n = xsched_queues_snapshot(&v);
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
			   READ_ONCE(q->arb.stopped) ? "stopped" : "run",
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

void xsched_queues_debugfs(struct dentry *root)
{
	BUILD_BUG_ON(ARRAY_SIZE(xsched_backend_names) != XSCHED_BACKEND_NR);
	debugfs_create_file("queues", 0444, root, NULL, &xsched_queues_fops);
}

void xsched_queues_exit(void)
{
	/* Every queue fd holds a module reference: none can be left. */
	WARN_ON(!list_empty(&xsched_queues));
	ida_destroy(&xsched_uid_ida);
}
