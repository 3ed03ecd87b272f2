// SPDX-License-Identifier: MIT
/*
 * The gather: an urgent stream's burst of work reaches the urgent context
 * at once (XSCHED_CUDA_LV3_MODE gather, or chosen by auto; Documentation/
 * cuda.rst, "The gather").
 *
 * The driver time-slices the urgent context against the program's.  When
 * the urgent context has nothing left to run it gives the GPU back, and
 * the batch context then keeps it for a time slice (~2.4 ms measured on an
 * H100, bench/cuda/switch_cost.cu) before new urgent work can stop it.  A
 * program that launches eagerly (each kernel shorter than the host's time
 * between two launches, as PyTorch's eager mode is) leaves the urgent
 * context idle between every two kernels and pays that slice again and
 * again: ResNet-18 took 6x its time alone beside a GEMM.  So a burst is
 * held back on the GPU: the first kernel, memset or device copy on a twin
 * since the last opening queues a wait on a host word (cuStreamWaitValue32)
 * ahead of itself, and the word is raised, opening every gate at once,
 * before anything that can make the host wait for GPU work: a synchronize
 * or query, a copy that involves host memory, a host function or callback,
 * a hold of the scheduler.  Only the waits that may depend on gated work
 * open them: one on an urgent stream, an urgent event or the context, or
 * any wait once a stream of the program's context waits for gated work
 * (an event of an urgent stream, a join); a batch thread's own
 * synchronize leaves them closed.  The burst then runs at once and the urgent
 * context stays busy until it ends: one switch per burst.
 *
 * Nothing is copied or reordered: every call reaches the driver when the
 * program makes it, in its order; only its start on the GPU waits.  What
 * the library cannot see (a host thread spinning on memory a kernel
 * writes, another process waiting on an IPC event) is covered by a
 * watchdog thread that opens a gate closed for XSCHED_CUDA_GATHER_MAX_MS
 * (20 ms by default) and says so in the log; a gate also opens after
 * XG_MAX_CALLS calls, before a stream's queue in the driver could fill.
 *
 * One host word serves all gates: opening k raises it to k, a gate closed
 * while k-1 openings had happened waits for k (the driver's comparison is
 * cyclic, so the count may wrap).  A gate closed concurrently with an
 * opening waits for that opening or the next one; the watchdog sees every
 * closed gate, so no wait is ever left without an opening.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../internal.h"
#include "../interpose.h"
#include "driver.h"
#include "gather.h"

#define XG_MAX_CALLS 256	/* a gate opens after this many calls behind it */

static bool on;			/* the driver allows it (XSCHED_CUDA_LV3 on) */
static _Atomic uint32_t *word;	/* pinned, mapped: the openings so far */
static CUdeviceptr dword;
static atomic_uint openings;	/* what *word is raised to */
static atomic_ullong closed_since;	/* ns a gate was closed at; 0: none closed */
static uint64_t max_ns = 20 * 1000000ULL;
static atomic_ulong n_watchdog;	/* openings the watchdog made */
#define XG_WD_RING 64
static atomic_uint wd_open[XG_WD_RING];	/* the last openings it made, by number */
static atomic_bool depended;	/* xg_depend() since the last opening */
static atomic_int paused;	/* xg_pause() without its xg_resume(): no gate closes */

static pthread_mutex_t wd_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wd_cond;
static bool wd_started;
static bool set_up;		/* xg_init() got this far */

void xg_fork_child(void)
{
	/* The child cannot use the parent's contexts or pinned memory, nor
	 * has it its thread. */
	if (!set_up)
		return;
	pthread_mutex_init(&wd_lock, NULL);
	wd_started = false;
	on = false;
	atomic_store(&word, NULL);
	atomic_store(&closed_since, 0);
	atomic_store(&depended, false);
	atomic_store(&paused, 0);
}

void xg_init(void)
{
	const char *s;
	pthread_condattr_t ca;

	s = getenv("XSCHED_CUDA_GATHER_MAX_MS");
	if (s && *s) {
		char *end;
		unsigned long long v = strtoull(s, &end, 10);

		if (*end || !v || v > 60000)
			xs_warn("cuda: XSCHED_CUDA_GATHER_MAX_MS=%s is not 1..60000 ms; using 20", s);
		else
			max_ns = v * 1000000ULL;
	}
	if (!xc_drv.wait32 || !xc_drv.host_alloc || !xc_drv.host_dptr) {
		xs_warn("cuda: this libcuda lacks stream memory waits; urgent work is not gathered");
		return;
	}
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&wd_cond, &ca);
	pthread_condattr_destroy(&ca);
	set_up = true;	/* (xg_fork_child() resets it all) */
	atexit(xg_open);	/* what a program left unsynchronized still runs */
	on = true;
}

bool xg_on(void)
{
	return on;
}

void xg_setup(void)
{
	void *p = NULL;

	if (!on || word)
		return;
	/* Portable: every context's streams may wait on it. */
	if (xc_drv.host_alloc(&p, 64, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP) != CUDA_SUCCESS ||
	    xc_drv.host_dptr(&dword, p, 0) != CUDA_SUCCESS) {
		xs_warn("cuda: no pinned memory for the gather's gate; urgent work is not gathered");
		on = false;
		return;
	}
	memset(p, 0, 64);
	atomic_store(&word, p);
}

static struct timespec ts_of(uint64_t ns)
{
	struct timespec t = { .tv_sec = ns / 1000000000ULL, .tv_nsec = ns % 1000000000ULL };

	return t;
}

/* The opening's number. */
static uint32_t raise_word(void)
{
	_Atomic uint32_t *w = atomic_load(&word);
	uint32_t k = atomic_fetch_add(&openings, 1) + 1;
	uint32_t cur;

	if (!w)
		return k;
	cur = atomic_load(w);
	/* Monotonic (cyclically) even with two openings at once. */
	while ((int32_t)(k - cur) > 0 && !atomic_compare_exchange_weak(w, &cur, k))
		;
	return k;
}

void xg_open(void)
{
	if (!atomic_load_explicit(&closed_since, memory_order_relaxed))
		return;
	atomic_store(&closed_since, 0);
	atomic_store(&depended, false);
	(void)raise_word();
}

void xg_depend(void)
{
	if (atomic_load_explicit(&closed_since, memory_order_relaxed))
		atomic_store(&depended, true);
}

void xg_open_for(bool urgent)
{
	if (urgent || atomic_load_explicit(&depended, memory_order_relaxed))
		xg_open();
}

/* Opens what stayed closed too long: the host waits on something the
 * library does not see. */
static void *watchdog(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&wd_lock);
	for (;;) {
		uint64_t since = atomic_load(&closed_since), now = xs_now_ns();

		if (!since) {
			pthread_cond_wait(&wd_cond, &wd_lock);
			continue;
		}
		if (now - since < max_ns) {
			struct timespec t = ts_of(since + max_ns);

			pthread_cond_timedwait(&wd_cond, &wd_lock, &t);
			continue;
		}
		if (atomic_compare_exchange_strong(&closed_since, &since, 0)) {
			uint32_t k;

			atomic_store(&depended, false);
			k = raise_word();
			atomic_store(&wd_open[k % XG_WD_RING], k);
			if (atomic_fetch_add(&n_watchdog, 1) == 0)
				xs_info("cuda: a gathered urgent burst was started by the watchdog after %llu ms: the program spent that long inside one burst, or waits for it in a way the library does not see (XSCHED_CUDA_GATHER_MAX_MS sets the time; XSCHED_CUDA_LV3_MODE=ctx turns the gather off)",
					(unsigned long long)(max_ns / 1000000));
			else
				xc_log("gather: watchdog opened the gates (%lu times)",
				     atomic_load(&n_watchdog));
		}
	}
	return NULL;
}

static void watchdog_kick(void)
{
	pthread_t t;
	pthread_attr_t a;

	pthread_mutex_lock(&wd_lock);
	if (!wd_started) {
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		wd_started = pthread_create(&t, &a, watchdog, NULL) == 0;
		pthread_attr_destroy(&a);
		if (!wd_started) {
			/* No watchdog, no gather: a gate must never wait unseen. */
			on = false;
			atomic_store(&closed_since, 0);
			(void)raise_word();
			xs_warn("cuda: the gather's watchdog thread cannot start; urgent work is not gathered");
		}
	}
	pthread_cond_signal(&wd_cond);
	pthread_mutex_unlock(&wd_lock);
}

#ifdef XSCHED_TEST_SEAMS
/* Tests only: another thread's opening at the worst moment of a close. */
static void seam_open_in_close(void)
{
	if (getenv("XSCHED_TEST_OPEN_IN_CLOSE"))
		xg_open();
}
#else
static inline void seam_open_in_close(void)
{
}
#endif

void xg_close(struct xg_gate *g, CUstream twin)
{
	uint32_t k, until;
	unsigned long long zero = 0;

	if (!on || !atomic_load_explicit(&word, memory_order_relaxed) ||
	    atomic_load_explicit(&paused, memory_order_relaxed))
		return;
	/* The opening it waits for, then the gate seen closed (before the
	 * wait is queued: a synchronize meanwhile opens it rather than
	 * waiting for the watchdog).  In this order an opening between the
	 * two is either the one waited for or followed by the mark, which
	 * the watchdog and the next synchronize see; marked first, an
	 * opening between could clear the mark and leave the wait for the
	 * next opening unseen, for ever (an LLM decode loop hung so on an
	 * H100).  (The clock is read once a burst, not on every call.) */
	k = atomic_load(&openings) + 1;
	seam_open_in_close();
	if (!atomic_load(&closed_since) &&
	    atomic_compare_exchange_strong(&closed_since, &zero, xs_now_ns() | 1))
		watchdog_kick();
	until = atomic_load_explicit(&g->until, memory_order_relaxed);
	if (until == k) {
		if (atomic_fetch_add_explicit(&g->n, 1, memory_order_relaxed) + 1 >= XG_MAX_CALLS) {
			xc_log("gather: stream %p: %d calls behind its gate: opened", (void *)twin,
			     XG_MAX_CALLS);
			xg_open();
		}
		return;
	}
	if (xc_drv.wait32(twin, dword, k, CU_STREAM_WAIT_VALUE_GEQ) != CUDA_SUCCESS) {
		xc_log("gather: stream %p: its gate cannot be closed; this burst is not gathered",
		     (void *)twin);
		return;
	}
	atomic_store(&g->until, k);
	atomic_store_explicit(&g->n, 0, memory_order_relaxed);
}

void xg_pause(void)
{
	atomic_fetch_add(&paused, 1);
	xg_open();
}

void xg_resume(void)
{
	atomic_fetch_sub(&paused, 1);
}

static __thread bool call_paused;

void xg_pause_call(void)
{
	if (!call_paused) {
		call_paused = true;
		xg_pause();
	}
}

void xg_call_done(void)
{
	if (call_paused) {
		call_paused = false;
		xg_resume();
	}
}

bool xg_watchdog_opened(const struct xg_gate *g, atomic_uint *seen)
{
	uint32_t until = atomic_load_explicit(&g->until, memory_order_relaxed);

	if (!until || atomic_load_explicit(&wd_open[until % XG_WD_RING], memory_order_relaxed) != until)
		return false;
	return atomic_exchange(seen, until) != until;
}

uint32_t xg_max_us(void)
{
	return (uint32_t)(max_ns / 1000);
}

unsigned long xg_watchdog_openings(void)
{
	return atomic_load_explicit(&n_watchdog, memory_order_relaxed);
}

void xg_waited(const char *call)
{
	static atomic_bool told;

	if (!atomic_exchange(&told, true))
		xs_info("cuda: %s returned only after the watchdog opened the gates: it may wait for gathered GPU work",
			call);
	else
		xc_log("gather: %s returned only when the watchdog opened the gates", call);
}
