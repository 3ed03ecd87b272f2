// SPDX-License-Identifier: MIT
/*
 * libxsched's entry points (xsched.h), and those the interposers use: each
 * checks its arguments (-EINVAL), refuses an XQueue of the parent in a fork
 * child (-ECHILD), and calls the XQueue (xqueue.c, caller.c) and the
 * scheduler (sched.c, hold.c), which never call back up here.  Creating and
 * destroying an XQueue is where the two meet: an XQueue is made, then added
 * to the scheduler; it is taken out of the scheduler before it is freed.
 */
#include <errno.h>
#include <stddef.h>
#include <unistd.h>

#include "internal.h"

XS_EXPORT uint32_t xsched_version(void)
{
	return (uint32_t)XSCHED_LIB_VERSION_MAJOR << 16 | XSCHED_LIB_VERSION_MINOR;
}

/* Create an XQueue over submitter @plat (queue @handle) and preemptor @pre
 * (the same queue, or NULL), and schedule it. */
static int xq_create(struct xsched_xqueue **xqp, struct xsched_platform *plat,
		     struct xsched_platform *pre, uint64_t handle,
		     const struct xsched_attr *attr, void *own_plat, bool worker)
{
	struct xsched_xqueue *xq;
	int ret;

	*xqp = NULL;
	ret = xs_xq_create(&xq, plat, pre, handle, attr, own_plat, worker);
	if (ret)
		return ret;
	xs_sched_add(xq);
	xs_info("q%u: created on %s, priority %d, Lv%u, threshold %u, batch %u%s",
		xq->id, plat->ops->name, xq->s_prio, xq->s_level, xq->threshold, xq->batch,
		!xq->arb_mode ? "" : xq->s_arb ? ", scheduled by the module's arbiter" :
		", arbiter mode (Lv1: scheduled in this process)");
	*xqp = xq;
	return 0;
}

XS_EXPORT int xsched_xqueue_create(struct xsched_xqueue **xqp,
				   struct xsched_platform *plat, uint64_t handle,
				   const struct xsched_attr *attr)
{
	if (!xqp || !plat || !plat->ops)
		return -EINVAL;
	return xq_create(xqp, plat, plat->ops->suspend ? plat : NULL, handle,
			 attr, NULL, true);
}

static int create_calls(struct xsched_xqueue **xqp, const struct xsched_call_ops *ops,
			void *ctx, const struct xsched_attr *attr, bool worker)
{
	struct xsched_platform *p;
	int ret;

	if (!xqp || !ops || !ops->mark_record || !ops->mark_wait ||
	    !ops->mark_free)
		return -EINVAL;
	*xqp = NULL;
	p = xs_calls_platform(ops, ctx);
	if (!p)
		return -ENOMEM;
	ret = xq_create(xqp, p, NULL, 0, attr, p, worker);
	if (ret)
		xs_calls_platform_free(p);
	return ret;
}

XS_EXPORT int xsched_xqueue_create_calls(struct xsched_xqueue **xqp,
					 const struct xsched_call_ops *ops,
					 void *ctx, const struct xsched_attr *attr)
{
	return create_calls(xqp, ops, ctx, attr, true);
}

int xs_xqueue_create_caller_held(struct xsched_xqueue **xqp, const struct xsched_call_ops *ops,
				 void *ctx, const struct xsched_attr *attr)
{
	return create_calls(xqp, ops, ctx, attr, false);
}

/*
 * Give a call queue a preemptor: @pre's queue @handle (a sim or kfd queue),
 * which then allows Lv2/Lv3.  Only while idle, at Lv1, with none yet.
 */
XS_EXPORT int xsched_set_preemptor(struct xsched_xqueue *xq,
				   struct xsched_platform *pre, uint64_t handle)
{
	if (!xq || !pre || !pre->ops->suspend)
		return -EINVAL;
	if (xs_foreign(xq))
		return -ECHILD;
	return xs_xq_set_preemptor(xq, pre, handle);
}

XS_EXPORT int xsched_xqueue_destroy(struct xsched_xqueue *xq)
{
	int ret;

	if (!xq)
		return -EINVAL;
	if (xs_foreign(xq))
		return -ECHILD;
	/* Nobody holds it from now on (user, policy), and it holds nobody:
	 * everything submitted can complete whoever else is busy. */
	xs_sched_kill(xq);
	ret = xs_xq_synchronize(xq);
	xs_xq_lv1_stop_worker(xq);
	xs_xq_drop_buffered(xq);
	xs_sched_remove(xq);
	/* The hardware queue is unbound when the last reference goes.  The
	 * others (the monitor's poll pass, a group sync, a dependency hint)
	 * are short: wait for them, so that the caller may bind the same
	 * hardware queue again as soon as this returns. */
	while (atomic_load(&xq->refs) > 1)
		usleep(50);
	xs_info("q%u: destroyed", xq->id);
	xs_xqueue_put(xq);
	return ret == -EIO ? 0 : ret;
}

XS_EXPORT int xsched_submit(struct xsched_xqueue *xq, const void *cmds,
			    unsigned int count, uint64_t *seq)
{
	if (!xq || !cmds || !count)
		return -EINVAL;
	if (xs_foreign(xq))
		return -ECHILD;
	if (xq->own_plat)
		return -EINVAL;	/* a call queue takes xsched_submit_call() */
	return xs_xq_submit(xq, cmds, count, seq, NULL, NULL);
}

XS_EXPORT int xsched_submit_call(struct xsched_xqueue *xq,
				 const struct xsched_call *calls,
				 unsigned int count, uint64_t *seq, int *status)
{
	uint64_t s1 = 0, taken = 0;
	unsigned int i;
	int ret;

	if (!xq || !calls || !count)
		return -EINVAL;
	for (i = 0; i < count; i++)
		if (!calls[i].fn)
			return -EINVAL;
	if (xs_foreign(xq))
		return -ECHILD;
	if (!xq->own_plat)
		return -EINVAL;
	ret = xs_xq_submit(xq, calls, count, &s1, status, &taken);
	if (ret) {
		/* Calls not taken are released here: the caller passes the
		 * call through itself. */
		for (i = (unsigned int)(taken < count ? taken : count); i < count; i++)
			if (calls[i].release)
				calls[i].release(calls[i].arg);
		return ret;
	}
	if (seq)
		*seq = s1;
	return 0;
}

XS_EXPORT int xsched_wait(struct xsched_xqueue *xq, uint64_t seq,
			  int64_t timeout_ns)
{
	if (!xq)
		return -EINVAL;
	if (xs_foreign(xq))
		return -ECHILD;
	return xs_xq_wait(xq, seq, timeout_ns);
}

XS_EXPORT int xsched_synchronize(struct xsched_xqueue *xq)
{
	if (!xq)
		return -EINVAL;
	if (xs_foreign(xq))
		return -ECHILD;
	return xs_xq_synchronize(xq);
}

XS_EXPORT int xsched_flush(struct xsched_xqueue *xq)
{
	if (!xq)
		return -EINVAL;
	if (xs_foreign(xq))
		return -ECHILD;
	return xs_xq_flush(xq);
}

XS_EXPORT int xsched_depend(struct xsched_xqueue *xq, struct xsched_xqueue *src,
			    uint64_t seq)
{
	if (!xq || !src || xq == src)
		return -EINVAL;
	if (xs_foreign(xq) || xs_foreign(src))
		return -ECHILD;
	return xs_sched_depend(xq, src, seq);
}

XS_EXPORT int xsched_group_synchronize(uint32_t group)
{
	return xs_sched_group_sync(group);
}

XS_EXPORT int xsched_set_lv1(struct xsched_xqueue *xq, unsigned int threshold,
			     unsigned int batch)
{
	if (!xq)
		return -EINVAL;
	if (xs_foreign(xq))
		return -ECHILD;
	return xs_xq_set_lv1(xq, threshold, batch);
}

/* The levels an XQueue can run at: Lv1 needs a launching submitter, Lv2/Lv3
 * a preemptor that can suspend. */
static unsigned int max_level(const struct xsched_xqueue *xq)
{
	return xq->pre ? xq->pre->ops->max_level : XSCHED_LV1;
}

static unsigned int min_level(const struct xsched_xqueue *xq)
{
	return xq->plat->ops->min_level;
}

static int set_level(struct xsched_xqueue *xq, unsigned int level, bool live)
{
	int ret;

	if (!xq)
		return -EINVAL;
	if (xs_foreign(xq))
		return -ECHILD;
	if (level == XSCHED_LV_DEFAULT)
		level = max_level(xq);
	if (level > XSCHED_LV3)
		return -EINVAL;
	if (level > max_level(xq) || level < min_level(xq))
		return -EOPNOTSUPP;
	ret = xs_sched_set_level(xq, level, live);
	if (ret)
		return ret;
	if (level == XSCHED_LV1)
		return xs_xq_lv1_start_worker(xq);
	xs_xq_lv1_stop_worker(xq);
	return 0;
}

XS_EXPORT int xsched_set_level(struct xsched_xqueue *xq, unsigned int level)
{
	return set_level(xq, level, false);
}

int xs_set_level_live(struct xsched_xqueue *xq, unsigned int level)
{
	return set_level(xq, level, true);
}

_Static_assert(offsetof(struct xsched_xq_info, group) == XSCHED_XQ_INFO_SIZE_VER0,
	       "xsched_xq_info: 0.1's fields moved");
_Static_assert(sizeof(struct xsched_xq_info) == XSCHED_XQ_INFO_SIZE_VER1,
	       "xsched_xq_info: size of 0.3");
XS_EXPORT int xsched_query(struct xsched_xqueue *xq, struct xsched_xq_info *info,
		 size_t size)
{
	struct xsched_xq_info full;

	if (!xq || !info || size < XSCHED_XQ_INFO_SIZE_VER0)
		return -EINVAL;
	if (xs_foreign(xq))
		return -ECHILD;
	memset(&full, 0, sizeof(full));
	full.group = xq->group;
	xs_sched_fill_info(xq, &full);
	xs_xq_fill_info(xq, &full);
	xs_copy_out(info, size, &full, sizeof(full));
	return 0;
}

/* 0.1: xsched_query(xq, info) with the 0.1 struct. */
XS_EXPORT int xs_query_v01(struct xsched_xqueue *xq, struct xsched_xq_info *info)
{
	return xsched_query(xq, info, XSCHED_XQ_INFO_SIZE_VER0);
}
XS_SYMVER("xs_query_v01", "xsched_query@LIBXSCHED_0.1");
XS_SYMVER("xsched_query", "xsched_query@@@LIBXSCHED_0.3, remove");

XS_EXPORT uint32_t xsched_xqueue_id(const struct xsched_xqueue *xq)
{
	return xq ? xq->id : 0;
}

XS_EXPORT int xsched_suspend(struct xsched_xqueue *xq, unsigned int flags)
{
	if (!xq || (flags & ~XSCHED_SUSPEND_NONBLOCK))
		return -EINVAL;
	if (xs_foreign(xq))
		return -ECHILD;
	return xs_sched_user_suspend(xq, flags);
}

XS_EXPORT int xsched_resume(struct xsched_xqueue *xq)
{
	if (!xq)
		return -EINVAL;
	if (xs_foreign(xq))
		return -ECHILD;
	return xs_sched_user_resume(xq);
}

XS_EXPORT int xsched_set_priority(struct xsched_xqueue *xq, int32_t priority)
{
	if (!xq || priority < XSCHED_PRIO_MIN || priority > XSCHED_PRIO_MAX)
		return -EINVAL;
	if (xs_foreign(xq))
		return -ECHILD;
	return xs_sched_set_priority(xq, priority);
}

XS_EXPORT int xsched_decisions(struct xsched_decision *out, unsigned int max,
		     size_t size)
{
	if ((!out && max) || size < XSCHED_DECISION_SIZE_VER0)
		return -EINVAL;
	return xs_sched_decisions(out, max, size);
}

/* 0.1: xsched_decisions(out, max) with the 0.1 record. */
XS_EXPORT int xs_decisions_v01(struct xsched_decision *out, unsigned int max)
{
	return xsched_decisions(out, max, XSCHED_DECISION_SIZE_VER0);
}
XS_SYMVER("xs_decisions_v01", "xsched_decisions@LIBXSCHED_0.1");
XS_SYMVER("xsched_decisions", "xsched_decisions@@@LIBXSCHED_0.3, remove");

XS_EXPORT const char *xsched_action_name(uint32_t action)
{
	return xs_action_name(action);
}

XS_EXPORT const char *xsched_reason_name(uint32_t reason)
{
	return xs_reason_name(reason);
}
