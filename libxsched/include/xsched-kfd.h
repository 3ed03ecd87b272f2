/* SPDX-License-Identifier: MIT */
/*
 * libxsched's kfd platform: real amdgpu queues (HSA queues) at Lv3.
 */
#ifndef XSCHED_KFD_H
#define XSCHED_KFD_H

#include <xsched.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * How a struct xsched_kfd reaches KFD (Documentation/libxsched.rst, "The kfd
 * platform"): through the xsched_kfd module (XSCHED_IOC_KFD_ATTACH), or,
 * when /dev/xsched or its kfd backend is absent (or XSCHED_KFD_FALLBACK=
 * debugger), through KFD's debugger API on the own process, which turns on
 * KFD debug mode for the process while it is open.
 */
enum xsched_kfd_mode {
	XSCHED_KFD_MODULE = 1,
	XSCHED_KFD_DEBUGGER = 2,
};

struct xsched_kfd_info {
	uint32_t mode;		/* enum xsched_kfd_mode */
	uint32_t gpu_count;	/* module: GPUs of the KFD process at attach */
	uint32_t kfd_major;	/* debugger: KFD uAPI version */
	uint32_t kfd_minor;
	/* debugger: KFD's runtime state at enable (0 disabled: the HSA runtime
	 * has not called runtime enable yet, suspends give -EPERM; 1 enabled) */
	uint32_t runtime_state;
	uint32_t reserved[3];
};

struct xsched_kfd;

/*
 * Open the kfd platform for this process.  @kfd_fd: the process's /dev/kfd
 * fd (kept open by the caller until xsched_kfd_close()), or -1 to open
 * /dev/kfd here.  @xsched_path: NULL for /dev/xsched.  Errors: the module's
 * attach errnos (Documentation/kfd-backend.rst), -EALREADY (debugger API:
 * another debugger has this process), -EOPNOTSUPP (no debugger API).
 */
int xsched_kfd_open(struct xsched_kfd **kp, int kfd_fd, const char *xsched_path);
/* Close; every XQueue of it must have been destroyed.  Debugger mode: KFD
 * debug mode is disabled again. */
void xsched_kfd_close(struct xsched_kfd *k);
int xsched_kfd_query(const struct xsched_kfd *k, struct xsched_kfd_info *info);
int xsched_kfd_fd(const struct xsched_kfd *k);
struct xsched_platform *xsched_kfd_platform(struct xsched_kfd *k);
/*
 * An XQueue over the HSA queue whose ring starts at @ring_base
 * (hsa_queue_t.base_address).  Lv3 only (other levels: -EOPNOTSUPP); the
 * runtime keeps writing the queue itself, so xsched_submit() on it gives
 * -EOPNOTSUPP.  -ENOENT: no queue of this process has that ring.
 */
int xsched_xqueue_create_kfd(struct xsched_xqueue **xqp, struct xsched_kfd *k,
			     uint64_t ring_base, const struct xsched_attr *attr);

#ifdef __cplusplus
}
#endif

#endif /* XSCHED_KFD_H */
