// SPDX-License-Identifier: GPL-2.0
/*
 * The device node /dev/xsched_sim, open to every user: each open is one sim
 * context (struct xsim_vm) of device memory and queues, whose ioctls
 * (include/uapi/linux/xsched_sim.h) and mmap are here; closing it drops
 * its queues (registered ones live on).  Every argument is checked before
 * anything is created.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/uaccess.h>

#include "sim.h"

static int xsim_open(struct inode *inode, struct file *file)
{
	struct xsim_vm *vm = xsim_vm_create();

	if (IS_ERR(vm))
		return PTR_ERR(vm);
	file->private_data = vm;
	return 0;
}

static int xsim_release(struct inode *inode, struct file *file)
{
	xsim_vm_put(file->private_data);
	return 0;
}

static int xsim_file_mmap(struct file *file, struct vm_area_struct *vma)
{
	return xsim_mmap(file->private_data, vma);
}

static long xsim_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct xsim_vm *vm = file->private_data;
	void __user *uarg = (void __user *)arg;
	union {
		struct xsched_sim_info i;
		struct xsched_sim_mem m;
		struct xsched_sim_queue_create qc;
		struct xsched_sim_submit s;
		struct xsched_sim_wait w;
		struct xsched_sim_queue_destroy d;
	} u;
	long ret;

	switch (cmd) {
	case XSCHED_IOC_SIM_INFO:
		memset(&u.i, 0, sizeof(u.i));
		u.i.cus = xsim.ncu;
		u.i.waves_per_cu = xsim.nwaves;
		u.i.wave_state_bytes = sizeof(struct xsim_wave_state);
		return copy_to_user(uarg, &u.i, sizeof(u.i)) ? -EFAULT : 0;
	case XSCHED_IOC_SIM_MEM_ALLOC:
	case XSCHED_IOC_SIM_QUEUE_CREATE:
	case XSCHED_IOC_SIM_SUBMIT:
	case XSCHED_IOC_SIM_WAIT:
	case XSCHED_IOC_SIM_QUEUE_DESTROY:
		break;
	default:
		return -ENOTTY;
	}
	if (copy_from_user(&u, uarg, _IOC_SIZE(cmd)))
		return -EFAULT;
	/* In only: nothing to write back. */
	if (cmd == XSCHED_IOC_SIM_QUEUE_DESTROY)
		return xsim_queue_destroy(vm, &u.d);
	/*
	 * Probe that the results can be written back before anything is
	 * created: a read-only argument must not leave a buffer, queue or
	 * submission behind an EFAULT.  Only a concurrent munmap() or
	 * mprotect() can still make the final copy fail.
	 */
	if (copy_to_user(uarg, &u, _IOC_SIZE(cmd)))
		return -EFAULT;

	switch (cmd) {
	case XSCHED_IOC_SIM_MEM_ALLOC:
		ret = xsim_mem_alloc(vm, &u.m);
		break;
	case XSCHED_IOC_SIM_QUEUE_CREATE:
		ret = xsim_queue_create(vm, &u.qc);
		break;
	case XSCHED_IOC_SIM_SUBMIT:
		ret = xsim_submit(vm, &u.s);
		break;
	default:
		ret = xsim_wait(vm, &u.w);
		/* completed is reported on timeout and failure too */
		if (ret && ret != -EFAULT && copy_to_user(uarg, &u, _IOC_SIZE(cmd)))
			return -EFAULT;
		break;
	}
	if (!ret && copy_to_user(uarg, &u, _IOC_SIZE(cmd)))
		return -EFAULT;
	return ret;
}

const struct file_operations xsim_fops = {
	.owner = THIS_MODULE,
	.open = xsim_open,
	.release = xsim_release,
	.unlocked_ioctl = xsim_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = xsim_file_mmap,
	.llseek = noop_llseek,
};

struct miscdevice xsim_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = XSCHED_SIM_DEVICE_NAME,
	.fops = &xsim_fops,
	.mode = 0666,
};
