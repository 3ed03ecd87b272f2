// SPDX-License-Identifier: MIT
/*
 * The HIP wing's own environment: see hip/env.h.  A malformed value is said
 * in one line and the default used.
 */
#include <stdlib.h>
#include <string.h>

#include "../../internal.h"
#include "env.h"

bool xh_hold_every_burst;

void xh_env_hold_read(void)
{
	const char *s = getenv("XSCHED_HIP_HOLD");

	xh_hold_every_burst = s && !strcmp(s, "1");
	if (s && *s && strcmp(s, "1") && strcmp(s, "auto"))
		xs_err("hip: XSCHED_HIP_HOLD='%s' is not 1 or auto; using auto (holds where they pay)", s);
}

uint64_t xh_env_hold_max_ns(void)
{
	const char *s = getenv("XSCHED_HIP_HOLD_MAX_MS");
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return 10000ULL * 1000000ULL;
	v = strtoull(s, &end, 10);
	if (*end || !v) {
		xs_warn("hip: XSCHED_HIP_HOLD_MAX_MS=%s is not a positive number of ms; using 10000", s);
		return 10000ULL * 1000000ULL;
	}
	return v * 1000000ULL;
}
