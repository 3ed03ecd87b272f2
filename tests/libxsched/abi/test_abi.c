// SPDX-License-Identifier: MIT
/*
 * ABI tests of libxsched.so, built from the public header alone and linked
 * against the shared library: a program built against 0.1/0.2 (it calls
 * xsched_query@LIBXSCHED_0.1 and xsched_decisions@LIBXSCHED_0.1 with the old
 * struct sizes) and one built against a header newer than the library (it
 * passes structs larger than the library knows) both get what they asked
 * for and nothing written beyond it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xsched.h>

#include "harness.h"

/* The entry points as a program linked against 0.1 sees them. */
int old_query(struct xsched_xqueue *xq, void *info);
int old_decisions(void *out, unsigned int max);
__asm__(".symver old_query, xsched_query@LIBXSCHED_0.1");
__asm__(".symver old_decisions, xsched_decisions@LIBXSCHED_0.1");

#define FILL 0xa5


/* A call queue whose calls complete at once: public API only. */
static int mark_record(void *ctx, void **mark)
{
	*mark = ctx;
	return 0;
}

static int mark_wait(void *ctx, void *mark, int64_t timeout_ns)
{
	(void)ctx;
	(void)mark;
	(void)timeout_ns;
	return 0;
}

static void mark_free(void *ctx, void *mark)
{
	(void)ctx;
	(void)mark;
}

static int call_ok(void *arg)
{
	(void)arg;
	return 0;
}

static const struct xsched_call_ops ops = {
	.mark_record = mark_record,
	.mark_wait = mark_wait,
	.mark_free = mark_free,
};

static struct xsched_xqueue *mk(uint32_t group, unsigned int ncalls)
{
	static int ctx;
	struct xsched_attr a = { .flags = XSCHED_ATTR_GROUP, .group = group };
	struct xsched_call c = { .fn = call_ok };
	struct xsched_xqueue *xq;
	unsigned int i;

	ASSERT_EQ(xsched_xqueue_create_calls(&xq, &ops, &ctx, &a), 0);
	for (i = 0; i < ncalls; i++)
		ASSERT_EQ(xsched_submit_call(xq, &c, 1, NULL, NULL), 0);
	ASSERT_EQ(xsched_synchronize(xq), 0);
	return xq;
}

/* How many bytes from @off on are @v. */
static size_t run_of(const unsigned char *b, size_t off, size_t end, int v)
{
	size_t i;

	for (i = off; i < end && b[i] == v; i++)
		;
	return i - off;
}

TEST(old_caller_query_gets_the_0_1_struct_and_nothing_beyond)
{
	struct xsched_xqueue *xq = mk(7, 3);
	unsigned char buf[256];
	struct xsched_xq_info info;

	memset(buf, FILL, sizeof(buf));
	ASSERT_EQ(old_query(xq, buf), 0);
	memcpy(&info, buf, XSCHED_XQ_INFO_SIZE_VER0);
	ASSERT_EQ(info.id, xsched_xqueue_id(xq));
	ASSERT_EQ(info.submitted, 3);
	ASSERT_EQ(info.completed, 3);
	ASSERT_EQ(run_of(buf, XSCHED_XQ_INFO_SIZE_VER0, sizeof(buf), FILL),
		  sizeof(buf) - XSCHED_XQ_INFO_SIZE_VER0);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
}

TEST(new_caller_query_gets_every_field_and_zeroes_beyond)
{
	struct xsched_xqueue *xq = mk(7, 2);
	unsigned char buf[256];
	struct xsched_xq_info info;
	size_t future = sizeof(info) + 32;	/* a newer header's struct */

	memset(buf, FILL, sizeof(buf));
	ASSERT_EQ(xsched_query(xq, (void *)buf, future), 0);
	memcpy(&info, buf, sizeof(info));
	ASSERT_EQ(info.submitted, 2);
	ASSERT_EQ(info.group, 7);
	ASSERT_EQ(run_of(buf, sizeof(info), future, 0), future - sizeof(info));
	ASSERT_EQ(run_of(buf, future, sizeof(buf), FILL), sizeof(buf) - future);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
}

TEST(query_smaller_than_ver0_is_einval_and_writes_nothing)
{
	struct xsched_xqueue *xq = mk(0, 0);
	unsigned char buf[256];

	memset(buf, FILL, sizeof(buf));
	ASSERT_EQ(xsched_query(xq, (void *)buf, XSCHED_XQ_INFO_SIZE_VER0 - 1), -EINVAL);
	ASSERT_EQ(run_of(buf, 0, sizeof(buf), FILL), sizeof(buf));
	ASSERT_EQ(xsched_decisions((void *)buf, 1, XSCHED_DECISION_SIZE_VER0 - 1),
		  -EINVAL);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
}

/* A user suspend and resume: two decision records. */
static struct xsched_xqueue *two_decisions(void)
{
	struct xsched_xqueue *xq = mk(0, 0);

	ASSERT_EQ(xsched_suspend(xq, 0), 0);
	ASSERT_EQ(xsched_resume(xq), 0);
	return xq;
}

TEST(old_caller_decisions_are_packed_at_the_0_1_record_size)
{
	struct xsched_xqueue *xq = two_decisions();
	unsigned char buf[512];
	struct xsched_decision d[2];

	memset(buf, FILL, sizeof(buf));
	ASSERT_EQ(old_decisions(buf, 2), 2);
	memcpy(&d[0], buf, XSCHED_DECISION_SIZE_VER0);
	memcpy(&d[1], buf + XSCHED_DECISION_SIZE_VER0, XSCHED_DECISION_SIZE_VER0);
	ASSERT_EQ(d[0].action, XSCHED_ACT_SUSPEND);
	ASSERT_EQ(d[1].action, XSCHED_ACT_RESUME);
	ASSERT_EQ(d[1].seq, d[0].seq + 1);
	ASSERT_EQ(d[1].queue, xsched_xqueue_id(xq));
	ASSERT_EQ(run_of(buf, 2 * XSCHED_DECISION_SIZE_VER0, sizeof(buf), FILL),
		  sizeof(buf) - 2 * XSCHED_DECISION_SIZE_VER0);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
}

TEST(new_caller_decisions_use_its_record_size_and_zero_the_rest)
{
	struct xsched_xqueue *xq = two_decisions();
	size_t rec = sizeof(struct xsched_decision) + 8;	/* a newer header */
	unsigned char buf[512];
	struct xsched_decision d;

	memset(buf, FILL, sizeof(buf));
	ASSERT_EQ(xsched_decisions((void *)buf, 2, rec), 2);
	memcpy(&d, buf + rec, sizeof(d));
	ASSERT_EQ(d.action, XSCHED_ACT_RESUME);
	ASSERT_EQ(d.reason, XSCHED_WHY_USER);
	ASSERT_EQ(d.decided_ns, 0);	/* not the policy's */
	ASSERT_EQ(run_of(buf, sizeof(d), rec, 0), rec - sizeof(d));
	ASSERT_EQ(run_of(buf, rec + sizeof(d), 2 * rec, 0), rec - sizeof(d));
	ASSERT_EQ(run_of(buf, 2 * rec, sizeof(buf), FILL), sizeof(buf) - 2 * rec);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
}

TEST(library_reports_version_0_3)
{
	ASSERT_EQ(xsched_version(), 0 << 16 | 3);
}

int main(int argc, char **argv)
{

	return xt_run("libxsched-abi", argc > 1 ? argv[1] : NULL, NULL);
}
