// SPDX-License-Identifier: MIT
/*
 * The stand-in HIP runtime's events: create, record, query, synchronize,
 * elapsed time, and streams waiting on them (barrier-AND packets).
 */
#include "hip_standin.h"

/* ---- events ---- */

EXPORT hipError_t hipEventCreateWithFlags(hipEvent_t *event, unsigned int flags)
{
	hipError_t e = init();
	struct ihipEvent_t *ev;

	if (e)
		return ret(e);
	if (!event)
		return ret(hipErrorInvalidValue);
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return ret(hipErrorOutOfMemory);
	ev->flags = flags;
	hsa_signal_create(0, 0, NULL, &ev->sig);
	*event = ev;
	return hipSuccess;
}

EXPORT hipError_t hipEventCreate(hipEvent_t *event)
{
	return hipEventCreateWithFlags(event, 0);
}

EXPORT hipError_t hipEventDestroy(hipEvent_t event)
{
	if (!event)
		return ret(hipErrorInvalidResourceHandle);
	retire(event->sig);	/* a queued wait may still refer to it */
	free(event);
	return hipSuccess;
}

static hipError_t event_record(hipEvent_t event, hipStream_t stream, bool spt)
{
	if (!event)
		return ret(hipErrorInvalidResourceHandle);
	STREAM_OR_FAIL(s, stream, spt);
	if (s->capture)
		return ret(hipErrorStreamCaptureUnsupported);
	/* A new signal per record: waits queued on the old one keep theirs. */
	retire(event->sig);
	hsa_signal_create(1, 0, NULL, &event->sig);
	event->recorded = true;
	begin(s);
	put_barrier_locked(s->hq, NULL, 0, event->sig, &s->last);
	end(s);
	return hipSuccess;
}

EXPORT hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream)
{
	return event_record(event, stream, false);
}

EXPORT hipError_t hipEventQuery(hipEvent_t event)
{
	if (!event)
		return ret(hipErrorInvalidResourceHandle);
	return hsa_signal_load_scacquire(event->sig) == 0 ? hipSuccess : hipErrorNotReady;
}

EXPORT hipError_t hipEventSynchronize(hipEvent_t event)
{
	if (!event)
		return ret(hipErrorInvalidResourceHandle);
	hsa_signal_wait_scacquire(event->sig, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX,
				  HSA_WAIT_STATE_BLOCKED);
	return hipSuccess;
}

EXPORT hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop)
{
	hsa_amd_profiling_dispatch_time_t a, b;

	if (!ms || !start || !stop)
		return ret(hipErrorInvalidValue);
	if (!start->recorded || !stop->recorded)
		return ret(hipErrorInvalidResourceHandle);
	if (hsa_signal_load_scacquire(start->sig) || hsa_signal_load_scacquire(stop->sig))
		return ret(hipErrorNotReady);
	hsa_amd_profiling_get_dispatch_time(g_agent, start->sig, &a);
	hsa_amd_profiling_get_dispatch_time(g_agent, stop->sig, &b);
	*ms = (float)((double)((int64_t)(b.end - a.end)) / 1e6);
	return hipSuccess;
}

static hipError_t wait_event(hipStream_t stream, hipEvent_t event, unsigned int flags, bool spt)
{
	if (!event || flags)
		return ret(hipErrorInvalidValue);
	STREAM_OR_FAIL(s, stream, spt);
	if (s->capture)
		return ret(hipErrorStreamCaptureUnsupported);
	if (!event->recorded)
		return hipSuccess;
	begin(s);
	put_barrier_locked(s->hq, &event->sig, 1, (hsa_signal_t){ 0 }, &s->last);
	end(s);
	return hipSuccess;
}

EXPORT hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event, unsigned int flags)
{
	return wait_event(stream, event, flags, false);
}

EXPORT hipError_t hipStreamWaitEvent_spt(hipStream_t stream, hipEvent_t event,
					 unsigned int flags)
{
	return wait_event(stream, event, flags, true);
}
