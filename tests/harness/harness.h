/* SPDX-License-Identifier: MIT */
/*
 * A small test harness: TEST(name) registers a test; each test runs in its
 * own forked process (a fresh library state, and a crash fails one test
 * only).  ASSERT_* stop the test with a message that says what was expected
 * and what was got.
 */
#ifndef XSCHED_HARNESS_H
#define XSCHED_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void xt_register(const char *name, void (*fn)(void));
void xt_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));
/*
 * Run the registered tests whose name contains @filter (NULL: all), each in
 * its own process with a 30 s alarm, @after (may be NULL) in that process
 * after the test; print TAP lines and "@suite: N passed, N failed".  1 if
 * any failed, 2 if a fork failed.  (runner.c)
 */
int xt_run(const char *suite, const char *filter, void (*after)(void));
/* Poll @cond (an expression) for up to @ms milliseconds. */
#define WAIT_UNTIL(cond, ms) ({						\
	int _i, _ok = 0;						\
	for (_i = 0; _i < (ms) * 10; _i++) {				\
		if (cond) { _ok = 1; break; }				\
		usleep(100);						\
	}								\
	_ok || (cond); })

#define TEST(name)							\
	static void name(void);						\
	__attribute__((constructor)) static void reg_##name(void)	\
	{ xt_register(#name, name); }					\
	static void name(void)

#define ASSERT_EQ(got, want) do {					\
	long long _g = (long long)(got), _w = (long long)(want);	\
	if (_g != _w)							\
		xt_fail(__FILE__, __LINE__, "%s: expected %lld (%s), got %lld", \
			#got, _w, #want, _g);				\
} while (0)

#define ASSERT_NE(got, notwant) do {					\
	long long _g = (long long)(got), _w = (long long)(notwant);	\
	if (_g == _w)							\
		xt_fail(__FILE__, __LINE__, "%s: expected anything but %lld, got it", \
			#got, _w);					\
} while (0)

#define ASSERT_LE(got, max) do {					\
	long long _g = (long long)(got), _w = (long long)(max);		\
	if (_g > _w)							\
		xt_fail(__FILE__, __LINE__, "%s: expected <= %lld (%s), got %lld", \
			#got, _w, #max, _g);				\
} while (0)

#define ASSERT_GE(got, min) do {					\
	long long _g = (long long)(got), _w = (long long)(min);		\
	if (_g < _w)							\
		xt_fail(__FILE__, __LINE__, "%s: expected >= %lld (%s), got %lld", \
			#got, _w, #min, _g);				\
} while (0)

#define ASSERT_TRUE(cond) do {						\
	if (!(cond))							\
		xt_fail(__FILE__, __LINE__, "expected %s", #cond);	\
} while (0)

#endif
