// SPDX-License-Identifier: GPL-2.0
/*
 * xsched_sim.ko: init and exit, and the fault injection knobs in debugfs
 * xsched/sim (netdevsim's pattern): a slow save, a save that hangs (reset
 * by the watchdog), a failed resume, a queue reset, and a backend that
 * stops answering, each of which the core must survive with a clear errno;
 * and ring_bucket, which tells the tests where a ring address is hashed.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kstrtox.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/sched.h>

#include "sim.h"

/* debugfs: reset a registered sim queue by uid. */
static int xsim_reset_set(void *data, u64 uid)
{
	struct xsched_queue *xq = xsched_queue_get_by_uid(uid);
	int ret = 0;

	if (!xq)
		return -ENOENT;
	if (xq->ops != &xsim_ops) {
		ret = -EINVAL;
	} else {
		/* priv is cleared under the lock when the queue is released. */
		spin_lock(&xsim.lock);
		if (xq->priv)
			xsim_queue_fail(xq->priv, -EIO);
		else
			ret = -ENOENT;
		spin_unlock(&xsim.lock);
	}
	xsched_queue_put(xq);
	return ret;
}
DEFINE_DEBUGFS_ATTRIBUTE(xsim_reset_fops, NULL, xsim_reset_set, "%llu\n");

/*
 * debugfs ring_bucket: write a ring address, read back the bucket of
 * xsim.rings it falls in for the writer's address space.  Kept per open
 * file, so that concurrent tests do not read each other's answer.
 */
static ssize_t xsim_ring_bucket_write(struct file *f, const char __user *buf,
				      size_t len, loff_t *ppos)
{
	u64 ring;
	int ret;

	ret = kstrtou64_from_user(buf, len, 0, &ring);
	if (ret)
		return ret;
	if (!current->mm)
		return -EINVAL;
	/* 0 means nothing written yet. */
	f->private_data = (void *)(uintptr_t)(xsim_ring_bucket(current->mm, ring) + 1);
	return len;
}

static ssize_t xsim_ring_bucket_read(struct file *f, char __user *buf,
				     size_t len, loff_t *ppos)
{
	uintptr_t b = (uintptr_t)f->private_data;
	char text[16];
	int n;

	if (!b)
		return -ENODATA;
	n = scnprintf(text, sizeof(text), "%lu\n", (unsigned long)(b - 1));
	return simple_read_from_buffer(buf, len, ppos, text, n);
}

static const struct file_operations xsim_ring_bucket_fops = {
	.owner = THIS_MODULE,
	.read = xsim_ring_bucket_read,
	.write = xsim_ring_bucket_write,
	.llseek = default_llseek,
};

static int __init xsim_init(void)
{
	int ret;

	ret = xsim_dev_init();
	if (ret)
		return ret;
	ret = xsim_start_cus();
	if (ret)
		return ret;

	xsim.dir = debugfs_create_dir("sim", xsched_debugfs_dir());
	debugfs_create_u32("save_delay_us", 0644, xsim.dir, &xsim.save_delay_us);
	debugfs_create_u32("fail_save", 0644, xsim.dir, &xsim.fail_save);
	debugfs_create_u32("fail_resume", 0644, xsim.dir, &xsim.fail_resume);
	debugfs_create_u32("save_timeout_ms", 0644, xsim.dir, &xsim.save_timeout_ms);
	debugfs_create_u32("fake_suspend", 0644, xsim.dir, &xsim.fake_suspend);
	debugfs_create_u32("ignore_suspend", 0644, xsim.dir, &xsim.ignore_suspend);
	debugfs_create_u32("hws", 0644, xsim.dir, &xsim.hws);
	debugfs_create_u32("hws_update_us", 0644, xsim.dir, &xsim.hws_update_us);
	debugfs_create_u64("runlist_updates", 0444, xsim.dir, &xsim.runlist_updates);
	debugfs_create_file_unsafe("reset_queue", 0200, xsim.dir, NULL,
				   &xsim_reset_fops);
	debugfs_create_file("ring_bucket", 0600, xsim.dir, NULL,
			    &xsim_ring_bucket_fops);
	ret = misc_register(&xsim_misc);
	if (ret)
		goto err_debugfs;
	ret = xsched_backend_register(XSCHED_BACKEND_SIM, &xsim_ops);
	if (ret)
		goto err_misc;
	pr_info("xsched_sim: /dev/%s ready (a test device), %u CUs x %u waves\n",
		XSCHED_SIM_DEVICE_NAME, xsim.ncu, xsim.nwaves);
	return 0;

err_misc:
	misc_deregister(&xsim_misc);
err_debugfs:
	debugfs_remove_recursive(xsim.dir);
	xsim_stop_cus();
	return ret;
}

/*
 * Every sim fd and every queue registered from one pins the module, so at
 * exit no queue is left and no bind can start.
 */
static void __exit xsim_exit(void)
{
	xsched_backend_unregister(XSCHED_BACKEND_SIM, &xsim_ops);
	misc_deregister(&xsim_misc);
	debugfs_remove_recursive(xsim.dir);
	xsim_stop_cus();
}

module_init(xsim_init);
module_exit(xsim_exit);
MODULE_DESCRIPTION("xsched sim GPU: a software GPU backend for tests");
MODULE_LICENSE("GPL");
