/* SPDX-License-Identifier: MIT */
/*
 * The gather (Lv3 on NVIDIA): an urgent stream's burst of work reaches the
 * urgent context at once.  See cuda/gather.c.  Called by the urgent context
 * (cuda/urgent.c) and the CUDA table's hooks (cuda/hooks.c); it calls only the
 * driver (cuda/driver.h) and the core's log (log.c, config.c).
 */
#ifndef XSCHED_CUDA_GATHER_H
#define XSCHED_CUDA_GATHER_H

#include <cuda.h>
#include <stdatomic.h>
#include <stdbool.h>

/* A twin stream's gate. */
struct xg_gate {
	atomic_uint until;	/* the opening it waits for (0: never closed) */
	atomic_uint n;		/* calls gathered behind it since */
};

/* XSCHED_CUDA_GATHER_MAX_MS read (after xc_driver_init()). */
void xg_init(void);
/* In a fork's child (cuda/hooks.c's one registration): no gate, no watchdog.
 * The watchdog's lock is not taken around a fork: the child has no
 * watchdog thread and makes the lock anew. */
void xg_fork_child(void);
/* Around a call that waits for the contexts' work (a code load): the gates
 * open and none closes until xg_resume(). */
void xg_pause(void);
void xg_resume(void);
/* The same for the calling thread's scheduled call in progress (a first
 * launch, which loads its function): resumed by xg_call_done() after it. */
void xg_pause_call(void);
void xg_call_done(void);
/* The driver can gather (known after xg_init()). */
bool xg_on(void);
/* With an urgent context current: the gate's memory, once. */
void xg_setup(void);
/* Before a call that only queues GPU work on @twin: the gate is closed
 * (the twin waits for the next opening) unless it already is. */
void xg_close(struct xg_gate *g, CUstream twin);
/* Before any call that may make the host wait (or the process end): every
 * gate opens. */
void xg_open(void);
/* A stream of the program's context now waits (on the GPU) for work behind
 * a gate: a host wait on any stream opens the gates until the next
 * opening. */
void xg_depend(void);
/* Before a call that may make the host wait for a stream: the gates open
 * if it is an urgent stream (@urgent) or may depend on one (xg_depend()). */
void xg_open_for(bool urgent);
/* Was the gate @g last closed opened by the watchdog, and not told yet
 * (*@seen: the last opening told for it)? */
bool xg_watchdog_opened(const struct xg_gate *g, atomic_uint *seen);
/* The watchdog's time (XSCHED_CUDA_GATHER_MAX_MS), us. */
uint32_t xg_max_us(void);
/* The watchdog's openings so far, and a call that returned only after
 * one (named in the log: what the gather must learn to open for). */
unsigned long xg_watchdog_openings(void);
void xg_waited(const char *call);

#endif
