// SPDX-License-Identifier: GPL-2.0
/*
 * The sim backend as the core sees it: xsim_ops, registered with
 * xsched_kfd.ko at init (main.c).  The core calls the ops with
 * xsched_queue.lock held; bind and bind_ring make a registration of a sim
 * queue, named by its sim fd and id or by its ring address.  Suspend and
 * resume set the queue's run state (save.c) and are, with the HWS model
 * on, runlist updates (hws.c); the injected faults of a suspend or resume
 * (debugfs, main.c) act here.
 */
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/sched.h>

#include "sim.h"

static int xsim_op_suspend(struct xsched_queue *xq, u32 mode, u64 grace_ns,
			   u32 seq)
{
	struct xsim_queue *q = xq->priv;
	unsigned long timeout;
	bool updated = false;
	int ret = 0;

	spin_lock(&xsim.lock);
	if (q->run == XSIM_FAILED) {
		ret = -EIO;
		goto out;
	}
	if (xsim.ignore_suspend) {
		xsim.ignore_suspend--;
		goto out;
	}
	if (xsim.fake_suspend) {
		xsim.fake_suspend--;
		xsched_queue_suspend_done(xq, seq, 0, 0);
		goto out;
	}
	q->seq = seq;
	q->suspend_saved_bytes = 0;
	q->hang_save = false;
	/* The CUs running the queue's waves act on it: no timer resolution limit. */
	xsim_queue_set_grace(q, grace_ns ? ktime_add_ns(ktime_get(), grace_ns) : 0);
	if (mode == XSCHED_MODE_DRAIN) {
		q->run = XSIM_DRAIN;
	} else {
		if (xsim.fail_save) {
			xsim.fail_save--;
			q->hang_save = true;
		}
		q->run = grace_ns ? XSIM_SAVE_GRACE : XSIM_SAVE;
		timeout = nsecs_to_jiffies(grace_ns) +
			  msecs_to_jiffies(READ_ONCE(xsim.save_timeout_ms)) + 1;
		q->watchdog_at = jiffies + timeout;
		mod_delayed_work(system_wq, &q->watchdog, timeout);
	}
	xsim_queue_requeue(q);
	updated = xsim_hws_update(q);
	xsim_kick_all();
	xsim_queue_check_stopped(q);
out:
	spin_unlock(&xsim.lock);
	xsim_hws_wait(updated);
	return ret;
}

static int xsim_op_resume(struct xsched_queue *xq)
{
	struct xsim_queue *q = xq->priv;
	bool updated = false;
	int ret = 0;

	spin_lock(&xsim.lock);
	if (q->run == XSIM_FAILED) {
		ret = -EIO;
	} else if (xsim.fail_resume) {
		xsim.fail_resume--;
		ret = -EIO;
	} else {
		/* A save cut short: the waves it wrote are state written. */
		if ((q->run == XSIM_SAVE || q->run == XSIM_SAVE_GRACE) &&
		    q->suspend_saved_bytes)
			xsched_queue_save_cancelled(xq, q->suspend_saved_bytes);
		xsim_queue_restart(q);
		updated = xsim_hws_update(q);
	}
	spin_unlock(&xsim.lock);
	xsim_hws_wait(updated);
	return ret;
}

static void xsim_op_progress(struct xsched_queue *xq, struct xsched_progress *p)
{
	struct xsim_queue *q = xq->priv;

	spin_lock(&xsim.lock);
	p->rptr = q->rptr;
	p->wptr = q->wptr;
	p->steps_done = q->steps_done;
	p->saved_waves = q->nsaved;
	p->save_area_size = (u64)q->save_cap * sizeof(struct xsim_wave_state);
	p->hw_queue_id = q->id;
	spin_unlock(&xsim.lock);
}

static void xsim_op_release(struct xsched_queue *xq)
{
	struct xsim_queue *q = xq->priv;

	spin_lock(&xsim.lock);
	/* Nothing stays stopped without an owner, even if resume failed. */
	if (q->run != XSIM_RUN && q->run != XSIM_FAILED)
		xsim_queue_restart(q);
	q->xq = NULL;
	xq->priv = NULL;
	spin_unlock(&xsim.lock);
	xsched_queue_put(xq);
	kref_put(&q->ref, xsim_queue_release);
}

/* Register queue @id of @vm; with @expect, only if that is still the queue. */
static struct xsched_queue *xsim_register(struct xsim_vm *vm, u64 id,
					  struct xsim_queue *expect, s32 priority)
{
	struct xsched_queue *xq;
	struct xsim_queue *q;

	if (id >= XSCHED_SIM_QUEUES)
		return ERR_PTR(-ENOENT);
	/* vm->lock makes the EEXIST check and the binding one step. */
	mutex_lock(&vm->lock);
	q = vm->queues[id];
	if (!q || (expect && q != expect)) {
		xq = ERR_PTR(-ENOENT);
		goto out;
	}
	if (READ_ONCE(q->xq)) {
		xq = ERR_PTR(-EEXIST);
		goto out;
	}
	xq = xsched_queue_create(XSCHED_BACKEND_SIM, &xsim_ops, q, &xsim,
				 priority);
	if (IS_ERR(xq))
		goto out;
	/* The registration holds a reference on each side until release. */
	kref_get(&q->ref);
	kref_get(&xq->ref);
	spin_lock(&xsim.lock);
	q->xq = xq;
	if (q->run == XSIM_FAILED)
		xsched_queue_failed(xq, q->error);
	spin_unlock(&xsim.lock);
out:
	mutex_unlock(&vm->lock);
	return xq;
}

/* XSCHED_IOC_REGISTER of the core, backend sim: @fd is the sim fd owning @handle. */
static struct xsched_queue *xsim_op_bind(int fd, u64 handle, s32 priority)
{
	struct xsched_queue *xq;
	struct file *file;

	file = fget(fd);
	if (!file)
		return ERR_PTR(-EBADF);
	/* Only a sim fd carries an xsim_vm. */
	if (file->f_op != &xsim_fops)
		xq = ERR_PTR(-EINVAL);
	else
		xq = xsim_register(file->private_data, handle, NULL, priority);
	fput(file);
	return xq;
}

/* XSCHED_REGISTER_BY_RING: the caller's queue created with ring address @ring. */
static struct xsched_queue *xsim_op_bind_ring(u64 ring, s32 priority)
{
	struct xsched_queue *xq;
	struct xsim_queue *q;

	rcu_read_lock();
	q = xsim_find_ring(current->mm, ring);
	if (q && !kref_get_unless_zero(&q->ref))
		q = NULL;
	rcu_read_unlock();
	if (!q)
		return ERR_PTR(-ENOENT);
	/* Our reference keeps q->vm; its sim fd may close meanwhile (ENOENT). */
	xq = xsim_register(q->vm, q->id, q, priority);
	kref_put(&q->ref, xsim_queue_release);
	return xq;
}

const struct xsched_backend_ops xsim_ops = {
	.name = "sim",
	.owner = THIS_MODULE,
	.bind = xsim_op_bind,
	.bind_ring = xsim_op_bind_ring,
	.modes = BIT(XSCHED_MODE_DRAIN) | BIT(XSCHED_MODE_SAVE),
	.suspend = xsim_op_suspend,
	.resume = xsim_op_resume,
	.progress = xsim_op_progress,
	.release = xsim_op_release,
	.batch_begin = xsim_op_batch_begin,
	.batch_end = xsim_op_batch_end,
};
