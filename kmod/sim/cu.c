// SPDX-License-Identifier: GPL-2.0
/*
 * The sim's compute units: kernel threads, each with wave slots.  A queue is
 * a ring of dispatch packets with read and write pointers; packets run in
 * order, each workgroup as one wave of @steps steps.  Time is simulated
 * with deadlines: a wave's step completes at its deadline, and only then
 * changes its registers and LDS, so a trap at any moment leaves a
 * consistent wave whose position, registers, LDS and remaining step time
 * are written to the queue's save area, and restored from it before
 * anything new is dispatched.  There is no separate command processor
 * thread: a CU with a free slot dispatches under xsim.lock, which is what
 * keeps dispatch exactly-once; it takes the lock per wave slot, not for a
 * whole pass, and looks only at the runnable list.
 */
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/slab.h>
#ifdef XSCHED_HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>	/* before 6.12 (6.1) */
#endif

#include "sim.h"

/*
 * Steps one wave may run in one visit of its CU.  A wave further behind
 * real time than that drops the rest (the sim runs slower than simulated
 * time), so a late CU thread never catches up at full speed.
 */
#define XSIM_BURST	64

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

/* The CU threads, each with sim_waves_per_cu slots, or an error. */
int xsim_start_cus(void)
{
	unsigned int i;
	int ret;

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
	return 0;

err:
	xsim_stop_cus();
	return ret;
}

void xsim_stop_cus(void)
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
