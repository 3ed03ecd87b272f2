// SPDX-License-Identifier: MIT
/*
 * Configuration from the environment, and logging.
 *
 * Every variable is parsed once, at first use.  A value that cannot be used
 * gives one message on stderr (whatever XSCHED_LOG says) naming the variable,
 * the value and what is used instead; nothing is silently misconfigured.
 *
 * XSCHED_LOG=trace also writes each scheduling decision as one line to the
 * ftrace marker, the way tracing tools collect userspace events: xschedctl
 * timeline draws them beside the module's tracepoints.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

static struct xs_config cfg;
static pthread_once_t cfg_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
/* The trace marker: -1 not opened yet, -2 given up (said once). */
static _Atomic int trace_fd = -1;

uint64_t xs_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* @ts: @timeout_ns from now, on CLOCK_MONOTONIC (the XQueues' conds). */
void xs_abs_deadline(struct timespec *ts, int64_t timeout_ns)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += timeout_ns / 1000000000LL;
	ts->tv_nsec += timeout_ns % 1000000000LL;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static void config_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Configuration problems are always printed: they are the user's mistake. */
static void config_msg(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&log_lock);
	fputs("xsched: config: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	pthread_mutex_unlock(&log_lock);
}

/* Parse a whole decimal integer; false on garbage, overflow or empty. */
static bool parse_long(const char *s, long *out)
{
	char *end;
	long v;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s)
		return false;
	while (*end == ' ' || *end == '\t' || *end == '\n')
		end++;
	if (*end)
		return false;
	*out = v;
	return true;
}

static void config_load(void)
{
	const char *s;
	long v;

	memset(&cfg, 0, sizeof(cfg));
	cfg.log_level = XS_LOG_WARN;
	cfg.threshold = XSCHED_THRESHOLD_DEFAULT;
	cfg.batch = XSCHED_BATCH_DEFAULT;

	/* A level, "trace", or both separated by a comma ("debug,trace"). */
	s = getenv("XSCHED_LOG");
	while (s && *s) {
		size_t n = strcspn(s, ",");

		if (n == 5 && !strncasecmp(s, "error", n))
			cfg.log_level = XS_LOG_ERROR;
		else if ((n == 4 && !strncasecmp(s, "warn", n)) ||
			 (n == 7 && !strncasecmp(s, "warning", n)))
			cfg.log_level = XS_LOG_WARN;
		else if (n == 4 && !strncasecmp(s, "info", n))
			cfg.log_level = XS_LOG_INFO;
		else if (n == 5 && !strncasecmp(s, "debug", n))
			cfg.log_level = XS_LOG_DEBUG;
		else if (n == 5 && !strncasecmp(s, "trace", n))
			cfg.trace = true;
		else
			config_msg("XSCHED_LOG='%.*s' is not one of error|warn|info|debug|trace; ignored",
				   (int)n, s);
		s += n;
		if (*s == ',')
			s++;
	}

	s = getenv("XSCHED_PRIORITY");
	if (s && *s) {
		if (parse_long(s, &v) && v >= XSCHED_PRIO_MIN &&
		    v <= XSCHED_PRIO_MAX) {
			cfg.has_priority = true;
			cfg.priority = (int32_t)v;
		} else {
			config_msg("XSCHED_PRIORITY='%s' is not an integer in %d..%d; using 0",
				   s, XSCHED_PRIO_MIN, XSCHED_PRIO_MAX);
		}
	}

	s = getenv("XSCHED_LEVEL");
	if (s && *s) {
		if (parse_long(s, &v) && v >= 1 && v <= 3) {
			cfg.has_level = true;
			cfg.level = (unsigned int)v;
		} else {
			config_msg("XSCHED_LEVEL='%s' is not 1, 2 or 3; using the best level of each platform",
				   s);
		}
	}

	s = getenv("XSCHED_THRESHOLD");
	if (s && *s) {
		if (parse_long(s, &v) && v >= 1 && v <= XSCHED_THRESHOLD_MAX)
			cfg.threshold = (unsigned int)v;
		else
			config_msg("XSCHED_THRESHOLD='%s' is not an integer in 1..%d; using %d",
				   s, XSCHED_THRESHOLD_MAX, XSCHED_THRESHOLD_DEFAULT);
	}

	s = getenv("XSCHED_BATCH");
	if (s && *s) {
		if (parse_long(s, &v) && v >= 1 && v <= XSCHED_THRESHOLD_MAX)
			cfg.batch = (unsigned int)v;
		else
			config_msg("XSCHED_BATCH='%s' is not an integer in 1..%d; using %d",
				   s, XSCHED_THRESHOLD_MAX, XSCHED_BATCH_DEFAULT);
	}
	s = getenv("XSCHED_HYSTERESIS_US");
	if (s && *s) {
		if (parse_long(s, &v) && v >= 0 && v <= 1000000)
			cfg.hyst_ns = (uint64_t)v * 1000;
		else
			config_msg("XSCHED_HYSTERESIS_US='%s' is not an integer in 0..1000000; using 0",
				   s);
	}
	s = getenv("XSCHED_ARBITER");
	if (s && *s) {
		if (parse_long(s, &v) && (v == 0 || v == 1))
			cfg.arbiter = v == 1;
		else
			config_msg("XSCHED_ARBITER='%s' is not 0 or 1; using 0 (in-process scheduling only)",
				   s);
	}

	if (cfg.batch > cfg.threshold) {
		config_msg("XSCHED_BATCH=%u is larger than the threshold %u; using %u",
			   cfg.batch, cfg.threshold, cfg.threshold);
		cfg.batch = cfg.threshold;
	}
}

const struct xs_config *xs_config(void)
{
	pthread_once(&cfg_once, config_load);
	return &cfg;
}

static void config_noop(void)
{
}

void xs_config_reload(void)
{
	pthread_once(&cfg_once, config_noop);
	config_load();
	/* XSCHED_TRACE_MARKER may have changed too. */
	pthread_mutex_lock(&log_lock);
	if (trace_fd >= 0)
		close(trace_fd);
	trace_fd = -1;
	pthread_mutex_unlock(&log_lock);
}

bool xs_log_enabled(int level)
{
	return level <= xs_config()->log_level;
}

/* fork(): see sched.c. */
void xs_log_lock(bool lock)
{
	if (lock)
		pthread_mutex_lock(&log_lock);
	else
		pthread_mutex_unlock(&log_lock);
}

void xs_log(int level, const char *fmt, ...)
{
	static const char *const names[] = { "error", "warn", "info", "debug" };
	uint64_t now;
	va_list ap;

	if (!xs_log_enabled(level))
		return;
	now = xs_now_ns();
	pthread_mutex_lock(&log_lock);
	fprintf(stderr, "xsched[%llu.%06llu] %s: ",
		(unsigned long long)(now / 1000000000ULL),
		(unsigned long long)(now % 1000000000ULL / 1000), names[level]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	pthread_mutex_unlock(&log_lock);
}

bool xs_trace_on(void)
{
	return xs_config()->trace && trace_fd != -2;
}

/* Locked: the marker's fd, or -2 after saying once why there is none. */
static int trace_open(void)
{
	static const char *const paths[] = {
		"/sys/kernel/tracing/trace_marker",
		"/sys/kernel/debug/tracing/trace_marker",
	};
	const char *env = getenv("XSCHED_TRACE_MARKER");
	int err = 0;
	size_t i;

	if (trace_fd != -1)
		return trace_fd;
	if (env && *env) {
		trace_fd = open(env, O_WRONLY | O_CLOEXEC);
		err = errno;
	} else {
		for (i = 0; i < sizeof(paths) / sizeof(paths[0]) && trace_fd < 0; i++) {
			trace_fd = open(paths[i], O_WRONLY | O_CLOEXEC);
			if (trace_fd < 0 && (!err || errno != ENOENT))
				err = errno;
		}
	}
	if (trace_fd < 0) {
		trace_fd = -2;
		fprintf(stderr, "xsched: XSCHED_LOG=trace: cannot open %s: %s; decisions are not traced\n",
			env && *env ? env : paths[0], strerror(err));
	}
	return trace_fd;
}

/*
 * One line to the trace marker: "xsched_lib_EVENT: pid=PID " and @fmt.
 * One write(), so lines of concurrent threads never mix.
 */
void xs_trace(const char *event, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n, fd;

	if (!xs_trace_on())
		return;
	n = snprintf(line, sizeof(line), "xsched_lib_%s: pid=%d ", event, (int)getpid());
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&log_lock);
	fd = trace_open();
	/* EBADF: the buffer is off (tracing_on is 0) for now: the line is
	 * lost, later ones may not be.  Anything else: say so once, stop. */
	if (fd >= 0 && write(fd, line, strlen(line)) < 0 && errno != EBADF) {
		fprintf(stderr, "xsched: XSCHED_LOG=trace: writing the trace marker: %s; decisions are no longer traced\n",
			strerror(errno));
		close(fd);
		trace_fd = -2;
	}
	pthread_mutex_unlock(&log_lock);
}
