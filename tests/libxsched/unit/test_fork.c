// SPDX-License-Identifier: MIT
/*
 * fork() with the library in use, in the parent and then in the child.
 *
 * Built into a binary of its own without AddressSanitizer (UBSan only; see
 * the Makefile): GCC 12's ASan allocator has no fork handlers, so a child
 * forked while another thread of the parent was inside malloc() hangs on
 * the allocator's lock the first time it allocates.  glibc's malloc takes
 * its locks around fork(), which is what real callers (a DataLoader that
 * forks) run on, so these children use the library for real.
 */
#include <dirent.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "fake_rt.h"
#include "util.h"

static struct xsched_xqueue *xq_of(uintptr_t h, uint32_t flags)
{
	struct xsi_stream *s = xsi_stream_get(&fake_rt, h, flags);

	return s ? xsi_stream_xqueue(s) : NULL;
}

/* After fork() the child cannot suspend its parent's queues (it has no
 * monitor or worker threads for them). */
TEST(fork_child_cannot_touch_parent_queues)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64), h2 = mock_queue_create(mp, 64);
	struct xsched_xqueue *xq;
	int status;
	pid_t pid;

	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, NULL), 0);
	pid = fork();
	if (pid == 0) {
		struct xsched_xqueue *mine;
		struct mock_cmd c = cmd_tag(1, NULL, 0);

		/* The mock's own locks are not fork-safe (a parent thread may
		 * have held one): the child uses a mock of its own. */
		mp = mock_create(false, 3);
		mock_queue_create(mp, 64);
		h2 = mock_queue_create(mp, 64);
		if (xsched_suspend(xq, 0) != -ECHILD ||
		    xsched_submit(xq, &c, 1, NULL) != -ECHILD ||
		    xs_sched_count() != 0)
			_exit(1);
		if (xsched_xqueue_create(&mine, &mp->plat, h2, NULL) ||
		    xsched_submit(mine, &c, 1, NULL))
			_exit(2);
		mock_complete(mp, h2, 1);
		if (xsched_xqueue_destroy(mine) || xs_sched_count())
			_exit(3);
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	ASSERT_EQ(mock_q(mp, h)->suspend_calls, 0);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(interpose_fork_child_starts_clean_and_cannot_touch_parent_queues)
{
	struct fake_stream *a = fake_stream_new(0, 0);
	struct xsched_xqueue *pq;
	int status;
	pid_t pid;

	fake_auto = true;
	fake_init();
	ASSERT_EQ(fakeLaunch((uintptr_t)a, 1), 0);
	pq = xq_of((uintptr_t)a, 0);
	pid = fork();
	if (pid == 0) {
		struct xsched_xq_info info;

		if (xsi_stream_count(&fake_rt) != 0 || xs_sched_count() != 0)
			_exit(10);
		if (xsched_suspend(pq, 0) != -ECHILD || xsched_query(pq, &info, sizeof(info)) != -ECHILD ||
		    xsched_xqueue_destroy(pq) != -ECHILD)
			_exit(11);
		/* The library works in the child: a new stream, a new XQueue. */
		if (fakeLaunch((uintptr_t)a, 2) || xsi_stream_count(&fake_rt) != 1 ||
		    xq_of((uintptr_t)a, 0) == pq)
			_exit(12);
		if (fakeStreamSynchronize((uintptr_t)a))
			_exit(13);
		xsi_runtime_fini(&fake_rt);
		_exit(xs_sched_count() ? 14 : 0);
	}
	ASSERT_TRUE(pid > 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	/* The parent's queue is as it was. */
	ASSERT_EQ(xq_info(pq).suspends, 0);
	ASSERT_EQ(xsi_stream_count(&fake_rt), 1);
	ASSERT_EQ(fakeLaunch((uintptr_t)a, 3), 0);
	xsi_runtime_fini(&fake_rt);
}

/* ---- thread + fork stress ------------------------------------------------ */

#define ST_THREADS 4		/* create, submit, wait, destroy */
#define ST_ITERS 40
#define ST_CMDS 12		/* per iteration, in submits of 1..3 */
#define ST_FORKERS 2
#define ST_FORKS 8
#define ST_WAIT_NS 10000000000LL	/* any one wait; longer is a hang */

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n++;
	closedir(d);
	return n;
}

static uint32_t st_tag(unsigned int t, unsigned int it, unsigned int k)
{
	return t << 24 | it << 8 | k;
}

/*
 * One XQueue's life on hardware queue @h, @it-th time: created at a level and
 * priority of its own (so the policy suspends and resumes the lower ones
 * while higher ones are busy), ST_CMDS commands in submits of 1..3, a
 * bounded wait for the last, destroyed.  Returns NULL or what went wrong.
 */
static const char *st_round(struct mock_platform *mp, uint32_t h, unsigned int t,
			    unsigned int it)
{
	static const unsigned int level[] = { XSCHED_LV1, XSCHED_LV2, XSCHED_LV3 };
	struct xsched_attr a = attr_lv1((int32_t)(t % 3), 4, 2);
	struct xsched_xqueue *xq;
	unsigned int k = 0;
	uint64_t seq = 0;
	static _Thread_local char msg[96];
	int ret;

	a.level = level[(t + it) % 3];
	ret = xsched_xqueue_create(&xq, &mp->plat, h, &a);
	if (ret) {
		snprintf(msg, sizeof(msg), "create (Lv%u) failed: %s", a.level, strerror(-ret));
		return msg;
	}
	while (k < ST_CMDS) {
		struct mock_cmd c[3];
		unsigned int n = 1 + (k + it) % 3, i;

		if (n > ST_CMDS - k)
			n = ST_CMDS - k;
		for (i = 0; i < n; i++)
			c[i] = cmd_tag(st_tag(t, it, k + i), NULL, 20000 * ((k + i) % 2));
		if (xsched_submit(xq, c, n, &seq)) {
			xsched_xqueue_destroy(xq);
			return "submit failed";
		}
		k += n;
	}
	if (xsched_wait(xq, seq, ST_WAIT_NS)) {
		xsched_xqueue_destroy(xq);
		return "wait for the last command failed or timed out (a hang)";
	}
	if (xsched_xqueue_destroy(xq))
		return "destroy failed";
	return NULL;
}

/* Every command of thread @t on queue @q in the execution log, once, in
 * submission order. */
static const char *st_check_log(struct mock_platform *mp, uint32_t q, unsigned int t,
				unsigned int iters)
{
	static char msg[160];
	unsigned int it = 0, k = 0;
	uint32_t i;

	for (i = 0; i < mp->nlog; i++) {
		if (mp->log[i].queue != q)
			continue;
		if (it >= iters || mp->log[i].tag != st_tag(t, it, k)) {
			snprintf(msg, sizeof(msg),
				 "queue %u: log entry %u is tag %#x, expected %#x (lost or reordered)",
				 q, i, mp->log[i].tag, st_tag(t, it, k));
			return msg;
		}
		if (++k == ST_CMDS) {
			k = 0;
			it++;
		}
	}
	if (it != iters) {
		snprintf(msg, sizeof(msg), "queue %u: %u of %u rounds executed", q, it, iters);
		return msg;
	}
	return NULL;
}

static struct mock_platform *st_mp;
static uint32_t st_h[ST_THREADS];
static atomic_uint st_progress;
static const char *_Atomic st_error;
/* Where each thread is (its round), for the watchdog's message. */
static atomic_uint st_at[ST_THREADS + ST_FORKERS];

static void st_fail(const char *what)
{
	const char *none = NULL;

	atomic_compare_exchange_strong(&st_error, &none, what);
}

static void *st_worker(void *arg)
{
	unsigned int t = (unsigned int)(uintptr_t)arg, it;

	for (it = 0; it < ST_ITERS && !atomic_load(&st_error); it++) {
		const char *e;

		atomic_store(&st_at[t], it);
		e = st_round(st_mp, st_h[t], t, it);
		if (e) {
			st_fail(e);
			break;
		}
		atomic_fetch_add(&st_progress, 1);
	}
	return NULL;
}

/*
 * The child: none of the parent's XQueues, and the library works: XQueues
 * of its own on a mock of its own (the parent's mock has locks that a
 * parent thread may have held at fork()), two at a time so its policy and
 * monitor run, all work done in order, no fd left behind.
 */
static int st_child(void)
{
	struct mock_platform *mp;
	uint32_t h[2];
	int fds0, it, t;

	if (xs_sched_count())
		return 10;
	fds0 = count_fds();
	mp = mock_create(true, 3);
	h[0] = mock_queue_create(mp, 64);
	h[1] = mock_queue_create(mp, 64);
	for (it = 0; it < 3; it++)
		for (t = 0; t < 2; t++)
			if (st_round(mp, h[t], (unsigned int)t, (unsigned int)it))
				return 11;
	for (t = 0; t < 2; t++)
		if (st_check_log(mp, h[t], (unsigned int)t, 3))
			return 12;
	if (xs_sched_count())
		return 13;
	mock_destroy(mp);
	return count_fds() == fds0 ? 0 : 14;
}

static void *st_forker(void *arg)
{
	unsigned int f = (unsigned int)(uintptr_t)arg, i;
	static char msg[ST_FORKERS][96];

	for (i = 0; i < ST_FORKS && !atomic_load(&st_error); i++) {
		uint64_t deadline;
		int status = 0;
		pid_t pid, w;

		atomic_store(&st_at[ST_THREADS + f], i);
		usleep(2000 * (f + 1));
		pid = fork();
		if (pid == 0)
			_exit(st_child());
		if (pid < 0) {
			st_fail("fork failed");
			break;
		}
		/* Bounded: a child that hangs is a failure, not a hang. */
		deadline = xs_now_ns() + 20000000000ULL;
		while ((w = waitpid(pid, &status, WNOHANG)) == 0 && xs_now_ns() < deadline)
			usleep(1000);
		if (w == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			st_fail("a forked child hung (20 s)");
			break;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			static const char *const why[] = {
				[10] = "saw the parent's XQueues",
				[11] = "a round failed", [12] = "lost or reordered a command",
				[13] = "left an XQueue", [14] = "leaked an fd",
			};
			int c = WIFEXITED(status) ? WEXITSTATUS(status) : 0;

			snprintf(msg[f], sizeof(msg[f]), "forked child failed: status %#x (%s)",
				 status, c >= 10 && c <= 14 ? why[c] : "crashed");
			st_fail(msg[f]);
			break;
		}
		atomic_fetch_add(&st_progress, 1);
	}
	return NULL;
}

/*
 * Many threads creating, submitting to, waiting on and destroying XQueues
 * while others fork and the children use the library: a fixed number of
 * rounds, every wait bounded (a hang fails with the phase each thread was
 * in), no command lost or reordered, no fd left open.
 */
TEST(stress_threads_and_fork_no_hang_loss_reorder_or_fd_leak)
{
	pthread_t w[ST_THREADS], f[ST_FORKERS];
	unsigned int i, last = 0;
	uint64_t still = xs_now_ns();
	int fds0;

	st_mp = mock_create(true, 3);
	for (i = 0; i < ST_THREADS; i++)
		st_h[i] = mock_queue_create(st_mp, 16);
	fds0 = count_fds();
	for (i = 0; i < ST_THREADS; i++)
		ASSERT_EQ(pthread_create(&w[i], NULL, st_worker, (void *)(uintptr_t)i), 0);
	for (i = 0; i < ST_FORKERS; i++)
		ASSERT_EQ(pthread_create(&f[i], NULL, st_forker, (void *)(uintptr_t)i), 0);
	/* Watchdog: all rounds done, or no progress for 25 s is a hang. */
	while (atomic_load(&st_progress) < ST_THREADS * ST_ITERS + ST_FORKERS * ST_FORKS &&
	       !atomic_load(&st_error)) {
		unsigned int p = atomic_load(&st_progress);

		if (p != last) {
			last = p;
			still = xs_now_ns();
		} else if (xs_now_ns() - still > 25000000000ULL) {
			for (i = 0; i < ST_THREADS + ST_FORKERS; i++)
				printf("#   %s %u: at step %u\n",
				       i < ST_THREADS ? "worker" : "forker",
				       i < ST_THREADS ? i : i - ST_THREADS,
				       atomic_load(&st_at[i]));
			xt_fail(__FILE__, __LINE__, "no progress for 25 s after %u steps: a hang", p);
		}
		usleep(10000);
	}
	for (i = 0; i < ST_THREADS; i++)
		pthread_join(w[i], NULL);
	for (i = 0; i < ST_FORKERS; i++)
		pthread_join(f[i], NULL);
	if (atomic_load(&st_error))
		xt_fail(__FILE__, __LINE__, "%s", atomic_load(&st_error));
	ASSERT_EQ(atomic_load(&st_progress), ST_THREADS * ST_ITERS + ST_FORKERS * ST_FORKS);
	for (i = 0; i < ST_THREADS; i++) {
		const char *e = st_check_log(st_mp, st_h[i], i, ST_ITERS);

		if (e)
			xt_fail(__FILE__, __LINE__, "%s", e);
	}
	ASSERT_EQ(xs_sched_count(), 0);
	ASSERT_EQ(count_fds(), fds0);
	mock_destroy(st_mp);
}
