// SPDX-License-Identifier: MIT
/* The modelled GPU time of both fake runtimes: see fake_timeline.h. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Built once into each fake (a shared object of its own), against that
 * fake's struct fake_rec: FAKE_TIMELINE_HIP picks the HIP fake's. */
#ifdef FAKE_TIMELINE_HIP
#include "fake_libamdhip64.h"
#else
#include "fake_libcuda.h"
#endif
#include "fake_timeline.h"

pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;	/* the fake's one lock */
struct fake_rec logv[FAKE_MAX_LOG];
int nlog;

#define FAKE_MAX_BLOCKED 256
static struct fake_tl *blocked_tl[FAKE_MAX_BLOCKED];

#define FAKE_MAX_WRITES 4096
static struct {
	void *mem;
	uint64_t val, prev, t;
	int wide;
} wlog[FAKE_MAX_WRITES];
static int nwrites;

uint64_t fake_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void sleep_until(uint64_t t)
{
	struct timespec ts = { .tv_sec = (time_t)(t / 1000000000ULL),
			       .tv_nsec = (long)(t % 1000000000ULL) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static uint64_t mem_read(void *mem, int wide)
{
	return wide ? __atomic_load_n((uint64_t *)mem, __ATOMIC_ACQUIRE) :
	       __atomic_load_n((uint32_t *)mem, __ATOMIC_ACQUIRE);
}

/* mu held: @mem's value at modelled time @t; *host: read from the memory
 * (no device write known before @t). */
static uint64_t value_at(void *mem, int wide, uint64_t t, int *host)
{
	int i, best = -1, first = -1;

	for (i = 0; i < nwrites; i++) {
		if (wlog[i].mem != mem)
			continue;
		if (first < 0 || wlog[i].t < wlog[first].t)
			first = i;
		if (wlog[i].t <= t && (best < 0 || wlog[i].t >= wlog[best].t))
			best = i;
	}
	*host = 0;
	if (best >= 0)
		return wlog[best].val;
	if (first >= 0)
		return wlog[first].prev;
	*host = 1;
	return mem_read(mem, wide);
}

static int cond_holds(const struct fake_rec *w, uint64_t v)
{
	uint64_t ref = w->val;

	v &= w->mask;
	if (!w->wide) {
		v &= 0xffffffffULL;
		ref &= 0xffffffffULL;
	}
	switch (w->op) {
	case FAKE_GEQ:
		return w->wide ? (int64_t)(v - ref) >= 0 : (int32_t)(uint32_t)(v - ref) >= 0;
	case FAKE_EQ:
		return v == ref;
	case FAKE_AND:
		return (v & ref) != 0;
	default:
		return (~(v | ref) & (w->wide ? ~0ULL : 0xffffffffULL)) != 0;
	}
}

/* mu held: when the wait @w (started at w->start) is satisfied: 1 and *t,
 * or 0 (not known yet). */
static int wait_done(const struct fake_rec *w, uint64_t *t)
{
	uint64_t c = w->start, now = fake_clock_ns();
	int i, host;

	if (w->memop == FAKE_MEM_EVWAIT) {
		const struct fake_rec *e = &logv[w->val];

		if (e->pending)
			return 0;
		*t = e->end > c ? e->end : c;
		return 1;
	}
	if (cond_holds(w, value_at(w->mem, w->wide, c, &host))) {
		*t = host && now > c ? now : c;
		return 1;
	}
	/* The first later device write that makes it true. */
	for (;;) {
		int next = -1;

		for (i = 0; i < nwrites; i++)
			if (wlog[i].mem == w->mem && wlog[i].t > c &&
			    (next < 0 || wlog[i].t < wlog[next].t))
				next = i;
		if (next < 0)
			return 0;
		c = wlog[next].t;
		if (cond_holds(w, value_at(w->mem, w->wide, c, &host))) {
			*t = c;
			return 1;
		}
	}
}

static void write_add(void *mem, uint64_t val, int wide, uint64_t t)
{
	if (nwrites == FAKE_MAX_WRITES)
		return;
	wlog[nwrites].mem = mem;
	wlog[nwrites].val = val;
	wlog[nwrites].wide = wide;
	wlog[nwrites].t = t;
	wlog[nwrites].prev = mem_read(mem, wide);
	nwrites++;
	if (wide)
		__atomic_store_n((uint64_t *)mem, val, __ATOMIC_RELEASE);
	else
		__atomic_store_n((uint32_t *)mem, (uint32_t)val, __ATOMIC_RELEASE);
}

static void block_on(struct fake_tl *tl, int i)
{
	int k;

	tl->blocked = 1;
	tl->wait_rec = i;
	for (k = 0; k < FAKE_MAX_BLOCKED; k++)
		if (blocked_tl[k] == tl)
			return;
	for (k = 0; k < FAKE_MAX_BLOCKED; k++) {
		if (!blocked_tl[k]) {
			blocked_tl[k] = tl;
			return;
		}
	}
}

/* mu held: record @i (placed, start known) has its effect: a write is
 * logged at its end, a wait blocks @tl unless satisfied.  0: blocked. */
static int take_effect(struct fake_tl *tl, int i)
{
	struct fake_rec *r = &logv[i];
	uint64_t t;

	if (r->memop == FAKE_MEM_WRITE)
		write_add(r->mem, r->val, r->wide, r->end);
	if (r->memop != FAKE_MEM_WAIT && r->memop != FAKE_MEM_EVWAIT)
		return 1;
	if (wait_done(r, &t)) {
		r->end = t;
		if (t > tl->tail)
			tl->tail = t;
		return 1;
	}
	r->pending = 1;
	block_on(tl, i);
	return 0;
}

/* mu held: @tl's wait is satisfied at @t: place what queued behind it. */
static void resume(struct fake_tl *tl, uint64_t t)
{
	struct fake_rec *w = &logv[tl->wait_rec];
	int j;

	w->pending = 0;
	w->end = t;
	if (t > tl->tail)
		tl->tail = t;
	tl->blocked = 0;
	for (j = tl->wait_rec + 1; j < nlog; j++) {
		struct fake_rec *r = &logv[j];

		if (!r->pending || r->tl != tl)
			continue;
		r->pending = 0;
		r->start = tl->tail > r->submit ? tl->tail : r->submit;
		r->end = r->start + r->ns;
		tl->tail = r->end;
		if (!take_effect(tl, j))
			return;
	}
}

/* mu held: resume every stream whose wait is satisfied by now. */
void fake_settle(void)
{
	int k, again = 1;

	while (again) {
		again = 0;
		for (k = 0; k < FAKE_MAX_BLOCKED; k++) {
			struct fake_tl *tl = blocked_tl[k];
			uint64_t t;

			if (!tl)
				continue;
			if (!tl->blocked) {
				blocked_tl[k] = NULL;
				continue;
			}
			if (wait_done(&logv[tl->wait_rec], &t)) {
				resume(tl, t);
				if (!tl->blocked)
					blocked_tl[k] = NULL;
				again = 1;
			}
		}
	}
}

/*
 * mu held: log a command of @ns on stream @id, whose timeline is @tl; a
 * capturing stream records it without running it; a blocked stream queues
 * it (pending).  The log keeps its first FAKE_MAX_LOG - 1 commands and
 * overwrites the last.
 */
struct fake_rec *fake_log_add(int id, int capturing, struct fake_tl *tl,
			      int kernel, int variant, uint64_t ns)
{
	struct fake_rec *r = nlog < FAKE_MAX_LOG ? &logv[nlog++] : &logv[FAKE_MAX_LOG - 1];
	uint64_t now = fake_clock_ns();

	memset(r, 0, sizeof(*r));
	r->stream = id;
	r->kernel = kernel;
	r->variant = variant;
	r->submit = now;
	r->ns = ns;
	r->tl = tl;
	if (capturing) {
		r->captured = 1;
		return r;
	}
	fake_settle();
	if (tl->blocked) {
		r->pending = 1;
		return r;
	}
	r->start = tl->tail > now ? tl->tail : now;
	r->end = r->start + ns;
	tl->tail = r->end;
	return r;
}

/* mu held: make @r (just logged on @tl) a memory wait or write. */
void fake_memop(struct fake_tl *tl, struct fake_rec *r, int memop, void *mem,
		uint64_t val, uint64_t mask, int op, int wide)
{
	r->memop = memop;
	r->mem = mem;
	r->val = val;
	r->mask = mask;
	r->op = op;
	r->wide = wide;
	if (r->captured || r->pending)
		return;		/* a graph node, or takes effect when placed */
	if (take_effect(tl, (int)(r - logv)))
		fake_settle();
}

/* mu held: a wait on @tl for record @ev (an event's record): placed as a
 * wait when that record is pending. */
void fake_evwait(struct fake_tl *tl, struct fake_rec *r, int ev)
{
	r->memop = FAKE_MEM_EVWAIT;
	r->val = (uint64_t)ev;
	if (r->captured || r->pending)
		return;
	(void)take_effect(tl, (int)(r - logv));
}

/* Sleep until record @i ended (polling while it is pending). */
void fake_rec_wait(int i)
{
	for (;;) {
		uint64_t e;
		int p;

		pthread_mutex_lock(&mu);
		fake_settle();
		p = logv[i].pending;
		e = logv[i].end;
		pthread_mutex_unlock(&mu);
		if (!p) {
			sleep_until(e);
			return;
		}
		usleep(100);
	}
}

/* mu held: has record @i ended by now? */
int fake_rec_done(int i)
{
	fake_settle();
	return !logv[i].pending && fake_clock_ns() >= logv[i].end;
}

/* Sleep until everything logged on @tl so far has ended. */
void fake_tl_wait(struct fake_tl *tl)
{
	for (;;) {
		uint64_t t;
		int b;

		pthread_mutex_lock(&mu);
		fake_settle();
		b = tl->blocked;
		t = tl->tail;
		pthread_mutex_unlock(&mu);
		if (!b) {
			sleep_until(t);
			return;
		}
		usleep(100);
	}
}

/* mu held: has everything on @tl ended by now? */
int fake_tl_idle(struct fake_tl *tl)
{
	fake_settle();
	return !tl->blocked && fake_clock_ns() >= tl->tail;
}

/* Sleep until everything logged so far has ended (a device-wide synchronize). */
void fake_log_wait(void)
{
	for (;;) {
		uint64_t t = 0;
		int i, p = 0;

		pthread_mutex_lock(&mu);
		fake_settle();
		for (i = 0; i < nlog; i++) {
			p |= logv[i].pending;
			if (logv[i].end > t)
				t = logv[i].end;
		}
		pthread_mutex_unlock(&mu);
		if (!p) {
			sleep_until(t);
			return;
		}
		usleep(100);
	}
}

API int fake_log_count(void)
{
	int n;

	pthread_mutex_lock(&mu);
	n = nlog;
	pthread_mutex_unlock(&mu);
	return n;
}

API int fake_log_get(int i, struct fake_rec *out)
{
	int ok;

	pthread_mutex_lock(&mu);
	fake_settle();
	ok = i >= 0 && i < nlog;
	if (ok)
		*out = logv[i];
	pthread_mutex_unlock(&mu);
	return ok ? 0 : -1;
}
