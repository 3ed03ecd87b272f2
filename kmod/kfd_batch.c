// SPDX-License-Identifier: GPL-2.0
/*
 * The kfd backend: batches, the arbiter's suspends and resumes of one pass
 * as one preemption of each device.
 *
 * On HWS every update_queue() is a preemption of every queue of the device
 * and a new runlist.  The arbiter's suspends and resumes of one pass are
 * applied together: dqm->ops.halt() unmaps the device once; while it is
 * halted, update_queue() finds nothing mapped and maps nothing, so each
 * queue costs only its MQD update; dqm->ops.unhalt() maps the new runlist
 * once.  N queues cost one preemption instead of N.  MES removes and adds
 * single queues, so there is nothing to gain there.
 *
 * amdgpu's shader isolation (enforce_isolation) halts KFD's scheduler too,
 * under adev->gfx.kfd_sch_mutex (userq_sch_mutex from 7.x: kfd_backend.h,
 * xkfd_sch_mutex()).  A GPU with isolation on in any partition
 * is never batched (its resets and jobs take that mutex); elsewhere a batch
 * holds the mutex from halt to unhalt, so that isolation turned on meanwhile
 * waits instead of halting a halted device.  While a device is halted every
 * queue on it waits, so the batch never sleeps on a process: it only
 * trylocks their mutexes (a busy one is retried on the next pass).
 */
#include <linux/slab.h>

#include "kfd_backend.h"

#ifdef XKFD_BATCH	/* kfd_backend.h: where dqm->ops.halt() can be used */
#define XKFD_BATCH_MAX	8	/* devices (partitions) halted in one batch */

struct xkfd_batch_dev {
	struct device_queue_manager *dqm;
	struct xkfd_attach *pin;	/* in use: keeps amdgpu and the dqm */
	unsigned int n;			/* queues of the pass that will act */
	bool halted;
	int halt_ret;
};

#define XKFD_BATCH_PROCS	16	/* process mutexes held by one batch */

struct xkfd_batch {
	unsigned int ndev, nadev, nprocs;
	struct xkfd_batch_dev dev[XKFD_BATCH_MAX];
	struct amdgpu_device *adev[XKFD_BATCH_MAX];	/* kfd_sch_mutex held */
	/* Taken (tried) before any halt, held until batch_end. */
	struct kfd_process *procs[XKFD_BATCH_PROCS];
	/* In use and referenced (the queue may close meanwhile), for procs. */
	struct xkfd_attach *users[XKFD_BATCH_PROCS];
};

/* The thread inside a batch (the arbiter's), compared only. */
static struct task_struct *xkfd_batch_task;
static struct xkfd_batch *xkfd_batch_cur;	/* that thread's batch */

static bool xkfd_in_batch(void)
{
	return READ_ONCE(xkfd_batch_task) == current;
}

/* Does the batch under way hold @p's mutex? */
static bool xkfd_batch_holds(struct kfd_process *p)
{
	struct xkfd_batch *b = xkfd_in_batch() ? xkfd_batch_cur : NULL;
	unsigned int i;

	for (i = 0; b && i < b->nprocs; i++)
		if (b->procs[i] == p)
			return true;
	return false;
}

/*
 * Try the process mutex of @a's process for the batch; false if the owner
 * is gone, the mutex is busy or too many are held.  The process stays in
 * use (xkfd_use) until batch_end.
 */
static bool xkfd_batch_hold(struct xkfd_batch *b, struct xkfd_attach *a)
{
	struct kfd_process *p;
	unsigned int i;

	for (i = 0; i < b->nprocs; i++)
		if (b->users[i] == a)
			return true;
	if (b->nprocs == XKFD_BATCH_PROCS)
		return false;
	p = xkfd_use(a);
	if (!p)
		return false;
	/* Another client attached to the same process: its mutex is held. */
	for (i = 0; i < b->nprocs; i++)
		if (b->procs[i] == p)
			break;
	if (i == b->nprocs && !mutex_trylock(&p->mutex)) {
		xkfd_unuse(a);
		return false;
	}
	b->procs[b->nprocs] = i == b->nprocs ? p : NULL;
	/* The caller holds the queue's lock: its kq->a reference stands. */
	kref_get(&a->ref);
	b->users[b->nprocs++] = a;
	return true;
}

/* Does shader isolation stop KFD on any partition of @adev? */
static bool xkfd_isolation_on(struct amdgpu_device *adev)
{
#ifdef XKFD_HAVE_ENFORCE_ISOLATION
	unsigned int i;

	for (i = 0; i < MAX_XCP; i++)
		if (READ_ONCE(adev->enforce_isolation[i]))
			return true;
#endif
	return false;
}

/* May the batch halt @dqm?  Its GPU's kfd_sch_mutex is held. */
static bool xkfd_may_halt(struct device_queue_manager *dqm)
{
	struct kfd_node *node = dqm->dev;
	bool ok;

#ifdef XKFD_HAVE_SCH_MUTEX
	if (node->node_id >= MAX_XCP ||
	    xkfd_sch_inactive(node->adev, node->node_id))
		return false;		/* shader isolation has it stopped */
#endif
	if (xkfd_in_reset_node(node))
		return false;
	dqm_lock(dqm);
	ok = dqm->sched_running && !dqm->sched_halt && !dqm->is_hws_hang;
	dqm_unlock(dqm);
	return ok;
}

/* Count @kq, which the pass will suspend or resume, on its device. */
static void xkfd_batch_count(struct xkfd_batch *b, struct xkfd_queue *kq)
{
	struct device_queue_manager *dqm = kq->pdd->dev->dqm;
	struct xkfd_batch_dev *d;
	unsigned int i;

	for (i = 0; i < b->ndev; i++) {
		if (b->dev[i].dqm == dqm) {
			b->dev[i].n++;
			return;
		}
	}
	if (b->ndev == XKFD_BATCH_MAX || !dqm->ops.halt || !dqm->ops.unhalt ||
	    dqm->dev->kfd->shared_resources.enable_mes)
		return;
	d = &b->dev[b->ndev++];
	/*
	 * batch_hold() put it in use and referenced it (users[], put after
	 * the devices): one more use, for the device.
	 */
	refcount_inc(&kq->a->live);
	d->pin = kq->a;
	d->dqm = dqm;
	d->n = 1;
}

/* Halt the devices of @adev in the batch; false if none was. */
static bool xkfd_batch_halt(struct xkfd_batch *b, struct amdgpu_device *adev)
{
	bool any = false;
	unsigned int i;

	if (xkfd_isolation_on(adev))
		return false;
#ifdef XKFD_HAVE_SCH_MUTEX
	/* Tried only: process mutexes are held already. */
	if (!mutex_trylock(xkfd_sch_mutex(adev)))
		return false;
#endif
	for (i = 0; i < b->ndev; i++) {
		struct xkfd_batch_dev *d = &b->dev[i];

		if (d->dqm->dev->adev != adev || d->n < 2 ||
		    !xkfd_may_halt(d->dqm))
			continue;
		/* sched_halt is set even if the preemption failed. */
		d->halt_ret = d->dqm->ops.halt(d->dqm);
		d->halted = true;
		any = true;
		if (d->halt_ret)
			pr_warn("xsched: kfd: batch preemption of a device failed (%d)\n",
				d->halt_ret);
	}
#ifdef XKFD_HAVE_SCH_MUTEX
	if (!any)
		mutex_unlock(xkfd_sch_mutex(adev));
#endif
	return any;
}

void *xkfd_op_batch_begin(struct xsched_queue *const *qs, unsigned int n)
{
	struct xkfd_batch *b;
	struct xkfd_queue *kq;
	unsigned int i, j;

	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return NULL;
	/*
	 * Every lock first, and only tried: which devices have two queues or
	 * more whose queue mutex and process mutex could be had, and that
	 * will act.  The process mutexes stay held to batch_end, so that no
	 * halted device waits for a runtime that holds one (every pass would
	 * otherwise be halt, EAGAIN, unhalt).  A queue may be closed
	 * meanwhile: it is read under its lock, while not released.
	 */
	for (i = 0; i < n; i++) {
		if (!mutex_trylock(&qs[i]->lock))
			continue;
		kq = qs[i]->priv;
		if (!qs[i]->released && !kq->failed &&
		    xkfd_batch_hold(b, kq->a) && !xkfd_usable(kq, kq->a->p))
			xkfd_batch_count(b, kq);
		mutex_unlock(&qs[i]->lock);
	}
	for (i = 0; i < b->ndev; i++) {
		struct amdgpu_device *adev = b->dev[i].dqm->dev->adev;

		if (b->dev[i].n < 2)
			continue;
		for (j = 0; j < b->nadev && b->adev[j] != adev; j++)
			;
		if (j == b->nadev && xkfd_batch_halt(b, adev))
			b->adev[b->nadev++] = adev;
	}
	xkfd_batch_cur = b;
	WRITE_ONCE(xkfd_batch_task, current);
	return b;
}

/*
 * Map the device again.  A stop in between (GPU reset, system suspend)
 * makes unhalt() return without clearing sched_halt, and the device would
 * never map KFD queues again: clear it then; start maps the runlist.
 */
static void xkfd_unhalt(struct device_queue_manager *dqm)
{
	int ret;

	for (;;) {
		dqm_lock(dqm);
		if (!dqm->sched_halt) {
			dqm_unlock(dqm);
			return;
		}
		if (!dqm->sched_running) {
			dqm->sched_halt = false;
			dqm_unlock(dqm);
			return;
		}
		dqm_unlock(dqm);
		ret = dqm->ops.unhalt(dqm);
		if (ret)
			pr_warn("xsched: kfd: batch remap of a device failed (%d)\n",
				ret);
	}
}

void xkfd_op_batch_end(void *batch)
{
	struct xkfd_batch *b = batch;
	unsigned int i;

	WRITE_ONCE(xkfd_batch_task, NULL);
	xkfd_batch_cur = NULL;
	if (!b)
		return;
	for (i = 0; i < b->ndev; i++) {
		struct xkfd_batch_dev *d = &b->dev[i];

		if (d->halted && d->halt_ret) {
			/*
			 * The preemption failed: KFD resets the device, whose
			 * start maps the runlist.  unhalt() would only send the
			 * unmap again and wait out a second timeout.
			 */
			dqm_lock(d->dqm);
			d->dqm->sched_halt = false;
			dqm_unlock(d->dqm);
		} else if (d->halted) {
			xkfd_unhalt(d->dqm);
		}
		xkfd_unuse(d->pin);
	}
#ifdef XKFD_HAVE_SCH_MUTEX
	for (i = b->nadev; i-- > 0;)
		mutex_unlock(xkfd_sch_mutex(b->adev[i]));
#endif
	for (i = b->nprocs; i-- > 0;) {
		if (b->procs[i])
			mutex_unlock(&b->procs[i]->mutex);
		xkfd_unuse(b->users[i]);
		xkfd_attach_put(b->users[i]);
	}
	kfree(b);
}
#else
static bool xkfd_in_batch(void)
{
	return false;
}

static bool xkfd_batch_holds(struct kfd_process *p)
{
	return false;
}
#endif

/*
 * The process mutex, for a suspend or resume: 0 busy, 1 taken, 2 held by
 * the batch already.  Inside a batch a device may be halted for every
 * process: never sleep there on one process (it may hold its mutex for
 * long); the arbiter tries again on a later pass.
 */
int xkfd_lock_process(struct kfd_process *p)
{
	if (xkfd_batch_holds(p))
		return 2;
	if (xkfd_in_batch())
		return mutex_trylock(&p->mutex);
	mutex_lock(&p->mutex);
	return 1;
}

void xkfd_unlock_process(struct kfd_process *p, int how)
{
	if (how == 1)
		mutex_unlock(&p->mutex);
}

