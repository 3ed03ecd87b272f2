// SPDX-License-Identifier: GPL-2.0
/*
 * The arbiter (XSCHED_REGISTER_ARBITRATE): while an arbitrated queue of
 * higher priority has unfinished work, the arbitrated queues below it are
 * suspended (SAVE if their backend can, else DRAIN, without blocking), and
 * resumed once no higher queue has been busy for arbiter_resume_delay_us,
 * which keeps a bursty urgent queue from making batch queues thrash.
 *
 * Domains.  Queues meet only within a domain: one device (the sim is one,
 * each KFD GPU node is one) and one user.  A user's queues never suspend
 * another user's unless the administrator sets arbiter_cross_user, which
 * puts the queues registered afterwards in one domain per device.  Each
 * domain has its own work item and timer; the work items run one at a time
 * on the arbiter's own ordered workqueue, so the arbiter state of a queue
 * is written by one pass at a time.
 *
 * Bounded work.  A pass never walks every queue of its domain.  The domain
 * keeps, per priority, the queues that run, those it stopped and the busy
 * ones; a queue's busy-ness is read again only when its backend reported
 * progress (xsched_queue_wake()), and for backends without such events
 * (kfd) for at most XSCHED_ARB_PASS_MAX queues per pass, in turn.  A pass
 * acts on at most XSCHED_ARB_PASS_MAX queues, busy ones first, and queues
 * the next pass at once for the rest.  Registration of arbitrated queues is
 * limited per user (arbiter_max_queues).
 *
 * A pass reads progress and calls backends with no list lock held: a kfd
 * preemption can take milliseconds.  The suspends and resumes it decides
 * are handed to the backend together (batch_begin/batch_end), so that HWS
 * can apply them with one preemption of the device; inside a batch the
 * queue mutexes are only tried, and a pass whose queues were busy backs off.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/hrtimer.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "xsched.h"
#include "trace.h"

#define XSCHED_ARB_PASS_MAX	64	/* queues read, and queues acted on, per pass */
#define XSCHED_ARB_NPRIO	(XSCHED_PRIO_MAX - XSCHED_PRIO_MIN + 1)
#define XSCHED_ARB_NONE		(XSCHED_PRIO_MIN - 1)	/* no queue is busy */
#define XSCHED_ARB_BACKOFF_MAX	6	/* retries wait up to 64 polls */

static unsigned int arbiter_resume_delay_us = 1000;
module_param(arbiter_resume_delay_us, uint, 0644);
MODULE_PARM_DESC(arbiter_resume_delay_us,
		 "Time a suspended queue waits, once allowed, before the arbiter resumes it (default 1000)");

static unsigned int arbiter_poll_us = 1000;
module_param(arbiter_poll_us, uint, 0644);
MODULE_PARM_DESC(arbiter_poll_us,
		 "How often the arbiter re-reads the progress of queues without progress events (kfd), and poll() on them (default 1000)");

static bool arbiter_batch = true;
module_param(arbiter_batch, bool, 0644);
MODULE_PARM_DESC(arbiter_batch,
		 "Let a backend apply the suspends and resumes of one arbiter pass together (default Y)");

static bool arbiter_cross_user;
module_param(arbiter_cross_user, bool, 0644);
MODULE_PARM_DESC(arbiter_cross_user,
		 "Let arbitrated queues of different users suspend each other; applies to queues registered afterwards (default N)");

static unsigned int arbiter_max_queues = 4096;
module_param(arbiter_max_queues, uint, 0644);
MODULE_PARM_DESC(arbiter_max_queues,
		 "Arbitrated queues one user may have registered at once; more give EDQUOT, except with CAP_SYS_RESOURCE (default 4096)");

/* The queues of one priority in a domain. */
struct xsched_arb_prio {
	struct list_head running;	/* not stopped by the arbiter; busy ones first */
	struct list_head stopped;	/* stopped by the arbiter; busy ones first */
	struct list_head busy;
};

/* What one pass does to one queue. */
struct xsched_arb_item {
	struct xsched_queue *q;
	bool stop;			/* else resume */
	int ret;
};

struct xsched_arb_domain {
	struct list_head node;		/* xsched_arb_domains, under xsched_arb_lock */
	const void *device;
	kuid_t user;			/* INVALID_UID: every user (arbiter_cross_user) */
	unsigned int nqueues;		/* under xsched_arb_lock */
	struct work_struct work;	/* one pass */
	struct hrtimer timer;		/* queues the work: polls, resume delays */
	struct rcu_head rcu;		/* xsched_arbiter_event() may still look */

	spinlock_t lock;		/* everything below, and members' arb */
	bool dead;			/* no member left: queue no more work */
	struct list_head events;	/* members whose progress changed */
	struct list_head polled;	/* members without progress events */
	unsigned int npolled;
	s32 top;			/* busy priority, as the last pass saw it */
	ktime_t lowered_at;		/* when top last went down */
	unsigned int backoff;		/* passes in a row that must retry */
	ktime_t act_after;		/* no suspend or resume before this */
	struct xsched_arb_prio prio[XSCHED_ARB_NPRIO];

	/* The work's own (it never runs twice at once). */
	struct xsched_arb_item items[XSCHED_ARB_PASS_MAX];
	struct xsched_queue *batch[XSCHED_ARB_PASS_MAX];
};

/* Arbitrated queues per user, for arbiter_max_queues. */
struct xsched_arb_user {
	struct list_head node;		/* xsched_arb_users, under xsched_arb_lock */
	kuid_t uid;
	unsigned int nqueues;
};

/* Registration: the domain list, member counts and per-user counts. */
static DEFINE_MUTEX(xsched_arb_lock);
static LIST_HEAD(xsched_arb_domains);
static LIST_HEAD(xsched_arb_users);
static struct workqueue_struct *xsched_arb_wq;

static unsigned int xsched_arbiter_poll_us(void)
{
	return READ_ONCE(arbiter_poll_us);
}

static struct xsched_arb_prio *xsched_arb_bucket(struct xsched_arb_domain *d,
						 s32 prio)
{
	return &d->prio[prio - XSCHED_PRIO_MIN];
}

static void xsched_arb_kick(struct xsched_arb_domain *d)
{
	lockdep_assert_held(&d->lock);
	if (!d->dead)
		queue_work(xsched_arb_wq, &d->work);
}

/*
 * Put @q on the lists its priority, stopped and busy flags say.  Busy
 * queues go first, so that a pass capped at XSCHED_ARB_PASS_MAX stops them
 * before idle ones.
 */
static void xsched_arb_place(struct xsched_arb_domain *d, struct xsched_queue *q)
{
	struct xsched_arb_prio *b = xsched_arb_bucket(d, q->arb.prio);
	struct list_head *head = q->arb.stopped ? &b->stopped : &b->running;

	lockdep_assert_held(&d->lock);
	if (q->arb.busy)
		list_move(&q->arb.node, head);
	else
		list_move_tail(&q->arb.node, head);
	list_del_init(&q->arb.busy_node);
	if (q->arb.busy)
		list_add_tail(&q->arb.busy_node, &b->busy);
}

/* Take @q off every list: unregistered, or failed for good. */
static void xsched_arb_unlink(struct xsched_arb_domain *d, struct xsched_queue *q)
{
	lockdep_assert_held(&d->lock);
	q->arb.linked = false;
	q->arb.busy = false;
	list_del_init(&q->arb.node);
	list_del_init(&q->arb.busy_node);
	list_del_init(&q->arb.event_node);
	if (!list_empty(&q->arb.poll_node)) {
		list_del_init(&q->arb.poll_node);
		d->npolled--;
	}
}

/*
 * The backend saw progress on @q, or @q failed: read it again.  Called with
 * the backend's spinlock held, and for queues being unregistered.
 */
static void xsched_arbiter_event(struct xsched_queue *q)
{
	struct xsched_arb_domain *d;

	if (!q->arbitrated)
		return;
	rcu_read_lock();
	d = READ_ONCE(q->arb.dom);
	if (d) {
		spin_lock(&d->lock);
		if (q->arb.linked && list_empty(&q->arb.event_node)) {
			list_add_tail(&q->arb.event_node, &d->events);
			xsched_arb_kick(d);
		}
		spin_unlock(&d->lock);
	}
	rcu_read_unlock();
}

/* @q's priority changed (q->lock held); its fd is open, so is its domain. */
static void xsched_arbiter_set_priority(struct xsched_queue *q, s32 priority)
{
	struct xsched_arb_domain *d = q->arb.dom;

	spin_lock(&d->lock);
	if (q->arb.linked) {
		q->arb.prio = priority;
		xsched_arb_place(d, q);
		xsched_arb_kick(d);
	}
	spin_unlock(&d->lock);
}

/* Suspend @q for the arbiter, which decided that @busy must run. */
static int xsched_arb_stop(struct xsched_queue *q, bool in_batch,
			   struct xsched_queue *busy, s32 prio, s32 top)
{
	u32 mode = q->ops->modes & BIT(XSCHED_MODE_SAVE) ? XSCHED_MODE_SAVE :
							   XSCHED_MODE_DRAIN;
	int ret = -EAGAIN;
	u32 seq;

	/*
	 * Inside a batch a device may be halted for every process: never
	 * sleep there on a queue (its close may be waiting on its owner).
	 */
	if (in_batch ? mutex_trylock(&q->lock) : (mutex_lock(&q->lock), true)) {
		ret = q->released ? -ENODEV :
			xsched_queue_start_suspend(q, mode, 0, &seq, NULL, busy, top,
						   false);
		mutex_unlock(&q->lock);
	}
	trace_xsched_arbiter_decision(q->uid, prio, true, busy->uid, top, 0, ret);
	return ret;
}

/* Resume @q, which the arbiter stopped and has allowed long enough. */
static int xsched_arb_go(struct xsched_queue *q, bool in_batch, s32 prio,
			 u64 stopped_ns)
{
	int ret = -EAGAIN;
	u64 ns;

	if (in_batch ? mutex_trylock(&q->lock) : (mutex_lock(&q->lock), true)) {
		ret = q->released ? -ENODEV : xsched_queue_do_resume(q, &ns);
		mutex_unlock(&q->lock);
	}
	trace_xsched_arbiter_decision(q->uid, prio, false, 0, 0, stopped_ns, ret);
	return ret;
}

/* Read the progress of up to XSCHED_ARB_PASS_MAX queues; true if more wait. */
static bool xsched_arb_read(struct xsched_arb_domain *d)
{
	struct xsched_progress p;
	struct xsched_queue *q;
	unsigned int i, n = 0;
	bool more, ok;

	spin_lock(&d->lock);
	while (n < XSCHED_ARB_PASS_MAX && !list_empty(&d->events)) {
		q = list_first_entry(&d->events, struct xsched_queue,
				     arb.event_node);
		list_del_init(&q->arb.event_node);
		kref_get(&q->ref);
		d->items[n++].q = q;
	}
	more = !list_empty(&d->events);
	/* Without events: the next few, in turn. */
	for (i = 0; i < d->npolled && n < XSCHED_ARB_PASS_MAX; i++) {
		q = list_first_entry(&d->polled, struct xsched_queue,
				     arb.poll_node);
		list_move_tail(&q->arb.poll_node, &d->polled);
		kref_get(&q->ref);
		d->items[n++].q = q;
	}
	spin_unlock(&d->lock);

	for (i = 0; i < n; i++) {
		q = d->items[i].q;
		ok = xsched_queue_state(q) != XSCHED_STATE_FAILED &&
		     xsched_queue_progress_ref(q, &p) &&
		     xsched_queue_state(q) != XSCHED_STATE_FAILED;
		spin_lock(&d->lock);
		if (!ok) {
			/* Failed (never called again) or being unregistered. */
			xsched_arb_unlink(d, q);
		} else if (q->arb.linked && q->arb.busy != (p.rptr != p.wptr)) {
			q->arb.busy = p.rptr != p.wptr;
			xsched_arb_place(d, q);
			/*
			 * Nothing else sees a polled queue start or finish
			 * work: this is its progress event (to a poll period).
			 */
			if (q->ops->polled)
				trace_xsched_queue_progress(q->uid, p.rptr, p.wptr);
		}
		spin_unlock(&d->lock);
		xsched_queue_put(q);
	}
	return more;
}

/*
 * Add to the pass the running queues below @top that are busy (@busy) or
 * idle; false when the pass is full.
 */
static bool xsched_arb_take_stops(struct xsched_arb_domain *d, s32 top,
				  bool busy, unsigned int *n)
{
	struct xsched_queue *q;
	s32 p;

	for (p = top - 1; p >= XSCHED_PRIO_MIN; p--) {
		list_for_each_entry(q, &xsched_arb_bucket(d, p)->running, arb.node) {
			if (q->arb.busy != busy) {
				if (busy)
					break;	/* only idle ones follow */
				continue;
			}
			if (*n == XSCHED_ARB_PASS_MAX)
				return false;
			d->items[*n].q = q;
			d->items[(*n)++].stop = true;
		}
	}
	return true;
}

/*
 * Choose what this pass does, d->lock held: stop the queues below the top
 * busy priority that run (busy ones first), resume the stopped ones at or
 * above it once allowed long enough.  Returns the number of items; *busy is
 * a busy queue of the top priority (a reference), *wait_ns how long until
 * a resume is due, *full whether the cap left work for the next pass.
 */
static unsigned int xsched_arb_decide(struct xsched_arb_domain *d, ktime_t now,
				      struct xsched_queue **busy, s64 *wait_ns,
				      bool *full)
{
	s64 delay = (s64)READ_ONCE(arbiter_resume_delay_us) * NSEC_PER_USEC;
	struct xsched_queue *q;
	unsigned int n = 0, i;
	s64 waited;
	s32 p, top = XSCHED_ARB_NONE;

	lockdep_assert_held(&d->lock);
	for (p = XSCHED_PRIO_MAX; p >= XSCHED_PRIO_MIN; p--) {
		if (!list_empty(&xsched_arb_bucket(d, p)->busy)) {
			top = p;
			break;
		}
	}
	if (top < d->top)
		d->lowered_at = now;
	d->top = top;
	*busy = NULL;
	*wait_ns = 0;
	if (ktime_before(now, d->act_after)) {
		*wait_ns = ktime_to_ns(ktime_sub(d->act_after, now));
		return 0;
	}
	if (top != XSCHED_ARB_NONE) {
		*busy = list_first_entry(&xsched_arb_bucket(d, top)->busy,
					 struct xsched_queue, arb.busy_node);
		kref_get(&(*busy)->ref);
		/* The busy queues first (first in each list), then the rest. */
		if (!xsched_arb_take_stops(d, top, true, &n) ||
		    !xsched_arb_take_stops(d, top, false, &n))
			goto full;
	}
	waited = ktime_to_ns(ktime_sub(now, d->lowered_at));
	for (p = max_t(s32, top, XSCHED_PRIO_MIN); p <= XSCHED_PRIO_MAX; p++) {
		list_for_each_entry(q, &xsched_arb_bucket(d, p)->stopped, arb.node) {
			if (waited < delay) {
				*wait_ns = delay - waited;
				goto out;
			}
			if (n == XSCHED_ARB_PASS_MAX)
				goto full;
			d->items[n].q = q;
			d->items[n++].stop = false;
		}
	}
	goto out;
full:
	*full = true;
out:
	for (i = 0; i < n; i++)
		kref_get(&d->items[i].q->ref);
	return n;
}

/* Does @it reach the backend (so that a batch must count it)? */
static bool xsched_arb_acts(const struct xsched_arb_item *it)
{
	u32 state = xsched_queue_state(it->q);

	if (it->stop)
		return state == XSCHED_STATE_ACTIVE;
	return state == XSCHED_STATE_SUSPENDING || state == XSCHED_STATE_SUSPENDED;
}

/* Apply the @n items, in one batch where the backend has them. */
static void xsched_arb_act(struct xsched_arb_domain *d, unsigned int n,
			   struct xsched_queue *busy, ktime_t now)
{
	const struct xsched_backend_ops *ops = d->items[0].q->ops;
	struct xsched_arb_item *it;
	unsigned int i, k = 0;
	void *cookie = NULL;
	bool in_batch = false;

	/* One domain, one device, one backend. */
	if (READ_ONCE(arbiter_batch) && ops->batch_begin) {
		for (i = 0; i < n; i++)
			if (xsched_arb_acts(&d->items[i]))
				d->batch[k++] = d->items[i].q;
		if (k) {
			cookie = ops->batch_begin(d->batch, k);
			in_batch = true;
		}
	}
	for (i = 0; i < n; i++) {
		it = &d->items[i];
		if (it->stop)
			it->ret = xsched_arb_stop(it->q, in_batch, busy,
						  READ_ONCE(it->q->arb.prio),
						  READ_ONCE(d->top));
		else
			it->ret = xsched_arb_go(it->q, in_batch,
						READ_ONCE(it->q->arb.prio),
						ktime_to_ns(ktime_sub(now, it->q->arb.stopped_at)));
	}
	if (in_batch)
		ops->batch_end(cookie);
}

/*
 * Record what the items did, d->lock held.  Returns whether one must be
 * tried again (a busy lock, a backend that said not now).
 */
static bool xsched_arb_settle(struct xsched_arb_domain *d, unsigned int n,
			      ktime_t now)
{
	struct xsched_arb_item *it;
	bool retry = false, done;
	struct xsched_queue *q;
	unsigned int i;

	lockdep_assert_held(&d->lock);
	for (i = 0; i < n; i++) {
		it = &d->items[i];
		q = it->q;
		if (!q->arb.linked)
			continue;
		if (xsched_queue_state(q) == XSCHED_STATE_FAILED) {
			xsched_arb_unlink(d, q);
			continue;
		}
		/*
		 * EALREADY: a stop found the queue stopped (by an earlier
		 * pass), a resume found it running (the suspend undid
		 * itself); ENODEV: being unregistered.
		 */
		done = !it->ret || it->ret == -EALREADY || it->ret == -ENODEV;
		if (!done) {
			retry = true;
			continue;
		}
		if (it->stop && !q->arb.stopped)
			q->arb.stopped_at = now;
		WRITE_ONCE(q->arb.stopped, it->stop);
		xsched_arb_place(d, q);
	}
	return retry;
}

static void xsched_arb_pass(struct work_struct *work)
{
	struct xsched_arb_domain *d = container_of(work, struct xsched_arb_domain,
						   work);
	s64 poll = max_t(s64, (s64)READ_ONCE(arbiter_poll_us) * NSEC_PER_USEC,
			 NSEC_PER_USEC);
	struct xsched_queue *busy;
	bool more, full = false, retry;
	s64 wait, next = S64_MAX;
	unsigned int i, n;
	ktime_t now;

	more = xsched_arb_read(d);

	now = ktime_get();
	spin_lock(&d->lock);
	n = xsched_arb_decide(d, now, &busy, &wait, &full);
	spin_unlock(&d->lock);

	if (n)
		xsched_arb_act(d, n, busy, now);

	spin_lock(&d->lock);
	retry = xsched_arb_settle(d, n, now);
	if (retry) {
		/* Back off: a runtime holding its process mutex is left alone. */
		d->backoff = min(d->backoff + 1, XSCHED_ARB_BACKOFF_MAX);
		d->act_after = ktime_add_ns(ktime_get(), poll << d->backoff);
		next = poll << d->backoff;
	} else if (n) {
		d->backoff = 0;
	}
	if (wait)
		next = min(next, wait);
	if (d->npolled)
		next = min(next, poll);
	if (!d->dead) {
		if ((more || full) && !retry)
			queue_work(xsched_arb_wq, &d->work);
		else if (next != S64_MAX)
			hrtimer_start(&d->timer, ns_to_ktime(max_t(s64, next, 1000)),
				      HRTIMER_MODE_REL);
	}
	spin_unlock(&d->lock);

	for (i = 0; i < n; i++)
		xsched_queue_put(d->items[i].q);
	if (busy)
		xsched_queue_put(busy);
}

static enum hrtimer_restart xsched_arb_timer_fn(struct hrtimer *t)
{
	struct xsched_arb_domain *d = container_of(t, struct xsched_arb_domain,
						   timer);

	queue_work(xsched_arb_wq, &d->work);
	return HRTIMER_NORESTART;
}

static struct xsched_arb_domain *xsched_arb_domain_new(const void *device, kuid_t user)
{
	struct xsched_arb_domain *d;
	int p;

	d = kvzalloc(sizeof(*d), GFP_KERNEL_ACCOUNT);
	if (!d)
		return NULL;
	d->device = device;
	d->user = user;
	INIT_WORK(&d->work, xsched_arb_pass);
	xsched_hrtimer_setup(&d->timer, xsched_arb_timer_fn, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL);
	spin_lock_init(&d->lock);
	INIT_LIST_HEAD(&d->events);
	INIT_LIST_HEAD(&d->polled);
	d->top = XSCHED_ARB_NONE;
	for (p = 0; p < XSCHED_ARB_NPRIO; p++) {
		INIT_LIST_HEAD(&d->prio[p].running);
		INIT_LIST_HEAD(&d->prio[p].stopped);
		INIT_LIST_HEAD(&d->prio[p].busy);
	}
	return d;
}

static struct xsched_arb_user *xsched_arb_user_find(kuid_t uid)
{
	struct xsched_arb_user *u;

	lockdep_assert_held(&xsched_arb_lock);
	list_for_each_entry(u, &xsched_arb_users, node)
		if (uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/*
 * Make @q (registered, no fd yet) arbitrated, in the domain of its device
 * and of the calling user.  -EDQUOT: the user has arbiter_max_queues.
 */
static int xsched_arbiter_add(struct xsched_queue *q)
{
	kuid_t user = current_euid();
	kuid_t key = READ_ONCE(arbiter_cross_user) ? INVALID_UID : user;
	struct xsched_arb_domain *d;
	struct xsched_arb_user *u;
	int ret = 0;

	mutex_lock(&xsched_arb_lock);
	u = xsched_arb_user_find(user);
	if ((u ? u->nqueues : 0) >= READ_ONCE(arbiter_max_queues) &&
	    !capable(CAP_SYS_RESOURCE)) {
		ret = -EDQUOT;
		goto out;
	}
	if (!u) {
		u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);
		if (!u) {
			ret = -ENOMEM;
			goto out;
		}
		u->uid = user;
		list_add(&u->node, &xsched_arb_users);
	}
	list_for_each_entry(d, &xsched_arb_domains, node)
		if (d->device == q->device && uid_eq(d->user, key))
			goto found;
	d = xsched_arb_domain_new(q->device, key);
	if (!d) {
		if (!u->nqueues) {
			list_del(&u->node);
			kfree(u);
		}
		ret = -ENOMEM;
		goto out;
	}
	list_add(&d->node, &xsched_arb_domains);
found:
	u->nqueues++;
	d->nqueues++;
	q->arb.user = user;
	q->arb.prio = q->priority;
	INIT_LIST_HEAD(&q->arb.node);
	INIT_LIST_HEAD(&q->arb.busy_node);
	INIT_LIST_HEAD(&q->arb.event_node);
	INIT_LIST_HEAD(&q->arb.poll_node);
	spin_lock(&d->lock);
	q->arb.linked = true;
	xsched_arb_place(d, q);
	if (q->ops->polled) {
		list_add_tail(&q->arb.poll_node, &d->polled);
		d->npolled++;
	}
	/* Its progress is read by the next pass. */
	list_add_tail(&q->arb.event_node, &d->events);
	WRITE_ONCE(q->arb.dom, d);
	q->arbitrated = true;
	xsched_arb_kick(d);
	spin_unlock(&d->lock);
out:
	mutex_unlock(&xsched_arb_lock);
	return ret;
}

/*
 * @q is being unregistered (before it is resumed and released): take it out
 * of its domain, and free the domain with its last queue.
 */
static void xsched_arbiter_remove(struct xsched_queue *q)
{
	struct xsched_arb_domain *d = q->arb.dom;
	struct xsched_arb_user *u;
	bool last;

	if (!d)
		return;
	mutex_lock(&xsched_arb_lock);
	spin_lock(&d->lock);
	xsched_arb_unlink(d, q);
	WRITE_ONCE(q->arb.dom, NULL);
	last = !--d->nqueues;
	if (last)
		d->dead = true;
	else
		xsched_arb_kick(d);	/* what it held back may go on */
	spin_unlock(&d->lock);
	if (last)
		list_del(&d->node);
	u = xsched_arb_user_find(q->arb.user);
	if (!WARN_ON(!u) && !--u->nqueues) {
		list_del(&u->node);
		kfree(u);
	}
	mutex_unlock(&xsched_arb_lock);
	if (!last)
		return;
	/* A pass re-arms the timer only while the domain lives. */
	cancel_work_sync(&d->work);
	hrtimer_cancel(&d->timer);
	cancel_work_sync(&d->work);
	kvfree_rcu(d, rcu);
}

/* What queue.c may ask of the arbiter: its only way in. */
static const struct xsched_queue_arbiter xsched_arbiter = {
	.add = xsched_arbiter_add,
	.remove = xsched_arbiter_remove,
	.event = xsched_arbiter_event,
	.set_priority = xsched_arbiter_set_priority,
	.poll_us = xsched_arbiter_poll_us,
};

int xsched_arbiter_init(void)
{
	xsched_arb_wq = alloc_ordered_workqueue("xsched_arbiter", 0);
	if (!xsched_arb_wq)
		return -ENOMEM;
	xsched_queue_set_arbiter(&xsched_arbiter);
	return 0;
}

void xsched_arbiter_exit(void)
{
	xsched_queue_set_arbiter(NULL);
	/* Every queue fd holds a module reference: no domain can be left. */
	WARN_ON(!list_empty(&xsched_arb_domains));
	destroy_workqueue(xsched_arb_wq);
}
