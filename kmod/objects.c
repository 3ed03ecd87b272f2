// SPDX-License-Identifier: GPL-2.0
/*
 * Live object counters: every object of the module and of its backends (the
 * clients, the queues, the sim's and kfd's own objects) counts itself up when
 * it is made and down when it is freed.  debugfs "objects" shows the counts,
 * and tests check that they return to zero once every fd is closed, which
 * catches leaks that the module unload cannot (plain kmalloc memory does not
 * pin the module); the unload reports any count left.
 *
 * It calls no other file of the module: anything may count its objects here.
 */
#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/seq_file.h>

#include "xsched.h"

static atomic_t xsched_objs[XSCHED_OBJ_NR];
static const char *const xsched_obj_names[XSCHED_OBJ_NR] = {
	[XSCHED_OBJ_CLIENT] = "clients",
	[XSCHED_OBJ_QUEUE] = "queues",
	[XSCHED_OBJ_SIM_VM] = "sim_vms",
	[XSCHED_OBJ_SIM_QUEUE] = "sim_queues",
	[XSCHED_OBJ_SIM_BUFFER] = "sim_buffers",
	[XSCHED_OBJ_KFD_ATTACH] = "kfd_attachments",
	[XSCHED_OBJ_KFD_QUEUE] = "kfd_queues",
};

void xsched_obj_inc(enum xsched_obj obj)
{
	atomic_inc(&xsched_objs[obj]);
}
EXPORT_SYMBOL_GPL(xsched_obj_inc);

void xsched_obj_dec(enum xsched_obj obj)
{
	WARN_ON(atomic_dec_return(&xsched_objs[obj]) < 0);
}
EXPORT_SYMBOL_GPL(xsched_obj_dec);

static int xsched_objects_show(struct seq_file *m, void *v)
{
	int i;

	for (i = 0; i < XSCHED_OBJ_NR; i++)
		seq_printf(m, "%s %d\n", xsched_obj_names[i],
			   atomic_read(&xsched_objs[i]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(xsched_objects);

void xsched_objects_debugfs(struct dentry *root)
{
	debugfs_create_file("objects", 0444, root, NULL, &xsched_objects_fops);
}

void xsched_objects_exit(void)
{
	int i;

	for (i = 0; i < XSCHED_OBJ_NR; i++)
		if (atomic_read(&xsched_objs[i]))
			pr_err("xsched: leaked %d %s\n",
			       atomic_read(&xsched_objs[i]), xsched_obj_names[i]);
}
