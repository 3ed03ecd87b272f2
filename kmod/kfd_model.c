// SPDX-License-Identifier: GPL-2.0
/*
 * The kfd backend: the KFD model (tests only).
 *
 * The failure paths of the backend run only on a GPU: a reset (job timeout, RAS,
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
#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "kfd_backend.h"

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

bool xkfd_model_file(struct file *file)
{
	return file->f_op == &xkfd_model_fops;
}

struct kfd_process *xkfd_model_process(struct file *file)
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

