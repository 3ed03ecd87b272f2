// SPDX-License-Identifier: GPL-2.0
/*
 * admin: XSCHED_IOC_ADMIN, an administrator's priority change, suspend and
 * resume of any queue by uid.  One test per errno of Documentation/uapi.rst
 * and per permission rule (other users' queues need CAP_SYS_ADMIN, raising
 * above 0 CAP_SYS_NICE: checked in forked children that drop capabilities
 * with capset() and change uid with setresuid()), how an admin's suspend
 * meets the owner's own suspend and resume and the arbiter, the extensible
 * struct (size), and the tracepoint naming the admin.
 */
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include "xsched_test.h"

#define NOBODY	65534

FIXTURE(admin) {
	int cfd, sfd;
	struct xsched_version ver;
	struct xsched_sim_info sim;
	uint32_t id, uid;
	int qfd;
};

FIXTURE_SETUP(admin)
{
	self->qfd = -1;
	self->sfd = -1;
	XS_CLIENT_OPEN_OR_SKIP(self->cfd, self->ver);
	XS_SIM_OPEN_OR_SKIP(self->sfd, self->sim);
	ASSERT_EQ(0, xs_queue_create(self->sfd, 64, &self->id, NULL));
	self->qfd = xs_register(self->cfd, self->sfd, self->id, 0, &self->uid);
	ASSERT_LE(0, self->qfd) TH_LOG("register: %s", xs_err(self->qfd));
}

FIXTURE_TEARDOWN(admin)
{
	if (self->qfd >= 0)
		close(self->qfd);
	if (self->sfd >= 0)
		close(self->sfd);
	if (self->cfd >= 0)
		close(self->cfd);
}

static struct xsched_admin admin_arg(uint32_t op, uint32_t uid)
{
	struct xsched_admin a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.op = op;
	a.queue_uid = uid;
	return a;
}

static int xs_admin(int cfd, struct xsched_admin *a)
{
	int ret = xs_ioctl(cfd, XSCHED_IOC_ADMIN, a);

	return ret < 0 ? ret : 0;
}

static int admin_prio(int cfd, uint32_t uid, int32_t prio)
{
	struct xsched_admin a = admin_arg(XSCHED_ADMIN_SET_PRIORITY, uid);

	a.priority = prio;
	return xs_admin(cfd, &a);
}

static int admin_suspend(int cfd, uint32_t uid, uint32_t mode, uint32_t flags,
			 struct xsched_admin *out)
{
	struct xsched_admin a = admin_arg(XSCHED_ADMIN_SUSPEND, uid);
	int ret;

	a.mode = mode;
	a.flags = flags;
	ret = xs_admin(cfd, &a);
	if (out)
		*out = a;
	return ret;
}

static int admin_resume(int cfd, uint32_t uid, uint64_t *suspended_ns)
{
	struct xsched_admin a = admin_arg(XSCHED_ADMIN_RESUME, uid);
	int ret = xs_admin(cfd, &a);

	if (suspended_ns)
		*suspended_ns = a.suspended_ns;
	return ret;
}

/* Priority of the queue behind @qfd, as its owner's QUERY sees it. */
static int32_t query_prio(int qfd)
{
	struct xsched_queue_info info;

	return xs_query(qfd, &info) ? INT32_MIN : info.priority;
}

/* ----------------------------------------------- another user, fewer caps */

static uint64_t cap_bit(int cap)
{
	return 1ULL << cap;
}

/*
 * In this (forked) process: become @uid (keeping the permitted set), then
 * keep only @caps effective.
 */
static int become(uid_t uid, uint64_t caps)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (uid && (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) ||
		    setresuid(uid, uid, uid)))
		return -errno;
	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[0].effective = (uint32_t)caps & data[0].permitted;
	data[1].effective = (uint32_t)(caps >> 32) & data[1].permitted;
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return 0;
}

enum child_op { C_PRIO, C_SUSPEND, C_RESUME };

/*
 * Runs one admin call on @uid as user @as with only @caps effective, in a
 * forked child; returns its result (0 or -errno), or -EPROTO if the child
 * could not be set up.
 */
static int admin_as(int cfd, uid_t as, uint64_t caps, enum child_op op,
		    uint32_t uid, int32_t prio)
{
	int status, ret;
	pid_t pid = fork();

	if (pid < 0)
		return -EPROTO;
	if (!pid) {
		if (become(as, caps))
			_exit(255);
		if (op == C_PRIO)
			ret = admin_prio(cfd, uid, prio);
		else if (op == C_SUSPEND)
			ret = admin_suspend(cfd, uid, XSCHED_MODE_SAVE, 0, NULL);
		else
			ret = admin_resume(cfd, uid, NULL);
		_exit(-ret);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) == 255)
		return -EPROTO;
	return -WEXITSTATUS(status);
}

/* ----------------------------------------------------------- good paths */

TEST_F(admin, set_priority_by_uid_shows_in_query)
{
	EXPECT_EQ(0, admin_prio(self->cfd, self->uid, 42));
	EXPECT_EQ(42, query_prio(self->qfd));
	EXPECT_EQ(0, admin_prio(self->cfd, self->uid, XSCHED_PRIO_MIN));
	EXPECT_EQ(XSCHED_PRIO_MIN, query_prio(self->qfd));
}

TEST_F(admin, suspend_and_resume_by_uid)
{
	uint64_t ns = ~0ULL;

	ASSERT_EQ(0, admin_suspend(self->cfd, self->uid, XSCHED_MODE_DRAIN, 0, NULL));
	EXPECT_EQ(XSCHED_STATE_SUSPENDED, xs_state(self->qfd));
	EXPECT_EQ(0, admin_resume(self->cfd, self->uid, &ns));
	EXPECT_EQ(XSCHED_STATE_ACTIVE, xs_state(self->qfd));
	EXPECT_NE(~0ULL, ns) TH_LOG("suspended_ns not written");
}

/* A blocking SAVE of a busy queue returns its latency and saved bytes. */
TEST_F_TIMEOUT(admin, blocking_save_reports_latency_and_bytes, 60)
{
	struct xsched_sim_packet p;
	struct xsched_admin out;
	struct xs_buf buf;
	uint64_t seq;

	ASSERT_EQ(0, xs_buf_alloc(self->sfd, xs_slots(&self->sim) * 8, &buf));
	p = xs_packet(xs_slots(&self->sim), 100, XS_MS, 3, buf.gpu_addr, 0);
	ASSERT_EQ(0, xs_submit(self->sfd, self->id, &p, 1, &seq));
	ASSERT_EQ(0, xs_wait_steps(self->qfd, 1, 10 * XS_SEC));
	ASSERT_EQ(0, admin_suspend(self->cfd, self->uid, XSCHED_MODE_SAVE, 0, &out));
	EXPECT_GT(out.latency_ns, 0);
	EXPECT_GT(out.saved_bytes, 0) TH_LOG("SAVE of running waves saved nothing");
	EXPECT_EQ(XSCHED_STATE_SUSPENDED, xs_state(self->qfd));
	EXPECT_EQ(0, admin_resume(self->cfd, self->uid, NULL));
	EXPECT_EQ(0, xs_wait(self->sfd, self->id, seq, 30 * XS_SEC, NULL));
	EXPECT_EQ(-1, xs_packet_mismatch(&p, NULL, buf.map));
	xs_buf_free(&buf);
}

TEST_F_TIMEOUT(admin, nonblock_returns_before_stopped, 60)
{
	struct xsched_sim_packet p;
	struct xs_buf buf;
	uint64_t seq;

	XS_DEBUGFS_OR_SKIP();
	ASSERT_EQ(0, xs_knob_write("save_delay_us", 300000));
	ASSERT_EQ(0, xs_buf_alloc(self->sfd, xs_slots(&self->sim) * 8, &buf));
	p = xs_packet(xs_slots(&self->sim), 100, XS_MS, 3, buf.gpu_addr, 0);
	ASSERT_EQ(0, xs_submit(self->sfd, self->id, &p, 1, &seq));
	ASSERT_EQ(0, xs_wait_steps(self->qfd, 1, 10 * XS_SEC));
	EXPECT_EQ(0, admin_suspend(self->cfd, self->uid, XSCHED_MODE_SAVE,
				   XSCHED_ADMIN_NONBLOCK, NULL));
	EXPECT_EQ(XSCHED_STATE_SUSPENDING, xs_state(self->qfd));
	EXPECT_EQ(0, xs_wait_state(self->qfd, XSCHED_STATE_SUSPENDED, 10 * XS_SEC));
	EXPECT_EQ(0, xs_knob_write("save_delay_us", 0));
	EXPECT_EQ(0, admin_resume(self->cfd, self->uid, NULL));
	EXPECT_EQ(0, xs_wait(self->sfd, self->id, seq, 30 * XS_SEC, NULL));
	xs_buf_free(&buf);
}

/* ------------------------------------------- the owner and the arbiter */

/* Whose resume wins: the admin's suspend holds against its owner. */
TEST_F(admin, owner_cannot_resume_admin_suspend_ebusy)
{
	ASSERT_EQ(0, admin_suspend(self->cfd, self->uid, XSCHED_MODE_SAVE, 0, NULL));
	EXPECT_EQ(-EBUSY, xs_resume(self->qfd, NULL));
	EXPECT_EQ(XSCHED_STATE_SUSPENDED, xs_state(self->qfd));
	/* and its own suspend finds it stopped already */
	EXPECT_EQ(-EALREADY, xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	EXPECT_EQ(0, admin_resume(self->cfd, self->uid, NULL));
	/* once the admin resumed, the owner's own suspends work as before */
	EXPECT_EQ(0, xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	EXPECT_EQ(0, xs_resume(self->qfd, NULL));
}

TEST_F(admin, admin_resume_undoes_owner_suspend)
{
	ASSERT_EQ(0, xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	EXPECT_EQ(-EALREADY, admin_suspend(self->cfd, self->uid, XSCHED_MODE_SAVE, 0, NULL));
	EXPECT_EQ(0, admin_resume(self->cfd, self->uid, NULL));
	EXPECT_EQ(XSCHED_STATE_ACTIVE, xs_state(self->qfd));
}

/* Closing the queue fd resumes an admin-suspended queue too. */
TEST_F(admin, close_ends_admin_suspend)
{
	char state[24];

	ASSERT_EQ(0, admin_suspend(self->cfd, self->uid, XSCHED_MODE_SAVE, 0, NULL));
	ASSERT_EQ(0, close(self->qfd));
	self->qfd = -1;
	EXPECT_EQ(-ENOENT, admin_resume(self->cfd, self->uid, NULL));
	if (!xs_debugfs_ready()) {
		EXPECT_EQ(0, xs_table_state(self->uid, state, sizeof(state)));
		EXPECT_EQ(0, xs_table_count_stopped());
	}
}

/* The arbiter owns an arbitrated queue's state: refused, priority allowed. */
TEST_F(admin, arbitrated_queue_suspend_resume_ebusy)
{
	struct xsched_register r = {
		.backend = XSCHED_BACKEND_SIM,
		.flags = XSCHED_REGISTER_ARBITRATE,
	};
	uint32_t id;
	int qfd;

	ASSERT_EQ(0, xs_queue_create(self->sfd, 8, &id, NULL));
	r.handle = id;
	r.backend_fd = (__u32)self->sfd;
	qfd = xs_ioctl(self->cfd, XSCHED_IOC_REGISTER, &r);
	ASSERT_LE(0, qfd);
	EXPECT_EQ(-EBUSY, admin_suspend(self->cfd, r.queue_uid, XSCHED_MODE_SAVE, 0, NULL));
	EXPECT_EQ(XSCHED_STATE_ACTIVE, xs_state(qfd));
	EXPECT_EQ(-EBUSY, admin_resume(self->cfd, r.queue_uid, NULL));
	EXPECT_EQ(0, admin_prio(self->cfd, r.queue_uid, -50));
	EXPECT_EQ(-50, query_prio(qfd));
	close(qfd);
}

/* ---------------------------------------------------------------- errnos */

TEST_F(admin, unknown_uid_is_enoent)
{
	EXPECT_EQ(-ENOENT, admin_prio(self->cfd, 0, 0));
	EXPECT_EQ(-ENOENT, admin_prio(self->cfd, 0x7fffffff, 0));
	EXPECT_EQ(-ENOENT, admin_suspend(self->cfd, 0x7fffffff, XSCHED_MODE_SAVE, 0, NULL));
	EXPECT_EQ(-ENOENT, admin_resume(self->cfd, 0x7fffffff, NULL));
}

TEST_F(admin, active_resume_and_stopped_suspend_are_ealready)
{
	EXPECT_EQ(-EALREADY, admin_resume(self->cfd, self->uid, NULL));
	ASSERT_EQ(0, admin_suspend(self->cfd, self->uid, XSCHED_MODE_DRAIN, 0, NULL));
	EXPECT_EQ(-EALREADY, admin_suspend(self->cfd, self->uid, XSCHED_MODE_SAVE, 0, NULL));
	EXPECT_EQ(0, admin_resume(self->cfd, self->uid, NULL));
}

TEST_F_TIMEOUT(admin, failed_queue_is_eio, 60)
{
	XS_DEBUGFS_OR_SKIP();
	ASSERT_EQ(0, xs_knob_write("reset_queue", self->uid));
	ASSERT_EQ(0, xs_wait_state(self->qfd, XSCHED_STATE_FAILED, 5 * XS_SEC));
	EXPECT_EQ(-EIO, admin_suspend(self->cfd, self->uid, XSCHED_MODE_SAVE, 0, NULL));
	EXPECT_EQ(-EIO, admin_resume(self->cfd, self->uid, NULL));
}

TEST_F(admin, bad_fields_are_einval)
{
	struct xsched_admin a;
	int i;

	a = admin_arg(0, self->uid);
	EXPECT_EQ(-EINVAL, xs_admin(self->cfd, &a)) TH_LOG("op 0");
	a = admin_arg(4, self->uid);
	EXPECT_EQ(-EINVAL, xs_admin(self->cfd, &a)) TH_LOG("op 4");

	a = admin_arg(XSCHED_ADMIN_SUSPEND, self->uid);
	a.mode = XSCHED_MODE_SAVE;
	a.flags = 2;
	EXPECT_EQ(-EINVAL, xs_admin(self->cfd, &a)) TH_LOG("unknown flag");
	a.flags = 0;
	for (i = 0; i < 2; i++) {
		a.reserved[i] = 1;
		EXPECT_EQ(-EINVAL, xs_admin(self->cfd, &a)) TH_LOG("reserved[%d]", i);
		a.reserved[i] = 0;
	}
	a.mode = 0;
	EXPECT_EQ(-EINVAL, xs_admin(self->cfd, &a)) TH_LOG("mode 0");
	a.mode = 3;
	EXPECT_EQ(-EINVAL, xs_admin(self->cfd, &a)) TH_LOG("mode 3");
	a.mode = XSCHED_MODE_SAVE;
	a.grace_ns = 60 * XS_SEC + 1;
	EXPECT_EQ(-EINVAL, xs_admin(self->cfd, &a)) TH_LOG("grace > 60 s");
	a.grace_ns = 0;
	a.priority = 1;
	EXPECT_EQ(-EINVAL, xs_admin(self->cfd, &a)) TH_LOG("priority with SUSPEND");

	a = admin_arg(XSCHED_ADMIN_SET_PRIORITY, self->uid);
	a.priority = XSCHED_PRIO_MAX + 1;
	EXPECT_EQ(-EINVAL, xs_admin(self->cfd, &a)) TH_LOG("priority 101");
	a.priority = XSCHED_PRIO_MIN - 1;
	EXPECT_EQ(-EINVAL, xs_admin(self->cfd, &a)) TH_LOG("priority -101");
	a.priority = 1;
	a.mode = XSCHED_MODE_SAVE;
	EXPECT_EQ(-EINVAL, xs_admin(self->cfd, &a)) TH_LOG("mode with SET_PRIORITY");
	a.mode = 0;
	a.flags = XSCHED_ADMIN_NONBLOCK;
	EXPECT_EQ(-EINVAL, xs_admin(self->cfd, &a)) TH_LOG("NONBLOCK with SET_PRIORITY");

	a = admin_arg(XSCHED_ADMIN_RESUME, self->uid);
	a.grace_ns = 1;
	EXPECT_EQ(-EINVAL, xs_admin(self->cfd, &a)) TH_LOG("grace_ns with RESUME");
	a.grace_ns = 0;
	a.flags = XSCHED_ADMIN_NONBLOCK;
	EXPECT_EQ(-EINVAL, xs_admin(self->cfd, &a)) TH_LOG("NONBLOCK with RESUME");

	/* struct errors come before the lookup: EINVAL, not ENOENT */
	a = admin_arg(XSCHED_ADMIN_SUSPEND, 0x7fffffff);
	EXPECT_EQ(-EINVAL, xs_admin(self->cfd, &a)) TH_LOG("mode 0, unknown uid");

	EXPECT_EQ(0, query_prio(self->qfd)) TH_LOG("a rejected call changed it");
	EXPECT_EQ(XSCHED_STATE_ACTIVE, xs_state(self->qfd));
}

/* size: too small EINVAL; larger with a zero tail accepted; non-zero tail E2BIG. */
TEST_F(admin, size_rules)
{
	struct {
		struct xsched_admin a;
		uint8_t tail[64];
	} big;
	char *page;

	memset(&big, 0, sizeof(big));
	big.a = admin_arg(XSCHED_ADMIN_SET_PRIORITY, self->uid);
	big.a.priority = -9;
	big.a.size = XSCHED_ADMIN_SIZE_VER0 - 8;
	EXPECT_EQ(-EINVAL, xs_admin(self->cfd, &big.a)) TH_LOG("size below VER0");
	big.a.size = 0;
	EXPECT_EQ(-EINVAL, xs_admin(self->cfd, &big.a)) TH_LOG("size 0");
	big.a.size = sizeof(big);
	EXPECT_EQ(0, xs_admin(self->cfd, &big.a)) TH_LOG("zero tail");
	EXPECT_EQ(-9, query_prio(self->qfd));
	big.tail[63] = 1;
	big.a.priority = -10;
	EXPECT_EQ(-E2BIG, xs_admin(self->cfd, &big.a)) TH_LOG("non-zero tail");
	EXPECT_EQ(-9, query_prio(self->qfd)) TH_LOG("E2BIG changed it");

	/* Beyond a page: E2BIG without reading it. */
	page = mmap(NULL, 2 * XS_PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, page);
	memset(page, 0, 2 * XS_PAGE);
	memcpy(page, &big.a, sizeof(big.a));
	((struct xsched_admin *)page)->size = XS_PAGE + 8;
	EXPECT_EQ(-E2BIG, xs_admin(self->cfd, (struct xsched_admin *)page));
	munmap(page, 2 * XS_PAGE);
}

TEST_F(admin, bad_pointer_is_efault)
{
	struct xsched_admin a = admin_arg(XSCHED_ADMIN_SUSPEND, self->uid);
	void *ro;

	EXPECT_EQ(-EFAULT, xs_ioctl(self->cfd, XSCHED_IOC_ADMIN, NULL));
	EXPECT_EQ(-EFAULT, xs_ioctl(self->cfd, XSCHED_IOC_ADMIN,
				    (void *)(uintptr_t)0xffff888000000000ULL));
	/* Read-only: EFAULT before the queue is suspended. */
	a.mode = XSCHED_MODE_SAVE;
	ro = mmap(NULL, XS_PAGE, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	memcpy(ro, &a, sizeof(a));
	ASSERT_EQ(0, mprotect(ro, XS_PAGE, PROT_READ));
	EXPECT_EQ(-EFAULT, xs_ioctl(self->cfd, XSCHED_IOC_ADMIN, ro));
	EXPECT_EQ(XSCHED_STATE_ACTIVE, xs_state(self->qfd));
	munmap(ro, XS_PAGE);
}

TEST_F(admin, queue_fd_does_not_know_it_enotty)
{
	struct xsched_admin a = admin_arg(XSCHED_ADMIN_RESUME, self->uid);

	EXPECT_EQ(-ENOTTY, xs_ioctl(self->qfd, XSCHED_IOC_ADMIN, &a));
}

/* ----------------------------------------------------------- permissions */

/* Another user's queue: EPERM without CAP_SYS_ADMIN, for each op. */
TEST_F(admin, other_users_queue_needs_cap_sys_admin)
{
	uint64_t all = cap_bit(CAP_SYS_NICE);

	EXPECT_EQ(-EPERM, admin_as(self->cfd, NOBODY, all, C_PRIO, self->uid, -5));
	EXPECT_EQ(-EPERM, admin_as(self->cfd, NOBODY, all, C_SUSPEND, self->uid, 0));
	EXPECT_EQ(XSCHED_STATE_ACTIVE, xs_state(self->qfd));
	ASSERT_EQ(0, xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	EXPECT_EQ(-EPERM, admin_as(self->cfd, NOBODY, all, C_RESUME, self->uid, 0));
	EXPECT_EQ(XSCHED_STATE_SUSPENDED, xs_state(self->qfd));
	EXPECT_EQ(0, query_prio(self->qfd));
	/* root without CAP_SYS_ADMIN owns it: allowed */
	EXPECT_EQ(0, admin_as(self->cfd, 0, 0, C_RESUME, self->uid, 0));
	EXPECT_EQ(XSCHED_STATE_ACTIVE, xs_state(self->qfd));
}

TEST_F(admin, cap_sys_admin_acts_on_other_users_queue)
{
	uint64_t adm = cap_bit(CAP_SYS_ADMIN);

	EXPECT_EQ(0, admin_as(self->cfd, NOBODY, adm, C_SUSPEND, self->uid, 0));
	EXPECT_EQ(XSCHED_STATE_SUSPENDED, xs_state(self->qfd));
	EXPECT_EQ(0, admin_as(self->cfd, NOBODY, adm, C_RESUME, self->uid, 0));
	EXPECT_EQ(XSCHED_STATE_ACTIVE, xs_state(self->qfd));
	EXPECT_EQ(0, admin_as(self->cfd, NOBODY, adm, C_PRIO, self->uid, -7));
	EXPECT_EQ(-7, query_prio(self->qfd));
}

/* Raising above 0 needs CAP_SYS_NICE, CAP_SYS_ADMIN or not; lowering nothing. */
TEST_F(admin, raising_above_zero_needs_cap_sys_nice)
{
	uint64_t adm = cap_bit(CAP_SYS_ADMIN);

	EXPECT_EQ(-EPERM, admin_as(self->cfd, 0, adm, C_PRIO, self->uid, 1));
	EXPECT_EQ(-EPERM, admin_as(self->cfd, NOBODY, adm, C_PRIO, self->uid, 1));
	EXPECT_EQ(0, query_prio(self->qfd));
	EXPECT_EQ(0, admin_as(self->cfd, 0, cap_bit(CAP_SYS_NICE), C_PRIO,
			      self->uid, 30));
	EXPECT_EQ(30, query_prio(self->qfd));
	/* lowering a raised priority needs no CAP_SYS_NICE */
	EXPECT_EQ(0, admin_as(self->cfd, 0, 0, C_PRIO, self->uid, 10));
	EXPECT_EQ(10, query_prio(self->qfd));
	EXPECT_EQ(0, admin_as(self->cfd, NOBODY, adm, C_PRIO, self->uid, -3));
	EXPECT_EQ(-3, query_prio(self->qfd));
}

/*
 * A user's own queue needs no capability: a child, nobody with none, registers
 * one and suspends, resumes and lowers it by uid; only raising it above 0
 * fails (EPERM).  The child reports the first step that failed and its errno.
 */
TEST(own_queue_needs_no_capability)
{
	int status, p[2], res[2] = { -1, -1 };
	pid_t pid;

	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int cfd = -1, sfd = -1, qfd = -1, ret, step = 0;
		uint32_t id, uid = 0;

		close(p[0]);
		ret = become(NOBODY, 0);
		if (!ret && ++step)
			ret = xs_client_open(&cfd, NULL) ?: xs_sim_open(&sfd, NULL);
		if (!ret && ++step)
			ret = xs_queue_create(sfd, 8, &id, NULL);
		if (!ret && ++step)
			ret = (qfd = xs_register(cfd, sfd, id, 0, &uid)) < 0 ? qfd : 0;
		if (!ret && ++step)
			ret = admin_suspend(cfd, uid, XSCHED_MODE_SAVE, 0, NULL);
		if (!ret && ++step)
			ret = xs_state(qfd) == XSCHED_STATE_SUSPENDED ? 0 : -EPROTO;
		if (!ret && ++step)
			ret = admin_resume(cfd, uid, NULL);
		if (!ret && ++step)
			ret = admin_prio(cfd, uid, -20);
		if (!ret && ++step)
			ret = admin_prio(cfd, uid, 1);
		res[0] = step;
		res[1] = -ret;
		_exit(write(p[1], res, sizeof(res)) != sizeof(res));
	}
	close(p[1]);
	ASSERT_EQ(sizeof(res), read(p[0], res, sizeof(res)));
	close(p[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (res[0] == 1 && (res[1] == ENOENT || res[1] == ENODEV))
		SKIP(return, "/dev/xsched or /dev/xsched_sim: %s", strerror(res[1]));
	EXPECT_EQ(8, res[0]) TH_LOG("step %d failed: %s", res[0],
				    res[1] ? strerror(res[1]) : "success");
	EXPECT_EQ(EPERM, res[1]) TH_LOG("raising above 0 as nobody: %s",
					res[1] ? strerror(res[1]) : "success");
}

/* ------------------------------------------------------------ tracepoint */

#define XS_TRACEFS	"/sys/kernel/tracing"
#define XS_INSTANCE	XS_TRACEFS "/instances/xsched-admin-test"

/* The suspend event names the admin (by=admin) and its pid. */
TEST_F(admin, suspend_event_says_admin)
{
	char want[128], line[512];
	bool found = false, caller = false;
	FILE *f;

	if (access(XS_TRACEFS "/instances", F_OK))
		mount("tracefs", XS_TRACEFS, "tracefs", 0, NULL);
	rmdir(XS_INSTANCE);
	if (mkdir(XS_INSTANCE, 0700))
		SKIP(return, "%s: %s (needs tracefs)", XS_INSTANCE, strerror(errno));
	ASSERT_EQ(0, xs_write_file(XS_INSTANCE "/events/xsched/xsched_queue_suspend/enable", "1"));
	ASSERT_EQ(0, admin_suspend(self->cfd, self->uid, XSCHED_MODE_SAVE, 0, NULL));
	ASSERT_EQ(0, admin_resume(self->cfd, self->uid, NULL));
	ASSERT_EQ(0, xs_suspend(self->qfd, XSCHED_MODE_DRAIN, 0, 0, NULL));
	ASSERT_EQ(0, xs_resume(self->qfd, NULL));
	ASSERT_EQ(0, xs_write_file(XS_INSTANCE "/events/xsched/xsched_queue_suspend/enable", "0"));
	f = fopen(XS_INSTANCE "/trace", "re");
	ASSERT_NE(NULL, f);
	snprintf(want, sizeof(want), "queue=%u mode=save ", self->uid);
	while (fgets(line, sizeof(line), f)) {
		char pid[32];

		if (!strstr(line, "xsched_queue_suspend:"))
			continue;
		snprintf(pid, sizeof(pid), " pid=%d ", getpid());
		if (strstr(line, want) && strstr(line, " err=0 by=admin") &&
		    strstr(line, pid))
			found = true;
		if (strstr(line, "mode=drain") && strstr(line, " by=caller"))
			caller = true;
	}
	fclose(f);
	rmdir(XS_INSTANCE);
	EXPECT_TRUE(found) TH_LOG("no '%s... by=admin pid=%d' event", want, getpid());
	EXPECT_TRUE(caller) TH_LOG("the owner's own suspend is not by=caller");
}

TEST_HARNESS_MAIN
