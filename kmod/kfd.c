// SPDX-License-Identifier: GPL-2.0
/*
 * The kfd backend: suspend and resume real amdgpu/KFD compute queues.
 *
 * amdgpu exports no symbols, so the backend's files (kfd_backend.h lists
 * them) are built against KFD's private headers from the amdgpu source that
 * matches the running amdgpu.ko (KFD_SRC, see Kbuild) and reach KFD only
 * through data they are handed.  This file registers queues and implements
 * the backend ops:
 *
 *   attach    (kfd_attach.c) The caller passes its own /dev/kfd fd; its
 *             struct kfd_process is checked against the layout this module
 *             was compiled with before it is used.
 *   register  A queue is named by its ring base address; it is looked up
 *             in the process's per-device queue lists under the process
 *             mutex and the device queue manager's lock, as KFD does.
 *   suspend   Sets queue->properties.is_suspended and applies it with
 *             dqm->ops.update_queue(), the path of KFD's own
 *             AMDKFD_IOC_UPDATE_QUEUE.  That is an indirect call through
 *             KFD's ops table, never through a kallsyms address, so IBT
 *             kernels accept it.  With HWS (gfx9) it unmaps every user
 *             queue of the device with CWSR, rewrites the MQD and maps
 *             the rest again; with MES (gfx11/12) it removes this queue.
 *   resume    Clears the flag and applies it the same way.
 *
 * struct queue is not pinned: its owner can destroy it at any time with
 * AMDKFD_IOC_DESTROY_QUEUE, which needs the process mutex.  So a queue is
 * never kept by pointer; every operation looks it up again by queue id and
 * ring base with the process mutex held, and keeps the mutex until it is
 * done with the queue.
 *
 * Failures: a preemption that KFD cannot complete makes KFD reset the
 * device.  Such a queue is marked failed and this module never calls
 * update_queue() for it again, so it cannot trigger a second reset.
 */
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "kfd_backend.h"

/* Every registered KFD queue, so that one queue is registered only once. */
static LIST_HEAD(xkfd_queues);
static DEFINE_MUTEX(xkfd_queues_lock);

/*
 * The queue of @pdd with @queue_id, at @ring unless @ring is 0; dqm lock
 * held.  Undoing a suspend looks by id only: the owner may have moved the
 * ring (AMDKFD_IOC_UPDATE_QUEUE) while the queue was suspended, and it
 * must not stay suspended for that.
 */
static struct queue *xkfd_find(struct kfd_process_device *pdd, u32 queue_id,
			       u64 ring)
{
	struct queue *q;

	list_for_each_entry(q, &pdd->qpd.queues_list, list)
		if (q->properties.queue_id == queue_id &&
		    (!ring || q->properties.queue_address == ring) &&
		    !q->properties.is_being_destroyed)
			return q;
	return NULL;
}

/*
 * Set or clear is_suspended under the dqm lock, as KFD's own suspend and
 * resume do; update_queue() (which takes the lock itself) then applies it.
 */
static void xkfd_set_suspended(struct device_queue_manager *dqm,
			       struct queue *q, bool suspended)
{
	dqm_lock(dqm);
	q->properties.is_suspended = suspended;
	dqm_unlock(dqm);
}

/*
 * Bytes of wave state the last preemption wrote, from the MQD the CP
 * updates when it saves a queue (gfx9 layout; 0 elsewhere).
 */
static u64 xkfd_saved_bytes(struct device_queue_manager *dqm, struct queue *q)
{
	struct mqd_manager *mqd_mgr = dqm->mqd_mgrs[KFD_MQD_TYPE_CP];
	u32 gc = KFD_GC_VERSION(q->device);
	u64 stride = 0, total = 0;
	u32 xcc, xccs = 1;

	if (gc < IP_VERSION(9, 0, 1) || gc >= IP_VERSION(10, 0, 0) || !q->mqd)
		return 0;
#ifdef XKFD_HAVE_MQD_STRIDE
	if (mqd_mgr && mqd_mgr->mqd_stride) {
		stride = mqd_mgr->mqd_stride(mqd_mgr, &q->properties);
		xccs = NUM_XCC(q->device->xcc_mask);
	}
#endif
	for (xcc = 0; xcc < xccs; xcc++) {
		struct v9_mqd *m = q->mqd + stride * xcc;
		u32 ctl_size = READ_ONCE(m->cp_hqd_cntl_stack_size);
		u32 ctl_offset = READ_ONCE(m->cp_hqd_cntl_stack_offset);
		u32 wg_offset = READ_ONCE(m->cp_hqd_wg_state_offset);

		/* The control stack grows down, the wave state up. */
		if (ctl_offset < ctl_size)
			total += ctl_size - ctl_offset;
		if (wg_offset > ctl_size)
			total += wg_offset - ctl_size;
	}
	return total;
}

/* Is @q still the queue @kq was bound to (not a new one with its id)? */
static bool xkfd_same(const struct xkfd_queue *kq, const struct queue *q)
{
	return q && q == kq->kfd_q && q->mqd_mem_obj == kq->mqd_obj;
}

/*
 * The registered queue, looked up again; p->mutex held.  NULL if destroyed
 * (a queue created since with the same id included), or, with @ring,
 * moved to another ring.
 */
static struct queue *xkfd_lookup(struct xkfd_queue *kq, u64 ring)
{
	struct device_queue_manager *dqm = kq->pdd->dev->dqm;
	struct queue *q;

	dqm_lock(dqm);
	q = xkfd_find(kq->pdd, kq->queue_id, ring);
	if (!xkfd_same(kq, q))
		q = NULL;
	dqm_unlock(dqm);
	return q;
}

/* KFD's errors from a failed preemption, as the core reports them. */
static int xkfd_hw_error(int err)
{
	return err == -ETIME || err == -ETIMEDOUT ? -ETIMEDOUT : -EIO;
}

/* Mark the queue failed: the core reports it, the backend never retries. */
static void xkfd_fail(struct xkfd_queue *kq, int err)
{
	kq->failed = true;
	xsched_queue_failed(kq->xq, err);
}

static int xkfd_op_suspend(struct xsched_queue *xq, u32 mode, u64 grace_ns,
			   u32 seq)
{
	struct xkfd_queue *kq = xq->priv;
	struct device_queue_manager *dqm;
	bool terminal = false, was_active;
	struct kfd_process *p;
	struct queue *q;
	u64 saved = 0;
	int ret, locked;

	/* Only SAVE is offered (ops.modes); KFD applies its own grace period. */
	if (kq->failed)
		return -EIO;
	p = xkfd_use(kq->a);
	if (!p) {
		xkfd_fail(kq, -ESRCH);	/* its owner's mm is gone */
		return -ESRCH;
	}
	dqm = kq->pdd->dev->dqm;
	locked = xkfd_lock_process(p);
	if (!locked) {
		xkfd_unuse(kq->a);
		return -EAGAIN;
	}
	q = xkfd_lookup(kq, kq->ring);
	if (!q) {
		ret = -ENODEV;		/* destroyed or moved by its owner */
		terminal = true;
		goto out_unlock;
	}
	ret = xkfd_usable(kq, p);
	if (ret) {
		terminal = ret == -EIO;
		goto out_unlock;
	}
	if (q->properties.is_suspended) {
		ret = -EBUSY;		/* suspended by someone else */
		goto out_unlock;
	}
	was_active = q->properties.is_active;
	xkfd_set_suspended(dqm, q, true);
	ret = dqm->ops.update_queue(dqm, q, NULL);
	if (ret) {
		/* KFD resets the device after this; never try again. */
		xkfd_set_suspended(dqm, q, false);
		pr_warn("xsched: kfd: queue %u: gpu 0x%x queue %u: preemption failed (%d), queue failed\n",
			xq->uid, kq->gpu_id, kq->queue_id, ret);
		ret = xkfd_hw_error(ret);
		terminal = true;
		goto out_unlock;
	}
	kq->suspended = true;
	/* An unmapped queue (evicted, empty ring) had no waves to save. */
	if (was_active)
		saved = xkfd_saved_bytes(dqm, q);
out_unlock:
	xkfd_unlock_process(p, locked);
	xkfd_unuse(kq->a);
	if (terminal)
		xkfd_fail(kq, ret);
	if (ret)
		return ret;
	pr_debug("xsched: kfd: queue %u: gpu 0x%x queue %u suspended (save), %llu bytes saved\n",
		 xq->uid, kq->gpu_id, kq->queue_id, saved);
	xsched_queue_suspend_done(xq, seq, 0, saved);
	return 0;
}

static int xkfd_op_resume(struct xsched_queue *xq)
{
	struct xkfd_queue *kq = xq->priv;
	struct device_queue_manager *dqm;
	bool terminal = false;
	struct kfd_process *p;
	struct queue *q;
	int ret = 0, locked;

	if (!kq->suspended)
		return 0;
	if (kq->failed)
		return -EIO;
	p = xkfd_use(kq->a);
	if (!p) {
		/* KFD destroys the queue with its process: nothing to remap. */
		kq->suspended = false;
		xkfd_fail(kq, -ESRCH);
		return 0;
	}
	dqm = kq->pdd->dev->dqm;
	locked = xkfd_lock_process(p);
	if (!locked) {
		xkfd_unuse(kq->a);
		return -EAGAIN;
	}
	q = xkfd_lookup(kq, 0);
	if (!q) {
		kq->suspended = false;
		ret = -ENODEV;
		terminal = true;
		goto out_unlock;
	}
	/* Resumed meanwhile: a debugger detaching resumes every queue. */
	if (!q->properties.is_suspended) {
		kq->suspended = false;
		goto out_unlock;
	}
	ret = xkfd_usable(kq, p);
	if (ret == -ESRCH || ret == -EIO) {
		/* KFD tears the queue down or has reset it: no preemption. */
		xkfd_set_suspended(dqm, q, false);
		kq->suspended = false;
		terminal = ret == -EIO;
		ret = terminal ? ret : 0;
		goto out_unlock;
	}
	if (ret)
		goto out_unlock;	/* stays suspended */
	xkfd_set_suspended(dqm, q, false);
	kq->suspended = false;
	ret = dqm->ops.update_queue(dqm, q, NULL);
	if (ret) {
		pr_warn("xsched: kfd: queue %u: gpu 0x%x queue %u: remapping failed (%d), queue failed\n",
			xq->uid, kq->gpu_id, kq->queue_id, ret);
		ret = xkfd_hw_error(ret);
		terminal = true;
	}
out_unlock:
	xkfd_unlock_process(p, locked);
	xkfd_unuse(kq->a);
	if (terminal)
		xkfd_fail(kq, ret);
	return ret;
}

/*
 * The registration is going away: nothing may stay suspended.  Where KFD
 * must not be asked to preempt (failed queue, device reset, owner exiting)
 * only the flag is cleared: the queue stays unmapped until KFD itself next
 * maps it (restore after eviction or reset) or destroys it.
 */
static void xkfd_release_resume(struct xkfd_queue *kq)
{
	struct device_queue_manager *dqm;
	struct kfd_process *p;
	struct queue *q;
	int ret;

	p = xkfd_use(kq->a);
	if (!p)
		goto out;	/* KFD destroys the queue with its process */
	dqm = kq->pdd->dev->dqm;
	mutex_lock(&p->mutex);
	q = xkfd_lookup(kq, 0);
	if (!q || !q->properties.is_suspended)
		goto out_unlock;
	ret = xkfd_usable(kq, p);
	/* A debugger took over; it resumes every queue when it detaches. */
	if (ret == -EBUSY)
		goto out_unlock;
	xkfd_set_suspended(dqm, q, false);
	if (ret || kq->failed)
		goto out_unlock;
	ret = dqm->ops.update_queue(dqm, q, NULL);
	if (ret)
		pr_warn("xsched: kfd: gpu 0x%x queue %u: remapping on release failed (%d)\n",
			kq->gpu_id, kq->queue_id, ret);
out_unlock:
	mutex_unlock(&p->mutex);
	xkfd_unuse(kq->a);
out:
	kq->suspended = false;
}

static void xkfd_op_release(struct xsched_queue *xq)
{
	struct xkfd_queue *kq = xq->priv;

	if (kq->suspended)
		xkfd_release_resume(kq);
	mutex_lock(&xkfd_queues_lock);
	list_del(&kq->node);
	mutex_unlock(&xkfd_queues_lock);
	xkfd_attach_put(kq->a);
	kfree(kq);
	xsched_obj_dec(XSCHED_OBJ_KFD_QUEUE);
}

/*
 * Read a 64-bit dispatch id of the owner's memory without faulting: a page
 * that is not present now (swapped out, or a file mapping on a slow file
 * system) is not waited for.  The owner reads its own memory; the
 * arbiter's worker borrows the attached mm; other readers (debugfs) get
 * nothing.
 */
static bool xkfd_read_nofault(struct xkfd_attach *a, void __user *ptr, u64 *v)
{
	bool ok;

	if (!ptr)
		return false;
	if (current->mm == a->mm)
		return !copy_from_user_nofault(v, ptr, sizeof(*v));
	if (!(current->flags & PF_KTHREAD) || current->mm ||
	    !mmget_not_zero(a->mm))
		return false;
	kthread_use_mm(a->mm);
	ok = !copy_from_user_nofault(v, ptr, sizeof(*v));
	kthread_unuse_mm(a->mm);
	/* Maybe the last user: its exit_mmap() is not for the arbiter. */
	mmput_async(a->mm);
	return ok;
}

/* The queue's dqm lock if free: progress never waits for a preemption. */
static bool xkfd_dqm_trylock(struct device_queue_manager *dqm)
{
	if (!mutex_trylock(&dqm->lock_hidden))
		return false;
	dqm->saved_flags = memalloc_noreclaim_save();
	return true;
}

/*
 * Read pointers that cannot be read now keep their last values.  A queue
 * KFD reset, or destroyed (its id perhaps reused by a new queue), is
 * reported here, without touching the device, and reads as idle: its
 * pointers are no longer its own.
 */
static void xkfd_op_progress(struct xsched_queue *xq, struct xsched_progress *pr)
{
	struct xkfd_queue *kq = xq->priv;
	struct device_queue_manager *dqm;
	int gone = 0;
	u64 v;

	if (!xkfd_use(kq->a)) {
		gone = -ESRCH;		/* its owner's mm is gone */
	} else {
		dqm = kq->pdd->dev->dqm;
		if (xkfd_device_broken(kq->pdd, kq->reset_count)) {
			gone = -EIO;
		} else if (xkfd_dqm_trylock(dqm)) {
			if (!xkfd_same(kq, xkfd_find(kq->pdd, kq->queue_id, 0)))
				gone = -ENODEV;
			dqm_unlock(dqm);
		}
		xkfd_unuse(kq->a);
	}
	if (gone) {
		xsched_queue_failed(xq, gone);
		WRITE_ONCE(kq->last_rptr, 0);
		WRITE_ONCE(kq->last_wptr, 0);
	} else {
		if (xkfd_read_nofault(kq->a, kq->rptr, &v))
			WRITE_ONCE(kq->last_rptr, v);
		if (xkfd_read_nofault(kq->a, kq->wptr, &v))
			WRITE_ONCE(kq->last_wptr, v);
	}
	pr->rptr = READ_ONCE(kq->last_rptr);
	pr->wptr = READ_ONCE(kq->last_wptr);
	pr->save_area_size = kq->save_area_size;
	pr->gpu_id = kq->gpu_id;
	pr->hw_queue_id = kq->queue_id;
}

static const struct xsched_backend_ops xkfd_ops = {
	.name = "kfd",
	.owner = THIS_MODULE,
	.modes = BIT(XSCHED_MODE_SAVE),
	.polled = true,		/* the GPU writes rptr; nothing tells us */
	.suspend = xkfd_op_suspend,
	.resume = xkfd_op_resume,
	.progress = xkfd_op_progress,
	.release = xkfd_op_release,
	XKFD_BATCH_OPS
};

/* Find the queue at @ring and fill in @kq; p->mutex held. */
static int xkfd_bind(struct xkfd_queue *kq, struct kfd_process *p, u64 ring)
{
	struct kfd_process_device *pdd;
	struct device_queue_manager *dqm;
	struct queue *q = NULL, *it;
	u32 i;

	if (xkfd_debugged(p))
		return -EBUSY;
	if (!READ_ONCE(p->mm))
		return -ESRCH;
	for (i = 0; i < p->n_pdds && !q; i++) {
		pdd = p->pdds[i];
		dqm = pdd->dev->dqm;
		dqm_lock(dqm);
		list_for_each_entry(it, &pdd->qpd.queues_list, list) {
			if (it->properties.queue_address == ring &&
			    !it->properties.is_being_destroyed) {
				q = it;
				break;
			}
		}
		dqm_unlock(dqm);
	}
	if (!q)
		return -ENOENT;
	if (!xkfd_size_ok(q, sizeof(*q)) || q->process != p || q->device != pdd->dev) {
		pr_err_ratelimited("xsched: kfd: the running amdgpu's struct queue does not match the layout this module was built with; %s\n",
				   XKFD_REBUILD);
		return -ENOEXEC;
	}
	/* Compute AQL queues only; CWSR is what makes SAVE possible. */
	if (q->properties.type != KFD_QUEUE_TYPE_COMPUTE ||
	    q->properties.format != KFD_QUEUE_FORMAT_AQL)
		return -EOPNOTSUPP;
	if (!pdd->dev->kfd->cwsr_enabled ||
	    !q->properties.ctx_save_restore_area_address)
		return -EOPNOTSUPP;
	/* Without HWS or MES a remap must run in the owner's thread. */
	if (dqm->sched_policy == KFD_SCHED_POLICY_NO_HWS)
		return -EOPNOTSUPP;
	if (q->properties.is_suspended)
		return -EBUSY;
	kq->reset_count = xkfd_reset_count(pdd);
	if (xkfd_device_broken(pdd, kq->reset_count))
		return -EIO;

	kq->pdd = pdd;
	kq->kfd_q = q;
	kq->mqd_obj = q->mqd_mem_obj;
	kq->ring = ring;
	kq->queue_id = q->properties.queue_id;
	kq->gpu_id = pdd->user_gpu_id;
	kq->rptr = q->properties.read_ptr;
	kq->wptr = q->properties.write_ptr;
	kq->save_area_size = (u64)q->properties.ctx_save_restore_area_size *
			     NUM_XCC(pdd->dev->xcc_mask);
	return 0;
}

/*
 * Claim the KFD queue for @kq; -EEXIST if another registration has it.  A
 * registration of an earlier queue with the same (gpu, queue id), which
 * its owner destroyed, does not count: its next operation fails it.
 */
static int xkfd_claim(struct xkfd_queue *kq)
{
	struct xkfd_queue *other;
	int ret = 0;

	mutex_lock(&xkfd_queues_lock);
	list_for_each_entry(other, &xkfd_queues, node) {
		/*
		 * A registration whose owner is gone holds nothing.  Else its
		 * process is alive (its file is held), so equal pointers are
		 * one process, never a freed one's address reused.
		 */
		if (!refcount_read(&other->a->live))
			continue;
		if (other->a->p == kq->a->p && other->gpu_id == kq->gpu_id &&
		    other->queue_id == kq->queue_id &&
		    other->kfd_q == kq->kfd_q && other->mqd_obj == kq->mqd_obj) {
			ret = -EEXIST;
			break;
		}
	}
	if (!ret)
		list_add_tail(&kq->node, &xkfd_queues);
	mutex_unlock(&xkfd_queues_lock);
	return ret;
}

struct xsched_queue *xkfd_register(struct xkfd_attach *a, u64 ring,
				   s32 priority)
{
	struct xsched_queue *xq;
	struct xkfd_queue *kq;
	struct kfd_process *p;
	int ret;

	/*
	 * Only the attached process registers its queues (not a fork child,
	 * nor the program it exec()ed): its mm is in use, so is its process.
	 */
	if (current->mm != a->mm)
		return ERR_PTR(-EPERM);
	if (!ring)
		return ERR_PTR(-ENOENT);
	p = xkfd_use(a);
	if (WARN_ON_ONCE(!p))
		return ERR_PTR(-ESRCH);
	kq = kzalloc(sizeof(*kq), GFP_KERNEL_ACCOUNT);
	if (!kq) {
		xkfd_unuse(a);
		return ERR_PTR(-ENOMEM);
	}
	xsched_obj_inc(XSCHED_OBJ_KFD_QUEUE);
	kref_get(&a->ref);
	kq->a = a;

	mutex_lock(&p->mutex);
	ret = xkfd_bind(kq, p, ring);
	mutex_unlock(&p->mutex);
	if (ret)
		goto err_put;
	ret = xkfd_claim(kq);
	if (ret)
		goto err_put;

	xq = xsched_queue_create(XSCHED_BACKEND_KFD, &xkfd_ops, kq,
				 kq->pdd->dev, priority);
	if (IS_ERR(xq)) {
		ret = PTR_ERR(xq);
		goto err_unclaim;
	}
	kq->xq = xq;
	pr_debug("xsched: kfd: queue %u: gpu 0x%x queue %u ring 0x%llx, %s, save area %llu bytes\n",
		 xq->uid, kq->gpu_id, kq->queue_id, ring,
		 kq->pdd->dev->kfd->shared_resources.enable_mes ? "mes" : "hws",
		 kq->save_area_size);
	xkfd_unuse(a);
	return xq;

err_unclaim:
	mutex_lock(&xkfd_queues_lock);
	list_del(&kq->node);
	mutex_unlock(&xkfd_queues_lock);
err_put:
	xkfd_unuse(a);
	xkfd_attach_put(a);
	kfree(kq);
	xsched_obj_dec(XSCHED_OBJ_KFD_QUEUE);
	return ERR_PTR(ret);
}

