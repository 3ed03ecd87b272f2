/* SPDX-License-Identifier: MIT */
/* Helpers shared by the unit tests. */
#ifndef XSCHED_TEST_UTIL_H
#define XSCHED_TEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "harness.h"
#include "mock.h"

static inline struct xsched_attr attr_lv(unsigned int level, int32_t prio)
{
	struct xsched_attr a;

	memset(&a, 0, sizeof(a));
	a.flags = XSCHED_ATTR_LEVEL | XSCHED_ATTR_PRIORITY;
	a.level = level;
	a.priority = prio;
	return a;
}

static inline struct xsched_attr attr_lv1(int32_t prio, unsigned int threshold,
					  unsigned int batch)
{
	struct xsched_attr a = attr_lv(XSCHED_LV1, prio);

	a.flags |= XSCHED_ATTR_THRESHOLD | XSCHED_ATTR_BATCH;
	a.threshold = threshold;
	a.batch = batch;
	return a;
}

static inline struct mock_cmd cmd_tag(uint32_t tag, uint64_t *counter,
				      uint64_t duration_ns)
{
	struct mock_cmd c;

	memset(&c, 0, sizeof(c));
	c.tag = tag;
	c.counter = counter;
	c.duration_ns = duration_ns;
	return c;
}

/* Submit @n commands tagged base, base+1, ... one call each. */
static inline void submit_n(struct xsched_xqueue *xq, uint32_t base, unsigned int n,
			    uint64_t *counters, uint64_t duration_ns)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct mock_cmd c = cmd_tag(base + i, counters ? &counters[i] : NULL,
					    duration_ns);
		ASSERT_EQ(xsched_submit(xq, &c, 1, NULL), 0);
	}
}

static inline uint32_t xq_state(struct xsched_xqueue *xq)
{
	struct xsched_xq_info info;

	if (xsched_query(xq, &info, sizeof(info)))
		return 99;
	return info.state;
}

static inline struct xsched_xq_info xq_info(struct xsched_xqueue *xq)
{
	struct xsched_xq_info info;

	ASSERT_EQ(xsched_query(xq, &info, sizeof(info)), 0);
	return info;
}

/* Redirect stderr into a temporary file; stderr_end() returns its text. */
static int saved_stderr = -1;
static char stderr_path[64];

static inline void stderr_begin(void)
{
	int fd;

	strcpy(stderr_path, "/tmp/xsched-unit-XXXXXX");
	fd = mkstemp(stderr_path);
	ASSERT_TRUE(fd >= 0);
	fflush(stderr);
	saved_stderr = dup(2);
	dup2(fd, 2);
	close(fd);
}

static inline char *stderr_end(void)
{
	static char buf[65536];
	ssize_t n;
	int fd;

	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	fd = open(stderr_path, O_RDONLY);
	ASSERT_TRUE(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	unlink(stderr_path);
	buf[n > 0 ? n : 0] = 0;
	return buf;
}

static inline int count_substr(const char *s, const char *sub)
{
	int n = 0;

	while ((s = strstr(s, sub))) {
		n++;
		s += strlen(sub);
	}
	return n;
}

#endif
