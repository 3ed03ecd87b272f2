// SPDX-License-Identifier: MIT
/* The interposition core, driven through a fake runtime (fake_rt.c). */
#include <stdlib.h>

#include "fake_rt.h"
#include "util.h"

static struct xsched_xqueue *xq_of(uintptr_t h, uint32_t flags)
{
	struct xsi_stream *s = xsi_stream_get(&fake_rt, h, flags);

	return s ? xsi_stream_xqueue(s) : NULL;
}

TEST(interpose_unknown_stream_is_created_lazily_with_its_priority)
{
	struct fake_stream *a = fake_stream_new(7, 0);	/* made "before load" */

	fake_auto = true;
	fake_init();
	ASSERT_EQ(xsi_stream_count(&fake_rt), 0);
	ASSERT_EQ(fakeLaunch((uintptr_t)a, 1), 0);
	ASSERT_EQ(xsi_stream_count(&fake_rt), 1);
	ASSERT_EQ(xq_info(xq_of((uintptr_t)a, 0)).priority, 7);
	ASSERT_EQ(fakeLaunch((uintptr_t)a, 2), 0);
	ASSERT_EQ(xsi_stream_count(&fake_rt), 1);	/* found, not made again */
	ASSERT_EQ(fakeStreamSynchronize((uintptr_t)a), 0);
	ASSERT_EQ(fake_launched(a), 2);
	/* A handle the runtime does not know passes through, uncounted. */
	ASSERT_TRUE(xsi_stream_get(&fake_rt, 3, 0) == NULL);
	ASSERT_EQ(xsi_stream_count(&fake_rt), 1);
	xsi_runtime_fini(&fake_rt);
}

TEST(interpose_null_and_legacy_are_one_stream_per_device)
{
	struct xsched_xqueue *d0, *d0l, *d1;

	fake_auto = true;
	fake_init();
	fake_device = 0;
	d0 = xq_of(0, 0);
	d0l = xq_of(1, 0);
	fake_device = 1;
	d1 = xq_of(0, 0);
	ASSERT_TRUE(d0 && d1);
	ASSERT_TRUE(d0 == d0l);
	ASSERT_TRUE(d0 != d1);
	ASSERT_EQ(xsi_stream_count(&fake_rt), 2);
	xsi_runtime_fini(&fake_rt);
}

TEST(interpose_per_thread_default_stream_passes_through)
{
	fake_auto = true;
	fake_init();
	ASSERT_EQ(fakeLaunch_ptsz(0, 5), 0);	/* null via a per-thread entry */
	ASSERT_EQ(fakeLaunch(2, 6), 0);		/* the per-thread handle */
	ASSERT_EQ(fake_nlog, 2);
	ASSERT_EQ(xsi_stream_count(&fake_rt), 0);
	ASSERT_EQ(xs_sched_count(), 0);
	/* ... while the same null handle through the legacy entry is scheduled */
	ASSERT_EQ(fakeLaunch(0, 7), 0);
	ASSERT_EQ(xsi_stream_count(&fake_rt), 1);
	xsi_runtime_fini(&fake_rt);
}

TEST(interpose_reused_handle_gets_a_new_stream)
{
	struct fake_stream *a = fake_stream_new(1, 0);
	struct xsi_stream_desc d = { .priority = 1, .device = 0 };
	struct xsched_xqueue *first;

	fake_auto = true;
	fake_init();
	ASSERT_TRUE(xsi_stream_created(&fake_rt, (uintptr_t)a, &d) != NULL);
	first = xq_of((uintptr_t)a, 0);
	ASSERT_EQ(xq_info(first).priority, 1);
	ASSERT_EQ(xsi_stream_destroyed(&fake_rt, (uintptr_t)a), 0);
	ASSERT_EQ(xsi_stream_destroyed(&fake_rt, (uintptr_t)a), -ENOENT);
	ASSERT_EQ(xsi_stream_count(&fake_rt), 0);
	/* The runtime hands out the same pointer for a new stream. */
	d.priority = 9;
	ASSERT_TRUE(xsi_stream_created(&fake_rt, (uintptr_t)a, &d) != NULL);
	ASSERT_EQ(xq_info(xq_of((uintptr_t)a, 0)).priority, 9);
	/* Created again without a destroy we saw: the stale one is replaced. */
	d.priority = 4;
	ASSERT_TRUE(xsi_stream_created(&fake_rt, (uintptr_t)a, &d) != NULL);
	ASSERT_EQ(xsi_stream_count(&fake_rt), 1);
	ASSERT_EQ(xs_sched_count(), 1);
	ASSERT_EQ(xq_info(xq_of((uintptr_t)a, 0)).priority, 4);
	xsi_runtime_fini(&fake_rt);
}

/* An Lv1 stream with one call in flight and the rest buffered. */
static struct fake_stream *buffered_stream(unsigned int n)
{
	struct fake_stream *a = fake_stream_new(0, 0);
	unsigned int i;

	fake_auto = false;
	fake_init();
	ASSERT_EQ(fakeLaunch((uintptr_t)a, 0), 0);
	ASSERT_EQ(xsched_set_lv1(xq_of((uintptr_t)a, 0), 1, 1), 0);
	for (i = 1; i < n; i++)
		ASSERT_EQ(fakeLaunch((uintptr_t)a, i), 0);
	ASSERT_EQ(fake_launched(a), 1);
	ASSERT_EQ(xq_info(xq_of((uintptr_t)a, 0)).buffered, n - 1);
	return a;
}

TEST(interpose_ordered_call_drains_its_stream_first)
{
	struct fake_stream *a = buffered_stream(6);

	/* Harmless: nothing moves. */
	ASSERT_TRUE(fakeGetName() != NULL);
	ASSERT_EQ(fake_launched(a), 1);
	/* Ordered: everything buffered reaches the runtime before the real
	 * synchronize runs (which then waits for it to complete). */
	fake_auto = true;
	fake_complete(a, 1);
	ASSERT_EQ(fakeStreamSynchronize((uintptr_t)a), 0);
	ASSERT_EQ(fake_launched(a), 6);
	ASSERT_EQ(fake_log[5].tag, 5);
	xsi_runtime_fini(&fake_rt);
}

TEST(interpose_device_wide_ordered_call_drains_every_stream_of_the_device)
{
	struct fake_stream *a = buffered_stream(4);
	struct fake_stream *b = fake_stream_new(0, 1);	/* other device */

	ASSERT_EQ(fakeLaunch((uintptr_t)b, 100), 0);
	ASSERT_EQ(xsched_set_lv1(xq_of((uintptr_t)b, 0), 1, 1), 0);
	ASSERT_EQ(fakeLaunch((uintptr_t)b, 101), 0);
	ASSERT_EQ(fake_launched(b), 1);
	fake_device = 0;
	ASSERT_EQ(fakeDeviceSynchronize(), 0);
	ASSERT_EQ(fake_launched(a), 4);
	ASSERT_EQ(fake_launched(b), 1);		/* device 1: left alone */
	fake_auto = true;
	fake_complete(a, 10);
	fake_complete(b, 10);
	xsi_runtime_fini(&fake_rt);
}

TEST(interpose_worker_runs_calls_with_the_streams_device)
{
	struct fake_stream *b = fake_stream_new(0, 3);
	unsigned int i;

	fake_auto = true;
	fake_init();
	fake_device = 0;	/* the caller's device is not the stream's */
	ASSERT_EQ(fakeLaunch((uintptr_t)b, 0), 0);
	ASSERT_EQ(xsched_suspend(xq_of((uintptr_t)b, 0), 0), 0);
	for (i = 1; i < 4; i++)
		ASSERT_EQ(fakeLaunch((uintptr_t)b, i), 0);
	ASSERT_EQ(fake_launched(b), 1);
	ASSERT_EQ(xsched_resume(xq_of((uintptr_t)b, 0)), 0);
	ASSERT_TRUE(WAIT_UNTIL(fake_launched(b) == 4, 2000));
	/* Launched by the worker, which entered device 3 first. */
	ASSERT_EQ(fake_log[3].device, 3);
	xsi_runtime_fini(&fake_rt);
}

TEST(interpose_runtime_status_of_an_inline_call_is_returned)
{
	struct fake_stream *a = fake_stream_new(0, 0);

	fake_auto = true;
	fake_init();
	ASSERT_EQ(fakeLaunch((uintptr_t)a, 0xdead), 700);
	ASSERT_EQ(xq_info(xq_of((uintptr_t)a, 0)).state, XSCHED_XQ_ACTIVE);
	ASSERT_EQ(xq_info(xq_of((uintptr_t)a, 0)).last_error, 700);
	ASSERT_EQ(fakeLaunch((uintptr_t)a, 1), 0);
	xsi_runtime_fini(&fake_rt);
}

static int real_marker(void)
{
	return 42;
}

TEST(interpose_dlsym_and_proc_address_return_the_hook)
{
	fake_auto = true;
	fake_init();
	ASSERT_TRUE(xsi_dlsym(NULL, "fakeLaunch", (void *)real_marker) ==
		    (void *)fakeLaunch);
	ASSERT_TRUE(xsi_dlsym(NULL, "fakeLaunch_ptsz", (void *)real_marker) ==
		    (void *)fakeLaunch_ptsz);
	ASSERT_TRUE(xsi_dlsym(NULL, "notOurs", (void *)real_marker) ==
		    (void *)real_marker);
	ASSERT_TRUE(xsi_dlsym(NULL, "fakeLaunch", NULL) == NULL);
	ASSERT_TRUE(xsi_redirect(&fake_rt, "fakeGetName", (void *)real_marker) ==
		    (void *)fakeGetName);
	ASSERT_TRUE(xsi_entry_find(&fake_rt, "fakeStreamSynchronize")->cls ==
		    XSI_ORDERED);
	ASSERT_TRUE(xsi_entry_find(&fake_rt, "nope") == NULL);
	xsi_runtime_fini(&fake_rt);
	/* Unregistered: nothing is redirected any more. */
	ASSERT_TRUE(xsi_dlsym(NULL, "fakeLaunch", (void *)real_marker) ==
		    (void *)real_marker);
}

TEST(interpose_debug_log_has_one_line_per_decision)
{
	struct fake_stream *a = fake_stream_new(3, 0);
	char *log;

	setenv("XSCHED_LOG", "debug", 1);
	xs_config_reload();
	fake_auto = true;
	fake_init();
	stderr_begin();
	ASSERT_EQ(fakeLaunch((uintptr_t)a, 1), 0);
	ASSERT_EQ(fakeStreamSynchronize((uintptr_t)a), 0);
	(void)fakeGetName();
	ASSERT_EQ(fakeLaunch_ptsz(0, 1), 0);
	log = stderr_end();
	ASSERT_EQ(count_substr(log, "fake: stream "), 4);
	ASSERT_EQ(count_substr(log, "-> q1: created (lazy), prio 3, dev 0"), 1);
	ASSERT_EQ(count_substr(log, "-> q1: launched seq 1"), 1);
	ASSERT_EQ(count_substr(log, "fakeStreamSynchronize stream "), 1);
	ASSERT_EQ(count_substr(log, "-> q1: drained"), 1);
	ASSERT_EQ(count_substr(log, "fakeGetName: pass-through (harmless)"), 1);
	ASSERT_EQ(count_substr(log, "per-thread default stream: passes through"), 1);
	xsi_runtime_fini(&fake_rt);
}

TEST(interpose_stream_waiting_on_a_held_streams_event_releases_it)
{
	struct fake_stream *lo = fake_stream_new(0, 0), *hi = fake_stream_new(5, 0);
	struct xsi_stream *slo, *shi;
	uint64_t seq;

	fake_auto = false;
	fake_init();
	slo = xsi_stream_get(&fake_rt, (uintptr_t)lo, 0);
	shi = xsi_stream_get(&fake_rt, (uintptr_t)hi, 0);
	ASSERT_EQ(fakeLaunch((uintptr_t)hi, 1), 0);	/* hi busy: lo held */
	ASSERT_EQ(xq_info(xsi_stream_xqueue(slo)).hold, XSCHED_HOLD_POLICY);
	ASSERT_EQ(fakeLaunch((uintptr_t)lo, 2), 0);	/* buffered: held */
	ASSERT_EQ(fake_launched(lo), 0);
	seq = xq_info(xsi_stream_xqueue(slo)).submitted;
	xsi_event_recorded(&fake_rt, 0x1234, slo, seq);
	/* hi waits on lo's event: lo must run until it gets there. */
	ASSERT_EQ(xsi_event_wait(&fake_rt, shi, 0x1234), 0);
	ASSERT_EQ(fake_launched(lo), 1);
	ASSERT_EQ(xq_info(xsi_stream_xqueue(slo)).hold, 0);
	ASSERT_EQ(xsi_event_wait(&fake_rt, shi, 0x9999), -ENOENT);
	fake_auto = true;
	fake_complete(lo, 10);
	fake_complete(hi, 10);
	xsi_runtime_fini(&fake_rt);
}
