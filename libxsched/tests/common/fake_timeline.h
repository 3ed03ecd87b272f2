/* SPDX-License-Identifier: MIT */
/*
 * The modelled GPU time that both fake runtimes of the interposer's host
 * tests keep (tests/cuda/fake_libcuda.c, tests/hip/fake_libamdhip64.c):
 * a stream runs its commands one after the other in virtual time (a
 * command of d ns starts when the stream's previous one ends, or at
 * submission), and every command is logged as the runtime received it.
 *
 * Include it once, in the fake's .c file, after the fake's header (which
 * defines struct fake_rec with stream, kernel, variant, captured, submit,
 * start and end) and after defining API (the export attribute).
 */
#ifndef FAKE_TIMELINE_H
#define FAKE_TIMELINE_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define FAKE_MAX_LOG 100000

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;	/* the fake's one lock */
static struct fake_rec logv[FAKE_MAX_LOG];
static int nlog;

static uint64_t fake_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = { .tv_sec = (time_t)(t / 1000000000ULL),
			       .tv_nsec = (long)(t % 1000000000ULL) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/*
 * mu held: log a command of @ns on stream @id, whose last command ends at
 * *@tail; a capturing stream records it without running it.  The log
 * keeps its first FAKE_MAX_LOG - 1 commands and overwrites the last.
 */
static struct fake_rec *fake_log_add(int id, int capturing, uint64_t *tail,
				     int kernel, int variant, uint64_t ns)
{
	struct fake_rec *r = nlog < FAKE_MAX_LOG ? &logv[nlog++] : &logv[FAKE_MAX_LOG - 1];
	uint64_t now = fake_clock_ns();

	memset(r, 0, sizeof(*r));
	r->stream = id;
	r->kernel = kernel;
	r->variant = variant;
	r->submit = now;
	if (capturing) {
		r->captured = 1;
		return r;
	}
	r->start = *tail > now ? *tail : now;
	r->end = r->start + ns;
	*tail = r->end;
	return r;
}

/* When everything logged so far has ended (a device-wide synchronize). */
static uint64_t fake_log_end(void)
{
	uint64_t t = 0;
	int i;

	pthread_mutex_lock(&mu);
	for (i = 0; i < nlog; i++)
		if (logv[i].end > t)
			t = logv[i].end;
	pthread_mutex_unlock(&mu);
	return t;
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
	ok = i >= 0 && i < nlog;
	if (ok)
		*out = logv[i];
	pthread_mutex_unlock(&mu);
	return ok ? 0 : -1;
}

#endif
