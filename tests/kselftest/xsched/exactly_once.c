// SPDX-License-Identifier: GPL-2.0
/*
 * exactly_once: kernels suspended and resumed many times at random points,
 * in both modes, still produce exactly the CPU reference, and the queue's
 * steps_done equals packets x grid x steps: no step is lost or run twice.
 * The kernels are MARK kernels, so the proof does not rest on the module's
 * own count: each workgroup's marks in device memory say how often each of
 * its steps ran (a re-run from step zero recomputes the same result but not
 * the same marks), checked at every stop against steps_done and at the end
 * against the CPU reference.
 * The RNG seed is printed; XSCHED_SEED=<seed> repeats a run.
 */
#include "xsched_test.h"

#define MAX_PACKETS	160

/* A set of packets with their buffers and CPU reference. */
struct job {
	unsigned int n;
	struct xsched_sim_packet pkt[MAX_PACKETS];
	uint64_t *out[MAX_PACKETS];	/* where packet i's dst is mapped */
	uint64_t *ref[MAX_PACKETS];
	uint64_t steps_total;
	uint64_t last_seq;
};

/* How suspends are chosen. */
struct policy {
	uint32_t mode;			/* DRAIN, SAVE, or 0 for random */
	bool nonblock;			/* sometimes NONBLOCK + poll(POLLPRI) */
	bool save_grace;		/* sometimes a small SAVE grace period */
	bool cancel;			/* NONBLOCK then resume at once */
	uint64_t gap_max_ns;		/* running time between suspends */
	uint64_t hold_max_ns;		/* time held suspended */
	unsigned int max_suspends;
};

FIXTURE(eo) {
	int cfd;
	struct xsched_version ver;
	int sfd;
	struct xsched_sim_info sim;
	unsigned int slots;
	uint32_t id;
	uint32_t uid;
	int qfd;
	uint64_t rng;
	struct xs_buf bufs[8];
	unsigned int nbufs;
	struct job job;
};

FIXTURE_SETUP(eo)
{
	XS_CLIENT_OPEN_OR_SKIP(self->cfd, self->ver);
	XS_SIM_OPEN_OR_SKIP(self->sfd, self->sim);
	self->slots = xs_slots(&self->sim);
	ASSERT_LT(0, self->slots);
	ASSERT_EQ(0, xs_queue_create(self->sfd, 16, &self->id, NULL));
	self->qfd = xs_register(self->cfd, self->sfd, self->id, 0, &self->uid);
	ASSERT_LE(0, self->qfd) TH_LOG("register: %s", xs_err(self->qfd));
	self->rng = xs_seed(_metadata->name);
}

FIXTURE_TEARDOWN(eo)
{
	unsigned int i;

	for (i = 0; i < self->job.n; i++)
		free(self->job.ref[i]);
	if (self->qfd >= 0)
		close(self->qfd);
	if (self->cfd >= 0)
		close(self->cfd);
	/* 0 if the client was missing: setup skipped before the sim */
	if (self->sfd > 0)
		close(self->sfd);
}

/* A mapped buffer for @entries u64 words. */
static struct xs_buf *new_buf(struct __test_metadata *_metadata,
			      FIXTURE_DATA(eo) *self, size_t entries)
{
	struct xs_buf *b;

	ASSERT_GT(8, self->nbufs);
	b = &self->bufs[self->nbufs++];
	ASSERT_EQ(0, xs_buf_alloc(self->sfd, entries * sizeof(uint64_t), b));
	return b;
}

/*
 * @n packets of @grid x @steps x @step_ns; each writes its own buffer, and
 * with @chain packet i reads packet i-1's output as its src.
 */
static void job_prepare(struct __test_metadata *_metadata,
			FIXTURE_DATA(eo) *self, unsigned int n, uint32_t grid,
			uint32_t steps, uint64_t step_ns, bool chain)
{
	struct job *job = &self->job;
	struct xs_buf *prev = NULL, *b;
	unsigned int i;

	ASSERT_GE(8, n);
	job->n = n;
	for (i = 0; i < n; i++) {
		b = new_buf(_metadata, self, 2 * (size_t)grid);
		job->pkt[i] = xs_mark_packet(grid, steps, step_ns,
					     xs_rand(&self->rng), b->gpu_addr,
					     chain && prev ? prev->gpu_addr : 0);
		job->out[i] = b->map;
		xs_marks_clear(&job->pkt[i], job->out[i]);
		job->ref[i] = calloc(grid, sizeof(uint64_t));
		ASSERT_NE(NULL, job->ref[i]);
		xs_ref_packet(&job->pkt[i], chain && i ? job->ref[i - 1] : NULL,
			      job->ref[i]);
		job->steps_total += (uint64_t)grid * steps;
		prev = b;
	}
}

/*
 * While the queue is stopped: the marks in memory count the steps the module
 * says ran, and after a DRAIN no workgroup is halfway (drain finishes every
 * started one, saved ones included).
 */
static void check_stopped_marks(struct __test_metadata *_metadata,
				FIXTURE_DATA(eo) *self, uint32_t mode,
				const struct xsched_queue_info *info)
{
	struct job *job = &self->job;
	uint64_t marks = 0;
	unsigned int i;
	uint32_t wg;

	for (i = 0; i < job->n; i++) {
		const struct xsched_sim_packet *p = &job->pkt[i];

		marks += xs_marks_sum(p, job->out[i]);
		if (mode != XSCHED_MODE_DRAIN)
			continue;
		for (wg = 0; wg < p->grid; wg++) {
			uint64_t m = job->out[i][p->grid + wg];

			ASSERT_TRUE(m == 0 || m == p->steps)
				TH_LOG("DRAIN-suspended, packet %u workgroup %u has %" PRIu64
				       " of %u steps marked", i, wg, m, p->steps);
		}
	}
	ASSERT_EQ(info->steps_done, marks)
		TH_LOG("stopped: the marks in memory count %" PRIu64 " steps, the module %llu",
		       marks, (unsigned long long)info->steps_done);
}

static uint32_t pick_mode(FIXTURE_DATA(eo) *self, const struct policy *pol)
{
	if (pol->mode)
		return pol->mode;
	return xs_rand(&self->rng) & 1 ? XSCHED_MODE_SAVE : XSCHED_MODE_DRAIN;
}

/*
 * Submits the job, then suspends and resumes the queue at random points
 * until it is done or the policy's budget is spent; returns the number of
 * completed suspend/resume cycles.
 */
static unsigned int run_with_suspends(struct __test_metadata *_metadata,
				      FIXTURE_DATA(eo) *self,
				      const struct policy *pol)
{
	struct job *job = &self->job;
	struct xsched_queue_info info;
	unsigned int cycles = 0, cancels = 0, saves = 0, drains = 0;
	uint64_t steps_at_stop;
	int ret, ev;

	ASSERT_EQ(0, xs_submit_retry(self->sfd, self->id, job->pkt, job->n,
				     &job->last_seq, 10 * XS_SEC));

	while (cycles + cancels < pol->max_suspends &&
	       xs_wait(self->sfd, self->id, job->last_seq, 0, NULL) == -ETIMEDOUT) {
		uint32_t mode = pick_mode(self, pol);
		bool nonblock = pol->nonblock && (xs_rand(&self->rng) & 1);
		uint64_t grace = 0;

		if (mode == XSCHED_MODE_SAVE && pol->save_grace &&
		    !(xs_rand(&self->rng) % 3))
			grace = xs_rand_range(&self->rng, 1, 2 * XS_MS);
		xs_sleep_ns(xs_rand_range(&self->rng, 0, pol->gap_max_ns));

		if (pol->cancel && (xs_rand(&self->rng) & 1)) {
			/* suspend and take it back before (or after) it lands */
			ret = xs_suspend(self->qfd, mode, XSCHED_SUSPEND_NONBLOCK,
					 grace, NULL);
			ASSERT_EQ(0, ret) TH_LOG("NONBLOCK %s: %s",
						 xs_mode_name(mode), xs_err(ret));
			ret = xs_resume(self->qfd, NULL);
			ASSERT_EQ(0, ret) TH_LOG("resume of a NONBLOCK %s: %s",
						 xs_mode_name(mode), xs_err(ret));
			ASSERT_EQ(XSCHED_STATE_ACTIVE, xs_state(self->qfd));
			cancels++;
			continue;
		}

		ret = xs_suspend(self->qfd, mode,
				 nonblock ? XSCHED_SUSPEND_NONBLOCK : 0, grace,
				 NULL);
		ASSERT_EQ(0, ret) TH_LOG("suspend #%u %s%s grace %" PRIu64 ": %s",
					 cycles, xs_mode_name(mode),
					 nonblock ? " NONBLOCK" : "", grace,
					 xs_err(ret));
		if (nonblock) {
			ev = xs_poll(self->qfd, POLLPRI, 30000);
			ASSERT_EQ(POLLPRI, ev & POLLPRI)
				TH_LOG("no POLLPRI after NONBLOCK %s (revents %#x)",
				       xs_mode_name(mode), ev);
		}
		ASSERT_EQ(0, xs_query(self->qfd, &info));
		ASSERT_EQ(XSCHED_STATE_SUSPENDED, info.state)
			TH_LOG("after suspend #%u: %s", cycles,
			       xs_state_name(info.state));
		ASSERT_EQ(mode, info.last_mode);
		if (mode == XSCHED_MODE_DRAIN) {
			ASSERT_EQ(0, info.saved_waves)
				TH_LOG("DRAIN left %u waves in the save area",
				       info.saved_waves);
		}
		steps_at_stop = info.steps_done;
		check_stopped_marks(_metadata, self, mode, &info);
		xs_sleep_ns(xs_rand_range(&self->rng, 0, pol->hold_max_ns));
		ASSERT_EQ(0, xs_query(self->qfd, &info));
		ASSERT_EQ(steps_at_stop, info.steps_done)
			TH_LOG("the queue ran while %s-suspended",
			       xs_mode_name(mode));
		ASSERT_EQ(XSCHED_STATE_SUSPENDED, info.state);

		ret = xs_resume(self->qfd, NULL);
		ASSERT_EQ(0, ret) TH_LOG("resume #%u: %s", cycles, xs_err(ret));
		cycles++;
		if (mode == XSCHED_MODE_SAVE)
			saves++;
		else
			drains++;
	}
	ksft_print_msg("%s: %u suspend/resume cycles (%u SAVE, %u DRAIN), %u cancelled\n",
		       _metadata->name, cycles, saves, drains, cancels);
	return cycles;
}

/* Waits for the job and checks output, progress and (when exact) counters. */
static void check_job(struct __test_metadata *_metadata,
		      FIXTURE_DATA(eo) *self, unsigned int cycles,
		      bool exact_counters)
{
	struct job *job = &self->job;
	struct xsched_queue_info info;
	uint64_t done = 0;
	unsigned int i;
	long bad;
	int ret;

	ret = xs_wait(self->sfd, self->id, job->last_seq, 60 * XS_SEC, &done);
	ASSERT_EQ(0, ret) TH_LOG("final wait: %s, completed %" PRIu64 " of %" PRIu64,
				 xs_err(ret), done, job->last_seq);
	EXPECT_EQ(0, xs_wait_no_saved_waves(self->qfd, 10 * XS_SEC));
	ASSERT_EQ(0, xs_query(self->qfd, &info));
	EXPECT_EQ(XSCHED_STATE_ACTIVE, info.state);
	EXPECT_EQ(job->last_seq, info.rptr);
	EXPECT_EQ(job->last_seq, info.wptr);
	EXPECT_EQ(job->steps_total, info.steps_done)
		TH_LOG("steps run %llu, expected exactly %" PRIu64,
		       (unsigned long long)info.steps_done, job->steps_total);
	EXPECT_EQ(0, info.faults);
	EXPECT_EQ(0, info.last_error);
	if (exact_counters) {
		EXPECT_EQ(cycles, info.suspends);
		EXPECT_EQ(cycles, info.resumes);
	}
	for (i = 0; i < job->n; i++) {
		bad = xs_first_mismatch(job->out[i], job->ref[i], job->pkt[i].grid);
		EXPECT_EQ(-1, bad) TH_LOG("packet %u workgroup %ld: got %#" PRIx64
					  ", expected %#" PRIx64, i, bad,
					  bad < 0 ? 0 : job->out[i][bad],
					  bad < 0 ? 0 : job->ref[i][bad]);
		XS_EXPECT_MARKS(&job->pkt[i], job->out[i]);
	}
}

TEST_F_TIMEOUT(eo, save_suspends_at_random_points_keep_output_exact, 120)
{
	const struct policy pol = {
		.mode = XSCHED_MODE_SAVE,
		.gap_max_ns = 8 * XS_MS,
		.hold_max_ns = 3 * XS_MS,
		.max_suspends = 60,
	};
	unsigned int cycles;

	job_prepare(_metadata, self, 6, 2 * self->slots + 3, 24, XS_MS, false);
	cycles = run_with_suspends(_metadata, self, &pol);
	EXPECT_LT(0, cycles) TH_LOG("the job ended before the first suspend");
	check_job(_metadata, self, cycles, true);
}

TEST_F_TIMEOUT(eo, drain_suspends_at_random_points_keep_output_exact, 120)
{
	const struct policy pol = {
		.mode = XSCHED_MODE_DRAIN,
		.gap_max_ns = 8 * XS_MS,
		.hold_max_ns = 3 * XS_MS,
		.max_suspends = 60,
	};
	unsigned int cycles;

	job_prepare(_metadata, self, 6, 2 * self->slots + 3, 24, XS_MS, false);
	cycles = run_with_suspends(_metadata, self, &pol);
	EXPECT_LT(0, cycles);
	check_job(_metadata, self, cycles, true);
}

TEST_F_TIMEOUT(eo, mixed_modes_and_nonblock_suspends_keep_output_exact, 120)
{
	const struct policy pol = {
		.nonblock = true,
		.save_grace = true,
		.gap_max_ns = 8 * XS_MS,
		.hold_max_ns = 3 * XS_MS,
		.max_suspends = 60,
	};
	unsigned int cycles;

	job_prepare(_metadata, self, 6, 2 * self->slots + 3, 24, XS_MS, false);
	cycles = run_with_suspends(_metadata, self, &pol);
	EXPECT_LT(0, cycles);
	check_job(_metadata, self, cycles, true);
}

TEST_F_TIMEOUT(eo, chained_packets_read_previous_output_across_suspends, 120)
{
	const struct policy pol = {
		.nonblock = true,
		.gap_max_ns = 6 * XS_MS,
		.hold_max_ns = 3 * XS_MS,
		.max_suspends = 50,
	};
	unsigned int cycles;

	/* packet i+1 reads packet i's dst: a lost or repeated step propagates */
	job_prepare(_metadata, self, 6, self->slots + 5, 20, XS_MS, true);
	cycles = run_with_suspends(_metadata, self, &pol);
	EXPECT_LT(0, cycles);
	check_job(_metadata, self, cycles, true);
}

TEST_F_TIMEOUT(eo, cancelled_suspends_lose_no_work, 120)
{
	const struct policy pol = {
		.cancel = true,
		.gap_max_ns = 5 * XS_MS,
		.hold_max_ns = 2 * XS_MS,
		.max_suspends = 60,
	};
	unsigned int cycles;

	job_prepare(_metadata, self, 4, 2 * self->slots + 1, 24, XS_MS, true);
	cycles = run_with_suspends(_metadata, self, &pol);
	/* a cancelled suspend may or may not count: only the work is exact */
	check_job(_metadata, self, cycles, false);
}

TEST_F_TIMEOUT(eo, many_small_packets_wrap_the_ring_across_suspends, 120)
{
	struct job *job = &self->job;
	struct xsched_queue_info info;
	unsigned int cycles = 0, i, n = 0;
	uint64_t off = 0, total = 0;
	struct xs_buf *b;
	int ret;

	/* 150 packets through a 16-slot ring, each writing its own slice */
	job->n = 150;
	for (i = 0; i < job->n; i++)
		total += 2 * (1 + (i * 7) % (self->slots + 2));
	b = new_buf(_metadata, self, total);
	for (i = 0; i < job->n; i++) {
		uint32_t grid = 1 + (i * 7) % (self->slots + 2);
		uint32_t steps = 1 + xs_rand(&self->rng) % 6;
		uint64_t step_ns = xs_rand(&self->rng) % (300 * XS_US);

		job->pkt[i] = xs_mark_packet(grid, steps, step_ns, xs_rand(&self->rng),
					     b->gpu_addr + off * 8, 0);
		job->out[i] = b->map + off;
		xs_marks_clear(&job->pkt[i], job->out[i]);
		job->ref[i] = calloc(grid, sizeof(uint64_t));
		ASSERT_NE(NULL, job->ref[i]);
		xs_ref_packet(&job->pkt[i], NULL, job->ref[i]);
		job->steps_total += (uint64_t)grid * steps;
		off += 2 * grid;
	}
	while (n < job->n) {
		uint32_t batch = 1 + xs_rand(&self->rng) % 4;
		uint32_t mode;

		if (batch > job->n - n)
			batch = job->n - n;
		ret = xs_submit_retry(self->sfd, self->id, &job->pkt[n], batch,
				      &job->last_seq, 20 * XS_SEC);
		ASSERT_EQ(0, ret) TH_LOG("submit of packets %u..%u: %s", n,
					 n + batch - 1, xs_err(ret));
		n += batch;
		ASSERT_EQ(n, job->last_seq);
		if (xs_rand(&self->rng) % 3)
			continue;
		mode = xs_rand(&self->rng) & 1 ? XSCHED_MODE_SAVE : XSCHED_MODE_DRAIN;
		ret = xs_suspend(self->qfd, mode, 0, 0, NULL);
		ASSERT_EQ(0, ret) TH_LOG("%s: %s", xs_mode_name(mode), xs_err(ret));
		ASSERT_EQ(0, xs_query(self->qfd, &info));
		ASSERT_EQ(XSCHED_STATE_SUSPENDED, info.state);
		ASSERT_LE(info.rptr, info.wptr);
		ASSERT_EQ(n, info.wptr);
		check_stopped_marks(_metadata, self, mode, &info);
		xs_sleep_ns(xs_rand_range(&self->rng, 0, XS_MS));
		ASSERT_EQ(0, xs_resume(self->qfd, NULL));
		cycles++;
	}
	ksft_print_msg("%u packets in a ring of 16, %u suspend/resume cycles\n",
		       job->n, cycles);
	check_job(_metadata, self, cycles, true);
}

TEST_HARNESS_MAIN
