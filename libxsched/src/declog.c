// SPDX-License-Identifier: MIT
/*
 * The decision log: the last XSCHED_DECISION_LOG_SIZE suspends and resumes
 * of this process's XQueues (the policy's, the user's, and what the library
 * saw the module's arbiter do), as xsched_decisions() returns them.  Each
 * record is also one debug line and, with XSCHED_LOG=trace, one trace-marker
 * line (xschedctl timeline reads them).  sched.lock guards the log: every
 * function here is called with it held (hold.c).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static struct {
	struct xsched_decision log[XSCHED_DECISION_LOG_SIZE];
	uint64_t seq;
} declog;

static const char *level_mode(unsigned int level)
{
	switch (level) {
	case XSCHED_LV1:
		return "launch";
	case XSCHED_LV2:
		return "drain";
	default:
		return "save";
	}
}

const char *xs_action_name(uint32_t action)
{
	switch (action) {
	case XSCHED_ACT_SUSPEND:
		return "suspend";
	case XSCHED_ACT_RESUME:
		return "resume";
	default:
		return "?";
	}
}

const char *xs_reason_name(uint32_t reason)
{
	switch (reason) {
	case XSCHED_WHY_HIGHER_BUSY:
		return "higher-priority queue busy";
	case XSCHED_WHY_HIGHER_IDLE:
		return "higher-priority queues idle";
	case XSCHED_WHY_USER:
		return "user request";
	case XSCHED_WHY_PRIORITY:
		return "priority changed";
	case XSCHED_WHY_DESTROY:
		return "queue destroyed";
	case XSCHED_WHY_FAILED:
		return "blocking queue failed";
	case XSCHED_WHY_ARBITER:
		return "arbiter";
	default:
		return "?";
	}
}

void xs_declog_add(const struct xsched_xqueue *q, const struct xsched_xqueue *o,
		   uint32_t action, uint32_t reason, uint32_t other, int err,
		   uint64_t now, uint64_t duration)
{
	struct xsched_decision *d;

	d = &declog.log[declog.seq % XSCHED_DECISION_LOG_SIZE];
	d->seq = ++declog.seq;
	d->time_ns = now;
	d->queue = q->id;
	d->other = other;
	d->action = action;
	d->reason = reason;
	d->level = q->s_level;
	d->error = err;
	d->duration_ns = duration;
	d->decided_ns = reason == XSCHED_WHY_USER || reason == XSCHED_WHY_ARBITER ?
			0 : q->s_decided_ns ? q->s_decided_ns : now;

	if (!xs_log_enabled(XS_LOG_DEBUG) && !xs_trace_on())
		return;
	/* Fields by name, the reason's words last (xschedctl timeline). */
	xs_trace("decision", "q=%u prio=%d level=%u action=%s other=%u other_prio=%d err=%d stopped_ns=%llu reason=%s",
		 q->id, q->s_prio, q->s_level, xs_action_name(action), other,
		 o ? o->s_prio : 0, err, (unsigned long long)duration,
		 xs_reason_name(reason));
	if (!xs_log_enabled(XS_LOG_DEBUG))
		return;
	if (reason == XSCHED_WHY_ARBITER) {
		if (action == XSCHED_ACT_SUSPEND)
			xs_debug("suspend q%u (prio %d, Lv%u): arbiter: the module stopped it (an arbitrated queue of higher priority, maybe in another process, has work)",
				 q->id, q->s_prio, q->s_level);
		else
			xs_debug("resume q%u (prio %d, Lv%u): arbiter: the module resumed it, was stopped %llu.%03llu us (as seen by the library)",
				 q->id, q->s_prio, q->s_level,
				 (unsigned long long)(duration / 1000),
				 (unsigned long long)(duration % 1000));
		return;
	}
	if (action == XSCHED_ACT_SUSPEND) {
		if (o)
			xs_debug("suspend q%u (prio %d, Lv%u %s): q%u (prio %d) %s%s%s",
				 q->id, q->s_prio, q->s_level, level_mode(q->s_level),
				 o->id, o->s_prio,
				 reason == XSCHED_WHY_HIGHER_BUSY ? "has work" :
				 xs_reason_name(reason),
				 err ? ", failed: " : "", err ? strerror(-err) : "");
		else
			xs_debug("suspend q%u (prio %d, Lv%u %s): %s%s%s", q->id,
				 q->s_prio, q->s_level, level_mode(q->s_level),
				 xs_reason_name(reason),
				 err ? ", failed: " : "", err ? strerror(-err) : "");
	} else {
		char by[24] = "";

		if (other)
			snprintf(by, sizeof(by), ", by q%u", other);
		xs_debug("resume q%u (prio %d, Lv%u %s): %s%s, was stopped %llu.%03llu us%s%s",
			 q->id, q->s_prio, q->s_level, level_mode(q->s_level),
			 xs_reason_name(reason), by,
			 (unsigned long long)(duration / 1000),
			 (unsigned long long)(duration % 1000),
			 err ? ", failed: " : "", err ? strerror(-err) : "");
	}
}

_Static_assert(offsetof(struct xsched_decision, decided_ns) ==
	       XSCHED_DECISION_SIZE_VER0, "xsched_decision: 0.1's fields moved");
_Static_assert(sizeof(struct xsched_decision) == XSCHED_DECISION_SIZE_VER1,
	       "xsched_decision: size of 0.3");

int xs_declog_copy(struct xsched_decision *out, unsigned int max, size_t size)
{
	uint64_t first, s;
	unsigned int n = 0;

	first = declog.seq > max ? declog.seq - max : 0;
	if (declog.seq > XSCHED_DECISION_LOG_SIZE &&
	    first < declog.seq - XSCHED_DECISION_LOG_SIZE)
		first = declog.seq - XSCHED_DECISION_LOG_SIZE;
	for (s = first; s < declog.seq; s++, n++)
		xs_copy_out((char *)out + (size_t)n * size, size,
			    &declog.log[s % XSCHED_DECISION_LOG_SIZE],
			    sizeof(struct xsched_decision));
	return (int)n;
}

void xs_declog_reset(void)
{
	declog.seq = 0;
	memset(declog.log, 0, sizeof(declog.log));
}
