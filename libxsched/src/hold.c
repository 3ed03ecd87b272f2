// SPDX-License-Identifier: MIT
/*
 * Holds: the in-process scheduler's decisions, taken and applied under
 * sched.lock (sched_state.h), and the requests that change them (a user's
 * suspend and resume, priorities, levels, dependency hints).
 *
 * Policy: an XQueue is held (XSCHED_HOLD_POLICY) while another live XQueue of
 * strictly higher priority has work and has not failed (policy.c decides;
 * xs_evaluate() gathers its inputs and applies its output).  A held XQueue
 * is suspended at its level: Lv1 stops launching (a flag, set where the
 * decision is taken), Lv2 suspends the hardware queue with DRAIN, Lv3 with
 * SAVE.  It is resumed when no higher-priority XQueue has work.  The Lv2/Lv3
 * suspends and resumes the policy decides are made by the applier (the
 * monitor thread, sched.c), outside sched.lock: the thread that made the
 * urgent XQueue busy only decides and wakes it.
 *
 * Busy/idle: an XQueue becomes busy in xsched_submit() on the caller's
 * thread.  It becomes idle when someone learns that its last command
 * completed: the Lv1 worker, a thread in xsched_wait(), or the monitor, which
 * poll()s the hardware queue fd (POLLIN: idle) of every busy Lv2/Lv3 XQueue
 * that has an XQueue of lower priority to release.  Each tells the scheduler
 * through the XQueue's hook (xs_sched_refresh(), installed by
 * xs_sched_add()).  An XQueue with nobody below it is not watched, so its
 * launches cost one ioctl and a mutex; its busy flag is re-read from the
 * hardware before it can block anyone.
 *
 * Arbiter mode: an XQueue registered with the module's arbiter (s_arb: arbiter
 * mode at Lv2/Lv3) is never held by this policy and refuses user holds with
 * -EBUSY; the module suspends and resumes it, across processes.  It still
 * counts as a blocker of lower, non-arbitrated XQueues of this process (Lv1).
 * What the library sees the arbiter do is recorded with reason
 * XSCHED_WHY_ARBITER (sched.c says how it is watched).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sched_state.h"

struct xs_sched xs_sched = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
	.next_id = 1,
};

static struct xsched_xqueue *find_id(uint32_t id)
{
	struct xsched_xqueue *q;

	for (q = xs_sched.head; q; q = q->s_next)
		if (q->id == id)
			return q;
	return NULL;
}

struct xsched_xqueue *xs_sched_blocker(struct xsched_xqueue *xq)
{
	struct xsched_xqueue *b = NULL;

	pthread_mutex_lock(&xs_sched.lock);
	if (xq->s_hold & XSCHED_HOLD_POLICY)
		b = find_id(xq->s_blocker);
	if (b)
		atomic_fetch_add(&b->refs, 1);
	pthread_mutex_unlock(&xs_sched.lock);
	return b;
}

/* Locked: append one decision record (declog.c); the other XQueue is looked
 * up only for the lines printed. */
static void record(struct xsched_xqueue *q, uint32_t action, uint32_t reason,
		   uint32_t other, int err, uint64_t now, uint64_t duration)
{
	const struct xsched_xqueue *o = NULL;

	if (other && (xs_log_enabled(XS_LOG_DEBUG) || xs_trace_on()))
		o = find_id(other);
	xs_declog_add(q, o, action, reason, other, err, now, duration);
}

/* The suspend or resume itself: Lv1 stops launching (a flag), Lv2/Lv3 ask
 * the preemptor (an ioctl for module queues).  @level is the XQueue's. */
int xs_apply_op(struct xsched_xqueue *q, bool want, unsigned int level)
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

/* Locked: account for and record an xs_apply_op(@want) that returned @err. */
void xs_apply_done(struct xsched_xqueue *q, bool want, int err,
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
				xs_sched.retry = true;
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
void xs_wait_applied(struct xsched_xqueue *q)
{
	while (q->s_applying)
		pthread_cond_wait(&xs_sched.cond, &xs_sched.lock);
}

/* Locked: make the queue's suspension match its holds, now, on this thread
 * (user requests, destroy, Lv1 and no applier).  The caller made sure the
 * applier is not in it (xs_wait_applied(), or Lv1 where it never is). */
int xs_apply(struct xsched_xqueue *q, uint32_t reason, uint32_t other)
{
	bool want = q->s_hold != 0;
	int err;

	q->s_pending = false;
	if (want == q->s_suspended)
		return 0;
	err = xs_apply_op(q, want, q->s_level);
	xs_apply_done(q, want, err, reason, other);
	return err;
}

/* Locked: a policy decision.  Lv1 holds are a flag, set here; Lv2/Lv3 ones
 * are preemptor calls (module ioctls), left to the applier thread so that
 * neither the submit path nor sched.lock waits for them. */
static void apply_policy(struct xsched_xqueue *q, uint32_t reason, uint32_t other)
{
	if (q->s_level == XSCHED_LV1 || !xs_sched.mon) {
		xs_apply(q, reason, other);
		return;
	}
	q->s_pending = true;
	q->s_pend_why = reason;
	q->s_pend_other = other;
	xs_sched.pending = true;
}

/* Locked: the library saw the module's arbiter stop (or resume) @q. */
void xs_arb_seen(struct xsched_xqueue *q, bool stopped, uint32_t reason)
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
void xs_arb_observe(struct xsched_xqueue *q)
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
	pthread_mutex_lock(&xs_sched.lock);
	if (!q->s_dead && q->s_arb) {
		if (hw.state == XS_HW_FAILED)
			q->s_arb_stopped = false;	/* the failure is logged elsewhere */
		else
			xs_arb_seen(q, hw.state == XS_HW_SUSPENDING ||
				 hw.state == XS_HW_SUSPENDED, XSCHED_WHY_ARBITER);
	}
	pthread_mutex_unlock(&xs_sched.lock);
}

/* Locked: does any live XQueue of @q's group that this policy may hold have
 * lower priority than @q?  Only then does anyone need to know at once when
 * @q goes idle. */
bool xs_has_lower(const struct xsched_xqueue *q)
{
	const struct xsched_xqueue *o;

	for (o = xs_sched.head; o; o = o->s_next)
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
void xs_refresh_stale_locked(struct xsched_xqueue *q)
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
void xs_evaluate(uint32_t why_resume, uint32_t cause)
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
	need = ((size_t)xs_sched.count + 1) * (sizeof(*qs) + sizeof(*in) + sizeof(*out) +
					    sizeof(*eff)) +
	       ((size_t)xs_sched.ndeps + 1) * sizeof(*pd);
	if (need > xs_sched.scratch_size) {
		mem = realloc(xs_sched.scratch, need * 2);
		if (!mem) {
			xs_err("out of memory evaluating the policy");
			return;
		}
		xs_sched.scratch = mem;
		xs_sched.scratch_size = need * 2;
	}
	mem = xs_sched.scratch;
	memset(mem, 0, need);
	pd = (void *)((char *)mem + ((size_t)xs_sched.count + 1) *
		      (sizeof(*qs) + sizeof(*in) + sizeof(*out) + sizeof(*eff)));
	in = mem;
	out = (void *)(in + xs_sched.count + 1);
	qs = (void *)(out + xs_sched.count + 1);
	eff = (void *)(qs + xs_sched.count + 1);
	for (q = xs_sched.head; q && n < (unsigned int)xs_sched.count; q = q->s_next) {
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
	for (i = 0; i < xs_sched.ndeps; i++) {
		struct xs_dep *d = &xs_sched.deps[i];
		int w = index_of(qs, n, d->waiter), sidx = index_of(qs, n, d->src);

		if (w < 0 || sidx < 0 || dep_done(qs[sidx], d->seq)) {
			xs_sched.deps[i--] = xs_sched.deps[--xs_sched.ndeps];
			continue;
		}
		pd[nd].waiter = (unsigned int)w;
		pd[nd].source = (unsigned int)sidx;
		nd++;
	}
	xs_policy_decide(in, n, pd, nd, now, xs_config()->hyst_ns, eff, out,
			 &recheck);
	xs_sched.recheck_ns = recheck;
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
	xs_sched.retry = false;
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

void xs_monitor_kick_locked(void)
{
	uint64_t one = 1;

	if (xs_sched.mon)
		(void)!write(xs_sched.mon->efd, &one, sizeof(one));
}

void xs_sched_kick_monitor(void)
{
	pthread_mutex_lock(&xs_sched.lock);
	xs_monitor_kick_locked();
	pthread_mutex_unlock(&xs_sched.lock);
}

/* Destroy, first step: nobody holds @xq any more and it holds nobody, so
 * everything submitted to it can complete. */
void xs_sched_kill(struct xsched_xqueue *xq)
{
	pthread_mutex_lock(&xs_sched.lock);
	xq->s_dead = true;
	xq->s_hold = 0;
	xs_wait_applied(xq);
	if (xq->s_suspended)
		xs_apply(xq, XSCHED_WHY_DESTROY, 0);
	xs_evaluate(XSCHED_WHY_DESTROY, xq->id);
	if (xs_sched.pending)
		xs_monitor_kick_locked();
	pthread_mutex_unlock(&xs_sched.lock);
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

	pthread_mutex_lock(&xs_sched.lock);
	if (xq->s_dead) {
		pthread_mutex_unlock(&xs_sched.lock);
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
		if (xs_has_lower(xq) || xs_sched.ndeps)
			xs_evaluate(failed ? XSCHED_WHY_FAILED : XSCHED_WHY_HIGHER_IDLE,
				 busy ? 0 : xq->id);
		if (xs_sched.pending ||
		    (busy && xq->s_level >= XSCHED_LV2 &&
		     (xs_has_lower(xq) || (xq->s_arb && !xq->s_arb_watched))))
			xs_monitor_kick_locked();
	}
	pthread_mutex_unlock(&xs_sched.lock);
}

int xs_sched_user_suspend(struct xsched_xqueue *xq, unsigned int flags)
{
	const struct xs_platform_ops *ops = xq->pre ? xq->pre->ops : NULL;
	unsigned int level;
	int ret = 0;

	pthread_mutex_lock(&xs_sched.lock);
	if (xq->s_arb) {	/* one owner: the module's arbiter */
		pthread_mutex_unlock(&xs_sched.lock);
		return -EBUSY;
	}
	if (xq->s_hold & XSCHED_HOLD_USER) {
		pthread_mutex_unlock(&xs_sched.lock);
		return -EALREADY;
	}
	xq->s_hold |= XSCHED_HOLD_USER;
	xs_wait_applied(xq);
	ret = xs_apply(xq, XSCHED_WHY_USER, 0);
	if (ret)	/* the platform refused: do not pretend */
		xq->s_hold &= ~XSCHED_HOLD_USER;
	level = xq->s_level;
	pthread_mutex_unlock(&xs_sched.lock);
	if (ret || (flags & XSCHED_SUSPEND_NONBLOCK) || level == XSCHED_LV1)
		return ret;
	return ops->wait_suspended(xq->pre, xq->preq, -1);
}

int xs_sched_user_resume(struct xsched_xqueue *xq)
{
	pthread_mutex_lock(&xs_sched.lock);
	if (xq->s_arb) {
		pthread_mutex_unlock(&xs_sched.lock);
		return -EBUSY;
	}
	if (!(xq->s_hold & XSCHED_HOLD_USER)) {
		pthread_mutex_unlock(&xs_sched.lock);
		return -EALREADY;
	}
	xq->s_hold &= ~XSCHED_HOLD_USER;
	xs_wait_applied(xq);
	xs_apply(xq, XSCHED_WHY_USER, 0);
	pthread_mutex_unlock(&xs_sched.lock);
	return 0;
}

int xs_sched_set_priority(struct xsched_xqueue *xq, int32_t prio)
{
	int ret = 0;

	pthread_mutex_lock(&xs_sched.lock);
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
		for (q = xs_sched.head; q; q = q->s_next)
			xs_refresh_stale_locked(q);
		xs_evaluate(XSCHED_WHY_PRIORITY, 0);
		xs_monitor_kick_locked();
	}
	pthread_mutex_unlock(&xs_sched.lock);
	return ret;
}

int xs_sched_set_level(struct xsched_xqueue *xq, unsigned int level, bool live)
{
	bool arb = xs_arb_at(xq->arb_mode, level), changed = false;
	int ret = 0;

	pthread_mutex_lock(&xs_sched.lock);
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
		xs_evaluate(XSCHED_WHY_HIGHER_IDLE, 0);
		xs_monitor_kick_locked();
	}
	pthread_mutex_unlock(&xs_sched.lock);
	return ret;
}

void xs_sched_fill_info(struct xsched_xqueue *xq, struct xsched_xq_info *info)
{
	pthread_mutex_lock(&xs_sched.lock);
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
	pthread_mutex_unlock(&xs_sched.lock);
}

int xs_sched_count(void)
{
	int n;

	pthread_mutex_lock(&xs_sched.lock);
	n = xs_sched.count;
	pthread_mutex_unlock(&xs_sched.lock);
	return n;
}

void xs_sched_reset_log(void)
{
	pthread_mutex_lock(&xs_sched.lock);
	xs_declog_reset();
	pthread_mutex_unlock(&xs_sched.lock);
}

int xs_sched_decisions(struct xsched_decision *out, unsigned int max, size_t size)
{
	int n;

	pthread_mutex_lock(&xs_sched.lock);
	n = xs_declog_copy(out, max, size);
	pthread_mutex_unlock(&xs_sched.lock);
	return n;
}

int xs_sched_depend(struct xsched_xqueue *xq, struct xsched_xqueue *src,
		    uint64_t seq)
{
	int ret = 0;

	if (dep_done(src, seq))
		return 0;
	pthread_mutex_lock(&xs_sched.lock);
	if (xs_sched.ndeps == xs_sched.deps_cap) {
		unsigned int cap = xs_sched.deps_cap ? 2 * xs_sched.deps_cap : 16;
		struct xs_dep *d = realloc(xs_sched.deps, cap * sizeof(*d));

		if (!d) {
			ret = -ENOMEM;
			goto out;
		}
		xs_sched.deps = d;
		xs_sched.deps_cap = cap;
	}
	xs_sched.deps[xs_sched.ndeps].waiter = xq->id;
	xs_sched.deps[xs_sched.ndeps].src = src->id;
	xs_sched.deps[xs_sched.ndeps].seq = seq;
	xs_sched.ndeps++;
	if (xs_log_enabled(XS_LOG_DEBUG))
		xs_debug("depend q%u (prio %d) waits for q%u (prio %d) seq %llu: q%u runs at priority %d or more until then",
			 xq->id, xq->s_prio, src->id, src->s_prio,
			 (unsigned long long)seq, src->id, xq->s_prio);
	xs_evaluate(XSCHED_WHY_PRIORITY, xq->id);
	xs_monitor_kick_locked();
out:
	pthread_mutex_unlock(&xs_sched.lock);
	return ret;
}

int xs_sched_group_sync(uint32_t group)
{
	struct xsched_xqueue *q, **qs;
	int n = 0, i, ret = 0;

	pthread_mutex_lock(&xs_sched.lock);
	qs = calloc((size_t)xs_sched.count + 1, sizeof(*qs));
	if (!qs) {
		pthread_mutex_unlock(&xs_sched.lock);
		return -ENOMEM;
	}
	for (q = xs_sched.head; q; q = q->s_next) {
		if (q->group != group || q->s_dead)
			continue;
		atomic_fetch_add(&q->refs, 1);
		qs[n++] = q;
	}
	pthread_mutex_unlock(&xs_sched.lock);
	for (i = 0; i < n; i++) {
		int r = xs_xq_synchronize(qs[i]);

		if (r && !ret)
			ret = r;
		xs_xqueue_put(qs[i]);
	}
	free(qs);
	return ret;
}
