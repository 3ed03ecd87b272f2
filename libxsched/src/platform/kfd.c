// SPDX-License-Identifier: MIT
/*
 * The kfd platform: XQueues over real amdgpu compute queues (HSA queues),
 * at Lv3 (CWSR save/restore).
 *
 * The HIP runtime writes AQL packets into its HSA queues and rings their
 * doorbells itself; libxsched only suspends and resumes them, so there is no
 * launch path (xsched_submit() gives -EOPNOTSUPP) and no worker thread.
 *
 * Two ways to reach KFD:
 *
 *   module    /dev/xsched with the kfd backend: XSCHED_IOC_KFD_ATTACH with
 *             the process's /dev/kfd fd, then XSCHED_IOC_REGISTER (backend
 *             XSCHED_BACKEND_KFD, handle = ring base address) gives a queue
 *             fd for SUSPEND (SAVE) / RESUME / QUERY / poll, as for sim
 *             queues; the module's arbiter can own it (arbiter mode).
 *   debugger  no module: KFD's debugger API on the own process
 *             (AMDKFD_IOC_DBG_TRAP, uAPI 1.13+): ENABLE on getpid(),
 *             GET_QUEUE_SNAPSHOT to map a ring base to a queue id (and to
 *             clear EC_QUEUE_NEW, without which KFD skips new queues), then
 *             SUSPEND_QUEUES / RESUME_QUEUES with that id.  Side effects:
 *             see Documentation/libxsched.rst ("The kfd platform").
 *
 * XSCHED_KFD_FALLBACK selects: unset or "auto" (module, else debugger when
 * /dev/xsched or its kfd backend is absent), "module" (never the debugger
 * API), "debugger" (always the debugger API).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/xsched_kfd.h>

#include "../internal.h"
#include "kfd_dbg.h"

struct xsched_kfd {
	int mode;		/* XSCHED_KFD_MODULE or XSCHED_KFD_DEBUGGER */
	int kfd_fd;
	bool own_kfd;		/* opened here, closed at close */
	int xfd;		/* module: the /dev/xsched client */
	int evfd;		/* debugger: the event fd KFD was given */
	bool dbg_enabled;	/* debugger: DBG_TRAP_ENABLE succeeded */
	struct xsched_kfd_info info;
	struct xsched_platform plat;
	pthread_mutex_t lock;	/* debugger: serialises DBG_TRAP calls */
};

struct kfd_queue {
	struct xsched_kfd *k;
	uint64_t ring;
	struct xs_modq mq;	/* module mode; mq.prio also in debugger mode */
	char what[40];		/* "kfd ring 0x...", for messages */
	/* debugger */
	uint32_t queue_id;
	uint64_t rptr_addr, wptr_addr;
	bool suspended;
	uint64_t suspends, since_ns, last_ns, max_ns, total_ns;
	int32_t last_error;
	bool failed;
};

/* ---- pure logic (unit-tested) ------------------------------------------ */

int xs_kfd_parse_fallback(const char *env)
{
	if (!env || !*env || !strcmp(env, "auto"))
		return XS_KFD_AUTO;
	if (!strcmp(env, "module") || !strcmp(env, "none"))
		return XSCHED_KFD_MODULE;
	if (!strcmp(env, "debugger"))
		return XSCHED_KFD_DEBUGGER;
	return -EINVAL;
}

int xs_kfd_choose(int want, int module_err)
{
	if (want == XSCHED_KFD_DEBUGGER)
		return XSCHED_KFD_DEBUGGER;
	if (!module_err)
		return XSCHED_KFD_MODULE;
	if (want == XSCHED_KFD_MODULE)
		return module_err;
	/* auto: fall back only when the module is absent, not when it refused */
	if (module_err == -ENOENT || module_err == -ENODEV || module_err == -ENXIO)
		return XSCHED_KFD_DEBUGGER;
	return module_err;
}

int xs_kfd_dbg_queue_status(uint32_t status)
{
	if (status & XS_KFD_DBG_QUEUE_ERROR)
		return -EIO;
	if (status & XS_KFD_DBG_QUEUE_INVALID)
		return -ENODEV;
	return 0;
}

const char *xs_kfd_dbg_strerror(int op, int err)
{
	switch (err) {
	case -EALREADY:
		return "another debugger (rocgdb?) or another xsched_kfd already has KFD debug mode on this process";
	case -EPERM:
		return op == XS_KFD_OP_ENABLE ?
		       "KFD refused: not the own process" :
		       "the HSA runtime has not enabled the KFD runtime (hsaKmtRuntimeEnable) in this process yet";
	case -EINVAL:
		return op == XS_KFD_OP_ENABLE ?
		       "KFD refused debug mode (sched_policy=2, no HWS?)" :
		       "debug mode is not enabled on this process";
	case -ENODEV:
		return "a GPU of this process is not SOC15 (no debugger support)";
	case -EBUSY:
		return op == XS_KFD_OP_ENABLE ?
		       "a GPU of this process uses GWS without debugger support" :
		       "KFD is busy";
	case -ENOTTY:
		return "this KFD has no debugger API (uAPI older than 1.13)";
	default:
		return strerror(-err);
	}
}

int xs_kfd_snapshot_find(const void *buf, uint32_t n, uint32_t stride,
			 uint64_t ring, struct xs_kfd_qent *out)
{
#if XS_HAVE_KFD_DBG
	const unsigned char *p = buf;
	uint32_t i;

	if (stride < offsetof(struct kfd_queue_snapshot_entry, reserved))
		return -EPROTO;
	if (!ring)
		return -ENOENT;
	for (i = 0; i < n; i++) {
		struct kfd_queue_snapshot_entry e;

		memcpy(&e, p + (size_t)i * stride,
		       stride < sizeof(e) ? stride : sizeof(e));
		if (e.ring_base_address != ring)
			continue;
		out->queue_id = e.queue_id;
		out->gpu_id = e.gpu_id;
		out->rptr_addr = e.read_pointer_address;
		out->wptr_addr = e.write_pointer_address;
		out->ring_size = e.ring_size;
		out->save_area_size = e.ctx_save_restore_area_size;
		if (e.queue_type != KFD_IOC_QUEUE_TYPE_COMPUTE_AQL)
			return -EOPNOTSUPP;
		if (!e.ctx_save_restore_area_size)
			return -EOPNOTSUPP;
		return 0;
	}
	return -ENOENT;
#else
	(void)buf; (void)n; (void)stride; (void)ring; (void)out;
	return -EOPNOTSUPP;
#endif
}

/* ---- shared ------------------------------------------------------------ */

static uint32_t kfd_ring_size(struct xsched_platform *p, void *pq)
{
	(void)p;
	(void)pq;
	return XSCHED_THRESHOLD_MAX;	/* not used: no Lv1 on this platform */
}

/* ---- module mode ------------------------------------------------------- */

static int mod_bind(struct xsched_platform *p, uint64_t handle, int32_t prio,
		    unsigned int flags, void **pqp)
{
	struct kfd_queue *q;
	int ret;

	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->k = p->priv;
	q->ring = handle;
	snprintf(q->what, sizeof(q->what), "kfd ring %#llx", (unsigned long long)handle);
	ret = xs_modq_register(&q->mq, q->k->xfd, XSCHED_BACKEND_KFD, 0, handle, prio,
			       flags & XS_BIND_ARBITER ? XSCHED_REGISTER_ARBITRATE : 0,
			       q->what);
	if (ret < 0) {
		xs_info("kfd ring %#llx: register: %s%s", (unsigned long long)handle,
			strerror(-ret),
			ret == -EBUSY ? " (KFD debug mode is on for this process: rocgdb, or the debugger-API fallback, has it)" :
			ret == -ENOENT ? " (no queue of this process has that ring base)" : "");
		free(q);
		return ret;
	}
	*pqp = q;
	return 0;
}

static void kfd_unbind(struct xsched_platform *p, void *pq);

static int mod_set_arbiter(struct xsched_platform *p, void *pq, bool on)
{
	struct kfd_queue *q = pq;

	(void)p;
	return xs_modq_set_arbiter(&q->mq, on, q->what);
}

static int mod_stop_fd(struct xsched_platform *p, void *pq, short *events)
{
	(void)p;
	*events = POLLPRI;
	return ((struct kfd_queue *)pq)->mq.qfd;
}

static int mod_completed(struct xsched_platform *p, void *pq, uint64_t *done)
{
	struct xsched_queue_info qi;
	int ret;

	(void)p;
	ret = xs_modq_query(&((struct kfd_queue *)pq)->mq, &qi);
	if (ret)
		return ret;
	*done = qi.rptr;
	return qi.state == XSCHED_STATE_FAILED ? -EIO : 0;
}

static int kfd_wait(struct xsched_platform *p, void *pq, uint64_t hw_seq,
		    int64_t timeout_ns)
{
	uint64_t start = xs_now_ns(), done;
	int ret;

	for (;;) {
		ret = p->ops->completed(p, pq, &done);
		if (ret)
			return ret;
		if (done >= hw_seq)
			return 0;
		if (timeout_ns >= 0 && (int64_t)(xs_now_ns() - start) >= timeout_ns)
			return -ETIMEDOUT;
		usleep(100);
	}
}

static int mod_suspend(struct xsched_platform *p, void *pq, int mode,
		       bool nonblock)
{
	(void)p;
	return xs_modq_suspend(&((struct kfd_queue *)pq)->mq, mode, nonblock);
}

static int mod_resume(struct xsched_platform *p, void *pq)
{
	(void)p;
	return xs_modq_resume(&((struct kfd_queue *)pq)->mq);
}

static int mod_wait_suspended(struct xsched_platform *p, void *pq,
			      int64_t timeout_ns)
{
	(void)p;
	return xs_modq_wait_suspended(&((struct kfd_queue *)pq)->mq, timeout_ns);
}

static int mod_poll_fd(struct xsched_platform *p, void *pq)
{
	(void)p;
	return ((struct kfd_queue *)pq)->mq.qfd;
}

static int mod_query(struct xsched_platform *p, void *pq, struct xs_hw_info *hw)
{
	(void)p;
	return xs_modq_hw_info(&((struct kfd_queue *)pq)->mq, hw);
}

static int mod_set_priority(struct xsched_platform *p, void *pq, int32_t prio)
{
	(void)p;
	return xs_modq_set_priority(&((struct kfd_queue *)pq)->mq, prio);
}

static const struct xs_platform_ops kfd_module_ops = {
	.name = "kfd",
	.cmd_size = 64,			/* an AQL packet */
	.max_level = XSCHED_LV3,
	.min_level = XSCHED_LV3,
	.max_submit = 1,
	.ring_size = kfd_ring_size,
	.bind = mod_bind,
	.unbind = kfd_unbind,
	.wait = kfd_wait,
	.completed = mod_completed,
	.suspend = mod_suspend,
	.resume = mod_resume,
	.wait_suspended = mod_wait_suspended,
	.poll_fd = mod_poll_fd,
	.query = mod_query,
	.set_priority = mod_set_priority,
	.set_arbiter = mod_set_arbiter,
	.stop_fd = mod_stop_fd,
};

/* ---- debugger mode ----------------------------------------------------- */

#if XS_HAVE_KFD_DBG
static int dbg_trap(struct xsched_kfd *k, struct kfd_ioctl_dbg_trap_args *a)
{
	a->pid = (uint32_t)getpid();
	return xs_ioctl(k->kfd_fd, AMDKFD_IOC_DBG_TRAP, a);
}

/* Snapshot the process's queues, clearing EC_QUEUE_NEW on all of them. */
static int dbg_find(struct xsched_kfd *k, uint64_t ring, struct xs_kfd_qent *e)
{
	struct kfd_ioctl_dbg_trap_args a;
	const uint32_t stride = sizeof(struct kfd_queue_snapshot_entry);
	void *buf = NULL;
	uint32_t n = 0, cap;
	int ret, tries;

	for (tries = 0; tries < 4; tries++) {
		cap = n + 8;
		free(buf);
		buf = calloc(cap, stride);
		if (!buf)
			return -ENOMEM;
		memset(&a, 0, sizeof(a));
		a.op = KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT;
		a.queue_snapshot.exception_mask = KFD_EC_MASK(EC_QUEUE_NEW);
		a.queue_snapshot.snapshot_buf_ptr = (uint64_t)(uintptr_t)buf;
		a.queue_snapshot.num_queues = cap;
		a.queue_snapshot.entry_size = stride;
		ret = dbg_trap(k, &a);
		if (ret < 0) {
			free(buf);
			return ret;
		}
		n = a.queue_snapshot.num_queues;
		if (n <= cap)
			break;
	}
	ret = xs_kfd_snapshot_find(buf, n < cap ? n : cap, stride, ring, e);
	free(buf);
	return ret;
}
#endif

static int dbg_bind(struct xsched_platform *p, uint64_t handle, int32_t prio,
		    unsigned int flags, void **pqp)
{
#if XS_HAVE_KFD_DBG
	struct xsched_kfd *k = p->priv;
	struct xs_kfd_qent e;
	struct kfd_queue *q;
	int ret;

	(void)flags;	/* no arbiter: set_arbiter is NULL */
	pthread_mutex_lock(&k->lock);
	ret = dbg_find(k, handle, &e);
	pthread_mutex_unlock(&k->lock);
	if (ret) {
		xs_info("kfd (debugger API) ring %#llx: %s",
			(unsigned long long)handle,
			ret == -ENOENT ? "no queue of this process has that ring base" :
			ret == -EOPNOTSUPP ? "not a compute AQL queue with a CWSR save area" :
			xs_kfd_dbg_strerror(XS_KFD_OP_SNAPSHOT, ret));
		return ret;
	}
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->k = k;
	q->ring = handle;
	q->mq.qfd = -1;
	q->mq.prio = prio;
	q->queue_id = e.queue_id;
	q->rptr_addr = e.rptr_addr;
	q->wptr_addr = e.wptr_addr;
	xs_info("kfd (debugger API) ring %#llx: KFD queue %u on gpu %#x, save area %u bytes",
		(unsigned long long)handle, e.queue_id, e.gpu_id, e.save_area_size);
	*pqp = q;
	return 0;
#else
	(void)p; (void)handle; (void)prio; (void)flags; (void)pqp;
	return -EOPNOTSUPP;
#endif
}

/* Read a u64 of the own process without faulting (the queue may be gone). */
static int read_u64(uint64_t addr, uint64_t *v)
{
	struct iovec l = { v, sizeof(*v) };
	struct iovec r = { (void *)(uintptr_t)addr, sizeof(*v) };

	if (!addr)
		return -EFAULT;
	if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != (ssize_t)sizeof(*v))
		return -EFAULT;
	return 0;
}

static int dbg_completed(struct xsched_platform *p, void *pq, uint64_t *done)
{
	struct kfd_queue *q = pq;

	(void)p;
	if (q->failed)
		return -EIO;
	if (read_u64(q->rptr_addr, done))
		*done = 0;
	return 0;
}

#if XS_HAVE_KFD_DBG
static int dbg_queue_op(struct kfd_queue *q, bool suspend)
{
	struct kfd_ioctl_dbg_trap_args a;
	uint32_t id = q->queue_id;
	int ret;

	memset(&a, 0, sizeof(a));
	if (suspend) {
		a.op = KFD_IOC_DBG_TRAP_SUSPEND_QUEUES;
		a.suspend_queues.queue_array_ptr = (uint64_t)(uintptr_t)&id;
		a.suspend_queues.num_queues = 1;
		a.suspend_queues.grace_period = 0;	/* trap at once */
		a.suspend_queues.exception_mask = 0;
	} else {
		a.op = KFD_IOC_DBG_TRAP_RESUME_QUEUES;
		a.resume_queues.queue_array_ptr = (uint64_t)(uintptr_t)&id;
		a.resume_queues.num_queues = 1;
	}
	pthread_mutex_lock(&q->k->lock);
	ret = dbg_trap(q->k, &a);
	pthread_mutex_unlock(&q->k->lock);
	if (ret < 0) {
		xs_warn("kfd (debugger API) queue %u: %s: %s", q->queue_id,
			suspend ? "suspend" : "resume",
			xs_kfd_dbg_strerror(XS_KFD_OP_QUEUES, ret));
		return ret;
	}
	if (ret == 1)
		return 0;
	ret = xs_kfd_dbg_queue_status(id);
	if (!ret)
		ret = -EIO;
	xs_warn("kfd (debugger API) queue %u: %s: KFD status %#x (%s)", q->queue_id,
		suspend ? "suspend" : "resume", id,
		ret == -ENODEV ? "queue gone or new" : "hardware failure");
	return ret;
}
#endif

static int dbg_suspend(struct xsched_platform *p, void *pq, int mode,
		       bool nonblock)
{
	struct kfd_queue *q = pq;
	int ret;

	(void)p;
	(void)nonblock;		/* SUSPEND_QUEUES is synchronous */
	if (mode != XS_MODE_SAVE)
		return -EOPNOTSUPP;
	if (q->failed)
		return -EIO;
	if (q->suspended)
		return -EALREADY;
#if XS_HAVE_KFD_DBG
	uint64_t t0 = xs_now_ns();

	ret = dbg_queue_op(q, true);
	if (ret) {
		q->last_error = ret;
		if (ret == -EIO || ret == -ENODEV)
			q->failed = true;
		return ret;
	}
	q->last_ns = xs_now_ns() - t0;
	q->total_ns += q->last_ns;
	if (q->last_ns > q->max_ns)
		q->max_ns = q->last_ns;
	q->suspends++;
	q->suspended = true;
	return 0;
#else
	ret = -EOPNOTSUPP;
	return ret;
#endif
}

static int dbg_resume(struct xsched_platform *p, void *pq)
{
	struct kfd_queue *q = pq;

	(void)p;
	if (!q->suspended)
		return -EALREADY;
#if XS_HAVE_KFD_DBG
	int ret = dbg_queue_op(q, false);

	if (ret) {
		q->last_error = ret;
		if (ret == -EIO || ret == -ENODEV)
			q->failed = true;
		return ret;
	}
	q->suspended = false;
	return 0;
#else
	return -EOPNOTSUPP;
#endif
}

static int dbg_wait_suspended(struct xsched_platform *p, void *pq,
			      int64_t timeout_ns)
{
	struct kfd_queue *q = pq;

	(void)p;
	(void)timeout_ns;
	if (q->failed)
		return -EIO;
	return q->suspended ? 0 : -ECANCELED;
}

static int dbg_query(struct xsched_platform *p, void *pq, struct xs_hw_info *hw)
{
	struct kfd_queue *q = pq;

	(void)dbg_completed(p, pq, &hw->completed);
	hw->suspends = q->suspends;
	hw->last_suspend_ns = q->last_ns;
	hw->max_suspend_ns = q->max_ns;
	hw->total_suspend_ns = q->total_ns;
	hw->state = q->failed ? XS_HW_FAILED :
		    q->suspended ? XS_HW_SUSPENDED : XS_HW_ACTIVE;
	hw->last_error = q->last_error;
	return 0;
}

static void kfd_unbind(struct xsched_platform *p, void *pq)
{
	struct kfd_queue *q = pq;

	(void)p;
	xs_modq_close(&q->mq);	/* module mode: the module resumes it */
#if XS_HAVE_KFD_DBG
	if (q->suspended && !q->failed && dbg_queue_op(q, false))
		xs_err("kfd (debugger API) queue %u: left suspended; KFD resumes it when debug mode is disabled",
		       q->queue_id);
#endif
	free(q);
}

static const struct xs_platform_ops kfd_dbg_ops = {
	.name = "kfd-debugger",
	.cmd_size = 64,
	.max_level = XSCHED_LV3,
	.min_level = XSCHED_LV3,
	.max_submit = 1,
	.ring_size = kfd_ring_size,
	.bind = dbg_bind,
	.unbind = kfd_unbind,
	.wait = kfd_wait,
	.completed = dbg_completed,
	.suspend = dbg_suspend,
	.resume = dbg_resume,
	.wait_suspended = dbg_wait_suspended,
	.query = dbg_query,
};

/* ---- open / close ------------------------------------------------------ */

static int open_module(struct xsched_kfd *k, const char *path)
{
	struct xsched_version ver;
	struct xsched_kfd_attach at;
	int ret;

	k->xfd = open(path, O_RDWR | O_CLOEXEC);
	if (k->xfd < 0)
		return -errno;
	memset(&ver, 0, sizeof(ver));
	ret = xs_ioctl(k->xfd, XSCHED_IOC_VERSION, &ver);
	if (ret < 0)
		goto fail;
	if (ver.api_version != XSCHED_API_VERSION) {
		xs_err("%s speaks uAPI v%u, libxsched v%u", path, ver.api_version,
		       XSCHED_API_VERSION);
		ret = -EPROTO;
		goto fail;
	}
	if (!(ver.backends & (1U << XSCHED_BACKEND_KFD))) {
		xs_info("%s has no kfd backend (built without KFD_SRC)", path);
		ret = -ENODEV;
		goto fail;
	}
	memset(&at, 0, sizeof(at));
	at.kfd_fd = (uint32_t)k->kfd_fd;
	ret = xs_ioctl(k->xfd, XSCHED_IOC_KFD_ATTACH, &at);
	if (ret < 0) {
		xs_err("%s: attaching /dev/kfd fd %d: %s%s", path, k->kfd_fd,
		       strerror(-ret),
		       ret == -ENOEXEC ? " (the module was built against another amdgpu; see dmesg)" :
		       ret == -EINVAL ? " (not a /dev/kfd fd)" : "");
		/* a refusal is not "module absent": never fall back on it */
		ret = ret == -ENODEV ? -EIO : ret;
		goto fail;
	}
	k->info.gpu_count = at.gpu_count;
	k->plat.ops = &kfd_module_ops;
	return 0;
fail:
	close(k->xfd);
	k->xfd = -1;
	return ret;
}

/* KFD debug mode on the own process. */
static int dbg_enable(struct xsched_kfd *k)
{
#if XS_HAVE_KFD_DBG
	struct kfd_ioctl_get_version_args v;
	struct kfd_ioctl_dbg_trap_args a;
	struct kfd_runtime_info ri;
	int ret;

	memset(&v, 0, sizeof(v));
	ret = xs_ioctl(k->kfd_fd, AMDKFD_IOC_GET_VERSION, &v);
	if (ret < 0)
		return ret;
	k->info.kfd_major = v.major_version;
	k->info.kfd_minor = v.minor_version;
	if (v.major_version != 1 || v.minor_version < 13) {
		xs_err("KFD uAPI %u.%u has no debugger API (1.13 or later needed)",
		       v.major_version, v.minor_version);
		return -EOPNOTSUPP;
	}
	k->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (k->evfd < 0)
		return -errno;
	memset(&a, 0, sizeof(a));
	memset(&ri, 0, sizeof(ri));
	a.op = KFD_IOC_DBG_TRAP_ENABLE;
	a.enable.exception_mask = 0;
	a.enable.rinfo_ptr = (uint64_t)(uintptr_t)&ri;
	a.enable.rinfo_size = sizeof(ri);
	a.enable.dbg_fd = (uint32_t)k->evfd;
	ret = dbg_trap(k, &a);
	if (ret < 0) {
		xs_err("KFD debugger API: enable: %s",
		       xs_kfd_dbg_strerror(XS_KFD_OP_ENABLE, ret));
		close(k->evfd);
		k->evfd = -1;
		return ret;
	}
	k->dbg_enabled = true;
	k->info.runtime_state = ri.runtime_state;
	xs_warn("KFD debugger API enabled on this process (the module is not used): KFD debug mode is on%s; rocgdb cannot attach and the module refuses kfd queues while it is open",
		ri.runtime_state == DEBUG_RUNTIME_STATE_ENABLED ?
		", GFXOFF is off and the runtime list was refreshed" :
		"; the HSA runtime has not enabled the KFD runtime yet, so suspend gives -EPERM until it does");
	return 0;
#else
	(void)k;
	xs_err("libxsched was built without <linux/kfd_ioctl.h> 1.13+: no debugger API fallback");
	return -EOPNOTSUPP;
#endif
}

static int open_debugger(struct xsched_kfd *k)
{
	int ret = dbg_enable(k);

	if (!ret)
		k->plat.ops = &kfd_dbg_ops;
	return ret;
}

static void close_debugger(struct xsched_kfd *k)
{
#if XS_HAVE_KFD_DBG
	if (k->dbg_enabled) {
		struct kfd_ioctl_dbg_trap_args a;
		int ret;

		memset(&a, 0, sizeof(a));
		a.op = KFD_IOC_DBG_TRAP_DISABLE;
		ret = dbg_trap(k, &a);
		if (ret < 0)
			xs_err("KFD debugger API: disable: %s", strerror(-ret));
		k->dbg_enabled = false;
	}
#endif
	if (k->evfd >= 0)
		close(k->evfd);
	k->evfd = -1;
}

XS_EXPORT int xsched_kfd_open(struct xsched_kfd **kp, int kfd_fd,
			      const char *xsched_path)
{
	struct xsched_kfd *k;
	int want, mode, ret = 0;

	if (!kp)
		return -EINVAL;
	*kp = NULL;
	want = xs_kfd_parse_fallback(getenv("XSCHED_KFD_FALLBACK"));
	if (want < 0) {
		xs_err("XSCHED_KFD_FALLBACK=%s: expected auto, module or debugger",
		       getenv("XSCHED_KFD_FALLBACK"));
		return -EINVAL;
	}
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->xfd = -1;
	k->evfd = -1;
	k->kfd_fd = kfd_fd;
	if (kfd_fd < 0) {
		k->kfd_fd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
		if (k->kfd_fd < 0) {
			ret = -errno;
			xs_info("cannot open /dev/kfd: %s", strerror(-ret));
			free(k);
			return ret;
		}
		k->own_kfd = true;
	}
	if (!xsched_path)
		xsched_path = "/dev/" XSCHED_DEVICE_NAME;
	if (want != XSCHED_KFD_DEBUGGER)
		ret = open_module(k, xsched_path);
	mode = xs_kfd_choose(want, ret);
	if (mode == XSCHED_KFD_DEBUGGER) {
		if (want != XSCHED_KFD_DEBUGGER)
			xs_info("%s: %s; using KFD's debugger API", xsched_path,
				strerror(-ret));
		ret = open_debugger(k);
	} else if (mode < 0) {
		ret = mode;
	}
	if (ret) {
		if (k->own_kfd)
			close(k->kfd_fd);
		free(k);
		return ret;
	}
	k->mode = mode;
	k->info.mode = (uint32_t)mode;
	pthread_mutex_init(&k->lock, NULL);
	k->plat.priv = k;
	*kp = k;
	return 0;
}

XS_EXPORT void xsched_kfd_close(struct xsched_kfd *k)
{
	if (!k)
		return;
	if (k->xfd >= 0)
		close(k->xfd);
	close_debugger(k);
	if (k->own_kfd)
		close(k->kfd_fd);
	pthread_mutex_destroy(&k->lock);
	free(k);
}

XS_EXPORT int xsched_kfd_query(const struct xsched_kfd *k,
			       struct xsched_kfd_info *info)
{
	if (!k || !info)
		return -EINVAL;
	*info = k->info;
	return 0;
}

XS_EXPORT int xsched_kfd_fd(const struct xsched_kfd *k)
{
	return k ? k->kfd_fd : -EINVAL;
}

XS_EXPORT struct xsched_platform *xsched_kfd_platform(struct xsched_kfd *k)
{
	return k ? &k->plat : NULL;
}

XS_EXPORT int xsched_xqueue_create_kfd(struct xsched_xqueue **xqp,
				       struct xsched_kfd *k, uint64_t ring_base,
				       const struct xsched_attr *attr)
{
	if (!k)
		return -EINVAL;
	return xsched_xqueue_create(xqp, &k->plat, ring_base, attr);
}
