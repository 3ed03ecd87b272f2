/* SPDX-License-Identifier: MIT */
/* Description: helpers of the HIP interposer's host tests, against the fake libamdhip64. */
/*
 * Linked into test_hip (test_hip.c, test_runtime_calls.c) and its linked
 * twin test_hip_linked; what the CUDA tests share with these is
 * ../interpose_helpers.h.
 */
#ifndef XSCHED_HIP_HELPERS_H
#define XSCHED_HIP_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fake_libamdhip64.h"
#include "harness.h"
#include "../interpose_helpers.h"

/* A non-blocking stream of HIP priority @hip_prio. */
hipStream_t mk(int hip_prio);
/* The test kernels: K(@id, @ns) is kern[@id], a kernel of @ns. */
extern struct fake_kernel kern[256];
const void *K(int id, uint64_t ns);
/* Launch K(@id, @ns) (1 block of 1) on @h, asserting success. */
void launch(hipStream_t h, int id, uint64_t ns);
/* The log record of the last command of kernel @id. */
struct fake_rec rec_of(int id);
/* Is @p in the library whose file name (not its folder: the build folder
 * is named libxsched too) starts with @what? */
int in_lib(const void *p, const char *what);
#define in_xsched(p) in_lib((const void *)(p), "libxsched")
#define in_fake(p) in_lib((const void *)(p), "libamdhip64")
/* Run this program with @env set and @mode, stderr into @buf. */
int run_self(const char *env, const char *mode, char *buf, size_t len);
/* Fails the test unless @line is in @out (what run_self() read). */
void expect_line(const char *out, const char *line);
/* test_hip's own: what its main runs for "--held-reentry"
 * (test_runtime_calls.c). */
int held_reentry_body(void);
/* test_bursts.c's, for "--bursts" and "--stale-event" (@stale). */
int bursts_logged_body(bool stale);

#endif
