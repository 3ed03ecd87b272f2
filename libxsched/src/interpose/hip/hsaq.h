/* SPDX-License-Identifier: MIT */
/*
 * Lv3 on ROCm: the hardware (HSA) queue behind each HIP stream
 * (Documentation/hip.rst, "Lv3 on ROCm").
 *
 * hip/hsaq.c hooks the HSA runtime's queue creation (hsa_queue_create, exported
 * from libxsched.so at ROCr's version node ROCR_1; the real function is the
 * next object's) and records each queue: ring base, size, doorbell, id.
 * hsa_queue_destroy forgets it.
 *
 * Which queue a stream's launches reach: hip/hooks.c calls
 * xsi_hip_launch_observe_begin/end() around every real launch.  Until the
 * stream's queue is known, begin reads the write index of every known queue
 * and end reads them again; when exactly one moved and no other observed
 * launch overlapped, that is the stream's queue.  Otherwise (none moved,
 * several moved, a concurrent launch) it tries again at the stream's next
 * launch, saying so at XSCHED_LOG=debug, and gives up after
 * XS_HSAQ_TRIES launches with a warning.  Once known, the observation costs
 * one lookup.
 *
 * A learned queue gets a preemptor by its ring: the sim by ring address when
 * the ring is a sim queue's (the stand-in runtime in the VM), else the kfd
 * platform (the module's kfd backend, or KFD's debugger API), and the stream
 * goes to Lv3 (unless XSCHED_LEVEL says 1 or 2), so that the policy suspends
 * it with SAVE.  A queue that several streams reach is never suspended for
 * one of them: its streams stay at Lv1 (held at launch), and one line names
 * the streams sharing each queue.  Both happen on a helper thread: the call
 * points run with the stream's XQueue locked.
 *
 * Thread safety: all of it.
 */
#ifndef XSCHED_INTERPOSE_HSAQ_H
#define XSCHED_INTERPOSE_HSAQ_H

#include <stdbool.h>
#include <stdint.h>

#include "../interpose.h"

#define XS_HSAQ_TRIES	64	/* launches observed before giving up on a stream */

/* The call points of hip/hooks.c, around each real launch on @s. */
void xsi_hip_launch_observe_begin(struct xsi_stream *s);
void xsi_hip_launch_observe_end(struct xsi_stream *s);

/* Once the HIP runtime is there: one warning if the user's environment
 * keeps the runtime from separating priority classes (hip/hsaq.c, hsaq_env). */
void xs_hsaq_env_report(void);

/* What hip/hsaq.c knows of a stream (tests, the log). */
struct xs_hsaq_stream_info {
	uint64_t ring;		/* its queue's ring base; 0: not known (yet) */
	uint64_t queue_id;	/* hsa_queue_t.id */
	unsigned int tries;	/* observations that did not decide */
	unsigned int sharers;	/* streams on its queue, itself included */
	bool gave_up;
	bool preempted;		/* has a preemptor for its queue */
	unsigned int level;	/* the level hip/hsaq.c last set (0: none) */
};
int xs_hsaq_stream_info(const struct xsi_stream *s, struct xs_hsaq_stream_info *out);

/*
 * Give @xq a preemptor for the queue with ring @ring; 0 or -errno.  @via
 * names the platform for the log.  The default tries the sim by ring, then
 * kfd; tests put their own.
 */
typedef int (*xs_hsaq_attach_fn)(struct xsched_xqueue *xq, uint64_t ring,
				 const char **via);
void xs_hsaq_set_attach(xs_hsaq_attach_fn fn);
/* The default; called by one thread at a time (the helper thread). */
int xs_hsaq_attach_default(struct xsched_xqueue *xq, uint64_t ring, const char **via);
/* Tests: wait until the helper thread has nothing left to do. */
void xs_hsaq_settle(void);
/* The last sharing line (tests); "" if none was printed. */
const char *xs_hsaq_shared_line(void);

#endif /* XSCHED_INTERPOSE_HSAQ_H */
