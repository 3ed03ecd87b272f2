// SPDX-License-Identifier: MIT
/*
 * The interposition core's log: one debug line per decision, prefixed with
 * the runtime's name (interpose.h, "Log").
 */
#include <stdarg.h>
#include <stdio.h>

#include "core_state.h"

bool xsi_log_on(void)
{
	return xs_log_enabled(XS_LOG_DEBUG);
}

void xsi_log(const struct xsi_runtime *rt, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!xsi_log_on())
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	xs_debug("%s: %s", rt->name, line);
}
