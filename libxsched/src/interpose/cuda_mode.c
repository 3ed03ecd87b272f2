// SPDX-License-Identifier: MIT
/*
 * Which way an urgent stream's bursts run (XSCHED_CUDA_LV3_MODE, "auto" by
 * default; Documentation/cuda.rst, "When each mechanism is worth it").
 *
 * No mode wins everywhere (H200, ResNet-18 b4, bench/cuda): beside a GEMM
 * that holds every SM the program's stream waits a whole kernel (20 ms
 * P50 against 4 alone), the urgent context cuts it to 5.7 and the gather
 * to 4.8; alone, the gather costs the overlap of host and GPU (5.1 against
 * 3.7) and the urgent context costs the batch job a few percent of its
 * time whenever it runs; beside ResNet-50 b16 (short kernels) Lv1's holds
 * keep it at 1.02x its time alone where the urgent context gives 1.3x,
 * at 13% of the batch job's throughput.  What decides is the batch job beside, which the
 * library cannot see, and the urgent job's own latency, which it can: a
 * burst is the stream's work from its first call after a synchronize to
 * the next synchronize of it, and its latency is that span.
 *
 * So each mode is measured on the stream's own bursts: first each mode in
 * turn, XM_WIN times; then the best (the lowest median of its last XM_WIN
 * bursts, a cheaper mode preferred unless a costlier one is XM_MARGIN_PCT
 * faster) runs, and every other mode is tried again for one burst after
 * XM_BACKOFF_MIN bursts, twice as long after each try it loses (four
 * times if it took twice the best's median or more; up to XM_BACKOFF_MAX), so that a loser costs few requests (a P99 is not spent
 * on exploring) and a change of neighbour is still seen; a try that would
 * win (by the rule above) is tried again at once, until its median says.
 */
#include <string.h>

#include "cuda_mode.h"

static const char *const names[XM_NMODES] = { "native", "ctx", "gather", "lv1" };

const char *xm_name(enum xm_mode m)
{
	return (unsigned int)m < XM_NMODES ? names[m] : "?";
}

int xm_parse(const char *s)
{
	int m;

	if (!s || !*s || !strcmp(s, "auto"))
		return -1;
	for (m = 0; m < XM_NMODES; m++)
		if (!strcmp(s, names[m]))
			return m;
	return -2;
}

void xm_init(struct xm_state *st, int forced, const bool have[XM_NMODES])
{
	int m;

	memset(st, 0, sizeof(*st));
	for (m = 0; m < XM_NMODES; m++) {
		st->have[m] = have[m];
		st->backoff[m] = XM_BACKOFF_MIN;
		st->next_try[m] = XM_NMODES * XM_WIN + XM_BACKOFF_MIN;
	}
	st->have[XM_NATIVE] = true;
	st->forced = forced >= 0 && forced < XM_NMODES && st->have[forced] ? forced : -1;
	st->best = st->forced >= 0 ? (enum xm_mode)st->forced : XM_NATIVE;
	st->cur = st->best;
}

uint32_t xm_median(const struct xm_state *st, enum xm_mode m)
{
	uint32_t v[XM_WIN], t;
	int i, j, n = st->n[m];

	if (!n)
		return 0;
	memcpy(v, st->lat[m], sizeof(v));
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return v[n / 2];
}

/* The lowest median. */
static enum xm_mode best_of(const struct xm_state *st)
{
	enum xm_mode m, best = XM_NATIVE;
	uint32_t lo = 0, v;

	for (m = 0; m < XM_NMODES; m++) {
		v = xm_median(st, m);
		if (st->have[m] && st->n[m] && (!lo || v < lo)) {
			lo = v;
			best = m;
		}
	}
	return best;
}

enum xm_mode xm_begin(struct xm_state *st)
{
	enum xm_mode m;
	uint32_t b = st->burst++, i;

	if (st->forced >= 0)
		return st->cur = (enum xm_mode)st->forced;
	/* Each mode XM_WIN times first, in turn. */
	for (i = 0; i < XM_NMODES; i++) {
		m = (enum xm_mode)((b + i) % XM_NMODES);
		if (st->have[m] && st->n[m] < XM_WIN)
			return st->cur = m;
	}
	for (m = 0; m < XM_NMODES; m++)
		if (st->have[m] && m != st->best && (int32_t)(b - st->next_try[m]) >= 0)
			return st->cur = m;
	return st->cur = st->best;
}

/* The best after a new latency: a costlier mode replaces the current best
 * only when faster by the margin, a cheaper one once it is no slower (so
 * the cheaper is kept among alike modes, and two modes alike do not take
 * turns, each turn bringing the losers' tries forward). */
static enum xm_mode choose(const struct xm_state *st, enum xm_mode cur)
{
	enum xm_mode c = best_of(st);
	uint64_t vc = xm_median(st, c), vcur = xm_median(st, cur);

	if (c == cur || !st->n[cur])
		return c;
	if (c < cur)	/* cheaper: once no slower */
		return vc <= vcur ? c : cur;
	return vc * 100 <= vcur * (100 - XM_MARGIN_PCT) ? c : cur;
}

bool xm_end(struct xm_state *st, uint32_t us)
{
	enum xm_mode m = st->cur, was = st->best;

	st->runs[m]++;
	if (st->forced >= 0)
		return false;
	st->lat[m][st->pos[m]] = us;
	st->pos[m] = (uint8_t)((st->pos[m] + 1) % XM_WIN);
	if (st->n[m] < XM_WIN)
		st->n[m]++;
	st->best = choose(st, was);
	if (st->best != was) {
		/* The old best is now a loser, tried as one from now on; the
		 * others keep their turn. */
		st->backoff[was] = XM_BACKOFF_MIN;
		st->next_try[was] = st->burst + XM_BACKOFF_MIN;
		return true;
	}
	if (m == st->best)
		return false;
	if ((uint64_t)us * 100 <= (uint64_t)xm_median(st, st->best) *
	    (m < st->best ? 100 + XM_MARGIN_PCT : 100 - XM_MARGIN_PCT)) {
		/* It would win this time: again at once, until its median
		 * says. */
		st->backoff[m] = XM_BACKOFF_MIN;
		st->next_try[m] = st->burst;
	} else {		/* a try that lost: later next time, much later
				 * if it lost by far */
		st->backoff[m] *= (uint64_t)us > 2ULL * xm_median(st, st->best) ? 4 : 2;
		if (st->backoff[m] > XM_BACKOFF_MAX)
			st->backoff[m] = XM_BACKOFF_MAX;
		st->next_try[m] = st->burst + st->backoff[m];
	}
	return false;
}

void xm_burst_init(struct xm_burst *b, int forced, const bool have[XM_NMODES])
{
	xm_init(&b->st, forced, have);
	pthread_mutex_init(&b->lock, NULL);
	atomic_init(&b->in, false);
	atomic_init(&b->mode, (int)b->st.best);
	b->t0 = 0;
}

void xm_burst_fini(struct xm_burst *b)
{
	pthread_mutex_destroy(&b->lock);
}

enum xm_mode xm_burst_mode(struct xm_burst *b, uint64_t (*now)(void))
{
	if (!atomic_load_explicit(&b->in, memory_order_acquire)) {
		pthread_mutex_lock(&b->lock);
		if (!atomic_load(&b->in)) {
			b->t0 = now();
			atomic_store(&b->mode, (int)xm_begin(&b->st));
			atomic_store_explicit(&b->in, true, memory_order_release);
		}
		pthread_mutex_unlock(&b->lock);
	}
	return (enum xm_mode)atomic_load_explicit(&b->mode, memory_order_relaxed);
}

bool xm_burst_end(struct xm_burst *b, uint64_t now)
{
	uint64_t us;
	bool changed = false;

	if (!atomic_load(&b->in))
		return false;
	pthread_mutex_lock(&b->lock);
	if (atomic_load(&b->in)) {
		us = (now - b->t0) / 1000;
		changed = xm_end(&b->st, us > UINT32_MAX ? UINT32_MAX : (uint32_t)us) &&
			  b->st.burst > XM_NMODES * XM_WIN;
		atomic_store(&b->in, false);
	}
	pthread_mutex_unlock(&b->lock);
	return changed;
}
