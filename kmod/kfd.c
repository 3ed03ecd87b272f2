// SPDX-License-Identifier: GPL-2.0
/*
 * The kfd backend: suspend and resume real amdgpu/KFD compute queues.
 *
 * amdgpu exports no symbols, so this file is built against KFD's private
 * headers from the amdgpu source that matches the running amdgpu.ko
 * (KFD_SRC, see Kbuild) and reaches KFD only through data it is handed:
 *
 *   attach    The caller passes its own /dev/kfd fd.  The file must be the
 *             character device amdgpu registered as "kfd"; its private_data
 *             is the caller's struct kfd_process.  Before that pointer is
 *             used, the structures are checked against the layout this
 *             module was compiled with (sizes of the allocations, pointers
 *             that must point back into the process or into amdgpu), then
 *             the process must be the caller's (same mm, same leader).
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
 * Lifetimes: the attachment holds a reference on the caller's /dev/kfd
 * file while the caller's mm lives.  KFD frees a kfd_process, and first
 * destroys its queues and unpins its memory, only when its last file is
 * closed and its mm is gone; the open file also pins amdgpu.ko.  A client
 * fd can outlive its owner (inherited without O_CLOEXEC, passed, kept
 * across exec), so the attachment lets go of the file when the owner's mm
 * goes: an mmu notifier's release drops the base of a->live, and every
 * operation that reads the process holds a->live too, so the file is put
 * by whichever of them is last.  After that a->p is never read again and
 * the attachment's queues fail with ESRCH.
 *
 * struct queue is not pinned: its owner can destroy it at any time with
 * AMDKFD_IOC_DESTROY_QUEUE, which needs the process mutex.  So a queue is
 * never kept by pointer; every operation looks it up again by queue id and
 * ring base with the process mutex held, and keeps the mutex until it is
 * done with the queue.
 *
 * Lock order: xsched_queue.lock -> kfd_process.mutex -> dqm lock (taken
 * inside update_queue, or briefly here) -> xkfd_queues_lock is never held
 * with any of them.  A batch only tries its locks (process mutexes, then
 * amdgpu's kfd_sch_mutex), before it halts anything.
 *
 * Failures: a preemption that KFD cannot complete makes KFD reset the
 * device.  Such a queue is marked failed and this module never calls
 * update_queue() for it again, so it cannot trigger a second reset.
 */
#include <linux/capability.h>
#include <linux/cdev.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/refcount.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "xsched.h"

#include "kfd_priv.h"
#include "kfd_device_queue_manager.h"
#include "kfd_mqd_manager.h"
#include "amdgpu.h"
#include "amdgpu_reset.h"
#include "v9_structs.h"

#include ".kfd-conftest.h"

/* amdgpu.h sets its own prefix; our lines carry "xsched: kfd:". */
#undef pr_fmt
#define pr_fmt(fmt) fmt

#ifndef XKFD_HAVE_KFD_NODE
#error "KFD_SRC is older than Linux 6.5 / ROCm 6.0 (no struct kfd_node); not supported"
#endif
#ifndef XKFD_HAVE_UPDATE_QUEUE_MINFO
#error "KFD_SRC: dqm->ops.update_queue has an unknown signature; not supported"
#endif

#define XKFD_REBUILD \
	"rebuild against the matching amdgpu source (see Documentation/kfd-backend.rst)"

/* Test knob: make the layout check fail, to exercise its error path. */
static bool kfd_fake_layout_mismatch;
module_param(kfd_fake_layout_mismatch, bool, 0600);
MODULE_PARM_DESC(kfd_fake_layout_mismatch,
		 "Testing only: treat every KFD process as a layout mismatch");

/* A client's hold on its KFD process. */
struct xkfd_attach {
	struct kref ref;		/* the client and each registered queue */
	/*
	 * Holds the file: 1 while the owner's mm lives, +1 per operation
	 * reading p.  Zero once the mm is gone and no operation reads p.
	 */
	refcount_t live;
	atomic_t mm_gone;		/* xkfd_mm_release() dropped the base */
	struct file *file;		/* the caller's /dev/kfd: keeps p alive */
	struct kfd_process *p;		/* only under a->live */
	struct mm_struct *mm;		/* mmgrab()bed; compared only */
	struct mmu_notifier mn;		/* on mm: its release lets go of p */
};

/* One registered KFD queue. */
struct xkfd_queue {
	struct xkfd_attach *a;		/* holds a reference */
	struct kfd_process_device *pdd;
	struct xsched_queue *xq;
	struct list_head node;		/* xkfd_queues, under xkfd_queues_lock */
	u64 ring;
	u32 queue_id;
	u32 gpu_id;
	/*
	 * Which KFD queue this is: KFD hands out the lowest free id, so an id
	 * alone may name a queue the owner created after destroying ours.
	 * Compared only, never followed.
	 */
	const struct queue *kfd_q;
	const struct kfd_mem_obj *mqd_obj;
	int reset_count;		/* the device's reset counter at bind */
	void __user *rptr;		/* AQL read/write dispatch ids */
	void __user *wptr;
	u64 last_rptr, last_wptr;	/* as last read (READ_ONCE) */
	u64 save_area_size;
	/* Under xq->lock, which the core holds around every op: */
	bool suspended;			/* is_suspended was set by us and applied */
	bool failed;			/* never call update_queue() again */
};

/* Every registered KFD queue, so that one queue is registered only once. */
static LIST_HEAD(xkfd_queues);
static DEFINE_MUTEX(xkfd_queues_lock);

bool xkfd_available(void)
{
	return true;
}

/* ---- attach ---- */

/*
 * Is @file the character device amdgpu registered as "kfd"?  Only the
 * struct file is read until the owner module is known to be amdgpu; the
 * open file pins that module, and with it the cdev its inode points to.
 */
static bool xkfd_is_kfd_file(struct file *file)
{
	const struct file_operations *fops = file->f_op;
	struct inode *inode = file_inode(file);
	struct cdev *cdev;
	const char *name;

	if (!S_ISCHR(inode->i_mode) || !fops || !fops->owner)
		return false;
	if (strcmp(module_name(fops->owner), "amdgpu"))
		return false;
	/* amdgpu's character devices: DRM nodes (cdev "drm") and "kfd". */
	cdev = READ_ONCE(inode->i_cdev);
	if (!cdev || cdev->ops != fops || cdev->owner != fops->owner)
		return false;
	name = kobject_name(&cdev->kobj);
	return name && !strcmp(name, "kfd") && file->private_data;
}

/* Does a kmalloc()ed object have the size of the struct we know? */
static bool xkfd_size_ok(const void *obj, size_t size)
{
	size_t have = ksize(obj);

	/* KFENCE objects report the requested size, slab ones the bucket. */
	return have == size || have == kmalloc_size_roundup(size);
}

static bool xkfd_pdd_ok(struct kfd_process *p, struct kfd_process_device *pdd)
{
	if (!pdd || !xkfd_size_ok(pdd, sizeof(*pdd)))
		return false;
	if (pdd->process != p || pdd->qpd.pqm != &p->pqm || !pdd->dev)
		return false;
	return pdd->qpd.dqm && pdd->qpd.dqm == pdd->dev->dqm;
}

/*
 * Does @p look like a struct kfd_process as this module was compiled?  Only
 * fields whose offsets are being checked are read, and pointers are
 * followed only after the structure holding them passed.
 */
static bool xkfd_layout_ok(struct kfd_process *p, struct module *amdgpu)
{
	void *mm = READ_ONCE(p->mm);
	u32 i, n;

	if (kfd_fake_layout_mismatch)
		return false;
	if (!xkfd_size_ok(p, sizeof(*p)))
		return false;
	/* KFD's mmu notifier is embedded in the process. */
	if (!within_module((unsigned long)p->mmu_notifier.ops, amdgpu))
		return false;
	if (mm && p->mmu_notifier.mm != mm)
		return false;
	n = READ_ONCE(p->n_pdds);
	if (n > MAX_GPU_INSTANCE)
		return false;
	for (i = 0; i < n; i++)
		if (!xkfd_pdd_ok(p, p->pdds[i]))
			return false;
	return true;
}

/*
 * The KFD process, for one operation, or NULL once its owner's mm is gone.
 * Paired with xkfd_unuse().
 */
static struct kfd_process *xkfd_use(struct xkfd_attach *a)
{
	return refcount_inc_not_zero(&a->live) ? a->p : NULL;
}

static void xkfd_unuse(struct xkfd_attach *a)
{
	if (refcount_dec_and_test(&a->live)) {
		pr_debug("xsched: kfd: an attachment let go of its KFD process\n");
		fput(a->file);
	}
}

/*
 * The owner's mm is going (exit, or exec): KFD tears its process down once
 * the last file of it is closed; ours must not be that file.  Called by
 * exit_mmap() or by mmu_notifier_unregister(), and by both when they race
 * (unregister tests the hlist before exit_mmap unhashes it): once only.
 */
static void xkfd_mm_release(struct mmu_notifier *mn, struct mm_struct *mm)
{
	struct xkfd_attach *a = container_of(mn, struct xkfd_attach, mn);

	if (!atomic_xchg(&a->mm_gone, 1))
		xkfd_unuse(a);
}

static const struct mmu_notifier_ops xkfd_mn_ops = {
	.release = xkfd_mm_release,
};

static void xkfd_attach_release(struct kref *ref)
{
	struct xkfd_attach *a = container_of(ref, struct xkfd_attach, ref);

	/* Runs the release above if the mm is still there, and waits for it. */
	mmu_notifier_unregister(&a->mn, a->mm);
	mmdrop(a->mm);
	kfree(a);
	xsched_obj_dec(XSCHED_OBJ_KFD_ATTACH);
}

static void xkfd_attach_put(struct xkfd_attach *a)
{
	kref_put(&a->ref, xkfd_attach_release);
}

static bool xkfd_model_file(struct file *file);
static struct kfd_process *xkfd_model_process(struct file *file);

int xkfd_attach(struct xkfd_attach **attach, struct xsched_kfd_attach *arg)
{
	struct kfd_process *p;
	struct xkfd_attach *a;
	struct file *file;
	int ret;

	file = fget(arg->kfd_fd);
	if (!file)
		return -EBADF;
	if (xkfd_model_file(file)) {
		/* Tests: the model's process; it was built with our layout. */
		p = xkfd_model_process(file);
		goto owner;
	}
	if (!xkfd_is_kfd_file(file)) {
		ret = -EINVAL;
		goto err_fput;
	}
	p = file->private_data;
	if (!xkfd_layout_ok(p, file->f_op->owner)) {
		pr_err_ratelimited("xsched: kfd: the running amdgpu's struct kfd_process does not match the layout this module was built with; %s\n",
				   XKFD_REBUILD);
		ret = -ENOEXEC;
		goto err_fput;
	}
owner:
	/* KFD answers only its owner; so do we. */
	if (READ_ONCE(p->mm) != current->mm ||
	    p->lead_thread != current->group_leader) {
		ret = -EPERM;
		goto err_fput;
	}

	a = kzalloc(sizeof(*a), GFP_KERNEL_ACCOUNT);
	if (!a) {
		ret = -ENOMEM;
		goto err_fput;
	}
	kref_init(&a->ref);
	refcount_set(&a->live, 1);
	a->file = file;
	a->p = p;
	a->mn.ops = &xkfd_mn_ops;
	ret = mmu_notifier_register(&a->mn, current->mm);
	if (ret) {
		kfree(a);
		goto err_fput;
	}
	xsched_obj_inc(XSCHED_OBJ_KFD_ATTACH);
	mmgrab(current->mm);
	a->mm = current->mm;
	arg->gpu_count = READ_ONCE(p->n_pdds);
	*attach = a;
	pr_debug("xsched: kfd: attached pid %d, pasid %u, %u gpus\n",
		 task_tgid_nr(current), p->pasid, arg->gpu_count);
	return 0;

err_fput:
	fput(file);
	return ret;
}

void xkfd_detach(struct xkfd_attach *a)
{
	xkfd_attach_put(a);
}

/* ---- queues ---- */

static bool xkfd_debugged(struct kfd_process *p)
{
#ifdef XKFD_HAVE_DEBUG_TRAP
	return READ_ONCE(p->debug_trap_enabled);
#else
	return false;
#endif
}

static int xkfd_reset_count(struct kfd_process_device *pdd)
{
#ifdef XKFD_HAVE_GPU_RESET_COUNTER
	return atomic_read(&pdd->dev->adev->gpu_reset_counter);
#else
	return 0;
#endif
}

/*
 * Has KFD given up on this device, or on this process's queues on it?
 * Every reset amdgpu makes (job timeout, RAS, amdgpu_gpu_recover, PCI
 * error, ring recovery) counts in the device's reset counter; KFD's own
 * flags are seen too, as some clear again.  @reset_count: the counter when
 * the queue was bound.
 */
static bool xkfd_device_broken(struct kfd_process_device *pdd, int reset_count)
{
	if (xkfd_reset_count(pdd) != reset_count)
		return true;
#ifdef XKFD_HAVE_HAS_RESET_QUEUE
	if (READ_ONCE(pdd->has_reset_queue))
		return true;
#endif
	return READ_ONCE(pdd->dev->dqm->is_hws_hang);
}

static bool xkfd_in_reset_node(struct kfd_node *node)
{
#ifdef XKFD_HAVE_RESET_DOMAIN
	struct amdgpu_device *adev = node->adev;

	return adev->reset_domain && atomic_read(&adev->reset_domain->in_gpu_reset);
#else
	return false;
#endif
}

static bool xkfd_in_reset(struct kfd_process_device *pdd)
{
	return xkfd_in_reset_node(pdd->dev);
}

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

/*
 * May KFD be asked to preempt or remap the queue now?  @p: its process,
 * held by xkfd_use().  0, or why not: -EBUSY a debugger owns the queue
 * states, -ESRCH the owner is exiting, -EIO KFD reset the queue or the
 * device (terminal), -EAGAIN a reset is under way.
 */
static int xkfd_usable(struct xkfd_queue *kq, struct kfd_process *p)
{
	if (xkfd_debugged(p))
		return -EBUSY;
	if (!READ_ONCE(p->mm))
		return -ESRCH;
	if (xkfd_device_broken(kq->pdd, kq->reset_count))
		return -EIO;
	if (xkfd_in_reset(kq->pdd))
		return -EAGAIN;
	return 0;
}

/* KFD's errors from a failed preemption, as the core reports them. */
static int xkfd_hw_error(int err)
{
	return err == -ETIME || err == -ETIMEDOUT ? -ETIMEDOUT : -EIO;
}

/* Mark the queue failed: the core reports it, this file never retries. */
static void xkfd_fail(struct xkfd_queue *kq, int err)
{
	kq->failed = true;
	xsched_queue_failed(kq->xq, err);
}

/* ---- batches ---- */

/*
 * On HWS every update_queue() is a preemption of every queue of the device
 * and a new runlist.  The arbiter's suspends and resumes of one pass are
 * applied together: dqm->ops.halt() unmaps the device once; while it is
 * halted, update_queue() finds nothing mapped and maps nothing, so each
 * queue costs only its MQD update; dqm->ops.unhalt() maps the new runlist
 * once.  N queues cost one preemption instead of N.  MES removes and adds
 * single queues, so there is nothing to gain there.
 *
 * amdgpu's shader isolation (enforce_isolation) halts KFD's scheduler too,
 * under adev->gfx.kfd_sch_mutex.  A GPU with isolation on in any partition
 * is never batched (its resets and jobs take that mutex); elsewhere a batch
 * holds the mutex from halt to unhalt, so that isolation turned on meanwhile
 * waits instead of halting a halted device.  While a device is halted every
 * queue on it waits, so the batch never sleeps on a process: it only
 * trylocks their mutexes (a busy one is retried on the next pass).
 */
#if defined(XKFD_HAVE_DQM_HALT) && (!defined(XKFD_HAVE_STOP_SCHED) || \
	(defined(XKFD_HAVE_KFD_SCH_MUTEX) && defined(XKFD_HAVE_ENFORCE_ISOLATION)))
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

#ifdef XKFD_HAVE_KFD_SCH_MUTEX
	if (node->node_id >= MAX_XCP ||
	    node->adev->gfx.kfd_sch_inactive[node->node_id])
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
#ifdef XKFD_HAVE_KFD_SCH_MUTEX
	/* Tried only: process mutexes are held already. */
	if (!mutex_trylock(&adev->gfx.kfd_sch_mutex))
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
#ifdef XKFD_HAVE_KFD_SCH_MUTEX
	if (!any)
		mutex_unlock(&adev->gfx.kfd_sch_mutex);
#endif
	return any;
}

static void *xkfd_op_batch_begin(struct xsched_queue *const *qs, unsigned int n)
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

static void xkfd_op_batch_end(void *batch)
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
#ifdef XKFD_HAVE_KFD_SCH_MUTEX
	for (i = b->nadev; i-- > 0;)
		mutex_unlock(&b->adev[i]->gfx.kfd_sch_mutex);
#endif
	for (i = b->nprocs; i-- > 0;) {
		if (b->procs[i])
			mutex_unlock(&b->procs[i]->mutex);
		xkfd_unuse(b->users[i]);
		xkfd_attach_put(b->users[i]);
	}
	kfree(b);
}

#define XKFD_BATCH_OPS \
	.batch_begin = xkfd_op_batch_begin, \
	.batch_end = xkfd_op_batch_end,
#else
static bool xkfd_in_batch(void)
{
	return false;
}

static bool xkfd_batch_holds(struct kfd_process *p)
{
	return false;
}

#define XKFD_BATCH_OPS
#endif

/*
 * The process mutex, for a suspend or resume: 0 busy, 1 taken, 2 held by
 * the batch already.  Inside a batch a device may be halted for every
 * process: never sleep there on one process (it may hold its mutex for
 * long); the arbiter tries again on a later pass.
 */
static int xkfd_lock_process(struct kfd_process *p)
{
	if (xkfd_batch_holds(p))
		return 2;
	if (xkfd_in_batch())
		return mutex_trylock(&p->mutex);
	mutex_lock(&p->mutex);
	return 1;
}

static void xkfd_unlock_process(struct kfd_process *p, int how)
{
	if (how == 1)
		mutex_unlock(&p->mutex);
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

/* ---- the KFD model (tests only) ---- */

/*
 * The failure paths above run only on a GPU: a reset (job timeout, RAS,
 * amdgpu_gpu_recover), a queue id handed out again, a preemption that
 * fails.  To drive them without one, kfd_model=1 lets root open debugfs
 * xsched/kfd_model: each open is a model of one KFD process with one GPU,
 * built from KFD's own structures (this module's view of them, as attach
 * checks it), whose update_queue is ours.  Its fd attaches like a /dev/kfd
 * fd (XSCHED_IOC_KFD_ATTACH), and from there every call is the real kfd
 * backend's.  Commands, written to the fd one per write():
 *
 *   queue ID RING RPTR WPTR  a compute AQL queue with CWSR: KFD's queue id,
 *                            ring base and the user addresses of its read
 *                            and write dispatch ids
 *   destroy ID               the owner destroys it (its memory is kept until
 *                            the model goes, so that a new queue never has
 *                            its address: KFD's allocator may reuse it)
 *   reset                    the GPU was reset: its reset counter moves
 *   hws_hang 0|1             KFD's HWS hang flag
 *   fail_update N            the next N update_queue() calls fail with
 *                            -ETIME, as a preemption that timed out
 *   update_delay_ms N        the next update_queue() first sleeps N ms
 *                            (at most 60000), uninterruptibly, as KFD
 *                            waits for the preemption fence: a caller
 *                            stuck in the kernel, for the test runners
 *
 * Reading it gives "updates N" (update_queue() calls so far) and one line
 * "queue ID suspended 0|1 active 0|1" per live queue.
 */
static bool kfd_model;
module_param(kfd_model, bool, 0600);
MODULE_PARM_DESC(kfd_model,
		 "Testing only: let root open debugfs xsched/kfd_model, a model of a KFD process that the kfd backend's failure paths can be driven on without a GPU (default N)");

struct xkfd_model {
	struct device_queue_manager dqm;	/* its update_queue finds us */
	/* Protects everything below and the queue lists; taken alone. */
	struct mutex lock;
	struct kfd_process *p;
	struct kfd_process_device *pdd;
	struct kfd_node node;
	struct kfd_dev kfd;
	struct amdgpu_device *adev;	/* large: a vmalloc of its own */
	struct list_head dead;		/* destroyed queues, freed with the model */
	unsigned int fail_update;
	unsigned int update_delay_ms;
	unsigned int updates;
};

static const struct file_operations xkfd_model_fops;

static bool xkfd_model_file(struct file *file)
{
	return file->f_op == &xkfd_model_fops;
}

static struct kfd_process *xkfd_model_process(struct file *file)
{
	struct xkfd_model *m = file->private_data;

	return m->p;
}

/* KFD's update_queue() as far as this backend sees it. */
static int xkfd_model_update_queue(struct device_queue_manager *dqm,
				   struct queue *q, struct mqd_update_info *minfo)
{
	struct xkfd_model *m = container_of(dqm, struct xkfd_model, dqm);
	unsigned int delay = xchg(&m->update_delay_ms, 0);
	int ret = 0;

	if (delay)
		msleep(min(delay, 60000U));
	mutex_lock(&m->lock);
	m->updates++;
	if (m->fail_update) {
		m->fail_update--;
		ret = -ETIME;
	}
	mutex_unlock(&m->lock);
	dqm_lock(dqm);
	if (!ret)
		q->properties.is_active = !q->properties.is_suspended &&
					  !q->properties.is_evicted;
	dqm_unlock(dqm);
	return ret;
}

static void xkfd_model_free_queues(struct list_head *head)
{
	struct queue *q, *tmp;

	list_for_each_entry_safe(q, tmp, head, list) {
		list_del(&q->list);
		kfree(q->mqd_mem_obj);
		kfree(q);
	}
}

static void xkfd_model_free(struct xkfd_model *m)
{
	if (m->pdd)
		xkfd_model_free_queues(&m->pdd->qpd.queues_list);
	xkfd_model_free_queues(&m->dead);
	if (m->p)
		mutex_destroy(&m->p->mutex);
	mutex_destroy(&m->dqm.lock_hidden);
	mutex_destroy(&m->lock);
	kfree(m->pdd);
	kfree(m->p);
	kvfree(m->adev);
	kfree(m);
}

static int xkfd_model_open(struct inode *inode, struct file *file)
{
	struct xkfd_model *m;

	if (!READ_ONCE(kfd_model) || !capable(CAP_SYS_ADMIN))
		return -EPERM;
	m = kzalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
	if (!m)
		return -ENOMEM;
	mutex_init(&m->lock);
	mutex_init(&m->dqm.lock_hidden);
	INIT_LIST_HEAD(&m->dead);
	m->adev = kvzalloc(sizeof(*m->adev), GFP_KERNEL_ACCOUNT);
	m->p = kzalloc(sizeof(*m->p), GFP_KERNEL_ACCOUNT);
	m->pdd = kzalloc(sizeof(*m->pdd), GFP_KERNEL_ACCOUNT);
	if (!m->adev || !m->p || !m->pdd) {
		xkfd_model_free(m);
		return -ENOMEM;
	}
	/* One gfx9 GPU scheduled by HWS, with CWSR. */
	m->kfd.cwsr_enabled = true;
	m->node.kfd = &m->kfd;
	m->node.adev = m->adev;
	m->node.dqm = &m->dqm;
	m->node.xcc_mask = 1;
	m->dqm.dev = &m->node;
	m->dqm.sched_policy = KFD_SCHED_POLICY_HWS;
	m->dqm.sched_running = true;
	m->dqm.ops.update_queue = xkfd_model_update_queue;
	/* The opener is the process: KFD answers only its owner. */
	mutex_init(&m->p->mutex);
	m->p->mm = current->mm;
	m->p->lead_thread = current->group_leader;
	m->p->n_pdds = 1;
	m->p->pdds[0] = m->pdd;
	m->pdd->process = m->p;
	m->pdd->dev = &m->node;
	m->pdd->user_gpu_id = 0x4d4f;
	m->pdd->qpd.dqm = &m->dqm;
	m->pdd->qpd.pqm = &m->p->pqm;
	INIT_LIST_HEAD(&m->pdd->qpd.queues_list);
	file->private_data = m;
	return 0;
}

/* Last reference: the test's fd and every attachment (a->file) are gone. */
static int xkfd_model_release(struct inode *inode, struct file *file)
{
	xkfd_model_free(file->private_data);
	return 0;
}

/* The live queue with KFD's id @id; m->lock held. */
static struct queue *xkfd_model_find(struct xkfd_model *m, u32 id)
{
	struct queue *q;

	list_for_each_entry(q, &m->pdd->qpd.queues_list, list)
		if (q->properties.queue_id == id)
			return q;
	return NULL;
}

static int xkfd_model_queue(struct xkfd_model *m, u32 id, u64 ring, u64 rptr,
			    u64 wptr)
{
	struct queue *q;

	q = kzalloc(sizeof(*q), GFP_KERNEL_ACCOUNT);
	if (!q)
		return -ENOMEM;
	q->mqd_mem_obj = kzalloc(sizeof(*q->mqd_mem_obj), GFP_KERNEL_ACCOUNT);
	if (!q->mqd_mem_obj) {
		kfree(q);
		return -ENOMEM;
	}
	q->process = m->p;
	q->device = &m->node;
	q->properties.type = KFD_QUEUE_TYPE_COMPUTE;
	q->properties.format = KFD_QUEUE_FORMAT_AQL;
	q->properties.queue_id = id;
	q->properties.queue_address = ring;
	q->properties.read_ptr = u64_to_user_ptr(rptr);
	q->properties.write_ptr = u64_to_user_ptr(wptr);
	q->properties.ctx_save_restore_area_address = ring + PAGE_SIZE;
	q->properties.ctx_save_restore_area_size = PAGE_SIZE;
	q->properties.is_active = true;
	/* Under the process mutex and the dqm lock, as KFD lists queues. */
	mutex_lock(&m->p->mutex);
	dqm_lock(&m->dqm);
	if (xkfd_model_find(m, id)) {
		dqm_unlock(&m->dqm);
		mutex_unlock(&m->p->mutex);
		kfree(q->mqd_mem_obj);
		kfree(q);
		return -EEXIST;
	}
	list_add_tail(&q->list, &m->pdd->qpd.queues_list);
	dqm_unlock(&m->dqm);
	mutex_unlock(&m->p->mutex);
	return 0;
}

static int xkfd_model_destroy(struct xkfd_model *m, u32 id)
{
	struct queue *q;
	int ret = -ENOENT;

	mutex_lock(&m->p->mutex);
	dqm_lock(&m->dqm);
	q = xkfd_model_find(m, id);
	if (q) {
		list_move_tail(&q->list, &m->dead);
		ret = 0;
	}
	dqm_unlock(&m->dqm);
	mutex_unlock(&m->p->mutex);
	return ret;
}

static ssize_t xkfd_model_write(struct file *file, const char __user *ubuf,
				size_t len, loff_t *off)
{
	struct xkfd_model *m = file->private_data;
	u64 ring, rptr, wptr;
	unsigned int v;
	char buf[128];
	int ret;
	u32 id;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	if (sscanf(buf, "queue %u %llx %llx %llx", &id, &ring, &rptr, &wptr) == 4) {
		ret = xkfd_model_queue(m, id, ring, rptr, wptr);
	} else if (sscanf(buf, "destroy %u", &id) == 1) {
		ret = xkfd_model_destroy(m, id);
	} else if (!strcmp(buf, "reset") || !strcmp(buf, "reset\n")) {
		atomic_inc(&m->adev->gpu_reset_counter);
		ret = 0;
	} else if (sscanf(buf, "hws_hang %u", &v) == 1) {
		WRITE_ONCE(m->dqm.is_hws_hang, !!v);
		ret = 0;
	} else if (sscanf(buf, "update_delay_ms %u", &v) == 1) {
		WRITE_ONCE(m->update_delay_ms, v);
		ret = 0;
	} else if (sscanf(buf, "fail_update %u", &v) == 1) {
		mutex_lock(&m->lock);
		m->fail_update = v;
		mutex_unlock(&m->lock);
		ret = 0;
	} else {
		ret = -EINVAL;
	}
	return ret ? ret : len;
}

static ssize_t xkfd_model_read(struct file *file, char __user *ubuf,
			       size_t len, loff_t *off)
{
	struct xkfd_model *m = file->private_data;
	size_t n = 0, size = PAGE_SIZE;
	struct queue *q;
	ssize_t ret;
	char *buf;

	buf = kmalloc(size, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	mutex_lock(&m->lock);
	n += scnprintf(buf + n, size - n, "updates %u\n", m->updates);
	mutex_unlock(&m->lock);
	mutex_lock(&m->p->mutex);
	dqm_lock(&m->dqm);
	list_for_each_entry(q, &m->pdd->qpd.queues_list, list)
		n += scnprintf(buf + n, size - n, "queue %u suspended %d active %d\n",
			       q->properties.queue_id, q->properties.is_suspended,
			       q->properties.is_active);
	dqm_unlock(&m->dqm);
	mutex_unlock(&m->p->mutex);
	ret = simple_read_from_buffer(ubuf, len, off, buf, n);
	kfree(buf);
	return ret;
}

static const struct file_operations xkfd_model_fops = {
	.owner = THIS_MODULE,
	.open = xkfd_model_open,
	.release = xkfd_model_release,
	.read = xkfd_model_read,
	.write = xkfd_model_write,
	.llseek = default_llseek,
};

void xkfd_debugfs(struct dentry *root)
{
	/*
	 * Unproxied, so that attach can tell the model's file by its f_op;
	 * an open one pins the module (.owner), and with it the file.
	 */
	debugfs_create_file_unsafe("kfd_model", 0600, root, NULL, &xkfd_model_fops);
}
