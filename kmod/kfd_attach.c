// SPDX-License-Identifier: GPL-2.0
/*
 * The kfd backend: attach, a client's hold on its KFD process.
 *
 * The caller passes its own /dev/kfd fd.  The file must be the character
 * device amdgpu registered as "kfd"; its private_data is the caller's
 * struct kfd_process.  Before that pointer is used, the structures are
 * checked against the layout this module was compiled with (sizes of the
 * allocations, pointers that must point back into the process or into
 * amdgpu), then the process must be the caller's (same mm, same leader).
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
 */
#include <linux/cdev.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "kfd_backend.h"

/* Test knob: make the layout check fail, to exercise its error path. */
static bool kfd_fake_layout_mismatch;
module_param(kfd_fake_layout_mismatch, bool, 0600);
MODULE_PARM_DESC(kfd_fake_layout_mismatch,
		 "Testing only: treat every KFD process as a layout mismatch");

bool xkfd_available(void)
{
	return true;
}

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
bool xkfd_size_ok(const void *obj, size_t size)
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
struct kfd_process *xkfd_use(struct xkfd_attach *a)
{
	return refcount_inc_not_zero(&a->live) ? a->p : NULL;
}

void xkfd_unuse(struct xkfd_attach *a)
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

void xkfd_attach_put(struct xkfd_attach *a)
{
	kref_put(&a->ref, xkfd_attach_release);
}

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
#ifdef XKFD_HAVE_PROCESS_PASID
	pr_debug("xsched: kfd: attached pid %d, pasid %u, %u gpus\n",
		 task_tgid_nr(current), p->pasid, arg->gpu_count);
#else
	/* One PASID per device there (kfd_process_device.pasid, 6.14+). */
	pr_debug("xsched: kfd: attached pid %d, %u gpus\n",
		 task_tgid_nr(current), arg->gpu_count);
#endif
	return 0;

err_fput:
	fput(file);
	return ret;
}

void xkfd_detach(struct xkfd_attach *a)
{
	xkfd_attach_put(a);
}

