// SPDX-License-Identifier: GPL-2.0
/*
 * reuse: a queue its owner destroys while the process goes on, and its id
 * handed out again.  KFD gives a new queue the lowest free id, so a
 * registration kept by id alone would name the new queue: progress would
 * read it (a phantom busy queue holding everything below it), registering
 * the new queue would give EEXIST, and suspend, resume or close would act
 * on it.  The sim models the same with XSCHED_IOC_SIM_QUEUE_DESTROY: the
 * old registration must fail with ENODEV and never reach the new queue.
 */
#include <poll.h>

#include "xsched_test.h"

#define WAIT_NS		(30 * XS_SEC)

FIXTURE(ru) {
	int cfd;
	struct xsched_version ver;
	int sfd;
	struct xsched_sim_info sim;
	unsigned int slots;
	struct xs_buf out;
};

FIXTURE_SETUP(ru)
{
	self->sfd = -1;
	XS_CLIENT_OPEN_OR_SKIP(self->cfd, self->ver);
	XS_SIM_OPEN_OR_SKIP(self->sfd, self->sim);
	self->slots = xs_slots(&self->sim);
	ASSERT_LT(1, self->slots);
	ASSERT_EQ(0, xs_buf_alloc(self->sfd, 4 * self->slots * sizeof(uint64_t),
				  &self->out));
}

FIXTURE_TEARDOWN(ru)
{
	if (self->sfd >= 0) {
		xs_buf_free(&self->out);
		close(self->sfd);
	}
	close(self->cfd);
}

static int destroy(int sfd, uint32_t id)
{
	struct xsched_sim_queue_destroy d = { .queue_id = id };

	return xs_ioctl(sfd, XSCHED_IOC_SIM_QUEUE_DESTROY, &d);
}

/*
 * The registration of a destroyed queue: FAILED with ENODEV, POLLERR, and
 * EIO for suspend and resume (an arbitrated one refuses them: EBUSY).
 */
static void expect_destroyed(struct __test_metadata *_metadata, int qfd,
			     bool arbitrated)
{
	int refused = arbitrated ? -EBUSY : -EIO;
	struct xsched_queue_info info;
	int ev;

	ASSERT_EQ(0, xs_wait_state(qfd, XSCHED_STATE_FAILED, WAIT_NS))
		TH_LOG("the registration of a destroyed queue is %s",
		       xs_state_name(xs_state(qfd)));
	ASSERT_EQ(0, xs_query(qfd, &info));
	EXPECT_EQ(-ENODEV, info.last_error)
		TH_LOG("last_error %d (%s)", info.last_error, strerror(-info.last_error));
	EXPECT_EQ(0, info.saved_waves);
	ev = xs_poll(qfd, POLLIN | POLLPRI | POLLERR, 0);
	EXPECT_TRUE(ev & POLLERR) TH_LOG("revents %#x", ev);
	EXPECT_EQ(refused, xs_suspend(qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	EXPECT_EQ(refused, xs_resume(qfd, NULL));
}

TEST_F(ru, destroy_errnos)
{
	struct xsched_sim_queue_destroy d = { 0 };
	struct xsched_sim_packet p = xs_packet(1, 1, 0, 1, self->out.gpu_addr, 0);
	uint64_t seq;
	uint32_t id;

	ASSERT_EQ(0, xs_queue_create(self->sfd, 4, &id, NULL));
	d.queue_id = id;
	d.flags = 1;
	EXPECT_EQ(-EINVAL, xs_ioctl(self->sfd, XSCHED_IOC_SIM_QUEUE_DESTROY, &d));
	d.flags = 0;
	d.reserved[0] = 1;
	EXPECT_EQ(-EINVAL, xs_ioctl(self->sfd, XSCHED_IOC_SIM_QUEUE_DESTROY, &d));
	EXPECT_EQ(-ENOENT, destroy(self->sfd, XSCHED_SIM_QUEUES));
	EXPECT_EQ(-ENOENT, destroy(self->sfd, ~0U));
	EXPECT_EQ(-ENOENT, destroy(self->sfd, id + 1));
	/* The refused calls left it alone. */
	EXPECT_EQ(0, xs_submit(self->sfd, id, &p, 1, &seq));
	EXPECT_EQ(0, xs_wait(self->sfd, id, seq, WAIT_NS, NULL));
	EXPECT_EQ(0, destroy(self->sfd, id));
	EXPECT_EQ(-ENOENT, destroy(self->sfd, id));
	EXPECT_EQ(-ENOENT, xs_submit(self->sfd, id, &p, 1, &seq));
	EXPECT_EQ(-ENOENT, xs_wait(self->sfd, id, 1, 0, NULL));
	/* Only a sim fd's own queues. */
	EXPECT_EQ(-ENOTTY, xs_ioctl(self->cfd, XSCHED_IOC_SIM_QUEUE_DESTROY, &d));
}

/* As KFD does: the lowest free id, the destroyed one included. */
TEST_F(ru, destroyed_id_is_handed_out_again)
{
	uint32_t a, b, c, d;

	ASSERT_EQ(0, xs_queue_create(self->sfd, 4, &a, NULL));
	ASSERT_EQ(0, xs_queue_create(self->sfd, 4, &b, NULL));
	ASSERT_NE(a, b);
	ASSERT_EQ(0, destroy(self->sfd, a));
	ASSERT_EQ(0, xs_queue_create(self->sfd, 4, &c, NULL));
	EXPECT_EQ(a, c);
	ASSERT_EQ(0, xs_queue_create(self->sfd, 4, &d, NULL));
	EXPECT_NE(b, d);
	EXPECT_NE(c, d);
}

/*
 * The old registration fails with ENODEV, and the new queue with the same
 * id registers (no EEXIST) as a queue of its own.
 */
TEST_F(ru, new_queue_with_the_old_id_registers_anew)
{
	struct xsched_queue_info old, new;
	uint32_t a, c, uid_a, uid_c;
	int qa, qc;

	ASSERT_EQ(0, xs_queue_create(self->sfd, 4, &a, NULL));
	qa = xs_register(self->cfd, self->sfd, a, 0, &uid_a);
	ASSERT_LE(0, qa) TH_LOG("register: %s", xs_err(qa));
	ASSERT_EQ(0, destroy(self->sfd, a));
	expect_destroyed(_metadata, qa, false);
	ASSERT_EQ(0, xs_queue_create(self->sfd, 4, &c, NULL));
	ASSERT_EQ(a, c) TH_LOG("the sim did not hand the id out again");
	qc = xs_register(self->cfd, self->sfd, c, 0, &uid_c);
	ASSERT_LE(0, qc) TH_LOG("registering the new queue: %s", xs_err(qc));
	EXPECT_NE(uid_a, uid_c);
	ASSERT_EQ(0, xs_query(qa, &old));
	ASSERT_EQ(0, xs_query(qc, &new));
	EXPECT_EQ(old.hw_queue_id, new.hw_queue_id) TH_LOG("one id, two queues");
	EXPECT_EQ(XSCHED_STATE_FAILED, old.state);
	EXPECT_EQ(XSCHED_STATE_ACTIVE, new.state);
	close(qc);
	close(qa);
}

/*
 * Destroyed while suspended mid-kernel.  Suspend, resume and close of the
 * old registration must never reach the new queue with its id: it runs its
 * kernel to the end, every step exactly once, and is never suspended.
 */
TEST_F(ru, old_registration_never_touches_the_new_queue)
{
	struct xsched_sim_packet pa, pc;
	struct xsched_queue_info info;
	uint64_t seq_a, seq_c, done;
	uint32_t a, c;
	int qa, qc;

	ASSERT_EQ(0, xs_queue_create(self->sfd, 4, &a, NULL));
	qa = xs_register(self->cfd, self->sfd, a, 0, NULL);
	ASSERT_LE(0, qa);
	pa = xs_mark_packet(1, 400, 10 * XS_MS, 11, self->out.gpu_addr, 0);
	xs_marks_clear(&pa, self->out.map);
	ASSERT_EQ(0, xs_submit(self->sfd, a, &pa, 1, &seq_a));
	ASSERT_EQ(0, xs_wait_steps(qa, 1, WAIT_NS));
	ASSERT_EQ(0, xs_suspend(qa, XSCHED_MODE_SAVE, 0, 0, NULL));
	ASSERT_EQ(XSCHED_STATE_SUSPENDED, xs_state(qa));
	ASSERT_EQ(0, destroy(self->sfd, a));
	expect_destroyed(_metadata, qa, false);

	ASSERT_EQ(0, xs_queue_create(self->sfd, 4, &c, NULL));
	ASSERT_EQ(a, c);
	/* Long enough to be running through everything below. */
	pc = xs_mark_packet(self->slots, 20, 10 * XS_MS, 12,
			    self->out.gpu_addr + 2 * self->slots * sizeof(uint64_t), 0);
	xs_marks_clear(&pc, self->out.map + 2 * self->slots);
	ASSERT_EQ(0, xs_submit(self->sfd, c, &pc, 1, &seq_c));
	qc = xs_register(self->cfd, self->sfd, c, 0, NULL);
	ASSERT_LE(0, qc);
	ASSERT_EQ(0, xs_wait_steps(qc, 1, WAIT_NS));

	EXPECT_EQ(-EIO, xs_suspend(qa, XSCHED_MODE_SAVE, 0, 0, NULL));
	EXPECT_EQ(-EIO, xs_suspend(qa, XSCHED_MODE_DRAIN, XSCHED_SUSPEND_NONBLOCK,
				   0, NULL));
	EXPECT_EQ(-EIO, xs_resume(qa, NULL));
	ASSERT_EQ(0, xs_query(qc, &info));
	EXPECT_EQ(XSCHED_STATE_ACTIVE, info.state)
		TH_LOG("the new queue is %s", xs_state_name(info.state));
	close(qa);

	ASSERT_EQ(0, xs_wait(self->sfd, c, seq_c, WAIT_NS, &done));
	ASSERT_EQ(0, xs_query(qc, &info));
	EXPECT_EQ(0, info.suspends) TH_LOG("the new queue was suspended");
	EXPECT_EQ(0, info.faults);
	EXPECT_EQ((uint64_t)self->slots * 20, info.steps_done);
	{
		uint64_t want[self->slots];

		xs_ref_packet(&pc, NULL, want);
		EXPECT_EQ(-1, xs_first_mismatch(self->out.map + 2 * self->slots,
						want, self->slots));
	}
	XS_EXPECT_MARKS(&pc, self->out.map + 2 * self->slots);
	close(qc);
}

/*
 * A busy urgent queue destroyed under its registration must stop holding
 * the batch queue below it: the arbiter sees it FAILED, not busy.  A new
 * queue with its id then registers at its priority (no EEXIST).
 */
TEST_F(ru, destroyed_busy_urgent_queue_releases_the_batch)
{
	struct xsched_sim_packet batch, urgent;
	uint64_t seq_b, seq_u;
	uint32_t b, u, c;
	int qb, qu, qc;

	ASSERT_EQ(0, xs_queue_create(self->sfd, 4, &b, NULL));
	qb = xs_register_flags(self->cfd, self->sfd, b, -1, XSCHED_REGISTER_ARBITRATE, NULL);
	ASSERT_LE(0, qb) TH_LOG("register arbitrated: %s", xs_err(qb));
	batch = xs_mark_packet(self->slots, 20, 10 * XS_MS, 21, self->out.gpu_addr, 0);
	xs_marks_clear(&batch, self->out.map);
	ASSERT_EQ(0, xs_submit(self->sfd, b, &batch, 1, &seq_b));
	ASSERT_EQ(0, xs_wait_steps(qb, 1, WAIT_NS));

	ASSERT_EQ(0, xs_queue_create(self->sfd, 4, &u, NULL));
	qu = xs_register_flags(self->cfd, self->sfd, u, 0, XSCHED_REGISTER_ARBITRATE, NULL);
	ASSERT_LE(0, qu);
	/* Busy far beyond the test: only its end can release the batch. */
	urgent = xs_packet(1, 100000, 10 * XS_MS, 22,
			   self->out.gpu_addr + 2 * self->slots * sizeof(uint64_t), 0);
	ASSERT_EQ(0, xs_submit(self->sfd, u, &urgent, 1, &seq_u));
	ASSERT_EQ(0, xs_wait_state(qb, XSCHED_STATE_SUSPENDED, WAIT_NS));

	ASSERT_EQ(0, destroy(self->sfd, u));
	expect_destroyed(_metadata, qu, true);
	EXPECT_EQ(0, xs_wait_state(qb, XSCHED_STATE_ACTIVE, WAIT_NS))
		TH_LOG("the batch stays %s behind a destroyed queue",
		       xs_state_name(xs_state(qb)));

	ASSERT_EQ(0, xs_queue_create(self->sfd, 4, &c, NULL));
	ASSERT_EQ(u, c);
	qc = xs_register_flags(self->cfd, self->sfd, c, 0, XSCHED_REGISTER_ARBITRATE, NULL);
	ASSERT_LE(0, qc) TH_LOG("registering the new queue: %s", xs_err(qc));
	ASSERT_EQ(0, xs_wait(self->sfd, b, seq_b, WAIT_NS, NULL));
	{
		uint64_t want[self->slots];

		xs_ref_packet(&batch, NULL, want);
		EXPECT_EQ(-1, xs_first_mismatch(self->out.map, want, self->slots));
	}
	XS_EXPECT_MARKS(&batch, self->out.map);
	close(qc);
	close(qu);
	close(qb);
}

/*
 * The destroyed queue's ring address is free at once, as its id is, even
 * while a registration keeps the dead queue: a new queue created with the
 * same address gets it (no EEXIST), and registering by that ring finds the
 * new queue, never the dead one.
 */
TEST_F(ru, destroyed_ring_is_free_for_the_next_queue)
{
	static uint64_t ring[2];	/* stands for the runtime's ring */
	struct xsched_sim_queue_create c = { .ring_size = 4 };
	struct xsched_register r = {
		.backend = XSCHED_BACKEND_SIM,
		.flags = XSCHED_REGISTER_BY_RING,
	};
	struct xsched_queue_info info;
	uint32_t a, uid_a, uid_c;
	int qa, qc, ret;

	c.ring_addr = (uint64_t)(uintptr_t)ring;
	r.handle = c.ring_addr;
	ASSERT_EQ(0, xs_ioctl(self->sfd, XSCHED_IOC_SIM_QUEUE_CREATE, &c));
	a = c.queue_id;
	qa = xs_register(self->cfd, self->sfd, a, 0, &uid_a);
	ASSERT_LE(0, qa);
	ASSERT_EQ(0, destroy(self->sfd, a));
	expect_destroyed(_metadata, qa, false);
	/* Gone with its queue: nothing to register by that ring now. */
	EXPECT_EQ(-ENOENT, xs_ioctl(self->cfd, XSCHED_IOC_REGISTER, &r));

	c.queue_id = 0;
	ret = xs_ioctl(self->sfd, XSCHED_IOC_SIM_QUEUE_CREATE, &c);
	ASSERT_EQ(0, ret)
		TH_LOG("a new queue with the destroyed queue's ring address: %s",
		       xs_err(ret));
	EXPECT_EQ(a, c.queue_id);
	qc = xs_ioctl(self->cfd, XSCHED_IOC_REGISTER, &r);
	ASSERT_LE(0, qc) TH_LOG("register by ring: %s", xs_err(qc));
	uid_c = r.queue_uid;
	EXPECT_NE(uid_a, uid_c);
	ASSERT_EQ(0, xs_query(qc, &info));
	EXPECT_EQ(XSCHED_STATE_ACTIVE, info.state)
		TH_LOG("by ring: %s", xs_state_name(info.state));
	close(qc);
	close(qa);
}

TEST_HARNESS_MAIN
