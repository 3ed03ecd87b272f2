/* SPDX-License-Identifier: MIT */
/* Description: helpers both interposers' host tests share, whichever runtime they fake. */
/*
 * Linked into test_cuda (tests/libxsched/cuda/) and test_hip
 * (tests/libxsched/hip/); nothing here knows a runtime or a fake: the
 * runtime's own helpers are cuda/cuda_helpers.[ch] and hip/hip_helpers.[ch].
 */
#ifndef XSCHED_INTERPOSE_HELPERS_H
#define XSCHED_INTERPOSE_HELPERS_H

#include <stdint.h>
#include <stdio.h>

#define MS 1000000ULL

/* Standard error into a file, and what was written to it so far. */
FILE *err_capture(void);
const char *err_read(FILE *f);
/* How many times @needle is in @hay. */
int count_of(const char *hay, const char *needle);
/* Lines of @text that hold @a and one of @b, @c. */
int lines_with(const char *text, const char *a, const char *b, const char *c);
/* CLOCK_MONOTONIC in ms and in ns; the calling thread's CPU time in ns. */
double now_ms(void);
uint64_t now_ns(void);
uint64_t thread_cpu_ns(void);
/*
 * A watchdog for a call that may never return (a deadlock): past @ms the
 * test fails with @what, rather than hang until the runner's alarm; one
 * armed at a time, wd_disarm() once the call returned.
 */
void wd_arm(unsigned int ms, const char *what);
void wd_disarm(void);

#endif
