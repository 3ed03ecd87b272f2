// SPDX-License-Identifier: GPL-2.0
/*
 * uapi_register: REGISTER and SET_PRIORITY against every bad input, with the
 * exact errno: flags, priorities and CAP_SYS_NICE, unknown and twice-registered
 * queues, the queue fd and uid, copy-out faults, no free fd.
 */
#include <sys/resource.h>

#include "xsched_uapi.h"

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

TEST_F(uapi, positive_priority_needs_cap_sys_nice)
{
	uint32_t id, id2;
	int qfd, ret;

	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id, NULL));
	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id2, NULL));
	qfd = xs_register(self->cfd, self->sfd, id, 0, NULL);
	ASSERT_LE(0, qfd);
	ret = xs_drop_cap_sys_nice();
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

	qfd = xs_make_queue(self->cfd, self->sfd, 8, &id, &uid);
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

	qfd = xs_make_queue(self->cfd, self->sfd, 8, &id, &uid);
	ASSERT_LE(0, qfd);
	for (i = 0; i < sizeof(prios) / sizeof(prios[0]); i++) {
		ASSERT_EQ(0, xs_set_priority(qfd, prios[i]));
		ASSERT_EQ(0, xs_query(qfd, &info));
		EXPECT_EQ(prios[i], info.priority);
	}
	close(qfd);
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
	ro = xs_read_only_copy(&r, sizeof(r));
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
	ret = xs_drop_cap_sys_nice();
	ASSERT_EQ(0, ret) TH_LOG("dropping CAP_SYS_NICE: %s", xs_err(ret));
	EXPECT_EQ(-EPERM, xs_set_priority(qfd, 60));
	EXPECT_EQ(0, xs_set_priority(qfd, 20));
	EXPECT_EQ(0, xs_set_priority(qfd, 20));
	EXPECT_EQ(-EPERM, xs_set_priority(qfd, 21));
	EXPECT_EQ(0, xs_set_priority(qfd, -100));
	EXPECT_EQ(-EPERM, xs_set_priority(qfd, 1));
	close(qfd);
}

TEST_HARNESS_MAIN
