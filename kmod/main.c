// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/xsched: the client fd.  Opening the device makes a client; a client
 * owns an optional KFD attachment and registers queues, each of which becomes
 * a queue fd (queue.c): kfd queues through the attachment, queues of a
 * backend module (the sim) through that backend's bind (backend.c).
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "xsched.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

struct xsched_client {
	struct mutex lock;		/* protects kfd */
	struct xkfd_attach *kfd;
};

static struct dentry *xsched_debugfs;

struct dentry *xsched_debugfs_dir(void)
{
	return xsched_debugfs;
}
EXPORT_SYMBOL_GPL(xsched_debugfs_dir);

static int xsched_open(struct inode *inode, struct file *file)
{
	struct xsched_client *c = kzalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);

	if (!c)
		return -ENOMEM;
	mutex_init(&c->lock);
	file->private_data = c;
	xsched_obj_inc(XSCHED_OBJ_CLIENT);
	return 0;
}

static int xsched_release(struct inode *inode, struct file *file)
{
	struct xsched_client *c = file->private_data;

	if (c->kfd)
		xkfd_detach(c->kfd);
	mutex_destroy(&c->lock);
	kfree(c);
	xsched_obj_dec(XSCHED_OBJ_CLIENT);
	return 0;
}

static int xsched_version(struct xsched_version *v)
{
	memset(v, 0, sizeof(*v));
	v->api_version = XSCHED_API_VERSION;
	v->caps = XSCHED_CAP_SIZED_IOCTLS | XSCHED_CAP_SUSPEND_SEQ |
		  XSCHED_CAP_ADMIN;
	if (xsched_backend_loaded(XSCHED_BACKEND_SIM))
		v->backends |= BIT(XSCHED_BACKEND_SIM);
	if (xkfd_available())
		v->backends |= BIT(XSCHED_BACKEND_KFD);
	return 0;
}

static int xsched_register(struct xsched_client *c, struct xsched_register *r,
			   struct xsched_register __user *ur, size_t usize)
{
	const struct xsched_backend_ops *ops;
	struct xsched_queue *q;
	int ret;

	if (r->flags & ~XSCHED_REGISTER_FLAGS || r->reserved[0] || r->reserved[1])
		return -EINVAL;
	if (r->backend != XSCHED_BACKEND_SIM && r->backend != XSCHED_BACKEND_KFD)
		return -EINVAL;
	/* kfd: the client's attachment names the process; no fd here. */
	if (r->backend == XSCHED_BACKEND_KFD && r->backend_fd)
		return -EINVAL;
	/* By ring: the caller's address space names the queue, not an fd. */
	if (r->flags & XSCHED_REGISTER_BY_RING && (!r->handle || r->backend_fd))
		return -EINVAL;
	ret = xsched_priority_check(r->priority, 0);
	if (ret)
		return ret;

	if (r->backend != XSCHED_BACKEND_KFD) {
		ops = xsched_backend_get(r->backend);
		if (!ops)
			return -ENODEV;
		if (!(r->flags & XSCHED_REGISTER_BY_RING))
			q = ops->bind(r->backend_fd, r->handle, r->priority);
		else if (ops->bind_ring)
			q = ops->bind_ring(r->handle, r->priority);
		else
			q = ERR_PTR(-EOPNOTSUPP);
		xsched_backend_put(ops);
	} else {
		mutex_lock(&c->lock);
		q = c->kfd ? xkfd_register(c->kfd, r->handle, r->priority) :
			     ERR_PTR(xkfd_available() ? -ENXIO : -ENODEV);
		mutex_unlock(&c->lock);
	}
	if (IS_ERR(q))
		return PTR_ERR(q);
	return xsched_queue_install_fd(q, r, ur, usize);
}

static int xsched_kfd_attach(struct xsched_client *c, struct xsched_kfd_attach *a)
{
	int ret;

	if (a->flags || a->reserved0 || a->reserved[0] || a->reserved[1] ||
	    a->reserved[2])
		return -EINVAL;
	mutex_lock(&c->lock);
	if (c->kfd)
		ret = -EEXIST;
	else
		ret = xkfd_attach(&c->kfd, a);
	mutex_unlock(&c->lock);
	return ret;
}

static long xsched_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct xsched_client *c = file->private_data;
	void __user *uarg = (void __user *)arg;
	union {
		struct xsched_version v;
		struct xsched_register r;
		struct xsched_kfd_attach a;
	} u;
	size_t usize = _IOC_SIZE(cmd), ksize, min;
	long ret;

	/* Sized by its own size field, not by the ioctl number. */
	if (cmd == XSCHED_IOC_ADMIN)
		return xsched_admin_ioctl(uarg);
	/* Any size of a struct that may grow: see the uapi header. */
	switch (XSCHED_IOC_NOSIZE(cmd)) {
	case XSCHED_IOC_NOSIZE(XSCHED_IOC_VERSION):
		if (usize < XSCHED_VERSION_SIZE_VER0)
			return -EINVAL;
		xsched_version(&u.v);
		return copy_to_user(uarg, &u.v, min(usize, sizeof(u.v))) ?
			-EFAULT : 0;
	case XSCHED_IOC_NOSIZE(XSCHED_IOC_REGISTER):
		ksize = sizeof(u.r);
		min = XSCHED_REGISTER_SIZE_VER0;
		break;
	case XSCHED_IOC_NOSIZE(XSCHED_IOC_KFD_ATTACH):
		ksize = sizeof(u.a);
		min = XSCHED_KFD_ATTACH_SIZE_VER0;
		break;
	default:
		return -ENOTTY;
	}
	ret = xsched_arg_in(&u, ksize, min, uarg, usize);
	if (ret)
		return ret;
	usize = min(usize, ksize);
	/*
	 * Probe that the results can be written back before anything is
	 * created: a read-only argument must not leave a queue or an
	 * attachment behind an EFAULT.  Only a concurrent munmap() or
	 * mprotect() can still make the final copy fail.
	 */
	if (copy_to_user(uarg, &u, usize))
		return -EFAULT;

	/* REGISTER copies its output itself, before the fd becomes visible. */
	if (XSCHED_IOC_NOSIZE(cmd) == XSCHED_IOC_NOSIZE(XSCHED_IOC_REGISTER))
		return xsched_register(c, &u.r, uarg, usize);
	ret = xsched_kfd_attach(c, &u.a);
	if (!ret && copy_to_user(uarg, &u, usize))
		return -EFAULT;
	return ret;
}

static const struct file_operations xsched_fops = {
	.owner = THIS_MODULE,
	.open = xsched_open,
	.release = xsched_release,
	.unlocked_ioctl = xsched_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice xsched_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = XSCHED_DEVICE_NAME,
	.fops = &xsched_fops,
	.mode = 0666,
};

static int __init xsched_init(void)
{
	int ret;

	ret = xsched_arbiter_init();
	if (ret)
		return ret;
	xsched_debugfs = debugfs_create_dir("xsched", NULL);
	xsched_queues_debugfs(xsched_debugfs);
	xsched_objects_debugfs(xsched_debugfs);
	xkfd_debugfs(xsched_debugfs);
	ret = misc_register(&xsched_misc);
	if (ret)
		goto err_debugfs;
	pr_info("xsched: /dev/%s ready, api %u, kfd backend %s\n",
		XSCHED_DEVICE_NAME, XSCHED_API_VERSION,
		xkfd_available() ? "built in" : "not built");
	return 0;

err_debugfs:
	debugfs_remove_recursive(xsched_debugfs);
	xsched_arbiter_exit();
	return ret;
}

static void __exit xsched_exit(void)
{
	misc_deregister(&xsched_misc);
	/* debugfs first: its knobs reach into the queue list. */
	debugfs_remove_recursive(xsched_debugfs);
	/* No queue is left, and with them went the arbiter's domains. */
	xsched_queues_exit();
	xsched_arbiter_exit();
	xsched_objects_exit();
}

module_init(xsched_init);
module_exit(xsched_exit);
MODULE_DESCRIPTION("Suspend and resume GPU queues for priority scheduling");
MODULE_LICENSE("GPL");
