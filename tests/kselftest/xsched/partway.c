// SPDX-License-Identifier: GPL-2.0
/*
 * partway: what a suspend leaves behind in the middle of one long kernel.
 * SAVE stops waves mid-kernel (partial progress, waves in the save area) and
 * resume continues from there; DRAIN lets started workgroups finish and
 * dispatches no new ones; grace periods behave as the uAPI says.  The
 * kernels are MARK kernels: at every stop the step marks in device memory
 * must agree with the module's steps_done (and show whole workgroups only
 * after a DRAIN), and at the end each workgroup must have run each of its
 * steps exactly once, which a re-run from step zero cannot fake.
 */
#include "xsched_test.h"

FIXTURE(pw) {
	int cfd;
	struct xsched_version ver;
	int sfd;
	struct xsched_sim_info sim;
	unsigned int slots;
	uint32_t id;
	uint32_t uid;
	int qfd;
	uint64_t save_area_size;
	struct xs_buf dst;
	struct xsched_sim_packet pkt;
	uint64_t seq;
};

FIXTURE_SETUP(pw)
{
	XS_CLIENT_OPEN_OR_SKIP(self->cfd, self->ver);
	XS_SIM_OPEN_OR_SKIP(self->sfd, self->sim);
	self->slots = xs_slots(&self->sim);
	ASSERT_LT(0, self->slots);
	ASSERT_EQ(0, xs_buf_alloc(self->sfd, 8 * self->slots * sizeof(uint64_t),
				  &self->dst));
	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &self->id,
				     &self->save_area_size));
	self->qfd = xs_register(self->cfd, self->sfd, self->id, 0, &self->uid);
	ASSERT_LE(0, self->qfd) TH_LOG("register: %s", xs_err(self->qfd));
}

FIXTURE_TEARDOWN(pw)
{
	if (self->qfd >= 0)
		close(self->qfd);
	if (self->cfd >= 0)
		close(self->cfd);
	/* 0 if the client was missing: setup skipped before the sim */
	if (self->sfd > 0)
		close(self->sfd);
}

static uint64_t total_steps(FIXTURE_DATA(pw) *self)
{
	return (uint64_t)self->pkt.grid * self->pkt.steps;
}

/* Submits one kernel and waits until at least @min_steps of it ran. */
static void start_kernel(struct __test_metadata *_metadata,
			 FIXTURE_DATA(pw) *self, uint32_t grid, uint32_t steps,
			 uint64_t step_ns, uint64_t min_steps)
{
	int ret;

	ASSERT_GE(8 * self->slots, 2 * grid);
	self->pkt = xs_mark_packet(grid, steps, step_ns, 0xfeed0000 + grid * 31 + steps,
				   self->dst.gpu_addr, 0);
	xs_marks_clear(&self->pkt, self->dst.map);
	ASSERT_EQ(0, xs_submit(self->sfd, self->id, &self->pkt, 1, &self->seq));
	ret = xs_wait_steps(self->qfd, min_steps, 20 * XS_SEC);
	ASSERT_EQ(0, ret) TH_LOG("kernel did not start: %s", xs_err(ret));
}

/* Waits for the kernel; output and steps_done must be exact. */
static void finish_kernel(struct __test_metadata *_metadata,
			  FIXTURE_DATA(pw) *self)
{
	struct xsched_queue_info info;
	long bad;
	int ret;

	ret = xs_wait(self->sfd, self->id, self->seq, 60 * XS_SEC, NULL);
	ASSERT_EQ(0, ret) TH_LOG("wait: %s", xs_err(ret));
	EXPECT_EQ(0, xs_wait_no_saved_waves(self->qfd, 10 * XS_SEC))
		TH_LOG("save area still holds waves after the kernel finished");
	ASSERT_EQ(0, xs_query(self->qfd, &info));
	EXPECT_EQ(total_steps(self), info.steps_done)
		TH_LOG("steps run %llu, expected exactly %" PRIu64
		       " (re-run or lost steps)",
		       (unsigned long long)info.steps_done, total_steps(self));
	EXPECT_EQ(1, info.rptr);
	bad = xs_packet_mismatch(&self->pkt, NULL, self->dst.map);
	EXPECT_EQ(-1, bad) TH_LOG("workgroup %ld differs from the CPU reference", bad);
	XS_EXPECT_MARKS(&self->pkt, self->dst.map);
}

/*
 * The queue is stopped: the marks in memory count the steps the module says
 * ran; none of them completed a workgroup when @none_done (a SAVE in the
 * middle of long workgroups), and after a DRAIN every workgroup is either
 * untouched or complete.  Returns the workgroups the marks show partly run.
 */
static unsigned int check_stopped_marks(struct __test_metadata *_metadata,
					FIXTURE_DATA(pw) *self,
					const struct xsched_queue_info *info,
					uint32_t mode, bool none_done)
{
	const uint64_t *marks = self->dst.map + self->pkt.grid;
	unsigned int partial = 0;
	uint32_t wg;

	EXPECT_EQ(info->steps_done, xs_marks_sum(&self->pkt, self->dst.map))
		TH_LOG("the marks in memory count %" PRIu64 " steps, the module %llu",
		       xs_marks_sum(&self->pkt, self->dst.map),
		       (unsigned long long)info->steps_done);
	for (wg = 0; wg < self->pkt.grid; wg++) {
		if (marks[wg] && marks[wg] < self->pkt.steps)
			partial++;
		EXPECT_GE(self->pkt.steps, marks[wg])
			TH_LOG("workgroup %u: %" PRIu64 " of %u steps marked",
			       wg, marks[wg], self->pkt.steps);
		if (none_done)
			EXPECT_GT(self->pkt.steps, marks[wg])
				TH_LOG("workgroup %u finished before the stop", wg);
	}
	if (mode == XSCHED_MODE_DRAIN)
		EXPECT_EQ(0, partial)
			TH_LOG("%u workgroups stopped halfway by a DRAIN", partial);
	return partial;
}

TEST_F_TIMEOUT(pw, save_suspend_reports_partial_progress, 60)
{
	struct xsched_queue_info info, later;
	struct xsched_suspend out;
	uint64_t total;
	int ret;

	/* every workgroup resident at once, 100 steps of 5 ms each */
	start_kernel(_metadata, self, self->slots, 100, 5 * XS_MS,
		     10 * self->slots);
	total = total_steps(self);
	ret = xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, &out);
	ASSERT_EQ(0, ret) TH_LOG("SAVE: %s", xs_err(ret));
	ASSERT_EQ(0, xs_query(self->qfd, &info));
	ksft_print_msg("SAVE at %llu/%" PRIu64 " steps: %u waves saved, %llu bytes, latency %llu us\n",
		       (unsigned long long)info.steps_done, total,
		       info.saved_waves, (unsigned long long)out.saved_bytes,
		       (unsigned long long)out.latency_ns / 1000);
	EXPECT_EQ(XSCHED_STATE_SUSPENDED, info.state);
	EXPECT_EQ(XSCHED_MODE_SAVE, info.last_mode);
	EXPECT_LT(0, info.steps_done);
	EXPECT_GT(total, info.steps_done)
		TH_LOG("kernel already finished: no partial progress to see");
	EXPECT_LT(0, info.saved_waves);
	EXPECT_GE(self->pkt.grid, info.saved_waves);
	EXPECT_LT(0, out.saved_bytes);
	/* each trapped wave wrote one record of sim_wave_state_bytes */
	EXPECT_EQ((uint64_t)info.saved_waves * self->sim.wave_state_bytes,
		  out.saved_bytes);
	EXPECT_EQ(out.saved_bytes, info.saved_bytes);
	/* the save area holds a full GPU's worth of waves */
	EXPECT_LE((uint64_t)self->slots * self->sim.wave_state_bytes,
		  self->save_area_size)
		TH_LOG("%u slots of %u bytes do not fit a save area of %" PRIu64,
		       self->slots, self->sim.wave_state_bytes,
		       self->save_area_size);
	EXPECT_EQ(self->save_area_size, info.save_area_size);
	EXPECT_EQ(0, info.rptr);
	EXPECT_EQ(1, info.wptr);
	/* each saved wave is a workgroup the memory shows halfway */
	EXPECT_EQ(info.saved_waves,
		  check_stopped_marks(_metadata, self, &info, XSCHED_MODE_SAVE, true));

	/* nothing moves while suspended */
	xs_sleep_ns(50 * XS_MS);
	ASSERT_EQ(0, xs_query(self->qfd, &later));
	EXPECT_EQ(info.steps_done, later.steps_done);
	EXPECT_EQ(info.saved_waves, later.saved_waves);
	check_stopped_marks(_metadata, self, &later, XSCHED_MODE_SAVE, true);

	ASSERT_EQ(0, xs_resume(self->qfd, NULL));
	finish_kernel(_metadata, self);
}

TEST_F_TIMEOUT(pw, save_resume_continues_without_rerun, 60)
{
	struct xsched_queue_info first, second;
	uint64_t total;

	start_kernel(_metadata, self, self->slots, 100, 5 * XS_MS,
		     5 * self->slots);
	total = total_steps(self);
	ASSERT_EQ(0, xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	ASSERT_EQ(0, xs_query(self->qfd, &first));
	check_stopped_marks(_metadata, self, &first, XSCHED_MODE_SAVE, true);
	ASSERT_EQ(0, xs_resume(self->qfd, NULL));
	/* the restored waves go on: progress grows past the first stop */
	ASSERT_EQ(0, xs_wait_steps(self->qfd, first.steps_done + 5 * self->slots,
				   20 * XS_SEC));
	ASSERT_EQ(0, xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	ASSERT_EQ(0, xs_query(self->qfd, &second));
	check_stopped_marks(_metadata, self, &second, XSCHED_MODE_SAVE, true);
	ksft_print_msg("stopped at %llu then %llu of %" PRIu64 " steps\n",
		       (unsigned long long)first.steps_done,
		       (unsigned long long)second.steps_done, total);
	EXPECT_LT(first.steps_done, second.steps_done);
	EXPECT_GT(total, second.steps_done);
	EXPECT_LT(0, second.saved_waves);
	EXPECT_EQ(2, second.suspends);
	EXPECT_EQ(1, second.resumes);
	EXPECT_LT(first.saved_bytes, second.saved_bytes)
		TH_LOG("saved_bytes counts every save");
	ASSERT_EQ(0, xs_resume(self->qfd, NULL));
	finish_kernel(_metadata, self);
}

TEST_F_TIMEOUT(pw, drain_lets_started_workgroups_finish, 60)
{
	struct xsched_queue_info info;
	struct xsched_suspend out;
	int ret;

	/* all workgroups resident, 40 steps of 5 ms */
	start_kernel(_metadata, self, self->slots, 40, 5 * XS_MS,
		     2 * self->slots);
	ret = xs_suspend(self->qfd, XSCHED_MODE_DRAIN, 0, 0, &out);
	ASSERT_EQ(0, ret) TH_LOG("DRAIN: %s", xs_err(ret));
	ASSERT_EQ(0, xs_query(self->qfd, &info));
	ksft_print_msg("DRAIN: %llu/%" PRIu64 " steps, latency %llu us\n",
		       (unsigned long long)info.steps_done, total_steps(self),
		       (unsigned long long)out.latency_ns / 1000);
	EXPECT_EQ(XSCHED_STATE_SUSPENDED, info.state);
	EXPECT_EQ(XSCHED_MODE_DRAIN, info.last_mode);
	EXPECT_EQ(0, out.saved_bytes);
	EXPECT_EQ(0, info.saved_bytes);
	EXPECT_EQ(0, info.saved_waves);
	EXPECT_LT(0, info.steps_done);
	/* only whole workgroups ran: none was stopped in the middle */
	EXPECT_EQ(0, info.steps_done % self->pkt.steps)
		TH_LOG("%llu steps is not a whole number of %u-step workgroups",
		       (unsigned long long)info.steps_done, self->pkt.steps);
	check_stopped_marks(_metadata, self, &info, XSCHED_MODE_DRAIN, false);
	ASSERT_EQ(0, xs_resume(self->qfd, NULL));
	finish_kernel(_metadata, self);
}

TEST_F_TIMEOUT(pw, drain_dispatches_no_new_workgroups, 60)
{
	struct xsched_queue_info info, later;

	/* four rounds of workgroups, 20 steps of 5 ms each */
	start_kernel(_metadata, self, 4 * self->slots, 20, 5 * XS_MS, 1);
	ASSERT_EQ(0, xs_suspend(self->qfd, XSCHED_MODE_DRAIN, 0, 0, NULL));
	ASSERT_EQ(0, xs_query(self->qfd, &info));
	ksft_print_msg("DRAIN stopped after %llu workgroups of %u\n",
		       (unsigned long long)info.steps_done / self->pkt.steps,
		       self->pkt.grid);
	EXPECT_EQ(0, info.steps_done % self->pkt.steps);
	EXPECT_GT(total_steps(self), info.steps_done);
	EXPECT_EQ(0, info.saved_waves);
	check_stopped_marks(_metadata, self, &info, XSCHED_MODE_DRAIN, false);
	xs_sleep_ns(60 * XS_MS);
	ASSERT_EQ(0, xs_query(self->qfd, &later));
	EXPECT_EQ(info.steps_done, later.steps_done)
		TH_LOG("workgroups dispatched while DRAIN-suspended");
	check_stopped_marks(_metadata, self, &later, XSCHED_MODE_DRAIN, false);
	EXPECT_EQ(0, later.rptr);
	ASSERT_EQ(0, xs_resume(self->qfd, NULL));
	finish_kernel(_metadata, self);
}

TEST_F_TIMEOUT(pw, drain_grace_timeout_restores_active, 60)
{
	struct xsched_queue_info info, later;
	int ret;

	/* one workgroup of 60 x 10 ms cannot drain within 20 ms */
	start_kernel(_metadata, self, 1, 60, 10 * XS_MS, 1);
	ret = xs_suspend(self->qfd, XSCHED_MODE_DRAIN, 0, 20 * XS_MS, NULL);
	EXPECT_EQ(-ETIMEDOUT, ret) TH_LOG("DRAIN with 20 ms grace: %s", xs_err(ret));
	ASSERT_EQ(0, xs_query(self->qfd, &info));
	EXPECT_EQ(XSCHED_STATE_ACTIVE, info.state)
		TH_LOG("state %s after a timed-out DRAIN", xs_state_name(info.state));
	EXPECT_EQ(0, info.suspends);
	EXPECT_EQ(-EALREADY, xs_resume(self->qfd, NULL));
	/* and it keeps running */
	xs_sleep_ns(50 * XS_MS);
	ASSERT_EQ(0, xs_query(self->qfd, &later));
	EXPECT_EQ(XSCHED_STATE_ACTIVE, later.state);
	EXPECT_TRUE(later.steps_done > info.steps_done || later.rptr == 1)
		TH_LOG("no progress after the timed-out DRAIN (%llu steps)",
		       (unsigned long long)later.steps_done);
	finish_kernel(_metadata, self);
}

TEST_F_TIMEOUT(pw, save_grace_lets_short_waves_finish, 60)
{
	struct xsched_queue_info info;
	struct xsched_suspend out;
	int ret;

	/* resident workgroups of 10 x 5 ms finish well within a 5 s grace */
	start_kernel(_metadata, self, self->slots, 10, 5 * XS_MS, 1);
	ret = xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 5 * XS_SEC, &out);
	ASSERT_EQ(0, ret) TH_LOG("SAVE with grace: %s", xs_err(ret));
	ASSERT_EQ(0, xs_query(self->qfd, &info));
	EXPECT_EQ(XSCHED_STATE_SUSPENDED, info.state);
	EXPECT_EQ(0, info.saved_waves);
	EXPECT_EQ(0, out.saved_bytes);
	EXPECT_EQ(0, info.steps_done % self->pkt.steps);
	/* every wave finished within the grace: whole workgroups, as a drain */
	check_stopped_marks(_metadata, self, &info, XSCHED_MODE_DRAIN, false);
	EXPECT_GT(5 * XS_SEC, out.latency_ns);
	ASSERT_EQ(0, xs_resume(self->qfd, NULL));
	finish_kernel(_metadata, self);
}

TEST_F_TIMEOUT(pw, save_grace_then_traps_long_waves, 60)
{
	struct xsched_queue_info info;
	struct xsched_suspend out;
	int ret;

	/* one workgroup of 100 x 10 ms outlives a 30 ms grace */
	start_kernel(_metadata, self, 1, 100, 10 * XS_MS, 1);
	ret = xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 30 * XS_MS, &out);
	ASSERT_EQ(0, ret) TH_LOG("SAVE with grace: %s", xs_err(ret));
	ASSERT_EQ(0, xs_query(self->qfd, &info));
	EXPECT_EQ(XSCHED_STATE_SUSPENDED, info.state);
	EXPECT_EQ(1, info.saved_waves);
	EXPECT_LT(0, out.saved_bytes);
	EXPECT_LE(30 * XS_MS, out.latency_ns)
		TH_LOG("trapped before the grace period ended");
	EXPECT_GT(total_steps(self), info.steps_done);
	EXPECT_EQ(1, check_stopped_marks(_metadata, self, &info, XSCHED_MODE_SAVE, true));
	ASSERT_EQ(0, xs_resume(self->qfd, NULL));
	finish_kernel(_metadata, self);
}

TEST_F_TIMEOUT(pw, suspended_idle_queue_holds_new_work, 60)
{
	const uint32_t modes[] = { XSCHED_MODE_SAVE, XSCHED_MODE_DRAIN };
	struct xsched_queue_info info;
	uint64_t done_steps = 0;
	int i, ev;

	for (i = 0; i < 2; i++) {
		/* stop the queue first, then give it work */
		ASSERT_EQ(0, xs_suspend(self->qfd, modes[i], 0, 0, NULL));
		self->pkt = xs_mark_packet(self->slots, 4, XS_MS, 0x1d1e + i,
					   self->dst.gpu_addr, 0);
		xs_marks_clear(&self->pkt, self->dst.map);
		ASSERT_EQ(0, xs_submit(self->sfd, self->id, &self->pkt, 1, &self->seq));
		xs_sleep_ns(50 * XS_MS);
		ASSERT_EQ(0, xs_query(self->qfd, &info));
		EXPECT_EQ(XSCHED_STATE_SUSPENDED, info.state);
		EXPECT_EQ(done_steps, info.steps_done)
			TH_LOG("%s-suspended queue ran new work", xs_mode_name(modes[i]));
		EXPECT_EQ(self->seq - 1, info.rptr);
		EXPECT_EQ(self->seq, info.wptr);
		ev = xs_poll(self->qfd, POLLIN | POLLPRI, 0);
		EXPECT_EQ(POLLPRI, ev) TH_LOG("revents %#x", ev);
		ASSERT_EQ(0, xs_resume(self->qfd, NULL));
		done_steps += total_steps(self);
		ASSERT_EQ(0, xs_wait(self->sfd, self->id, self->seq, 30 * XS_SEC, NULL));
		EXPECT_EQ(-1, xs_packet_mismatch(&self->pkt, NULL, self->dst.map));
		XS_EXPECT_MARKS(&self->pkt, self->dst.map);
	}
	ASSERT_EQ(0, xs_query(self->qfd, &info));
	EXPECT_EQ(done_steps, info.steps_done);
}

TEST_F_TIMEOUT(pw, drain_with_longest_grace_completes, 60)
{
	struct xsched_queue_info info;
	int ret;

	/* a 60 s limit is not hit by 10 x 5 ms workgroups (nor overflows) */
	start_kernel(_metadata, self, self->slots, 10, 5 * XS_MS, 1);
	ret = xs_suspend(self->qfd, XSCHED_MODE_DRAIN, 0, 60 * XS_SEC, NULL);
	ASSERT_EQ(0, ret) TH_LOG("DRAIN with 60 s grace: %s", xs_err(ret));
	ASSERT_EQ(0, xs_query(self->qfd, &info));
	EXPECT_EQ(XSCHED_STATE_SUSPENDED, info.state);
	EXPECT_EQ(0, info.steps_done % self->pkt.steps);
	check_stopped_marks(_metadata, self, &info, XSCHED_MODE_DRAIN, false);
	ASSERT_EQ(0, xs_resume(self->qfd, NULL));
	ret = xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 60 * XS_SEC, NULL);
	ASSERT_EQ(0, ret) TH_LOG("SAVE with 60 s grace: %s", xs_err(ret));
	ASSERT_EQ(0, xs_resume(self->qfd, NULL));
	finish_kernel(_metadata, self);
}

/*
 * A DRAIN grace limit holds even when the queue has no wave on any CU: its
 * only started workgroup waits in the save area while another queue holds
 * every slot.  (The limit used to be noticed only by a CU running one of the
 * queue's waves, so it lasted as long as the other queue's workgroups.)
 */
TEST(drain_grace_holds_with_only_saved_waves)
{
	const uint64_t other_ns = 400 * 10 * XS_MS;	/* 4 s workgroups */
	struct xsched_version ver = { 0 };
	struct xsched_sim_info sim = { 0 };
	struct xsched_queue_info info;
	struct xsched_sim_packet pa, pb;
	uint32_t ida, idb;
	uint64_t dst, seq, t0, took;
	int cfd, sfd, qa, qb, ret;

	XS_CLIENT_OPEN_OR_SKIP(cfd, ver);
	XS_SIM_OPEN_OR_SKIP(sfd, sim);
	ASSERT_EQ(0, xs_mem_alloc(sfd, 8 * (xs_slots(&sim) + 1), &dst));
	ASSERT_EQ(0, xs_queue_create(sfd, 4, &ida, NULL));
	ASSERT_EQ(0, xs_queue_create(sfd, 4, &idb, NULL));
	qa = xs_register(cfd, sfd, ida, 0, NULL);
	ASSERT_LE(0, qa);
	qb = xs_register(cfd, sfd, idb, 0, NULL);
	ASSERT_LE(0, qb);

	/* A: one long workgroup, started, then saved. */
	pa = xs_packet(1, 2000, XS_MS, 1, dst, 0);
	ASSERT_EQ(0, xs_submit(sfd, ida, &pa, 1, &seq));
	ASSERT_EQ(0, xs_wait_steps(qa, 1, 10 * XS_SEC));
	ASSERT_EQ(0, xs_suspend(qa, XSCHED_MODE_SAVE, 0, 0, NULL));
	/* B fills every slot with long workgroups; then A may run again. */
	pb = xs_packet(xs_slots(&sim), 400, 10 * XS_MS, 2, dst + 8, 0);
	ASSERT_EQ(0, xs_submit(sfd, idb, &pb, 1, &seq));
	ASSERT_EQ(0, xs_wait_steps(qb, 1, 10 * XS_SEC));
	ASSERT_EQ(0, xs_resume(qa, NULL));
	ASSERT_EQ(0, xs_query(qa, &info));
	ASSERT_EQ(1, info.saved_waves) TH_LOG("A's wave should wait in the save area");

	t0 = xs_now_ns();
	ret = xs_suspend(qa, XSCHED_MODE_DRAIN, 0, 10 * XS_MS, NULL);
	took = xs_now_ns() - t0;
	ksft_print_msg("DRAIN with a 10 ms grace, wave saved, slots busy: %s after %.1f ms\n",
		       xs_err(ret), took / 1e6);
	EXPECT_EQ(-ETIMEDOUT, ret);
	/* Well before B's 4 s workgroups free a slot. */
	EXPECT_LT(took * 4, other_ns);
	EXPECT_EQ(XSCHED_STATE_ACTIVE, xs_state(qa));
	close(qa);
	close(qb);
	close(sfd);
	close(cfd);
}

TEST_HARNESS_MAIN
