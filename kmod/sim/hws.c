// SPDX-License-Identifier: GPL-2.0
/*
 * The HWS cost model, debugfs sim/hws: while it is set, every suspend and
 * resume is a runlist update that preempts the whole device, as on gfx9
 * with HWS: it is counted (runlist_updates), every running wave of the
 * other queues loses a save and a restore, and the caller waits
 * hws_update_us as for the firmware.  The arbiter's batch ops make the
 * updates of one pass one.
 */
#include <linux/delay.h>

#include "sim.h"

/*
 * With the HWS model on, @except's suspend or resume is one runlist update
 * of the whole device, or part of the batch under way.  Returns whether the
 * caller must now wait for the update (xsim_hws_wait(), unlocked).
 */
bool xsim_hws_update(struct xsim_queue *except)
{
	u64 cost = (u64)READ_ONCE(sim_save_ns) + READ_ONCE(sim_restore_ns);
	unsigned int c, w;

	lockdep_assert_held(&xsim.lock);
	if (!xsim.hws)
		return false;
	if (xsim.batch_depth) {
		xsim.batch_pending = true;
		return false;
	}
	xsim.runlist_updates++;
	for (c = 0; c < xsim.ncu; c++) {
		for (w = 0; w < xsim.nwaves; w++) {
			struct xsim_wave *wave = &xsim.cus[c].waves[w];

			if (wave->q && wave->q != except &&
			    wave->phase == XSIM_RUNNING)
				wave->deadline = ktime_add_ns(wave->deadline, cost);
		}
	}
	return true;
}

/* The caller of a runlist update waits for the firmware, as update_queue() does. */
void xsim_hws_wait(bool updated)
{
	unsigned int us = min(READ_ONCE(xsim.hws_update_us), 100000U);

	if (updated && us)
		usleep_range(us, us + us / 8 + 1);
}

/* Only the HWS model has anything to batch; NULL tells batch_end so. */
void *xsim_op_batch_begin(struct xsched_queue *const *qs, unsigned int n)
{
	void *batch = NULL;

	spin_lock(&xsim.lock);
	if (xsim.hws) {
		xsim.batch_depth++;
		batch = &xsim;
	}
	spin_unlock(&xsim.lock);
	return batch;
}

void xsim_op_batch_end(void *batch)
{
	bool updated = false;

	if (!batch)
		return;
	spin_lock(&xsim.lock);
	if (!--xsim.batch_depth && xsim.batch_pending) {
		xsim.batch_pending = false;
		updated = xsim_hws_update(NULL);
	}
	spin_unlock(&xsim.lock);
	xsim_hws_wait(updated);
}
