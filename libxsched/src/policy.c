// SPDX-License-Identifier: MIT
/*
 * The in-process policy as a pure function: no locks, no platform calls, no
 * clock.  hold.c (xs_evaluate()) gathers the inputs under sched.lock and
 * applies the output, the Lv2/Lv3 suspends and resumes through sched.c's
 * monitor thread.
 *
 * Fixed priorities within a group: an XQueue is held while another live,
 * busy, not failed XQueue of the same group has a strictly higher effective
 * priority.  Dependencies raise effective priorities: while a waiter waits
 * for a source's sequence number, the source's effective priority is at
 * least the waiter's (transitively), so a source is never held on behalf of
 * its waiter or of anything the waiter outranks, and no wait deadlocks.
 *
 * Hysteresis: a held XQueue is released only once every would-be blocker has
 * been idle for hyst_ns, so an urgent stream that idles for a few
 * microseconds between launches does not make the batch queue thrash; the
 * output says when to look again.
 */
#include "internal.h"

/* Effective priorities: prio raised along the dependency edges. */
static void effective(const struct xs_pol_q *q, unsigned int n,
		      const struct xs_pol_dep *deps, unsigned int ndeps,
		      int32_t *eff)
{
	unsigned int i, d, round;
	bool changed = true;

	for (i = 0; i < n; i++)
		eff[i] = q[i].prio;
	/* At most n rounds: a chain longer than n has a cycle, which only
	 * raises every member to the cycle's top and then stops changing. */
	for (round = 0; changed && round < n; round++) {
		changed = false;
		for (d = 0; d < ndeps; d++) {
			unsigned int w = deps[d].waiter, s = deps[d].source;

			if (w >= n || s >= n || q[w].dead)
				continue;
			if (eff[s] < eff[w]) {
				eff[s] = eff[w];
				changed = true;
			}
		}
	}
}

void xs_policy_decide(const struct xs_pol_q *q, unsigned int n,
		      const struct xs_pol_dep *deps, unsigned int ndeps,
		      uint64_t now_ns, uint64_t hyst_ns, int32_t *eff,
		      struct xs_pol_out *out, uint64_t *recheck_ns)
{
	unsigned int i, j;

	*recheck_ns = 0;
	effective(q, n, deps, ndeps, eff);
	for (i = 0; i < n; i++) {
		int best = -1;

		out[i].hold = false;
		out[i].blocker = 0;
		if (q[i].dead || q[i].unheld)
			continue;
		for (j = 0; j < n; j++) {
			bool blocks;

			if (j == i || q[j].dead || q[j].failed ||
			    q[j].group != q[i].group || eff[j] <= eff[i])
				continue;
			blocks = q[j].busy;
			/* Hysteresis keeps a held queue held a little longer. */
			if (!blocks && q[i].held && hyst_ns &&
			    now_ns - q[j].idle_since_ns < hyst_ns) {
				uint64_t at = q[j].idle_since_ns + hyst_ns;

				blocks = true;
				if (!*recheck_ns || at < *recheck_ns)
					*recheck_ns = at;
			}
			if (blocks && (best < 0 || eff[j] > eff[best]))
				best = (int)j;
		}
		if (best >= 0) {
			out[i].hold = true;
			out[i].blocker = q[best].id;
		}
	}
}

/* The cap (Lv1): a stream keeps at most the threshold of its calls in
 * flight while a stream of strictly higher priority lives on its device
 * (@top: the highest there), busy or not, so that an urgent stream's first
 * call finds little ahead of it.  Equal priorities are never capped, as
 * they are never held. */
bool xs_policy_capped(int32_t prio, int32_t top)
{
	return prio < top;
}
