// SPDX-License-Identifier: GPL-2.0
/*
 * Time, and polling a queue until it reaches a state.
 */
#include "xsched_util.h"

uint64_t xs_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * XS_SEC + (uint64_t)ts.tv_nsec;
}

void xs_sleep_ns(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / XS_SEC),
		.tv_nsec = (long)(ns % XS_SEC),
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int xs_wait_state(int qfd, int state, uint64_t timeout_ns)
{
	uint64_t end = xs_now_ns() + timeout_ns;
	int s;

	for (;;) {
		s = xs_state(qfd);
		if (s < 0)
			return s;
		if (s == state)
			return 0;
		if (xs_now_ns() > end)
			return -ETIMEDOUT;
		xs_sleep_ns(XS_MS);
	}
}

int xs_wait_no_saved_waves(int qfd, uint64_t timeout_ns)
{
	uint64_t end = xs_now_ns() + timeout_ns;
	struct xsched_queue_info info;
	int ret;

	for (;;) {
		ret = xs_query(qfd, &info);
		if (ret)
			return ret;
		if (!info.saved_waves)
			return 0;
		if (xs_now_ns() > end)
			return -ETIMEDOUT;
		xs_sleep_ns(XS_MS);
	}
}

int xs_wait_steps(int qfd, uint64_t steps, uint64_t timeout_ns)
{
	uint64_t end = xs_now_ns() + timeout_ns;
	struct xsched_queue_info info;
	int ret;

	for (;;) {
		ret = xs_query(qfd, &info);
		if (ret)
			return ret;
		if (info.steps_done >= steps)
			return 0;
		if (xs_now_ns() > end)
			return -ETIMEDOUT;
		xs_sleep_ns(200 * XS_US);
	}
}

int xs_poll(int fd, short events, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int ret = poll(&p, 1, timeout_ms);

	if (ret < 0)
		return -errno;
	return ret ? p.revents : 0;
}
