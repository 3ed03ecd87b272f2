// SPDX-License-Identifier: GPL-2.0
/*
 * ring_lifetime: BY_RING lookups, which walk a bucket of the sim's ring
 * table under RCU alone, racing the frees of the queues they walk past:
 * queues of that bucket destroyed, sim fds holding them closed,
 * registrations made by ring closed, and processes holding queues of that
 * bucket killed.  Every lookup must name its own queue or give ENOENT
 * (EEXIST for a queue another thread has just registered).  What the test
 * is for is the kernel's view of it: a queue freed while a lookup may still
 * read it is a use-after-free that only a checking kernel sees, so the
 * debug group of `make check` runs it on KASAN, lockdep and kmemleak (four
 * guest CPUs), and the runner fails the program on their reports.  The
 * threads that free wake at real-time priority, so that they preempt
 * lookups in the middle of their walks.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>

#include "xsched_test.h"

#define RUN_NS		(20 * XS_SEC)
#define NLOOK		2		/* lookup threads */
#define NCHURN		3		/* threads creating and freeing queues */
#define CHURN_QUEUES	32		/* each churn thread's rings (< XSCHED_SIM_QUEUES) */
#define CHILD_QUEUES	8		/* each killed child's queues in the bucket */
/*
 * A full bucket stays for CHURN_FULL_NS while the lookups walk it, so that
 * the wake-up that frees it lands in a walk; creating it takes longer on a
 * debug kernel than freeing it.
 */
#define CHURN_FULL_NS	(50 * XS_MS)
#define CHURN_EMPTY_NS	(5 * XS_MS)

/* The rings of one bucket: each thread's own, and one no queue has. */
struct rl_rings {
	uint64_t keep[NLOOK];		/* a queue that lives the whole test */
	uint64_t churn[NCHURN][CHURN_QUEUES];
	uint64_t free_ring;
	uint32_t bucket;
};

struct rl {
	const struct rl_rings *r;
	int cfd;
	volatile int stop;
	pthread_mutex_t lock;
	char err[160];			/* the first unexpected result */
	uint64_t lookups, found, enoent, creates, destroys, closes, kills;
	uint64_t no_rt;			/* churn threads refused SCHED_FIFO */
};

static void rl_fail(struct rl *rl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void rl_fail(struct rl *rl, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&rl->lock);
	if (!rl->err[0]) {
		va_start(ap, fmt);
		vsnprintf(rl->err, sizeof(rl->err), fmt, ap);
		va_end(ap);
	}
	rl->stop = 1;
	pthread_mutex_unlock(&rl->lock);
}

static void rl_add(uint64_t *counter, uint64_t n)
{
	__atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

static int ring_queue(int sfd, uint64_t ring, uint32_t *id)
{
	struct xsched_sim_queue_create c = {
		.ring_size = 2,
		.ring_addr = ring,
	};
	int ret = xs_ioctl(sfd, XSCHED_IOC_SIM_QUEUE_CREATE, &c);

	if (ret >= 0 && id)
		*id = c.queue_id;
	return ret < 0 ? ret : 0;
}

static int destroy(int sfd, uint32_t id)
{
	struct xsched_sim_queue_destroy d = { .queue_id = id };

	return xs_ioctl(sfd, XSCHED_IOC_SIM_QUEUE_DESTROY, &d);
}

/* BY_RING: the queue fd (its sim queue id in *@id) or -errno. */
static int by_ring(int cfd, uint64_t ring, uint32_t *id)
{
	struct xsched_register r = {
		.backend = XSCHED_BACKEND_SIM,
		.flags = XSCHED_REGISTER_BY_RING,
		.handle = ring,
	};
	struct xsched_queue_info info;
	int qfd;

	qfd = xs_ioctl(cfd, XSCHED_IOC_REGISTER, &r);
	if (qfd >= 0 && id)
		*id = xs_query(qfd, &info) ? UINT32_MAX : info.hw_queue_id;
	return qfd;
}

struct rl_look {
	struct rl *rl;
	int n;
	uint32_t keep_id;
};

/*
 * Mostly lookups of the free ring (ENOENT after the whole bucket), and in
 * turn: our own queue (found, and its registration closed) and another
 * thread's churned rings (found, ENOENT or EEXIST).
 */
static void *look_thread(void *arg)
{
	struct rl_look *l = arg;
	struct rl *rl = l->rl;
	uint64_t i, ring;
	uint32_t id;
	int qfd;

	for (i = 0; !rl->stop; i++) {
		if (i % 16 == 1) {
			qfd = by_ring(rl->cfd, rl->r->keep[l->n], &id);
			if (qfd < 0 || id != l->keep_id) {
				rl_fail(rl, "lookup of the kept ring %d: %s, queue %u (expected queue %u)",
					l->n, xs_err(qfd < 0 ? qfd : 0), id, l->keep_id);
				break;
			}
			close(qfd);
			rl_add(&rl->found, 1);
		} else if (i % 16 == 2) {
			ring = rl->r->churn[i / 16 % NCHURN][i / 32 % CHURN_QUEUES];
			qfd = by_ring(rl->cfd, ring, NULL);
			if (qfd >= 0) {
				close(qfd);
				rl_add(&rl->found, 1);
			} else if (qfd == -ENOENT || qfd == -EEXIST) {
				rl_add(&rl->enoent, 1);
			} else {
				rl_fail(rl, "lookup of a churned ring: %s", xs_err(qfd));
				break;
			}
		} else {
			qfd = by_ring(rl->cfd, rl->r->free_ring, NULL);
			if (qfd != -ENOENT) {
				rl_fail(rl, "lookup of a ring no queue has: %s, expected ENOENT",
					qfd < 0 ? xs_err(qfd) : "found a queue");
				if (qfd >= 0)
					close(qfd);
				break;
			}
			rl_add(&rl->enoent, 1);
		}
		rl_add(&rl->lookups, 1);
	}
	return NULL;
}

struct rl_churn {
	struct rl *rl;
	int n;
};

/*
 * At real-time priority, so that each of its wake-ups preempts a lookup
 * wherever it is, in the middle of a bucket walk too: fills a sim fd with
 * queues of the bucket, sleeps while the lookups walk past them, then frees
 * them all in one go, by closing the sim fd or by one destroy each (in
 * turn), and sleeps again.
 */
static void *churn_thread(void *arg)
{
	struct sched_param sp = { .sched_priority = 1 };
	struct rl_churn *c = arg;
	struct rl *rl = c->rl;
	uint32_t id[CHURN_QUEUES];
	uint64_t round;
	int sfd, k, ret = 0;

	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp))
		rl_add(&rl->no_rt, 1);
	for (round = 0; !rl->stop; round++) {
		ret = xs_sim_open(&sfd, NULL);
		if (ret) {
			rl_fail(rl, "churn %d: open sim: %s", c->n, xs_err(ret));
			break;
		}
		for (k = 0; k < CHURN_QUEUES && !ret; k++)
			ret = ring_queue(sfd, rl->r->churn[c->n][k], &id[k]);
		if (ret) {
			rl_fail(rl, "churn %d: create ring %d: %s", c->n, k - 1, xs_err(ret));
			close(sfd);
			break;
		}
		rl_add(&rl->creates, CHURN_QUEUES);
		xs_sleep_ns(CHURN_FULL_NS);
		for (k = 0; round % 2 && k < CHURN_QUEUES && !ret; k++)
			ret = destroy(sfd, id[k]);
		if (ret) {
			rl_fail(rl, "churn %d: destroy ring %d: %s", c->n, k - 1, xs_err(ret));
			close(sfd);
			break;
		}
		close(sfd);
		rl_add(&rl->destroys, CHURN_QUEUES);
		rl_add(&rl->closes, 1);
		xs_sleep_ns(CHURN_EMPTY_NS);
	}
	return NULL;
}

/*
 * A process whose queues share the parent's bucket (its own rings, hashed
 * with its own address space): it creates them, says so on @ready, then
 * destroys and creates them until it is killed.
 */
static void killed_child(uint32_t bucket, int ready)
{
	uint64_t rings[CHILD_QUEUES], rng = getpid();
	uint32_t id[CHILD_QUEUES];
	void *page;
	int sfd, i, k;

	page = mmap(NULL, XS_PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED || xs_sim_open(&sfd, NULL) ||
	    xs_rings_in_bucket((uint64_t)(uintptr_t)page, bucket, rings, CHILD_QUEUES))
		_exit(1);
	for (i = 0; i < CHILD_QUEUES; i++)
		if (ring_queue(sfd, rings[i], &id[i]))
			_exit(2);
	if (write(ready, "x", 1) != 1)
		_exit(3);
	for (;;) {
		k = xs_rand(&rng) % CHILD_QUEUES;
		if (destroy(sfd, id[k]) || ring_queue(sfd, rings[k], &id[k]))
			_exit(4);
	}
}

/* Forks a child into the bucket, kills it after a few ms; 0 or -errno. */
static int kill_round(uint32_t bucket, uint64_t *rng)
{
	int pfd[2], st, ret = 0;
	pid_t pid;
	char c;

	if (pipe(pfd))
		return -errno;
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return ret;
	}
	if (pid == 0) {
		close(pfd[0]);
		killed_child(bucket, pfd[1]);
	}
	close(pfd[1]);
	if (read(pfd[0], &c, 1) != 1)
		ret = -EPIPE;	/* it exited before it was ready */
	close(pfd[0]);
	if (!ret)
		xs_sleep_ns(xs_rand_range(rng, 1, 30) * XS_MS);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	if (!ret && !(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL))
		ret = -ECHILD;	/* it failed on its own */
	return ret;
}

/*
 * The killer: a process of its own, forked before the churn threads open
 * their sim fds, so that no child of it holds a copy of one (a close would
 * not free their queues).  Kills children until @stop is closed, then
 * reports the count, or the first -errno, on @up.
 */
static void killer(uint32_t bucket, uint64_t seed, int stop, int up)
{
	struct pollfd p = { .fd = stop, .events = POLLIN };
	int64_t kills = 0;
	int ret;

	while (poll(&p, 1, 0) == 0) {
		ret = kill_round(bucket, &seed);
		if (ret) {
			kills = ret;
			break;
		}
		kills++;
	}
	_exit(write(up, &kills, sizeof(kills)) == sizeof(kills) ? 0 : 1);
}

FIXTURE(rl) {
	int cfd;
	struct xsched_version ver;
	int sfd;
	struct xsched_sim_info sim;
	struct rl_rings rings;
};

FIXTURE_SETUP(rl)
{
	uint64_t all[NLOOK + NCHURN * CHURN_QUEUES + 1];
	void *page;
	int ret, i;

	XS_CLIENT_OPEN_OR_SKIP(self->cfd, self->ver);
	XS_SIM_OPEN_OR_SKIP(self->sfd, self->sim);
	XS_DEBUGFS_OR_SKIP();
	page = mmap(NULL, XS_PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, page);
	ret = xs_rings_sharing_a_bucket((uint64_t)(uintptr_t)page, all,
					XS_ARRAY_SIZE(all));
	ASSERT_EQ(0, ret) TH_LOG("%zu rings in one bucket: %s",
				 XS_ARRAY_SIZE(all), xs_err(ret));
	ASSERT_EQ(0, xs_ring_bucket(all[0], &self->rings.bucket));
	for (i = 0; i < NLOOK; i++)
		self->rings.keep[i] = all[i];
	memcpy(self->rings.churn, all + NLOOK, sizeof(self->rings.churn));
	self->rings.free_ring = all[XS_ARRAY_SIZE(all) - 1];
}

FIXTURE_TEARDOWN(rl)
{
	if (self->cfd >= 0)
		close(self->cfd);
	if (self->sfd > 0)
		close(self->sfd);
}

TEST_F_TIMEOUT(rl, lookups_racing_frees_closes_and_kills_stay_exact, 120)
{
	struct rl rl = { .r = &self->rings, .cfd = self->cfd };
	struct rl_look look[NLOOK];
	struct rl_churn churn[NCHURN];
	pthread_t lt[NLOOK], ct[NCHURN];
	uint64_t end, seed = xs_seed("ring_lifetime");
	int i, stop[2], up[2];
	int64_t kills = 0;
	pid_t pid;

	pthread_mutex_init(&rl.lock, NULL);
	for (i = 0; i < NLOOK; i++) {
		uint32_t id;

		ASSERT_EQ(0, ring_queue(self->sfd, self->rings.keep[i], &id));
		look[i] = (struct rl_look){ .rl = &rl, .n = i, .keep_id = id };
	}
	ASSERT_EQ(0, pipe(stop));
	ASSERT_EQ(0, pipe(up));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(stop[1]);
		close(up[0]);
		killer(self->rings.bucket, seed, stop[0], up[1]);
	}
	close(stop[0]);
	close(up[1]);
	for (i = 0; i < NCHURN; i++) {
		churn[i] = (struct rl_churn){ .rl = &rl, .n = i };
		ASSERT_EQ(0, pthread_create(&ct[i], NULL, churn_thread, &churn[i]));
	}
	for (i = 0; i < NLOOK; i++)
		ASSERT_EQ(0, pthread_create(&lt[i], NULL, look_thread, &look[i]));
	end = xs_now_ns() + RUN_NS;
	while (!rl.stop && xs_now_ns() < end)
		xs_sleep_ns(10 * XS_MS);
	rl.stop = 1;
	for (i = 0; i < NCHURN; i++)
		pthread_join(ct[i], NULL);
	for (i = 0; i < NLOOK; i++)
		pthread_join(lt[i], NULL);
	close(stop[1]);
	if (read(up[0], &kills, sizeof(kills)) != sizeof(kills))
		kills = -EPIPE;
	close(up[0]);
	waitpid(pid, NULL, 0);
	if (kills < 0)
		rl_fail(&rl, "killer: %s", xs_err((int)kills));
	else
		rl.kills = kills;
	ksft_print_msg("bucket %u: %llu lookups (%llu found, %llu ENOENT or EEXIST), %llu creates, %llu destroys, %llu sim fds closed, %llu processes killed\n",
		       self->rings.bucket, (unsigned long long)rl.lookups,
		       (unsigned long long)rl.found, (unsigned long long)rl.enoent,
		       (unsigned long long)rl.creates, (unsigned long long)rl.destroys,
		       (unsigned long long)rl.closes, (unsigned long long)rl.kills);
	EXPECT_EQ(0, rl.err[0]) TH_LOG("%s", rl.err);
	/* Without it wake-ups rarely land inside a walk: say so, do not pass. */
	EXPECT_EQ(0, rl.no_rt) TH_LOG("%llu churn threads were refused SCHED_FIFO",
				      (unsigned long long)rl.no_rt);
	/* Each race happened. */
	EXPECT_LT(0, rl.found);
	EXPECT_LT(0, rl.destroys);
	EXPECT_LT(0, rl.closes);
	EXPECT_LT(0, rl.kills);
	/* The kept queues are still found, the free ring still ENOENT. */
	for (i = 0; i < NLOOK; i++) {
		uint32_t id = UINT32_MAX;
		int qfd = by_ring(self->cfd, self->rings.keep[i], &id);

		EXPECT_LE(0, qfd);
		EXPECT_EQ(look[i].keep_id, id);
		if (qfd >= 0)
			close(qfd);
	}
	EXPECT_EQ(-ENOENT, by_ring(self->cfd, self->rings.free_ring, NULL));
}

TEST_HARNESS_MAIN
