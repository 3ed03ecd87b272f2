/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kfd backend's private header, for its files only: KFD's own headers
 * (built against KFD_SRC, see Kbuild), the backend's two objects and what
 * its files call in each other.  The files, each calling only those listed
 * after it:
 *
 *   kfd.c         the backend: register a queue, the ops (suspend, resume,
 *                 progress, release)
 *   kfd_batch.c   the arbiter's passes as one HWS preemption; the process
 *                 mutex every suspend and resume takes
 *   kfd_health.c  may KFD be asked now: debugger, owner exiting, resets
 *   kfd_attach.c  a client's hold on its KFD process
 *   kfd_model.c   the KFD model the tests drive the failure paths on
 *
 * Lock order: xsched_queue.lock -> kfd_process.mutex -> dqm lock (taken
 * inside update_queue, or briefly here) -> xkfd_queues_lock is never held
 * with any of them.  A batch only tries its locks (process mutexes, then
 * amdgpu's kfd_sch_mutex), before it halts anything.
 */
#ifndef XSCHED_KFD_BACKEND_H
#define XSCHED_KFD_BACKEND_H

#include <linux/kref.h>
#include <linux/mmu_notifier.h>
#include <linux/refcount.h>

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

/* kfd_attach.c */
bool xkfd_size_ok(const void *obj, size_t size);
/* The KFD process for one operation, or NULL once its owner's mm is gone. */
struct kfd_process *xkfd_use(struct xkfd_attach *a);
void xkfd_unuse(struct xkfd_attach *a);
void xkfd_attach_put(struct xkfd_attach *a);

/* kfd_health.c */
bool xkfd_debugged(struct kfd_process *p);
int xkfd_reset_count(struct kfd_process_device *pdd);
bool xkfd_device_broken(struct kfd_process_device *pdd, int reset_count);
bool xkfd_in_reset_node(struct kfd_node *node);
int xkfd_usable(struct xkfd_queue *kq, struct kfd_process *p);

/* kfd_batch.c */
int xkfd_lock_process(struct kfd_process *p);
void xkfd_unlock_process(struct kfd_process *p, int how);
/*
 * The mutex and per-partition flag under which amdgpu's shader isolation
 * stops KFD's scheduler: adev->gfx.kfd_sch_mutex and kfd_sch_inactive[]
 * (6.12), renamed userq_sch_mutex and userq_sch_inactive[] (7.2, 7.3).
 */
#if defined(XKFD_HAVE_KFD_SCH_MUTEX)
#define XKFD_HAVE_SCH_MUTEX
#define xkfd_sch_mutex(adev) (&(adev)->gfx.kfd_sch_mutex)
#define xkfd_sch_inactive(adev, i) ((adev)->gfx.kfd_sch_inactive[i])
#elif defined(XKFD_HAVE_USERQ_SCH_MUTEX)
#define XKFD_HAVE_SCH_MUTEX
#define xkfd_sch_mutex(adev) (&(adev)->gfx.userq_sch_mutex)
#define xkfd_sch_inactive(adev, i) ((adev)->gfx.userq_sch_inactive[i])
#endif

/*
 * Batches need dqm->ops.halt(), and a way to keep shader isolation out.  A
 * KFD with halt() and isolation but no lock known here would silently lose
 * batches (7.x renamed the lock): refused instead, until this is taught.
 */
#if defined(XKFD_HAVE_DQM_HALT) && defined(XKFD_HAVE_STOP_SCHED) && \
	!(defined(XKFD_HAVE_SCH_MUTEX) && defined(XKFD_HAVE_ENFORCE_ISOLATION))
#error "KFD_SRC: shader isolation stops KFD under a lock kfd_conftest.sh does not know"
#endif
#if defined(XKFD_HAVE_DQM_HALT) && (!defined(XKFD_HAVE_STOP_SCHED) || \
	(defined(XKFD_HAVE_SCH_MUTEX) && defined(XKFD_HAVE_ENFORCE_ISOLATION)))
#define XKFD_BATCH
void *xkfd_op_batch_begin(struct xsched_queue *const *qs, unsigned int n);
void xkfd_op_batch_end(void *batch);
#define XKFD_BATCH_OPS \
	.batch_begin = xkfd_op_batch_begin, \
	.batch_end = xkfd_op_batch_end,
#else
#define XKFD_BATCH_OPS
#endif

/* kfd_model.c: is @file an open KFD model, and its process */
bool xkfd_model_file(struct file *file);
struct kfd_process *xkfd_model_process(struct file *file);

#endif /* XSCHED_KFD_BACKEND_H */
