// SPDX-License-Identifier: MIT
/*
 * The SM partition (XSCHED_CUDA_SM_SPLIT): urgent streams on a green
 * context of their own SMs.  Called by the CUDA table (cuda/hooks.c) at
 * set-up and at stream creation; it calls only the driver (cuda/driver.h).
 */
#include <cuda.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../../internal.h"
#include "../interpose.h"
#include "driver.h"
#include "split.h"

/*
 * XSCHED_CUDA_SM_SPLIT=N gives urgent streams SMs of their own on each
 * device.  At the first stream creation on a device, its SMs are split into
 * a group of at least N (the driver rounds N up to its granularity: 8 SMs on
 * compute capability 9.0) and the rest, and one green context is made of
 * each.  A stream the application creates with a CUDA priority more urgent
 * than the context's least (the default, 0) is created on the urgent green
 * context, any other stream on the rest, with the requested flags and
 * priority (cuGreenCtxStreamCreate).  A green context does not reserve its
 * SMs against the ordinary context: the legacy and per-thread default
 * streams belong to the ordinary context, cannot be moved, and run on every
 * SM, so work on them is confined by nothing.  A stream the driver refuses
 * to make on a green context (it asks for CU_STREAM_NON_BLOCKING) is made as
 * asked, on every SM.  The green contexts live as long as the process.
 */
#define XC_MAX_DEV 64

struct xc_part {
	int state;		/* 0: not tried, 1: made, -1: failed (said once) */
	CUgreenCtx green[2];	/* [0] urgent streams, [1] the others */
	unsigned int sms[2];
};

static unsigned int split_sms;	/* XSCHED_CUDA_SM_SPLIT; 0: no partition */
static pthread_mutex_t part_lock = PTHREAD_MUTEX_INITIALIZER;	/* parts[] */
static struct xc_part parts[XC_MAX_DEV];

void xc_split_fork_prepare(void)
{
	pthread_mutex_lock(&part_lock);
}

void xc_split_fork_parent(void)
{
	pthread_mutex_unlock(&part_lock);
}

/* The child cannot use its parent's CUDA contexts: it starts untried. */
void xc_split_fork_child(void)
{
	memset(parts, 0, sizeof(parts));
	pthread_mutex_unlock(&part_lock);
}

/* part_lock held: split @dev's SMs and make the two green contexts. */
static void part_make(CUdevice dev, struct xc_part *p)
{
	CUdevResource all, grp, rest;
	CUdevResourceDesc desc;
	unsigned int n = 1;
	const char *step = "cuDeviceGetDevResource";
	CUresult r;

	memset(&all, 0, sizeof(all));
	memset(&grp, 0, sizeof(grp));
	memset(&rest, 0, sizeof(rest));
	p->state = -1;
	r = xc_drv.dev_resource(dev, &all, CU_DEV_RESOURCE_TYPE_SM);
	if (r == CUDA_SUCCESS && split_sms >= all.sm.smCount) {
		xs_err("cuda: XSCHED_CUDA_SM_SPLIT=%u leaves none of device %d's %u SMs to the other streams; no SM partition",
		       split_sms, (int)dev, all.sm.smCount);
		return;
	}
	if (r == CUDA_SUCCESS) {
		step = "cuDevSmResourceSplitByCount";
		r = xc_drv.sm_split(&grp, &n, &all, &rest, 0, split_sms);
		if (r == CUDA_SUCCESS && (n != 1 || !rest.sm.smCount))
			r = CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
	}
	if (r == CUDA_SUCCESS) {
		step = "cuDevResourceGenerateDesc";
		r = xc_drv.gen_desc(&desc, &grp, 1);
	}
	if (r == CUDA_SUCCESS) {
		step = "cuGreenCtxCreate";
		r = xc_drv.green_create(&p->green[0], desc, dev, CU_GREEN_CTX_DEFAULT_STREAM);
	}
	if (r == CUDA_SUCCESS) {
		step = "cuDevResourceGenerateDesc";
		r = xc_drv.gen_desc(&desc, &rest, 1);
		if (r == CUDA_SUCCESS) {
			step = "cuGreenCtxCreate";
			r = xc_drv.green_create(&p->green[1], desc, dev,
						 CU_GREEN_CTX_DEFAULT_STREAM);
		}
		/* The urgent context alone is no partition: nothing to undo,
		 * it stays unused (one context's memory). */
	}
	if (r != CUDA_SUCCESS) {
		xs_warn("cuda: device %d: no SM partition (%s failed, error %d); streams are created as asked",
			(int)dev, step, (int)r);
		return;
	}
	p->sms[0] = grp.sm.smCount;
	p->sms[1] = rest.sm.smCount;
	p->state = 1;
	xs_info("cuda: device %d: SM partition: urgent streams on %u SMs, the others on %u (of %u); the legacy and per-thread default streams cannot be moved and run on every SM, confined by nothing",
		(int)dev, p->sms[0], p->sms[1], all.sm.smCount);
}

/*
 * A new stream of CUDA priority @prio (flags @flags) on the current device:
 * made on its partition (1, *res the driver's answer), or not placed (0:
 * the caller makes it as asked).
 */
bool xc_split_stream_create(CUstream *ph, unsigned int flags, int prio, CUresult *res)
{
	int least = 0, greatest = 0, which;
	struct xc_part p;
	CUdevice dev = 0;
	CUresult r;

	if (!split_sms || xc_drv.ctx_get_device(&dev) != CUDA_SUCCESS ||
	    dev < 0 || dev >= XC_MAX_DEV)
		return 0;
	pthread_mutex_lock(&part_lock);
	if (!parts[dev].state)
		part_make(dev, &parts[dev]);
	p = parts[dev];
	pthread_mutex_unlock(&part_lock);
	if (p.state < 0)
		return 0;
	/* Lower is more urgent; the driver clamps into [greatest, least]. */
	if (xc_drv.prio_range(&least, &greatest) != CUDA_SUCCESS)
		least = 0;
	which = prio < least ? 0 : 1;
	r = xc_drv.green_stream_create(ph, p.green[which], flags, prio);
	if (r != CUDA_SUCCESS) {
		xs_info("cuda: a stream of flags %#x, CUDA priority %d, could not be made on device %d's %s partition (error %d): made as asked, on every SM",
			flags, prio, (int)dev, which ? "batch" : "urgent", (int)r);
		return 0;
	}
	xs_info("cuda: stream %p (CUDA priority %d) on device %d's %s partition, %u SMs",
		(void *)*ph, prio, (int)dev, which ? "batch" : "urgent", p.sms[which]);
	*res = r;
	return 1;
}

/* XSCHED_CUDA_SM_SPLIT and XSCHED_CUDA_HOLD, from do_init(). */

unsigned int xc_split_init(void)
{
	static const char *const need[] = {
		"cuCtxGetStreamPriorityRange", "cuDeviceGetDevResource",
		"cuDevSmResourceSplitByCount", "cuDevResourceGenerateDesc",
		"cuGreenCtxCreate", "cuGreenCtxStreamCreate",
	};
	const bool have[] = {
		xc_drv.prio_range, xc_drv.dev_resource, xc_drv.sm_split,
		xc_drv.gen_desc, xc_drv.green_create, xc_drv.green_stream_create,
	};
	const char *s = getenv("XSCHED_CUDA_SM_SPLIT");
	unsigned long v;
	size_t i;
	char *end;

	if (!s || !*s)
		return 0;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || !v || v > 65536 || *s == '-' || *s == '+' || *s == ' ') {
		xs_err("cuda: XSCHED_CUDA_SM_SPLIT='%s' is not a whole number of SMs (1 or more); no SM partition",
		       s);
		return 0;
	}
	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		if (!have[i]) {
			xs_warn("cuda: XSCHED_CUDA_SM_SPLIT=%lu needs green contexts (a CUDA 12.4+ driver); this libcuda lacks %s: no SM partition",
				v, need[i]);
			return 0;
		}
	}
	split_sms = (unsigned int)v;
	return split_sms;
}
