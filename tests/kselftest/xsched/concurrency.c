// SPDX-License-Identifier: GPL-2.0
/*
 * concurrency: threads hammering SUSPEND/RESUME/QUERY/SET_PRIORITY on one
 * queue while work runs, a thread closing and re-registering a queue under
 * other threads' feet, and several clients submitting and waiting while
 * their queues are suspended and resumed.  No deadlock (each test is bounded
 * by alarm(), whose default action kills the test), only documented errnos,
 * consistent counters, and the work is exact at the end: every result equals
 * the CPU reference and every workgroup's step marks (MARK kernels) say each
 * step ran exactly once.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#include "xsched_test.h"

#define DEADLOCK_S	60	/* alarm(): a hang fails the test by SIGALRM */
#define HAMMER_NS	(1500 * XS_MS)
#define PACKETS		48

/* Work fed to a queue: independent MARK packets, each with its own slice. */
struct feed {
	int cfd;		/* /dev/xsched: registration */
	int sfd;		/* /dev/xsched_sim: memory, packets */
	uint32_t id;
	uint32_t grid, steps;
	uint64_t step_ns;
	struct xs_buf buf;
	struct xsched_sim_packet pkt[PACKETS];
	unsigned int submitted;
	uint64_t last_seq;
};

/* The first unexpected result any thread saw, for the main thread to report. */
struct verdict {
	pthread_mutex_t lock;
	atomic_int bad;
	char what[200];
};

static void verdict_bad(struct verdict *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void verdict_bad(struct verdict *v, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&v->lock);
	if (!atomic_fetch_add(&v->bad, 1)) {
		va_start(ap, fmt);
		vsnprintf(v->what, sizeof(v->what), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&v->lock);
}

/* What the hammer threads share. */
struct arena {
	atomic_bool stop;
	atomic_int qfd;			/* the queue fd the threads use */
	bool fd_may_vanish;		/* EBADF is expected (churn test) */
	uint64_t seed;
	unsigned int slots;
	struct verdict v;
	atomic_ulong ops[6];		/* per thread kind */
	atomic_ulong suspends_ok, cancels, resumes_ok;
};

enum { OP_SUSPEND, OP_RESUME, OP_QUERY, OP_PRIORITY, OP_CHURN, OP_FEED };

static const char *const op_names[] = {
	"suspend", "resume", "query", "set_priority", "re-register", "submit",
};

struct worker {
	struct arena *a;
	int kind;
	int index;
	struct feed *feed;		/* OP_FEED, OP_CHURN */
};

static bool allowed_fd_error(struct arena *a, int ret)
{
	return a->fd_may_vanish && ret == -EBADF;
}

static void *hammer(void *arg)
{
	struct worker *w = arg;
	struct arena *a = w->a;
	uint64_t rng = a->seed + 0x1000 * (w->kind + 1) + w->index + 1;
	struct xsched_queue_info info, prev = { 0 };
	bool have_prev = false;
	int ret, qfd;

	while (!atomic_load(&a->stop)) {
		qfd = atomic_load(&a->qfd);
		switch (w->kind) {
		case OP_SUSPEND: {
			uint32_t mode = xs_rand(&rng) & 1 ? XSCHED_MODE_SAVE :
							   XSCHED_MODE_DRAIN;
			uint32_t flags = xs_rand(&rng) % 3 ? 0 : XSCHED_SUSPEND_NONBLOCK;
			uint64_t grace = mode == XSCHED_MODE_SAVE && !(xs_rand(&rng) % 4) ?
					 xs_rand_range(&rng, 1, XS_MS) : 0;

			ret = xs_suspend(qfd, mode, flags, grace, NULL);
			if (!ret)
				atomic_fetch_add(&a->suspends_ok, 1);
			else if (ret == -ECANCELED)
				atomic_fetch_add(&a->cancels, 1);
			else if (ret != -EALREADY && !allowed_fd_error(a, ret))
				verdict_bad(&a->v, "%s %s%s: %s", op_names[w->kind],
					    xs_mode_name(mode),
					    flags ? " NONBLOCK" : "", xs_err(ret));
			xs_sleep_ns(xs_rand_range(&rng, 0, 2 * XS_MS));
			break;
		}
		case OP_RESUME:
			ret = xs_resume(qfd, NULL);
			if (!ret)
				atomic_fetch_add(&a->resumes_ok, 1);
			else if (ret != -EALREADY && !allowed_fd_error(a, ret))
				verdict_bad(&a->v, "resume: %s", xs_err(ret));
			xs_sleep_ns(xs_rand_range(&rng, 0, 3 * XS_MS));
			break;
		case OP_QUERY:
			ret = xs_query(qfd, &info);
			if (ret) {
				if (!allowed_fd_error(a, ret))
					verdict_bad(&a->v, "query: %s", xs_err(ret));
				have_prev = false;
				break;
			}
			if (info.state > XSCHED_STATE_SUSPENDED)
				verdict_bad(&a->v, "query: state %s", xs_state_name(info.state));
			if (info.rptr > info.wptr)
				verdict_bad(&a->v, "query: rptr %llu > wptr %llu",
					    (unsigned long long)info.rptr,
					    (unsigned long long)info.wptr);
			if (info.saved_waves > a->slots)
				verdict_bad(&a->v, "query: %u saved waves, GPU has %u slots",
					    info.saved_waves, a->slots);
			if (info.max_suspend_ns > info.total_suspend_ns ||
			    info.last_suspend_ns > info.max_suspend_ns)
				verdict_bad(&a->v, "query: last %llu max %llu total %llu ns",
					    (unsigned long long)info.last_suspend_ns,
					    (unsigned long long)info.max_suspend_ns,
					    (unsigned long long)info.total_suspend_ns);
			/*
			 * Progress of the sim queue never goes back; nor do the
			 * counters of one registration (a re-registration may
			 * reuse the uid, so they are checked only without churn).
			 */
			if (have_prev &&
			    (info.rptr < prev.rptr || info.steps_done < prev.steps_done ||
			     (!a->fd_may_vanish &&
			      (info.suspends < prev.suspends || info.resumes < prev.resumes ||
			       info.saved_bytes < prev.saved_bytes))))
				verdict_bad(&a->v, "query: a counter went backwards (steps %llu -> %llu, suspends %llu -> %llu)",
					    (unsigned long long)prev.steps_done,
					    (unsigned long long)info.steps_done,
					    (unsigned long long)prev.suspends,
					    (unsigned long long)info.suspends);
			prev = info;
			have_prev = true;
			break;
		case OP_PRIORITY:
			ret = xs_set_priority(qfd, (int32_t)xs_rand_range(&rng, 0, 200) - 100);
			if (ret && !allowed_fd_error(a, ret))
				verdict_bad(&a->v, "set_priority: %s", xs_err(ret));
			xs_sleep_ns(xs_rand_range(&rng, 0, XS_MS));
			break;
		}
		atomic_fetch_add(&a->ops[w->kind], 1);
	}
	return NULL;
}

/* Submits the feed's packets as ring space allows until all are in. */
static void *feeder(void *arg)
{
	struct worker *w = arg;
	struct feed *f = w->feed;
	int ret;

	while (!atomic_load(&w->a->stop) && f->submitted < PACKETS) {
		ret = xs_submit(f->sfd, f->id, &f->pkt[f->submitted], 1, &f->last_seq);
		if (ret == -EAGAIN) {
			xs_sleep_ns(XS_MS);
			continue;
		}
		if (ret) {
			verdict_bad(&w->a->v, "submit: %s", xs_err(ret));
			break;
		}
		f->submitted++;
		atomic_fetch_add(&w->a->ops[OP_FEED], 1);
	}
	return NULL;
}

/* Where packet @i's results (then its marks) are mapped. */
static uint64_t *feed_out(const struct feed *f, unsigned int i)
{
	return f->buf.map + (uint64_t)i * 2 * f->grid;
}

static int feed_init(struct feed *f, int cfd, int sfd, uint32_t id,
		     uint32_t grid, uint32_t steps, uint64_t step_ns, uint64_t seed)
{
	unsigned int i;
	int ret;

	memset(f, 0, sizeof(*f));
	f->cfd = cfd;
	f->sfd = sfd;
	f->id = id;
	f->grid = grid;
	f->steps = steps;
	f->step_ns = step_ns;
	ret = xs_buf_alloc(sfd, (uint64_t)PACKETS * 2 * grid * sizeof(uint64_t), &f->buf);
	if (ret)
		return ret;
	for (i = 0; i < PACKETS; i++) {
		f->pkt[i] = xs_mark_packet(grid, steps, step_ns, seed + i,
					   f->buf.gpu_addr + (uint64_t)i * 2 * grid * 8, 0);
		xs_marks_clear(&f->pkt[i], feed_out(f, i));
	}
	return 0;
}

/*
 * Waits for every submitted packet and expects exact step marks; returns the
 * first workgroup whose result differs (counting across packets) or -1.
 */
static long feed_check(struct __test_metadata *_metadata, struct feed *f)
{
	unsigned int i;
	long bad;
	int ret;

	if (!f->submitted)
		return -1;
	ret = xs_wait(f->sfd, f->id, f->last_seq, 60 * XS_SEC, NULL);
	EXPECT_EQ(0, ret) TH_LOG("waiting for %u packets: %s", f->submitted,
				 xs_err(ret));
	EXPECT_EQ(f->submitted, f->last_seq);
	for (i = 0; i < f->submitted; i++) {
		XS_EXPECT_MARKS(&f->pkt[i], feed_out(f, i));
		bad = xs_packet_mismatch(&f->pkt[i], NULL, feed_out(f, i));
		if (bad != -1)
			return bad < 0 ? bad : (long)i * f->grid + bad;
	}
	return -1;
}

static uint64_t feed_steps(const struct feed *f)
{
	return (uint64_t)f->submitted * f->grid * f->steps;
}

/* Resumes until the queue is ACTIVE (cancelling a SUSPENDING one). */
static int settle(int qfd)
{
	int i, ret, state;

	for (i = 0; i < 1000; i++) {
		state = xs_state(qfd);
		if (state == XSCHED_STATE_ACTIVE || state < 0)
			return state;
		ret = xs_resume(qfd, NULL);
		if (ret && ret != -EALREADY)
			return ret;
	}
	return -EBUSY;
}

FIXTURE(cc) {
	int cfd;
	struct xsched_version ver;
	int sfd;
	struct xsched_sim_info sim;
	unsigned int slots;
	uint32_t id;
	int qfd;
	struct feed feed;
	struct arena arena;
};

FIXTURE_SETUP(cc)
{
	self->qfd = -1;
	XS_CLIENT_OPEN_OR_SKIP(self->cfd, self->ver);
	XS_SIM_OPEN_OR_SKIP(self->sfd, self->sim);
	self->slots = xs_slots(&self->sim);
	ASSERT_LT(0, self->slots);
	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &self->id, NULL));
	self->qfd = xs_register(self->cfd, self->sfd, self->id, 0, NULL);
	ASSERT_LE(0, self->qfd);
	pthread_mutex_init(&self->arena.v.lock, NULL);
	self->arena.seed = xs_seed(_metadata->name);
	self->arena.slots = self->slots;
	atomic_store(&self->arena.qfd, self->qfd);
	ASSERT_EQ(0, feed_init(&self->feed, self->cfd, self->sfd, self->id,
			       self->slots / 2 + 1, 20, XS_MS, self->arena.seed));
	alarm(DEADLOCK_S);
}

FIXTURE_TEARDOWN(cc)
{
	alarm(0);
	if (self->qfd >= 0)
		close(self->qfd);
	if (self->cfd >= 0)
		close(self->cfd);
	/* 0 if the client was missing: setup skipped before the sim */
	if (self->sfd > 0)
		close(self->sfd);
}

/* Starts @n[kind] threads of each kind on the arena; returns how many. */
static int spawn(struct __test_metadata *_metadata, struct arena *a,
		 struct feed *feed, const int n[4], pthread_t *t,
		 struct worker *w)
{
	int kind, i, count = 0;

	for (kind = OP_SUSPEND; kind <= OP_PRIORITY; kind++) {
		for (i = 0; i < n[kind]; i++, count++) {
			w[count] = (struct worker){ .a = a, .kind = kind, .index = i };
			ASSERT_EQ(0, pthread_create(&t[count], NULL, hammer, &w[count]));
		}
	}
	w[count] = (struct worker){ .a = a, .kind = OP_FEED, .feed = feed };
	ASSERT_EQ(0, pthread_create(&t[count], NULL, feeder, &w[count]));
	return count + 1;
}

static void report_ops(struct arena *a)
{
	ksft_print_msg("ops: %lu suspend (%lu ok, %lu cancelled), %lu resume (%lu ok), %lu query, %lu set_priority, %lu re-register, %lu submit\n",
		       atomic_load(&a->ops[OP_SUSPEND]), atomic_load(&a->suspends_ok),
		       atomic_load(&a->cancels), atomic_load(&a->ops[OP_RESUME]),
		       atomic_load(&a->resumes_ok), atomic_load(&a->ops[OP_QUERY]),
		       atomic_load(&a->ops[OP_PRIORITY]), atomic_load(&a->ops[OP_CHURN]),
		       atomic_load(&a->ops[OP_FEED]));
}

/* After the threads: settle the queue, then work and counters are exact. */
static void check_queue(struct __test_metadata *_metadata, int qfd,
			struct feed *feed)
{
	struct xsched_queue_info info;
	long bad;
	int ret;

	ret = settle(qfd);
	ASSERT_EQ(XSCHED_STATE_ACTIVE, ret) TH_LOG("cannot settle the queue: %d", ret);
	bad = feed_check(_metadata, feed);
	EXPECT_EQ(-1, bad) TH_LOG("output entry %ld differs from the CPU reference", bad);
	EXPECT_EQ(0, xs_wait_no_saved_waves(qfd, 10 * XS_SEC));
	ASSERT_EQ(0, xs_query(qfd, &info));
	EXPECT_EQ(XSCHED_STATE_ACTIVE, info.state);
	EXPECT_EQ(feed_steps(feed), info.steps_done)
		TH_LOG("steps run %llu, expected exactly %llu",
		       (unsigned long long)info.steps_done,
		       (unsigned long long)feed_steps(feed));
	EXPECT_EQ(feed->last_seq, info.rptr);
	EXPECT_EQ(0, info.faults);
	EXPECT_EQ(0, info.last_error);
	EXPECT_GE(1, info.suspends > info.resumes ? info.suspends - info.resumes :
						    info.resumes - info.suspends)
		TH_LOG("suspends %llu vs resumes %llu",
		       (unsigned long long)info.suspends,
		       (unsigned long long)info.resumes);
	ksft_print_msg("queue %u: %llu suspends, %llu resumes, %llu packets, %llu steps\n",
		       info.queue_uid, (unsigned long long)info.suspends,
		       (unsigned long long)info.resumes,
		       (unsigned long long)info.rptr,
		       (unsigned long long)info.steps_done);
}

TEST_F_TIMEOUT(cc, hammering_one_queue_keeps_counters_consistent, 90)
{
	const int n[4] = { 2, 2, 1, 1 };
	struct worker w[8];
	pthread_t t[8];
	int i, count;

	count = spawn(_metadata, &self->arena, &self->feed, n, t, w);
	xs_sleep_ns(HAMMER_NS);
	atomic_store(&self->arena.stop, true);
	for (i = 0; i < count; i++)
		pthread_join(t[i], NULL);
	report_ops(&self->arena);
	EXPECT_EQ(0, atomic_load(&self->arena.v.bad))
		TH_LOG("%d unexpected results, first: %s",
		       atomic_load(&self->arena.v.bad), self->arena.v.what);
	EXPECT_LT(0, atomic_load(&self->arena.suspends_ok));
	check_queue(_metadata, self->qfd, &self->feed);
}

/*
 * Blocking suspends only, racing resumes from the same threads: every suspend
 * that completes is reported as success to the caller that started it, even
 * when other threads resumed and suspended the queue again before it woke;
 * ECANCELED only for one a resume cancelled.  So the successes the callers
 * saw equal the module's count of completed suspends, exactly.
 */
struct own_result {
	struct arena *a;
	int index;
	unsigned long ok, cancelled, already;
};

static void *suspend_own(void *arg)
{
	struct own_result *r = arg;
	uint64_t rng = r->a->seed + r->index + 1;
	int ret, qfd = atomic_load(&r->a->qfd);

	while (!atomic_load(&r->a->stop)) {
		ret = xs_suspend(qfd, xs_rand(&rng) & 1 ? XSCHED_MODE_SAVE :
				 XSCHED_MODE_DRAIN, 0, 0, NULL);
		if (!ret)
			r->ok++;
		else if (ret == -ECANCELED)
			r->cancelled++;
		else if (ret == -EALREADY)
			r->already++;
		else
			verdict_bad(&r->a->v, "blocking suspend: %s", xs_err(ret));
		xs_sleep_ns(xs_rand_range(&rng, 0, 200 * XS_US));
		ret = xs_resume(qfd, NULL);
		if (ret && ret != -EALREADY)
			verdict_bad(&r->a->v, "resume: %s", xs_err(ret));
	}
	return NULL;
}

TEST_F_TIMEOUT(cc, each_completed_suspend_is_reported_to_its_caller, 90)
{
	struct own_result r[3] = {};
	struct xsched_queue_info info;
	struct worker fw = { .a = &self->arena, .kind = OP_FEED, .feed = &self->feed };
	unsigned long ok = 0, cancelled = 0, already = 0;
	pthread_t t[3], ft;
	int i, ret;

	ASSERT_EQ(0, pthread_create(&ft, NULL, feeder, &fw));
	for (i = 0; i < 3; i++) {
		r[i] = (struct own_result){ .a = &self->arena, .index = i };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, suspend_own, &r[i]));
	}
	xs_sleep_ns(HAMMER_NS);
	atomic_store(&self->arena.stop, true);
	for (i = 0; i < 3; i++) {
		pthread_join(t[i], NULL);
		ok += r[i].ok;
		cancelled += r[i].cancelled;
		already += r[i].already;
	}
	pthread_join(ft, NULL);
	EXPECT_EQ(0, atomic_load(&self->arena.v.bad))
		TH_LOG("%d unexpected results, first: %s",
		       atomic_load(&self->arena.v.bad), self->arena.v.what);
	ret = settle(self->qfd);
	ASSERT_EQ(XSCHED_STATE_ACTIVE, ret);
	ASSERT_EQ(0, xs_query(self->qfd, &info));
	ksft_print_msg("blocking suspends: %lu ok, %lu cancelled, %lu already; module: %llu completed\n",
		       ok, cancelled, already, (unsigned long long)info.suspends);
	EXPECT_LT(0, ok);
	EXPECT_EQ(ok, info.suspends);
	EXPECT_EQ(0, info.faults);
	EXPECT_EQ(-1, feed_check(_metadata, &self->feed));
}

/* Registers @id, retrying while a racing release still holds it (EEXIST). */
static int register_retry(int cfd, int sfd, uint32_t id)
{
	int i, fd;

	for (i = 0; i < 2000; i++) {
		fd = xs_register(cfd, sfd, id, 0, NULL);
		if (fd != -EEXIST)
			return fd;
		xs_sleep_ns(100 * XS_US);
	}
	return -EEXIST;
}

/* Closes and re-registers the arena's queue, often while it is stopped. */
static void *churn(void *arg)
{
	struct worker *w = arg;
	struct arena *a = w->a;
	uint64_t rng = a->seed ^ 0xc4c4;
	int fd, ret;

	while (!atomic_load(&a->stop)) {
		fd = atomic_load(&a->qfd);
		switch (xs_rand(&rng) % 3) {
		case 0:
			xs_suspend(fd, XSCHED_MODE_SAVE, XSCHED_SUSPEND_NONBLOCK, 0, NULL);
			break;
		case 1:
			xs_suspend(fd, XSCHED_MODE_DRAIN, 0, 0, NULL);
			break;
		default:
			break;
		}
		xs_sleep_ns(xs_rand_range(&rng, 0, 3 * XS_MS));
		/* the others may still use the old number; EBADF is fine */
		atomic_store(&a->qfd, -1);
		close(fd);
		fd = register_retry(w->feed->cfd, w->feed->sfd, w->feed->id);
		if (fd < 0) {
			verdict_bad(&a->v, "re-register: %s", xs_err(fd));
			break;
		}
		ret = xs_state(fd);
		if (ret != XSCHED_STATE_ACTIVE)
			verdict_bad(&a->v, "fresh registration is %s",
				    ret < 0 ? xs_err(ret) : xs_state_name(ret));
		atomic_store(&a->qfd, fd);
		atomic_fetch_add(&a->ops[OP_CHURN], 1);
		xs_sleep_ns(xs_rand_range(&rng, 0, 3 * XS_MS));
	}
	return NULL;
}

TEST_F_TIMEOUT(cc, closing_and_reregistering_while_hammering, 90)
{
	const int na[4] = { 1, 1, 1, 1 }, nb[4] = { 1, 1, 1, 0 };
	struct arena *b = calloc(1, sizeof(*b));
	struct worker w[16], wc;
	struct feed *fb = calloc(1, sizeof(*fb));
	pthread_t t[16], tc;
	uint32_t idb;
	int i, count, fd;

	/* queue A: the fixture's, hammered as before */
	count = spawn(_metadata, &self->arena, &self->feed, na, t, w);
	/* queue B: re-registered over and over while others poke at it */
	ASSERT_NE(NULL, b);
	ASSERT_NE(NULL, fb);
	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &idb, NULL));
	pthread_mutex_init(&b->v.lock, NULL);
	b->seed = self->arena.seed + 77;
	b->slots = self->slots;
	b->fd_may_vanish = true;
	fd = xs_register(self->cfd, self->sfd, idb, 0, NULL);
	ASSERT_LE(0, fd);
	atomic_store(&b->qfd, fd);
	ASSERT_EQ(0, feed_init(fb, self->cfd, self->sfd, idb, self->slots / 2 + 1, 20, XS_MS,
			       b->seed));
	count += spawn(_metadata, b, fb, nb, t + count, w + count);
	wc = (struct worker){ .a = b, .kind = OP_CHURN, .feed = fb };
	ASSERT_EQ(0, pthread_create(&tc, NULL, churn, &wc));

	xs_sleep_ns(HAMMER_NS);
	atomic_store(&self->arena.stop, true);
	atomic_store(&b->stop, true);
	pthread_join(tc, NULL);
	for (i = 0; i < count; i++)
		pthread_join(t[i], NULL);
	report_ops(&self->arena);
	report_ops(b);
	EXPECT_EQ(0, atomic_load(&self->arena.v.bad))
		TH_LOG("queue A: %d unexpected results, first: %s",
		       atomic_load(&self->arena.v.bad), self->arena.v.what);
	EXPECT_EQ(0, atomic_load(&b->v.bad))
		TH_LOG("queue B: %d unexpected results, first: %s",
		       atomic_load(&b->v.bad), b->v.what);
	EXPECT_LT(0, atomic_load(&b->ops[OP_CHURN]));
	check_queue(_metadata, self->qfd, &self->feed);

	/* B: closing its last registration resumes it; its work is exact */
	fd = atomic_load(&b->qfd);
	if (fd >= 0)
		close(fd);
	{
		long bad = feed_check(_metadata, fb);

		EXPECT_EQ(-1, bad) TH_LOG("queue B entry %ld differs from the CPU reference",
					  bad);
	}
	fd = xs_register(self->cfd, self->sfd, idb, 0, NULL);
	ASSERT_LE(0, fd) TH_LOG("register B at the end: %s", xs_err(fd));
	{
		struct xsched_queue_info info;

		ASSERT_EQ(0, xs_query(fd, &info));
		EXPECT_EQ(XSCHED_STATE_ACTIVE, info.state);
		EXPECT_EQ(feed_steps(fb), info.steps_done);
	}
	close(fd);
	if (!xs_debugfs_ready()) {
		EXPECT_EQ(0, xs_table_count_stopped());
	}
	free(fb);
	free(b);
}

/* One client per thread: its own queue, submit and wait in a loop. */
struct client_job {
	struct arena *a;
	int cfd, sfd;
	uint32_t id;
	int qfd;
	struct feed feed;
	long bad;
	int err;
};

static void *client_loop(void *arg)
{
	struct client_job *c = arg;
	struct feed *f = &c->feed;
	unsigned int i;
	int ret;

	for (i = 0; i < 16 && !atomic_load(&c->a->stop); i++) {
		ret = xs_submit(f->sfd, f->id, &f->pkt[i], 1, &f->last_seq);
		if (!ret)
			ret = xs_wait(f->sfd, f->id, f->last_seq, 30 * XS_SEC, NULL);
		if (ret) {
			c->err = ret;
			break;
		}
		f->submitted++;
	}
	return NULL;
}

/* Suspends and resumes every client's queue at random. */
static void *scheduler(void *arg)
{
	struct client_job *c = arg;	/* array of 4 */
	struct arena *a = c[0].a;
	uint64_t rng = a->seed ^ 0x5c4ed;
	int ret, k;

	while (!atomic_load(&a->stop)) {
		k = xs_rand(&rng) % 4;
		ret = xs_suspend(c[k].qfd, xs_rand(&rng) & 1 ? XSCHED_MODE_SAVE :
			      XSCHED_MODE_DRAIN, 0, 0, NULL);
		if (ret && ret != -EALREADY)
			verdict_bad(&a->v, "suspend of client %d: %s", k, xs_err(ret));
		xs_sleep_ns(xs_rand_range(&rng, 0, 2 * XS_MS));
		ret = xs_resume(c[k].qfd, NULL);
		if (ret && ret != -EALREADY)
			verdict_bad(&a->v, "resume of client %d: %s", k, xs_err(ret));
		atomic_fetch_add(&a->ops[OP_SUSPEND], 1);
		xs_sleep_ns(xs_rand_range(&rng, 0, XS_MS));
	}
	return NULL;
}

TEST_F_TIMEOUT(cc, clients_submit_and_wait_while_suspended_and_resumed, 90)
{
	struct client_job c[4];
	pthread_t t[4], ts;
	long bad;
	int k;

	for (k = 0; k < 4; k++) {
		c[k] = (struct client_job){ .a = &self->arena, .bad = -1 };
		ASSERT_EQ(0, xs_client_open(&c[k].cfd, NULL));
		ASSERT_EQ(0, xs_sim_open(&c[k].sfd, NULL));
		ASSERT_EQ(0, xs_queue_create(c[k].sfd, 4, &c[k].id, NULL));
		c[k].qfd = xs_register(c[k].cfd, c[k].sfd, c[k].id, 0, NULL);
		ASSERT_LE(0, c[k].qfd);
		ASSERT_EQ(0, feed_init(&c[k].feed, c[k].cfd, c[k].sfd, c[k].id, 3, 10, XS_MS,
				       self->arena.seed + 1000 * k));
	}
	ASSERT_EQ(0, pthread_create(&ts, NULL, scheduler, c));
	for (k = 0; k < 4; k++) {
		ASSERT_EQ(0, pthread_create(&t[k], NULL, client_loop, &c[k]));
	}
	for (k = 0; k < 4; k++)
		pthread_join(t[k], NULL);
	atomic_store(&self->arena.stop, true);
	pthread_join(ts, NULL);
	ksft_print_msg("%lu suspend/resume pairs across 4 clients\n",
		       atomic_load(&self->arena.ops[OP_SUSPEND]));
	EXPECT_EQ(0, atomic_load(&self->arena.v.bad))
		TH_LOG("%d unexpected results, first: %s",
		       atomic_load(&self->arena.v.bad), self->arena.v.what);
	for (k = 0; k < 4; k++) {
		EXPECT_EQ(0, c[k].err) TH_LOG("client %d: %s", k, xs_err(c[k].err));
		EXPECT_EQ(16, c[k].feed.submitted);
		EXPECT_EQ(XSCHED_STATE_ACTIVE, settle(c[k].qfd));
		bad = feed_check(_metadata, &c[k].feed);
		EXPECT_EQ(-1, bad) TH_LOG("client %d entry %ld differs", k, bad);
		close(c[k].qfd);
		close(c[k].sfd);
		close(c[k].cfd);
	}
}

TEST_HARNESS_MAIN
