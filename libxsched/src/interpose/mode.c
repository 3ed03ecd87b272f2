// SPDX-License-Identifier: MIT
/*
 * Which way an urgent stream's bursts run (on CUDA XSCHED_CUDA_LV3_MODE,
 * "auto" by default; Documentation/cuda.rst, "When each mechanism is worth
 * it"; without the urgent context, on CUDA and HIP alike, between native
 * and lv1 only: bursts.c, Documentation/hip.rst).  The figures below are
 * NVIDIA's: no AMD GPU has measured the choice yet.
 *
 * No mode wins everywhere (bench/cuda): beside a GEMM that holds every SM
 * the program's stream waits a whole kernel (ResNet-18 b4: 20 ms P50
 * against 4 alone, H200) and the urgent context cuts it to 5.7, the
 * gather to 4.8; beside ResNet-50 b16 (short kernels) Lv1's holds do best;
 * beside VGG-16 training an eager LLM decode loop (CPU-bound: a token is
 * 10 ms of launches) gains 3% from any of them, and Lv1 and the urgent
 * context cost the training 22% of its throughput (H100).  What decides is
 * the batch job beside, which the library cannot see, and the urgent job's
 * own waits, which it can.
 *
 * A burst is the stream's work from its first call after a synchronize to
 * the next synchronize of it.  Its wait, from its last call to its end, is
 * what a mode changes most; its host time, first call to last, is mostly
 * the program's; its span, the two together, is what the urgent job sees.  An urgent job is
 * judged by its tail, and beside a batch job of long, gapped kernels the
 * waits are bimodal: a burst that lands between two kernels waits little
 * natively, one that lands on a kernel waits all of it (20% of bursts
 * beside the GEMM: the median says native, the P99 is the whole kernel).
 * And the host's time is not alike in every mode: ResNet-18 b4 beside
 * ResNet-50 b16 on an H100 waited tens of us after its last call in every
 * mode, yet 11 of its 200 requests took over 10 ms natively and 2 in the
 * urgent context (as alone): its host time was longer natively, for a
 * cause the library does not see (the batch job's calls in the same
 * context or interpreter).  But the host is also preempted now and then in
 * every mode, and one such stall in a loser's five tries must not decide.
 * So a mode is scored by the tail of its waits, the mean of their longest
 * XM_TAIL_PCT (the longest, up to 20 bursts), plus the tail of its host
 * times, the mean of their longest XM_HOST_TAIL_PCT (of five, the two
 * longest): of its last XM_WIN bursts, those of the last XM_AGE bursts and
 * at least its last XM_FIRST (a loser keeps what it lost by).  32 waits
 * cannot hold a P99; their longest are the nearest to it.  Each mode runs
 * XM_FIRST bursts first, in
 * turn; then the cheapest mode whose score is within the margin
 * (XM_MARGIN_PCT of the median span) of the lowest runs: a mode costlier
 * than the current one must save the batch job's price in urgent latency.
 * It replaces the current one only once that is out by twice the margin
 * (hysteresis: alike modes do not take turns).  A mode other than native
 * adds the price (XSCHED_CUDA_LV3_PRICE, 2 by default) times its median
 * wait: for about that long the batch job loses the GPU (held by Lv1, or
 * switched out for the urgent context however few SMs its kernels use),
 * so it must save the urgent job that many times what it costs (an LLM
 * decode loop under CUDA graphs beside VGG-16 training ran lv1 at 0.8 ms
 * against native's 1.8 and cost the training 9%; beside a GEMM the gather
 * waits 0.9 ms against 24).  Every other mode is tried again for one burst
 * after XM_BACKOFF_MIN bursts, twice as long after each try it loses (up
 * to XM_BACKOFF_MAX), and after XM_BACKOFF_MAX at once if it scored twice
 * the best or more, so that a loser costs few requests (a P99 is not
 * spent on exploring: a try of a mode whose tail is a long kernel costs
 * that kernel, however rarely its bursts meet one); a try
 * that would win on its own is repeated at once, up to XM_FIRST in a row,
 * so that its window is these tries (one burst that missed the long
 * kernel says nothing of the tail) and a change of neighbour is seen once
 * the old waits age out.  A best that lost at its first long wait (a
 * bimodal mode that won on lucky tries) backs off as a loser (four times
 * longer, or the longest), not from XM_BACKOFF_MIN.
 *
 * A program's first bursts are its set-up (a ResNet-18 served beside
 * ResNet-50 b16, recorded on an H200: 123 bursts of one call each, copies
 * of the weights, then its requests): every mode was measured there, each
 * lost by far to the next, larger copy, and all were backed off to the
 * longest when the requests came.  So when the bursts' host time (mostly
 * the program's own) changes XM_SCALE-fold, what was
 * measured is forgotten and each mode is measured again (XM_SCALE).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mode.h"

static const char *const names[XM_NMODES] = { "native", "gather", "ctx", "lv1" };

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

/* Digits with at most one '.', read by hand: strtod() would follow the
 * program's LC_NUMERIC (a decimal comma) and take "1e1", "inf" or "0x10". */
int xm_parse_price(const char *s)
{
	unsigned long v = 0;	/* thousandths */
	int frac = -1, digits = 0;
	bool more = false;	/* a digit past the thousandths that is not 0 */

	if (!s || !*s)
		return XM_PRICE_DEFAULT;
	for (; *s; s++) {
		if (*s == '.' && frac < 0) {
			frac = 0;
			continue;
		}
		if (*s < '0' || *s > '9' || v > 100000)
			return -1;
		digits++;
		if (frac < 0)
			v = v * 10 + (unsigned long)(*s - '0') * 1000;
		else if (frac < 3)
			v += (unsigned long)(*s - '0') * (frac == 0 ? 100 : frac == 1 ? 10 : 1);
		else if (*s != '0')
			more = true;
		if (frac >= 0)
			frac++;
	}
	if (!digits || v > 100000 || (v == 100000 && more))
		return -1;
	return (int)((v + 5) / 10);
}

void xm_init(struct xm_state *st, int forced, const bool have[XM_NMODES], uint32_t price)
{
	int m;

	memset(st, 0, sizeof(*st));
	st->price = price;
	for (m = 0; m < XM_NMODES; m++) {
		st->have[m] = have[m];
		st->backoff[m] = XM_BACKOFF_MIN;
		st->next_try[m] = XM_NMODES * XM_FIRST + XM_BACKOFF_MIN;
	}
	st->have[XM_NATIVE] = true;
	st->forced = forced >= 0 && forced < XM_NMODES && st->have[forced] ? forced : -1;
	st->best = st->forced >= 0 ? (enum xm_mode)st->forced : XM_NATIVE;
	st->cur = st->best;
}

_Static_assert(XM_SPANS <= XM_WIN, "sort() takes up to XM_WIN");
_Static_assert(XM_WIN < 256 && XM_AGE >= XM_BACKOFF_MIN, "uint8_t rings; a try sees its last");

/* @n values (<= XM_WIN) sorted in place. */
static void sort(uint32_t *v, int n)
{
	uint32_t t;
	int i, j;

	for (i = 1; i < n; i++)
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
}

static uint32_t median_of(const uint32_t *in, int n)
{
	uint32_t v[XM_WIN];

	if (!n)
		return 0;
	memcpy(v, in, sizeof(*in) * (size_t)n);
	sort(v, n);
	return v[n / 2];
}

enum xm_of { OF_WAIT, OF_HOST };

/* Whether @m's burst in slot @i is in its window: of the last XM_AGE
 * bursts or, however old, of its last XM_FIRST (a loser keeps what it lost
 * by). */
static bool in_window(const struct xm_state *st, enum xm_mode m, int i)
{
	return st->burst - st->at[m][i] <= XM_AGE ||
	       (st->pos[m] - 1 - i + XM_WIN) % XM_WIN < XM_FIRST;
}

/* @m's window of its waits or host times (@of) into @v, sorted; how many. */
static int window(const struct xm_state *st, enum xm_mode m, enum xm_of of, uint32_t *v)
{
	int i, k = 0;

	for (i = 0; i < st->n[m]; i++)
		if (in_window(st, m, i))
			v[k++] = of == OF_WAIT ? st->wait[m][i] : st->host[m][i];
	sort(v, k);
	return k;
}

uint32_t xm_median(const struct xm_state *st, enum xm_mode m)
{
	uint32_t v[XM_WIN];
	int k = window(st, m, OF_WAIT, v);

	return k ? v[k / 2] : 0;
}

/* The mean of the longest @pct percent of @m's window of @of (at least one). */
static uint32_t top_mean(const struct xm_state *st, enum xm_mode m, enum xm_of of, uint32_t pct)
{
	uint32_t v[XM_WIN];
	uint64_t sum = 0;
	int k = window(st, m, of, v), top = (int)(((uint32_t)k * pct + 99) / 100), i;

	for (i = k - top; i < k; i++)
		sum += v[i];
	return top ? (uint32_t)(sum / (uint64_t)top) : 0;
}

/* The share of the longest host times a mode's host tail is the mean of:
 * XM_HOST_TAIL_PCT, or, while a measured mode has 1 to 3 bursts, one of
 * them (all, a half, a third), for every mode alike (their tails are then
 * alike estimates). */
static uint32_t host_pct(const struct xm_state *st)
{
	uint32_t pct = XM_HOST_TAIL_PCT, k;
	int m, i;

	for (m = 0; m < XM_NMODES; m++) {
		for (k = 0, i = 0; st->have[m] && i < st->n[m]; i++)
			k += in_window(st, (enum xm_mode)m, i);
		if (k && (100 + k - 1) / k > pct)
			pct = (100 + k - 1) / k;
	}
	return pct;
}

uint32_t xm_tail(const struct xm_state *st, enum xm_mode m)
{
	uint64_t t = (uint64_t)top_mean(st, m, OF_WAIT, XM_TAIL_PCT) +
		     top_mean(st, m, OF_HOST, host_pct(st));

	return t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

/* What the urgent job sees of a burst of @m (its span), with the batch
 * job's loss added: about as long as the burst waited in a mode but
 * native, the batch job lost the GPU. */
static uint64_t score(const struct xm_state *st, enum xm_mode m, uint64_t span, uint64_t wait)
{
	uint64_t v = m == XM_NATIVE ? span : span + wait * st->price / 100;

	/* Holds cost the batch job the whole time the stream is busy, not
	 * only its waits: past a small share they must halve the tail. */
	if (m == XM_LV1 && xm_duty(st) > XM_DUTY_PCT)
		v *= XM_DUTY_GAIN;
	return v;
}

/* The tails of @m's waits and host times (xm_tail()), and the batch
 * job's loss at its median wait. */
static uint64_t score_of(const struct xm_state *st, enum xm_mode m)
{
	return score(st, m, xm_tail(st, m), xm_median(st, m));
}

uint32_t xm_duty(const struct xm_state *st)
{
	uint64_t busy, idle;

	if (!st->nidle || !st->nspan)
		return 0;
	busy = median_of(st->span, st->nspan);
	idle = median_of(st->idle, st->nidle);
	return busy + idle ? (uint32_t)(busy * 100 / (busy + idle)) : 0;
}

uint32_t xm_margin(const struct xm_state *st)
{
	uint64_t m = (uint64_t)median_of(st->span, st->nspan) * XM_MARGIN_PCT / 100;

	return m > XM_MARGIN_MIN_US ? (uint32_t)m : XM_MARGIN_MIN_US;
}

int xm_waits(const struct xm_state *st, char *buf, size_t n)
{
	int m, k = 0;

	for (m = 0; m < XM_NMODES && k >= 0 && (size_t)k < n; m++)
		k += snprintf(buf + k, n - (size_t)k, "%s%s %u/%u", m ? ", " : "", names[m],
			      xm_median(st, (enum xm_mode)m), xm_tail(st, (enum xm_mode)m));
	if (k >= 0 && (size_t)k < n)
		k += snprintf(buf + k, n - (size_t)k, "; margin %u", xm_margin(st));
	return k;
}

enum xm_mode xm_next(const struct xm_state *st)
{
	enum xm_mode m;
	uint32_t b = st->burst, i;

	if (st->forced >= 0)
		return (enum xm_mode)st->forced;
	if (st->unmeasured)
		return st->best;
	/* Each mode XM_FIRST times first, in turn. */
	for (i = 0; i < XM_NMODES; i++) {
		m = (enum xm_mode)((b + i) % XM_NMODES);
		if (st->have[m] && st->n[m] < XM_FIRST)
			return m;
	}
	for (m = 0; m < XM_NMODES; m++)
		if (st->have[m] && m != st->best && (int32_t)(b - st->next_try[m]) >= 0)
			return m;
	return st->best;
}

enum xm_mode xm_begin(struct xm_state *st)
{
	st->cur = xm_next(st);
	st->burst++;
	return st->cur;
}

/* The cheapest mode within the margin of the lowest score; the current one
 * is kept against a costlier until it is out by twice the margin.  @o, if
 * a mode, is scored @ov instead of by its window (what a try would do). */
static enum xm_mode pick(const struct xm_state *st, enum xm_mode cur,
			 enum xm_mode o, uint64_t ov)
{
	uint64_t lo = UINT64_MAX, band = xm_margin(st), v[XM_NMODES];
	enum xm_mode m, p = cur;
	bool in[XM_NMODES];

	for (m = 0; m < XM_NMODES; m++) {
		in[m] = st->have[m] && (st->n[m] || m == o);
		v[m] = m == o ? ov : in[m] ? score_of(st, m) : 0;
		if (in[m] && v[m] < lo)
			lo = v[m];
	}
	if (lo == UINT64_MAX)
		return cur;
	for (m = 0; m < XM_NMODES; m++)
		if (in[m] && v[m] <= lo + band) {
			p = m;
			break;
		}
	if (p > cur && in[cur] && v[cur] <= lo + 2 * band)
		return cur;
	return p;
}

static enum xm_mode choose(const struct xm_state *st, enum xm_mode cur)
{
	return pick(st, cur, XM_NMODES, 0);
}

/* Would a try of @m that took @span and waited @wait be chosen over the
 * best, were it all of its window?  (The same rule as the choice: a try it
 * would not choose is not repeated, or a mode just outside the margin
 * would run every burst.) */
static bool would_win(const struct xm_state *st, enum xm_mode m, uint32_t span, uint32_t wait)
{
	/* (as its window would keep it: a cut burst's wait may pass its span) */
	return pick(st, st->best, m, score(st, m, span > wait ? span : wait, wait)) == m;
}

/* @v into the ring @ring of @size, its next slot *@pos, *@n of it filled. */
static void keep(uint32_t *ring, uint8_t *pos, uint8_t *n, int size, uint32_t v)
{
	ring[*pos] = v;
	*pos = (uint8_t)((*pos + 1) % size);
	if (*n < size)
		(*n)++;
}

void xm_idle(struct xm_state *st, uint32_t idle)
{
	keep(st->idle, &st->ipos, &st->nidle, XM_SPANS, idle);
	st->last.idle = idle;
}

static void keep_burst(struct xm_state *st, enum xm_mode m, uint32_t span, uint32_t wait)
{
	uint8_t i = st->pos[m];

	st->wait[m][i] = wait;
	st->host[m][i] = span > wait ? span - wait : 0;
	st->at[m][i] = st->burst;
	st->pos[m] = (uint8_t)((i + 1) % XM_WIN);
	if (st->n[m] < XM_WIN)
		st->n[m]++;
}

void xm_skip(struct xm_state *st)
{
	st->runs[st->cur]++;
	st->unmeasured = true;
}

/* @m lost to the best: tried again @times later than last time, or after
 * the longest backoff if it lost by far (its score twice the best's or
 * more).  A try of such a mode costs the urgent job its long wait, and the
 * job is judged by its P99: three losers tried every few dozen bursts
 * were 1% of them (beside a batch job whose long kernels 5% of bursts
 * meet, five tries miss them all 3 times in 4). */
static void back_off(struct xm_state *st, enum xm_mode m, uint32_t times)
{
	if (score_of(st, m) > 2 * score_of(st, st->best) + xm_margin(st))
		st->backoff[m] = XM_BACKOFF_MAX;
	else if ((st->backoff[m] *= times) > XM_BACKOFF_MAX)
		st->backoff[m] = XM_BACKOFF_MAX;
}

/* Forget what was measured (XM_SCALE): each mode is measured again from
 * burst @st->burst on; what ran is still counted. */
static void start_over(struct xm_state *st)
{
	struct xm_last last;
	uint32_t runs[XM_NMODES], b = st->burst, r = st->restarts + 1;
	bool have[XM_NMODES];
	int m;

	memcpy(runs, st->runs, sizeof(runs));
	memcpy(have, st->have, sizeof(have));
	last = st->last;
	xm_init(st, st->forced, have, st->price);
	memcpy(st->runs, runs, sizeof(runs));
	st->last = last;
	st->burst = b;
	st->started = b;
	st->restarts = r;
	for (m = 0; m < XM_NMODES; m++)
		st->next_try[m] = b + XM_NMODES * XM_FIRST + XM_BACKOFF_MIN;
}

/* Whether the bursts' scale changed (XM_SCALE): then start over. */
static bool rescaled(struct xm_state *st)
{
	uint32_t med;

	if (st->burst - st->started < XM_SPANS || st->nhost < XM_SPANS)
		return false;
	med = median_of(st->hosts, st->nhost);
	if (med < XM_MARGIN_MIN_US)
		med = XM_MARGIN_MIN_US;
	if (!st->scale) {
		st->scale = med;
		return false;
	}
	if ((uint64_t)med < (uint64_t)st->scale * XM_SCALE && (uint64_t)med * XM_SCALE > st->scale)
		return false;
	if (st->restarts && st->burst - st->started < XM_AGE)
		return false;
	start_over(st);
	return true;
}

bool xm_end(struct xm_state *st, uint32_t span, uint32_t wait)
{
	enum xm_mode m = st->cur, was = st->best;

	st->runs[m]++;
	st->unmeasured = false;
	st->last.burst = st->burst;
	st->last.mode = m;
	st->last.span = span;
	st->last.wait = wait;
	if (st->forced >= 0)
		return false;
	keep_burst(st, m, span, wait);
	keep(st->span, &st->spos, &st->nspan, XM_SPANS, span);
	keep(st->hosts, &st->hpos, &st->nhost, XM_SPANS, span > wait ? span - wait : 0);
	if (rescaled(st))
		return true;
	st->best = choose(st, was);
	if (st->best != was) {
		/* The old best is now a loser, tried as one from now on (a
		 * best that held only until its first long wait, as a
		 * bimodal one does, backs off as a loser); the others keep
		 * their turn. */
		if (st->burst - st->best_at >= XM_WIN)
			st->backoff[was] = XM_BACKOFF_MIN;
		else
			back_off(st, was, 4);
		st->next_try[was] = st->burst + st->backoff[was];
		st->best_at = st->burst;
		return true;
	}
	if (m == st->best)
		return false;
	if (++st->tries[m] < XM_FIRST && would_win(st, m, span, wait)) {
		/* Again at once, until its window is these tries: one burst
		 * that missed the neighbour's long kernel says nothing of
		 * its tail. */
		st->next_try[m] = st->burst;
	} else {		/* a try that lost: later next time, much later
				 * if it lost by far */
		st->tries[m] = 0;
		back_off(st, m, 2);
		st->next_try[m] = st->burst + st->backoff[m];
	}
	return false;
}

/* Lock held, no burst in progress: the cap is wanted if the next burst
 * will hold (xm_burst.caps). */
static void caps_ahead(struct xm_burst *b)
{
	atomic_store(&b->caps, xm_next(&b->st) == XM_LV1);
}

void xm_burst_init(struct xm_burst *b, int forced, const bool have[XM_NMODES], uint32_t price)
{
	xm_init(&b->st, forced, have, price);
	pthread_mutex_init(&b->lock, NULL);
	atomic_init(&b->in, false);
	atomic_init(&b->mode, (int)b->st.best);
	atomic_init(&b->t0, 0);
	atomic_init(&b->last, 0);
	atomic_init(&b->caps, false);
	caps_ahead(b);
}

void xm_burst_fini(struct xm_burst *b)
{
	pthread_mutex_destroy(&b->lock);
}

/* Microseconds from @t to @now (ns), saturated. */
static uint32_t us_since(uint64_t t, uint64_t now)
{
	uint64_t us = now > t ? (now - t) / 1000 : 0;

	return us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}

enum xm_mode xm_burst_mode(struct xm_burst *b, uint64_t (*now)(void), bool *began)
{
	uint64_t t = now();	/* (vDSO: tens of ns, beside a launch's us) */

	if (began)
		*began = false;
	atomic_store_explicit(&b->last, t, memory_order_relaxed);
	if (!atomic_load_explicit(&b->in, memory_order_acquire) ||
	    (int64_t)(t - atomic_load_explicit(&b->t0, memory_order_relaxed)) >
	    (int64_t)XM_BURST_MAX_NS) {
		pthread_mutex_lock(&b->lock);
		if (atomic_load(&b->in) && (int64_t)(t - atomic_load(&b->t0)) > (int64_t)XM_BURST_MAX_NS) {
			/* never synchronized: ended, nothing learnt */
			xm_skip(&b->st);
			b->ended = 0;
			atomic_store(&b->in, false);
		}
		if (!atomic_load(&b->in)) {
			b->st.last.idle = 0;
			if (b->ended)
				xm_idle(&b->st, us_since(b->ended, t));
			atomic_store(&b->t0, t);
			atomic_store(&b->mode, (int)xm_begin(&b->st));
			atomic_store(&b->caps, b->st.cur == XM_LV1);
			atomic_store_explicit(&b->in, true, memory_order_release);
			if (began)
				*began = true;
		}
		pthread_mutex_unlock(&b->lock);
	}
	return (enum xm_mode)atomic_load_explicit(&b->mode, memory_order_relaxed);
}

/* b->lock held, a burst in progress: it ended at @now, @wait_us after its
 * last call; true: the best mode changed past the first measurements. */
static bool burst_ended(struct xm_burst *b, uint32_t wait_us, uint64_t now,
			struct xm_state *seen)
{
	bool changed = xm_end(&b->st, us_since(atomic_load(&b->t0), now), wait_us) &&
		       b->st.burst > XM_NMODES * XM_FIRST;

	if (changed && seen)
		*seen = b->st;
	b->ended = now;
	caps_ahead(b);
	atomic_store(&b->in, false);
	return changed;
}

bool xm_burst_end(struct xm_burst *b, uint64_t since, uint64_t now, struct xm_state *seen)
{
	bool changed = false;
	uint64_t last;

	if (!atomic_load(&b->in))
		return false;
	pthread_mutex_lock(&b->lock);
	if (atomic_load(&b->in)) {
		last = atomic_load_explicit(&b->last, memory_order_relaxed);
		changed = burst_ended(b, us_since(last < since ? last : since, now), now, seen);
	}
	pthread_mutex_unlock(&b->lock);
	return changed;
}

bool xm_burst_cut(struct xm_burst *b, uint32_t lost_us, uint64_t now, struct xm_state *seen)
{
	bool changed = false;

	pthread_mutex_lock(&b->lock);
	if (atomic_load(&b->in) && b->st.cur == XM_GATHER)
		changed = burst_ended(b, lost_us, now, seen);
	pthread_mutex_unlock(&b->lock);
	return changed;
}

void xm_burst_state(struct xm_burst *b, struct xm_state *out)
{
	pthread_mutex_lock(&b->lock);
	*out = b->st;
	pthread_mutex_unlock(&b->lock);
}
