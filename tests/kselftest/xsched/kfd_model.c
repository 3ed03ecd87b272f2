// SPDX-License-Identifier: GPL-2.0
/*
 * The kfd backend's hardware-only failure paths, driven on the module's
 * model of a KFD process (debugfs xsched/kfd_model, module parameter
 * kfd_model; Documentation/kfd-backend.rst, "Testing without a GPU"): a
 * GPU reset fails the queue with EIO and the backend never asks KFD to
 * preempt it again, a queue id its owner destroyed and KFD handed out again
 * never names the new queue (ENODEV), and a preemption that fails in KFD
 * fails the queue with ETIMEDOUT.  Every call from REGISTER on is the real
 * backend's; only KFD's side (its structures, update_queue, the reset
 * counter) is the model.
 */
#include "xsched_test.h"

#define MODEL_PARAM	"/sys/module/xsched_kfd/parameters/kfd_model"
#define MODEL_PATH	"/sys/kernel/debug/xsched/kfd_model"
#define QID		1

FIXTURE(km) {
	int cfd;
	struct xsched_version ver;
	int mfd;		/* the model: one KFD process, one GPU */
	int qfd;
	uint64_t ring;
	uint64_t ptrs[2];	/* the queue's read and write dispatch ids */
	char param[8];		/* to restore */
};

/* One model command; 0 or -errno. */
static int model_cmd(int mfd, const char *cmd)
{
	ssize_t n = write(mfd, cmd, strlen(cmd));

	return n == (ssize_t)strlen(cmd) ? 0 : -errno;
}

/* A queue QID at @ring whose dispatch ids are @ptrs. */
static int model_queue(int mfd, uint64_t ring, uint64_t *ptrs)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "queue %u %llx %llx %llx", QID,
		 (unsigned long long)ring, (unsigned long long)(uintptr_t)&ptrs[0],
		 (unsigned long long)(uintptr_t)&ptrs[1]);
	return model_cmd(mfd, cmd);
}

/* The model's update_queue() calls so far, or -1. */
static int model_updates(int mfd)
{
	char buf[512];
	ssize_t n = pread(mfd, buf, sizeof(buf) - 1, 0);
	unsigned int v;

	if (n <= 0)
		return -1;
	buf[n] = 0;
	return sscanf(buf, "updates %u", &v) == 1 ? (int)v : -1;
}

/* KFD's is_suspended of live queue QID: 0, 1, or -1 if there is none. */
static int model_suspended(int mfd)
{
	char buf[512], key[32], *p;
	ssize_t n = pread(mfd, buf, sizeof(buf) - 1, 0);
	int v;

	if (n <= 0)
		return -1;
	buf[n] = 0;
	snprintf(key, sizeof(key), "queue %u suspended ", QID);
	p = strstr(buf, key);
	return p && sscanf(p + strlen(key), "%d", &v) == 1 ? v : -1;
}

/* REGISTER of the kfd queue at @ring on client @cfd: the queue fd or -errno. */
static int register_kfd(int cfd, uint64_t ring)
{
	struct xsched_register r = {
		.backend = XSCHED_BACKEND_KFD,
		.handle = ring,
	};

	return xs_ioctl(cfd, XSCHED_IOC_REGISTER, &r);
}

FIXTURE_SETUP(km)
{
	struct xsched_kfd_attach a = {};

	self->mfd = -1;
	self->qfd = -1;
	XS_CLIENT_OPEN_OR_SKIP(self->cfd, self->ver);
	if (!(self->ver.backends & (1U << XSCHED_BACKEND_KFD)))
		SKIP(return, "module built without the kfd backend");
	XS_DEBUGFS_OR_SKIP();
	xs_param_read(MODEL_PARAM, self->param, sizeof(self->param));
	ASSERT_NE(0, self->param[0]) TH_LOG("no %s", MODEL_PARAM);
	ASSERT_EQ(0, xs_write_file(MODEL_PARAM, "1"));
	self->mfd = open(MODEL_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->mfd) TH_LOG("%s: %s", MODEL_PATH, strerror(errno));
	a.kfd_fd = self->mfd;
	ASSERT_EQ(0, xs_ioctl(self->cfd, XSCHED_IOC_KFD_ATTACH, &a));
	EXPECT_EQ(1, a.gpu_count);
	self->ring = 0x7f0000100000ULL;
	ASSERT_EQ(0, model_queue(self->mfd, self->ring, self->ptrs));
	self->qfd = register_kfd(self->cfd, self->ring);
	ASSERT_LE(0, self->qfd) TH_LOG("register: %s", xs_err(self->qfd));
	ASSERT_EQ(0, model_updates(self->mfd));
}

FIXTURE_TEARDOWN(km)
{
	if (self->qfd >= 0)
		close(self->qfd);
	if (self->mfd >= 0)
		close(self->mfd);
	if (self->cfd >= 0)
		close(self->cfd);
	if (self->param[0])
		xs_write_file(MODEL_PARAM, self->param);
}

/* QUERY says FAILED with @err. */
static void expect_failed(struct __test_metadata *_metadata, int qfd, int err)
{
	struct xsched_queue_info info;

	ASSERT_EQ(0, xs_query(qfd, &info));
	EXPECT_EQ(XSCHED_STATE_FAILED, info.state)
		TH_LOG("state %s", xs_state_name(info.state));
	EXPECT_EQ(err, info.last_error)
		TH_LOG("last_error %d (%s), expected %d (%s)", info.last_error,
		       strerror(-info.last_error), err, strerror(-err));
}

/*
 * A reset while the queue is suspended: the resume fails with EIO without
 * asking KFD (no update_queue after the reset, so no second reset), the
 * queue is FAILED, and the close clears KFD's suspended flag only.
 */
TEST_F(km, reset_fails_suspended_queue_and_never_preempts_again)
{
	ASSERT_EQ(0, xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	EXPECT_EQ(1, model_updates(self->mfd));
	EXPECT_EQ(1, model_suspended(self->mfd));
	ASSERT_EQ(0, model_cmd(self->mfd, "reset"));
	EXPECT_EQ(-EIO, xs_resume(self->qfd, NULL));
	expect_failed(_metadata, self->qfd, -EIO);
	EXPECT_EQ(-EIO, xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	EXPECT_EQ(1, model_updates(self->mfd)) TH_LOG("KFD was asked to preempt after the reset");
	ASSERT_EQ(0, close(self->qfd));
	self->qfd = -1;
	EXPECT_EQ(0, model_suspended(self->mfd)) TH_LOG("left suspended in KFD");
	EXPECT_EQ(1, model_updates(self->mfd)) TH_LOG("the release asked KFD after the reset");
}

/* A reset is seen by the next progress read of an active queue too. */
TEST_F(km, reset_fails_active_queue_on_next_query)
{
	ASSERT_EQ(0, model_cmd(self->mfd, "reset"));
	expect_failed(_metadata, self->qfd, -EIO);
	EXPECT_EQ(-EIO, xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	EXPECT_EQ(0, model_updates(self->mfd));
}

/* KFD's HWS hang flag counts as a reset. */
TEST_F(km, hws_hang_fails_queue_without_preempting)
{
	ASSERT_EQ(0, model_cmd(self->mfd, "hws_hang 1"));
	EXPECT_EQ(-EIO, xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	expect_failed(_metadata, self->qfd, -EIO);
	EXPECT_EQ(0, model_updates(self->mfd));
}

/*
 * The owner destroys the queue and KFD gives the next one its id (and here
 * its ring too): the old registration fails with ENODEV and never suspends
 * the new queue; the new queue registers (no EEXIST) and suspends.
 */
TEST_F(km, reused_queue_id_never_reaches_the_new_queue)
{
	int qfd2;

	ASSERT_EQ(0, model_cmd(self->mfd, "destroy 1"));
	ASSERT_EQ(0, model_queue(self->mfd, self->ring, self->ptrs));
	EXPECT_EQ(-ENODEV, xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	expect_failed(_metadata, self->qfd, -ENODEV);
	EXPECT_EQ(0, model_updates(self->mfd));
	EXPECT_EQ(0, model_suspended(self->mfd)) TH_LOG("the new queue was suspended");
	qfd2 = register_kfd(self->cfd, self->ring);
	ASSERT_LE(0, qfd2) TH_LOG("register of the new queue: %s", xs_err(qfd2));
	EXPECT_EQ(0, xs_suspend(qfd2, XSCHED_MODE_SAVE, 0, 0, NULL));
	EXPECT_EQ(1, model_suspended(self->mfd));
	/* Closing the old registration leaves the new queue alone. */
	ASSERT_EQ(0, close(self->qfd));
	self->qfd = -1;
	EXPECT_EQ(1, model_suspended(self->mfd));
	ASSERT_EQ(0, close(qfd2));
	EXPECT_EQ(0, model_suspended(self->mfd));
}

/* A preemption that fails in KFD (which then resets the GPU): ETIMEDOUT, FAILED, never again. */
TEST_F(km, failed_preemption_fails_queue_and_is_not_retried)
{
	ASSERT_EQ(0, model_cmd(self->mfd, "fail_update 1"));
	EXPECT_EQ(-ETIMEDOUT, xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	expect_failed(_metadata, self->qfd, -ETIMEDOUT);
	EXPECT_EQ(1, model_updates(self->mfd));
	EXPECT_EQ(0, model_suspended(self->mfd));
	EXPECT_EQ(-EIO, xs_resume(self->qfd, NULL));
	EXPECT_EQ(-EIO, xs_suspend(self->qfd, XSCHED_MODE_SAVE, 0, 0, NULL));
	ASSERT_EQ(0, close(self->qfd));
	self->qfd = -1;
	EXPECT_EQ(1, model_updates(self->mfd)) TH_LOG("KFD was asked again after the failure");
}

TEST_HARNESS_MAIN
