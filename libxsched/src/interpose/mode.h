/* SPDX-License-Identifier: MIT */
/*
 * Which way an urgent stream's bursts run, chosen from their measured
 * latency: see mode.c.  The CUDA wing's urgent streams (cuda/urgent.c)
 * choose among all four modes with the urgent context on, between native
 * and lv1 without it; the core between native and lv1 for any caller-held
 * runtime (bursts.c: the HIP wing's default).  Pure: no driver, no clock.
 */
#ifndef XSCHED_INTERPOSE_MODE_H
#define XSCHED_INTERPOSE_MODE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* In the order of their cost to the batch job beside: the gather switches
 * contexts once a burst, the urgent context as often as the stream's work
 * arrives, Lv1 holds every lower stream for the whole burst. */
enum xm_mode {
	XM_NATIVE,	/* the program's stream, as without the library */
	XM_GATHER,	/* the urgent context, each burst gathered */
	XM_CTX,		/* the urgent context, each call as it comes */
	XM_LV1,		/* the program's stream, lower streams held (Lv1) */
	XM_NMODES,
};

#define XM_WIN 32		/* bursts kept per mode: the tails of their times decide */
#define XM_TAIL_PCT 5		/* the waits' tail: the mean of this share of the longest */
/* The host times' tail: the mean of this share of the longest.  A host
 * time is mostly the program's, its rare stalls alike in every mode: one
 * stall in a loser's five tries must not decide, a host made slower by a
 * mode more often than not must. */
#define XM_HOST_TAIL_PCT 30
#define XM_FIRST 5		/* bursts of each mode measured first, in turn */
#define XM_AGE 256		/* bursts after which a measurement is forgotten */
#define XM_SPANS 16		/* burst spans kept (any mode): the scale */
#define XM_BACKOFF_MIN 16	/* bursts before a losing mode is tried again */
#define XM_BACKOFF_MAX 1024
#define XM_MARGIN_PCT 10	/* of a burst's span: what a costlier mode must save */
#define XM_MARGIN_MIN_US 50	/* the least such saving (noise on tiny bursts) */
#define XM_PRICE_DEFAULT 200	/* XSCHED_CUDA_LV3_PRICE, in percent */
/* Lv1 holds the batch job for as long as the urgent stream is busy: where
 * that is more than XM_DUTY_PCT of the time (the medians of the last
 * XM_SPANS bursts' spans and of the idle times before them), holds must
 * cut the urgent job's score XM_DUTY_GAIN times (issue 33: a batch job
 * kept at 0.95 of native unless the urgent job gains 2x). */
#define XM_DUTY_PCT 5
#define XM_DUTY_GAIN 2
/* When the median host time (first call to last: mostly the program's)
 * of the last XM_SPANS bursts is XM_SCALE times what it was
 * XM_SPANS bursts after the choice (re)started, or a XM_SCALE-th of it
 * (either at least XM_MARGIN_MIN_US), the stream does other work (a
 * program's set-up, one call a burst, then its requests): what was
 * measured is forgotten and each mode is measured again, at most once
 * every XM_AGE bursts. */
#define XM_SCALE 8
/* A burst never synchronized ends (unmeasured) at its first call this long
 * after its start: a stream the host polls must not keep a mode for ever. */
#define XM_BURST_MAX_NS (1000ULL * 1000000ULL)

/* A burst measured (XSCHED_CUDA_BURST_LOG tells each). */
struct xm_last {
	uint32_t burst;		/* its number, from 1 (0: none yet) */
	enum xm_mode mode;
	uint32_t span, wait;	/* us */
	uint32_t idle;		/* us before it (0: unknown) */
};

struct xm_state {
	/* Each mode's last XM_WIN bursts: */
	uint32_t wait[XM_NMODES][XM_WIN];	/* us from the last call to the end */
	uint32_t host[XM_NMODES][XM_WIN];	/* us from the first call to the last */
	uint32_t at[XM_NMODES][XM_WIN];		/* the burst's number */
	uint8_t n[XM_NMODES], pos[XM_NMODES];
	uint32_t span[XM_SPANS];		/* any mode's last spans */
	uint8_t nspan, spos;
	uint32_t idle[XM_SPANS];		/* the idle times before them, us */
	uint8_t nidle, ipos;
	uint32_t hosts[XM_SPANS];		/* any mode's last host times */
	uint8_t nhost, hpos;
	uint32_t burst;			/* bursts begun */
	uint32_t next_try[XM_NMODES];	/* burst at which a loser is tried */
	uint32_t backoff[XM_NMODES];
	uint8_t tries[XM_NMODES];		/* tries of a loser in a row */
	enum xm_mode cur;		/* the burst in progress */
	enum xm_mode best;
	uint32_t best_at;		/* burst at which it became the best */
	int forced;			/* a mode, or -1: chosen */
	uint32_t price;			/* % of a mode's wait added for the batch job's loss */
	bool have[XM_NMODES];		/* the mode can run here */
	uint32_t runs[XM_NMODES];	/* bursts run in each mode */
	bool unmeasured;		/* the last burst ended by no synchronize */
	uint32_t scale;			/* median host time XM_SPANS bursts after the (re)start; 0: not yet */
	uint32_t started;		/* the burst it (re)started at */
	uint32_t restarts;
	struct xm_last last;		/* the last burst measured */
};

/* @forced: a mode, or -1 (choose); @have: which modes can run; @price: in
 * percent, see mode.c. */
void xm_init(struct xm_state *st, int forced, const bool have[XM_NMODES], uint32_t price);
/* The mode the next burst will begin in, as things stand. */
enum xm_mode xm_next(const struct xm_state *st);
/* A burst begins: its mode (xm_next()). */
enum xm_mode xm_begin(struct xm_state *st);
/* The burst ended @span us after its first call and @wait us after its
 * last; true: the best mode changed (or the choice started over: see
 * XM_SCALE, st->restarts). */
bool xm_end(struct xm_state *st, uint32_t span, uint32_t wait);
/* The burst just begun came @idle us after the end of the one before. */
void xm_idle(struct xm_state *st, uint32_t idle);
/* The share of the time the stream is busy, in percent (0: unknown). */
uint32_t xm_duty(const struct xm_state *st);
/* The burst ended by no synchronize (XM_BURST_MAX_NS): nothing measured,
 * and the next burst runs the best mode (no try: what it would cost is not
 * seen either). */
void xm_skip(struct xm_state *st);
/* Median wait of @m's window (its last XM_WIN bursts: those of the last
 * XM_AGE bursts, and its last XM_FIRST however old; 0: none). */
uint32_t xm_median(const struct xm_state *st, enum xm_mode m);
/* What the mode is judged by (us; 0: none): the tail of that window's
 * waits (the mean of the longest XM_TAIL_PCT, at least one) and of its
 * host times (XM_HOST_TAIL_PCT), summed. */
uint32_t xm_tail(const struct xm_state *st, enum xm_mode m);
/* What a costlier mode must save of the current one's wait, us. */
uint32_t xm_margin(const struct xm_state *st);
/* "native W/T, gather W/T, ctx W/T, lv1 W/T; margin M" (median wait,
 * xm_tail(), us) into @buf; snprintf's return. */
int xm_waits(const struct xm_state *st, char *buf, size_t n);
const char *xm_name(enum xm_mode m);
/* A stream's bursts: the choice, and the burst in progress. */
struct xm_burst {
	struct xm_state st;	/* under lock */
	pthread_mutex_t lock;
	atomic_bool in;		/* a burst is in progress */
	atomic_int mode;	/* its mode */
	_Atomic uint64_t t0;	/* its first call, ns */
	_Atomic uint64_t last;	/* its latest call, ns */
	uint64_t ended;		/* under lock: the last measured burst's end, ns (0: none) */
	/* Lv1's cap is wanted: the burst in progress runs lv1, or (none in
	 * progress) the next one will, so that its first call finds the
	 * lower streams already capped. */
	atomic_bool caps;
};

void xm_burst_init(struct xm_burst *b, int forced, const bool have[XM_NMODES], uint32_t price);
void xm_burst_fini(struct xm_burst *b);
/* A call of the stream (@now(): ns): the mode of its burst, begun now if
 * none is in progress (*@began, if given, says whether this call began it). */
enum xm_mode xm_burst_mode(struct xm_burst *b, uint64_t (*now)(void), bool *began);
/* A synchronize of the stream begun at @since ended at @now: its burst,
 * if any, ended (a call after @since, another thread's, is not one it
 * waited for).  true: the best mode changed (past the first measurements
 * of each); *@seen (if given) is then the state of that change. */
bool xm_burst_end(struct xm_burst *b, uint64_t since, uint64_t now, struct xm_state *seen);
/* The gather's burst in progress waited for the watchdog to open its gate
 * (the program waits for it in a way the library does not see): it ends
 * now, counted as a wait of @lost_us for the gather.  As xm_burst_end(). */
bool xm_burst_cut(struct xm_burst *b, uint32_t lost_us, uint64_t now, struct xm_state *seen);
/* A copy of the choice's state, taken under its lock (for the log). */
void xm_burst_state(struct xm_burst *b, struct xm_state *out);

/* "auto" (-1), "native", "ctx", "gather", "lv1"; -2: none of those. */
int xm_parse(const char *s);
/* XSCHED_CUDA_LV3_PRICE: a number from 0 to 100 (NULL or empty: the
 * default), in percent; -1: not such a number. */
int xm_parse_price(const char *s);

#endif
