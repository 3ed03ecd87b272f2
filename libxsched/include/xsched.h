/* SPDX-License-Identifier: MIT */
/*
 * libxsched: priority scheduling of GPU submission streams.
 *
 * One XQueue per submission stream.  Each XQueue has a priority (integer,
 * higher is more urgent, 0 by default) and a preemption level:
 *
 *   XSCHED_LV1  launch: commands are buffered in the library and at most
 *               `threshold` are in flight on the hardware queue; suspending
 *               stops launching.
 *   XSCHED_LV2  drain: launches go to the hardware queue; suspending stops
 *               dispatch of new workgroups, running ones finish (module DRAIN).
 *   XSCHED_LV3  save: launches go to the hardware queue; suspending saves the
 *               running waves mid-kernel (module SAVE, CWSR).
 *
 * In-process policy: while an XQueue of higher priority has work (submitted,
 * not completed), XQueues of lower priority are suspended at their level;
 * they are resumed when it is idle.  Commands of one XQueue always complete
 * in submission order.
 *
 * Arbiter mode (XSCHED_ATTR_ARBITER, or XSCHED_ARBITER=1): Lv2/Lv3 XQueues
 * are registered with the xsched_kfd module's cross-process arbiter, which
 * then owns their suspend state (across every process); the in-process
 * policy no longer suspends them, and xsched_suspend()/xsched_resume() on
 * them give -EBUSY.  Lv1 XQueues stay scheduled in-process.
 *
 * Every function returns 0 (or a count) on success and a negative errno on
 * failure, like liburing.  Every function is thread safe.  The environment
 * variables XSCHED_PRIORITY, XSCHED_LEVEL, XSCHED_THRESHOLD, XSCHED_BATCH,
 * XSCHED_ARBITER and XSCHED_LOG give defaults; Documentation/libxsched.rst
 * describes them.
 *
 * This is the core header.  The platforms have their own: <xsched-sim.h>
 * (xsched_sim.ko's software GPU) and <xsched-kfd.h> (amdgpu queues); each
 * includes this one.
 */
#ifndef XSCHED_H
#define XSCHED_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XSCHED_LIB_VERSION_MAJOR 0
#define XSCHED_LIB_VERSION_MINOR 3

/* The version of the library running (not the header compiled against):
 * major << 16 | minor. */
uint32_t xsched_version(void);

/* Preemption levels. */
enum xsched_level {
	XSCHED_LV_DEFAULT = 0,	/* the best the platform supports */
	XSCHED_LV1 = 1,		/* launch */
	XSCHED_LV2 = 2,		/* drain */
	XSCHED_LV3 = 3,		/* save */
};

#define XSCHED_PRIO_MIN (-100)
#define XSCHED_PRIO_MAX 100

/* Lv1 parameters: limits and defaults. */
#define XSCHED_THRESHOLD_DEFAULT 16
#define XSCHED_BATCH_DEFAULT 8
#define XSCHED_THRESHOLD_MAX 4096

/* Which fields of struct xsched_attr are set; unset ones come from the
 * environment or the defaults. */
#define XSCHED_ATTR_PRIORITY	(1U << 0)
#define XSCHED_ATTR_LEVEL	(1U << 1)
#define XSCHED_ATTR_THRESHOLD	(1U << 2)
#define XSCHED_ATTR_BATCH	(1U << 3)
#define XSCHED_ATTR_ARBITER	(1U << 4)
#define XSCHED_ATTR_GROUP	(1U << 5)

struct xsched_attr {
	uint32_t flags;		/* XSCHED_ATTR_* */
	int32_t priority;
	uint32_t level;		/* enum xsched_level */
	uint32_t threshold;	/* Lv1: commands in flight, 1..XSCHED_THRESHOLD_MAX */
	uint32_t batch;		/* Lv1: synchronize every batch commands, 1..threshold */
	/* 1: Lv2/Lv3 XQueues are scheduled by the module's cross-process
	 * arbiter (0 or 1; -EOPNOTSUPP if the platform has no arbiter) */
	uint32_t arbiter;
	/* The policy's scope: XQueues hold each other only within one group
	 * (an interposer uses the device ordinal + 1; 0: the default group). */
	uint32_t group;
	uint32_t reserved[1];	/* must be 0 */
};

/* XQueue states. */
enum xsched_xq_state {
	XSCHED_XQ_ACTIVE = 0,
	XSCHED_XQ_SUSPENDED = 1,	/* held by the user or the policy */
	XSCHED_XQ_FAILED = 2,		/* the hardware queue failed; terminal */
};

/* Why an XQueue is held (bits of xsched_xq_info.hold). */
#define XSCHED_HOLD_USER	(1U << 0)	/* xsched_suspend() */
#define XSCHED_HOLD_POLICY	(1U << 1)	/* a higher-priority XQueue has work */
#define XSCHED_HOLD_ARBITER	(1U << 2)	/* the module's arbiter suspended it */

struct xsched_xq_info {
	uint32_t id;			/* library-wide XQueue id, as in the log */
	uint32_t state;			/* enum xsched_xq_state */
	uint32_t hold;			/* XSCHED_HOLD_* */
	uint32_t level;
	int32_t priority;
	uint32_t threshold;
	uint32_t batch;
	int32_t last_error;		/* negative errno of the last failure, or 0 */
	uint64_t submitted;		/* commands submitted */
	uint64_t launched;		/* commands handed to the hardware queue */
	uint64_t completed;		/* commands known to have completed */
	uint64_t buffered;		/* Lv1: submitted, not yet launched */
	uint64_t max_in_flight;		/* Lv1: most commands seen in flight */
	uint64_t suspends;		/* times this XQueue was suspended */
	uint64_t resumes;
	uint64_t suspended_ns;		/* total time suspended (completed suspends) */
	/* From the platform (the module's counters for sim queues), or 0: */
	uint64_t hw_suspends;
	uint64_t hw_saved_bytes;
	uint64_t hw_last_suspend_ns;	/* latency of the last suspend */
	uint64_t hw_max_suspend_ns;
	uint64_t hw_total_suspend_ns;	/* sum of suspend latencies */
	uint64_t hw_steps_done;		/* sim: wave steps executed */
	uint64_t hw_arbiter_suspends;	/* suspends the module's arbiter started */
	uint32_t arbiter;		/* 1: registered with the module's arbiter */
	uint32_t reserved0;
	uint64_t reserved[1];
	/* ---- XSCHED_XQ_INFO_SIZE_VER0 ends here (0.1, 0.2) ---- */
	uint32_t group;			/* the policy's scope (attr.group) */
	uint32_t reserved1;
	/* ---- XSCHED_XQ_INFO_SIZE_VER1 (0.3) ---- */
};

/*
 * Growing structs (the sched_getattr() rule): xsched_query() and
 * xsched_decisions() take the size of the caller's struct.  The library
 * fills what it knows of it and zeroes the rest, so a program built against
 * a newer header reads 0 from fields an older library does not have, and a
 * program built against an older header gets only the fields it knows.
 * Sizes below VER0 give -EINVAL.  Pass sizeof() of the struct.
 */
#define XSCHED_XQ_INFO_SIZE_VER0 168
#define XSCHED_XQ_INFO_SIZE_VER1 176

/* Scheduling decision records, read with xsched_decisions(). */
enum xsched_action {
	XSCHED_ACT_SUSPEND = 1,
	XSCHED_ACT_RESUME = 2,
};

enum xsched_reason {
	XSCHED_WHY_HIGHER_BUSY = 1,	/* suspend: `other` has higher priority and work */
	XSCHED_WHY_HIGHER_IDLE = 2,	/* resume: no higher-priority XQueue has work */
	XSCHED_WHY_USER = 3,		/* xsched_suspend() / xsched_resume() */
	XSCHED_WHY_PRIORITY = 4,	/* a priority changed */
	XSCHED_WHY_DESTROY = 5,		/* the XQueue (or its blocker) went away */
	XSCHED_WHY_FAILED = 6,		/* the blocking XQueue failed */
	XSCHED_WHY_ARBITER = 7,		/* observed: the module's arbiter did it */
};

struct xsched_decision {
	uint64_t seq;		/* 1, 2, ... library-wide; gaps mean records were lost */
	uint64_t time_ns;	/* CLOCK_MONOTONIC */
	uint32_t queue;		/* XQueue id acted on */
	uint32_t other;		/* XQueue id that caused it, or 0 */
	uint32_t action;	/* enum xsched_action */
	uint32_t reason;	/* enum xsched_reason */
	uint32_t level;		/* level the action used */
	int32_t error;		/* negative errno if the action failed, else 0 */
	uint64_t duration_ns;	/* resume: how long the XQueue was suspended */
	/* ---- XSCHED_DECISION_SIZE_VER0 ends here (0.1, 0.2) ---- */
	/* when the policy decided it; time_ns is when it was applied (by the
	 * applier thread), or 0 for actions that are not the policy's */
	uint64_t decided_ns;
	/* ---- XSCHED_DECISION_SIZE_VER1 (0.3) ---- */
};

#define XSCHED_DECISION_SIZE_VER0 48
#define XSCHED_DECISION_SIZE_VER1 56

#define XSCHED_DECISION_LOG_SIZE 1024

struct xsched_platform;		/* where XQueues run: sim GPU, mock, ... */
struct xsched_xqueue;		/* one submission stream */

/* ---- streams of an interposed runtime (libxsched.so) ---------------------
 *
 * Set the priority of a HIP stream (hipStream_t; NULL: the legacy null
 * stream of the current device; hipStreamPerThread: the calling thread's)
 * on xsched's scale (higher is more urgent), overriding what
 * hipStreamCreateWithPriority and XSCHED_PRIORITY gave it.  -ENODEV when no
 * HIP runtime is in the process, -ENOENT for a stream the runtime does not
 * know, -EINVAL for a priority out of range.  In libxsched.so only (not the
 * static library).  LIBXSCHED_0.3.
 */
int xsched_stream_set_priority(const void *stream, int32_t priority);


/* ---- call commands: XQueues over a runtime stream ----------------------- */

/*
 * A call command: @fn(@arg) hands one runtime call (a kernel launch with its
 * argument copies, an async copy, an event record, a host callback) to the
 * runtime and returns the runtime's status (0: success).  @release(@arg)
 * (may be NULL) frees what @arg owns once @fn ran, or when the command is
 * dropped without running (its XQueue was destroyed after failing).
 */
typedef int (*xsched_call_fn)(void *arg);
typedef void (*xsched_release_fn)(void *arg);

struct xsched_call {
	xsched_call_fn fn;
	void *arg;
	xsched_release_fn release;
};

/*
 * How a call queue learns completion and keeps the caller's context; @ctx
 * is the create call's.  enter(): make the calling thread use the stream's
 * device/context (called on a launching thread before its first call
 * there; may be NULL).  mark_record(): a mark after every call handed to
 * the runtime so far; mark_wait(): 0 once reached, -ETIMEDOUT (timeout_ns
 * < 0: no limit, 0: poll), -EIO; mark_free().
 */
struct xsched_call_ops {
	int (*enter)(void *ctx);
	int (*mark_record)(void *ctx, void **mark);
	int (*mark_wait)(void *ctx, void *mark, int64_t timeout_ns);
	void (*mark_free)(void *ctx, void *mark);
};

/*
 * An XQueue whose commands are calls (its submitter), at Lv1 (buffered,
 * launched by its worker thread) or at the level its preemptor supports
 * (xsched_set_preemptor(); without one: Lv1 only, and Lv2/Lv3 give
 * -EOPNOTSUPP).  @ops must outlive the XQueue.
 */
int xsched_xqueue_create_calls(struct xsched_xqueue **xqp,
			       const struct xsched_call_ops *ops, void *ctx,
			       const struct xsched_attr *attr);
/*
 * Submit @count calls atomically (no other submit to @xq interleaves).
 * *seq (may be NULL): the last one's sequence number.  *status (may be
 * NULL): the first nonzero status of a call that ran before this returned,
 * else 0 (a call's nonzero status is recorded in last_error; it does not
 * fail the XQueue).
 */
int xsched_submit_call(struct xsched_xqueue *xq, const struct xsched_call *calls,
		       unsigned int count, uint64_t *seq, int *status);
/*
 * Give a call queue its preemptor: queue @handle of @platform (a sim queue
 * id, a kfd ring base), which then allows Lv2/Lv3 (xsched_set_level()).
 * -EBUSY if it has one already.
 */
int xsched_set_preemptor(struct xsched_xqueue *xq, struct xsched_platform *platform,
			 uint64_t handle);

/* ---- XQueues ------------------------------------------------------------ */

/*
 * Create an XQueue over a platform queue @handle (sim: a queue id).  The
 * XQueue owns the hardware queue's submissions from now on.  @attr may be
 * NULL.  An explicit level above what the platform supports gives
 * -EOPNOTSUPP; bad values give -EINVAL.
 */
int xsched_xqueue_create(struct xsched_xqueue **xqp,
			 struct xsched_platform *platform, uint64_t handle,
			 const struct xsched_attr *attr);
/*
 * Destroy: the XQueue is resumed, its buffered commands are launched and all
 * its work is waited for (unless the hardware queue failed), then it is
 * unregistered and its hardware queue released: on return the same handle
 * may be given to a new XQueue.
 */
int xsched_xqueue_destroy(struct xsched_xqueue *xq);

/*
 * Submit @count commands (for the sim platform: struct xsched_sim_packet from
 * <linux/xsched_sim.h>).  On success *seq (may be NULL) is the XQueue's
 * sequence number of the last command: commands are numbered 1, 2, ... per
 * XQueue.  At Lv2/Lv3 the commands reach the hardware queue before this
 * returns; at Lv1 they may be buffered.
 */
int xsched_submit(struct xsched_xqueue *xq, const void *cmds, unsigned int count,
		  uint64_t *seq);
/* Wait until command @seq completed.  timeout_ns < 0: no limit.  -ETIMEDOUT,
 * -EIO (hardware queue failed). */
int xsched_wait(struct xsched_xqueue *xq, uint64_t seq, int64_t timeout_ns);
/* Wait until everything submitted so far completed. */
int xsched_synchronize(struct xsched_xqueue *xq);

int xsched_set_priority(struct xsched_xqueue *xq, int32_t priority);
/* Change the level; only while the XQueue is idle and not suspended (-EBUSY).
 * In arbiter mode, moving between Lv1 and Lv2/Lv3 re-registers the queue
 * with the module (with or without its arbiter). */
int xsched_set_level(struct xsched_xqueue *xq, unsigned int level);
/* Lv1 parameters: 1 <= batch <= threshold <= XSCHED_THRESHOLD_MAX. */
int xsched_set_lv1(struct xsched_xqueue *xq, unsigned int threshold,
		   unsigned int batch);

/* Suspend at the XQueue's level.  Blocks until the queue has stopped unless
 * XSCHED_SUSPEND_NONBLOCK.  -EALREADY if already suspended by the user;
 * -EBUSY if the module's arbiter owns the XQueue (arbiter mode, Lv2/Lv3). */
#define XSCHED_SUSPEND_NONBLOCK (1U << 0)
int xsched_suspend(struct xsched_xqueue *xq, unsigned int flags);
/* Undo xsched_suspend() (the policy may still hold the queue). -EALREADY if
 * not suspended by the user; -EBUSY if the module's arbiter owns the XQueue. */
int xsched_resume(struct xsched_xqueue *xq);

/* Launch whatever is buffered (Lv1) now, whatever the threshold, and return
 * once all of it was handed to the hardware queue or runtime; does not wait
 * for completion.  While the XQueue is held (policy or user), waits until
 * it is released: buffered commands never overtake the hold. */
int xsched_flush(struct xsched_xqueue *xq);
/*
 * Dependency hint: @xq will wait for command @seq of @src (stream-wait-event).
 * Until @src completed @seq, the policy never holds @src on @xq's behalf
 * and treats @src as at least @xq's priority, so no wait on a held queue can
 * deadlock.  The hint ends by itself when @seq completes.
 */
int xsched_depend(struct xsched_xqueue *xq, struct xsched_xqueue *src,
		  uint64_t seq);
/* Wait until every XQueue of @group completed what was submitted to it. */
int xsched_group_synchronize(uint32_t group);

/* Fill *@info, a struct of @size bytes (sizeof(*info)). */
int xsched_query(struct xsched_xqueue *xq, struct xsched_xq_info *info,
		 size_t size);
uint32_t xsched_xqueue_id(const struct xsched_xqueue *xq);

/*
 * Copy up to @max of the most recent scheduling decisions, oldest first, into
 * @out, an array of records of @size bytes each (sizeof(*out)).  Returns how
 * many were copied.
 */
int xsched_decisions(struct xsched_decision *out, unsigned int max,
		     size_t size);

/* Names for printing. */
const char *xsched_action_name(uint32_t action);
const char *xsched_reason_name(uint32_t reason);

#ifdef __cplusplus
}
#endif

#endif /* XSCHED_H */
