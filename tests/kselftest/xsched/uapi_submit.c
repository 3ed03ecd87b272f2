// SPDX-License-Identifier: GPL-2.0
/*
 * uapi_submit: the sim's SUBMIT and WAIT against every bad input and packet,
 * with the exact errno; sequence numbers, a full ring, MARK, timeouts, signals.
 */
#include <signal.h>
#include <sys/time.h>

#include "xsched_uapi.h"

TEST_F(uapi, submit_unknown_queue_is_enoent)
{
	struct xsched_sim_packet p = xs_packet(1, 1, 0, 1, 0, 0);
	uint32_t id;
	uint64_t seq;

	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id, NULL));
	EXPECT_EQ(-ENOENT, xs_submit(self->sfd, id + 1000, &p, 1, &seq));
	EXPECT_EQ(-ENOENT, xs_submit(self->sfd, ~0U, &p, 1, &seq));
	/* another sim fd's queue id means nothing here */
	{
		int cfd2, sfd2;

		ASSERT_EQ(0, xs_client_open(&cfd2, NULL));
		ASSERT_EQ(0, xs_sim_open(&sfd2, NULL));
		EXPECT_EQ(-ENOENT, xs_submit(sfd2, id, &p, 1, &seq));
		close(sfd2);
		close(cfd2);
	}
}

TEST_F(uapi, submit_bad_count_is_einval)
{
	static struct xsched_sim_packet p[XSCHED_SIM_SUBMIT_MAX + 1];
	const uint32_t bad[] = { 0, XSCHED_SIM_SUBMIT_MAX + 1, 1U << 31, ~0U };
	struct xs_buf dst;
	uint32_t id;
	uint64_t seq;
	size_t i;

	ASSERT_EQ(0, xs_buf_alloc(self->sfd, XS_PAGE, &dst));
	for (i = 0; i < XSCHED_SIM_SUBMIT_MAX + 1; i++)
		p[i] = xs_packet(1, 1, 0, i, dst.gpu_addr, 0);
	ASSERT_EQ(0, xs_queue_create(self->sfd, XSCHED_SIM_RING_MAX, &id, NULL));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, xs_submit(self->sfd, id, p, bad[i], &seq))
			TH_LOG("count %u", bad[i]);
	}
	/* the largest batch is accepted */
	ASSERT_EQ(0, xs_submit(self->sfd, id, p, XSCHED_SIM_SUBMIT_MAX, &seq));
	EXPECT_EQ(XSCHED_SIM_SUBMIT_MAX, seq);
	EXPECT_EQ(0, xs_wait(self->sfd, id, seq, 30 * XS_SEC, NULL));
}

TEST_F(uapi, submit_bad_packets_pointer_is_efault)
{
	struct xsched_sim_packet p = xs_packet(1, 1, 0, 1, 0, 0);
	void *bad[3];
	uint32_t id;
	uint64_t seq;
	int j;

	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id, NULL));
	xs_bad_pointers(self->guard, bad);
	for (j = 0; j < 3; j++) {
		EXPECT_EQ(-EFAULT, xs_submit(self->sfd, id, bad[j], 1, &seq))
			TH_LOG("packets %p", bad[j]);
	}
	/* a batch whose tail runs into an unmapped page */
	{
		char *page = mmap(NULL, 2 * XS_PAGE, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct xsched_sim_packet *tail;

		ASSERT_NE(MAP_FAILED, page);
		ASSERT_EQ(0, munmap(page + XS_PAGE, XS_PAGE));
		tail = (void *)(page + XS_PAGE - sizeof(p));
		*tail = p;
		EXPECT_EQ(-EFAULT, xs_submit(self->sfd, id, tail, 2, &seq));
		munmap(page, XS_PAGE);
	}
	/* nothing of it was queued: waiting for packet 1 is out of range */
	EXPECT_EQ(-EINVAL, xs_wait(self->sfd, id, 1, 0, NULL));
}

TEST_F(uapi, submit_rejects_flags_and_reserved)
{
	struct xsched_sim_packet p = xs_packet(1, 1, 0, 1, 0, 0);
	struct xsched_sim_submit s;
	uint32_t id;
	int i;

	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id, NULL));
	memset(&s, 0, sizeof(s));
	s.queue_id = id;
	s.count = 1;
	s.packets = (uintptr_t)&p;
	s.flags = 1;
	EXPECT_EQ(-EINVAL, xs_ioctl(self->sfd, XSCHED_IOC_SIM_SUBMIT, &s));
	s.flags = 0;
	s.reserved0 = 1;
	EXPECT_EQ(-EINVAL, xs_ioctl(self->sfd, XSCHED_IOC_SIM_SUBMIT, &s));
	s.reserved0 = 0;
	for (i = 0; i < 2; i++) {
		s.reserved[i] = 1;
		EXPECT_EQ(-EINVAL, xs_ioctl(self->sfd, XSCHED_IOC_SIM_SUBMIT, &s))
			TH_LOG("reserved[%d]", i);
		s.reserved[i] = 0;
	}
	EXPECT_EQ(-EINVAL, xs_wait(self->sfd, id, 1, 0, NULL));
}

struct bad_packet {
	const char *what;
	void (*spoil)(struct xsched_sim_packet *p);
};

static void spoil_kernel0(struct xsched_sim_packet *p) { p->kernel = 0; }
static void spoil_kernel_next(struct xsched_sim_packet *p)
{
	p->kernel = XSCHED_SIM_KERNEL_MARK + 1;
}

static void spoil_kernel_max(struct xsched_sim_packet *p) { p->kernel = ~0U; }
static void spoil_flags(struct xsched_sim_packet *p) { p->flags = 1; }
static void spoil_grid0(struct xsched_sim_packet *p) { p->grid = 0; }
static void spoil_grid_big(struct xsched_sim_packet *p) { p->grid = XSCHED_SIM_GRID_MAX + 1; }
static void spoil_steps0(struct xsched_sim_packet *p) { p->steps = 0; }
static void spoil_steps_big(struct xsched_sim_packet *p) { p->steps = XSCHED_SIM_STEPS_MAX + 1; }
static void spoil_step_ns(struct xsched_sim_packet *p) { p->step_ns = XSCHED_SIM_STEP_NS_MAX + 1; }
static void spoil_step_ns_huge(struct xsched_sim_packet *p) { p->step_ns = ~0ULL; }
static void spoil_reserved0(struct xsched_sim_packet *p) { p->reserved[0] = 1; }
static void spoil_reserved1(struct xsched_sim_packet *p) { p->reserved[1] = 1ULL << 63; }

static const struct bad_packet bad_packets[] = {
	{ "kernel 0", spoil_kernel0 },
	{ "kernel MARK+1", spoil_kernel_next },
	{ "kernel ~0", spoil_kernel_max },
	{ "flags 1", spoil_flags },
	{ "grid 0", spoil_grid0 },
	{ "grid GRID_MAX+1", spoil_grid_big },
	{ "steps 0", spoil_steps0 },
	{ "steps STEPS_MAX+1", spoil_steps_big },
	{ "step_ns STEP_NS_MAX+1", spoil_step_ns },
	{ "step_ns ~0", spoil_step_ns_huge },
	{ "reserved[0]", spoil_reserved0 },
	{ "reserved[1]", spoil_reserved1 },
};

TEST_F(uapi, submit_invalid_packet_rejects_whole_batch)
{
	struct xsched_sim_packet batch[3];
	struct xs_buf dst;
	uint64_t seq, ref[3];
	uint32_t id;
	size_t i, pos;

	ASSERT_EQ(0, xs_buf_alloc(self->sfd, XS_PAGE, &dst));
	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id, NULL));
	for (i = 0; i < sizeof(bad_packets) / sizeof(bad_packets[0]); i++) {
		for (pos = 0; pos < 3; pos++) {
			batch[0] = xs_packet(1, 3, 0, 11, dst.gpu_addr, 0);
			batch[1] = xs_packet(1, 3, 0, 12, dst.gpu_addr + 8, 0);
			batch[2] = xs_packet(1, 3, 0, 13, dst.gpu_addr + 16, 0);
			bad_packets[i].spoil(&batch[pos]);
			EXPECT_EQ(-EINVAL, xs_submit(self->sfd, id, batch, 3, &seq))
				TH_LOG("%s in packet %zu of 3", bad_packets[i].what, pos);
		}
	}
	/* nothing was queued: packet 1 does not exist yet, memory untouched */
	EXPECT_EQ(-EINVAL, xs_wait(self->sfd, id, 1, 0, NULL));
	EXPECT_EQ(0xa5a5a5a5a5a5a5a5ULL, dst.map[0]);
	/* the first accepted packet is number 1 */
	batch[0] = xs_packet(1, 3, 0, 11, dst.gpu_addr, 0);
	batch[1] = xs_packet(1, 3, 0, 12, dst.gpu_addr + 8, 0);
	batch[2] = xs_packet(1, 3, 0, 13, dst.gpu_addr + 16, 0);
	ASSERT_EQ(0, xs_submit(self->sfd, id, batch, 1, &seq));
	EXPECT_EQ(1, seq);
	ASSERT_EQ(0, xs_submit(self->sfd, id, batch + 1, 2, &seq));
	EXPECT_EQ(3, seq);
	ASSERT_EQ(0, xs_wait(self->sfd, id, 3, 20 * XS_SEC, NULL));
	for (i = 0; i < 3; i++)
		ref[i] = xs_ref_workgroup(11 + i, 0, 3, NULL);
	EXPECT_EQ(-1, xs_first_mismatch(dst.map, ref, 3));
}

/*
 * MARK: the results of ACCUMULATE, and each executed step adds one to its
 * workgroup's mark at dst[grid + wg], counting up from what memory holds.
 */
TEST_F(uapi, mark_kernel_adds_one_mark_per_step_to_memory)
{
	struct xsched_sim_packet p = { 0 };
	struct xsched_queue_info info;
	struct xs_buf dst;
	uint64_t seq;
	uint32_t id, wg;
	int qfd;

	ASSERT_EQ(0, xs_buf_alloc(self->sfd, XS_PAGE, &dst));
	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id, NULL));
	qfd = xs_register(self->cfd, self->sfd, id, 0, NULL);
	ASSERT_LE(0, qfd);
	p = xs_mark_packet(5, 7, 0, 21, dst.gpu_addr, 0);
	EXPECT_EQ(10, xs_packet_entries(&p));
	for (wg = 0; wg < p.grid; wg++)
		dst.map[p.grid + wg] = 1000 * wg;
	dst.map[2 * p.grid] = 0x5eed;	/* just past the marks */
	ASSERT_EQ(0, xs_submit(self->sfd, id, &p, 1, &seq));
	ASSERT_EQ(0, xs_wait(self->sfd, id, seq, 20 * XS_SEC, NULL));
	EXPECT_EQ(-1, xs_packet_mismatch(&p, NULL, dst.map));
	for (wg = 0; wg < p.grid; wg++)
		EXPECT_EQ(1000 * wg + p.steps, dst.map[p.grid + wg])
			TH_LOG("workgroup %u", wg);
	EXPECT_EQ(0x5eed, dst.map[2 * p.grid]);
	ASSERT_EQ(0, xs_query(qfd, &info));
	EXPECT_EQ(xs_packet_steps(&p), info.steps_done);
	/* the same packet again: one more mark per step, same results */
	ASSERT_EQ(0, xs_submit(self->sfd, id, &p, 1, &seq));
	ASSERT_EQ(0, xs_wait(self->sfd, id, seq, 20 * XS_SEC, NULL));
	EXPECT_EQ(-1, xs_packet_mismatch(&p, NULL, dst.map));
	for (wg = 0; wg < p.grid; wg++)
		EXPECT_EQ(1000 * wg + 2 * p.steps, dst.map[p.grid + wg]);
	close(qfd);
}

TEST_F_TIMEOUT(uapi, submit_boundary_packets_are_accepted, 90)
{
	const uint32_t grid = XSCHED_SIM_GRID_MAX;
	struct xsched_sim_packet p[2];
	struct xs_buf big, small;
	uint64_t *ref, seq, one;
	uint32_t id;

	ASSERT_EQ(0, xs_buf_alloc(self->sfd, grid * sizeof(uint64_t), &big));
	ASSERT_EQ(0, xs_buf_alloc(self->sfd, XS_PAGE, &small));
	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id, NULL));
	p[0] = xs_packet(grid, 1, 0, 77, big.gpu_addr, 0);
	p[1] = xs_packet(1, 2, XSCHED_SIM_STEP_NS_MAX, 78, small.gpu_addr, 0);
	ASSERT_EQ(0, xs_submit(self->sfd, id, p, 2, &seq));
	EXPECT_EQ(2, seq);
	ASSERT_EQ(0, xs_wait(self->sfd, id, seq, 60 * XS_SEC, NULL));
	ref = calloc(grid, sizeof(*ref));
	ASSERT_NE(NULL, ref);
	xs_ref_packet(&p[0], NULL, ref);
	EXPECT_EQ(-1, xs_first_mismatch(big.map, ref, grid));
	one = xs_ref_workgroup(78, 0, 2, NULL);
	EXPECT_EQ(one, small.map[0]);
	free(ref);
}

TEST_F(uapi, submit_seq_counts_packets)
{
	struct xsched_sim_packet p[5];
	struct xs_buf dst;
	uint64_t seq, done;
	uint32_t id;
	int i;

	ASSERT_EQ(0, xs_buf_alloc(self->sfd, XS_PAGE, &dst));
	ASSERT_EQ(0, xs_queue_create(self->sfd, 16, &id, NULL));
	for (i = 0; i < 5; i++)
		p[i] = xs_packet(1, 2, 0, i, dst.gpu_addr + 8 * i, 0);
	ASSERT_EQ(0, xs_submit(self->sfd, id, p, 1, &seq));
	EXPECT_EQ(1, seq);
	ASSERT_EQ(0, xs_submit(self->sfd, id, p + 1, 3, &seq));
	EXPECT_EQ(4, seq);
	ASSERT_EQ(0, xs_submit(self->sfd, id, p + 4, 1, &seq));
	EXPECT_EQ(5, seq);
	ASSERT_EQ(0, xs_wait(self->sfd, id, 5, 20 * XS_SEC, &done));
	EXPECT_EQ(5, done);
	/* waiting again for an old packet succeeds at once */
	EXPECT_EQ(0, xs_wait(self->sfd, id, 2, 0, &done));
	EXPECT_EQ(5, done);
}

TEST_F(uapi, submit_ring_full_is_eagain)
{
	struct xsched_sim_packet p[3];
	struct xs_buf dst;
	uint64_t seq;
	uint32_t id, uid;
	int qfd, i;

	ASSERT_EQ(0, xs_buf_alloc(self->sfd, XS_PAGE, &dst));
	for (i = 0; i < 3; i++)
		p[i] = xs_packet(1, 1, 0, i, dst.gpu_addr + 8 * i, 0);
	qfd = xs_make_queue(self->cfd, self->sfd, 2, &id, &uid);
	ASSERT_LE(0, qfd) TH_LOG("register: %s", xs_err(qfd));
	/* more packets than the ring holds never fit */
	EXPECT_EQ(-EAGAIN, xs_submit(self->sfd, id, p, 3, &seq));
	/* a stopped queue consumes nothing: its ring fills up */
	ASSERT_EQ(0, xs_suspend(qfd, XSCHED_MODE_DRAIN, 0, 0, NULL));
	ASSERT_EQ(0, xs_submit(self->sfd, id, p, 2, &seq));
	EXPECT_EQ(2, seq);
	EXPECT_EQ(-EAGAIN, xs_submit(self->sfd, id, p + 2, 1, &seq));
	EXPECT_EQ(-ETIMEDOUT, xs_wait(self->sfd, id, 2, 0, NULL));
	ASSERT_EQ(0, xs_resume(qfd, NULL));
	ASSERT_EQ(0, xs_wait(self->sfd, id, 2, 20 * XS_SEC, NULL));
	/* the rejected packet did not take a number */
	ASSERT_EQ(0, xs_submit(self->sfd, id, p + 2, 1, &seq));
	EXPECT_EQ(3, seq);
	EXPECT_EQ(0, xs_wait(self->sfd, id, 3, 20 * XS_SEC, NULL));
	close(qfd);
}

TEST_F(uapi, wait_unknown_queue_is_enoent)
{
	uint32_t id;

	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id, NULL));
	EXPECT_EQ(-ENOENT, xs_wait(self->sfd, id + 1000, 1, 0, NULL));
	EXPECT_EQ(-ENOENT, xs_wait(self->sfd, ~0U, 1, 0, NULL));
}

TEST_F(uapi, wait_beyond_last_seq_is_einval)
{
	struct xsched_sim_packet p;
	struct xs_buf dst;
	uint64_t seq;
	uint32_t id;

	ASSERT_EQ(0, xs_buf_alloc(self->sfd, XS_PAGE, &dst));
	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id, NULL));
	EXPECT_EQ(-EINVAL, xs_wait(self->sfd, id, 1, 0, NULL));
	EXPECT_EQ(-EINVAL, xs_wait(self->sfd, id, ~0ULL, XS_SEC, NULL));
	p = xs_packet(1, 1, 0, 5, dst.gpu_addr, 0);
	ASSERT_EQ(0, xs_submit(self->sfd, id, &p, 1, &seq));
	EXPECT_EQ(-EINVAL, xs_wait(self->sfd, id, seq + 1, XS_SEC, NULL));
	EXPECT_EQ(-EINVAL, xs_wait(self->sfd, id, 1ULL << 62, XS_SEC, NULL));
	EXPECT_EQ(0, xs_wait(self->sfd, id, seq, 20 * XS_SEC, NULL));
}

TEST_F(uapi, wait_rejects_flags_and_reserved)
{
	struct xsched_sim_wait w;
	uint32_t id;
	int i;

	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id, NULL));
	memset(&w, 0, sizeof(w));
	w.queue_id = id;
	w.flags = 1;
	EXPECT_EQ(-EINVAL, xs_ioctl(self->sfd, XSCHED_IOC_SIM_WAIT, &w));
	w.flags = 0;
	for (i = 0; i < 2; i++) {
		w.reserved[i] = 1;
		EXPECT_EQ(-EINVAL, xs_ioctl(self->sfd, XSCHED_IOC_SIM_WAIT, &w))
			TH_LOG("reserved[%d]", i);
		w.reserved[i] = 0;
	}
}

TEST_F(uapi, wait_timeout_is_etimedout_and_reports_completed)
{
	struct xsched_sim_packet p[2];
	struct xs_buf dst;
	uint64_t seq, done;
	uint32_t id;

	ASSERT_EQ(0, xs_buf_alloc(self->sfd, XS_PAGE, &dst));
	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id, NULL));
	/* a quick packet, then a slow one (40 x 10 ms) */
	p[0] = xs_packet(1, 1, 0, 1, dst.gpu_addr, 0);
	p[1] = xs_packet(1, 40, 10 * XS_MS, 2, dst.gpu_addr + 8, 0);
	ASSERT_EQ(0, xs_submit(self->sfd, id, p, 2, &seq));
	ASSERT_EQ(0, xs_wait(self->sfd, id, 1, 20 * XS_SEC, &done));
	EXPECT_LE(1, done);
	/* timeout 0 polls once */
	done = ~0ULL;
	EXPECT_EQ(-ETIMEDOUT, xs_wait(self->sfd, id, 2, 0, &done));
	EXPECT_EQ(1, done) TH_LOG("completed must be filled in on ETIMEDOUT");
	done = ~0ULL;
	EXPECT_EQ(-ETIMEDOUT, xs_wait(self->sfd, id, 2, 5 * XS_MS, &done));
	EXPECT_EQ(1, done);
	ASSERT_EQ(0, xs_wait(self->sfd, id, 2, 30 * XS_SEC, &done));
	EXPECT_EQ(2, done);
	EXPECT_EQ(0, xs_wait(self->sfd, id, 2, 0, &done));
}

TEST_F(uapi, wait_interrupted_by_signal_is_eintr)
{
	struct sigaction sa = { .sa_handler = xs_interrupt_handler };	/* no SA_RESTART */
	struct itimerval it = { .it_value = { .tv_usec = 100000 } };
	struct xsched_sim_packet p;
	struct xs_buf dst;
	uint64_t seq, done;
	uint32_t id;
	int ret;

	ASSERT_EQ(0, xs_buf_alloc(self->sfd, XS_PAGE, &dst));
	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id, NULL));
	p = xs_packet(1, 100, 10 * XS_MS, 3, dst.gpu_addr, 0);	/* 1 s */
	ASSERT_EQ(0, xs_submit(self->sfd, id, &p, 1, &seq));
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
	done = ~0ULL;
	ret = xs_wait(self->sfd, id, seq, 60 * XS_SEC, &done);
	EXPECT_EQ(-EINTR, ret) TH_LOG("got %s", xs_err(ret));
	EXPECT_EQ(0, done);
	/* the packet was not disturbed */
	ASSERT_EQ(0, xs_wait(self->sfd, id, seq, 30 * XS_SEC, NULL));
	EXPECT_EQ(xs_ref_workgroup(3, 0, 100, NULL), dst.map[0]);
}

TEST_F(uapi, wait_with_huge_timeout_waits)
{
	const uint64_t timeouts[] = { ~0ULL, 1ULL << 63, (1ULL << 63) - 1 };
	struct xsched_sim_packet p;
	struct xs_buf dst;
	uint64_t seq, done;
	uint32_t id;
	size_t i;
	int ret;

	ASSERT_EQ(0, xs_buf_alloc(self->sfd, XS_PAGE, &dst));
	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id, NULL));
	for (i = 0; i < XS_ARRAY_SIZE(timeouts); i++) {
		/* 10 x 5 ms: still running when the wait starts */
		p = xs_packet(1, 10, 5 * XS_MS, i, dst.gpu_addr + 8 * i, 0);
		ASSERT_EQ(0, xs_submit(self->sfd, id, &p, 1, &seq));
		done = 0;
		ret = xs_wait(self->sfd, id, seq, timeouts[i], &done);
		EXPECT_EQ(0, ret) TH_LOG("timeout_ns %#llx: %s (an overflow?)",
					 (unsigned long long)timeouts[i], xs_err(ret));
		EXPECT_EQ(seq, done);
	}
}

TEST_HARNESS_MAIN
