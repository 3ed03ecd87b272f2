// SPDX-License-Identifier: MIT
/*
 * The in-process scheduler: fixed-priority policy, the decision log and the
 * monitor thread.
 *
 * Policy: an XQueue is held (XSCHED_HOLD_POLICY) while another live XQueue of
 * strictly higher priority has work and has not failed.  A held XQueue is
 * suspended at its level: Lv1 stops launching (a flag, set where the
 * decision is taken), Lv2 suspends the hardware queue with DRAIN, Lv3 with
 * SAVE.  It is resumed when no higher-priority XQueue has work.  The Lv2/Lv3
 * suspends and resumes the policy decides are made by the applier (the
 * monitor thread), outside sched.lock: the thread that made the urgent
 * XQueue busy only decides and wakes it.
 *
 * Busy/idle: an XQueue becomes busy in xsched_submit() on the caller's
 * thread.  It becomes idle when someone learns that its last command
 * completed: the Lv1 worker, a thread in xsched_wait(), or the monitor, which
 * poll()s the hardware queue fd (POLLIN: idle) of every busy Lv2/Lv3 XQueue
 * that has an XQueue of lower priority to release.  An XQueue with nobody
 * below it is not watched, so its launches cost one ioctl and a mutex; its
 * busy flag is re-read from the hardware before it can block anyone.
 *
 * Arbiter mode: an XQueue registered with the module's arbiter (s_arb: arbiter
 * mode at Lv2/Lv3) is never held by this policy and refuses user holds with
 * -EBUSY; the module suspends and resumes it, across processes.  It still
 * counts as a blocker of lower, non-arbitrated XQueues of this process (Lv1).
 * The monitor also watches every busy arbitrated XQueue's stop fd (sim:
 * POLLPRI on the queue fd) and, while one is seen stopped, re-reads its state
 * every XS_ARB_CHECK_MS, recording what it sees as decisions with reason
 * XSCHED_WHY_ARBITER.  Those records are observations, not the arbiter's own
 * decisions: a stop shorter than the monitor's reaction can be missed (the
 * module's xsched_arbiter_decision tracepoint and hw_arbiter_suspends are
 * exact).
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "internal.h"

/* While an arbitrated XQueue is seen stopped, how often its state is re-read. */
#define XS_ARB_CHECK_MS 1
/* How often a failed policy suspend is tried again, and how often a busy
 * XQueue without an idle fd (a call queue) is looked at. */
#define XS_RETRY_MS 1

/* One monitor thread, from the first XQueue to the last.  Each start gets its
 * own: a remover joins the one it stopped, while a creator may already have
 * started the next (no shared exit flag, no shared eventfd). */
struct monitor {
	pthread_t thread;
	int efd;
	bool exit;		/* under sched.lock */
};

/* A dependency hint (xsched_depend()): waiter waits for src's seq. */
struct dep {
	uint32_t waiter, src;
	uint64_t seq;
};

_Atomic unsigned int xs_fork_gen;

static struct {
	pthread_mutex_t lock;
	struct xsched_xqueue *head;
	int count;
	uint32_t next_id;
	/* decision log */
	struct xsched_decision log[XSCHED_DECISION_LOG_SIZE];
	uint64_t log_seq;
	struct monitor *mon;	/* NULL: none running */
	struct dep *deps;
	unsigned int ndeps, deps_cap;
	uint64_t recheck_ns;	/* hysteresis: evaluate again then (0: no) */
	bool retry;		/* a policy suspend failed: try again soon */
	/* Some XQueue's s_pending is set: the applier has work. */
	bool pending;
	pthread_cond_t cond;	/* an XQueue's s_applying went false */
	void *scratch;		/* evaluate()'s arrays */
	size_t scratch_size;
} sched = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
	.next_id = 1,
};

static const char *level_mode(unsigned int level)
{
	switch (level) {
	case XSCHED_LV1:
		return "launch";
	case XSCHED_LV2:
		return "drain";
	default:
		return "save";
	}
}

XS_EXPORT const char *xsched_action_name(uint32_t action)
{
	switch (action) {
	case XSCHED_ACT_SUSPEND:
		return "suspend";
	case XSCHED_ACT_RESUME:
		return "resume";
	default:
		return "?";
	}
}

XS_EXPORT const char *xsched_reason_name(uint32_t reason)
{
	switch (reason) {
	case XSCHED_WHY_HIGHER_BUSY:
		return "higher-priority queue busy";
	case XSCHED_WHY_HIGHER_IDLE:
		return "higher-priority queues idle";
	case XSCHED_WHY_USER:
		return "user request";
	case XSCHED_WHY_PRIORITY:
		return "priority changed";
	case XSCHED_WHY_DESTROY:
		return "queue destroyed";
	case XSCHED_WHY_FAILED:
		return "blocking queue failed";
	case XSCHED_WHY_ARBITER:
		return "arbiter";
	default:
		return "?";
	}
}

static struct xsched_xqueue *find_id(uint32_t id)
{
	struct xsched_xqueue *q;

	for (q = sched.head; q; q = q->s_next)
		if (q->id == id)
			return q;
	return NULL;
}

struct xsched_xqueue *xs_sched_blocker(struct xsched_xqueue *xq)
{
	struct xsched_xqueue *b = NULL;

	pthread_mutex_lock(&sched.lock);
	if (xq->s_hold & XSCHED_HOLD_POLICY)
		b = find_id(xq->s_blocker);
	if (b)
		atomic_fetch_add(&b->refs, 1);
	pthread_mutex_unlock(&sched.lock);
	return b;
}

/* Locked: append one decision record and print it at debug level. */
static void record(struct xsched_xqueue *q, uint32_t action, uint32_t reason,
		   uint32_t other, int err, uint64_t now, uint64_t duration)
{
	struct xsched_decision *d;
	struct xsched_xqueue *o;

	d = &sched.log[sched.log_seq % XSCHED_DECISION_LOG_SIZE];
	d->seq = ++sched.log_seq;
	d->time_ns = now;
	d->queue = q->id;
	d->other = other;
	d->action = action;
	d->reason = reason;
	d->level = q->s_level;
	d->error = err;
	d->duration_ns = duration;
	d->decided_ns = reason == XSCHED_WHY_USER || reason == XSCHED_WHY_ARBITER ?
			0 : q->s_decided_ns ? q->s_decided_ns : now;

	if (!xs_log_enabled(XS_LOG_DEBUG) && !xs_trace_on())
		return;
	o = other ? find_id(other) : NULL;
	/* Fields by name, the reason's words last (xschedctl timeline). */
	xs_trace("decision", "q=%u prio=%d level=%u action=%s other=%u other_prio=%d err=%d stopped_ns=%llu reason=%s",
		 q->id, q->s_prio, q->s_level, xsched_action_name(action), other,
		 o ? o->s_prio : 0, err, (unsigned long long)duration,
		 xsched_reason_name(reason));
	if (!xs_log_enabled(XS_LOG_DEBUG))
		return;
	if (reason == XSCHED_WHY_ARBITER) {
		if (action == XSCHED_ACT_SUSPEND)
			xs_debug("suspend q%u (prio %d, Lv%u): arbiter: the module stopped it (an arbitrated queue of higher priority, maybe in another process, has work)",
				 q->id, q->s_prio, q->s_level);
		else
			xs_debug("resume q%u (prio %d, Lv%u): arbiter: the module resumed it, was stopped %llu.%03llu us (as seen by the library)",
				 q->id, q->s_prio, q->s_level,
				 (unsigned long long)(duration / 1000),
				 (unsigned long long)(duration % 1000));
		return;
	}
	if (action == XSCHED_ACT_SUSPEND) {
		if (o)
			xs_debug("suspend q%u (prio %d, Lv%u %s): q%u (prio %d) %s%s%s",
				 q->id, q->s_prio, q->s_level, level_mode(q->s_level),
				 o->id, o->s_prio,
				 reason == XSCHED_WHY_HIGHER_BUSY ? "has work" :
				 xsched_reason_name(reason),
				 err ? ", failed: " : "", err ? strerror(-err) : "");
		else
			xs_debug("suspend q%u (prio %d, Lv%u %s): %s%s%s", q->id,
				 q->s_prio, q->s_level, level_mode(q->s_level),
				 xsched_reason_name(reason),
				 err ? ", failed: " : "", err ? strerror(-err) : "");
	} else {
		char by[24] = "";

		if (other)
			snprintf(by, sizeof(by), ", by q%u", other);
		xs_debug("resume q%u (prio %d, Lv%u %s): %s%s, was stopped %llu.%03llu us%s%s",
			 q->id, q->s_prio, q->s_level, level_mode(q->s_level),
			 xsched_reason_name(reason), by,
			 (unsigned long long)(duration / 1000),
			 (unsigned long long)(duration % 1000),
			 err ? ", failed: " : "", err ? strerror(-err) : "");
	}
}

/* The suspend or resume itself: Lv1 stops launching (a flag), Lv2/Lv3 ask
 * the preemptor (an ioctl for module queues).  @level is the XQueue's. */
static int apply_op(struct xsched_xqueue *q, bool want, unsigned int level)
{
	const struct xs_platform_ops *ops = q->pre ? q->pre->ops : NULL;
	int err = 0;

	if (level == XSCHED_LV1)
		xs_xq_lv1_stop(q, want);
	else if (want)
		err = ops->suspend(q->pre, q->preq,
				   level == XSCHED_LV2 ? XS_MODE_DRAIN : XS_MODE_SAVE,
				   true);
	else
		err = ops->resume(q->pre, q->preq);
	return err == -EALREADY ? 0 : err;
}

/* Locked: account for and record an apply_op(@want) that returned @err. */
static void apply_done(struct xsched_xqueue *q, bool want, int err,
		       uint32_t reason, uint32_t other)
{
	uint64_t now = xs_now_ns();

	if (want) {
		q->s_retry = false;
		if (!err) {
			q->s_suspended = true;
			q->s_since_ns = now;
			q->s_suspends++;
		} else {
			/* A policy hold stays: the applier tries again (the
			 * module answers -EAGAIN during a reset or a busy
			 * arbiter pass).  A user hold is undone by the caller. */
			if ((q->s_hold & XSCHED_HOLD_POLICY) && !xs_err_fatal(err)) {
				q->s_retry = true;
				sched.retry = true;
			}
			xs_warn("q%u: suspend at Lv%u failed: %s", q->id, q->s_level,
				strerror(-err));
		}
		record(q, XSCHED_ACT_SUSPEND, reason, other, err, now, 0);
	} else {
		uint64_t dur = now - q->s_since_ns;

		if (err)
			xs_warn("q%u: resume at Lv%u failed: %s", q->id, q->s_level,
				strerror(-err));
		/* Whatever the platform said, the library no longer holds it. */
		q->s_suspended = false;
		q->s_resumes++;
		q->s_suspended_ns += dur;
		record(q, XSCHED_ACT_RESUME, reason, other, err, now, dur);
	}
}

/* Locked: wait until the applier is not in @q's suspend or resume. */
static void wait_applied(struct xsched_xqueue *q)
{
	while (q->s_applying)
		pthread_cond_wait(&sched.cond, &sched.lock);
}

/* Locked: make the queue's suspension match its holds, now, on this thread
 * (user requests, destroy, Lv1 and no applier).  The caller made sure the
 * applier is not in it (wait_applied(), or Lv1 where it never is). */
static int apply(struct xsched_xqueue *q, uint32_t reason, uint32_t other)
{
	bool want = q->s_hold != 0;
	int err;

	q->s_pending = false;
	if (want == q->s_suspended)
		return 0;
	err = apply_op(q, want, q->s_level);
	apply_done(q, want, err, reason, other);
	return err;
}

/* Locked: a policy decision.  Lv1 holds are a flag, set here; Lv2/Lv3 ones
 * are preemptor calls (module ioctls), left to the applier thread so that
 * neither the submit path nor sched.lock waits for them. */
static void apply_policy(struct xsched_xqueue *q, uint32_t reason, uint32_t other)
{
	if (q->s_level == XSCHED_LV1 || !sched.mon) {
		apply(q, reason, other);
		return;
	}
	q->s_pending = true;
	q->s_pend_why = reason;
	q->s_pend_other = other;
	sched.pending = true;
}

/* Locked: the library saw the module's arbiter stop (or resume) @q. */
static void arb_seen(struct xsched_xqueue *q, bool stopped, uint32_t reason)
{
	uint64_t now = xs_now_ns(), dur;

	if (stopped == q->s_arb_stopped)
		return;
	q->s_arb_stopped = stopped;
	if (stopped) {
		q->s_since_ns = now;
		q->s_suspends++;
		record(q, XSCHED_ACT_SUSPEND, reason, 0, 0, now, 0);
	} else {
		dur = now - q->s_since_ns;
		q->s_resumes++;
		q->s_suspended_ns += dur;
		record(q, XSCHED_ACT_RESUME, reason, 0, 0, now, dur);
	}
}

/* Monitor: read an arbitrated XQueue's state from the platform and record a
 * change the module's arbiter made. */
static void arb_observe(struct xsched_xqueue *q)
{
	const struct xs_platform_ops *ops = q->pre ? q->pre->ops : NULL;
	struct xs_hw_info hw;
	int ret;

	if (!ops || !ops->query)
		return;
	memset(&hw, 0, sizeof(hw));
	pthread_mutex_lock(&q->lock);	/* against a re-registration */
	ret = ops->query(q->pre, q->preq, &hw);
	pthread_mutex_unlock(&q->lock);
	if (ret)
		return;
	pthread_mutex_lock(&sched.lock);
	if (!q->s_dead && q->s_arb) {
		if (hw.state == XS_HW_FAILED)
			q->s_arb_stopped = false;	/* the failure is logged elsewhere */
		else
			arb_seen(q, hw.state == XS_HW_SUSPENDING ||
				 hw.state == XS_HW_SUSPENDED, XSCHED_WHY_ARBITER);
	}
	pthread_mutex_unlock(&sched.lock);
}

/* Locked: does any live XQueue of @q's group that this policy may hold have
 * lower priority than @q?  Only then does anyone need to know at once when
 * @q goes idle. */
static bool has_lower(const struct xsched_xqueue *q)
{
	const struct xsched_xqueue *o;

	for (o = sched.head; o; o = o->s_next)
		if (o != q && !o->s_dead && !o->s_arb && o->group == q->group &&
		    o->s_prio < q->s_prio)
			return true;
	return false;
}

/*
 * Locked: the busy flag of an XQueue that nobody watched may be stale (an
 * XQueue with no lower-priority XQueue is not polled, to keep its launches
 * cheap).  Before it can block someone, read the hardware's progress.
 */
static void refresh_stale_locked(struct xsched_xqueue *q)
{
	if (!q->s_busy || q->s_dead || q->s_level < XSCHED_LV2)
		return;
	xs_xq_update_completed(q);
	pthread_mutex_lock(&q->lock);
	if (!xs_xq_busy_locked(q))
		q->s_idle_ns = xs_now_ns();
	q->s_busy = xs_xq_busy_locked(q);
	q->s_failed = q->error != 0;
	pthread_mutex_unlock(&q->lock);
}

/* Locked: the index of XQueue @id in @qs, or -1. */
static int index_of(struct xsched_xqueue **qs, unsigned int n, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (qs[i]->id == id)
			return (int)i;
	return -1;
}

/* Locked: has @src completed @seq (or gone)? */
static bool dep_done(struct xsched_xqueue *src, uint64_t seq)
{
	bool done;

	pthread_mutex_lock(&src->lock);
	done = src->completed >= seq || src->error;
	pthread_mutex_unlock(&src->lock);
	return done;
}

/*
 * Locked: apply the policy (policy.c) to every XQueue.  @why_resume is the
 * reason a release is recorded with; suspends are recorded as HIGHER_BUSY
 * (or PRIORITY when priorities changed).  A hold whose suspend failed is
 * tried again here.
 */
static void evaluate(uint32_t why_resume, uint32_t cause)
{
	unsigned int n = 0, nd = 0, i;
	struct xsched_xqueue *q, **qs;
	struct xs_pol_q *in;
	struct xs_pol_out *out;
	struct xs_pol_dep *pd;
	int32_t *eff;
	uint64_t now = xs_now_ns(), recheck;
	size_t need;
	void *mem;

	/* Scratch kept across evaluations (sched.lock): no allocation on the
	 * submit path that holds a lower XQueue. */
	need = ((size_t)sched.count + 1) * (sizeof(*qs) + sizeof(*in) + sizeof(*out) +
					    sizeof(*eff)) +
	       ((size_t)sched.ndeps + 1) * sizeof(*pd);
	if (need > sched.scratch_size) {
		mem = realloc(sched.scratch, need * 2);
		if (!mem) {
			xs_err("out of memory evaluating the policy");
			return;
		}
		sched.scratch = mem;
		sched.scratch_size = need * 2;
	}
	mem = sched.scratch;
	memset(mem, 0, need);
	pd = (void *)((char *)mem + ((size_t)sched.count + 1) *
		      (sizeof(*qs) + sizeof(*in) + sizeof(*out) + sizeof(*eff)));
	in = mem;
	out = (void *)(in + sched.count + 1);
	qs = (void *)(out + sched.count + 1);
	eff = (void *)(qs + sched.count + 1);
	for (q = sched.head; q && n < (unsigned int)sched.count; q = q->s_next) {
		qs[n] = q;
		in[n].id = q->id;
		in[n].prio = q->s_prio;
		in[n].group = q->group;
		in[n].busy = q->s_busy;
		in[n].failed = q->s_failed;
		in[n].dead = q->s_dead;
		in[n].unheld = q->s_arb;	/* the module's arbiter owns it */
		in[n].held = q->s_hold & XSCHED_HOLD_POLICY;
		in[n].idle_since_ns = q->s_idle_ns;
		n++;
	}
	/* Dependencies that still matter; completed ones are forgotten. */
	for (i = 0; i < sched.ndeps; i++) {
		struct dep *d = &sched.deps[i];
		int w = index_of(qs, n, d->waiter), sidx = index_of(qs, n, d->src);

		if (w < 0 || sidx < 0 || dep_done(qs[sidx], d->seq)) {
			sched.deps[i--] = sched.deps[--sched.ndeps];
			continue;
		}
		pd[nd].waiter = (unsigned int)w;
		pd[nd].source = (unsigned int)sidx;
		nd++;
	}
	xs_policy_decide(in, n, pd, nd, now, xs_config()->hyst_ns, eff, out,
			 &recheck);
	sched.recheck_ns = recheck;
	/* Who must make its completion learnable (xs_xq_now_end()). */
	for (i = 0; i < n; i++) {
		bool wanted = false;
		unsigned int k;

		for (k = 0; k < n && !wanted; k++)
			wanted = out[k].hold && out[k].blocker == qs[i]->id;
		atomic_store_explicit(&qs[i]->mark_wanted, wanted, memory_order_relaxed);
	}

	/* Resumes first, so that an idle queue never waits behind a suspend. */
	for (i = 0; i < n; i++) {
		q = qs[i];
		if (!(q->s_hold & XSCHED_HOLD_POLICY) || out[i].hold)
			continue;
		q->s_hold &= ~XSCHED_HOLD_POLICY;
		q->s_retry = false;
		q->s_decided_ns = now;
		apply_policy(q, why_resume, cause ? cause : q->s_blocker);
		q->s_blocker = 0;
	}
	sched.retry = false;
	for (i = 0; i < n; i++) {
		q = qs[i];
		if (!out[i].hold)
			continue;
		q->s_blocker = out[i].blocker;
		if ((q->s_hold & XSCHED_HOLD_POLICY) && !q->s_retry)
			continue;
		if (!(q->s_hold & XSCHED_HOLD_POLICY))
			q->s_decided_ns = now;
		q->s_hold |= XSCHED_HOLD_POLICY;
		apply_policy(q, why_resume == XSCHED_WHY_PRIORITY ? XSCHED_WHY_PRIORITY :
			     XSCHED_WHY_HIGHER_BUSY, out[i].blocker);
	}
}

static void *monitor(void *arg);

static void monitor_kick_locked(void)
{
	uint64_t one = 1;

	if (sched.mon)
		(void)!write(sched.mon->efd, &one, sizeof(one));
}

void xs_sched_kick_monitor(void)
{
	pthread_mutex_lock(&sched.lock);
	monitor_kick_locked();
	pthread_mutex_unlock(&sched.lock);
}

void xs_sched_add(struct xsched_xqueue *xq)
{
	struct xsched_xqueue *q;

	xs_fork_init();
	pthread_mutex_lock(&sched.lock);
	xq->id = sched.next_id++;
	xq->s_next = sched.head;
	sched.head = xq;
	sched.count++;
	if (!sched.mon) {
		struct monitor *m = calloc(1, sizeof(*m));

		if (m)
			m->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (!m || m->efd < 0 ||
		    pthread_create(&m->thread, NULL, monitor, m)) {
			xs_err("cannot start the monitor thread; Lv2/Lv3 XQueues will only be seen idle by xsched_wait()");
			if (m && m->efd >= 0)
				close(m->efd);
			free(m);
		} else {
			sched.mon = m;
		}
	}
	/* A new XQueue may have to be held at once (by work that is really there). */
	for (q = sched.head; q; q = q->s_next)
		if (q != xq && q->s_prio > xq->s_prio)
			refresh_stale_locked(q);
	evaluate(XSCHED_WHY_HIGHER_IDLE, 0);
	monitor_kick_locked();
	pthread_mutex_unlock(&sched.lock);
}

/* Destroy, first step: nobody holds @xq any more and it holds nobody, so
 * everything submitted to it can complete. */
void xs_sched_kill(struct xsched_xqueue *xq)
{
	pthread_mutex_lock(&sched.lock);
	xq->s_dead = true;
	xq->s_hold = 0;
	wait_applied(xq);
	if (xq->s_suspended)
		apply(xq, XSCHED_WHY_DESTROY, 0);
	evaluate(XSCHED_WHY_DESTROY, xq->id);
	if (sched.pending)
		monitor_kick_locked();
	pthread_mutex_unlock(&sched.lock);
}

void xs_sched_remove(struct xsched_xqueue *xq)
{
	struct xsched_xqueue **pp;
	struct monitor *stop = NULL;

	pthread_mutex_lock(&sched.lock);
	xq->s_dead = true;
	wait_applied(xq);
	if (xq->s_suspended) {
		xq->s_hold = 0;
		apply(xq, XSCHED_WHY_DESTROY, 0);
	}
	if (xq->s_arb_stopped)	/* closing the queue fd resumes it */
		arb_seen(xq, false, XSCHED_WHY_DESTROY);
	for (pp = &sched.head; *pp; pp = &(*pp)->s_next) {
		if (*pp == xq) {
			*pp = xq->s_next;
			break;
		}
	}
	sched.count--;
	evaluate(XSCHED_WHY_DESTROY, xq->id);
	/* The monitor may be polling it: wake it to drop its reference. */
	if (sched.mon)
		monitor_kick_locked();
	if (!sched.count && sched.mon) {
		stop = sched.mon;
		monitor_kick_locked();
		stop->exit = true;
		sched.mon = NULL;
	}
	pthread_mutex_unlock(&sched.lock);
	if (stop) {
		pthread_join(stop->thread, NULL);
		close(stop->efd);
		free(stop);
	}
}

void xs_xqueue_put(struct xsched_xqueue *xq)
{
	if (atomic_fetch_sub(&xq->refs, 1) == 1)
		xs_xq_free(xq);
}

/*
 * Busy, idle or failed may have changed (the submit paths, waits, the Lv1
 * worker, the monitor).  The decision is taken here, at once: it is the
 * pure policy and flags (an Lv1 hold is a flag, so a lower Lv1 XQueue
 * launches nothing after the submit that made a higher one busy returned).
 * Lv2/Lv3 holds and releases, which are preemptor calls (module ioctls),
 * are left to the applier thread: this thread never waits for one.
 */
void xs_sched_refresh(struct xsched_xqueue *xq)
{
	bool busy, failed;

	pthread_mutex_lock(&sched.lock);
	if (xq->s_dead) {
		pthread_mutex_unlock(&sched.lock);
		return;
	}
	pthread_mutex_lock(&xq->lock);
	busy = xs_xq_busy_locked(xq);
	failed = xq->error != 0;
	pthread_mutex_unlock(&xq->lock);
	if (busy != xq->s_busy || failed != xq->s_failed) {
		if (xq->s_busy && !busy)
			xq->s_idle_ns = xs_now_ns();
		xq->s_busy = busy;
		xq->s_failed = failed;
		/* Only an XQueue below it, or a dependency, can see the
		 * change: a stream alone at its priority pays no evaluation
		 * on each idle/busy edge. */
		if (has_lower(xq) || sched.ndeps)
			evaluate(failed ? XSCHED_WHY_FAILED : XSCHED_WHY_HIGHER_IDLE,
				 busy ? 0 : xq->id);
		if (sched.pending ||
		    (busy && xq->s_level >= XSCHED_LV2 &&
		     (has_lower(xq) || (xq->s_arb && !xq->s_arb_watched))))
			monitor_kick_locked();
	}
	pthread_mutex_unlock(&sched.lock);
}

/*
 * Applier, locked: carry out the pending Lv2/Lv3 policy decisions, one
 * XQueue at a time, with sched.lock dropped around the preemptor's call.
 * Submits, decisions and other XQueues' holds go on meanwhile; a decision
 * that changes this XQueue's hold during the call sets s_pending again and
 * is applied on the next turn.
 */
static void apply_pending_locked(void)
{
	while (sched.pending) {
		struct xsched_xqueue *q, *pick = NULL;
		uint32_t why, other;
		unsigned int level;
		bool want;
		int err;

		/* Resumes first, so that an idle queue never waits behind a
		 * suspend. */
		sched.pending = false;
		for (q = sched.head; q; q = q->s_next) {
			if (!q->s_pending || q->s_applying)
				continue;
			if (q->s_dead || (q->s_hold != 0) == q->s_suspended) {
				q->s_pending = false;
				continue;
			}
			sched.pending = true;
			if (!pick || (pick->s_hold && !q->s_hold))
				pick = q;
		}
		if (!pick)
			break;
		q = pick;
		q->s_pending = false;
		want = q->s_hold != 0;
		why = q->s_pend_why;
		other = q->s_pend_other;
		level = q->s_level;
		/* The XQueue stays listed until xs_sched_remove(), which waits
		 * for s_applying: no reference needed. */
		q->s_applying = true;
		pthread_mutex_unlock(&sched.lock);
		err = apply_op(q, want, level);
		pthread_mutex_lock(&sched.lock);
		q->s_applying = false;
		apply_done(q, want, err, why, other);
		pthread_cond_broadcast(&sched.cond);
	}
}

/* What the monitor waits for, per entry. */
enum { MON_IDLE, MON_STOP, MON_CHECK, MON_POLL };

static void *monitor(void *arg)
{
	struct monitor *m = arg;
	struct xsched_xqueue **qs = NULL;
	struct pollfd *fds = NULL;
	unsigned char *kind = NULL;
	size_t cap = 0;

	for (;;) {
		struct xsched_xqueue *q;
		size_t n = 0, i, want;
		int timeout = 1000;
		uint64_t v, now;

		pthread_mutex_lock(&sched.lock);
		if (m->exit) {
			pthread_mutex_unlock(&sched.lock);
			break;
		}
		now = xs_now_ns();
		if (sched.retry || (sched.recheck_ns && now >= sched.recheck_ns))
			evaluate(XSCHED_WHY_HIGHER_IDLE, 0);
		apply_pending_locked();
		if (m->exit) {
			pthread_mutex_unlock(&sched.lock);
			break;
		}
		now = xs_now_ns();
		if (sched.retry)
			timeout = XS_RETRY_MS;
		if (sched.recheck_ns) {
			int ms = (int)((sched.recheck_ns - now + 999999) / 1000000);

			if (ms < timeout)
				timeout = ms < 1 ? 1 : ms;
		}
		/* Up to two entries per XQueue, and the eventfd. */
		want = 2 * (size_t)sched.count + 1;
		if (cap < want) {
			size_t nc = want + 16;
			void *a = realloc(qs, nc * sizeof(*qs));
			void *b = a ? realloc(fds, nc * sizeof(*fds)) : NULL;
			void *c = b ? realloc(kind, nc * sizeof(*kind)) : NULL;

			if (a)
				qs = a;
			if (b)
				fds = b;
			if (c) {
				kind = c;
				cap = nc;
			}
		}
		if (!cap) {
			pthread_mutex_unlock(&sched.lock);
			usleep(10000);
			continue;
		}
		fds[0].fd = m->efd;
		fds[0].events = POLLIN;
		for (q = sched.head; q; q = q->s_next) {
			const struct xs_platform_ops *ops = q->plat->ops;
			int fd;

			q->s_arb_watched = false;
			if (q->s_failed || q->s_level < XSCHED_LV2)
				continue;
			if (n + 2 < cap && q->s_busy && has_lower(q)) {
				/* No idle fd (a call queue): look again soon. */
				fd = ops->poll_fd ? ops->poll_fd(q->plat, q->pq) : -1;
				atomic_fetch_add(&q->refs, 1);
				qs[n] = q;
				kind[n] = fd >= 0 ? MON_IDLE : MON_POLL;
				fds[n + 1].fd = fd;
				fds[n + 1].events = POLLIN;
				fds[n + 1].revents = 0;
				if (fd < 0)
					timeout = XS_RETRY_MS;
				n++;
			}
			if (!q->s_arb || q->s_dead || n + 2 > cap || !q->pre)
				continue;
			ops = q->pre->ops;
			if (q->s_arb_stopped) {
				/* No event says "resumed": look again soon. */
				kind[n] = MON_CHECK;
				fds[n + 1].fd = -1;
				timeout = XS_ARB_CHECK_MS;
			} else if (q->s_busy && ops->stop_fd) {
				short ev = 0;

				fd = ops->stop_fd(q->pre, q->preq, &ev);
				if (fd < 0)
					continue;
				kind[n] = MON_STOP;
				fds[n + 1].fd = fd;
				fds[n + 1].events = ev;
			} else {
				continue;
			}
			fds[n + 1].revents = 0;
			atomic_fetch_add(&q->refs, 1);
			qs[n] = q;
			q->s_arb_watched = true;
			n++;
		}
		pthread_mutex_unlock(&sched.lock);

		fds[0].revents = 0;
		/* The 1 s timeout is a safety net only; every change kicks the
		 * eventfd.  An XQueue seen stopped by the arbiter is re-read every
		 * XS_ARB_CHECK_MS. */
		if (poll(fds, n + 1, timeout) < 0)
			fds[0].revents = 0;
		if (fds[0].revents & POLLIN)
			(void)!read(fds[0].fd, &v, sizeof(v));
		for (i = 0; i < n; i++) {
			short r = fds[i + 1].revents;

			switch (kind[i]) {
			case MON_IDLE:
				if (r & (POLLIN | POLLERR | POLLHUP)) {
					xs_xq_update_completed(qs[i]);
					xs_sched_refresh(qs[i]);
				}
				break;
			case MON_POLL:
				xs_xq_update_completed(qs[i]);
				xs_sched_refresh(qs[i]);
				break;
			case MON_STOP:
				if (r & (POLLERR | POLLHUP)) {
					xs_xq_update_completed(qs[i]);
					xs_sched_refresh(qs[i]);
				}
				if (r)
					arb_observe(qs[i]);
				break;
			default:
				arb_observe(qs[i]);
				break;
			}
			xs_xqueue_put(qs[i]);
		}
	}
	free(qs);
	free(fds);
	free(kind);
	return NULL;
}

int xs_sched_user_suspend(struct xsched_xqueue *xq, unsigned int flags)
{
	const struct xs_platform_ops *ops = xq->pre ? xq->pre->ops : NULL;
	unsigned int level;
	int ret = 0;

	pthread_mutex_lock(&sched.lock);
	if (xq->s_arb) {	/* one owner: the module's arbiter */
		pthread_mutex_unlock(&sched.lock);
		return -EBUSY;
	}
	if (xq->s_hold & XSCHED_HOLD_USER) {
		pthread_mutex_unlock(&sched.lock);
		return -EALREADY;
	}
	xq->s_hold |= XSCHED_HOLD_USER;
	wait_applied(xq);
	ret = apply(xq, XSCHED_WHY_USER, 0);
	if (ret)	/* the platform refused: do not pretend */
		xq->s_hold &= ~XSCHED_HOLD_USER;
	level = xq->s_level;
	pthread_mutex_unlock(&sched.lock);
	if (ret || (flags & XSCHED_SUSPEND_NONBLOCK) || level == XSCHED_LV1)
		return ret;
	return ops->wait_suspended(xq->pre, xq->preq, -1);
}

int xs_sched_user_resume(struct xsched_xqueue *xq)
{
	pthread_mutex_lock(&sched.lock);
	if (xq->s_arb) {
		pthread_mutex_unlock(&sched.lock);
		return -EBUSY;
	}
	if (!(xq->s_hold & XSCHED_HOLD_USER)) {
		pthread_mutex_unlock(&sched.lock);
		return -EALREADY;
	}
	xq->s_hold &= ~XSCHED_HOLD_USER;
	wait_applied(xq);
	apply(xq, XSCHED_WHY_USER, 0);
	pthread_mutex_unlock(&sched.lock);
	return 0;
}

int xs_sched_set_priority(struct xsched_xqueue *xq, int32_t prio)
{
	int ret = 0;

	pthread_mutex_lock(&sched.lock);
	if (xq->pre && xq->pre->ops->set_priority) {
		ret = xq->pre->ops->set_priority(xq->pre, xq->preq, prio);
		if (ret == -EPERM) {
			xs_warn("q%u: the module refused priority %d (needs CAP_SYS_NICE); it applies in this process only",
				xq->id, prio);
			ret = 0;
		}
	}
	if (!ret) {
		struct xsched_xqueue *q;

		xq->s_prio = prio;
		for (q = sched.head; q; q = q->s_next)
			refresh_stale_locked(q);
		evaluate(XSCHED_WHY_PRIORITY, 0);
		monitor_kick_locked();
	}
	pthread_mutex_unlock(&sched.lock);
	return ret;
}

int xs_sched_set_level(struct xsched_xqueue *xq, unsigned int level, bool live)
{
	bool arb = xs_arb_at(xq->arb_mode, level), changed = false;
	int ret = 0;

	pthread_mutex_lock(&sched.lock);
	pthread_mutex_lock(&xq->lock);
	if (xq->s_dead) {
		ret = -ENOENT;
	} else if (xq->s_hold || xq->s_suspended || xq->s_pending || xq->s_applying ||
		   xq->submitted != xq->launched ||
		   ((!live || arb != xq->s_arb) && xs_xq_busy_locked(xq))) {
		ret = -EBUSY;
	} else if (arb != xq->s_arb) {
		/* Arbiter mode between Lv1 and Lv2/Lv3: register again. */
		ret = xq->pre->ops->set_arbiter(xq->pre, xq->preq, arb);
		if (ret == -EIO) {
			xq->error = -EIO;
			xq->s_failed = true;
		}
		changed = !ret;
	}
	if (!ret) {
		xq->s_level = level;
		xq->level = level;
		xq->stopped = false;
		xq->s_arb = arb;
		xq->s_arb_stopped = false;
	}
	pthread_mutex_unlock(&xq->lock);
	if (changed) {
		/* Now held by the policy, or no longer. */
		evaluate(XSCHED_WHY_HIGHER_IDLE, 0);
		monitor_kick_locked();
	}
	pthread_mutex_unlock(&sched.lock);
	return ret;
}

void xs_sched_fill_info(struct xsched_xqueue *xq, struct xsched_xq_info *info)
{
	pthread_mutex_lock(&sched.lock);
	info->id = xq->id;
	info->priority = xq->s_prio;
	info->level = xq->s_level;
	info->hold = xq->s_hold;
	info->arbiter = xq->s_arb;
	if (xq->s_arb_stopped)
		info->hold |= XSCHED_HOLD_ARBITER;
	info->state = xq->s_suspended || xq->s_arb_stopped ? XSCHED_XQ_SUSPENDED :
		      XSCHED_XQ_ACTIVE;
	if (xq->s_failed)
		info->state = XSCHED_XQ_FAILED;
	info->suspends = xq->s_suspends;
	info->resumes = xq->s_resumes;
	info->suspended_ns = xq->s_suspended_ns;
	if (xq->s_suspended || xq->s_arb_stopped)
		info->suspended_ns += xs_now_ns() - xq->s_since_ns;
	pthread_mutex_unlock(&sched.lock);
}

XS_EXPORT int xsched_suspend(struct xsched_xqueue *xq, unsigned int flags)
{
	if (!xq || (flags & ~XSCHED_SUSPEND_NONBLOCK))
		return -EINVAL;
	if (xs_foreign(xq))
		return -ECHILD;
	return xs_sched_user_suspend(xq, flags);
}

XS_EXPORT int xsched_resume(struct xsched_xqueue *xq)
{
	if (!xq)
		return -EINVAL;
	if (xs_foreign(xq))
		return -ECHILD;
	return xs_sched_user_resume(xq);
}

XS_EXPORT int xsched_set_priority(struct xsched_xqueue *xq, int32_t priority)
{
	if (!xq || priority < XSCHED_PRIO_MIN || priority > XSCHED_PRIO_MAX)
		return -EINVAL;
	if (xs_foreign(xq))
		return -ECHILD;
	return xs_sched_set_priority(xq, priority);
}

_Static_assert(offsetof(struct xsched_decision, decided_ns) ==
	       XSCHED_DECISION_SIZE_VER0, "xsched_decision: 0.1's fields moved");
_Static_assert(sizeof(struct xsched_decision) == XSCHED_DECISION_SIZE_VER1,
	       "xsched_decision: size of 0.3");

XS_EXPORT int xsched_decisions(struct xsched_decision *out, unsigned int max,
		     size_t size)
{
	uint64_t first, s;
	unsigned int n = 0;

	if ((!out && max) || size < XSCHED_DECISION_SIZE_VER0)
		return -EINVAL;
	pthread_mutex_lock(&sched.lock);
	first = sched.log_seq > max ? sched.log_seq - max : 0;
	if (sched.log_seq > XSCHED_DECISION_LOG_SIZE &&
	    first < sched.log_seq - XSCHED_DECISION_LOG_SIZE)
		first = sched.log_seq - XSCHED_DECISION_LOG_SIZE;
	for (s = first; s < sched.log_seq; s++, n++)
		xs_copy_out((char *)out + (size_t)n * size, size,
			    &sched.log[s % XSCHED_DECISION_LOG_SIZE],
			    sizeof(struct xsched_decision));
	pthread_mutex_unlock(&sched.lock);
	return (int)n;
}

/* 0.1: xsched_decisions(out, max) with the 0.1 record. */
XS_EXPORT int xs_decisions_v01(struct xsched_decision *out, unsigned int max)
{
	return xsched_decisions(out, max, XSCHED_DECISION_SIZE_VER0);
}
XS_SYMVER("xs_decisions_v01", "xsched_decisions@LIBXSCHED_0.1");
XS_SYMVER("xsched_decisions", "xsched_decisions@@@LIBXSCHED_0.3, remove");

int xs_sched_count(void)
{
	int n;

	pthread_mutex_lock(&sched.lock);
	n = sched.count;
	pthread_mutex_unlock(&sched.lock);
	return n;
}

void xs_sched_reset_log(void)
{
	pthread_mutex_lock(&sched.lock);
	sched.log_seq = 0;
	memset(sched.log, 0, sizeof(sched.log));
	pthread_mutex_unlock(&sched.lock);
}

int xs_sched_depend(struct xsched_xqueue *xq, struct xsched_xqueue *src,
		    uint64_t seq)
{
	int ret = 0;

	if (dep_done(src, seq))
		return 0;
	pthread_mutex_lock(&sched.lock);
	if (sched.ndeps == sched.deps_cap) {
		unsigned int cap = sched.deps_cap ? 2 * sched.deps_cap : 16;
		struct dep *d = realloc(sched.deps, cap * sizeof(*d));

		if (!d) {
			ret = -ENOMEM;
			goto out;
		}
		sched.deps = d;
		sched.deps_cap = cap;
	}
	sched.deps[sched.ndeps].waiter = xq->id;
	sched.deps[sched.ndeps].src = src->id;
	sched.deps[sched.ndeps].seq = seq;
	sched.ndeps++;
	if (xs_log_enabled(XS_LOG_DEBUG))
		xs_debug("depend q%u (prio %d) waits for q%u (prio %d) seq %llu: q%u runs at priority %d or more until then",
			 xq->id, xq->s_prio, src->id, src->s_prio,
			 (unsigned long long)seq, src->id, xq->s_prio);
	evaluate(XSCHED_WHY_PRIORITY, xq->id);
	monitor_kick_locked();
out:
	pthread_mutex_unlock(&sched.lock);
	return ret;
}

int xs_sched_group_sync(uint32_t group)
{
	struct xsched_xqueue *q, **qs;
	int n = 0, i, ret = 0;

	pthread_mutex_lock(&sched.lock);
	qs = calloc((size_t)sched.count + 1, sizeof(*qs));
	if (!qs) {
		pthread_mutex_unlock(&sched.lock);
		return -ENOMEM;
	}
	for (q = sched.head; q; q = q->s_next) {
		if (q->group != group || q->s_dead)
			continue;
		atomic_fetch_add(&q->refs, 1);
		qs[n++] = q;
	}
	pthread_mutex_unlock(&sched.lock);
	for (i = 0; i < n; i++) {
		int r = xsched_synchronize(qs[i]);

		if (r && !ret)
			ret = r;
		xs_xqueue_put(qs[i]);
	}
	free(qs);
	return ret;
}

/*
 * fork(): the parent's locks are taken before and released after, in both
 * processes, so the child never inherits one held by a thread it does not
 * have.  The child then forgets the parent's XQueues (they stay allocated:
 * the parent's handles may still be used in the child, and get -ECHILD) and
 * its monitor; its first XQueue starts a monitor of its own.
 */
static void fork_prepare(void)
{
	struct xsched_xqueue *q;

	pthread_mutex_lock(&sched.lock);
	for (q = sched.head; q; q = q->s_next)
		pthread_mutex_lock(&q->lock);
	xs_log_lock(true);
}

static void fork_parent(void)
{
	struct xsched_xqueue *q;

	xs_log_lock(false);
	for (q = sched.head; q; q = q->s_next)
		pthread_mutex_unlock(&q->lock);
	pthread_mutex_unlock(&sched.lock);
}

static void fork_child(void)
{
	struct xsched_xqueue *q;

	xs_log_lock(false);
	for (q = sched.head; q; q = q->s_next)
		pthread_mutex_unlock(&q->lock);
	atomic_fetch_add(&xs_fork_gen, 1);
	if (sched.mon) {
		close(sched.mon->efd);	/* its thread is the parent's */
		sched.mon = NULL;
	}
	sched.head = NULL;
	sched.count = 0;
	sched.ndeps = 0;
	sched.recheck_ns = 0;
	sched.retry = false;
	sched.pending = false;
	pthread_cond_init(&sched.cond, NULL);
	pthread_mutex_unlock(&sched.lock);
}

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void fork_register(void)
{
	if (pthread_atfork(fork_prepare, fork_parent, fork_child))
		xs_err("pthread_atfork failed: fork() while XQueues run is unsafe");
}

void xs_fork_init(void)
{
	pthread_once(&fork_once, fork_register);
}
