// SPDX-License-Identifier: GPL-2.0
/*
 * A sim queue's run state (enum xsim_run), from a suspend to its end.  A
 * DRAIN stops dispatch and lets started waves finish (a grace period bounds
 * it: past it the suspend is undone with ETIMEDOUT).  A SAVE, after its
 * grace period, traps every resident wave, which the CUs then write to the
 * queue's save area (cu.c); a watchdog resets a queue whose save hangs.  The
 * suspend completes once no wave of the queue is left running; a resume
 * lets saving waves run on and restores saved ones.  A reset (FAILED) kills
 * the queue's waves and fails its unfinished work.  All under xsim.lock,
 * which the watchdog takes itself.
 */
#include <linux/jiffies.h>
#include <linux/printk.h>

#include "sim.h"

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
void xsim_queue_check_stopped(struct xsim_queue *q)
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
void xsim_queue_fail(struct xsim_queue *q, int err)
{
	lockdep_assert_held(&xsim.lock);
	if (q->run == XSIM_FAILED)
		return;
	xsim_queue_evict(q);
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
ktime_t xsim_check_graces(ktime_t now)
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

void xsim_watchdog(struct work_struct *work)
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

/* Let the queue dispatch again; a trap in progress is cancelled. */
void xsim_queue_restart(struct xsim_queue *q)
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
