// SPDX-License-Identifier: MIT
/*
 * The hold chosen per burst (interpose.h, xsi_stream_desc.chooses): a
 * stream's bursts run with Lv1's holds of the lower streams or without, as
 * mode.c finds each pays, so that holds that buy the urgent job nothing do
 * not cost the batch job beside it (issue 33: holds on every burst cost an
 * eager LLM's neighbouring training 42% for a slower urgent job).
 *
 * Calls go through dispatch.c: xsi_hold_begin() asks xsi_bursts_call()
 * whether the call is counted (its burst holds) or made unseen (native),
 * xsi_sync_end() ends the bursts of the streams a synchronize covered.  The
 * cap follows the choice: the stream caps the lower ones while its burst
 * holds, and between bursts while the next one will, so that a held
 * burst's first call finds the lower streams' queues short.
 */
#include "core_state.h"
#include "mode.h"

/* @s's cap brought to what its choice wants.  The changes are made under
 * the table's lock and repeated until what was applied is what is wanted,
 * so that one another thread wanted meanwhile is never lost (it calls this
 * after its own change, and finds it made or makes it). */
static void caps_follow(struct xsi_stream *s)
{
	struct xsi_state *st = s->rt->state;
	bool want, was;

	if (atomic_load(&s->bursts->caps) == atomic_load(&s->caps))
		return;
	pthread_mutex_lock(&st->lock);
	was = atomic_load(&s->caps);
	for (;;) {
		/* A stream out of the table caps nothing any more. */
		want = atomic_load(&s->bursts->caps) && !s->gone;
		if (want == atomic_load(&s->caps) ||
		    xsi_caps_set_locked(st, s, want) != want)
			break;	/* (a stream of no device caps nothing) */
	}
	want = atomic_load(&s->caps);
	pthread_mutex_unlock(&st->lock);
	if (want != was)
		xsi_log(s->rt, "stream %#lx: %s lower streams (its choice)",
			(unsigned long)s->rt_handle, want ? "caps" : "no longer caps");
}

bool xsi_bursts_call(struct xsi_stream *s, const char *entry)
{
	bool began;
	enum xm_mode m = xm_burst_mode(s->bursts, xs_now_ns, &began);

	caps_follow(s);
	if (began)
		xsi_log(s->rt, "%s stream %#lx -> q%u: a burst begins: %s", entry,
			(unsigned long)s->rt_handle, xsched_xqueue_id(s->xq),
			m == XM_LV1 ? "lv1, lower streams held" :
				      "native, holds nothing (its calls are not counted)");
	return m != XM_NATIVE;
}

void xsi_bursts_synced(struct xsi_stream *s, uint64_t since, uint64_t recorded)
{
	struct xm_state st;
	char w[160];

	if (recorded && recorded < atomic_load(&s->bursts->t0))
		return;	/* an event of an earlier burst: this one goes on */
	if (xm_burst_end(s->bursts, since, xs_now_ns(), &st) && xsi_log_on()) {
		xm_waits(&st, w, sizeof(w));
		xsi_log(s->rt, "stream %#lx: its bursts now run %s (burst %u; %s)",
			(unsigned long)s->rt_handle, xm_name(st.best), st.burst, w);
	}
	caps_follow(s);
}
