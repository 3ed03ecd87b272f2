// SPDX-License-Identifier: MIT
/*
 * The HIP runtime's ops for the interposition core (struct xsi_runtime in
 * interpose.h): which handle is a default stream, the current device, a
 * stream's priority and device, completion marks (events), captures.  They
 * call the runtime's functions in xh_real (never our hooks), which hip/hooks.c
 * resolves before the core is told of the runtime.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hip/hip_runtime_api.h>

#include "env.h"
#include "ops.h"

struct xh_real xh_real;

/* ---- the core's runtime ops ---------------------------------------------- */

enum xsi_default xh_default_kind(uintptr_t h)
{
	if (!h)
		return XSI_DEFAULT_NULL;
	if (h == (uintptr_t)hipStreamPerThread)
		return XSI_DEFAULT_PER_THREAD;
	return XSI_NOT_DEFAULT;
}

int xh_current_device(void)
{
	int dev = 0;

	return xh_real.get_device(&dev) == hipSuccess ? dev : 0;
}

int xh_device_count(void)
{
	int n = 0;

	return xh_real.get_device_count && xh_real.get_device_count(&n) == hipSuccess ? n : -1;
}

int xh_requested_priority(int prio)
{
	return prio < XH_HIP_PRIO_GREATEST ? XH_HIP_PRIO_GREATEST :
	       prio > XH_HIP_PRIO_LEAST ? XH_HIP_PRIO_LEAST : prio;
}

/* HIP priority -> xsched priority (see the top of the file). */
int32_t xh_priority(int hip_prio)
{
	const struct xs_config *cfg = xs_config();
	int64_t p = (cfg->has_priority ? cfg->priority : 0) - (int64_t)hip_prio;

	return p < XSCHED_PRIO_MIN ? XSCHED_PRIO_MIN : p > XSCHED_PRIO_MAX ? XSCHED_PRIO_MAX :
	       (int32_t)p;
}

bool xh_chooses(int hip_prio)
{
	return !xh_hold_every_burst && hip_prio < 0;
}

static atomic_bool no_device_said;

int xh_describe(uintptr_t h, struct xsi_stream_desc *d)
{
	int prio = 0, dev;

	if (xh_default_kind(h) == XSI_NOT_DEFAULT) {
		dev = xh_real.stream_device((hipStream_t)h);
		if (dev < 0 ||
		    xh_real.stream_get_priority((hipStream_t)h, &prio) != hipSuccess)
			return -ENOENT;
		d->device = dev;
	} else if (xh_real.get_device(&dev) != hipSuccess) {
		if (!atomic_exchange(&no_device_said, true))
			xs_warn("hip: no usable HIP device (hipGetDevice fails): calls go to the runtime unscheduled");
		return -ENODEV;
	}
	d->priority = xh_priority(prio);
	d->chooses = xh_default_kind(h) == XSI_NOT_DEFAULT && xh_chooses(prio);
	d->context = 0;
	return 0;
}

/* Our own records must not end another thread's capture (global mode). */
static bool capturing(hipStream_t h)
{
	hipStreamCaptureStatus cs = hipStreamCaptureStatusNone;

	return xh_real.stream_is_capturing &&
	       xh_real.stream_is_capturing(h, &cs) == hipSuccess &&
	       cs != hipStreamCaptureStatusNone;
}

/* The core's question: is @h being captured (its own capture, or one it
 * joined)? */
int xh_is_capturing(uintptr_t h)
{
	return xh_real.stream_is_capturing ? capturing((hipStream_t)h) : -ENOSYS;
}

/* An event after what was handed to the runtime on @h, on @d's device. */
int xh_mark_record(uintptr_t h, const struct xsi_stream_desc *d, void **mark)
{
	hipEvent_t ev = NULL;
	int old = -1;
	hipError_t r;

	if (xh_real.get_device(&old) != hipSuccess)
		return -EIO;
	if (old != d->device && xh_real.set_device(d->device) != hipSuccess)
		return -EIO;
	if (capturing((hipStream_t)h)) {
		r = hipErrorStreamCaptureUnsupported;
	} else {
		r = xh_real.event_create(&ev, hipEventDisableTiming);
		if (r == hipSuccess) {
			r = xh_real.event_record(ev, (hipStream_t)h);
			if (r != hipSuccess)
				xh_real.event_destroy(ev);
		}
	}
	if (old != d->device)
		xh_real.set_device(old);
	if (r != hipSuccess)
		return r == hipErrorStreamCaptureUnsupported ? -EBUSY : -EIO;
	*mark = ev;
	return 0;
}

/* Poll (a yield, then sleeps of 10 us growing to 100 us) rather than block
 * in hipEventSynchronize, so that the timeout holds even when the awaited
 * work waits for the host. */
int xh_mark_wait(void *mark, int64_t timeout_ns)
{
	uint64_t deadline = timeout_ns < 0 ? UINT64_MAX : xs_now_ns() + (uint64_t)timeout_ns;
	uint64_t ns = 0;

	for (;;) {
		hipError_t r = xh_real.event_query(mark);

		if (r == hipSuccess)
			return 0;
		if (r != hipErrorNotReady)
			return -EIO;
		if (xs_now_ns() >= deadline)
			return -ETIMEDOUT;
		if (!ns) {
			sched_yield();
			ns = 10000;
		} else {
			struct timespec ts = { 0, (long)ns };

			nanosleep(&ts, NULL);
			if (ns < 100000)
				ns *= 2;
		}
	}
}

void xh_mark_free(void *mark)
{
	xh_real.event_destroy(mark);
}
