// SPDX-License-Identifier: GPL-2.0
/*
 * uapi_suspend: SUSPEND, RESUME and QUERY of a queue fd against every bad
 * input, with the exact errno; the counters, poll and POLLPRI, a NONBLOCK
 * suspend's number.
 */

#include "xsched_uapi.h"

TEST_F(uapi, suspend_rejects_bad_mode_flags_reserved)
{
	const uint32_t modes[] = { 0, 3, 0x100, ~0U };
	struct xsched_suspend s;
	uint32_t id, uid;
	size_t i;
	int qfd;

	qfd = xs_make_queue(self->cfd, self->sfd, 8, &id, &uid);
	ASSERT_LE(0, qfd);
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		EXPECT_EQ(-EINVAL, xs_suspend(qfd, modes[i], 0, 0, NULL))
			TH_LOG("mode %u", modes[i]);
	}
	EXPECT_EQ(-EINVAL, xs_suspend(qfd, XSCHED_MODE_SAVE, 2, 0, NULL));
	EXPECT_EQ(-EINVAL, xs_suspend(qfd, XSCHED_MODE_DRAIN,
				      XSCHED_SUSPEND_NONBLOCK | (1U << 31), 0,
				      NULL));
	for (i = 0; i < 2; i++) {
		memset(&s, 0, sizeof(s));
		s.mode = XSCHED_MODE_SAVE;
		s.reserved[i] = 1;
		EXPECT_EQ(-EINVAL, xs_ioctl(qfd, XSCHED_IOC_SUSPEND, &s))
			TH_LOG("reserved[%zu]", i);
	}
	EXPECT_EQ(XSCHED_STATE_ACTIVE, xs_state(qfd));
	close(qfd);
}

TEST_F(uapi, suspend_rejects_grace_over_60s)
{
	uint32_t id, uid;
	int qfd;

	qfd = xs_make_queue(self->cfd, self->sfd, 8, &id, &uid);
	ASSERT_LE(0, qfd);
	EXPECT_EQ(-EINVAL, xs_suspend(qfd, XSCHED_MODE_DRAIN, 0, 60 * XS_SEC + 1, NULL));
	EXPECT_EQ(-EINVAL, xs_suspend(qfd, XSCHED_MODE_SAVE, 0, 60 * XS_SEC + 1, NULL));
	EXPECT_EQ(-EINVAL, xs_suspend(qfd, XSCHED_MODE_SAVE, 0, ~0ULL, NULL));
	EXPECT_EQ(XSCHED_STATE_ACTIVE, xs_state(qfd));
	/* exactly 60 s is allowed; an idle queue stops at once anyway */
	EXPECT_EQ(0, xs_suspend(qfd, XSCHED_MODE_DRAIN, 0, 60 * XS_SEC, NULL));
	EXPECT_EQ(0, xs_resume(qfd, NULL));
	EXPECT_EQ(0, xs_suspend(qfd, XSCHED_MODE_SAVE, 0, 60 * XS_SEC, NULL));
	EXPECT_EQ(0, xs_resume(qfd, NULL));
	close(qfd);
}

TEST_F(uapi, suspend_twice_is_ealready)
{
	const uint32_t modes[] = { XSCHED_MODE_DRAIN, XSCHED_MODE_SAVE };
	struct xsched_suspend out;
	uint32_t id, uid;
	size_t i, j;
	int qfd;

	qfd = xs_make_queue(self->cfd, self->sfd, 8, &id, &uid);
	ASSERT_LE(0, qfd);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, xs_suspend(qfd, modes[i], 0, 0, &out));
		EXPECT_EQ(0, out.saved_bytes) TH_LOG("idle queue, nothing to save");
		EXPECT_EQ(XSCHED_STATE_SUSPENDED, xs_state(qfd));
		for (j = 0; j < 2; j++) {
			EXPECT_EQ(-EALREADY, xs_suspend(qfd, modes[j], 0, 0, NULL));
			EXPECT_EQ(-EALREADY, xs_suspend(qfd, modes[j],
							XSCHED_SUSPEND_NONBLOCK,
							0, NULL));
		}
		EXPECT_EQ(XSCHED_STATE_SUSPENDED, xs_state(qfd));
		ASSERT_EQ(0, xs_resume(qfd, NULL));
	}
	close(qfd);
}

TEST_F(uapi, suspend_while_suspending_is_ealready)
{
	struct xsched_sim_packet p;
	struct xs_buf dst;
	uint64_t seq;
	uint32_t id, uid;
	int qfd, ret;

	ASSERT_EQ(0, xs_buf_alloc(self->sfd, XS_PAGE, &dst));
	qfd = xs_make_queue(self->cfd, self->sfd, 8, &id, &uid);
	ASSERT_LE(0, qfd);
	/* one workgroup of 30 x 10 ms: a DRAIN takes that long */
	p = xs_packet(1, 30, 10 * XS_MS, 9, dst.gpu_addr, 0);
	ASSERT_EQ(0, xs_submit(self->sfd, id, &p, 1, &seq));
	ASSERT_EQ(0, xs_wait_steps(qfd, 1, 10 * XS_SEC));
	ASSERT_EQ(0, xs_suspend(qfd, XSCHED_MODE_DRAIN, XSCHED_SUSPEND_NONBLOCK,
				0, NULL));
	ret = xs_state(qfd);
	EXPECT_TRUE(ret == XSCHED_STATE_SUSPENDING || ret == XSCHED_STATE_SUSPENDED)
		TH_LOG("state after NONBLOCK: %s", xs_state_name(ret));
	EXPECT_EQ(-EALREADY, xs_suspend(qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	EXPECT_EQ(-EALREADY, xs_suspend(qfd, XSCHED_MODE_DRAIN,
					XSCHED_SUSPEND_NONBLOCK, 0, NULL));
	ASSERT_EQ(0, xs_wait_state(qfd, XSCHED_STATE_SUSPENDED, 10 * XS_SEC));
	ASSERT_EQ(0, xs_resume(qfd, NULL));
	ASSERT_EQ(0, xs_wait(self->sfd, id, seq, 20 * XS_SEC, NULL));
	EXPECT_EQ(xs_ref_workgroup(9, 0, 30, NULL), dst.map[0]);
	close(qfd);
}

TEST_F(uapi, resume_active_queue_is_ealready)
{
	uint32_t id, uid;
	int qfd;

	qfd = xs_make_queue(self->cfd, self->sfd, 8, &id, &uid);
	ASSERT_LE(0, qfd);
	EXPECT_EQ(-EALREADY, xs_resume(qfd, NULL));
	ASSERT_EQ(0, xs_suspend(qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	ASSERT_EQ(0, xs_resume(qfd, NULL));
	EXPECT_EQ(-EALREADY, xs_resume(qfd, NULL));
	EXPECT_EQ(XSCHED_STATE_ACTIVE, xs_state(qfd));
	close(qfd);
}

TEST_F(uapi, resume_rejects_flags_and_reserved)
{
	struct xsched_resume r;
	uint32_t id, uid;
	int qfd, i;

	qfd = xs_make_queue(self->cfd, self->sfd, 8, &id, &uid);
	ASSERT_LE(0, qfd);
	ASSERT_EQ(0, xs_suspend(qfd, XSCHED_MODE_DRAIN, 0, 0, NULL));
	memset(&r, 0, sizeof(r));
	r.flags = 1;
	EXPECT_EQ(-EINVAL, xs_ioctl(qfd, XSCHED_IOC_RESUME, &r));
	r.flags = 0;
	r.reserved0 = 1;
	EXPECT_EQ(-EINVAL, xs_ioctl(qfd, XSCHED_IOC_RESUME, &r));
	r.reserved0 = 0;
	for (i = 0; i < 2; i++) {
		r.reserved[i] = 1;
		EXPECT_EQ(-EINVAL, xs_ioctl(qfd, XSCHED_IOC_RESUME, &r))
			TH_LOG("reserved[%d]", i);
		r.reserved[i] = 0;
	}
	EXPECT_EQ(XSCHED_STATE_SUSPENDED, xs_state(qfd));
	EXPECT_EQ(0, xs_ioctl(qfd, XSCHED_IOC_RESUME, &r));
	close(qfd);
}

TEST_F(uapi, query_rejects_flags_and_reserved)
{
	struct xsched_queue_info info;
	uint32_t id, uid;
	int qfd, i;

	qfd = xs_make_queue(self->cfd, self->sfd, 8, &id, &uid);
	ASSERT_LE(0, qfd);
	memset(&info, 0, sizeof(info));
	info.flags = 1;
	EXPECT_EQ(-EINVAL, xs_ioctl(qfd, XSCHED_IOC_QUERY, &info));
	for (i = 0; i < (int)XS_ARRAY_SIZE(info.reserved); i++) {
		memset(&info, 0, sizeof(info));
		info.reserved[i] = 1;
		EXPECT_EQ(-EINVAL, xs_ioctl(qfd, XSCHED_IOC_QUERY, &info))
			TH_LOG("reserved[%d]", i);
	}
	close(qfd);
}

TEST_F(uapi, query_fresh_queue_reports_initial_state)
{
	struct xsched_queue_info info;
	uint64_t save;
	uint32_t id, uid;
	int qfd;

	ASSERT_EQ(0, xs_queue_create(self->sfd, 16, &id, &save));
	qfd = xs_register(self->cfd, self->sfd, id, -9, &uid);
	ASSERT_LE(0, qfd);
	memset(&info, 0, sizeof(info));
	ASSERT_EQ(0, xs_ioctl(qfd, XSCHED_IOC_QUERY, &info));
	EXPECT_EQ(XSCHED_STATE_ACTIVE, info.state);
	EXPECT_EQ(XSCHED_BACKEND_SIM, info.backend);
	EXPECT_EQ(-9, info.priority);
	EXPECT_EQ(uid, info.queue_uid);
	EXPECT_EQ(0, info.last_mode);
	EXPECT_EQ(0, info.last_error);
	EXPECT_EQ(0, info.saved_waves);
	EXPECT_EQ(0, info.rptr);
	EXPECT_EQ(0, info.wptr);
	EXPECT_EQ(0, info.steps_done);
	EXPECT_EQ(0, info.suspends);
	EXPECT_EQ(0, info.resumes);
	EXPECT_EQ(0, info.faults);
	EXPECT_EQ(0, info.last_suspend_ns);
	EXPECT_EQ(0, info.total_suspend_ns);
	EXPECT_EQ(0, info.max_suspend_ns);
	EXPECT_EQ(0, info.saved_bytes);
	EXPECT_EQ(save, info.save_area_size);
	EXPECT_EQ(0, info.arbitrated);
	EXPECT_EQ(0, info.arbiter_suspends);
	EXPECT_EQ((1U << XSCHED_MODE_DRAIN) | (1U << XSCHED_MODE_SAVE), info.modes);
	close(qfd);
}

TEST_F(uapi, suspend_resume_updates_counters)
{
	struct xsched_queue_info info;
	struct xsched_suspend out[2];
	struct xsched_sim_packet p;
	struct xs_buf dst;
	uint64_t seq, susp_ns;
	uint32_t id, uid;
	int qfd;

	ASSERT_EQ(0, xs_buf_alloc(self->sfd, XS_PAGE, &dst));
	qfd = xs_make_queue(self->cfd, self->sfd, 8, &id, &uid);
	ASSERT_LE(0, qfd);
	p = xs_packet(3, 4, 0, 21, dst.gpu_addr, 0);
	ASSERT_EQ(0, xs_submit(self->sfd, id, &p, 1, &seq));
	ASSERT_EQ(0, xs_wait(self->sfd, id, seq, 20 * XS_SEC, NULL));

	ASSERT_EQ(0, xs_suspend(qfd, XSCHED_MODE_DRAIN, 0, 0, &out[0]));
	ASSERT_EQ(0, xs_query(qfd, &info));
	EXPECT_EQ(XSCHED_STATE_SUSPENDED, info.state);
	EXPECT_EQ(XSCHED_MODE_DRAIN, info.last_mode);
	EXPECT_EQ(1, info.suspends);
	EXPECT_EQ(0, info.resumes);
	EXPECT_EQ(out[0].latency_ns, info.last_suspend_ns);
	xs_sleep_ns(2 * XS_MS);
	ASSERT_EQ(0, xs_resume(qfd, &susp_ns));
	EXPECT_LE(2 * XS_MS, susp_ns) TH_LOG("slept 2 ms while suspended");

	ASSERT_EQ(0, xs_suspend(qfd, XSCHED_MODE_SAVE, 0, 0, &out[1]));
	ASSERT_EQ(0, xs_resume(qfd, NULL));
	ASSERT_EQ(0, xs_query(qfd, &info));
	EXPECT_EQ(XSCHED_STATE_ACTIVE, info.state);
	EXPECT_EQ(XSCHED_MODE_SAVE, info.last_mode);
	EXPECT_EQ(2, info.suspends);
	EXPECT_EQ(2, info.resumes);
	EXPECT_EQ(0, info.faults);
	EXPECT_EQ(0, info.last_error);
	EXPECT_EQ(out[1].latency_ns, info.last_suspend_ns);
	EXPECT_EQ(out[0].latency_ns + out[1].latency_ns, info.total_suspend_ns);
	EXPECT_EQ(out[0].latency_ns > out[1].latency_ns ? out[0].latency_ns :
		  out[1].latency_ns, info.max_suspend_ns);
	EXPECT_EQ(1, info.rptr);
	EXPECT_EQ(1, info.wptr);
	EXPECT_EQ(12, info.steps_done);
	close(qfd);
}

TEST_F(uapi, poll_reports_idle_busy_suspended)
{
	struct xsched_sim_packet p;
	struct xs_buf dst;
	uint64_t seq;
	uint32_t id, uid;
	int qfd, ev;

	ASSERT_EQ(0, xs_buf_alloc(self->sfd, XS_PAGE, &dst));
	qfd = xs_make_queue(self->cfd, self->sfd, 8, &id, &uid);
	ASSERT_LE(0, qfd);
	ev = xs_poll(qfd, POLLIN | POLLPRI, 0);
	EXPECT_EQ(POLLIN, ev) TH_LOG("idle queue: revents %#x", ev);

	p = xs_packet(1, 50, 10 * XS_MS, 4, dst.gpu_addr, 0);	/* 0.5 s */
	ASSERT_EQ(0, xs_submit(self->sfd, id, &p, 1, &seq));
	ev = xs_poll(qfd, POLLIN | POLLPRI, 0);
	EXPECT_EQ(0, ev) TH_LOG("busy queue: revents %#x", ev);

	ASSERT_EQ(0, xs_suspend(qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	ev = xs_poll(qfd, POLLPRI, 0);
	EXPECT_EQ(POLLPRI, ev) TH_LOG("suspended queue: revents %#x", ev);
	ev = xs_poll(qfd, POLLIN, 0);
	EXPECT_EQ(0, ev & POLLIN) TH_LOG("work left: no POLLIN (revents %#x)", ev);
	ASSERT_EQ(0, xs_resume(qfd, NULL));
	EXPECT_EQ(0, xs_poll(qfd, POLLPRI, 0) & POLLPRI);

	/* POLLIN wakes up the poller when the work is done */
	ev = xs_poll(qfd, POLLIN, 20000);
	EXPECT_EQ(POLLIN, ev) TH_LOG("revents %#x after completion", ev);
	EXPECT_EQ(0, xs_wait(self->sfd, id, seq, 0, NULL));
	close(qfd);
}

TEST_F(uapi, nonblock_suspend_signals_pollpri)
{
	struct xsched_sim_packet p;
	struct xsched_suspend out;
	struct xs_buf dst;
	uint64_t seq;
	uint32_t id, uid;
	int qfd, ev;

	ASSERT_EQ(0, xs_buf_alloc(self->sfd, XS_PAGE, &dst));
	qfd = xs_make_queue(self->cfd, self->sfd, 8, &id, &uid);
	ASSERT_LE(0, qfd);
	/* DRAIN of a 30 x 10 ms workgroup: SUSPENDING for a while */
	p = xs_packet(1, 30, 10 * XS_MS, 5, dst.gpu_addr, 0);
	ASSERT_EQ(0, xs_submit(self->sfd, id, &p, 1, &seq));
	ASSERT_EQ(0, xs_wait_steps(qfd, 1, 10 * XS_SEC));
	ASSERT_EQ(0, xs_suspend(qfd, XSCHED_MODE_DRAIN, XSCHED_SUSPEND_NONBLOCK,
				0, &out));
	ev = xs_poll(qfd, POLLPRI, 20000);
	EXPECT_EQ(POLLPRI, ev & POLLPRI) TH_LOG("revents %#x", ev);
	EXPECT_EQ(XSCHED_STATE_SUSPENDED, xs_state(qfd));
	ASSERT_EQ(0, xs_resume(qfd, NULL));
	ASSERT_EQ(0, xs_wait(self->sfd, id, seq, 20 * XS_SEC, NULL));
	EXPECT_EQ(xs_ref_workgroup(5, 0, 30, NULL), dst.map[0]);
	close(qfd);
}

/* A NONBLOCK suspend's number tells its own completion from a later suspend's. */
TEST_F(uapi, nonblock_suspend_returns_its_seq_and_query_names_the_hw_queue)
{
	struct xsched_queue_info info;
	struct xsched_suspend s;
	uint32_t id, uid, first;
	int qfd;

	/* Not the first sim queue: its id is not 0 either. */
	ASSERT_EQ(0, xs_queue_create(self->sfd, 2, NULL, NULL));
	qfd = xs_make_queue(self->cfd, self->sfd, 8, &id, &uid);
	ASSERT_LE(0, qfd);
	memset(&info, 0, sizeof(info));
	ASSERT_EQ(0, xs_query(qfd, &info));
	EXPECT_EQ(0, info.suspend_seq);
	/* The hardware queue, by its own name: the sim queue id. */
	EXPECT_EQ(0, info.gpu_id);
	EXPECT_EQ(id, info.hw_queue_id);
	ASSERT_EQ(0, xs_suspend(qfd, XSCHED_MODE_SAVE, XSCHED_SUSPEND_NONBLOCK, 0, &s));
	EXPECT_NE(0, s.seq);
	first = s.seq;
	ASSERT_EQ(0, xs_wait_state(qfd, XSCHED_STATE_SUSPENDED, 10 * XS_SEC));
	ASSERT_EQ(0, xs_query(qfd, &info));
	EXPECT_EQ(first, info.suspend_seq);
	ASSERT_EQ(0, xs_resume(qfd, NULL));
	/* Blocking suspends report theirs too: the next one. */
	ASSERT_EQ(0, xs_suspend(qfd, XSCHED_MODE_DRAIN, 0, 0, &s));
	EXPECT_EQ(first + 1, s.seq);
	ASSERT_EQ(0, xs_query(qfd, &info));
	EXPECT_EQ(first + 1, info.suspend_seq);
	EXPECT_EQ(0, xs_resume(qfd, NULL));
	close(qfd);
}

TEST_HARNESS_MAIN
