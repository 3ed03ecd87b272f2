// SPDX-License-Identifier: GPL-2.0
/*
 * The sim device: its state (struct xsim_dev, one per module), the
 * parameters of its shape and timing, and the two lists a CU with a free
 * slot looks at: queues with work to place (runnable) and queues with a
 * grace end (graced), and the CUs' wakeups.  Every file of the sim changes
 * these; this one calls none of them.
 */
#include <linux/module.h>
#include <linux/sched.h>

#include "sim.h"

static unsigned int sim_cus = 4;
module_param(sim_cus, uint, 0444);
MODULE_PARM_DESC(sim_cus, "Compute units of the sim GPU (1-64, default 4)");

static unsigned int sim_waves_per_cu = 4;
module_param(sim_waves_per_cu, uint, 0444);
MODULE_PARM_DESC(sim_waves_per_cu, "Wave slots per sim compute unit (1-16, default 4)");

unsigned int sim_save_ns = 20000;
module_param(sim_save_ns, uint, 0644);
MODULE_PARM_DESC(sim_save_ns, "Time to save one wave's state, ns (default 20000)");

unsigned int sim_restore_ns = 20000;
module_param(sim_restore_ns, uint, 0644);
MODULE_PARM_DESC(sim_restore_ns, "Time to restore one wave's state, ns (default 20000)");

/*
 * Every step takes at least this much simulated time: zero-time kernels
 * cannot spin the CU threads.  With 16 slots the default bounds the sim to
 * 160,000 steps a second.
 */
unsigned int sim_min_step_ns = 100000;
module_param(sim_min_step_ns, uint, 0644);
MODULE_PARM_DESC(sim_min_step_ns,
		 "Simulated time every step is charged at least, ns (1000-10000000, default 100000)");

struct xsim_dev xsim;

/* Check the parameters; the state as it is before any CU runs. */
int xsim_dev_init(void)
{
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
	return 0;
}

/* Whether a free slot can take work from @q: a wave to restore or to start. */
static bool xsim_queue_runnable(const struct xsim_queue *q)
{
	if (q->nsaved)
		return q->run == XSIM_RUN || q->run == XSIM_DRAIN;
	return q->run == XSIM_RUN && q->rptr != q->wptr &&
	       q->next_wg < q->ring[q->rptr & (q->ring_size - 1)].grid;
}

/* Put @q on or off the runnable list after any change of what it can run. */
void xsim_queue_requeue(struct xsim_queue *q)
{
	bool runnable = xsim_queue_runnable(q);

	lockdep_assert_held(&xsim.lock);
	if (runnable && list_empty(&q->run_node))
		list_add_tail(&q->run_node, &xsim.runnable);
	else if (!runnable && !list_empty(&q->run_node))
		list_del_init(&q->run_node);
}

void xsim_queue_set_grace(struct xsim_queue *q, ktime_t end)
{
	lockdep_assert_held(&xsim.lock);
	q->grace_end = end;
	if (end && list_empty(&q->grace_node))
		list_add_tail(&q->grace_node, &xsim.graced);
	else if (!end && !list_empty(&q->grace_node))
		list_del_init(&q->grace_node);
}

void xsim_kick_all(void)
{
	unsigned int i;

	lockdep_assert_held(&xsim.lock);
	for (i = 0; i < xsim.ncu; i++) {
		xsim.cus[i].kick = true;
		wake_up(&xsim.cus[i].wq);
	}
}

/*
 * Take @q's waves off the CUs (a reset, a queue let go) and wake the CUs:
 * one whose slots all held waves without a deadline (a hung save) sleeps
 * until kicked, and would leave the freed slots idle while other queues'
 * work waits for one.
 */
void xsim_queue_evict(struct xsim_queue *q)
{
	bool freed = false;
	unsigned int c, w;

	lockdep_assert_held(&xsim.lock);
	for (c = 0; c < xsim.ncu; c++) {
		for (w = 0; w < xsim.nwaves; w++) {
			struct xsim_wave *wave = &xsim.cus[c].waves[w];

			if (wave->q == q) {
				wave->q = NULL;
				freed = true;
			}
		}
	}
	if (freed)
		xsim_kick_all();
}
