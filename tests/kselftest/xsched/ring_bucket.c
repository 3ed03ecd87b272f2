// SPDX-License-Identifier: GPL-2.0
/*
 * ring_bucket: BY_RING lookups, the EEXIST check and removal when several
 * rings share one bucket of the sim's ring table.  The rings are chosen
 * with debugfs sim/ring_bucket (the hash mixes in the kernel's mm pointer,
 * which only the module knows); a new queue goes to the head of its
 * bucket, so the queues created first are the ones behind.
 */
#include "xsched_test.h"

#define NRING	3

FIXTURE(rb) {
	int cfd;
	struct xsched_version ver;
	int sfd;
	struct xsched_sim_info sim;
	void *page;		/* its addresses stand in for HSA rings */
	uint64_t ring[NRING];	/* one bucket */
};

FIXTURE_SETUP(rb)
{
	int ret;

	XS_CLIENT_OPEN_OR_SKIP(self->cfd, self->ver);
	XS_SIM_OPEN_OR_SKIP(self->sfd, self->sim);
	XS_DEBUGFS_OR_SKIP();
	self->page = mmap(NULL, XS_PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->page);
	ret = xs_rings_sharing_a_bucket((uint64_t)(uintptr_t)self->page,
					self->ring, NRING);
	ASSERT_EQ(0, ret) TH_LOG("%d rings in one bucket: %s", NRING, xs_err(ret));
}

FIXTURE_TEARDOWN(rb)
{
	if (self->cfd >= 0)
		close(self->cfd);
	if (self->sfd > 0)
		close(self->sfd);
}

/* A sim queue of @sfd created with @ring: 0 (and its id) or -errno. */
static int ring_queue(int sfd, uint64_t ring, uint32_t *id)
{
	struct xsched_sim_queue_create c = {
		.ring_size = 8,
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

/*
 * The sim queue id that XSCHED_REGISTER_BY_RING finds for @ring (the
 * registration is closed again), or -errno.
 */
static int found(int cfd, uint64_t ring)
{
	struct xsched_register r = {
		.backend = XSCHED_BACKEND_SIM,
		.flags = XSCHED_REGISTER_BY_RING,
		.handle = ring,
	};
	struct xsched_queue_info info;
	int qfd, ret;

	qfd = xs_ioctl(cfd, XSCHED_IOC_REGISTER, &r);
	if (qfd < 0)
		return qfd;
	ret = xs_query(qfd, &info);
	close(qfd);
	return ret ? ret : (int)info.hw_queue_id;
}

TEST_F(rb, rings_behind_others_in_their_bucket_are_found)
{
	uint32_t id[NRING], bucket;
	uint64_t other;
	int i;

	for (i = 0; i < NRING; i++)
		ASSERT_EQ(0, ring_queue(self->sfd, self->ring[i], &id[i]));
	/* The first created is last in the bucket. */
	for (i = 0; i < NRING; i++) {
		int want = id[i];

		EXPECT_EQ(want, found(self->cfd, self->ring[i]))
			TH_LOG("ring %d of %d in one bucket (the first created is last): "
			       "expected queue %d", i, NRING, want);
	}
	/* A ring of that bucket that no queue has is still ENOENT. */
	ASSERT_EQ(0, xs_ring_bucket(self->ring[0], &bucket));
	ASSERT_EQ(0, xs_rings_in_bucket(self->ring[NRING - 1] + 64, bucket, &other, 1));
	EXPECT_EQ(-ENOENT, found(self->cfd, other));
}

TEST_F(rb, duplicate_of_a_ring_behind_another_is_eexist)
{
	uint32_t id[NRING];
	int i, sfd2;

	for (i = 0; i < NRING; i++)
		ASSERT_EQ(0, ring_queue(self->sfd, self->ring[i], &id[i]));
	/* Every ring of the bucket, the ones behind the head included. */
	for (i = 0; i < NRING; i++)
		EXPECT_EQ(-EEXIST, ring_queue(self->sfd, self->ring[i], NULL))
			TH_LOG("a second queue with ring %d of %d in one bucket", i, NRING);
	/* The same through another sim fd of the process. */
	ASSERT_EQ(0, xs_sim_open(&sfd2, NULL));
	EXPECT_EQ(-EEXIST, ring_queue(sfd2, self->ring[0], NULL));
	close(sfd2);
}

TEST_F(rb, destroying_one_queue_of_a_bucket_leaves_the_others)
{
	uint32_t id[NRING];
	int i;

	for (i = 0; i < NRING; i++)
		ASSERT_EQ(0, ring_queue(self->sfd, self->ring[i], &id[i]));
	/* The middle one: bucket C B A becomes C A. */
	ASSERT_EQ(0, destroy(self->sfd, id[1]));
	EXPECT_EQ(-ENOENT, found(self->cfd, self->ring[1]));
	EXPECT_EQ((int)id[0], found(self->cfd, self->ring[0]));
	EXPECT_EQ((int)id[2], found(self->cfd, self->ring[2]));
	/* Its ring is free again, and goes to the head: B C A. */
	ASSERT_EQ(0, ring_queue(self->sfd, self->ring[1], &id[1]));
	EXPECT_EQ((int)id[1], found(self->cfd, self->ring[1]));
	/* The last one (A, created first). */
	ASSERT_EQ(0, destroy(self->sfd, id[0]));
	EXPECT_EQ(-ENOENT, found(self->cfd, self->ring[0]));
	EXPECT_EQ((int)id[1], found(self->cfd, self->ring[1]));
	EXPECT_EQ((int)id[2], found(self->cfd, self->ring[2]));
	/* The head (B). */
	ASSERT_EQ(0, destroy(self->sfd, id[1]));
	EXPECT_EQ(-ENOENT, found(self->cfd, self->ring[1]));
	EXPECT_EQ((int)id[2], found(self->cfd, self->ring[2]));
	EXPECT_EQ(0, ring_queue(self->sfd, self->ring[0], NULL));
}

TEST_F(rb, closing_a_sim_fd_leaves_the_other_fds_rings_of_its_bucket)
{
	uint32_t id0, id1, id2;
	int sfd2;

	/* Bucket: ring[2] (sfd), ring[1] (sfd2), ring[0] (sfd). */
	ASSERT_EQ(0, xs_sim_open(&sfd2, NULL));
	ASSERT_EQ(0, ring_queue(self->sfd, self->ring[0], &id0));
	ASSERT_EQ(0, ring_queue(sfd2, self->ring[1], &id1));
	ASSERT_EQ(0, ring_queue(self->sfd, self->ring[2], &id2));
	EXPECT_EQ((int)id1, found(self->cfd, self->ring[1]));
	close(sfd2);
	EXPECT_EQ(-ENOENT, found(self->cfd, self->ring[1]));
	EXPECT_EQ((int)id0, found(self->cfd, self->ring[0]));
	EXPECT_EQ((int)id2, found(self->cfd, self->ring[2]));
	EXPECT_EQ(0, ring_queue(self->sfd, self->ring[1], NULL));
}

TEST_HARNESS_MAIN
