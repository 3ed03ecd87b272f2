/* SPDX-License-Identifier: MIT */
/*
 * The mock platform: an in-process model of a GPU with hardware queues that
 * can be suspended (DRAIN/SAVE) and resumed, for host unit tests.
 *
 * Manual mode: commands complete only when a test calls mock_complete().
 * Auto mode: each queue has an executor thread that runs its commands in
 * order, each for duration_ns, and counts each execution in *counter.
 */
#ifndef XSCHED_MOCK_H
#define XSCHED_MOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../../libxsched/src/internal.h"

struct mock_cmd {
	uint32_t tag;		/* recorded in the execution log */
	uint32_t flags;
	uint64_t duration_ns;	/* auto mode */
	uint64_t *counter;	/* incremented once when the command completes */
};

#define MOCK_MAX_QUEUES 16
#define MOCK_LOG_MAX 65536

struct mock_queue {
	struct mock_platform *mp;
	uint32_t id;
	bool bound;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct mock_cmd *ring;
	uint32_t ring_size;
	uint64_t wptr, rptr;
	uint32_t state;		/* XS_HW_* */
	uint32_t mode;		/* of the current suspend */
	bool running;		/* auto: a command is on the "GPU" */
	uint64_t remaining_ns;	/* auto: of the command at rptr (SAVE keeps it) */
	bool started;		/* auto: the command at rptr has started */
	int efd;		/* readable while idle or failed */
	bool efd_set;
	int sfd;		/* readable while suspended (stop_fd) */
	bool sfd_set;
	bool arbitrated;	/* bound with XS_BIND_ARBITER */
	uint64_t arbiter_suspends;
	uint64_t binds;		/* bind + set_arbiter calls */
	pthread_t thread;
	bool exit;
	int32_t priority;
	/* counters */
	uint64_t launch_calls, wait_calls, suspend_calls, resume_calls;
	uint64_t suspends_done, saves_partway;
	uint64_t max_in_flight;
	uint64_t last_launch_rptr;
	pthread_t suspend_thread;	/* the thread of the last suspend call */
	/* called at the start of every suspend call, outside q->lock */
	void (*suspend_hook)(struct mock_queue *q);
	/* fault injection */
	int suspend_err;	/* next suspend fails with this */
	int launch_err;		/* next launch fails with this */
};

struct mock_exec {
	uint32_t queue;
	uint32_t tag;
};

struct mock_platform {
	struct xsched_platform plat;
	struct xs_platform_ops ops;
	bool auto_run;
	pthread_mutex_t log_lock;
	struct mock_exec log[MOCK_LOG_MAX];
	uint32_t nlog;
	struct mock_queue q[MOCK_MAX_QUEUES];
	uint32_t nq;
};

struct mock_platform *mock_create(bool auto_run, unsigned int max_level);
void mock_destroy(struct mock_platform *mp);
/* A new hardware queue; returns its handle for xsched_xqueue_create(). */
uint32_t mock_queue_create(struct mock_platform *mp, uint32_t ring_size);
struct mock_queue *mock_q(struct mock_platform *mp, uint32_t id);
/* Manual mode: complete up to @n commands if the queue runs; returns how many. */
uint64_t mock_complete(struct mock_platform *mp, uint32_t id, uint64_t n);
void mock_fail(struct mock_platform *mp, uint32_t id);
/* Snapshot of hardware pointers. */
uint64_t mock_wptr(struct mock_platform *mp, uint32_t id);
uint64_t mock_rptr(struct mock_platform *mp, uint32_t id);
uint32_t mock_state(struct mock_platform *mp, uint32_t id);
/* Auto mode: whether the command at rptr has started running. */
bool mock_started(struct mock_platform *mp, uint32_t id);
/* Auto mode: what is left of the command at rptr ends at its next slice
 * (a test that needs a long command to stop in the middle of need not wait
 * it out afterwards); returns what was left, in ns. */
uint64_t mock_cut_short(struct mock_platform *mp, uint32_t id);
/* Play the module's arbiter on an arbitrated queue: suspend it with SAVE
 * (in auto mode it stops at the executor's next slice), or resume it. */
int mock_arbiter_suspend(struct mock_platform *mp, uint32_t id);
int mock_arbiter_resume(struct mock_platform *mp, uint32_t id);

#endif
