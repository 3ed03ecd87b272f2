// SPDX-License-Identifier: MIT
/* The libxsched unit tests' main: runner.c, and no XQueue left behind. */
#include "harness.h"
#include "../../../libxsched/src/internal.h"

/* No XQueue may outlive its test. */
static void no_xqueue_left(void)
{
	if (xs_sched_count())
		xt_fail(__FILE__, __LINE__, "%d XQueue(s) left alive", xs_sched_count());
}

int main(int argc, char **argv)
{
	/* One suite name per binary: the fork and TSan builds are counted apart. */
	const char *suite = getenv("XSCHED_UNIT_SUITE");

	return xt_run(suite && *suite ? suite : "libxsched-unit", argc > 1 ? argv[1] : NULL,
		      no_xqueue_left);
}
