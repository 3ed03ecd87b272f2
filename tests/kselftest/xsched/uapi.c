// SPDX-License-Identifier: GPL-2.0
/*
 * uapi: every ioctl of /dev/xsched and of a queue fd against every bad input
 * the uAPI v1 names, with the exact errno; plus the basic good paths the
 * error checks lean on (sequence numbers, counters, poll, close).
 */
#include <signal.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <linux/capability.h>

#include "xsched_test.h"

FIXTURE(uapi) {
	int cfd;
	struct xsched_version ver;
	int sfd;
	struct xsched_sim_info sim;
	void *guard;		/* a PROT_NONE page: a user pointer that faults */
};

FIXTURE_SETUP(uapi)
{
	XS_CLIENT_OPEN_OR_SKIP(self->cfd, self->ver);
	XS_SIM_OPEN_OR_SKIP(self->sfd, self->sim);
	self->guard = mmap(NULL, XS_PAGE, PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->guard);
}

FIXTURE_TEARDOWN(uapi)
{
	if (self->cfd >= 0)
		close(self->cfd);
	/* 0 if the client was missing: setup skipped before the sim */
	if (self->sfd > 0)
		close(self->sfd);
}

/* User pointers that no ioctl may read or write. */
static void bad_pointers(FIXTURE_DATA(uapi) *self, void *out[3])
{
	out[0] = NULL;
	out[1] = self->guard;
	out[2] = (void *)(uintptr_t)0xffff888000000000ULL;	/* kernel half */
}

/* A sim queue of @ring packets, registered at priority 0. */
static int make_queue(int cfd, int sfd, uint32_t ring, uint32_t *id, uint32_t *uid)
{
	int ret = xs_queue_create(sfd, ring, id, NULL);

	return ret ? ret : xs_register(cfd, sfd, *id, 0, uid);
}

TEST_F(uapi, version_reports_api_and_sim_backend)
{
	struct xsched_version v;
	int i;

	memset(&v, 0xff, sizeof(v));
	ASSERT_EQ(0, xs_ioctl(self->cfd, XSCHED_IOC_VERSION, &v));
	EXPECT_EQ(XSCHED_API_VERSION, v.api_version);
	EXPECT_TRUE(v.backends & (1U << XSCHED_BACKEND_SIM))
		TH_LOG("backends 0x%x lacks the sim bit", v.backends);
	EXPECT_EQ(0, v.backends & ~((1U << XSCHED_BACKEND_SIM) |
				     (1U << XSCHED_BACKEND_KFD)));
	for (i = 0; i < (int)XS_ARRAY_SIZE(v.reserved0); i++)
		EXPECT_EQ(0, v.reserved0[i]) TH_LOG("reserved0[%d]", i);
	for (i = 0; i < (int)XS_ARRAY_SIZE(v.reserved); i++)
		EXPECT_EQ(0, v.reserved[i]) TH_LOG("reserved[%d]", i);
	EXPECT_GT(self->sim.cus, 0);
	EXPECT_GT(self->sim.waves_per_cu, 0);
	EXPECT_GT(self->sim.wave_state_bytes, 0);
	ksft_print_msg("sim GPU: %u CUs x %u waves, %u bytes per saved wave, backends 0x%x\n",
		       self->sim.cus, self->sim.waves_per_cu,
		       self->sim.wave_state_bytes, v.backends);
}

TEST_F(uapi, unknown_ioctl_on_client_fd_is_enotty)
{
	char buf[256] = { 0 };
	const unsigned long cmds[] = {
		_IO(XSCHED_IOC_MAGIC, 0x3f),
		_IOWR(XSCHED_IOC_MAGIC, 0x07, struct xsched_version),
		_IOWR(XSCHED_IOC_MAGIC, 0x3f, struct xsched_version),
		/* a known number with the wrong direction (a short size: EINVAL) */
		_IOW(XSCHED_IOC_MAGIC, 0x01, struct xsched_sim_mem),
		_IOWR(0xC7, 0x00, struct xsched_version),
		TCGETS,
	};
	size_t i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		EXPECT_EQ(-ENOTTY, xs_ioctl(self->cfd, cmds[i], buf))
			TH_LOG("cmd 0x%lx", cmds[i]);
	}
}

TEST_F(uapi, unknown_ioctl_on_queue_fd_is_enotty)
{
	char buf[256] = { 0 };
	const unsigned long cmds[] = {
		_IO(XSCHED_IOC_MAGIC, 0x44),
		_IOWR(XSCHED_IOC_MAGIC, 0x44, struct xsched_queue_info),
		_IOWR(XSCHED_IOC_MAGIC, 0x7f, struct xsched_suspend),
		_IOR(XSCHED_IOC_MAGIC, 0x42, __u64),
		TCGETS,
	};
	uint32_t id, uid;
	size_t i;
	int qfd;

	qfd = make_queue(self->cfd, self->sfd, 8, &id, &uid);
	ASSERT_LE(0, qfd) TH_LOG("register: %s", xs_err(qfd));
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		EXPECT_EQ(-ENOTTY, xs_ioctl(qfd, cmds[i], buf))
			TH_LOG("cmd 0x%lx", cmds[i]);
	}
	close(qfd);
}

TEST_F(uapi, client_ioctls_on_queue_fd_are_enotty)
{
	struct xsched_version v = { 0 };
	struct xsched_sim_mem m = { .size = XS_PAGE };
	struct xsched_sim_queue_create c = { .ring_size = 8 };
	struct xsched_sim_packet p = xs_packet(1, 1, 0, 1, 0, 0);
	struct xsched_sim_submit s = { .count = 1, .packets = (uintptr_t)&p };
	struct xsched_sim_wait w = { .seq = 1 };
	struct xsched_register r = { .backend = XSCHED_BACKEND_SIM };
	struct xsched_kfd_attach a = { .kfd_fd = 0 };
	uint32_t id, uid;
	int qfd;

	qfd = make_queue(self->cfd, self->sfd, 8, &id, &uid);
	ASSERT_LE(0, qfd) TH_LOG("register: %s", xs_err(qfd));
	s.queue_id = id;
	w.queue_id = id;
	r.handle = id;
	EXPECT_EQ(-ENOTTY, xs_ioctl(qfd, XSCHED_IOC_VERSION, &v));
	EXPECT_EQ(-ENOTTY, xs_ioctl(qfd, XSCHED_IOC_SIM_MEM_ALLOC, &m));
	EXPECT_EQ(-ENOTTY, xs_ioctl(qfd, XSCHED_IOC_SIM_QUEUE_CREATE, &c));
	EXPECT_EQ(-ENOTTY, xs_ioctl(qfd, XSCHED_IOC_SIM_SUBMIT, &s));
	EXPECT_EQ(-ENOTTY, xs_ioctl(qfd, XSCHED_IOC_SIM_WAIT, &w));
	EXPECT_EQ(-ENOTTY, xs_ioctl(qfd, XSCHED_IOC_REGISTER, &r));
	EXPECT_EQ(-ENOTTY, xs_ioctl(qfd, XSCHED_IOC_KFD_ATTACH, &a));
	/* mmap of device memory belongs to the client fd too */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, XS_PAGE, PROT_READ, MAP_SHARED, qfd, 0));
	close(qfd);
}

TEST_F(uapi, queue_ioctls_on_client_fd_are_enotty)
{
	struct xsched_suspend s = { .mode = XSCHED_MODE_SAVE };
	struct xsched_resume r = { 0 };
	struct xsched_queue_info i = { 0 };
	struct xsched_set_priority p = { 0 };

	EXPECT_EQ(-ENOTTY, xs_ioctl(self->cfd, XSCHED_IOC_SUSPEND, &s));
	EXPECT_EQ(-ENOTTY, xs_ioctl(self->cfd, XSCHED_IOC_RESUME, &r));
	EXPECT_EQ(-ENOTTY, xs_ioctl(self->cfd, XSCHED_IOC_QUERY, &i));
	EXPECT_EQ(-ENOTTY, xs_ioctl(self->cfd, XSCHED_IOC_SET_PRIORITY, &p));
}

TEST_F(uapi, bad_pointer_is_efault_for_every_client_ioctl)
{
	/* the client's, then the sim fd's (sim: 1) */
	const struct { unsigned long cmd; int sim; } cmds[] = {
		{ XSCHED_IOC_VERSION, 0 }, { XSCHED_IOC_REGISTER, 0 },
		{ XSCHED_IOC_KFD_ATTACH, 0 }, { XSCHED_IOC_SIM_INFO, 1 },
		{ XSCHED_IOC_SIM_MEM_ALLOC, 1 }, { XSCHED_IOC_SIM_QUEUE_CREATE, 1 },
		{ XSCHED_IOC_SIM_SUBMIT, 1 }, { XSCHED_IOC_SIM_WAIT, 1 },
	};
	void *bad[3];
	size_t i, j;

	bad_pointers(self, bad);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		for (j = 0; j < 3; j++) {
			EXPECT_EQ(-EFAULT, xs_ioctl(cmds[i].sim ? self->sfd : self->cfd,
						    cmds[i].cmd, bad[j]))
				TH_LOG("cmd 0x%lx, pointer %p", cmds[i].cmd, bad[j]);
		}
	}
}

TEST_F(uapi, bad_pointer_is_efault_for_every_queue_ioctl)
{
	const unsigned long cmds[] = {
		XSCHED_IOC_SUSPEND, XSCHED_IOC_RESUME, XSCHED_IOC_QUERY,
		XSCHED_IOC_SET_PRIORITY,
	};
	uint32_t id, uid;
	void *bad[3];
	size_t i, j;
	int qfd;

	qfd = make_queue(self->cfd, self->sfd, 8, &id, &uid);
	ASSERT_LE(0, qfd) TH_LOG("register: %s", xs_err(qfd));
	bad_pointers(self, bad);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		for (j = 0; j < 3; j++) {
			EXPECT_EQ(-EFAULT, xs_ioctl(qfd, cmds[i], bad[j]))
				TH_LOG("cmd 0x%lx, pointer %p", cmds[i], bad[j]);
		}
	}
	/* none of them changed the queue */
	EXPECT_EQ(XSCHED_STATE_ACTIVE, xs_state(qfd));
	close(qfd);
}

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
	bad_pointers(self, bad);
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
	qfd = make_queue(self->cfd, self->sfd, 2, &id, &uid);
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

TEST_F(uapi, register_rejects_bad_backend_flags_reserved)
{
	struct xsched_register r;
	uint32_t id;
	int i, qfd;

	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id, NULL));
	memset(&r, 0, sizeof(r));
	r.backend = XSCHED_BACKEND_SIM;
	r.handle = id;
	r.backend = 2;
	EXPECT_EQ(-EINVAL, xs_ioctl(self->cfd, XSCHED_IOC_REGISTER, &r));
	r.backend = ~0U;
	EXPECT_EQ(-EINVAL, xs_ioctl(self->cfd, XSCHED_IOC_REGISTER, &r));
	r.backend = XSCHED_BACKEND_SIM;
	r.flags = XSCHED_REGISTER_FLAGS + 1;	/* the lowest undefined bit */
	EXPECT_EQ(-EINVAL, xs_ioctl(self->cfd, XSCHED_IOC_REGISTER, &r));
	r.flags = 1U << 31;
	EXPECT_EQ(-EINVAL, xs_ioctl(self->cfd, XSCHED_IOC_REGISTER, &r));
	r.flags = 0;
	/* backend_fd must be a sim fd (here: the client), an open fd, 0 for kfd */
	r.backend_fd = (__u32)self->cfd;
	EXPECT_EQ(-EINVAL, xs_ioctl(self->cfd, XSCHED_IOC_REGISTER, &r));
	r.backend_fd = 100000;
	EXPECT_EQ(-EBADF, xs_ioctl(self->cfd, XSCHED_IOC_REGISTER, &r));
	r.backend = XSCHED_BACKEND_KFD;
	r.backend_fd = (__u32)self->sfd;
	EXPECT_EQ(-EINVAL, xs_ioctl(self->cfd, XSCHED_IOC_REGISTER, &r));
	r.backend = XSCHED_BACKEND_SIM;
	r.backend_fd = (__u32)self->sfd;
	for (i = 0; i < 2; i++) {
		r.reserved[i] = 1;
		EXPECT_EQ(-EINVAL, xs_ioctl(self->cfd, XSCHED_IOC_REGISTER, &r))
			TH_LOG("reserved[%d]", i);
		r.reserved[i] = 0;
	}
	/* the rejected attempts registered nothing */
	qfd = xs_ioctl(self->cfd, XSCHED_IOC_REGISTER, &r);
	EXPECT_LE(0, qfd) TH_LOG("register after rejects: %s", xs_err(qfd));
	if (qfd >= 0)
		close(qfd);
}

TEST_F(uapi, register_rejects_priority_out_of_range)
{
	const int32_t bad[] = { XSCHED_PRIO_MIN - 1, XSCHED_PRIO_MAX + 1,
				INT32_MIN, INT32_MAX };
	uint32_t id;
	size_t i;
	int qfd;

	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id, NULL));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, xs_register(self->cfd, self->sfd, id, bad[i], NULL))
			TH_LOG("priority %d", bad[i]);
	}
	qfd = xs_register(self->cfd, self->sfd, id, XSCHED_PRIO_MIN, NULL);
	ASSERT_LE(0, qfd) TH_LOG("priority MIN: %s", xs_err(qfd));
	close(qfd);
	/* root (CAP_SYS_NICE) may use the top priority */
	qfd = xs_register(self->cfd, self->sfd, id, XSCHED_PRIO_MAX, NULL);
	ASSERT_LE(0, qfd) TH_LOG("priority MAX: %s", xs_err(qfd));
	close(qfd);
}

TEST_F(uapi, register_unknown_sim_queue_is_enoent)
{
	uint32_t id;

	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id, NULL));
	EXPECT_EQ(-ENOENT, xs_register(self->cfd, self->sfd, id + 1000, 0, NULL));
	{
		struct xsched_register r = {
			.backend = XSCHED_BACKEND_SIM,
			.handle = (1ULL << 32) | id,	/* ids are 32 bits */
			.backend_fd = (__u32)self->sfd,
		};

		EXPECT_EQ(-ENOENT, xs_ioctl(self->cfd, XSCHED_IOC_REGISTER, &r));
	}
	/* another client's queue id means nothing here */
	{
		int cfd2, sfd2;

		ASSERT_EQ(0, xs_client_open(&cfd2, NULL));
		ASSERT_EQ(0, xs_sim_open(&sfd2, NULL));
		EXPECT_EQ(-ENOENT, xs_register(cfd2, sfd2, id, 0, NULL));
		close(sfd2);
		close(cfd2);
	}
}

TEST_F(uapi, register_same_queue_twice_is_eexist)
{
	uint32_t id, uid;
	int qfd;

	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id, NULL));
	qfd = xs_register(self->cfd, self->sfd, id, 0, &uid);
	ASSERT_LE(0, qfd) TH_LOG("register: %s", xs_err(qfd));
	EXPECT_EQ(-EEXIST, xs_register(self->cfd, self->sfd, id, 0, NULL));
	EXPECT_EQ(-EEXIST, xs_register(self->cfd, self->sfd, id, -5, NULL));
	close(qfd);
}

TEST_F(uapi, register_returns_queue_fd_and_unique_uid)
{
	struct xsched_register r[2];
	struct xsched_queue_info info;
	char state[24];
	uint32_t id[2];
	int ret[2], i;

	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id[i], NULL));
		memset(&r[i], 0, sizeof(r[i]));
		r[i].backend = XSCHED_BACKEND_SIM;
		r[i].handle = id[i];
		r[i].backend_fd = (__u32)self->sfd;
		r[i].priority = -i;
		r[i].queue_fd = ~0U;
		ret[i] = xs_ioctl(self->cfd, XSCHED_IOC_REGISTER, &r[i]);
		ASSERT_LE(0, ret[i]) TH_LOG("register: %s", xs_err(ret[i]));
		EXPECT_EQ((uint32_t)ret[i], r[i].queue_fd);
		EXPECT_LE(0, fcntl(ret[i], F_GETFD));
		EXPECT_TRUE(fcntl(ret[i], F_GETFD) & FD_CLOEXEC)
			TH_LOG("queue fds are close-on-exec");
		ASSERT_EQ(0, xs_query(ret[i], &info));
		EXPECT_EQ(r[i].queue_uid, info.queue_uid);
		EXPECT_EQ(-i, info.priority);
		EXPECT_EQ(XSCHED_BACKEND_SIM, info.backend);
	}
	EXPECT_NE(r[0].queue_uid, r[1].queue_uid);
	EXPECT_NE(ret[0], ret[1]);
	if (!xs_debugfs_ready()) {
		for (i = 0; i < 2; i++) {
			EXPECT_EQ(1, xs_table_state(r[i].queue_uid, state,
						    sizeof(state)))
				TH_LOG("uid %u missing from %s", r[i].queue_uid,
				       XS_QUEUES_PATH);
		}
	}
	close(ret[0]);
	close(ret[1]);
}

TEST_F(uapi, register_again_after_close_succeeds)
{
	uint32_t id, uid1, uid2;
	char state[24];
	int qfd;

	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id, NULL));
	qfd = xs_register(self->cfd, self->sfd, id, 0, &uid1);
	ASSERT_LE(0, qfd);
	ASSERT_EQ(0, close(qfd));
	if (!xs_debugfs_ready()) {
		EXPECT_EQ(0, xs_table_state(uid1, state, sizeof(state)))
			TH_LOG("closed queue uid %u still listed", uid1);
	}
	qfd = xs_register(self->cfd, self->sfd, id, 0, &uid2);
	ASSERT_LE(0, qfd) TH_LOG("register after close: %s", xs_err(qfd));
	EXPECT_EQ(XSCHED_STATE_ACTIVE, xs_state(qfd));
	close(qfd);
}

/* uapi.rst: ENXIO when the client is not attached, ENODEV without the backend. */
TEST_F(uapi, register_kfd_without_attach_is_enxio)
{
	struct xsched_register r = {
		.backend = XSCHED_BACKEND_KFD,
		.handle = 0x7f0000001000ULL,
	};
	bool kfd = self->ver.backends & (1U << XSCHED_BACKEND_KFD);
	int ret = xs_ioctl(self->cfd, XSCHED_IOC_REGISTER, &r);

	EXPECT_EQ(kfd ? -ENXIO : -ENODEV, ret)
		TH_LOG("module %s the kfd backend: got %s", kfd ? "with" : "without",
		       xs_err(ret));
	if (ret >= 0)
		close(ret);
}

/* Drops CAP_SYS_NICE from the effective set of this (test) process. */
static int drop_cap_sys_nice(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[CAP_SYS_NICE / 32].effective &= ~(1U << (CAP_SYS_NICE % 32));
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return 0;
}

TEST_F(uapi, positive_priority_needs_cap_sys_nice)
{
	uint32_t id, id2;
	int qfd, ret;

	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id, NULL));
	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id2, NULL));
	qfd = xs_register(self->cfd, self->sfd, id, 0, NULL);
	ASSERT_LE(0, qfd);
	ret = drop_cap_sys_nice();
	ASSERT_EQ(0, ret) TH_LOG("dropping CAP_SYS_NICE: %s", xs_err(ret));
	EXPECT_EQ(-EPERM, xs_register(self->cfd, self->sfd, id2, 1, NULL));
	EXPECT_EQ(-EPERM, xs_register(self->cfd, self->sfd, id2, XSCHED_PRIO_MAX, NULL));
	EXPECT_EQ(-EPERM, xs_set_priority(qfd, 1));
	EXPECT_EQ(-EPERM, xs_set_priority(qfd, XSCHED_PRIO_MAX));
	/* range errors still win over permission */
	EXPECT_EQ(-EINVAL, xs_set_priority(qfd, XSCHED_PRIO_MAX + 1));
	/* lowering and the default need nothing */
	EXPECT_EQ(0, xs_set_priority(qfd, -7));
	EXPECT_EQ(0, xs_set_priority(qfd, 0));
	ret = xs_register(self->cfd, self->sfd, id2, -3, NULL);
	EXPECT_LE(0, ret) TH_LOG("priority -3 without CAP_SYS_NICE: %s", xs_err(ret));
	if (ret >= 0)
		close(ret);
	close(qfd);
}

TEST_F(uapi, set_priority_rejects_bad_input)
{
	struct xsched_set_priority p;
	uint32_t id, uid;
	int qfd, i;

	qfd = make_queue(self->cfd, self->sfd, 8, &id, &uid);
	ASSERT_LE(0, qfd);
	EXPECT_EQ(-EINVAL, xs_set_priority(qfd, XSCHED_PRIO_MIN - 1));
	EXPECT_EQ(-EINVAL, xs_set_priority(qfd, XSCHED_PRIO_MAX + 1));
	EXPECT_EQ(-EINVAL, xs_set_priority(qfd, INT32_MIN));
	memset(&p, 0, sizeof(p));
	p.priority = 3;
	p.flags = 1;
	EXPECT_EQ(-EINVAL, xs_ioctl(qfd, XSCHED_IOC_SET_PRIORITY, &p));
	p.flags = 0;
	for (i = 0; i < 2; i++) {
		p.reserved[i] = 1;
		EXPECT_EQ(-EINVAL, xs_ioctl(qfd, XSCHED_IOC_SET_PRIORITY, &p))
			TH_LOG("reserved[%d]", i);
		p.reserved[i] = 0;
	}
	{
		struct xsched_queue_info info;

		ASSERT_EQ(0, xs_query(qfd, &info));
		EXPECT_EQ(0, info.priority) TH_LOG("a rejected call changed it");
	}
	close(qfd);
}

TEST_F(uapi, set_priority_shows_in_query)
{
	const int32_t prios[] = { XSCHED_PRIO_MIN, -1, 42, XSCHED_PRIO_MAX, 0 };
	struct xsched_queue_info info;
	uint32_t id, uid;
	size_t i;
	int qfd;

	qfd = make_queue(self->cfd, self->sfd, 8, &id, &uid);
	ASSERT_LE(0, qfd);
	for (i = 0; i < sizeof(prios) / sizeof(prios[0]); i++) {
		ASSERT_EQ(0, xs_set_priority(qfd, prios[i]));
		ASSERT_EQ(0, xs_query(qfd, &info));
		EXPECT_EQ(prios[i], info.priority);
	}
	close(qfd);
}

TEST_F(uapi, suspend_rejects_bad_mode_flags_reserved)
{
	const uint32_t modes[] = { 0, 3, 0x100, ~0U };
	struct xsched_suspend s;
	uint32_t id, uid;
	size_t i;
	int qfd;

	qfd = make_queue(self->cfd, self->sfd, 8, &id, &uid);
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

	qfd = make_queue(self->cfd, self->sfd, 8, &id, &uid);
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

	qfd = make_queue(self->cfd, self->sfd, 8, &id, &uid);
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
	qfd = make_queue(self->cfd, self->sfd, 8, &id, &uid);
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

	qfd = make_queue(self->cfd, self->sfd, 8, &id, &uid);
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

	qfd = make_queue(self->cfd, self->sfd, 8, &id, &uid);
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

	qfd = make_queue(self->cfd, self->sfd, 8, &id, &uid);
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
	qfd = make_queue(self->cfd, self->sfd, 8, &id, &uid);
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
	qfd = make_queue(self->cfd, self->sfd, 8, &id, &uid);
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
	qfd = make_queue(self->cfd, self->sfd, 8, &id, &uid);
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

TEST_F(uapi, double_close_is_ebadf)
{
	struct xsched_version v = { 0 };
	uint32_t id, uid;
	char state[24];
	int qfd, cfd2, sfd2;

	qfd = make_queue(self->cfd, self->sfd, 8, &id, &uid);
	ASSERT_LE(0, qfd);
	EXPECT_EQ(0, close(qfd));
	EXPECT_EQ(-1, close(qfd));
	EXPECT_EQ(EBADF, errno);
	EXPECT_EQ(-EBADF, xs_state(qfd));
	EXPECT_EQ(0, close(self->cfd));
	EXPECT_EQ(-1, close(self->cfd));
	EXPECT_EQ(EBADF, errno);
	self->cfd = -1;
	/* the module still works */
	ASSERT_EQ(0, xs_client_open(&cfd2, &v));
	ASSERT_EQ(0, xs_sim_open(&sfd2, NULL));
	EXPECT_EQ(XSCHED_API_VERSION, v.api_version);
	qfd = make_queue(cfd2, sfd2, 8, &id, &uid);
	EXPECT_LE(0, qfd) TH_LOG("register: %s", xs_err(qfd));
	if (qfd >= 0)
		close(qfd);
	if (!xs_debugfs_ready()) {
		EXPECT_EQ(0, xs_table_state(uid, state, sizeof(state)));
	}
	close(sfd2);
	close(cfd2);
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

TEST_F(uapi, kfd_attach_without_kfd_backend_is_enodev)
{
	struct xsched_kfd_attach a = { .kfd_fd = (uint32_t)self->cfd };
	int ret;

	if (self->ver.backends & (1U << XSCHED_BACKEND_KFD))
		SKIP(return, "module built with the kfd backend");
	ret = xs_ioctl(self->cfd, XSCHED_IOC_KFD_ATTACH, &a);
	EXPECT_EQ(-ENODEV, ret) TH_LOG("got %s", xs_err(ret));
}

/* A page the module can read from but not write to. */
static void *read_only_copy(const void *src, size_t len)
{
	void *p = mmap(NULL, XS_PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memcpy(p, src, len);
	if (mprotect(p, XS_PAGE, PROT_READ)) {
		munmap(p, XS_PAGE);
		return NULL;
	}
	return p;
}

TEST_F(uapi, mem_alloc_efault_on_copy_out_leaks_nothing)
{
	struct xsched_sim_mem m = { .size = XS_PAGE };
	void *ro = read_only_copy(&m, sizeof(m));
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
	void *ro = read_only_copy(&c, sizeof(c));
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

TEST_F(uapi, register_efault_on_copy_out_leaves_queue_unregistered)
{
	struct xsched_register r = { .backend = XSCHED_BACKEND_SIM };
	uint32_t id, uid;
	char state[24];
	void *ro;
	int ret, qfd;

	ASSERT_EQ(0, xs_queue_create(self->sfd, 2, &id, NULL));
	r.handle = id;
	ro = read_only_copy(&r, sizeof(r));
	ASSERT_NE(NULL, ro);
	ret = xs_ioctl(self->cfd, XSCHED_IOC_REGISTER, ro);
	EXPECT_EQ(-EFAULT, ret) TH_LOG("read-only arg: %s", xs_err(ret));
	if (ret >= 0)
		close(ret);
	qfd = xs_register(self->cfd, self->sfd, id, 0, &uid);
	EXPECT_LE(0, qfd) TH_LOG("register after EFAULT: %s (left registered?)",
				 xs_err(qfd));
	if (qfd >= 0 && !xs_debugfs_ready()) {
		EXPECT_EQ(1, xs_table_state(uid, state, sizeof(state)));
	}
	if (qfd >= 0)
		close(qfd);
}

TEST_F(uapi, register_without_free_fd_is_emfile)
{
	struct rlimit old, low;
	uint32_t id;
	int fd, ret, top;

	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id, NULL));
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &old));
	/* fill every descriptor below a small limit */
	top = dup(self->cfd);
	ASSERT_LE(0, top);
	close(top);
	low.rlim_cur = top;
	low.rlim_max = old.rlim_max;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &low));
	ret = xs_register(self->cfd, self->sfd, id, 0, NULL);
	EXPECT_EQ(-EMFILE, ret) TH_LOG("got %s", xs_err(ret));
	if (ret >= 0)
		close(ret);
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &old));
	fd = xs_register(self->cfd, self->sfd, id, 0, NULL);
	EXPECT_LE(0, fd) TH_LOG("register after EMFILE: %s (left registered?)",
				xs_err(fd));
	if (fd >= 0)
		close(fd);
}

TEST_F(uapi, lowering_a_positive_priority_needs_no_capability)
{
	uint32_t id;
	int qfd, ret;

	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id, NULL));
	qfd = xs_register(self->cfd, self->sfd, id, 50, NULL);
	ASSERT_LE(0, qfd) TH_LOG("priority 50 as root: %s", xs_err(qfd));
	ret = drop_cap_sys_nice();
	ASSERT_EQ(0, ret) TH_LOG("dropping CAP_SYS_NICE: %s", xs_err(ret));
	EXPECT_EQ(-EPERM, xs_set_priority(qfd, 60));
	EXPECT_EQ(0, xs_set_priority(qfd, 20));
	EXPECT_EQ(0, xs_set_priority(qfd, 20));
	EXPECT_EQ(-EPERM, xs_set_priority(qfd, 21));
	EXPECT_EQ(0, xs_set_priority(qfd, -100));
	EXPECT_EQ(-EPERM, xs_set_priority(qfd, 1));
	close(qfd);
}

/* The ioctl @cmd with its size field set to @size: a caller built with another struct. */
#define XS_IOC_RESIZE(cmd, size) \
	(((cmd) & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT)) | ((unsigned long)(size) << _IOC_SIZESHIFT))

TEST_F(uapi, version_reports_capabilities)
{
	struct xsched_version v;
	size_t i;

	memset(&v, 0xff, sizeof(v));
	ASSERT_EQ(0, xs_ioctl(self->cfd, XSCHED_IOC_VERSION, &v));
	EXPECT_EQ(XSCHED_CAP_SIZED_IOCTLS | XSCHED_CAP_SUSPEND_SEQ | XSCHED_CAP_ADMIN,
		  v.caps);
	for (i = 0; i < XS_ARRAY_SIZE(v.reserved); i++)
		EXPECT_EQ(0, v.reserved[i]);
}

/* A newer caller: its struct has a tail this module does not know. */
TEST_F(uapi, larger_struct_with_zero_tail_is_accepted)
{
	struct {
		struct xsched_queue_info i;
		uint64_t tail[4];
	} big;
	struct {
		struct xsched_version v;
		uint64_t tail[2];
	} bv;
	uint32_t id, uid;
	int qfd;

	qfd = make_queue(self->cfd, self->sfd, 8, &id, &uid);
	ASSERT_LE(0, qfd);
	memset(&big, 0, sizeof(big));
	ASSERT_EQ(0, xs_ioctl(qfd, XS_IOC_RESIZE(XSCHED_IOC_QUERY, sizeof(big)), &big));
	EXPECT_EQ(uid, big.i.queue_uid);
	EXPECT_EQ(0, big.tail[0] | big.tail[3]);
	memset(&bv, 0, sizeof(bv));
	bv.tail[1] = 0x5e17;
	/* VERSION is read only: nothing to check, only the struct is written. */
	ASSERT_EQ(0, xs_ioctl(self->cfd, XS_IOC_RESIZE(XSCHED_IOC_VERSION, sizeof(bv)), &bv));
	EXPECT_EQ(XSCHED_API_VERSION, bv.v.api_version);
	EXPECT_EQ(0x5e17, bv.tail[1]);
	close(qfd);
}

TEST_F(uapi, larger_struct_with_nonzero_tail_is_e2big_and_does_nothing)
{
	struct {
		struct xsched_suspend s;
		uint64_t tail[2];
	} bs;
	struct {
		struct xsched_register r;
		uint64_t tail[1];
	} br;
	struct {
		struct xsched_queue_info i;
		uint64_t tail[1];
	} bi;
	uint32_t id, uid, id2;
	int qfd, qfd2;

	qfd = make_queue(self->cfd, self->sfd, 8, &id, &uid);
	ASSERT_LE(0, qfd);
	memset(&bs, 0, sizeof(bs));
	bs.s.mode = XSCHED_MODE_SAVE;
	bs.s.flags = XSCHED_SUSPEND_NONBLOCK;
	bs.tail[1] = 1;
	EXPECT_EQ(-E2BIG, xs_ioctl(qfd, XS_IOC_RESIZE(XSCHED_IOC_SUSPEND, sizeof(bs)), &bs));
	EXPECT_EQ(XSCHED_STATE_ACTIVE, xs_state(qfd));
	memset(&bi, 0, sizeof(bi));
	bi.tail[0] = 1ULL << 63;
	EXPECT_EQ(-E2BIG, xs_ioctl(qfd, XS_IOC_RESIZE(XSCHED_IOC_QUERY, sizeof(bi)), &bi));

	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id2, NULL));
	memset(&br, 0, sizeof(br));
	br.r.backend = XSCHED_BACKEND_SIM;
	br.r.handle = id2;
	br.r.backend_fd = self->sfd;
	br.tail[0] = 2;
	EXPECT_EQ(-E2BIG, xs_ioctl(self->cfd, XS_IOC_RESIZE(XSCHED_IOC_REGISTER, sizeof(br)),
				   &br));
	/* Nothing was registered: the same queue registers now. */
	qfd2 = xs_register(self->cfd, self->sfd, id2, 0, NULL);
	EXPECT_LE(0, qfd2) TH_LOG("register after E2BIG: %s", xs_err(qfd2));
	if (qfd2 >= 0)
		close(qfd2);
	close(qfd);
}

/* An older caller: its struct ends at the first published size. */
TEST_F(uapi, first_published_sizes_work_and_nothing_past_them_is_written)
{
	struct {
		struct xsched_suspend s;
		uint64_t canary[2];
	} os;
	struct {
		struct xsched_queue_info i;
		uint64_t canary[2];
	} oi;
	uint32_t id, uid;
	int qfd;

	ASSERT_EQ(XSCHED_SUSPEND_SIZE_VER0, offsetof(struct xsched_suspend, seq));
	ASSERT_EQ(XSCHED_QUERY_SIZE_VER0, offsetof(struct xsched_queue_info, suspend_seq));
	qfd = make_queue(self->cfd, self->sfd, 8, &id, &uid);
	ASSERT_LE(0, qfd);
	/* The bytes past the old struct are the caller's: a canary there. */
	memset(&os, 0, sizeof(os));
	memset((char *)&os + XSCHED_SUSPEND_SIZE_VER0, 0xc5,
	       sizeof(os) - XSCHED_SUSPEND_SIZE_VER0);
	os.s.mode = XSCHED_MODE_SAVE;
	ASSERT_EQ(0, xs_ioctl(qfd, XS_IOC_RESIZE(XSCHED_IOC_SUSPEND, XSCHED_SUSPEND_SIZE_VER0),
			      &os));
	EXPECT_EQ(XSCHED_STATE_SUSPENDED, xs_state(qfd));
	EXPECT_EQ(0xc5c5c5c5U, os.s.seq) TH_LOG("written past the caller's struct");
	memset(&oi, 0, sizeof(oi));
	memset((char *)&oi + XSCHED_QUERY_SIZE_VER0, 0xc5, sizeof(oi) - XSCHED_QUERY_SIZE_VER0);
	ASSERT_EQ(0, xs_ioctl(qfd, XS_IOC_RESIZE(XSCHED_IOC_QUERY, XSCHED_QUERY_SIZE_VER0), &oi));
	EXPECT_EQ(uid, oi.i.queue_uid);
	EXPECT_EQ(XSCHED_STATE_SUSPENDED, oi.i.state);
	EXPECT_EQ(0xc5c5c5c5U, oi.i.suspend_seq) TH_LOG("written past the caller's struct");
	EXPECT_EQ(0, xs_resume(qfd, NULL));
	close(qfd);
}

TEST_F(uapi, sizes_below_the_first_published_are_einval)
{
	char buf[256] = { 0 };
	uint32_t id, uid;
	int qfd;

	qfd = make_queue(self->cfd, self->sfd, 8, &id, &uid);
	ASSERT_LE(0, qfd);
	EXPECT_EQ(-EINVAL, xs_ioctl(self->cfd, _IOR(XSCHED_IOC_MAGIC, 0x00, __u32), buf));
	EXPECT_EQ(-EINVAL, xs_ioctl(self->cfd,
				    XS_IOC_RESIZE(XSCHED_IOC_REGISTER, XSCHED_REGISTER_SIZE_VER0 - 8),
				    buf));
	EXPECT_EQ(-EINVAL, xs_ioctl(qfd, XS_IOC_RESIZE(XSCHED_IOC_QUERY, 8), buf));
	buf[0] = XSCHED_MODE_SAVE;
	EXPECT_EQ(-EINVAL, xs_ioctl(qfd, XS_IOC_RESIZE(XSCHED_IOC_SUSPEND,
						       XSCHED_SUSPEND_SIZE_VER0 - 8), buf));
	EXPECT_EQ(XSCHED_STATE_ACTIVE, xs_state(qfd));
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
	qfd = make_queue(self->cfd, self->sfd, 8, &id, &uid);
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
