// SPDX-License-Identifier: GPL-2.0
/*
 * The kfd backend's attach and register paths against the real KFD: run
 * with amdgpu.ko loaded (tools/qemu-run.sh --amdgpu), with or without a GPU.
 *
 * Errnos (Documentation/kfd-backend.rst):
 *   attach   EBADF   not an open fd (or an O_PATH one)
 *            EINVAL  not /dev/kfd, or flags/reserved/out fields not zero
 *            EPERM   the KFD process is not the caller's
 *            ENOEXEC the running amdgpu's layout differs from the build's
 *            EEXIST  the client is already attached
 *   register ENXIO   client not attached
 *            EPERM   another process than the attached one
 *            ENOENT  no KFD queue with that ring base
 */
#include <sys/syscall.h>

#include <linux/xsched_sim.h>

#include "kfd_test.h"

FIXTURE(kfd)
{
	int cfd;	/* /dev/xsched */
	int kfd;	/* /dev/kfd, or -1 */
};

FIXTURE_SETUP(kfd)
{
	struct xsched_version v;

	self->kfd = -1;
	KT_OPEN_DEV_OR_SKIP(self->cfd, KT_XSCHED, "is xsched_kfd.ko loaded?");
	ASSERT_EQ(0, kt_version(self->cfd, &v));
	if (!(v.backends & (1U << XSCHED_BACKEND_KFD)))
		SKIP(return, "xsched_kfd.ko was built without KFD_SRC (no kfd backend)");
	KT_OPEN_KFD_OR_SKIP(self->kfd);
}

FIXTURE_TEARDOWN(kfd)
{
	if (self->kfd >= 0)
		close(self->kfd);
	if (self->cfd >= 0)
		close(self->cfd);
}

TEST_F(kfd, version_reports_kfd_backend)
{
	struct xsched_version v;

	ASSERT_EQ(0, kt_version(self->cfd, &v));
	EXPECT_NE(0, v.backends & (1U << XSCHED_BACKEND_KFD));
}

/*
 * This VM loads xsched_kfd.ko alone, as a production server does: no sim
 * backend, no sim device, and the sim's old client ioctls are unknown.
 */
TEST_F(kfd, production_load_has_no_sim)
{
	struct xsched_register r = {
		.backend = XSCHED_BACKEND_SIM,
		.backend_fd = (uint32_t)self->cfd,
	};
	char buf[64] = { 0 };
	struct xsched_version v;
	unsigned int nr;
	int ret;

	ASSERT_EQ(0, kt_version(self->cfd, &v));
	EXPECT_EQ(0, v.backends & (1U << XSCHED_BACKEND_SIM))
		TH_LOG("backends 0x%x: is xsched_sim.ko loaded in this VM?", v.backends);
	EXPECT_EQ(-1, access("/dev/" XSCHED_SIM_DEVICE_NAME, F_OK));
	EXPECT_EQ(ENOENT, errno);
	ret = ioctl(self->cfd, XSCHED_IOC_REGISTER, &r);
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(ENODEV, errno) TH_LOG("REGISTER sim: %s", strerror(errno));
	/* 0x01-0x04 were the sim's on /dev/xsched, at these sizes. */
	for (nr = 1; nr <= 4; nr++) {
		static const unsigned int sizes[] = {
			0, sizeof(struct xsched_sim_mem),
			sizeof(struct xsched_sim_queue_create),
			sizeof(struct xsched_sim_submit), sizeof(struct xsched_sim_wait),
		};

		ret = ioctl(self->cfd, _IOC(_IOC_READ | _IOC_WRITE, XSCHED_IOC_MAGIC,
					    nr, sizes[nr]), buf);
		EXPECT_EQ(-1, ret);
		EXPECT_EQ(ENOTTY, errno) TH_LOG("old sim ioctl 0x%02x", nr);
	}
}

TEST_F(kfd, attach_own_kfd_fd_succeeds)
{
	uint32_t gpus = ~0U;
	int ret;

	ret = kt_attach(self->cfd, self->kfd, &gpus);
	ASSERT_EQ(0, ret) TH_LOG("attach: %s", kt_err(ret));
	EXPECT_LE(gpus, 64U);
	TH_LOG("layout check passed; KFD process has %u gpu(s)", gpus);
}

TEST_F(kfd, attach_twice_is_eexist)
{
	ASSERT_EQ(0, kt_attach(self->cfd, self->kfd, NULL));
	EXPECT_EQ(-EEXIST, kt_attach(self->cfd, self->kfd, NULL));
}

/* A second open of /dev/kfd names the same KFD process; it attaches too. */
TEST_F(kfd, second_kfd_open_attaches_another_client)
{
	int cfd2, kfd2;

	ASSERT_EQ(0, kt_attach(self->cfd, self->kfd, NULL));
	kfd2 = open(KT_KFD, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, kfd2);
	cfd2 = open(KT_XSCHED, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, cfd2);
	EXPECT_EQ(0, kt_attach(cfd2, kfd2, NULL));
	close(cfd2);
	close(kfd2);
}

TEST_F(kfd, attach_dev_null_is_einval)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, kt_attach(self->cfd, fd, NULL));
	close(fd);
}

TEST_F(kfd, attach_regular_file_is_einval)
{
	char path[] = "/tmp/xsched-kfd-XXXXXX";
	int fd = mkstemp(path);

	ASSERT_LE(0, fd);
	unlink(path);
	EXPECT_EQ(-EINVAL, kt_attach(self->cfd, fd, NULL));
	close(fd);
}

TEST_F(kfd, attach_xsched_fd_is_einval)
{
	int other = open(KT_XSCHED, O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, other);
	EXPECT_EQ(-EINVAL, kt_attach(self->cfd, other, NULL));
	EXPECT_EQ(-EINVAL, kt_attach(self->cfd, self->cfd, NULL));
	close(other);
}

TEST_F(kfd, attach_pipe_and_socket_are_einval)
{
	int p[2], s[2];

	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, s));
	EXPECT_EQ(-EINVAL, kt_attach(self->cfd, p[0], NULL));
	EXPECT_EQ(-EINVAL, kt_attach(self->cfd, s[0], NULL));
	close(p[0]);
	close(p[1]);
	close(s[0]);
	close(s[1]);
}

TEST_F(kfd, attach_closed_fd_is_ebadf)
{
	int fd = open(KT_KFD, O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	close(fd);
	EXPECT_EQ(-EBADF, kt_attach(self->cfd, fd, NULL));
}

TEST_F(kfd, attach_out_of_range_fd_is_ebadf)
{
	EXPECT_EQ(-EBADF, kt_attach(self->cfd, 1 << 30, NULL));
	EXPECT_EQ(-EBADF, kt_attach(self->cfd, -1, NULL));
}

TEST_F(kfd, attach_o_path_kfd_fd_is_ebadf)
{
	int fd = open(KT_KFD, O_PATH | O_CLOEXEC);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EBADF, kt_attach(self->cfd, fd, NULL));
	close(fd);
}

TEST_F(kfd, attach_flags_and_reserved_are_einval)
{
	struct xsched_kfd_attach a;

	memset(&a, 0, sizeof(a));
	a.kfd_fd = self->kfd;
	a.flags = 1;
	EXPECT_EQ(-EINVAL, kt_ioctl(self->cfd, XSCHED_IOC_KFD_ATTACH, &a));
	memset(&a, 0, sizeof(a));
	a.kfd_fd = self->kfd;
	a.reserved0 = 1;
	EXPECT_EQ(-EINVAL, kt_ioctl(self->cfd, XSCHED_IOC_KFD_ATTACH, &a));
	memset(&a, 0, sizeof(a));
	a.kfd_fd = self->kfd;
	a.reserved[2] = 1;
	EXPECT_EQ(-EINVAL, kt_ioctl(self->cfd, XSCHED_IOC_KFD_ATTACH, &a));
	/* None of these attached; gpu_count is out only, ignored on input. */
	memset(&a, 0, sizeof(a));
	a.kfd_fd = self->kfd;
	a.gpu_count = 12345;
	EXPECT_EQ(0, kt_ioctl(self->cfd, XSCHED_IOC_KFD_ATTACH, &a));
	EXPECT_LE(a.gpu_count, 64U);
}

/*
 * A child opens /dev/kfd (its own KFD process) and passes the fd to us.
 * If @child_exits the child is gone (and its mm with it) before we attach.
 */
static int attach_foreign_kfd_fd(int cfd, bool child_exits)
{
	int sv[2], fd, ret, status;
	char go = 0;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -1000;
	pid = fork();
	if (pid < 0)
		return -1001;
	if (!pid) {
		int kfd = open(KT_KFD, O_RDWR);

		close(sv[0]);
		if (kfd < 0 || kt_send_fd(sv[1], kfd))
			_exit(1);
		if (!child_exits && read(sv[1], &go, 1) != 1)
			_exit(2);
		_exit(0);
	}
	close(sv[1]);
	fd = kt_recv_fd(sv[0]);
	if (child_exits)
		waitpid(pid, &status, 0);
	ret = fd < 0 ? -1002 : kt_attach(cfd, fd, NULL);
	if (!child_exits) {
		if (write(sv[0], &go, 1) != 1)
			ret = -1003;
		waitpid(pid, &status, 0);
	}
	if (fd >= 0)
		close(fd);
	close(sv[0]);
	return ret;
}

TEST_F(kfd, attach_other_process_kfd_fd_is_eperm)
{
	int ret = attach_foreign_kfd_fd(self->cfd, false);

	EXPECT_EQ(-EPERM, ret) TH_LOG("got %d (%s)", ret, kt_err(ret));
	/* The refusal left the client unattached. */
	EXPECT_EQ(0, kt_attach(self->cfd, self->kfd, NULL));
}

TEST_F(kfd, attach_exited_process_kfd_fd_is_eperm)
{
	int ret = attach_foreign_kfd_fd(self->cfd, true);

	EXPECT_EQ(-EPERM, ret) TH_LOG("got %d (%s)", ret, kt_err(ret));
}

TEST_F(kfd, layout_mismatch_is_enoexec_and_logged)
{
	int kmsg, ret;

	/* The fixture saw the kfd backend, so the knob exists: only root may write it. */
	if (access(KT_KNOB, W_OK) && (errno == EACCES || errno == EPERM))
		SKIP(return, "%s: %s (needs root)", KT_KNOB, strerror(errno));
	ASSERT_EQ(0, access(KT_KNOB, W_OK)) TH_LOG("%s: %s", KT_KNOB, strerror(errno));
	kmsg = kt_kmsg_open();
	ASSERT_LE(0, kmsg);
	ASSERT_EQ(0, kt_knob_set(true));
	ret = kt_attach(self->cfd, self->kfd, NULL);
	kt_knob_set(false);
	EXPECT_EQ(-ENOEXEC, ret) TH_LOG("got %s", kt_err(ret));
	EXPECT_TRUE(kt_kmsg_has(kmsg, KT_REBUILD))
		TH_LOG("no kernel log line with \"%s\"", KT_REBUILD);
	close(kmsg);
	/* With the knob off the same fd attaches. */
	EXPECT_EQ(0, kt_attach(self->cfd, self->kfd, NULL));
}

TEST_F(kfd, register_before_attach_is_enxio)
{
	EXPECT_EQ(-ENXIO, kt_register(self->cfd, 0x7f0000000000ULL, 0));
}

TEST_F(kfd, register_bogus_ring_is_enoent)
{
	ASSERT_EQ(0, kt_attach(self->cfd, self->kfd, NULL));
	EXPECT_EQ(-ENOENT, kt_register(self->cfd, 0x7f0000000000ULL, 0));
	EXPECT_EQ(-ENOENT, kt_register(self->cfd, 0x1000, 0));
	EXPECT_EQ(-ENOENT, kt_register(self->cfd, ~0ULL, 0));
}

TEST_F(kfd, register_ring_zero_is_enoent)
{
	ASSERT_EQ(0, kt_attach(self->cfd, self->kfd, NULL));
	EXPECT_EQ(-ENOENT, kt_register(self->cfd, 0, 0));
}

TEST_F(kfd, register_rejects_bad_priority_and_reserved)
{
	struct xsched_register r;

	ASSERT_EQ(0, kt_attach(self->cfd, self->kfd, NULL));
	EXPECT_EQ(-EINVAL, kt_register(self->cfd, 0x1000, XSCHED_PRIO_MAX + 1));
	memset(&r, 0, sizeof(r));
	r.backend = XSCHED_BACKEND_KFD;
	r.handle = 0x1000;
	r.reserved[0] = 1;
	EXPECT_EQ(-EINVAL, kt_ioctl(self->cfd, XSCHED_IOC_REGISTER, &r));
}

/* A fork child shares the client fd but not the KFD process. */
TEST_F(kfd, register_from_forked_child_is_eperm)
{
	int status;
	pid_t pid;

	ASSERT_EQ(0, kt_attach(self->cfd, self->kfd, NULL));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(-kt_register(self->cfd, 0x7f0000000000ULL, 0));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(EPERM, WEXITSTATUS(status))
		TH_LOG("child's register: %s", strerror(WEXITSTATUS(status)));
	/* The parent still may. */
	EXPECT_EQ(-ENOENT, kt_register(self->cfd, 0x7f0000000000ULL, 0));
}

/* The attachment holds its own reference on the KFD file. */
TEST_F(kfd, attachment_outlives_closed_kfd_fd)
{
	ASSERT_EQ(0, kt_attach(self->cfd, self->kfd, NULL));
	close(self->kfd);
	self->kfd = -1;
	EXPECT_EQ(-ENOENT, kt_register(self->cfd, 0x7f0000000000ULL, 0));
	EXPECT_EQ(-EEXIST, kt_attach(self->cfd, 0, NULL));
}

/*
 * A process that exits while attached: its mm goes (KFD's notifier runs)
 * before its files are closed, so the detach sees an exiting KFD process.
 */
TEST_F(kfd, process_exit_while_attached_is_clean)
{
	int kmsg = kt_kmsg_open();
	int i, status;
	pid_t pid;

	for (i = 0; i < 8; i++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			int c = open(KT_XSCHED, O_RDWR);
			int k = open(KT_KFD, O_RDWR);

			if (c < 0 || k < 0 || kt_attach(c, k, NULL))
				_exit(1);
			if (i & 1)
				close(k);	/* only the attachment holds it */
			_exit(0);		/* fds closed by exit */
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
			TH_LOG("child %d: status 0x%x", i, status);
	}
	if (kmsg >= 0) {
		EXPECT_FALSE(kt_kmsg_has(kmsg, "WARNING:"));
		close(kmsg);
	}
}

/*
 * KFD lists each of its processes in sysfs, by the owner's pid, until it
 * has destroyed that process's queues and unpinned its memory: the last
 * file of it closed and its mm gone.
 */
#define KT_KFD_PROCS	"/sys/class/kfd/kfd/proc"

static bool kfd_proc_listed(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), KT_KFD_PROCS "/%d", (int)pid);
	return !stat(path, &st);
}

/* Wait up to 10 s for KFD's process of @pid to go; false if it stays. */
static bool kfd_proc_goes(pid_t pid)
{
	int i;

	for (i = 0; i < 1000 && kfd_proc_listed(pid); i++)
		usleep(10000);
	return !kfd_proc_listed(pid);
}

/*
 * The owner attaches, passes its client fd to us and exits.  Its KFD
 * process must go although the client lives on: the attachment lets go of
 * it with the owner's mm, or KFD would keep its queues mapped and its VRAM
 * pinned for as long as anyone holds the client.
 */
TEST_F(kfd, owner_exit_lets_go_of_kfd_process)
{
	int sv[2], held, status;
	pid_t pid;

	if (access(KT_KFD_PROCS, F_OK))
		SKIP(return, "KFD has no %s", KT_KFD_PROCS);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int c = open(KT_XSCHED, O_RDWR);
		int k = open(KT_KFD, O_RDWR);
		char go;

		close(sv[0]);
		if (c < 0 || k < 0 || kt_attach(c, k, NULL))
			_exit(1);
		close(k);		/* only the attachment holds it */
		if (kt_send_fd(sv[1], c))
			_exit(2);
		/* Exit when told: the parent looks at us alive first. */
		if (read(sv[1], &go, 1) < 0)
			_exit(3);
		_exit(0);
	}
	close(sv[1]);
	held = kt_recv_fd(sv[0]);
	ASSERT_LE(0, held) TH_LOG("no client fd from the owner: %s", kt_err(held));
	/* The probe works: the owner's KFD process is there while it lives. */
	EXPECT_TRUE(kfd_proc_listed(pid));
	ASSERT_EQ(1, write(sv[0], "x", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("owner: status 0x%x", status);
	EXPECT_TRUE(kfd_proc_goes(pid))
		TH_LOG("the owner exited but its KFD process stays while we hold its client");
	/* The client still answers: attached, but not ours to register on. */
	EXPECT_EQ(-EEXIST, kt_attach(held, self->kfd, NULL));
	EXPECT_EQ(-EPERM, kt_register(held, 0x7f0000000000ULL, 0));
	close(held);
	close(sv[0]);
}

/*
 * The same across exec: the client fd (no O_CLOEXEC) survives into a
 * program that never used KFD; the attached KFD process belonged to the
 * mm that exec dropped, and must go while the program runs.
 */
TEST_F(kfd, exec_lets_go_of_kfd_process)
{
	int hold[2], ready[2], status;
	bool gone;
	char b;
	pid_t pid;

	if (access(KT_KFD_PROCS, F_OK))
		SKIP(return, "KFD has no %s", KT_KFD_PROCS);
	/* Both close at exec, but for the shell's stdin. */
	ASSERT_EQ(0, pipe2(hold, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int c = open(KT_XSCHED, O_RDWR);
		int k = open(KT_KFD, O_RDWR | O_CLOEXEC);

		if (c < 0 || k < 0 || kt_attach(c, k, NULL))
			_exit(1);
		/* The exec'd shell reads its stdin: EOF when we are done. */
		if (dup2(hold[0], 0) < 0)
			_exit(2);
		if (write(ready[1], "a", 1) != 1)
			_exit(3);
		execl("/bin/sh", "sh", "-c", "read x; exit 0", (char *)NULL);
		_exit(4);
	}
	close(hold[0]);
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &b, 1)) TH_LOG("the child did not attach");
	/* Only exec closes the child's ready[1]: EOF, the shell runs. */
	ASSERT_EQ(0, read(ready[0], &b, 1));
	gone = kfd_proc_goes(pid);
	/* Still the shell, not an exited child. */
	EXPECT_EQ(0, waitpid(pid, &status, WNOHANG));
	close(hold[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child: status 0x%x", status);
	EXPECT_TRUE(gone)
		TH_LOG("exec dropped the attached mm but its KFD process stayed");
	close(ready[0]);
}

/*
 * The owner's mm goes (exit_mmap runs every notifier's release) while
 * another process closes the last fd of its clients (each close
 * unregisters its notifier, which runs the release itself if exit_mmap has
 * not unhashed it yet).  mm/mmu_notifier.c may so call a release twice; the
 * attachment must let go of its file once, or the second call underflows
 * a->live.  A grandchild holds the owner's clients and closes them as the
 * owner exits, many rounds, as the window is only KFD's own release.
 */
#define KT_RACE_CLIENTS	32
#define KT_RACE_ROUNDS	20

TEST_F(kfd, client_close_racing_owner_exit_is_clean)
{
	int kmsg = kt_kmsg_open();
	int round, status;
	pid_t pid;

	ASSERT_LE(0, kmsg);
	for (round = 0; round < KT_RACE_ROUNDS; round++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			int c[KT_RACE_CLIENTS], go[2], k, i;
			pid_t g;
			char b;

			k = open(KT_KFD, O_RDWR | O_CLOEXEC);
			if (k < 0 || pipe(go))
				_exit(1);
			for (i = 0; i < KT_RACE_CLIENTS; i++) {
				c[i] = open(KT_XSCHED, O_RDWR | O_CLOEXEC);
				if (c[i] < 0 || kt_attach(c[i], k, NULL))
					_exit(2);
			}
			close(k);
			g = fork();
			if (g < 0)
				_exit(3);
			if (!g) {
				/* Told, close them all: each close is the last. */
				close(go[1]);
				if (read(go[0], &b, 1) != 1)
					_exit(4);
				for (i = 0; i < KT_RACE_CLIENTS; i++)
					close(c[i]);
				_exit(0);
			}
			/* Only the grandchild holds the clients now. */
			for (i = 0; i < KT_RACE_CLIENTS; i++)
				close(c[i]);
			if (write(go[1], "x", 1) != 1)
				_exit(5);
			_exit(0);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
			TH_LOG("round %d: owner status 0x%x", round, status);
		EXPECT_TRUE(kfd_proc_goes(pid))
			TH_LOG("round %d: the owner's KFD process stayed", round);
	}
	/* The grandchildren are reparented; their closes log what they hit. */
	usleep(500000);
	EXPECT_FALSE(kt_kmsg_has(kmsg, "refcount_t"))
		TH_LOG("a release ran twice: a->live underflowed");
	close(kmsg);
}

/* While a client is attached its fd pins the module: unloading is refused. */
TEST_F(kfd, module_unload_refused_while_attached)
{
	long ret;

	ASSERT_EQ(0, kt_attach(self->cfd, self->kfd, NULL));
	ret = syscall(SYS_delete_module, "xsched_kfd", O_NONBLOCK);
	if (ret && errno == EPERM)
		SKIP(return, "delete_module needs CAP_SYS_MODULE");
	ASSERT_EQ(-1, ret) TH_LOG("xsched_kfd was unloaded under an attached client");
	EXPECT_TRUE(errno == EWOULDBLOCK || errno == EBUSY)
		TH_LOG("delete_module: %s", strerror(errno));
	/* Still working. */
	EXPECT_EQ(-ENOENT, kt_register(self->cfd, 0x7f0000000000ULL, 0));
}

TEST_F(kfd, many_attach_detach_cycles)
{
	int i;

	for (i = 0; i < 300; i++) {
		int c = open(KT_XSCHED, O_RDWR | O_CLOEXEC);

		ASSERT_LE(0, c);
		ASSERT_EQ(0, kt_attach(c, self->kfd, NULL)) TH_LOG("cycle %d", i);
		close(c);
	}
}

TEST_HARNESS_MAIN
