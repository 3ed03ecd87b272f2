// SPDX-License-Identifier: GPL-2.0
/*
 * uapi: the ioctls of /dev/xsched and of a queue fd as a whole: VERSION,
 * unknown and misdirected ioctls (ENOTTY), bad pointers (EFAULT), close, KFD
 * ATTACH without the kfd backend, and the struct sizes of older and newer
 * callers.  The other uapi_* programs take the uAPI v1 area by area (uapi_mem,
 * uapi_submit, uapi_register, uapi_suspend), all with the fixture of
 * include/xsched_uapi.h, so each test is still uapi.<name>.
 */
#include <stddef.h>

#include "xsched_uapi.h"

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

	qfd = xs_make_queue(self->cfd, self->sfd, 8, &id, &uid);
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

	qfd = xs_make_queue(self->cfd, self->sfd, 8, &id, &uid);
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

	xs_bad_pointers(self->guard, bad);
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

	qfd = xs_make_queue(self->cfd, self->sfd, 8, &id, &uid);
	ASSERT_LE(0, qfd) TH_LOG("register: %s", xs_err(qfd));
	xs_bad_pointers(self->guard, bad);
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

TEST_F(uapi, double_close_is_ebadf)
{
	struct xsched_version v = { 0 };
	uint32_t id, uid;
	char state[24];
	int qfd, cfd2, sfd2;

	qfd = xs_make_queue(self->cfd, self->sfd, 8, &id, &uid);
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
	qfd = xs_make_queue(cfd2, sfd2, 8, &id, &uid);
	EXPECT_LE(0, qfd) TH_LOG("register: %s", xs_err(qfd));
	if (qfd >= 0)
		close(qfd);
	if (!xs_debugfs_ready()) {
		EXPECT_EQ(0, xs_table_state(uid, state, sizeof(state)));
	}
	close(sfd2);
	close(cfd2);
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

	qfd = xs_make_queue(self->cfd, self->sfd, 8, &id, &uid);
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

	qfd = xs_make_queue(self->cfd, self->sfd, 8, &id, &uid);
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
	qfd = xs_make_queue(self->cfd, self->sfd, 8, &id, &uid);
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

	qfd = xs_make_queue(self->cfd, self->sfd, 8, &id, &uid);
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

TEST_HARNESS_MAIN
