// SPDX-License-Identifier: GPL-2.0
/*
 * uapi_mem: the sim's MEM_ALLOC, mmap and QUEUE_CREATE against every bad
 * input, with the exact errno, and their limits and copy-out faults.
 */

#include "xsched_uapi.h"

TEST_F(uapi, mem_alloc_rejects_flags_and_reserved)
{
	struct xsched_sim_mem m;
	int i;

	memset(&m, 0, sizeof(m));
	m.size = XS_PAGE;
	m.flags = 1;
	EXPECT_EQ(-EINVAL, xs_ioctl(self->sfd, XSCHED_IOC_SIM_MEM_ALLOC, &m));
	m.flags = 0x80000000;
	EXPECT_EQ(-EINVAL, xs_ioctl(self->sfd, XSCHED_IOC_SIM_MEM_ALLOC, &m));
	m.flags = 0;
	m.reserved0 = 1;
	EXPECT_EQ(-EINVAL, xs_ioctl(self->sfd, XSCHED_IOC_SIM_MEM_ALLOC, &m));
	m.reserved0 = 0;
	for (i = 0; i < 2; i++) {
		m.reserved[i] = 1ULL << 63;
		EXPECT_EQ(-EINVAL, xs_ioctl(self->sfd, XSCHED_IOC_SIM_MEM_ALLOC, &m))
			TH_LOG("reserved[%d]", i);
		m.reserved[i] = 0;
	}
	/* the same struct with everything zeroed is accepted */
	EXPECT_EQ(0, xs_ioctl(self->sfd, XSCHED_IOC_SIM_MEM_ALLOC, &m));
}

TEST_F(uapi, mem_alloc_rejects_bad_sizes)
{
	const uint64_t bad[] = {
		0, XSCHED_SIM_MEM_MAX + 1, XSCHED_SIM_MEM_MAX + XS_PAGE,
		1ULL << 40, ~0ULL, ~0ULL - XS_PAGE + 2,	/* wraps when rounded */
	};
	uint64_t addr;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, xs_mem_alloc(self->sfd, bad[i], &addr))
			TH_LOG("size %#" PRIx64, bad[i]);
	}
	EXPECT_EQ(0, xs_mem_alloc(self->sfd, 1, &addr));
	/* the largest size is legal; only memory pressure may refuse it */
	ret = xs_mem_alloc(self->sfd, XSCHED_SIM_MEM_MAX, &addr);
	EXPECT_TRUE(ret == 0 || ret == -ENOMEM)
		TH_LOG("size XSCHED_SIM_MEM_MAX: expected 0 or ENOMEM, got %s",
		       xs_err(ret));
}

TEST_F(uapi, mem_alloc_limit_is_enospc)
{
	uint64_t addr[XSCHED_SIM_MEM_BUFFERS];
	int i, j;

	for (i = 0; i < XSCHED_SIM_MEM_BUFFERS; i++) {
		ASSERT_EQ(0, xs_mem_alloc(self->sfd, XS_PAGE, &addr[i]))
			TH_LOG("buffer %d of %d", i, XSCHED_SIM_MEM_BUFFERS);
		for (j = 0; j < i; j++) {
			ASSERT_NE(addr[j], addr[i]);
		}
	}
	EXPECT_EQ(-ENOSPC, xs_mem_alloc(self->sfd, XS_PAGE, NULL));
	EXPECT_EQ(-ENOSPC, xs_mem_alloc(self->sfd, 1, NULL));
}

TEST_F(uapi, mem_size_rounds_up_to_pages)
{
	uint64_t one, more;
	void *p;

	ASSERT_EQ(0, xs_mem_alloc(self->sfd, 1, &one));
	EXPECT_EQ(0, one % XS_PAGE) TH_LOG("gpu_addr %#" PRIx64, one);
	p = mmap(NULL, XS_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, self->sfd,
		 (off_t)one);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("1-byte buffer, 1 page: %s", strerror(errno));
	memset(p, 0x5a, XS_PAGE);
	munmap(p, XS_PAGE);
	p = mmap(NULL, 2 * XS_PAGE, PROT_READ, MAP_SHARED, self->sfd, (off_t)one);
	EXPECT_EQ(MAP_FAILED, p) TH_LOG("1-byte buffer mapped as 2 pages");
	if (p == MAP_FAILED) {
		EXPECT_EQ(EINVAL, errno);
	} else {
		munmap(p, 2 * XS_PAGE);
	}

	ASSERT_EQ(0, xs_mem_alloc(self->sfd, XS_PAGE + 1, &more));
	p = mmap(NULL, 2 * XS_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->sfd, (off_t)more);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("page+1 buffer, 2 pages: %s", strerror(errno));
	memset(p, 0x5a, 2 * XS_PAGE);
	munmap(p, 2 * XS_PAGE);
	p = mmap(NULL, 3 * XS_PAGE, PROT_READ, MAP_SHARED, self->sfd, (off_t)more);
	EXPECT_EQ(MAP_FAILED, p) TH_LOG("page+1 buffer mapped as 3 pages");
	if (p == MAP_FAILED) {
		EXPECT_EQ(EINVAL, errno);
	} else {
		munmap(p, 3 * XS_PAGE);
	}
}

TEST_F(uapi, mmap_unknown_offset_is_einval)
{
	uint64_t addr, off;
	void *p;

	ASSERT_EQ(0, xs_mem_alloc(self->sfd, XS_PAGE, &addr));
	/* far past every buffer this client has */
	off = addr + (1ULL << 36);
	p = mmap(NULL, XS_PAGE, PROT_READ, MAP_SHARED, self->sfd, (off_t)off);
	EXPECT_EQ(MAP_FAILED, p);
	if (p == MAP_FAILED) {
		EXPECT_EQ(EINVAL, errno);
	}
	/* a client with no buffers at all */
	{
		int cfd2, sfd2;

		ASSERT_EQ(0, xs_client_open(&cfd2, NULL));
		ASSERT_EQ(0, xs_sim_open(&sfd2, NULL));
		p = mmap(NULL, XS_PAGE, PROT_READ, MAP_SHARED, sfd2, (off_t)addr);
		EXPECT_EQ(MAP_FAILED, p) TH_LOG("another client's buffer mapped");
		if (p == MAP_FAILED) {
			EXPECT_EQ(EINVAL, errno);
		}
		close(sfd2);
		close(cfd2);
	}
}

TEST_F(uapi, mmap_shows_kernel_writes)
{
	struct xsched_sim_packet p;
	struct xs_buf dst;
	uint64_t ref[64], seq, *second;
	uint32_t id;

	ASSERT_EQ(0, xs_buf_alloc(self->sfd, sizeof(ref), &dst));
	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id, NULL));
	second = mmap(NULL, XS_PAGE, PROT_READ, MAP_SHARED, self->sfd,
		      (off_t)dst.gpu_addr);
	ASSERT_NE(MAP_FAILED, second);
	p = xs_packet(64, 7, 0, 0x1234, dst.gpu_addr, 0);
	xs_ref_packet(&p, NULL, ref);
	ASSERT_EQ(0, xs_submit(self->sfd, id, &p, 1, &seq));
	ASSERT_EQ(0, xs_wait(self->sfd, id, seq, 20 * XS_SEC, NULL));
	EXPECT_EQ(-1, xs_first_mismatch(dst.map, ref, 64));
	EXPECT_EQ(-1, xs_first_mismatch(second, ref, 64));
	munmap(second, XS_PAGE);
}

TEST_F(uapi, queue_create_rejects_bad_ring_sizes)
{
	const uint32_t bad[] = { 0, 1, 3, 6, 100, 4095, 4097, 8192, 1U << 31,
				 ~0U };
	uint32_t id;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, xs_queue_create(self->sfd, bad[i], &id, NULL))
			TH_LOG("ring_size %u", bad[i]);
	}
	EXPECT_EQ(0, xs_queue_create(self->sfd, 2, &id, NULL));
	EXPECT_EQ(0, xs_queue_create(self->sfd, XSCHED_SIM_RING_MAX, &id, NULL));
}

TEST_F(uapi, queue_create_rejects_flags_and_reserved)
{
	struct xsched_sim_queue_create c;
	int i;

	memset(&c, 0, sizeof(c));
	c.ring_size = 8;
	c.flags = 1;
	EXPECT_EQ(-EINVAL, xs_ioctl(self->sfd, XSCHED_IOC_SIM_QUEUE_CREATE, &c));
	c.flags = 0;
	c.reserved0 = 1;
	EXPECT_EQ(-EINVAL, xs_ioctl(self->sfd, XSCHED_IOC_SIM_QUEUE_CREATE, &c));
	c.reserved0 = 0;
	for (i = 0; i < (int)XS_ARRAY_SIZE(c.reserved); i++) {
		c.reserved[i] = 1;
		EXPECT_EQ(-EINVAL, xs_ioctl(self->sfd, XSCHED_IOC_SIM_QUEUE_CREATE, &c))
			TH_LOG("reserved[%d]", i);
		c.reserved[i] = 0;
	}
	EXPECT_EQ(0, xs_ioctl(self->sfd, XSCHED_IOC_SIM_QUEUE_CREATE, &c));
	EXPECT_GT(c.save_area_size, 0);
}

TEST_F(uapi, queue_create_limit_is_enospc)
{
	uint32_t ids[XSCHED_SIM_QUEUES];
	uint64_t save;
	int i, j;

	for (i = 0; i < XSCHED_SIM_QUEUES; i++) {
		ASSERT_EQ(0, xs_queue_create(self->sfd, 2, &ids[i], &save))
			TH_LOG("queue %d of %d", i, XSCHED_SIM_QUEUES);
		EXPECT_GT(save, 0);
		for (j = 0; j < i; j++) {
			ASSERT_NE(ids[j], ids[i]);
		}
	}
	EXPECT_EQ(-ENOSPC, xs_queue_create(self->sfd, 2, NULL, NULL));
	/* the limit is per client */
	{
		int cfd2, sfd2;

		ASSERT_EQ(0, xs_client_open(&cfd2, NULL));
		ASSERT_EQ(0, xs_sim_open(&sfd2, NULL));
		EXPECT_EQ(0, xs_queue_create(sfd2, 2, NULL, NULL));
		close(sfd2);
		close(cfd2);
	}
}

TEST_F(uapi, mem_alloc_efault_on_copy_out_leaks_nothing)
{
	struct xsched_sim_mem m = { .size = XS_PAGE };
	void *ro = xs_read_only_copy(&m, sizeof(m));
	int i, ret;

	ASSERT_NE(NULL, ro);
	/* more failed attempts than the per-client limit */
	for (i = 0; i < XSCHED_SIM_MEM_BUFFERS + 8; i++) {
		ret = xs_ioctl(self->sfd, XSCHED_IOC_SIM_MEM_ALLOC, ro);
		ASSERT_EQ(-EFAULT, ret)
			TH_LOG("attempt %d with a read-only arg: %s (%d buffers leaked?)",
			       i, xs_err(ret), i);
	}
	ret = xs_mem_alloc(self->sfd, XS_PAGE, NULL);
	EXPECT_EQ(0, ret) TH_LOG("buffers leaked by EFAULT: %s", xs_err(ret));
}

TEST_F(uapi, queue_create_efault_on_copy_out_leaks_nothing)
{
	struct xsched_sim_queue_create c = { .ring_size = 2 };
	void *ro = xs_read_only_copy(&c, sizeof(c));
	int i, ret;

	ASSERT_NE(NULL, ro);
	for (i = 0; i < XSCHED_SIM_QUEUES + 8; i++) {
		ret = xs_ioctl(self->sfd, XSCHED_IOC_SIM_QUEUE_CREATE, ro);
		ASSERT_EQ(-EFAULT, ret)
			TH_LOG("attempt %d with a read-only arg: %s (%d queues leaked?)",
			       i, xs_err(ret), i);
	}
	ret = xs_queue_create(self->sfd, 2, NULL, NULL);
	EXPECT_EQ(0, ret) TH_LOG("queues leaked by EFAULT: %s", xs_err(ret));
}

TEST_HARNESS_MAIN
