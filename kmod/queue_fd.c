// SPDX-License-Identifier: GPL-2.0
/*
 * xsched core: the queue fd.  A registration (queue.c's object) gets an
 * anonymous-inode fd here; its ioctls (SUSPEND, RESUME, QUERY,
 * SET_PRIORITY, also run for XSCHED_IOC_ADMIN), its poll, and its release.
 * Every change of state goes through queue.c's state machine.
 *
 * The fd owns the registration: its release takes the queue off the
 * arbiter, resumes it if it is stopped and lets the backend go, so nothing
 * stays stopped once its owner is gone, whatever the owner did before.
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>

#include "xsched.h"
#include "trace.h"

/*
 * Test only: the next N suspends each log a WARN.  `make check` uses it to prove
 * that a kernel splat fails the suite that caused it (Documentation/testing.rst).
 */
static unsigned int debug_inject_warn;
module_param(debug_inject_warn, uint, 0600);
MODULE_PARM_DESC(debug_inject_warn,
		 "Test only: make the next N suspends log a kernel WARNING (default 0)");

static void xsched_inject_warn(void)
{
	unsigned int n = READ_ONCE(debug_inject_warn);

	while (n && !try_cmpxchg(&debug_inject_warn, &n, n - 1))
		;
	WARN(n, "xsched: injected warning (debug_inject_warn)\n");
}

int xsched_queue_suspend(struct xsched_queue *q, struct xsched_suspend *s,
			 bool admin)
{
	bool block = !(s->flags & XSCHED_SUSPEND_NONBLOCK);
	struct xsched_waiter w = {};
	int ret;
	u32 seq;

	if (s->flags & ~XSCHED_SUSPEND_FLAGS || s->reserved[0] || s->reserved[1] ||
	    s->reserved1)
		return -EINVAL;
	s->latency_ns = 0;
	s->saved_bytes = 0;
	s->seq = 0;
	if (s->mode != XSCHED_MODE_DRAIN && s->mode != XSCHED_MODE_SAVE)
		return -EINVAL;
	if (s->grace_ns > XSCHED_GRACE_MAX_NS)
		return -EINVAL;

	/*
	 * Under the lock: an administrator's queue may be closed meanwhile.
	 * Killable: its holder may be waiting on a slow backend.
	 */
	if (mutex_lock_killable(&q->lock))
		return -EINTR;
	if (q->released) {
		ret = -ENOENT;
	} else if (!(q->ops->modes & BIT(s->mode))) {
		ret = -EOPNOTSUPP;
	} else {
		xsched_inject_warn();
		ret = q->arbitrated ? -EBUSY :
			xsched_queue_start_suspend(q, s->mode, s->grace_ns, &seq,
						   block ? &w : NULL, NULL, 0,
						   admin);
	}
	/* Resume (which cancels) and query must go on while we wait. */
	mutex_unlock(&q->lock);
	if (!ret)
		s->seq = seq;
	if (ret || !block)
		return ret;

	ret = wait_event_interruptible(q->wq, READ_ONCE(w.done) ||
				       READ_ONCE(q->seq) != seq ||
				       READ_ONCE(q->state) != XSCHED_STATE_SUSPENDING);
	/*
	 * Our suspend's own outcome, even if other threads have resumed and
	 * suspended the queue again since.  Not done: a resume cancelled it
	 * before the backend finished, or a signal came first (the suspend
	 * goes on; QUERY shows its outcome).
	 */
	spin_lock(&q->state_lock);
	list_del(&w.node);
	if (w.done) {
		ret = w.result;
		if (!ret) {
			s->latency_ns = w.ns;
			s->saved_bytes = w.saved_bytes;
		}
	} else {
		ret = ret ? -EINTR : -ECANCELED;
	}
	spin_unlock(&q->state_lock);
	return ret;
}

static bool xsched_queue_admin_held(struct xsched_queue *q)
{
	bool held;

	spin_lock(&q->state_lock);
	held = q->by_admin && (q->state == XSCHED_STATE_SUSPENDING ||
			       q->state == XSCHED_STATE_SUSPENDED);
	spin_unlock(&q->state_lock);
	return held;
}

int xsched_queue_resume(struct xsched_queue *q, struct xsched_resume *r,
			bool admin)
{
	int ret;

	if (r->flags || r->reserved0 || r->reserved[0] || r->reserved[1])
		return -EINVAL;
	r->suspended_ns = 0;
	if (q->arbitrated)
		return -EBUSY;
	if (mutex_lock_killable(&q->lock))
		return -EINTR;
	if (q->released)
		ret = -ENOENT;
	else if (!admin && xsched_queue_admin_held(q))
		ret = -EBUSY;
	else
		ret = xsched_queue_do_resume(q, &r->suspended_ns);
	mutex_unlock(&q->lock);
	return ret;
}

static int xsched_queue_query(struct xsched_queue *q, struct xsched_queue_info *i)
{
	struct xsched_progress p = {};
	int k;

	if (i->flags || i->reserved1)
		return -EINVAL;
	for (k = 0; k < ARRAY_SIZE(i->reserved); k++)
		if (i->reserved[k])
			return -EINVAL;

	/* Progress first: the backend lock nests outside state_lock. */
	xsched_queue_read_progress(q, &p);
	memset(i, 0, sizeof(*i));
	i->rptr = p.rptr;
	i->wptr = p.wptr;
	i->steps_done = p.steps_done;
	i->saved_waves = p.saved_waves;
	i->save_area_size = p.save_area_size;
	i->gpu_id = p.gpu_id;
	i->hw_queue_id = p.hw_queue_id;

	spin_lock(&q->state_lock);
	i->state = q->state;
	i->backend = q->backend;
	i->priority = q->priority;
	i->queue_uid = q->uid;
	i->last_mode = q->mode;
	i->suspend_seq = q->seq;
	i->last_error = q->last_error;
	i->suspends = q->suspends;
	i->resumes = q->resumes;
	i->faults = q->faults;
	i->last_suspend_ns = q->last_suspend_ns;
	i->total_suspend_ns = q->total_suspend_ns;
	i->max_suspend_ns = q->max_suspend_ns;
	i->saved_bytes = q->saved_bytes;
	i->arbiter_suspends = q->arbiter_suspends;
	spin_unlock(&q->state_lock);
	i->arbitrated = q->arbitrated;
	i->modes = q->ops->modes;
	return 0;
}

int xsched_queue_set_priority(struct xsched_queue *q,
			      struct xsched_set_priority *sp)
{
	int ret;

	if (sp->flags || sp->reserved[0] || sp->reserved[1])
		return -EINVAL;
	if (mutex_lock_killable(&q->lock))
		return -EINTR;
	ret = q->released ? -ENOENT :
		xsched_priority_check(sp->priority, q->priority);
	if (!ret) {
		spin_lock(&q->state_lock);
		q->priority = sp->priority;
		spin_unlock(&q->state_lock);
		if (q->arbitrated)
			xsched_queue_arb->set_priority(q, sp->priority);
	}
	mutex_unlock(&q->lock);
	return ret;
}

/*
 * Copy in, run, copy out.  Every struct is copied whole so that reserved
 * fields can be checked, in the caller's size (_IOC_SIZE), which may be
 * larger or smaller than the module's (xsched_arg_in()).
 */
static long xsched_queue_ioctl(struct file *file, unsigned int cmd,
			       unsigned long arg)
{
	struct xsched_queue *q = file->private_data;
	void __user *uarg = (void __user *)arg;
	union {
		struct xsched_suspend s;
		struct xsched_resume r;
		struct xsched_queue_info i;
		struct xsched_set_priority p;
	} u;
	size_t usize = _IOC_SIZE(cmd), ksize, min;
	unsigned int nr = XSCHED_IOC_NOSIZE(cmd);
	long ret;

	/* Any size of a struct that may grow: see the uapi header. */
	if (nr == XSCHED_IOC_NOSIZE(XSCHED_IOC_SUSPEND)) {
		ksize = sizeof(u.s);
		min = XSCHED_SUSPEND_SIZE_VER0;
	} else if (nr == XSCHED_IOC_NOSIZE(XSCHED_IOC_RESUME)) {
		ksize = sizeof(u.r);
		min = XSCHED_RESUME_SIZE_VER0;
	} else if (nr == XSCHED_IOC_NOSIZE(XSCHED_IOC_QUERY)) {
		ksize = sizeof(u.i);
		min = XSCHED_QUERY_SIZE_VER0;
	} else if (nr == XSCHED_IOC_NOSIZE(XSCHED_IOC_SET_PRIORITY)) {
		ksize = sizeof(u.p);
		min = XSCHED_SET_PRIORITY_SIZE_VER0;
	} else {
		return -ENOTTY;
	}
	ret = xsched_arg_in(&u, ksize, min, uarg, usize);
	if (ret)
		return ret;
	usize = min(usize, ksize);
	/* As on the client: fail before acting if results cannot be returned. */
	if ((_IOC_DIR(cmd) & _IOC_READ) && copy_to_user(uarg, &u, usize))
		return -EFAULT;

	if (nr == XSCHED_IOC_NOSIZE(XSCHED_IOC_SUSPEND))
		ret = xsched_queue_suspend(q, &u.s, false);
	else if (nr == XSCHED_IOC_NOSIZE(XSCHED_IOC_RESUME))
		ret = xsched_queue_resume(q, &u.r, false);
	else if (nr == XSCHED_IOC_NOSIZE(XSCHED_IOC_QUERY))
		ret = xsched_queue_query(q, &u.i);
	else
		return xsched_queue_set_priority(q, &u.p);
	/* Outputs are valid on success only; EINTR leaves the suspend running. */
	if (!ret && (_IOC_DIR(cmd) & _IOC_READ) && copy_to_user(uarg, &u, usize))
		return -EFAULT;
	return ret;
}

static __poll_t xsched_queue_poll(struct file *file, poll_table *wait)
{
	struct xsched_queue *q = file->private_data;
	struct xsched_progress p = {};
	__poll_t mask = 0;
	u32 state;

	poll_wait(file, &q->wq, wait);
	xsched_queue_read_progress(q, &p);
	state = xsched_queue_state(q);
	if (p.rptr == p.wptr)
		mask |= EPOLLIN | EPOLLRDNORM;
	else if (q->ops->polled && state != XSCHED_STATE_FAILED &&
		 !hrtimer_is_queued(&q->poll_timer))
		/*
		 * Nothing wakes a waiter when the GPU catches up: a timer does,
		 * and each poll it causes arms it again while work is left.
		 */
		hrtimer_start(&q->poll_timer,
			      ns_to_ktime(max(xsched_queue_arb->poll_us(), 100U) *
					  NSEC_PER_USEC),
			      HRTIMER_MODE_REL);
	if (state == XSCHED_STATE_SUSPENDED)
		mask |= EPOLLPRI;
	if (state == XSCHED_STATE_FAILED)
		mask |= EPOLLERR;
	return mask;
}

/*
 * Undo a registration.  Off the list first, so that no new pass of the
 * arbiter or debugfs finds the queue; one that holds a reference already
 * sees ->released under q->lock and calls nothing.  Then the queue is
 * resumed if stopped, and the backend lets go (restarting the queue itself
 * if resume failed).
 */
static void xsched_queue_unregister(struct xsched_queue *q)
{
	u64 ns;
	int ret;

	xsched_queue_unlist(q);
	trace_xsched_queue_unregister(q->uid);
	if (q->arbitrated)
		xsched_queue_arb->remove(q);

	mutex_lock(&q->lock);
	ret = xsched_queue_do_resume(q, &ns);
	if (ret && ret != -EALREADY && ret != -EIO)
		pr_warn("xsched: queue %u: resume on close failed (%d), forcing it\n",
			q->uid, ret);
	q->ops->release(q);
	q->released = true;
	mutex_unlock(&q->lock);
	/* No poller is left once the file is released; no suspend either. */
	hrtimer_cancel(&q->poll_timer);
	cancel_delayed_work_sync(&q->timeout_work);
	xsched_queue_put(q);
}

static int xsched_queue_release(struct inode *inode, struct file *file)
{
	xsched_queue_unregister(file->private_data);
	return 0;
}

static const struct file_operations xsched_queue_fops = {
	.owner = THIS_MODULE,
	.release = xsched_queue_release,
	.unlocked_ioctl = xsched_queue_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.poll = xsched_queue_poll,
	.llseek = noop_llseek,
};

/*
 * Give @q its fd, and to the arbiter if @reg asks.  The fd number is written
 * to userspace before the fd is installed, so a fault leaves no fd behind.
 * On error the registration is undone here.
 */
int xsched_queue_install_fd(struct xsched_queue *q, struct xsched_register *reg,
			    struct xsched_register __user *ureg, size_t usize)
{
	struct file *file;
	int fd;

	if (reg->flags & XSCHED_REGISTER_ARBITRATE) {
		fd = xsched_queue_arb->add(q);
		if (fd) {
			xsched_queue_unregister(q);
			return fd;
		}
	}
	fd = get_unused_fd_flags(O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		xsched_queue_unregister(q);
		return fd;
	}
	file = anon_inode_getfile("[xsched-queue]", &xsched_queue_fops, q,
				  O_RDWR | O_CLOEXEC);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		xsched_queue_unregister(q);
		return PTR_ERR(file);
	}
	reg->queue_fd = fd;
	reg->queue_uid = q->uid;
	if (copy_to_user(ureg, reg, usize)) {
		/* fput() runs the release, which unregisters q. */
		put_unused_fd(fd);
		fput(file);
		return -EFAULT;
	}
	trace_xsched_queue_register(q->uid, q->backend, q->priority,
				    q->arbitrated, q->pid, q->comm);
	fd_install(fd, file);
	return fd;
}
