/* SPDX-License-Identifier: MIT */
/*
 * libxsched's sim platform: XQueues over the software GPU of xsched_sim.ko
 * (a test device; Documentation/sim.rst).  Its packets and ioctls are in
 * <linux/xsched_sim.h>.
 */
#ifndef XSCHED_SIM_H
#define XSCHED_SIM_H

#include <xsched.h>

#ifdef __cplusplus
extern "C" {
#endif

struct xsched_sim;		/* an open /dev/xsched_sim and /dev/xsched client */

/* Open /dev/xsched (or @path), check the API version and the sim backend,
 * and open /dev/xsched_sim. */
int xsched_sim_open(struct xsched_sim **simp, const char *path);
/* Close; every XQueue of this sim must have been destroyed. */
void xsched_sim_close(struct xsched_sim *sim);
/* The /dev/xsched_sim fd, for direct sim ioctls (<linux/xsched_sim.h>) and as
 * XSCHED_IOC_REGISTER's backend_fd. */
int xsched_sim_fd(const struct xsched_sim *sim);
/* Allocate sim device memory and map it; *cpu stays valid until close. */
int xsched_sim_alloc(struct xsched_sim *sim, uint64_t size, uint64_t *gpu_addr,
		     void **cpu);
/* Create a sim queue of @ring_size packets (power of two). */
int xsched_sim_queue_create(struct xsched_sim *sim, uint32_t ring_size,
			    uint32_t *queue_id);
/* The platform object of this sim client (owned by the sim). */
struct xsched_platform *xsched_sim_platform(struct xsched_sim *sim);

/* xsched_xqueue_create() for sim queue @queue_id of @sim. */
int xsched_xqueue_create_sim(struct xsched_xqueue **xqp, struct xsched_sim *sim,
			     uint32_t queue_id, const struct xsched_attr *attr);

#ifdef __cplusplus
}
#endif

#endif /* XSCHED_SIM_H */
