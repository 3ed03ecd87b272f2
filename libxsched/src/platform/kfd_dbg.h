/* SPDX-License-Identifier: MIT */
/*
 * The kfd platform's pure logic, shared with the unit tests: fallback
 * selection, KFD debugger-API status and errno mapping, queue snapshot
 * parsing.
 *
 * <linux/kfd_ioctl.h> comes from the system (linux-libc-dev) when it has the
 * debugger API (uAPI 1.13+), else from the kernel headers the Makefile finds
 * (KFD_UAPI_HDR); without either the debugger fallback is compiled out and
 * answers -EOPNOTSUPP.
 */
#ifndef XSCHED_KFD_DBG_H
#define XSCHED_KFD_DBG_H

#include <stdint.h>

#include "xsched-kfd.h"

/* Only the header the Makefile chose: an older system header (Debian 12's
 * linux-libc-dev) has no debugger API and needs <drm/drm.h> from libdrm. */
#if defined(XS_KFD_UAPI) && XS_KFD_UAPI
#include <linux/kfd_ioctl.h>
#endif
#if defined(KFD_IOCTL_MINOR_VERSION) && KFD_IOCTL_MINOR_VERSION >= 13 && \
	defined(AMDKFD_IOC_DBG_TRAP)
#define XS_HAVE_KFD_DBG 1
#else
#define XS_HAVE_KFD_DBG 0
#endif

#define XS_KFD_AUTO 0

/* Status bits KFD writes into the queue-id array (KFD_DBG_QUEUE_*_MASK). */
#define XS_KFD_DBG_QUEUE_ERROR (1U << 30)
#define XS_KFD_DBG_QUEUE_INVALID (1U << 31)

/* Which debugger operation an errno came from, for xs_kfd_dbg_strerror(). */
enum { XS_KFD_OP_ENABLE = 1, XS_KFD_OP_QUEUES = 2, XS_KFD_OP_SNAPSHOT = 3 };

struct xs_kfd_qent {
	uint32_t queue_id, gpu_id, ring_size, save_area_size;
	uint64_t rptr_addr, wptr_addr;
};

/* XSCHED_KFD_FALLBACK: XS_KFD_AUTO, XSCHED_KFD_MODULE, XSCHED_KFD_DEBUGGER,
 * or -EINVAL. */
int xs_kfd_parse_fallback(const char *env);
/* The mode to use given what was wanted and how opening the module went
 * (0 or a negative errno); a negative errno if none. */
int xs_kfd_choose(int want, int module_err);
/* A queue's status word after SUSPEND/RESUME_QUEUES: 0, -EIO, -ENODEV. */
int xs_kfd_dbg_queue_status(uint32_t status);
const char *xs_kfd_dbg_strerror(int op, int err);
/* Find @ring in @n snapshot entries @stride bytes apart: 0, -ENOENT,
 * -EOPNOTSUPP (not compute AQL, or no CWSR area; *out filled), -EPROTO. */
int xs_kfd_snapshot_find(const void *buf, uint32_t n, uint32_t stride,
			 uint64_t ring, struct xs_kfd_qent *out);

#endif /* XSCHED_KFD_DBG_H */
