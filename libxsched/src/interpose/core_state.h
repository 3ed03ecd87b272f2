/* SPDX-License-Identifier: MIT */
/*
 * The interposition core's private state, shared by its files and by no
 * other: the stream and event tables of each runtime (streams.c, events in
 * dispatch.c), the registered runtimes (symbols.c), the per-thread streams a
 * thread forgets at its exit.  Calls go one way: core.c (set-up, fork) and
 * dispatch.c over bursts.c, over streams.c (and mode.c), over symbols.c
 * and log.c.
 */
#ifndef XSCHED_INTERPOSE_CORE_STATE_H
#define XSCHED_INTERPOSE_CORE_STATE_H

#include <pthread.h>
#include <stdatomic.h>

#include "../internal.h"
#include "interpose.h"

#define XSI_SLOTS 4096		/* power of two */
#define XSI_EVENTS 4096		/* power of two */
#define XSI_RUNTIMES 4
#define XSI_DEVS 64		/* devices the caller-held gate tracks */
#define XSI_PT_MINE 8		/* per-thread streams one thread forgets at exit */
#define XSI_HOLD_MAX_NS (10ULL * 1000000000ULL)

enum { KIND_APP, KIND_LEGACY, KIND_PER_THREAD };

static inline bool caller_held(const struct xsi_runtime *rt)
{
	return rt->flags & XSI_RT_CALLER_HELD;
}

struct xsi_stream {
	struct xsi_runtime *rt;
	int kind;
	uintptr_t handle;	/* the key: the runtime's handle; 0 for the legacy stream */
	uintptr_t rt_handle;	/* what the runtime is given (marks) */
	int32_t device;		/* defaults */
	uint64_t thread;	/* per-thread */
	struct xsched_xqueue *xq;
	struct xsi_stream_desc desc;
	atomic_bool caps;	/* caller-held: counts in the cap's maximum */
	atomic_bool capturing;	/* caller-held: its calls go into a graph */
	struct xm_burst *bursts;	/* desc.chooses: its bursts (bursts.c) */
	bool gone;		/* out of the table (state->lock) */
	struct xsi_stream *retired_next;
};

/* A destroyed stream's XQueue whose work still runs (xsi_stream_destroyed(),
 * thread exit): it goes on holding lower streams until a last mark says its
 * work completed, then it is destroyed (reap()). */
struct xsi_zombie {
	struct xsched_xqueue *xq;
	struct xsi_zombie *next;
};

struct xsi_event {
	uintptr_t event;	/* 0: free */
	uint32_t stream_id;	/* the XQueue id it was recorded on */
	struct xsi_stream *s;
	uint64_t seq;		/* waits: the stream up to here */
	uint64_t upto;		/* its completion: the stream done up to here */
	uint64_t at;		/* recorded at (xs_now_ns()) */
};

struct xsi_state {
	pthread_mutex_t lock;	/* inserts, removals, the event table */
	void *libs[8];		/* rt->libs, opened */
	size_t nlibs;
	_Atomic(struct xsi_stream *) slots[XSI_SLOTS];
	unsigned int count;
	struct xsi_stream *retired;
	struct xsi_event events[XSI_EVENTS];
	/* Caller-held: the highest priority per device of a stream that caps
	 * (xsi_stream_caps()). */
	_Atomic int32_t maxp[XSI_DEVS];
	/* A stream of the runtime chooses its holds per burst (bursts.c; set
	 * once): until then an event synchronize looks nothing up. */
	atomic_bool chosen;
	/* Streams being captured into a graph (xsi_stream_capture()): while
	 * any is, a scheduled call asks the runtime whether its own stream
	 * joined a capture. */
	atomic_int captures;
	/* Devices the runtime has (0: not known yet; default_device()). */
	atomic_int ndev;
	/* Destroyed streams whose work runs on (under lock). */
	struct xsi_zombie *zombies;
	atomic_bool has_zombies;
};

/* A removed stream's slot (streams.c). */
extern struct xsi_stream xsi_tombstone;
#define TOMB (&xsi_tombstone)

/* symbols.c: the registered runtimes (reg_lock guards changes; lookups
 * load a slot with acquire). */
extern pthread_mutex_t xsi_reg_lock;
extern struct xsi_runtime *xsi_registered[XSI_RUNTIMES];

/* streams.c */
extern pthread_key_t xsi_pt_key;		/* its destructor: xsi_pt_exit() */
extern _Atomic unsigned int xsi_fork_gen;	/* bumped in a fork child */
void xsi_pt_exit(void *arg);
void xsi_drop_xq(struct xsched_xqueue *xq);
void xsi_reap(struct xsi_runtime *rt);
void xsi_forget(struct xsi_runtime *rt, struct xsi_stream *s, bool runs_on);
/* state->lock held: @s counts in its device's cap (@on) or not; what it
 * does now (a stream of no device caps nothing). */
bool xsi_caps_set_locked(struct xsi_state *st, struct xsi_stream *s, bool on);
/* A stream object's memory, once nothing can reach it. */
void xsi_stream_free(struct xsi_stream *s);

/* bursts.c (over streams.c): the hold chosen per burst, interpose.h. */
/* A call of @s (desc.chooses) may go: true when its burst holds (lv1). */
bool xsi_bursts_call(struct xsi_stream *s, const char *entry);
/* A synchronize of @s begun at @since (xs_now_ns()) succeeded; @recorded:
 * that of an event recorded then (0: of the stream itself), which ends
 * no burst begun after it. */
void xsi_bursts_synced(struct xsi_stream *s, uint64_t since, uint64_t recorded);

#endif /* XSCHED_INTERPOSE_CORE_STATE_H */
