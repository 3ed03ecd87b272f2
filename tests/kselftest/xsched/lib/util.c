// SPDX-License-Identifier: GPL-2.0
/*
 * Seeds and random numbers, percentiles, and another user (a child under
 * another uid that reports on a pipe).
 */
#include "xsched_util.h"

#include "kselftest.h"

uint64_t xs_seed(const char *who)
{
	const char *env = getenv("XSCHED_SEED");
	uint64_t seed;

	if (env && *env)
		seed = strtoull(env, NULL, 0);
	else
		seed = xs_now_ns() ^ ((uint64_t)getpid() << 32);
	if (!seed)
		seed = 1;
	ksft_print_msg("%s: seed %" PRIu64 " (XSCHED_SEED=%" PRIu64
		       " repeats it)\n", who, seed, seed);
	return seed;
}

uint64_t xs_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

uint64_t xs_rand_range(uint64_t *state, uint64_t lo, uint64_t hi)
{
	return lo + xs_rand(state) % (hi - lo + 1);
}

static int xs_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t xs_percentile(uint64_t *v, size_t n, unsigned int pct)
{
	size_t rank;

	qsort(v, n, sizeof(*v), xs_cmp_u64);
	rank = (n * pct + 99) / 100;
	return v[rank ? rank - 1 : 0];
}

int xs_other_start(struct xs_other *o, uid_t uid, xs_other_fn fn, void *arg)
{
	int up[2], down[2];
	char c;

	o->pid = -1;
	o->rfd = -1;
	o->wfd = -1;
	if (pipe(up))
		return -errno;
	if (pipe(down)) {
		close(up[0]);
		close(up[1]);
		return -errno;
	}
	o->pid = fork();
	if (o->pid < 0)
		return -errno;
	if (o->pid == 0) {
		int ret;

		close(up[0]);
		close(down[1]);
		if (setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
			ret = -errno;
		else
			ret = fn(arg, up[1], down[0]);
		if (write(up[1], &ret, sizeof(ret)) != sizeof(ret))
			_exit(1);
		/* Keep every fd open until the parent is done measuring. */
		while (read(down[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	o->rfd = up[0];
	o->wfd = down[1];
	return 0;
}

int xs_other_result(struct xs_other *o)
{
	int ret;

	if (read(o->rfd, &ret, sizeof(ret)) != sizeof(ret))
		return -EPIPE;
	return ret;
}

void xs_other_stop(struct xs_other *o)
{
	close(o->wfd);
	close(o->rfd);
	waitpid(o->pid, NULL, 0);
}
