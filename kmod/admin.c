// SPDX-License-Identifier: GPL-2.0
/*
 * XSCHED_IOC_ADMIN: an administrator changes the priority of, suspends or
 * resumes any registered queue, named by its uid, through the same queue
 * paths as the queue fd's own ioctls.  A queue of another user needs
 * CAP_SYS_ADMIN; raising a priority above 0 needs CAP_SYS_NICE either way.
 *
 * The argument grows at its end (it starts with its size): read with
 * copy_struct_from_user(), written back up to the caller's size.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/uaccess.h>

#include "xsched.h"

/* Checks what does not depend on the queue: flags, reserved, op fields. */
static int xsched_admin_check(const struct xsched_admin *a)
{
	if (a->flags & ~XSCHED_ADMIN_FLAGS || a->reserved[0] || a->reserved[1])
		return -EINVAL;
	switch (a->op) {
	case XSCHED_ADMIN_SET_PRIORITY:
		if (a->flags || a->mode || a->grace_ns ||
		    a->priority < XSCHED_PRIO_MIN || a->priority > XSCHED_PRIO_MAX)
			return -EINVAL;
		return 0;
	case XSCHED_ADMIN_SUSPEND:
		if (a->priority || a->grace_ns > XSCHED_GRACE_MAX_NS ||
		    (a->mode != XSCHED_MODE_DRAIN && a->mode != XSCHED_MODE_SAVE))
			return -EINVAL;
		return 0;
	case XSCHED_ADMIN_RESUME:
		if (a->flags || a->priority || a->mode || a->grace_ns)
			return -EINVAL;
		return 0;
	default:
		return -EINVAL;
	}
}

/* The owner needs no capability; anyone else CAP_SYS_ADMIN. */
static bool xsched_admin_allowed(const struct xsched_queue *q)
{
	return uid_eq(current_euid(), q->owner) || capable(CAP_SYS_ADMIN);
}

static int xsched_admin_do(struct xsched_queue *q, struct xsched_admin *a)
{
	union {
		struct xsched_suspend s;
		struct xsched_resume r;
		struct xsched_set_priority p;
	} u = {};
	int ret;

	switch (a->op) {
	case XSCHED_ADMIN_SET_PRIORITY:
		u.p.priority = a->priority;
		return xsched_queue_set_priority(q, &u.p);
	case XSCHED_ADMIN_SUSPEND:
		u.s.mode = a->mode;
		u.s.grace_ns = a->grace_ns;
		if (a->flags & XSCHED_ADMIN_NONBLOCK)
			u.s.flags = XSCHED_SUSPEND_NONBLOCK;
		ret = xsched_queue_suspend(q, &u.s, true);
		a->latency_ns = u.s.latency_ns;
		a->saved_bytes = u.s.saved_bytes;
		return ret;
	default:
		ret = xsched_queue_resume(q, &u.r, true);
		a->suspended_ns = u.r.suspended_ns;
		return ret;
	}
}

long xsched_admin_ioctl(struct xsched_admin __user *ua)
{
	struct xsched_admin a;
	struct xsched_queue *q;
	u32 size;
	int ret;

	if (get_user(size, &ua->size))
		return -EFAULT;
	if (size < XSCHED_ADMIN_SIZE_VER0)
		return -EINVAL;
	if (size > PAGE_SIZE)
		return -E2BIG;
	ret = copy_struct_from_user(&a, sizeof(a), ua, size);
	if (ret)
		return ret;
	size = min_t(u32, size, sizeof(a));
	/* As every ioctl here: fail before acting if results cannot be returned. */
	if (copy_to_user(ua, &a, size))
		return -EFAULT;
	ret = xsched_admin_check(&a);
	if (ret)
		return ret;

	q = xsched_queue_get_by_uid(a.queue_uid);
	if (!q)
		return -ENOENT;
	ret = xsched_admin_allowed(q) ? xsched_admin_do(q, &a) : -EPERM;
	xsched_queue_put(q);
	if (!ret && copy_to_user(ua, &a, size))
		return -EFAULT;
	return ret;
}
