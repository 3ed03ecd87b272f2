// SPDX-License-Identifier: MIT
/*
 * The kfd platform's pure logic (fallback selection, KFD debugger-API status
 * words and errno messages, queue snapshot parsing), its open path on a host
 * without /dev/xsched, and the core's handling of a Lv3-only platform with no
 * launch path (what the kfd platform is), on the mock.
 */
#include <stdlib.h>
#include <unistd.h>

#include "util.h"
#include "platform/kfd_dbg.h"

TEST(kfd_fallback_env_parsed)
{
	ASSERT_EQ(xs_kfd_parse_fallback(NULL), XS_KFD_AUTO);
	ASSERT_EQ(xs_kfd_parse_fallback(""), XS_KFD_AUTO);
	ASSERT_EQ(xs_kfd_parse_fallback("auto"), XS_KFD_AUTO);
	ASSERT_EQ(xs_kfd_parse_fallback("module"), XSCHED_KFD_MODULE);
	ASSERT_EQ(xs_kfd_parse_fallback("none"), XSCHED_KFD_MODULE);
	ASSERT_EQ(xs_kfd_parse_fallback("debugger"), XSCHED_KFD_DEBUGGER);
	ASSERT_EQ(xs_kfd_parse_fallback("Debugger"), -EINVAL);
	ASSERT_EQ(xs_kfd_parse_fallback("1"), -EINVAL);
}

TEST(kfd_fallback_only_when_module_absent)
{
	/* auto */
	ASSERT_EQ(xs_kfd_choose(XS_KFD_AUTO, 0), XSCHED_KFD_MODULE);
	ASSERT_EQ(xs_kfd_choose(XS_KFD_AUTO, -ENOENT), XSCHED_KFD_DEBUGGER);
	ASSERT_EQ(xs_kfd_choose(XS_KFD_AUTO, -ENODEV), XSCHED_KFD_DEBUGGER);
	ASSERT_EQ(xs_kfd_choose(XS_KFD_AUTO, -ENXIO), XSCHED_KFD_DEBUGGER);
	/* the module is there and refused: say so, never switch silently */
	ASSERT_EQ(xs_kfd_choose(XS_KFD_AUTO, -EACCES), -EACCES);
	ASSERT_EQ(xs_kfd_choose(XS_KFD_AUTO, -ENOEXEC), -ENOEXEC);
	ASSERT_EQ(xs_kfd_choose(XS_KFD_AUTO, -EPERM), -EPERM);
	ASSERT_EQ(xs_kfd_choose(XS_KFD_AUTO, -EPROTO), -EPROTO);
	ASSERT_EQ(xs_kfd_choose(XS_KFD_AUTO, -EIO), -EIO);
	/* module only */
	ASSERT_EQ(xs_kfd_choose(XSCHED_KFD_MODULE, 0), XSCHED_KFD_MODULE);
	ASSERT_EQ(xs_kfd_choose(XSCHED_KFD_MODULE, -ENOENT), -ENOENT);
	ASSERT_EQ(xs_kfd_choose(XSCHED_KFD_MODULE, -ENODEV), -ENODEV);
	/* debugger forced: the module is not even tried */
	ASSERT_EQ(xs_kfd_choose(XSCHED_KFD_DEBUGGER, 0), XSCHED_KFD_DEBUGGER);
	ASSERT_EQ(xs_kfd_choose(XSCHED_KFD_DEBUGGER, -EACCES), XSCHED_KFD_DEBUGGER);
}

TEST(kfd_dbg_queue_status_mapped)
{
	ASSERT_EQ(xs_kfd_dbg_queue_status(5), 0);
	ASSERT_EQ(xs_kfd_dbg_queue_status(5 | XS_KFD_DBG_QUEUE_INVALID), -ENODEV);
	ASSERT_EQ(xs_kfd_dbg_queue_status(5 | XS_KFD_DBG_QUEUE_ERROR), -EIO);
	ASSERT_EQ(xs_kfd_dbg_queue_status(XS_KFD_DBG_QUEUE_ERROR |
					  XS_KFD_DBG_QUEUE_INVALID), -EIO);
#if XS_HAVE_KFD_DBG
	ASSERT_EQ(XS_KFD_DBG_QUEUE_ERROR, 1U << KFD_DBG_QUEUE_ERROR_BIT);
	ASSERT_EQ(XS_KFD_DBG_QUEUE_INVALID, 1U << KFD_DBG_QUEUE_INVALID_BIT);
#endif
}

TEST(kfd_dbg_errors_explained)
{
	ASSERT_TRUE(strstr(xs_kfd_dbg_strerror(XS_KFD_OP_ENABLE, -EALREADY), "rocgdb"));
	ASSERT_TRUE(strstr(xs_kfd_dbg_strerror(XS_KFD_OP_QUEUES, -EPERM),
			   "runtime"));
	ASSERT_TRUE(strstr(xs_kfd_dbg_strerror(XS_KFD_OP_QUEUES, -EINVAL),
			   "not enabled"));
	ASSERT_TRUE(strstr(xs_kfd_dbg_strerror(XS_KFD_OP_ENABLE, -EINVAL),
			   "sched_policy"));
	ASSERT_TRUE(strstr(xs_kfd_dbg_strerror(XS_KFD_OP_ENABLE, -ENOTTY), "1.13"));
	ASSERT_TRUE(!strcmp(xs_kfd_dbg_strerror(XS_KFD_OP_QUEUES, -EFAULT), strerror(EFAULT)));
}

#if XS_HAVE_KFD_DBG
static void snap_ent(unsigned char *buf, uint32_t stride, uint32_t i,
		     uint64_t ring, uint32_t qid, uint32_t type, uint32_t save)
{
	struct kfd_queue_snapshot_entry e;

	memset(&e, 0, sizeof(e));
	e.ring_base_address = ring;
	e.read_pointer_address = ring + 0x1000;
	e.write_pointer_address = ring + 0x2000;
	e.queue_id = qid;
	e.gpu_id = 0xabcd;
	e.ring_size = 65536;
	e.queue_type = type;
	e.ctx_save_restore_area_size = save;
	memset(buf + (size_t)i * stride, 0xee, stride);	/* padding: garbage */
	memcpy(buf + (size_t)i * stride, &e, sizeof(e));
}

TEST(kfd_snapshot_maps_ring_to_queue_id)
{
	const uint32_t stride = sizeof(struct kfd_queue_snapshot_entry) + 24;
	unsigned char *buf = calloc(4, stride);
	struct xs_kfd_qent q;

	snap_ent(buf, stride, 0, 0x7f0000000000ULL, 3, KFD_IOC_QUEUE_TYPE_SDMA, 0);
	snap_ent(buf, stride, 1, 0x7f0000100000ULL, 7, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
		 0x95000);
	snap_ent(buf, stride, 2, 0x7f0000200000ULL, 9, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, 0);
	memset(&q, 0, sizeof(q));
	ASSERT_EQ(xs_kfd_snapshot_find(buf, 3, stride, 0x7f0000100000ULL, &q), 0);
	ASSERT_EQ(q.queue_id, 7);
	ASSERT_EQ(q.gpu_id, 0xabcd);
	ASSERT_EQ(q.rptr_addr, 0x7f0000101000ULL);
	ASSERT_EQ(q.wptr_addr, 0x7f0000102000ULL);
	ASSERT_EQ(q.save_area_size, 0x95000);
	/* SDMA queue, AQL queue without a CWSR area: found, not usable */
	ASSERT_EQ(xs_kfd_snapshot_find(buf, 3, stride, 0x7f0000000000ULL, &q), -EOPNOTSUPP);
	ASSERT_EQ(q.queue_id, 3);
	ASSERT_EQ(xs_kfd_snapshot_find(buf, 3, stride, 0x7f0000200000ULL, &q), -EOPNOTSUPP);
	/* not there; only the first n entries count; 0 is never a ring */
	ASSERT_EQ(xs_kfd_snapshot_find(buf, 3, stride, 0x1000, &q), -ENOENT);
	ASSERT_EQ(xs_kfd_snapshot_find(buf, 1, stride, 0x7f0000100000ULL, &q), -ENOENT);
	ASSERT_EQ(xs_kfd_snapshot_find(buf, 0, stride, 0x7f0000100000ULL, &q), -ENOENT);
	ASSERT_EQ(xs_kfd_snapshot_find(buf, 3, stride, 0, &q), -ENOENT);
	/* an entry size KFD cannot have produced */
	ASSERT_EQ(xs_kfd_snapshot_find(buf, 3, 16, 0x7f0000100000ULL, &q), -EPROTO);
	free(buf);
}

TEST(kfd_snapshot_tight_stride)
{
	const uint32_t stride = sizeof(struct kfd_queue_snapshot_entry);
	unsigned char *buf = calloc(2, stride);
	struct xs_kfd_qent q;

	snap_ent(buf, stride, 0, 0x10000, 1, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, 4096);
	snap_ent(buf, stride, 1, 0x20000, 2, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, 4096);
	ASSERT_EQ(xs_kfd_snapshot_find(buf, 2, stride, 0x20000, &q), 0);
	ASSERT_EQ(q.queue_id, 2);
	free(buf);
}
#endif

TEST(kfd_open_bad_fallback_env_is_einval)
{
	struct xsched_kfd *k = (void *)1;

	setenv("XSCHED_KFD_FALLBACK", "sometimes", 1);
	stderr_begin();
	ASSERT_EQ(xsched_kfd_open(&k, -1, "/nonexistent/xsched"), -EINVAL);
	(void)stderr_end();
	ASSERT_TRUE(k == NULL);
	ASSERT_EQ(xsched_kfd_open(NULL, -1, NULL), -EINVAL);
}

TEST(kfd_open_module_only_without_module_is_enoent)
{
	struct xsched_kfd *k;
	int fd = open("/dev/null", O_RDWR);

	setenv("XSCHED_KFD_FALLBACK", "module", 1);
	ASSERT_EQ(xsched_kfd_open(&k, fd, "/nonexistent/xsched"), -ENOENT);
	/* the caller's fd is the caller's */
	ASSERT_EQ(fcntl(fd, F_GETFD), 0);
	close(fd);
}

TEST(kfd_open_auto_falls_back_to_debugger_api)
{
	struct xsched_kfd *k;
	int fd = open("/dev/null", O_RDWR);
	const char *out;

	/* No /dev/xsched: the debugger API is tried, and /dev/null is no KFD
	 * (AMDKFD_IOC_GET_VERSION gives ENOTTY). */
	unsetenv("XSCHED_KFD_FALLBACK");
	setenv("XSCHED_LOG", "info", 1);
	xs_config_reload();
	stderr_begin();
	ASSERT_EQ(xsched_kfd_open(&k, fd, "/nonexistent/xsched"),
		  XS_HAVE_KFD_DBG ? -ENOTTY : -EOPNOTSUPP);
	out = stderr_end();
	ASSERT_TRUE(strstr(out, "debugger API"));
	setenv("XSCHED_KFD_FALLBACK", "debugger", 1);
	ASSERT_EQ(xsched_kfd_open(&k, fd, NULL), XS_HAVE_KFD_DBG ? -ENOTTY : -EOPNOTSUPP);
	ASSERT_EQ(fcntl(fd, F_GETFD), 0);
	close(fd);
}

/* The core, for a platform like kfd: Lv3 only, no launch path. */
TEST(lv3_only_platform_refuses_other_levels_and_submit)
{
	struct mock_platform *mp = mock_create(false, 3);
	uint32_t h = mock_queue_create(mp, 64);
	struct xsched_xqueue *xq;
	struct xsched_attr a = attr_lv(XSCHED_LV1, 0);
	struct mock_cmd c;
	uint64_t seq;
	const char *out;

	mp->ops.min_level = XSCHED_LV3;
	mp->ops.launch = NULL;
	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), -EOPNOTSUPP);
	a = attr_lv(XSCHED_LV2, 0);
	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, &a), -EOPNOTSUPP);
	/* XSCHED_LEVEL=1 is reported and the platform's level used */
	setenv("XSCHED_LEVEL", "1", 1);
	xs_config_reload();
	stderr_begin();
	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, NULL), 0);
	out = stderr_end();
	ASSERT_TRUE(strstr(out, "Lv3..Lv3"));
	ASSERT_EQ(xsched_set_level(xq, XSCHED_LV1), -EOPNOTSUPP);
	ASSERT_EQ(xsched_set_level(xq, XSCHED_LV_DEFAULT), 0);
	memset(&c, 0, sizeof(c));
	ASSERT_EQ(xsched_submit(xq, &c, 1, &seq), -EOPNOTSUPP);
	/* suspend and resume still work: that is all the kfd platform does */
	ASSERT_EQ(xsched_suspend(xq, 0), 0);
	ASSERT_EQ(mock_state(mp, h), XS_HW_SUSPENDED);
	ASSERT_EQ(xsched_resume(xq), 0);
	ASSERT_EQ(mock_state(mp, h), XS_HW_ACTIVE);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}
