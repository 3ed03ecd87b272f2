/* SPDX-License-Identifier: MIT */
/*
 * libxsched internals: the platform ops table, the XQueue object, the
 * in-process scheduler.
 *
 * Locks:
 *   sched.lock (one per process, sched_state.h) protects the scheduling
 *     state of every XQueue (the s_* fields), the XQueue list and the
 *     decision log.
 *   xq->lock protects the submission state of one XQueue (the fields between
 *     "submission state" and "end of submission state").
 * Order: sched.lock -> xq->lock.  Never take sched.lock while holding an
 * xq->lock; code that changes busy/idle drops xq->lock first and then calls
 * the XQueue's hook (xs_xq_changed(): xs_sched_refresh()).
 *
 * An XQueue has a submitter (how work enters: xq->plat/xq->pq, whose launch,
 * wait and completed ops it uses) and an optional preemptor (how its
 * hardware queue stops: xq->pre/xq->preq, whose suspend, resume, poll and
 * query ops it uses).  For sim and mock XQueues both are the same platform
 * queue; a call queue's submitter is the calls platform (platform/calls.c)
 * and its preemptor, if any, a kfd or sim queue; a kfd XQueue made by
 * xsched_xqueue_create_kfd() has a preemptor and a submitter without launch.
 */
#ifndef XSCHED_INTERNAL_H
#define XSCHED_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <sys/types.h>
#include <time.h>

#include <linux/xsched_kfd.h>

#include "xsched.h"

#define XS_EXPORT __attribute__((visibility("default")))
/*
 * Versioned entry points, where a signature changed: in libxsched.so
 * (XS_SHARED) XS_SYMVER("xs_query_v01", "xsched_query@LIBXSCHED_0.1") exports
 * the old function under the old node, so programs linked against it keep
 * working, and XS_SYMVER("xsched_query", "xsched_query@@@LIBXSCHED_0.3,
 * remove") makes the current one the default.  Elsewhere (libxsched.a, the
 * tests, libxsched-cuda.so) the old one is an internal function.
 */
#ifdef XS_SHARED
#define XS_SYMVER(sym, ver) __asm__(".symver " sym ", " ver)
#else
#define XS_SYMVER(sym, ver) _Static_assert(1, sym)
#endif

/* Copy a struct the library fills into the caller's @size bytes: what both
 * know, zeroes beyond (the sched_getattr() rule; see xsched.h). */
static inline void xs_copy_out(void *out, size_t size, const void *full,
			       size_t full_size)
{
	size_t n = size < full_size ? size : full_size;

	memcpy(out, full, n);
	if (size > n)
		memset((char *)out + n, 0, size - n);
}

/* Suspend modes a platform can do, as in the module's uAPI. */
#define XS_MODE_DRAIN 1
#define XS_MODE_SAVE 2

/* What the platform knows about one of its queues. */
struct xs_hw_info {
	uint64_t completed;
	uint64_t suspends;
	uint64_t saved_bytes;
	uint64_t last_suspend_ns;
	uint64_t max_suspend_ns;
	uint64_t total_suspend_ns;
	uint64_t steps_done;
	uint64_t arbiter_suspends;	/* suspends the module's arbiter started */
	uint32_t state;		/* XS_HW_* */
	int32_t last_error;
	bool arbitrated;	/* registered with the module's arbiter */
};

#define XS_HW_ACTIVE 0
#define XS_HW_SUSPENDING 1
#define XS_HW_SUSPENDED 2
#define XS_HW_FAILED 3

/*
 * A platform: the hardware (or model) under the XQueues.  Every op returns 0
 * or a negative errno.  A platform queue (@pq) is what bind() returned.
 */
struct xs_platform_ops {
	const char *name;
	size_t cmd_size;		/* bytes of one command */
	unsigned int max_level;		/* best level the platform supports */
	unsigned int min_level;		/* lowest level it supports (0: Lv1) */
	uint32_t max_submit;		/* commands per launch() call */
	uint32_t (*ring_size)(struct xsched_platform *p, void *pq);

	/* @flags: XS_BIND_ARBITER registers the queue with the module's
	 * cross-process arbiter (only if set_arbiter is set). */
	int (*bind)(struct xsched_platform *p, uint64_t handle, int32_t priority,
		    unsigned int flags, void **pq);
	void (*unbind)(struct xsched_platform *p, void *pq);
	/* Hand @n (<= max_submit) commands to the hardware queue.  *hw_seq is the
	 * hardware completion number of the last one.  -EAGAIN: ring full.
	 * NULL: the platform's owner (the HIP runtime) writes the hardware
	 * queue itself and xsched_submit() gives -EOPNOTSUPP (kfd). */
	int (*launch)(struct xsched_platform *p, void *pq, const void *cmds,
		      unsigned int n, uint64_t *hw_seq);
	/* Wait until hardware command @hw_seq completed; -ETIMEDOUT, -EIO. */
	int (*wait)(struct xsched_platform *p, void *pq, uint64_t hw_seq,
		    int64_t timeout_ns);
	/* Cheap progress read: hardware commands completed; -EIO if failed. */
	int (*completed)(struct xsched_platform *p, void *pq, uint64_t *done);
	/* Module suspend/resume (Lv2: DRAIN, Lv3: SAVE).  Optional. */
	int (*suspend)(struct xsched_platform *p, void *pq, int mode, bool nonblock);
	int (*resume)(struct xsched_platform *p, void *pq);
	/* Wait until a suspend has completed; -ETIMEDOUT. */
	int (*wait_suspended)(struct xsched_platform *p, void *pq,
			      int64_t timeout_ns);
	/* fd that polls POLLIN when the queue is idle, POLLERR when failed. */
	int (*poll_fd)(struct xsched_platform *p, void *pq);
	int (*query)(struct xsched_platform *p, void *pq, struct xs_hw_info *hw);
	int (*set_priority)(struct xsched_platform *p, void *pq, int32_t priority);
	/*
	 * Arbiter mode, optional (NULL: the platform has no arbiter).  Re-register
	 * an idle queue with (@on) or without the module's arbiter.  On failure
	 * the queue is still registered as before, or the op returns -EIO and the
	 * queue is unusable.
	 */
	int (*set_arbiter)(struct xsched_platform *p, void *pq, bool on);
	/* fd that polls *events while the queue is suspended (arbiter mode:
	 * how the monitor notices the module's suspends).  Optional. */
	int (*stop_fd)(struct xsched_platform *p, void *pq, short *events);
	/* Submitter: called on the Lv1 worker before it launches anything, so
	 * that it runs with the caller's device/context.  Optional. */
	int (*thread_enter)(struct xsched_platform *p, void *pq);
	/* Submitter: the first nonzero status of the calls the last launch()
	 * ran (call commands), then 0 again.  Optional. */
	int (*take_status)(struct xsched_platform *p, void *pq);
	/* Submitter: note a completion point now (after what was launched),
	 * so that a later wait for it does not wait for more.  Optional. */
	void (*mark_now)(struct xsched_platform *p, void *pq);
	/* Submitter: the hardware number known to have completed, without
	 * asking the hardware (what earlier waits learned).  Optional. */
	uint64_t (*known_done)(struct xsched_platform *p, void *pq);
	/* Submitter: drop @n commands that will never be launched (release
	 * what they own).  Optional. */
	void (*drop)(struct xsched_platform *p, void *pq, const void *cmds,
		     unsigned int n);
};

/* Is @err the end of a hardware queue (terminal), not a passing refusal? */
static inline bool xs_err_fatal(int err)
{
	return err == -EIO || err == -ENODEV || err == -EFAULT;
}

#define XS_BIND_ARBITER (1U << 0)

struct xsched_platform {
	const struct xs_platform_ops *ops;
	void *priv;
};

struct xsched_xqueue {
	struct xsched_platform *plat;	/* submitter */
	void *pq;
	struct xsched_platform *pre;	/* preemptor, or NULL */
	void *preq;
	void *own_plat;			/* calls platform owned by this XQueue */
	unsigned int fork_gen;		/* xs_fork_gen at creation: another
					 * value (a fork child) gets -ECHILD */
	uint32_t id;
	uint32_t group;			/* the policy's scope */
	atomic_int refs;		/* list + monitor iterations */
	const struct xs_xq_hook *hook;	/* the scheduler's (xs_sched_add()) */

	/* Scheduling state, under sched.lock. */
	struct xsched_xqueue *s_next;	/* sched list */
	int32_t s_prio;
	unsigned int s_level;
	bool s_busy;			/* has work, as last refreshed */
	bool s_failed;
	bool s_dead;			/* being destroyed: blocks nobody */
	uint32_t s_hold;		/* XSCHED_HOLD_* */
	bool s_suspended;		/* a suspend is in effect (issued, not undone) */
	uint32_t s_blocker;		/* id of the XQueue that caused the policy hold */
	uint64_t s_since_ns;		/* when s_suspended became true */
	uint64_t s_suspends, s_resumes, s_suspended_ns;
	/* Arbiter mode (under sched.lock).  arb_mode: asked for, fixed at
	 * creation; s_arb: registered with the module's arbiter (arb_mode and
	 * Lv2/Lv3), so the policy never suspends it; s_arb_stopped: the monitor
	 * saw the module suspend it (not yet seen resumed); s_arb_watched: in the
	 * monitor's poll set. */
	bool arb_mode;
	bool s_arb;
	bool s_arb_stopped;
	bool s_arb_watched;
	bool s_retry;			/* a policy suspend failed: try again */
	/* Lv2/Lv3 policy holds are applied by the applier thread (sched.c):
	 * s_pending: s_hold and s_suspended may differ, the applier looks;
	 * s_applying: the applier is in the preemptor's suspend or resume
	 * (outside sched.lock); others wait on sched's cond before acting on
	 * this XQueue's suspension.  s_pend_why/other: what the record says. */
	bool s_pending;
	bool s_applying;
	uint32_t s_pend_why, s_pend_other;
	uint64_t s_idle_ns;		/* when s_busy became false */
	uint64_t s_decided_ns;		/* when the policy last changed s_hold */

	/* Submission state, under lock. */
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* launched/completed/stopped changed */
	unsigned int level;		/* copy of s_level, for the submit path */
	uint64_t submitted;
	uint64_t launched;
	uint64_t completed;
	int64_t hw_offset;		/* hw_seq = xq seq + hw_offset */
	bool hw_offset_set;
	int error;			/* sticky: -EIO once failed */
	int last_status;		/* last non-fatal error (launch refused,
					 * a call's status) */
	int call_status;		/* first nonzero call status of a submit */
	bool submitting;		/* a submit dropped the lock mid-way:
					 * others wait (submits are atomic) */
	/* Lv1 */
	/* Lv1 hold: launch nothing.  Set by the policy without this lock
	 * (xs_xq_lv1_stop()), so that a decision never waits for a thread
	 * that holds it; read anywhere. */
	atomic_bool stopped;
	bool worker_exit;
	bool worker_running;
	pthread_t worker;
	unsigned int threshold, batch;
	unsigned int in_calls;		/* caller-held: calls inside the runtime */
	uint64_t memwait_seq;		/* caller-held: seq of the last memory wait */
	uint64_t max_in_flight;
	unsigned char *buf;		/* ring of buffered commands */
	uint64_t buf_cap;		/* commands; power of two */
	uint64_t buf_head;		/* seq - 1 of the first buffered command */
	/* end of submission state */

	/* Caller-held: a lower XQueue is held by this one, so its completion
	 * must be learnable (a per-thread stream then marks after its calls);
	 * set by the policy (sched.lock), read by the launching thread. */
	atomic_bool mark_wanted;
	/* Waiters for a release of the Lv1 hold (xs_xq_wait_unheld()): an
	 * event count, so that xs_xq_lv1_stop() never takes xq->lock. */
	pthread_mutex_t gate_lock;
	pthread_cond_t gate_cond;
	atomic_uint gate_gen;
};

/* config.c */
enum xs_log_level { XS_LOG_ERROR, XS_LOG_WARN, XS_LOG_INFO, XS_LOG_DEBUG };

struct xs_config {
	int log_level;
	bool trace;		/* XSCHED_LOG=trace: decisions to the trace marker */
	bool has_priority, has_level;
	int32_t priority;
	unsigned int level;
	unsigned int threshold, batch;
	bool arbiter;		/* XSCHED_ARBITER=1 */
	uint64_t hyst_ns;	/* XSCHED_HYSTERESIS_US */
};

const struct xs_config *xs_config(void);
void xs_config_reload(void);	/* tests: re-read the environment */
void xs_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool xs_log_enabled(int level);
void xs_log_lock(bool lock);
/* XSCHED_LOG=trace, and the marker still writable. */
bool xs_trace_on(void);
void xs_trace(const char *event, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint64_t xs_now_ns(void);
void xs_abs_deadline(struct timespec *ts, int64_t timeout_ns);

#define xs_err(...) xs_log(XS_LOG_ERROR, __VA_ARGS__)
#define xs_warn(...) xs_log(XS_LOG_WARN, __VA_ARGS__)

/* platform/modq.c: a queue registered with /dev/xsched (sim, and kfd in module mode). */
struct xs_modq {
	int qfd;		/* the queue fd */
	int devfd;		/* the /dev/xsched client it was registered on */
	int backend_fd;		/* sim: the /dev/xsched_sim fd owning it; kfd: 0 */
	uint32_t backend;	/* XSCHED_BACKEND_* */
	uint64_t handle;
	int32_t prio;		/* as registered with the module */
	bool arbiter;		/* registered with XSCHED_REGISTER_ARBITRATE */
	bool by_ring;		/* registered with XSCHED_REGISTER_BY_RING */
};

int xs_ioctl(int fd, unsigned long req, void *arg);
int xs_ioctl0(int fd, unsigned long req, void *arg);	/* 0 or -errno */
/* @flags: XSCHED_REGISTER_* */
int xs_modq_register(struct xs_modq *m, int devfd, uint32_t backend,
		     int backend_fd, uint64_t handle, int32_t prio,
		     uint32_t flags, const char *what);
int xs_modq_set_arbiter(struct xs_modq *m, bool on, const char *what);
void xs_modq_close(struct xs_modq *m);
int xs_modq_query(const struct xs_modq *m, struct xsched_queue_info *qi);
int xs_modq_suspend(const struct xs_modq *m, int mode, bool nonblock);
int xs_modq_resume(const struct xs_modq *m);
int xs_modq_wait_suspended(const struct xs_modq *m, int64_t timeout_ns);
int xs_modq_hw_info(const struct xs_modq *m, struct xs_hw_info *hw);
int xs_modq_set_priority(struct xs_modq *m, int32_t prio);
#define xs_info(...) xs_log(XS_LOG_INFO, __VA_ARGS__)
#define xs_debug(...) xs_log(XS_LOG_DEBUG, __VA_ARGS__)

/* policy.c: the pure decision function. */
struct xs_pol_q {
	uint32_t id;
	int32_t prio;
	uint32_t group;
	bool busy, failed, dead;
	bool unheld;		/* the policy never holds it (arbiter owns it) */
	bool held;		/* held by the policy now */
	uint64_t idle_since_ns;	/* !busy: since when */
};
struct xs_pol_dep {
	unsigned int waiter, source;	/* indexes into the queue array */
};
struct xs_pol_out {
	bool hold;
	uint32_t blocker;	/* id of the XQueue that holds it */
};
void xs_policy_decide(const struct xs_pol_q *q, unsigned int n,
		      const struct xs_pol_dep *deps, unsigned int ndeps,
		      uint64_t now_ns, uint64_t hyst_ns, int32_t *eff,
		      struct xs_pol_out *out, uint64_t *recheck_ns);
/* A stream of priority @prio is capped while @top is the highest priority
 * of a live stream on its device (both as its XQueue takes them). */
bool xs_policy_capped(int32_t prio, int32_t top);

/* platform/sim.c: the sim by ring address (XSCHED_REGISTER_BY_RING), a preemptor
 * for sim queues a runtime made (the stand-in HSA runtime); -ENODEV when the
 * module has no sim backend. */
int xs_sim_ring_open(struct xsched_platform **pp, const char *path);
void xs_sim_ring_close(struct xsched_platform *p);

/* platform/calls.c: the submitter of call commands. */
struct xsched_platform *xs_calls_platform(const struct xsched_call_ops *ops,
					  void *ctx);
void xs_calls_platform_free(struct xsched_platform *p);
/* How a call queue's marks are recorded (xs_calls_set_mode()):
 * XS_CALLS_PASSIVE: the monitor never records one (completion is learned
 * from waiters and from the runtime's synchronizations only);
 * XS_CALLS_OWNER_MARKS: only the launching thread can name the stream (a
 * per-thread default stream), so a mark is recorded after every launch and
 * nobody else records one. */
#define XS_CALLS_PASSIVE	(1U << 0)
#define XS_CALLS_OWNER_MARKS	(1U << 1)
/* The runtime's stream is gone: existing marks only (xs_xq_close()). */
#define XS_CALLS_CLOSED		(1U << 2)
void xs_calls_set_mode(struct xsched_xqueue *xq, unsigned int mode);
unsigned int xs_calls_mode(struct xsched_xqueue *xq);
/* Is @seq known completed, or covered by a mark? */
bool xs_calls_covered(struct xsched_xqueue *xq, uint64_t seq);

/* Is an XQueue in arbiter mode at @level registered with the arbiter?  Lv1
 * is not: the module cannot hold back commands buffered in the library. */
static inline bool xs_arb_at(bool arb_mode, unsigned int level)
{
	return arb_mode && level >= 2;
}

/* api.c: the entry points; those the interposers use beside xsched.h's. */
/* A call queue for caller-held dispatch: no Lv1 worker is ever started. */
int xs_xqueue_create_caller_held(struct xsched_xqueue **xqp, const struct xsched_call_ops *ops,
				 void *ctx, const struct xsched_attr *attr);
/*
 * xsched_set_level() for a call queue whose launches go straight through:
 * allowed while launched work is still in flight (a busy batch stream may
 * never be idle), not while anything is buffered, held or suspended
 * (-EBUSY).  In arbiter mode a change of registration still needs idle.
 */
int xs_set_level_live(struct xsched_xqueue *xq, unsigned int level);
/* 0.1/0.2 entry points: the structs of XSCHED_*_SIZE_VER0 bytes. */
int xs_query_v01(struct xsched_xqueue *xq, struct xsched_xq_info *info);
int xs_decisions_v01(struct xsched_decision *out, unsigned int max);

/* sched.c: XQueues join and leave the scheduler; the monitor thread; fork. */
/* Schedule @xq: it gets its id and the scheduler's hook (xq->hook). */
void xs_sched_add(struct xsched_xqueue *xq);
void xs_sched_remove(struct xsched_xqueue *xq);
void xs_fork_init(void);

/* hold.c: the decisions, taken and applied under sched.lock. */
void xs_sched_kill(struct xsched_xqueue *xq);
/* The hook's implementation: busy, idle or failed may have changed. */
void xs_sched_refresh(struct xsched_xqueue *xq);
void xs_sched_kick_monitor(void);
int xs_sched_user_suspend(struct xsched_xqueue *xq, unsigned int flags);
int xs_sched_user_resume(struct xsched_xqueue *xq);
int xs_sched_set_priority(struct xsched_xqueue *xq, int32_t prio);
/* @live: work launched may still be in flight (nothing buffered or held). */
int xs_sched_set_level(struct xsched_xqueue *xq, unsigned int level, bool live);
void xs_sched_fill_info(struct xsched_xqueue *xq, struct xsched_xq_info *info);
int xs_sched_depend(struct xsched_xqueue *xq, struct xsched_xqueue *src,
		    uint64_t seq);
int xs_sched_group_sync(uint32_t group);
/* xsched_decisions() once its arguments are checked. */
int xs_sched_decisions(struct xsched_decision *out, unsigned int max, size_t size);
/* The XQueue whose work makes the policy hold @xq (a reference:
 * xs_xqueue_put() it), or NULL. */
struct xsched_xqueue *xs_sched_blocker(struct xsched_xqueue *xq);
/* tests: number of XQueues alive, and a clean slate for the decision log */
int xs_sched_count(void);
void xs_sched_reset_log(void);

/* declog.c: the decision log; called with sched.lock held. */
const char *xs_action_name(uint32_t action);
const char *xs_reason_name(uint32_t reason);
/* Append one record and print it (debug level, trace marker); @o: the XQueue
 * @other, for its priority in the lines printed (NULL: not asked). */
void xs_declog_add(const struct xsched_xqueue *q, const struct xsched_xqueue *o,
		   uint32_t action, uint32_t reason, uint32_t other, int err,
		   uint64_t now, uint64_t duration);
int xs_declog_copy(struct xsched_decision *out, unsigned int max, size_t size);
void xs_declog_reset(void);

/* xqattr.c: an XQueue's settings, decided (pure). */
#define XS_XQ_WARN_NO_ARBITER	(1U << 0)	/* XSCHED_ARBITER=1, no arbiter */
#define XS_XQ_WARN_LEVEL_RANGE	(1U << 1)	/* XSCHED_LEVEL outside lmin..lmax */
#define XS_XQ_WARN_LEVEL_MAX	(1U << 2)	/* XSCHED_LEVEL above lmax */
#define XS_XQ_WARN_RING		(1U << 3)	/* Lv1 threshold above the ring */
struct xs_xq_settings {
	int32_t prio;
	unsigned int level;
	bool arb_mode;
	unsigned int threshold, batch;
	uint32_t group;
	bool lv1_asked;			/* threshold or batch from attributes */
	unsigned int lmin, lmax;	/* the levels the platforms allow */
	unsigned int asked_threshold;	/* before xs_xq_fit_ring() */
	unsigned int warn;		/* XS_XQ_WARN_* */
};
int xs_xq_decide(const struct xs_config *cfg, const struct xsched_attr *attr,
		 const struct xs_platform_ops *plat, const struct xs_platform_ops *pre,
		 struct xs_xq_settings *s);
/* Fit threshold and batch from the environment to a ring of @ring commands;
 * then xs_lv1_check(). */
int xs_xq_fit_ring(struct xs_xq_settings *s, uint32_t ring);
/* Lv1 threshold and batch valid for a ring of @ring commands? */
int xs_lv1_check(unsigned int threshold, unsigned int batch, uint32_t ring);

/* xqueue.c: the XQueue. */
/* Bumped in a fork child: XQueues of an older generation are the parent's. */
extern _Atomic unsigned int xs_fork_gen;
static inline bool xs_foreign(const struct xsched_xqueue *xq)
{
	return xq->fork_gen != atomic_load_explicit(&xs_fork_gen,
						    memory_order_relaxed);
}
/* What an XQueue tells whoever schedules it (sched.c installs it, as the
 * module's arbiter installs struct xsched_queue_arbiter): called with no
 * lock held. */
struct xs_xq_hook {
	/* Busy, idle or failed may have changed. */
	void (*changed)(struct xsched_xqueue *xq);
};
/* Create an XQueue over submitter @plat (queue @handle) and preemptor @pre
 * (the same queue, or NULL), its Lv1 worker started if @worker; not yet
 * scheduled (xs_sched_add()). */
int xs_xq_create(struct xsched_xqueue **xqp, struct xsched_platform *plat,
		 struct xsched_platform *pre, uint64_t handle,
		 const struct xsched_attr *attr, void *own_plat, bool worker);
int xs_xq_set_preemptor(struct xsched_xqueue *xq, struct xsched_platform *pre,
			uint64_t handle);
void xs_xq_free(struct xsched_xqueue *xq);
void xs_xqueue_put(struct xsched_xqueue *xq);
/* Drop what a failed or destroyed XQueue can never launch. */
void xs_xq_drop_buffered(struct xsched_xqueue *xq);
/* Submit @count commands of the submitter's size; see xsched_submit(). */
int xs_xq_submit(struct xsched_xqueue *xq, const void *cmds, unsigned int count,
		 uint64_t *seq, int *status, uint64_t *taken);
int xs_xq_wait(struct xsched_xqueue *xq, uint64_t seq, int64_t timeout_ns);
int xs_xq_synchronize(struct xsched_xqueue *xq);
int xs_xq_flush(struct xsched_xqueue *xq);
int xs_xq_set_lv1(struct xsched_xqueue *xq, unsigned int threshold,
		  unsigned int batch);
/* xsched_query()'s submission and hardware fields, after the scheduler's. */
void xs_xq_fill_info(struct xsched_xqueue *xq, struct xsched_xq_info *info);
void xs_xq_lv1_stop(struct xsched_xqueue *xq, bool stop);
int xs_xq_lv1_start_worker(struct xsched_xqueue *xq);
void xs_xq_lv1_stop_worker(struct xsched_xqueue *xq);
bool xs_xq_busy_locked(const struct xsched_xqueue *xq);
void xs_xq_update_completed(struct xsched_xqueue *xq);
uint64_t xs_xq_launched(struct xsched_xqueue *xq);
/* For caller.c: launch @n commands on the caller's thread (xq->lock held,
 * dropped while waiting for ring room); fail the XQueue (locked); call the
 * hook (no lock held). */
int xs_xq_launch_direct(struct xsched_xqueue *xq, const unsigned char *cmds,
			unsigned int n);
void xs_xq_set_error(struct xsched_xqueue *xq, int err);
void xs_xq_changed(struct xsched_xqueue *xq);
static inline uint64_t xs_xq_hw_of(const struct xsched_xqueue *xq, uint64_t seq)
{
	return (uint64_t)((int64_t)seq + xq->hw_offset);
}

/* caller.c */
/*
 * Caller-held dispatch, for a runtime whose calls cannot be copied: the
 * caller itself makes the call, between xs_xq_now_begin() (0: the call may
 * go now) and xs_xq_now_end() (the call is counted as launched if @ran).
 * No lock is held in between: the runtime call may block (a copy to
 * pageable memory waits for the stream's earlier work), re-enter the
 * library, or run beside other threads' calls on the same stream, and
 * nobody else ever waits for it.  -EAGAIN: not now (the policy holds it,
 * or with XS_NOW_CAP `threshold` calls are in flight); XS_NOW_FORCE: now
 * whatever the hold.  Nothing is ever buffered.  A capped call refills the
 * cap in batches: every `batch`-th one leaves a completion mark behind it
 * (mark_now), so that a wait for room waits for the oldest mark that makes
 * room and leaves threshold - batch calls in flight, rather than for
 * everything launched (which would let the stream run dry).  A call on an
 * XQueue whose completion only its launching thread can mark
 * (XS_CALLS_OWNER_MARKS) leaves a mark behind it only while a lower XQueue
 * is held by it (mark_wanted).  The mark is recorded after the count, with
 * no XQueue lock held.  XS_NOW_MEMWAIT (at end): the call was a wait on a
 * memory value, whose producer the library cannot see (xs_xq_memwait()).
 */
#define XS_NOW_CAP	(1U << 0)
#define XS_NOW_FORCE	(1U << 1)
#define XS_NOW_MEMWAIT	(1U << 2)
int xs_xq_now_begin(struct xsched_xqueue *xq, unsigned int flags);
void xs_xq_now_end(struct xsched_xqueue *xq, bool ran, unsigned int flags);
/* Wait up to @timeout_ns while the policy (or the user) holds @xq. */
void xs_xq_wait_unheld(struct xsched_xqueue *xq, int64_t timeout_ns);
/* The runtime said everything launched up to @seq completed (a synchronize). */
void xs_xq_completed_upto(struct xsched_xqueue *xq, uint64_t seq);
/* Is a memory wait among @xq's calls not known to have completed? */
bool xs_xq_memwait(struct xsched_xqueue *xq);
/* Completion of what was launched is known (nothing in flight)? */
bool xs_xq_idle(struct xsched_xqueue *xq);
/* Destroy without waiting (the runtime's stream is gone, its work runs on):
 * after a last mark covering everything launched (recorded now if
 * @record, else one recorded earlier), no new mark is ever recorded (the
 * handle is dead), the XQueue goes on blocking lower ones until that mark
 * is seen completed; xs_xq_idle() then says it may be destroyed.  false: no
 * mark covers it (its completion can never be learned): the caller
 * destroys it now. */
bool xs_xq_close(struct xsched_xqueue *xq, bool record);

#endif /* XSCHED_INTERNAL_H */
