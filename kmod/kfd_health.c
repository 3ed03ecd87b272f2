// SPDX-License-Identifier: GPL-2.0
/*
 * The kfd backend: may KFD be asked to preempt or remap a queue now?  Not
 * while a debugger owns the queue states, nor once the owner is exiting;
 * and a device that KFD reset, or gave up on (HWS hang), is never asked
 * again: a preemption that KFD cannot complete makes it reset the device,
 * and a second one must not follow.  Reads only, under no lock of ours.
 */
#include "kfd_backend.h"

bool xkfd_debugged(struct kfd_process *p)
{
#ifdef XKFD_HAVE_DEBUG_TRAP
	return READ_ONCE(p->debug_trap_enabled);
#else
	return false;
#endif
}

int xkfd_reset_count(struct kfd_process_device *pdd)
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
bool xkfd_device_broken(struct kfd_process_device *pdd, int reset_count)
{
	if (xkfd_reset_count(pdd) != reset_count)
		return true;
#ifdef XKFD_HAVE_HAS_RESET_QUEUE
	if (READ_ONCE(pdd->has_reset_queue))
		return true;
#endif
	return READ_ONCE(pdd->dev->dqm->is_hws_hang);
}

bool xkfd_in_reset_node(struct kfd_node *node)
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
 * May KFD be asked to preempt or remap the queue now?  @p: its process,
 * held by xkfd_use().  0, or why not: -EBUSY a debugger owns the queue
 * states, -ESRCH the owner is exiting, -EIO KFD reset the queue or the
 * device (terminal), -EAGAIN a reset is under way.
 */
int xkfd_usable(struct xkfd_queue *kq, struct kfd_process *p)
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
