/* SPDX-License-Identifier: MIT */
/*
 * The modelled GPU time that both fake runtimes of the interposer's host
 * tests keep (tests/fakes/fake_libcuda.c, tests/fakes/fake_libamdhip64.c):
 * a stream runs its commands one after the other in virtual time (a
 * command of d ns starts when the stream's previous one ends, or at
 * submission), and every command is logged as the runtime received it.
 *
 * Waits (as the real runtimes do them, kept as small as can be):
 *  - A memory wait (cuStreamWaitValue*, hipStreamWaitValue*) whose
 *    condition is false when the stream reaches it holds every later
 *    command of that stream until a write makes it true: a write-value
 *    command or a kernel that writes a flag (fake_memop(), at the
 *    writer's modelled end), or the host writing the memory itself
 *    (noticed at the next call into the fake: fake_settle()).  Until then
 *    those commands are `pending` (no start or end yet).  A device write
 *    is stored into the host memory when it is submitted (the host may see
 *    it early); a host write is noticed only on memory that no device
 *    command wrote.
 *  - A wait on an event whose record is pending is the same kind of wait.
 *  - Calls that block (synchronize, a copy to pageable memory) sleep until
 *    the end of what they wait for, polling while it is pending.
 *
 * Compiled once into each fake (fake_timeline.c, built against that fake's
 * header, which defines struct fake_rec with stream, kernel, variant,
 * captured, submit, start, end, ns, pending, memop, mem, val, mask, op, wide
 * and tl): include it after the fake's header.  What it shares with the
 * fake's own files is hidden (FAKE_HIDDEN); fake_log_count() and
 * fake_log_get() are exported (API).
 */
#ifndef FAKE_TIMELINE_H
#define FAKE_TIMELINE_H

#include <pthread.h>
#include <stdint.h>

/* The fakes' exports, and what their files share and no program sees. */
#define API __attribute__((visibility("default")))
#define FAKE_HIDDEN __attribute__((visibility("hidden")))

#define FAKE_MAX_LOG 100000

/* fake_rec.memop */
enum { FAKE_MEM_NONE = 0, FAKE_MEM_WAIT = 1, FAKE_MEM_WRITE = 2, FAKE_MEM_EVWAIT = 3 };
/* fake_rec.op of a wait: CUDA's CU_STREAM_WAIT_VALUE_* and HIP's
 * hipStreamWaitValue* have these values. */
enum { FAKE_GEQ = 0, FAKE_EQ = 1, FAKE_AND = 2, FAKE_NOR = 3 };

/* A stream's timeline (in every fake stream). */
struct fake_tl {
	uint64_t tail;		/* end of its last command */
	int blocked;		/* behind the unsatisfied wait logv[wait_rec] */
	int wait_rec;
};

extern FAKE_HIDDEN pthread_mutex_t mu;	/* the fake's one lock */
extern FAKE_HIDDEN struct fake_rec logv[FAKE_MAX_LOG];	/* every command, in order */
extern FAKE_HIDDEN int nlog;

/* Now on CLOCK_MONOTONIC, in ns; sleep until @t on it. */
FAKE_HIDDEN uint64_t fake_clock_ns(void);
FAKE_HIDDEN void sleep_until(uint64_t t);
/* mu held: resume every stream whose wait is satisfied by now. */
FAKE_HIDDEN void fake_settle(void);
/*
 * mu held: log a command of @ns on stream @id, whose timeline is @tl; a
 * capturing stream records it without running it; a blocked stream queues
 * it (pending).  The log keeps its first FAKE_MAX_LOG - 1 commands and
 * overwrites the last.
 */
FAKE_HIDDEN struct fake_rec *fake_log_add(int id, int capturing, struct fake_tl *tl,
					  int kernel, int variant, uint64_t ns);
/* mu held: make @r (just logged on @tl) a memory wait or write. */
FAKE_HIDDEN void fake_memop(struct fake_tl *tl, struct fake_rec *r, int memop, void *mem,
			    uint64_t val, uint64_t mask, int op, int wide);
/* mu held: a wait on @tl for record @ev (an event's record): placed as a
 * wait when that record is pending. */
FAKE_HIDDEN void fake_evwait(struct fake_tl *tl, struct fake_rec *r, int ev);
/* Sleep until record @i ended (polling while it is pending). */
FAKE_HIDDEN void fake_rec_wait(int i);
/* mu held: has record @i ended by now? */
FAKE_HIDDEN int fake_rec_done(int i);
/* Sleep until everything logged on @tl so far has ended. */
FAKE_HIDDEN void fake_tl_wait(struct fake_tl *tl);
/* mu held: has everything on @tl ended by now? */
FAKE_HIDDEN int fake_tl_idle(struct fake_tl *tl);
/* Sleep until everything logged so far has ended (a device-wide synchronize). */
FAKE_HIDDEN void fake_log_wait(void);

#endif
