// SPDX-License-Identifier: MIT
/*
 * The in-process scheduler's life: XQueues join (xs_sched_add(), which
 * installs the scheduler's busy/idle hook into the XQueue) and leave; the
 * monitor thread runs from the first XQueue to the last; fork().  The
 * decisions themselves are hold.c's, below this file.
 *
 * The monitor is the one thread that applies decisions: it carries out the
 * Lv2/Lv3 suspends and resumes the policy left pending (outside sched.lock:
 * a preemptor call is a module ioctl), evaluates again when a hysteresis
 * delay ends or a suspend is to be retried, and watches: it poll()s the
 * hardware queue fd (POLLIN: idle) of every busy Lv2/Lv3 XQueue that has an
 * XQueue of lower priority to release, and every busy arbitrated XQueue's
 * stop fd (sim: POLLPRI on the queue fd); while one is seen stopped by the
 * module's arbiter, it re-reads its state every XS_ARB_CHECK_MS, recording
 * what it sees as decisions with reason XSCHED_WHY_ARBITER.  Those records
 * are observations, not the arbiter's own decisions: a stop shorter than
 * the monitor's reaction can be missed (the module's
 * xsched_arbiter_decision tracepoint and hw_arbiter_suspends are exact).
 * What to watch is decided from each XQueue's state alone (watch_of()); the
 * rest of a pass asks the platforms for fds and acts on what poll() says.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "sched_state.h"

/* What an XQueue tells the scheduler (internal.h: struct xs_xq_hook). */
static const struct xs_xq_hook sched_hook = {
	.changed = xs_sched_refresh,
};

/*
 * Applier, locked: carry out the pending Lv2/Lv3 policy decisions, one
 * XQueue at a time, with sched.lock dropped around the preemptor's call.
 * Submits, decisions and other XQueues' holds go on meanwhile; a decision
 * that changes this XQueue's hold during the call sets s_pending again and
 * is applied on the next turn.
 */
static void apply_pending_locked(void)
{
	while (xs_sched.pending) {
		struct xsched_xqueue *q, *pick = NULL;
		uint32_t why, other;
		unsigned int level;
		bool want;
		int err;

		/* Resumes first, so that an idle queue never waits behind a
		 * suspend. */
		xs_sched.pending = false;
		for (q = xs_sched.head; q; q = q->s_next) {
			if (!q->s_pending || q->s_applying)
				continue;
			if (q->s_dead || (q->s_hold != 0) == q->s_suspended) {
				q->s_pending = false;
				continue;
			}
			xs_sched.pending = true;
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
		pthread_mutex_unlock(&xs_sched.lock);
		err = xs_apply_op(q, want, level);
		pthread_mutex_lock(&xs_sched.lock);
		q->s_applying = false;
		xs_apply_done(q, want, err, why, other);
		pthread_cond_broadcast(&xs_sched.cond);
	}
}

/* What the monitor waits for, per entry. */
enum { MON_NONE, MON_IDLE, MON_STOP, MON_CHECK, MON_POLL };

/* The monitor's poll set: entry i is qs[i], kind[i] and fds[i + 1]; fds[0]
 * is the eventfd. */
struct watchset {
	struct xsched_xqueue **qs;
	struct pollfd *fds;
	unsigned char *kind;
	size_t cap;
};

struct watch {
	bool idle;	/* its idle fd: MON_IDLE, or MON_POLL without one */
	int arb;	/* MON_NONE, MON_CHECK or MON_STOP */
};

/*
 * What to watch of @q, from its state alone (sched.lock held; no platform
 * call).  Idle: an XQueue at Lv2/Lv3 that is busy with someone below it
 * (@lower) to release.  Arbiter: an arbitrated XQueue seen stopped is
 * re-read (MON_CHECK: no event says "resumed"); a busy one is watched on
 * its preemptor's stop fd (@stop_fd: it has one).
 */
static struct watch watch_of(const struct xsched_xqueue *q, bool lower,
			     bool stop_fd)
{
	struct watch w = { false, MON_NONE };

	if (q->s_failed || q->s_level < XSCHED_LV2)
		return w;
	w.idle = q->s_busy && lower;
	if (!q->s_arb || q->s_dead || !q->pre)
		return w;
	if (q->s_arb_stopped)
		w.arb = MON_CHECK;
	else if (q->s_busy && stop_fd)
		w.arb = MON_STOP;
	return w;
}

/* Up to two entries per XQueue, and the eventfd; false: none at all. */
static bool watch_room(struct watchset *w, size_t want)
{
	if (w->cap < want) {
		size_t nc = want + 16;
		void *a = realloc(w->qs, nc * sizeof(*w->qs));
		void *b = a ? realloc(w->fds, nc * sizeof(*w->fds)) : NULL;
		void *c = b ? realloc(w->kind, nc * sizeof(*w->kind)) : NULL;

		if (a)
			w->qs = a;
		if (b)
			w->fds = b;
		if (c) {
			w->kind = c;
			w->cap = nc;
		}
	}
	return w->cap != 0;
}

#define PLAN_EXIT (-1)
#define PLAN_NOMEM (-2)

/*
 * One pass's decisions, under sched.lock: evaluate again if due, apply what
 * is pending, then the poll set (a reference on each XQueue in it) and the
 * poll timeout.  Returns the number of entries, PLAN_EXIT or PLAN_NOMEM.
 */
static long plan(struct xs_monitor *m, struct watchset *w, int *timeout)
{
	struct xsched_xqueue *q;
	size_t n = 0;
	uint64_t now;

	*timeout = 1000;
	pthread_mutex_lock(&xs_sched.lock);
	if (m->exit) {
		pthread_mutex_unlock(&xs_sched.lock);
		return PLAN_EXIT;
	}
	now = xs_now_ns();
	if (xs_sched.retry || (xs_sched.recheck_ns && now >= xs_sched.recheck_ns))
		xs_evaluate(XSCHED_WHY_HIGHER_IDLE, 0);
	apply_pending_locked();
	if (m->exit) {
		pthread_mutex_unlock(&xs_sched.lock);
		return PLAN_EXIT;
	}
	now = xs_now_ns();
	if (xs_sched.retry)
		*timeout = XS_RETRY_MS;
	if (xs_sched.recheck_ns) {
		int ms = (int)((xs_sched.recheck_ns - now + 999999) / 1000000);

		if (ms < *timeout)
			*timeout = ms < 1 ? 1 : ms;
	}
	if (!watch_room(w, 2 * (size_t)xs_sched.count + 1)) {
		pthread_mutex_unlock(&xs_sched.lock);
		return PLAN_NOMEM;
	}
	w->fds[0].fd = m->efd;
	w->fds[0].events = POLLIN;
	for (q = xs_sched.head; q; q = q->s_next) {
		const struct xs_platform_ops *ops = q->plat->ops;
		bool lower = !q->s_failed && q->s_level >= XSCHED_LV2 && q->s_busy &&
			     xs_has_lower(q);
		struct watch want = watch_of(q, lower, q->pre && q->pre->ops->stop_fd);
		int fd;

		q->s_arb_watched = false;
		if (want.idle && n + 2 < w->cap) {
			/* No idle fd (a call queue): look again soon. */
			fd = ops->poll_fd ? ops->poll_fd(q->plat, q->pq) : -1;
			atomic_fetch_add(&q->refs, 1);
			w->qs[n] = q;
			w->kind[n] = fd >= 0 ? MON_IDLE : MON_POLL;
			w->fds[n + 1].fd = fd;
			w->fds[n + 1].events = POLLIN;
			w->fds[n + 1].revents = 0;
			if (fd < 0)
				*timeout = XS_RETRY_MS;
			n++;
		}
		if (want.arb == MON_NONE || n + 2 > w->cap)
			continue;
		ops = q->pre->ops;
		if (want.arb == MON_CHECK) {
			w->kind[n] = MON_CHECK;
			w->fds[n + 1].fd = -1;
			*timeout = XS_ARB_CHECK_MS;
		} else {
			short ev = 0;

			fd = ops->stop_fd(q->pre, q->preq, &ev);
			if (fd < 0)
				continue;
			w->kind[n] = MON_STOP;
			w->fds[n + 1].fd = fd;
			w->fds[n + 1].events = ev;
		}
		w->fds[n + 1].revents = 0;
		atomic_fetch_add(&q->refs, 1);
		w->qs[n] = q;
		q->s_arb_watched = true;
		n++;
	}
	pthread_mutex_unlock(&xs_sched.lock);
	return (long)n;
}

/* Act on what poll() said of entry @i, and drop its reference. */
static void act(struct watchset *w, size_t i)
{
	struct xsched_xqueue *q = w->qs[i];
	short r = w->fds[i + 1].revents;

	switch (w->kind[i]) {
	case MON_IDLE:
		if (r & (POLLIN | POLLERR | POLLHUP)) {
			xs_xq_update_completed(q);
			xs_sched_refresh(q);
		}
		break;
	case MON_POLL:
		xs_xq_update_completed(q);
		xs_sched_refresh(q);
		break;
	case MON_STOP:
		if (r & (POLLERR | POLLHUP)) {
			xs_xq_update_completed(q);
			xs_sched_refresh(q);
		}
		if (r)
			xs_arb_observe(q);
		break;
	default:
		xs_arb_observe(q);
		break;
	}
	xs_xqueue_put(q);
}

static void *monitor(void *arg)
{
	struct xs_monitor *m = arg;
	struct watchset w = { 0 };

	for (;;) {
		size_t n, i;
		int timeout;
		long ret;
		uint64_t v;

		ret = plan(m, &w, &timeout);
		if (ret == PLAN_EXIT)
			break;
		if (ret == PLAN_NOMEM) {
			usleep(10000);
			continue;
		}
		n = (size_t)ret;
		w.fds[0].revents = 0;
		/* The 1 s timeout is a safety net only; every change kicks the
		 * eventfd.  An XQueue seen stopped by the arbiter is re-read every
		 * XS_ARB_CHECK_MS. */
		if (poll(w.fds, n + 1, timeout) < 0)
			w.fds[0].revents = 0;
		if (w.fds[0].revents & POLLIN)
			(void)!read(w.fds[0].fd, &v, sizeof(v));
		for (i = 0; i < n; i++)
			act(&w, i);
	}
	free(w.qs);
	free(w.fds);
	free(w.kind);
	return NULL;
}

void xs_sched_add(struct xsched_xqueue *xq)
{
	struct xsched_xqueue *q;

	xs_fork_init();
	pthread_mutex_lock(&xs_sched.lock);
	xq->hook = &sched_hook;
	xq->id = xs_sched.next_id++;
	xq->s_next = xs_sched.head;
	xs_sched.head = xq;
	xs_sched.count++;
	if (!xs_sched.mon) {
		struct xs_monitor *m = calloc(1, sizeof(*m));

		if (m)
			m->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (!m || m->efd < 0 ||
		    pthread_create(&m->thread, NULL, monitor, m)) {
			xs_err("cannot start the monitor thread; Lv2/Lv3 XQueues will only be seen idle by xsched_wait()");
			if (m && m->efd >= 0)
				close(m->efd);
			free(m);
		} else {
			xs_sched.mon = m;
		}
	}
	/* A new XQueue may have to be held at once (by work that is really there). */
	for (q = xs_sched.head; q; q = q->s_next)
		if (q != xq && q->s_prio > xq->s_prio)
			xs_refresh_stale_locked(q);
	xs_evaluate(XSCHED_WHY_HIGHER_IDLE, 0);
	xs_monitor_kick_locked();
	pthread_mutex_unlock(&xs_sched.lock);
}

void xs_sched_remove(struct xsched_xqueue *xq)
{
	struct xsched_xqueue **pp;
	struct xs_monitor *stop = NULL;

	pthread_mutex_lock(&xs_sched.lock);
	xq->s_dead = true;
	xs_wait_applied(xq);
	if (xq->s_suspended) {
		xq->s_hold = 0;
		xs_apply(xq, XSCHED_WHY_DESTROY, 0);
	}
	if (xq->s_arb_stopped)	/* closing the queue fd resumes it */
		xs_arb_seen(xq, false, XSCHED_WHY_DESTROY);
	for (pp = &xs_sched.head; *pp; pp = &(*pp)->s_next) {
		if (*pp == xq) {
			*pp = xq->s_next;
			break;
		}
	}
	xs_sched.count--;
	xs_evaluate(XSCHED_WHY_DESTROY, xq->id);
	/* The monitor may be polling it: wake it to drop its reference. */
	if (xs_sched.mon)
		xs_monitor_kick_locked();
	if (!xs_sched.count && xs_sched.mon) {
		stop = xs_sched.mon;
		xs_monitor_kick_locked();
		stop->exit = true;
		xs_sched.mon = NULL;
	}
	pthread_mutex_unlock(&xs_sched.lock);
	if (stop) {
		pthread_join(stop->thread, NULL);
		close(stop->efd);
		free(stop);
	}
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

	pthread_mutex_lock(&xs_sched.lock);
	for (q = xs_sched.head; q; q = q->s_next)
		pthread_mutex_lock(&q->lock);
	xs_log_lock(true);
}

static void fork_parent(void)
{
	struct xsched_xqueue *q;

	xs_log_lock(false);
	for (q = xs_sched.head; q; q = q->s_next)
		pthread_mutex_unlock(&q->lock);
	pthread_mutex_unlock(&xs_sched.lock);
}

static void fork_child(void)
{
	struct xsched_xqueue *q;

	xs_log_lock(false);
	for (q = xs_sched.head; q; q = q->s_next)
		pthread_mutex_unlock(&q->lock);
	atomic_fetch_add(&xs_fork_gen, 1);
	if (xs_sched.mon) {
		close(xs_sched.mon->efd);	/* its thread is the parent's */
		xs_sched.mon = NULL;
	}
	xs_sched.head = NULL;
	xs_sched.count = 0;
	xs_sched.ndeps = 0;
	xs_sched.recheck_ns = 0;
	xs_sched.retry = false;
	xs_sched.pending = false;
	pthread_cond_init(&xs_sched.cond, NULL);
	pthread_mutex_unlock(&xs_sched.lock);
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
