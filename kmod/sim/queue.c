// SPDX-License-Identifier: GPL-2.0
/*
 * Sim queues: created in a sim fd (XSCHED_IOC_SIM_QUEUE_CREATE), fed by
 * SUBMIT (the doorbell), waited on by WAIT, destroyed by their owner or with
 * their sim fd; a registration keeps its queue alive after either (the
 * queue's kref).  Ring sizes, packets and every argument are checked here.
 *
 * Ring addresses: a queue may be created with the user address of the ring it
 * stands for (as KFD knows each queue's ring base).  Such a queue is in
 * xsim.rings, a hash table keyed by (mm, ring address), while it is in its
 * sim fd.  Registration by ring (XSCHED_REGISTER_BY_RING) looks it up under
 * RCU alone, takes a reference with kref_get_unless_zero() (queues are freed
 * after a grace period) and binds it under its vm's lock as registration by
 * id does.  Any user can loop on that lookup (ENOENT costs one bucket), so it
 * takes neither xsim.lock, which every CU, SUBMIT and WAIT needs, nor any
 * lock at all; xsim.rings_lock serialises only the writers (create, destroy,
 * close), and makes the EEXIST check and the insertion one step.
 */
#include <linux/hashtable.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "sim.h"

static u64 xsim_ring_key(struct mm_struct *mm, u64 ring)
{
	return ring ^ (u64)(uintptr_t)mm;
}

/*
 * The bucket of xsim.rings that @ring of @mm falls in, for the tests that
 * put rings in one bucket (debugfs ring_bucket): the key mixes in the mm
 * pointer, which user space cannot compute.
 */
u32 xsim_ring_bucket(struct mm_struct *mm, u64 ring)
{
	return hash_min(xsim_ring_key(mm, ring), HASH_BITS(xsim.rings));
}

/*
 * The queue of address space @mm created with ring address @ring that is
 * still in its sim fd; under RCU or xsim.rings_lock.  A queue found under
 * RCU may be on its way out: take it with kref_get_unless_zero().
 */
struct xsim_queue *xsim_find_ring(struct mm_struct *mm, u64 ring)
{
	struct xsim_queue *q;

	hash_for_each_possible_rcu(xsim.rings, q, ring_node,
				   xsim_ring_key(mm, ring),
				   lockdep_is_held(&xsim.rings_lock))
		if (q->ring_addr == ring && q->mm == mm)
			return q;
	return NULL;
}

/* Its sim fd let go of @q (closed, or QUEUE_DESTROY): its ring is free. */
static void xsim_ring_remove(struct xsim_queue *q)
{
	if (!q->ring_addr)
		return;
	spin_lock(&xsim.rings_lock);
	hash_del_rcu(&q->ring_node);
	spin_unlock(&xsim.rings_lock);
}

/* The sim fd is closed: drop its queues; registered ones live on. */
void xsim_vm_put(struct xsim_vm *vm)
{
	struct xsim_queue *q;
	int i;

	mutex_lock(&vm->lock);
	for (i = 0; i < XSCHED_SIM_QUEUES; i++) {
		q = vm->queues[i];
		vm->queues[i] = NULL;
		if (!q)
			continue;
		xsim_ring_remove(q);
		kref_put(&q->ref, xsim_queue_release);
	}
	mutex_unlock(&vm->lock);
	kref_put(&vm->ref, xsim_vm_release);
}

int xsim_queue_create(struct xsim_vm *vm, struct xsched_sim_queue_create *c)
{
	struct xsim_queue *q;
	int i, ret;

	if (c->flags || c->reserved0 || c->reserved[0])
		return -EINVAL;
	if (c->ring_size < 2 || c->ring_size > XSCHED_SIM_RING_MAX ||
	    !is_power_of_2(c->ring_size))
		return -EINVAL;

	q = kzalloc(sizeof(*q), GFP_KERNEL_ACCOUNT);
	if (!q)
		return -ENOMEM;
	kref_init(&q->ref);
	init_waitqueue_head(&q->wq);
	INIT_DELAYED_WORK(&q->watchdog, xsim_watchdog);
	INIT_LIST_HEAD(&q->node);
	INIT_HLIST_NODE(&q->ring_node);
	INIT_LIST_HEAD(&q->run_node);
	INIT_LIST_HEAD(&q->grace_node);
	q->ring_size = c->ring_size;
	q->ring = kvcalloc(c->ring_size, sizeof(*q->ring), GFP_KERNEL_ACCOUNT);
	/* Every slot of the GPU may hold one of this queue's waves. */
	q->save_cap = xsim.ncu * xsim.nwaves;
	q->save_area = __vmalloc(array_size(q->save_cap, sizeof(*q->save_area)),
				 GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	ret = -ENOMEM;
	if (!q->ring || !q->save_area)
		goto err_free;

	mutex_lock(&vm->lock);
	for (i = 0; i < XSCHED_SIM_QUEUES; i++)
		if (!vm->queues[i])
			break;
	if (i == XSCHED_SIM_QUEUES) {
		mutex_unlock(&vm->lock);
		ret = -ENOSPC;
		goto err_free;
	}
	/* Uncharged when the queue is released (xsim_queue_release()). */
	ret = xsim_user_charge(vm->user, 1, 0);
	if (ret) {
		mutex_unlock(&vm->lock);
		goto err_free;
	}
	if (c->ring_addr) {
		q->ring_addr = c->ring_addr;
		q->mm = current->mm;
		mmgrab(q->mm);
	}
	q->id = i;
	q->vm = vm;
	if (q->ring_addr) {
		/* Checked and listed in one step: a ring names one queue. */
		spin_lock(&xsim.rings_lock);
		if (xsim_find_ring(q->mm, q->ring_addr)) {
			spin_unlock(&xsim.rings_lock);
			xsim_user_charge(vm->user, -1, 0);
			mutex_unlock(&vm->lock);
			ret = -EEXIST;
			goto err_free;
		}
		hash_add_rcu(xsim.rings, &q->ring_node,
			     xsim_ring_key(q->mm, q->ring_addr));
		spin_unlock(&xsim.rings_lock);
	}
	kref_get(&vm->ref);
	vm->queues[i] = q;
	spin_lock(&xsim.lock);
	list_add_tail(&q->node, &xsim.queues);
	spin_unlock(&xsim.lock);
	mutex_unlock(&vm->lock);

	xsched_obj_inc(XSCHED_OBJ_SIM_QUEUE);
	c->queue_id = i;
	c->save_area_size = (u64)q->save_cap * sizeof(*q->save_area);
	return 0;

err_free:
	if (q->mm)
		mmdrop(q->mm);
	vfree(q->save_area);
	kvfree(q->ring);
	kfree(q);
	return ret;
}

void xsim_queue_release(struct kref *ref)
{
	struct xsim_queue *q = container_of(ref, struct xsim_queue, ref);

	spin_lock(&xsim.lock);
	/* Nobody can reach the queue any more: take its waves off the CUs. */
	xsim_queue_evict(q);
	list_del(&q->node);
	list_del(&q->run_node);
	list_del(&q->grace_node);
	spin_unlock(&xsim.lock);
	/* Taken out of xsim.rings when its sim fd let go of it. */
	WARN_ON_ONCE(!hlist_unhashed(&q->ring_node));
	cancel_delayed_work_sync(&q->watchdog);
	xsim_user_charge(q->vm->user, -1, 0);
	kref_put(&q->vm->ref, xsim_vm_release);
	if (q->mm)
		mmdrop(q->mm);
	vfree(q->save_area);
	kvfree(q->ring);
	/* A BY_RING lookup under RCU may still be looking at it. */
	kfree_rcu(q, rcu);
	xsched_obj_dec(XSCHED_OBJ_SIM_QUEUE);
}

/*
 * The owner destroys queue @d->queue_id while it goes on, as with KFD's
 * AMDKFD_IOC_DESTROY_QUEUE: the slot (its id) is free for the next create
 * at once, and a registration keeps only the dead queue, failed with
 * ENODEV: what the kfd backend's queue identity check gives on hardware.
 */
int xsim_queue_destroy(struct xsim_vm *vm,
		       const struct xsched_sim_queue_destroy *d)
{
	struct xsim_queue *q;

	if (d->flags || d->reserved[0])
		return -EINVAL;
	if (d->queue_id >= XSCHED_SIM_QUEUES)
		return -ENOENT;
	mutex_lock(&vm->lock);
	q = vm->queues[d->queue_id];
	vm->queues[d->queue_id] = NULL;
	if (!q) {
		mutex_unlock(&vm->lock);
		return -ENOENT;
	}
	/*
	 * Id and ring address are freed in one step under vm->lock, which a
	 * create holds across its ring check: one that gets the id never
	 * finds the ring still taken (EEXIST).
	 */
	xsim_ring_remove(q);		/* its ring address is free too */
	spin_lock(&xsim.lock);
	xsim_queue_fail(q, -ENODEV);
	spin_unlock(&xsim.lock);
	mutex_unlock(&vm->lock);
	kref_put(&q->ref, xsim_queue_release);
	return 0;
}

static struct xsim_queue *xsim_queue_get(struct xsim_vm *vm, u64 id)
{
	struct xsim_queue *q = NULL;

	if (id >= XSCHED_SIM_QUEUES)
		return NULL;
	mutex_lock(&vm->lock);
	q = vm->queues[id];
	if (q)
		kref_get(&q->ref);
	mutex_unlock(&vm->lock);
	return q;
}

static int xsim_packet_check(const struct xsched_sim_packet *p)
{
	if ((p->kernel != XSCHED_SIM_KERNEL_ACCUMULATE &&
	     p->kernel != XSCHED_SIM_KERNEL_MARK) || p->flags ||
	    p->reserved[0] || p->reserved[1])
		return -EINVAL;
	if (!p->grid || p->grid > XSCHED_SIM_GRID_MAX)
		return -EINVAL;
	if (!p->steps || p->steps > XSCHED_SIM_STEPS_MAX)
		return -EINVAL;
	if (p->step_ns > XSCHED_SIM_STEP_NS_MAX)
		return -EINVAL;
	return 0;
}

int xsim_submit(struct xsim_vm *vm, struct xsched_sim_submit *s)
{
	struct xsched_sim_packet *pkts;
	struct xsim_queue *q;
	u32 i;
	int ret;

	if (s->flags || s->reserved0 || s->reserved[0] || s->reserved[1])
		return -EINVAL;
	if (!s->count || s->count > XSCHED_SIM_SUBMIT_MAX)
		return -EINVAL;
	q = xsim_queue_get(vm, s->queue_id);
	if (!q)
		return -ENOENT;

	pkts = memdup_array_user(u64_to_user_ptr(s->packets), s->count,
				 sizeof(*pkts));
	if (IS_ERR(pkts)) {
		ret = PTR_ERR(pkts);
		goto out_put;
	}
	for (i = 0; i < s->count; i++) {
		ret = xsim_packet_check(&pkts[i]);
		if (ret)
			goto out_free;
	}

	spin_lock(&xsim.lock);
	if (q->run == XSIM_FAILED) {
		ret = -EIO;
	} else if (q->wptr - q->rptr + s->count > q->ring_size) {
		ret = -EAGAIN;
	} else {
		for (i = 0; i < s->count; i++)
			q->ring[(q->wptr + i) & (q->ring_size - 1)] = pkts[i];
		q->wptr += s->count;
		s->seq = q->wptr;
		xsim_queue_requeue(q);
		/* The doorbell. */
		xsim_kick_all();
		if (q->xq)
			xsched_queue_wake(q->xq, q->rptr, q->wptr);
		ret = 0;
	}
	spin_unlock(&xsim.lock);
out_free:
	kfree(pkts);
out_put:
	kref_put(&q->ref, xsim_queue_release);
	return ret;
}

int xsim_wait(struct xsim_vm *vm, struct xsched_sim_wait *wt)
{
	struct xsim_queue *q;
	ktime_t timeout;
	u64 wptr;
	long ret;

	if (wt->flags || wt->reserved[0] || wt->reserved[1])
		return -EINVAL;
	q = xsim_queue_get(vm, wt->queue_id);
	if (!q)
		return -ENOENT;

	spin_lock(&xsim.lock);
	wptr = q->wptr;
	spin_unlock(&xsim.lock);
	if (wt->seq > wptr) {
		ret = -EINVAL;
		goto out;
	}

#define XSIM_WAIT_DONE (READ_ONCE(q->rptr) >= wt->seq || \
			READ_ONCE(q->run) == XSIM_FAILED)
	timeout = ns_to_ktime(min_t(u64, wt->timeout_ns, KTIME_MAX / 2));
	if (!wt->timeout_ns)
		ret = XSIM_WAIT_DONE ? 0 : -ETIME;
	else
		ret = wait_event_interruptible_hrtimeout(q->wq, XSIM_WAIT_DONE,
							 timeout);
#undef XSIM_WAIT_DONE
	if (ret == -ERESTARTSYS)
		ret = -EINTR;
	else if (ret == -ETIME)
		ret = -ETIMEDOUT;

	spin_lock(&xsim.lock);
	wt->completed = q->rptr;
	/* Work that completed before a failure still counts as done. */
	if (q->rptr < wt->seq && q->run == XSIM_FAILED)
		ret = -EIO;
	else if (q->rptr >= wt->seq)
		ret = 0;
	spin_unlock(&xsim.lock);
out:
	kref_put(&q->ref, xsim_queue_release);
	return ret;
}
