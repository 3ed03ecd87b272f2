/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every xsched kselftest includes: the test library (xsched_util.h,
 * compiled from the files of lib/), kselftest_harness.h, and the assertions the tests
 * share.  XS_CLIENT_OPEN_OR_SKIP(), XS_SIM_OPEN_OR_SKIP() and
 * XS_DEBUGFS_OR_SKIP() skip naming the missing device, privilege or kernel
 * feature and fail on any other error; XS_EXPECT_MARKS() checks a MARK
 * packet's step marks.  Each failure says what was expected and what was got.
 */
#ifndef XSCHED_TEST_H
#define XSCHED_TEST_H

#include "xsched_util.h"

#include "kselftest_harness.h"

/*
 * For FIXTURE_SETUP(): opens a client into @cfd/@ver, skipping the test when
 * the module is not loaded and failing it on any other error.
 */
#define XS_CLIENT_OPEN_OR_SKIP(cfd, ver) do {					\
	int __ret = xs_client_open(&(cfd), &(ver));				\
										\
	if (__ret == -ENOENT || __ret == -ENODEV || __ret == -ENXIO)		\
		SKIP(return, "%s: %s (is xsched_kfd.ko loaded?)", XS_DEV_PATH,	\
		     xs_err(__ret));						\
	ASSERT_EQ(0, __ret) TH_LOG("open %s and VERSION: expected success, got %s", \
				   XS_DEV_PATH, xs_err(__ret));			\
} while (0)

/* For FIXTURE_SETUP(): the sim GPU, skipping when xsched_sim.ko is not loaded. */
#define XS_SIM_OPEN_OR_SKIP(sfd, info) do {					\
	int __ret = xs_sim_open(&(sfd), &(info));				\
										\
	if (__ret == -ENOENT || __ret == -ENODEV || __ret == -ENXIO)		\
		SKIP(return, "%s: %s (is xsched_sim.ko loaded?)", XS_SIM_PATH,	\
		     xs_err(__ret));						\
	ASSERT_EQ(0, __ret) TH_LOG("open %s and SIM_INFO: expected success, got %s", \
				   XS_SIM_PATH, xs_err(__ret));			\
} while (0)

/*
 * For tests that need the sim's debugfs (knobs, queue table, objects): skips
 * when the kernel has no debugfs (CONFIG_DEBUG_FS) or the caller may not
 * mount it, fails on any other error.  The module must be loaded already.
 */
#define XS_DEBUGFS_OR_SKIP() do {						\
	int __ret = xs_debugfs_ready();						\
										\
	if (__ret == -ENOENT || __ret == -ENODEV)				\
		SKIP(return, "%s: %s (needs CONFIG_DEBUG_FS)", XS_SIM_DIR,	\
		     xs_err(__ret));						\
	if (__ret == -EPERM || __ret == -EACCES)				\
		SKIP(return, "%s: %s (needs root)", XS_SIM_DIR, xs_err(__ret));	\
	ASSERT_EQ(0, __ret) TH_LOG("%s: expected success, got %s", XS_SIM_DIR,	\
				   xs_err(__ret));				\
} while (0)

/*
 * Every workgroup of completed MARK packet @p (dst mapped at @out) executed
 * exactly its steps: a re-run, even one that recomputed the same result,
 * leaves more marks; a lost step fewer.
 */
#define XS_EXPECT_MARKS(p, out) do {						\
	long __bad = xs_marks_not((p), (out), (p)->steps);			\
										\
	EXPECT_EQ(-1, __bad)							\
		TH_LOG("workgroup %ld of %u executed %" PRIu64 " steps by its "	\
		       "marks, expected exactly %u (a step re-run or lost)",	\
		       __bad, (p)->grid,					\
		       __bad < 0 ? 0 : (out)[(p)->grid + __bad], (p)->steps);	\
} while (0)

#endif /* XSCHED_TEST_H */
