/* SPDX-License-Identifier: MIT */
/*
 * Events recorded on urgent streams, and across the two contexts of an
 * urgent stream (Lv3 on NVIDIA): see cuda/events.c.  Called by the CUDA
 * table's hooks (cuda/hooks.c).  It calls the driver (cuda/driver.h), the
 * urgent context (cuda/urgent.c), the gather (cuda/gather.c), the handle
 * table (handle_table.c) and the core's log.
 */
#ifndef XSCHED_CUDA_EVENTS_H
#define XSCHED_CUDA_EVENTS_H

#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>

/* After xu_init(): events followed while urgent streams are (xu_tracking()),
 * twins made while the urgent context is on. */
void xu_events_init(void);
/* Around a fork (cuda/hooks.c's one registration): the event table's lock; the
 * child forgets the table. */
void xu_events_fork_prepare(void);
void xu_events_fork_parent(void);
void xu_events_fork_child(void);
void xu_event_created(CUevent ev, unsigned int flags);
void xu_event_destroyed(CUevent ev);
struct xu_record {
	void *e;		/* struct xu_event, or NULL: a plain record */
	bool twin;
	bool urgent;		/* on an urgent stream (either side) */
	bool captured;
	CUstream h;		/* the program's stream */
};
/* Rewrites *@ev and *@h to what must be recorded where. */
void xu_record_begin(struct xu_record *rc, CUevent *ev, CUstream *h);
void xu_record_end(struct xu_record *rc, CUresult r);
/* cuStreamWaitEvent: *@h routed, *@ev the one recorded last. */
void xu_wait_event(CUstream *h, CUevent *ev);
/* The one of @ev and its twin recorded last (synchronize, query). */
CUevent xu_event_current(CUevent ev);
/* An elapsed time's two events: both twins, or both the program's. */
void xu_event_pair(CUevent *a, CUevent *b);

/* A synchronize or query of @ev begun at @since succeeded: the burst of
 * the urgent stream that recorded it last (either side), if any, ended. */
void xu_event_synchronized(CUevent ev, uint64_t since);

#endif
