/* SPDX-License-Identifier: MIT */
/*
 * The in-process scheduler's state, shared by its two files and by no other:
 * hold.c (the decisions: the policy applied under sched.lock, holds, the
 * user's requests) and sched.c (above it: XQueues join and leave, the
 * monitor thread, fork).  hold.c never calls into sched.c; it reaches the
 * monitor only through the eventfd kept here.
 */
#ifndef XSCHED_SCHED_STATE_H
#define XSCHED_SCHED_STATE_H

#include "internal.h"

/* While an arbitrated XQueue is seen stopped, how often its state is re-read. */
#define XS_ARB_CHECK_MS 1
/* How often a failed policy suspend is tried again, and how often a busy
 * XQueue without an idle fd (a call queue) is looked at. */
#define XS_RETRY_MS 1

/* One monitor thread, from the first XQueue to the last.  Each start gets its
 * own: a remover joins the one it stopped, while a creator may already have
 * started the next (no shared exit flag, no shared eventfd). */
struct xs_monitor {
	pthread_t thread;
	int efd;
	bool exit;		/* under sched.lock */
};

/* A dependency hint (xsched_depend()): waiter waits for src's seq. */
struct xs_dep {
	uint32_t waiter, src;
	uint64_t seq;
};

/* sched.lock and what it guards (internal.h: the lock order). */
struct xs_sched {
	pthread_mutex_t lock;
	struct xsched_xqueue *head;
	int count;
	uint32_t next_id;
	struct xs_monitor *mon;	/* NULL: none running */
	struct xs_dep *deps;
	unsigned int ndeps, deps_cap;
	uint64_t recheck_ns;	/* hysteresis: evaluate again then (0: no) */
	bool retry;		/* a policy suspend failed: try again soon */
	/* Some XQueue's s_pending is set: the applier has work. */
	bool pending;
	pthread_cond_t cond;	/* an XQueue's s_applying went false */
	void *scratch;		/* xs_evaluate()'s arrays */
	size_t scratch_size;
};

extern struct xs_sched xs_sched;

/* hold.c, for sched.c; each called with sched.lock held. */
void xs_evaluate(uint32_t why_resume, uint32_t cause);
int xs_apply_op(struct xsched_xqueue *q, bool want, unsigned int level);
void xs_apply_done(struct xsched_xqueue *q, bool want, int err,
		   uint32_t reason, uint32_t other);
void xs_wait_applied(struct xsched_xqueue *q);
int xs_apply(struct xsched_xqueue *q, uint32_t reason, uint32_t other);
void xs_arb_seen(struct xsched_xqueue *q, bool stopped, uint32_t reason);
bool xs_has_lower(const struct xsched_xqueue *q);
void xs_refresh_stale_locked(struct xsched_xqueue *q);
void xs_monitor_kick_locked(void);
/* hold.c, for the monitor: called without sched.lock. */
void xs_arb_observe(struct xsched_xqueue *q);

#endif /* XSCHED_SCHED_STATE_H */
