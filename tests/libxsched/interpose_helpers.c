// SPDX-License-Identifier: MIT
/* Description: helpers both interposers' host tests share (CUDA's and HIP's): see interpose_helpers.h. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "interpose_helpers.h"

static char errbuf[65536];

FILE *err_capture(void)
{
	FILE *f = tmpfile();

	ASSERT_TRUE(f != NULL);
	fflush(stderr);
	ASSERT_EQ(dup2(fileno(f), 2), 2);
	return f;
}

const char *err_read(FILE *f)
{
	size_t n;

	fflush(stderr);
	rewind(f);
	n = fread(errbuf, 1, sizeof(errbuf) - 1, f);
	errbuf[n] = 0;
	return errbuf;
}

/* Lines of @text that hold @a and one of @b, @c. */
int lines_with(const char *text, const char *a, const char *b, const char *c)
{
	char line[1024];
	const char *p = text, *e;
	int n = 0;

	while (*p) {
		size_t len;

		e = strchr(p, '\n');
		len = e ? (size_t)(e - p) : strlen(p);
		if (len >= sizeof(line))
			len = sizeof(line) - 1;
		memcpy(line, p, len);
		line[len] = 0;
		n += strstr(line, a) && ((b && strstr(line, b)) || (c && strstr(line, c)));
		p += len;
		if (*p == '\n')
			p++;
		if (!e)
			break;
	}
	return n;
}

double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int count_of(const char *hay, const char *needle)
{
	int n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static const char *wd_what;
static unsigned int wd_ms;
static _Atomic uint64_t wd_deadline;

static void *wd_thread(void *p)
{
	(void)p;
	for (;;) {
		uint64_t d = wd_deadline;

		if (d && now_ns() > d)
			xt_fail(__FILE__, __LINE__, "timeout: %s had not returned after %u ms",
				wd_what, wd_ms);
		usleep(10000);
	}
	return NULL;
}

void wd_arm(unsigned int ms, const char *what)
{
	static pthread_t t;

	if (!t)
		ASSERT_EQ(pthread_create(&t, NULL, wd_thread, NULL), 0);
	wd_what = what;
	wd_ms = ms;
	wd_deadline = now_ns() + ms * MS;
}

void wd_disarm(void)
{
	wd_deadline = 0;
}
