// SPDX-License-Identifier: MIT
/* Configuration from the environment: every bad value is reported once. */
#include <stdlib.h>

#include "util.h"

static char *load_env(const char *name, const char *value)
{
	setenv(name, value, 1);
	stderr_begin();
	xs_config_reload();
	return stderr_end();
}

TEST(config_defaults_without_environment)
{
	const struct xs_config *c;
	char *out;

	stderr_begin();
	xs_config_reload();
	out = stderr_end();
	c = xs_config();
	ASSERT_EQ(strlen(out), 0);
	ASSERT_EQ(c->log_level, XS_LOG_WARN);
	ASSERT_TRUE(!c->has_priority);
	ASSERT_TRUE(!c->has_level);
	ASSERT_EQ(c->threshold, XSCHED_THRESHOLD_DEFAULT);
	ASSERT_EQ(c->batch, XSCHED_BATCH_DEFAULT);
	ASSERT_TRUE(!c->arbiter);
}

TEST(config_good_values_are_used_silently)
{
	const struct xs_config *c;
	char *out;

	setenv("XSCHED_PRIORITY", "-7", 1);
	setenv("XSCHED_LEVEL", "2", 1);
	setenv("XSCHED_THRESHOLD", "32", 1);
	setenv("XSCHED_BATCH", " 4 ", 1);
	setenv("XSCHED_LOG", "INFO", 1);
	stderr_begin();
	xs_config_reload();
	out = stderr_end();
	c = xs_config();
	ASSERT_EQ(strlen(out), 0);
	ASSERT_TRUE(c->has_priority);
	ASSERT_EQ(c->priority, -7);
	ASSERT_EQ(c->level, 2);
	ASSERT_EQ(c->threshold, 32);
	ASSERT_EQ(c->batch, 4);
	ASSERT_EQ(c->log_level, XS_LOG_INFO);
}

TEST(config_unknown_level_reported_and_best_used)
{
	char *out = load_env("XSCHED_LEVEL", "4");

	ASSERT_EQ(count_substr(out, "\n"), 1);
	ASSERT_TRUE(strstr(out, "XSCHED_LEVEL='4'"));
	ASSERT_TRUE(!xs_config()->has_level);
	out = load_env("XSCHED_LEVEL", "lv3");
	ASSERT_TRUE(strstr(out, "XSCHED_LEVEL='lv3' is not 1, 2 or 3"));
	ASSERT_TRUE(!xs_config()->has_level);
}

TEST(config_threshold_zero_reported_and_default_used)
{
	char *out = load_env("XSCHED_THRESHOLD", "0");

	ASSERT_EQ(count_substr(out, "\n"), 1);
	ASSERT_TRUE(strstr(out, "XSCHED_THRESHOLD='0'"));
	ASSERT_EQ(xs_config()->threshold, XSCHED_THRESHOLD_DEFAULT);
}

TEST(config_garbage_numbers_reported)
{
	char *out;

	out = load_env("XSCHED_THRESHOLD", "12abc");
	ASSERT_TRUE(strstr(out, "XSCHED_THRESHOLD='12abc'"));
	ASSERT_EQ(xs_config()->threshold, XSCHED_THRESHOLD_DEFAULT);
	unsetenv("XSCHED_THRESHOLD");
	out = load_env("XSCHED_PRIORITY", "high");
	ASSERT_TRUE(strstr(out, "XSCHED_PRIORITY='high'"));
	ASSERT_TRUE(!xs_config()->has_priority);
	out = load_env("XSCHED_PRIORITY", "99999999999999999999");
	ASSERT_TRUE(strstr(out, "XSCHED_PRIORITY="));
	ASSERT_TRUE(!xs_config()->has_priority);
	out = load_env("XSCHED_PRIORITY", "101");
	ASSERT_TRUE(strstr(out, "-100..100"));
	unsetenv("XSCHED_PRIORITY");
	out = load_env("XSCHED_BATCH", "-1");
	ASSERT_TRUE(strstr(out, "XSCHED_BATCH='-1'"));
	ASSERT_EQ(xs_config()->batch, XSCHED_BATCH_DEFAULT);
	unsetenv("XSCHED_BATCH");
	out = load_env("XSCHED_LOG", "verbose");
	ASSERT_TRUE(strstr(out, "XSCHED_LOG='verbose'"));
	ASSERT_EQ(xs_config()->log_level, XS_LOG_WARN);
}

TEST(config_arbiter_zero_or_one_and_garbage_reported)
{
	char *out;

	out = load_env("XSCHED_ARBITER", "1");
	ASSERT_EQ(strlen(out), 0);
	ASSERT_TRUE(xs_config()->arbiter);
	out = load_env("XSCHED_ARBITER", " 0 ");
	ASSERT_EQ(strlen(out), 0);
	ASSERT_TRUE(!xs_config()->arbiter);
	out = load_env("XSCHED_ARBITER", "yes");
	ASSERT_EQ(count_substr(out, "\n"), 1);
	ASSERT_TRUE(strstr(out, "XSCHED_ARBITER='yes' is not 0 or 1; using 0"));
	ASSERT_TRUE(!xs_config()->arbiter);
	out = load_env("XSCHED_ARBITER", "2");
	ASSERT_EQ(count_substr(out, "\n"), 1);
	ASSERT_TRUE(strstr(out, "XSCHED_ARBITER='2'"));
	ASSERT_TRUE(!xs_config()->arbiter);
	out = load_env("XSCHED_ARBITER", "");
	ASSERT_EQ(strlen(out), 0);
	ASSERT_TRUE(!xs_config()->arbiter);
}

TEST(config_arbiter_environment_gives_xqueue_default)
{
	struct mock_platform *mp;
	struct xsched_xqueue *xq;
	struct xsched_attr a;
	uint32_t h1, h2, h3;

	setenv("XSCHED_ARBITER", "1", 1);
	xs_config_reload();
	mp = mock_create(false, 3);
	h1 = mock_queue_create(mp, 64);
	h2 = mock_queue_create(mp, 64);
	h3 = mock_queue_create(mp, 64);
	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h1, NULL), 0);
	ASSERT_EQ(xq_info(xq).arbiter, 1);
	ASSERT_TRUE(mock_q(mp, h1)->arbitrated);
	ASSERT_EQ(xsched_suspend(xq, 0), -EBUSY);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	/* The program's choice wins over the environment. */
	a = attr_lv(XSCHED_LV3, 0);
	a.flags |= XSCHED_ATTR_ARBITER;
	a.arbiter = 0;
	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h2, &a), 0);
	ASSERT_EQ(xq_info(xq).arbiter, 0);
	ASSERT_TRUE(!mock_q(mp, h2)->arbitrated);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	/* Lv1 stays in-process even in arbiter mode. */
	a = attr_lv(XSCHED_LV1, 0);
	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h3, &a), 0);
	ASSERT_EQ(xq_info(xq).arbiter, 0);
	ASSERT_TRUE(!mock_q(mp, h3)->arbitrated);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(config_batch_above_threshold_is_clamped_with_message)
{
	char *out;

	setenv("XSCHED_THRESHOLD", "4", 1);
	out = load_env("XSCHED_BATCH", "8");
	ASSERT_TRUE(strstr(out, "XSCHED_BATCH=8 is larger than the threshold 4"));
	ASSERT_EQ(xs_config()->batch, 4);
}

TEST(config_environment_gives_xqueue_defaults)
{
	struct mock_platform *mp;
	struct xsched_xqueue *xq;
	struct xsched_attr a;
	uint32_t h1, h2;

	setenv("XSCHED_PRIORITY", "3", 1);
	setenv("XSCHED_LEVEL", "1", 1);
	setenv("XSCHED_THRESHOLD", "6", 1);
	setenv("XSCHED_BATCH", "2", 1);
	xs_config_reload();
	mp = mock_create(false, 3);
	h1 = mock_queue_create(mp, 64);
	h2 = mock_queue_create(mp, 64);
	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h1, NULL), 0);
	ASSERT_EQ(xq_info(xq).priority, 3);
	ASSERT_EQ(xq_info(xq).level, 1);
	ASSERT_EQ(xq_info(xq).threshold, 6);
	ASSERT_EQ(xq_info(xq).batch, 2);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	/* What the program sets through the API wins over the environment. */
	a = attr_lv(XSCHED_LV3, -1);
	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h2, &a), 0);
	ASSERT_EQ(xq_info(xq).priority, -1);
	ASSERT_EQ(xq_info(xq).level, 3);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(config_level_above_platform_reported_and_clamped)
{
	struct mock_platform *mp;
	struct xsched_xqueue *xq;
	uint32_t h;
	char *out;

	setenv("XSCHED_LEVEL", "3", 1);
	xs_config_reload();
	mp = mock_create(false, 2);
	h = mock_queue_create(mp, 64);
	stderr_begin();
	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, NULL), 0);
	out = stderr_end();
	ASSERT_TRUE(strstr(out, "XSCHED_LEVEL=3 but platform mock supports up to Lv2"));
	ASSERT_EQ(xq_info(xq).level, 2);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(config_threshold_above_ring_reported_and_clamped)
{
	struct mock_platform *mp;
	struct xsched_xqueue *xq;
	uint32_t h;
	char *out;

	setenv("XSCHED_THRESHOLD", "100", 1);
	xs_config_reload();
	mp = mock_create(false, 1);
	h = mock_queue_create(mp, 16);
	stderr_begin();
	ASSERT_EQ(xsched_xqueue_create(&xq, &mp->plat, h, NULL), 0);
	out = stderr_end();
	ASSERT_TRUE(strstr(out, "threshold 100 is larger than the ring of 16"));
	ASSERT_EQ(xq_info(xq).threshold, 16);
	ASSERT_EQ(xsched_xqueue_destroy(xq), 0);
	mock_destroy(mp);
}

TEST(names_of_actions_and_reasons)
{
	ASSERT_TRUE(!strcmp(xsched_action_name(XSCHED_ACT_SUSPEND), "suspend"));
	ASSERT_TRUE(!strcmp(xsched_action_name(XSCHED_ACT_RESUME), "resume"));
	ASSERT_TRUE(!strcmp(xsched_action_name(77), "?"));
	ASSERT_TRUE(strstr(xsched_reason_name(XSCHED_WHY_HIGHER_BUSY), "busy"));
	ASSERT_TRUE(!strcmp(xsched_reason_name(0), "?"));
}

TEST(runtime_version_matches_the_header)
{
	ASSERT_EQ(xsched_version(), XSCHED_LIB_VERSION_MAJOR << 16 |
		  XSCHED_LIB_VERSION_MINOR);
	ASSERT_EQ(xsched_version(), 3);
}

TEST(config_log_takes_a_level_and_trace)
{
	char *out;

	out = load_env("XSCHED_LOG", "debug,trace");
	ASSERT_EQ(strlen(out), 0);
	ASSERT_EQ(xs_config()->log_level, XS_LOG_DEBUG);
	ASSERT_TRUE(xs_config()->trace);
	out = load_env("XSCHED_LOG", "trace");
	ASSERT_EQ(strlen(out), 0);
	ASSERT_EQ(xs_config()->log_level, XS_LOG_WARN);
	ASSERT_TRUE(xs_config()->trace);
	out = load_env("XSCHED_LOG", "info,tracing");
	ASSERT_TRUE(strstr(out, "XSCHED_LOG='tracing'"));
	ASSERT_EQ(xs_config()->log_level, XS_LOG_INFO);
	ASSERT_TRUE(!xs_config()->trace);
}

/* A marker that cannot be opened: said once, then no more tries. */
TEST(config_trace_marker_unwritable_said_once)
{
	char *out;

	setenv("XSCHED_TRACE_MARKER", "/nonexistent/trace_marker", 1);
	load_env("XSCHED_LOG", "trace");
	ASSERT_TRUE(xs_trace_on());
	stderr_begin();
	xs_trace("decision", "q=%u", 1u);
	xs_trace("decision", "q=%u", 2u);
	out = stderr_end();
	ASSERT_EQ(count_substr(out, "cannot open /nonexistent/trace_marker"), 1);
	ASSERT_TRUE(!xs_trace_on());
}
