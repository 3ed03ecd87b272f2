// SPDX-License-Identifier: GPL-2.0
/*
 * ring: sim queues named by ring address (struct xsched_sim_queue_create
 * ring_addr) and registered by it (XSCHED_REGISTER_BY_RING), the stand-in
 * for KFD's ring base: a process finds its own queue through any of its sim
 * fds, never another process's, and the uAPI's errnos hold.  A queue
 * registered by ring suspends (SAVE) and resumes like any other.
 */
#include <signal.h>
#include <sys/wait.h>

#include "xsched_test.h"

FIXTURE(ring) {
	int cfd;
	struct xsched_version ver;
	int sfd;
	struct xsched_sim_info sim;
	void *page;		/* its addresses stand in for HSA rings */
	uint64_t ring;
};

FIXTURE_SETUP(ring)
{
	XS_CLIENT_OPEN_OR_SKIP(self->cfd, self->ver);
	XS_SIM_OPEN_OR_SKIP(self->sfd, self->sim);
	self->page = mmap(NULL, 4 * XS_PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->page);
	self->ring = (uint64_t)(uintptr_t)self->page;
}

FIXTURE_TEARDOWN(ring)
{
	if (self->cfd >= 0)
		close(self->cfd);
	/* 0 if the client was missing: setup skipped before the sim */
	if (self->sfd > 0)
		close(self->sfd);
}

static int ring_queue_create(int sfd, uint64_t ring_addr, uint32_t *id)
{
	struct xsched_sim_queue_create c = {
		.ring_size = 8,
		.ring_addr = ring_addr,
	};
	int ret = xs_ioctl(sfd, XSCHED_IOC_SIM_QUEUE_CREATE, &c);

	if (ret >= 0 && id)
		*id = c.queue_id;
	return ret < 0 ? ret : 0;
}

/* The queue fd or -errno. */
static int register_ring(int cfd, uint32_t backend, uint64_t ring,
			 uint32_t backend_fd, uint32_t *uid)
{
	struct xsched_register r = {
		.backend = backend,
		.flags = XSCHED_REGISTER_BY_RING,
		.handle = ring,
		.backend_fd = backend_fd,
	};
	int ret = xs_ioctl(cfd, XSCHED_IOC_REGISTER, &r);

	if (ret >= 0 && uid)
		*uid = r.queue_uid;
	return ret;
}

TEST_F(ring, register_by_ring_finds_the_queue_of_any_own_sim_fd)
{
	struct xsched_queue_info info;
	uint32_t id, uid, id2;
	int sfd2, qfd;

	/* a second sim fd makes the queue; the client never saw that fd */
	ASSERT_EQ(0, xs_sim_open(&sfd2, NULL));
	ASSERT_EQ(0, ring_queue_create(self->sfd, self->ring + XS_PAGE, &id));
	ASSERT_EQ(0, ring_queue_create(sfd2, self->ring, &id2));
	qfd = register_ring(self->cfd, XSCHED_BACKEND_SIM, self->ring, 0, &uid);
	ASSERT_LE(0, qfd) TH_LOG("register by ring: %s", xs_err(qfd));
	ASSERT_EQ(0, xs_query(qfd, &info));
	EXPECT_EQ(XSCHED_BACKEND_SIM, info.backend);
	EXPECT_EQ(uid, info.queue_uid);
	/* it is sfd2's queue id2, not sfd's: registering that by id is EEXIST */
	EXPECT_EQ(-EEXIST, xs_register(self->cfd, sfd2, id2, 0, NULL));
	close(qfd);
	close(sfd2);
}

TEST_F(ring, register_by_ring_bad_arguments_are_einval)
{
	uint32_t id;

	ASSERT_EQ(0, ring_queue_create(self->sfd, self->ring, &id));
	EXPECT_EQ(-EINVAL, register_ring(self->cfd, XSCHED_BACKEND_SIM, 0, 0, NULL))
		TH_LOG("ring 0 names no queue");
	EXPECT_EQ(-EINVAL, register_ring(self->cfd, XSCHED_BACKEND_SIM, self->ring,
					 (uint32_t)self->sfd, NULL))
		TH_LOG("backend_fd must be 0 by ring");
	EXPECT_EQ(-EINVAL, register_ring(self->cfd, XSCHED_BACKEND_KFD, self->ring,
					 (uint32_t)self->sfd, NULL));
}

TEST_F(ring, register_by_unknown_ring_is_enoent)
{
	uint32_t id;

	/* a queue without a ring address is found by id only */
	ASSERT_EQ(0, ring_queue_create(self->sfd, 0, &id));
	EXPECT_EQ(-ENOENT, register_ring(self->cfd, XSCHED_BACKEND_SIM, self->ring, 0, NULL));
	ASSERT_EQ(0, ring_queue_create(self->sfd, self->ring, &id));
	EXPECT_EQ(-ENOENT, register_ring(self->cfd, XSCHED_BACKEND_SIM,
					 self->ring + 8, 0, NULL));
}

TEST_F(ring, register_by_ring_twice_is_eexist)
{
	uint32_t id;
	int qfd;

	ASSERT_EQ(0, ring_queue_create(self->sfd, self->ring, &id));
	qfd = register_ring(self->cfd, XSCHED_BACKEND_SIM, self->ring, 0, NULL);
	ASSERT_LE(0, qfd) TH_LOG("register by ring: %s", xs_err(qfd));
	EXPECT_EQ(-EEXIST, register_ring(self->cfd, XSCHED_BACKEND_SIM, self->ring, 0, NULL));
	EXPECT_EQ(-EEXIST, xs_register(self->cfd, self->sfd, id, 0, NULL));
	close(qfd);
	/* and the other way round */
	qfd = xs_register(self->cfd, self->sfd, id, 0, NULL);
	ASSERT_LE(0, qfd);
	EXPECT_EQ(-EEXIST, register_ring(self->cfd, XSCHED_BACKEND_SIM, self->ring, 0, NULL));
	close(qfd);
}

TEST_F(ring, queue_create_with_a_live_ring_of_the_process_is_eexist)
{
	uint32_t id;
	int sfd2;

	ASSERT_EQ(0, ring_queue_create(self->sfd, self->ring, &id));
	EXPECT_EQ(-EEXIST, ring_queue_create(self->sfd, self->ring, NULL));
	ASSERT_EQ(0, xs_sim_open(&sfd2, NULL));
	EXPECT_EQ(-EEXIST, ring_queue_create(sfd2, self->ring, NULL))
		TH_LOG("a ring is unique across the process's sim fds");
	/* no ring address: any number of them */
	EXPECT_EQ(0, ring_queue_create(sfd2, 0, NULL));
	EXPECT_EQ(0, ring_queue_create(sfd2, 0, NULL));
	close(sfd2);
}

/*
 * A closed sim fd's queues are no longer found by ring, even one whose
 * registration keeps it alive, and the address may name a new queue (a
 * runtime that destroys a queue and gets the same ring memory back).
 */
TEST_F(ring, ring_of_a_closed_sim_fd_is_free_for_reuse)
{
	struct xsched_queue_info info;
	uint32_t id, uid_old, uid_new;
	int sfd2, qold, qnew;

	ASSERT_EQ(0, xs_sim_open(&sfd2, NULL));
	ASSERT_EQ(0, ring_queue_create(sfd2, self->ring, &id));
	qold = register_ring(self->cfd, XSCHED_BACKEND_SIM, self->ring, 0, &uid_old);
	ASSERT_LE(0, qold) TH_LOG("register by ring: %s", xs_err(qold));
	close(sfd2);
	EXPECT_EQ(-ENOENT, register_ring(self->cfd, XSCHED_BACKEND_SIM, self->ring, 0, NULL))
		TH_LOG("the closed fd's queue was found by ring");
	ASSERT_EQ(0, ring_queue_create(self->sfd, self->ring, &id))
		TH_LOG("the ring of a closed fd's queue is still taken");
	qnew = register_ring(self->cfd, XSCHED_BACKEND_SIM, self->ring, 0, &uid_new);
	ASSERT_LE(0, qnew) TH_LOG("register the new queue: %s", xs_err(qnew));
	EXPECT_NE(uid_old, uid_new);
	/* the old registration lives on until its fd is closed */
	ASSERT_EQ(0, xs_query(qold, &info));
	EXPECT_EQ(uid_old, info.queue_uid);
	close(qnew);
	close(qold);
}

/* Runs in a child: what registering @ring by ring gives there (0 if found). */
static int child_register(int cfd, uint64_t ring)
{
	int qfd = register_ring(cfd, XSCHED_BACKEND_SIM, ring, 0, NULL);

	if (qfd >= 0)
		close(qfd);
	return qfd < 0 ? qfd : 0;
}

/* The child's result through its exit status: -errno + 128, 0 for found. */
static int wait_child(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -ECHILD;
	return WEXITSTATUS(status) ? WEXITSTATUS(status) - 128 : 0;
}

/*
 * The same virtual address in a forked child names nothing there: the
 * parent's queue is not the child's, even through the inherited sim fd.
 */
TEST_F(ring, another_process_does_not_find_our_ring)
{
	uint32_t id;
	pid_t pid;
	int qfd;

	ASSERT_EQ(0, ring_queue_create(self->sfd, self->ring, &id));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(child_register(self->cfd, self->ring) + 128);
	EXPECT_EQ(-ENOENT, wait_child(pid))
		TH_LOG("the child registered the parent's ring");
	/* the parent still finds it */
	qfd = register_ring(self->cfd, XSCHED_BACKEND_SIM, self->ring, 0, NULL);
	EXPECT_LE(0, qfd) TH_LOG("parent: %s", xs_err(qfd));
	if (qfd >= 0)
		close(qfd);
}

/* ... and we do not find a ring another process created. */
TEST_F(ring, another_process_ring_is_not_found)
{
	int ready[2], go[2];
	char c = 0;
	pid_t pid;

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int sfd2, ret;

		close(ready[0]);
		close(go[1]);
		ret = xs_sim_open(&sfd2, NULL);
		if (!ret)
			ret = ring_queue_create(sfd2, self->ring, NULL);
		if (write(ready[1], &c, 1) != 1 || ret)
			_exit(ret ? ret + 128 : 1);
		/* the parent looks now; then the child finds its own */
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		_exit(child_register(self->cfd, self->ring) + 128);
	}
	close(ready[1]);
	close(go[0]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	EXPECT_EQ(-ENOENT, register_ring(self->cfd, XSCHED_BACKEND_SIM, self->ring, 0, NULL))
		TH_LOG("the parent registered the child's ring");
	/* the parent may create its own queue at the same address */
	EXPECT_EQ(0, ring_queue_create(self->sfd, self->ring, NULL));
	ASSERT_EQ(1, write(go[1], &c, 1));
	EXPECT_EQ(0, wait_child(pid)) TH_LOG("the child did not find its own ring");
	close(ready[0]);
	close(go[1]);
}

/* kfd: a handle is a ring base anyway; the flag changes nothing. */
TEST_F(ring, register_by_ring_on_kfd_is_as_without)
{
	bool kfd = self->ver.backends & (1U << XSCHED_BACKEND_KFD);

	EXPECT_EQ(kfd ? -ENXIO : -ENODEV,
		  register_ring(self->cfd, XSCHED_BACKEND_KFD, self->ring, 0, NULL));
}

/* A queue registered by ring stops partway at SAVE and resumes exactly once. */
TEST_F(ring, suspend_save_and_resume_by_ring)
{
	struct xsched_sim_packet pkt;
	struct xsched_suspend s;
	struct xsched_queue_info info;
	unsigned int slots = xs_slots(&self->sim);
	struct xs_buf dst;
	uint64_t seq;
	uint32_t id;
	int qfd, ret;

	ASSERT_EQ(0, xs_buf_alloc(self->sfd, 4 * slots * sizeof(uint64_t), &dst));
	ASSERT_EQ(0, ring_queue_create(self->sfd, self->ring, &id));
	qfd = register_ring(self->cfd, XSCHED_BACKEND_SIM, self->ring, 0, NULL);
	ASSERT_LE(0, qfd) TH_LOG("register by ring: %s", xs_err(qfd));
	pkt = xs_mark_packet(2 * slots, 400, 100 * XS_US, 0x51de, dst.gpu_addr, 0);
	xs_marks_clear(&pkt, dst.map);
	ASSERT_EQ(0, xs_submit(self->sfd, id, &pkt, 1, &seq));
	ret = xs_wait_steps(qfd, slots, 20 * XS_SEC);
	ASSERT_EQ(0, ret) TH_LOG("kernel did not start: %s", xs_err(ret));
	ASSERT_EQ(0, xs_suspend(qfd, XSCHED_MODE_SAVE, 0, 0, &s));
	ASSERT_EQ(0, xs_query(qfd, &info));
	EXPECT_EQ(XSCHED_STATE_SUSPENDED, info.state);
	EXPECT_LT(0, info.saved_waves) TH_LOG("SAVE left no wave in the save area");
	EXPECT_LT(info.steps_done, xs_packet_steps(&pkt)) TH_LOG("not stopped partway");
	EXPECT_EQ(0, xs_resume(qfd, NULL));
	ASSERT_EQ(0, xs_wait(self->sfd, id, seq, 60 * XS_SEC, NULL));
	XS_EXPECT_MARKS(&pkt, dst.map);
	close(qfd);
	xs_buf_free(&dst);
}

TEST_HARNESS_MAIN
