// SPDX-License-Identifier: MIT
/* The interposition core, driven through a fake runtime (fake_rt.c). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "fake_rt.h"
#include "interpose/core_state.h"
#include "interpose/mode.h"
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

TEST(interpose_priority_watch_follows_the_runtime_only_when_it_moved)
{
	struct fake_stream *a = fake_stream_new(1, 0), *b = fake_stream_new(2, 0);
	struct xsi_prio_watch w;
	struct xsi_stream *s;

	fake_auto = true;
	fake_init();
	s = xsi_stream_get(&fake_rt, (uintptr_t)a, 0);
	ASSERT_TRUE(s != NULL);
	ASSERT_EQ(xsi_stream_set_priority(&fake_rt, s, 9), 0);	/* the C API's */
	/* A call that leaves the runtime's priority keeps the C API's. */
	xsi_prio_watch_begin(&fake_rt, (uintptr_t)a, &w);
	xsi_prio_watch_end(&w, true);
	ASSERT_EQ(xq_info(xq_of((uintptr_t)a, 0)).priority, 9);
	/* A failed call changes nothing. */
	xsi_prio_watch_begin(&fake_rt, (uintptr_t)a, &w);
	a->priority = 5;
	xsi_prio_watch_end(&w, false);
	ASSERT_EQ(xq_info(xq_of((uintptr_t)a, 0)).priority, 9);
	/* A moved one is followed, into the range. */
	xsi_prio_watch_begin(&fake_rt, (uintptr_t)a, &w);
	a->priority = 4;
	xsi_prio_watch_end(&w, true);
	ASSERT_EQ(xq_info(xq_of((uintptr_t)a, 0)).priority, 4);
	ASSERT_EQ(xsi_stream_desc(s)->priority, 4);
	xsi_prio_watch_begin(&fake_rt, (uintptr_t)a, &w);
	a->priority = 1000;
	xsi_prio_watch_end(&w, true);
	ASSERT_EQ(xq_info(xq_of((uintptr_t)a, 0)).priority, XSCHED_PRIO_MAX);
	/* A stream not in the table yet is not added; its first use reads
	 * the moved priority. */
	xsi_prio_watch_begin(&fake_rt, (uintptr_t)b, &w);
	b->priority = 6;
	xsi_prio_watch_end(&w, true);
	ASSERT_EQ(xsi_stream_count(&fake_rt), 1);
	ASSERT_EQ(xq_info(xq_of((uintptr_t)b, 0)).priority, 6);
	/* Default streams and unknown handles are not watched. */
	xsi_prio_watch_begin(&fake_rt, 0, &w);
	ASSERT_TRUE(!w.armed);
	xsi_prio_watch_begin(&fake_rt, 3, &w);
	ASSERT_TRUE(!w.armed);
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
	/* The stale XQueue is gone; the new stream's comes at its first use. */
	ASSERT_EQ(xs_sched_count(), 0);
	ASSERT_EQ(xq_info(xq_of((uintptr_t)a, 0)).priority, 4);
	ASSERT_EQ(xs_sched_count(), 1);
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

static int internal_marker(void)
{
	return 43;
}

/* The runtime's own lookup: by the real address, else by base name,
 * variant and version (an internal address the runtime hands out). */
TEST(interpose_proc_address_matches_address_then_name_and_variant)
{
	void *real_launch;

	fake_auto = true;
	fake_init();
	real_launch = *xsi_entry_find(&fake_rt, "fakeLaunch")->real;
	ASSERT_TRUE(real_launch != NULL);
	ASSERT_TRUE(xsi_proc_redirect(&fake_rt, "fakeLaunch", real_launch, 100, true) ==
		    (void *)fakeLaunch);
	ASSERT_TRUE(xsi_proc_redirect(&fake_rt, "fakeLaunch", (void *)internal_marker,
				      100, true) == (void *)fakeLaunch_ptsz);
	ASSERT_TRUE(xsi_proc_redirect(&fake_rt, "fakeLaunch", (void *)internal_marker,
				      100, false) == (void *)fakeLaunch);
	ASSERT_TRUE(xsi_proc_redirect(&fake_rt, "fakeGetNamez", (void *)internal_marker,
				      100, false) == (void *)internal_marker);
	ASSERT_TRUE(xsi_proc_redirect(&fake_rt, "fakeLaunch", NULL, 100, false) == NULL);
	xsi_runtime_fini(&fake_rt);
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

/* ---- caller-held dispatch ---- */

struct ch_thread {
	uintptr_t stream;
	uint32_t tag;
	uint32_t flags;
	int device;	/* this thread's fake device: marks its launches */
	struct xsched_xqueue *xq;
	uint32_t id;	/* xq's id, taken while the thread lives */
};

static void *ch_launch(void *p)
{
	struct ch_thread *t = p;

	fake_device = t->device;
	if (t->flags)
		ASSERT_EQ(fakeLaunch_ptsz(t->stream, t->tag), 0);
	else
		ASSERT_EQ(fakeLaunch(t->stream, t->tag), 0);
	t->xq = xq_of(t->stream, t->flags);
	t->id = t->xq ? xsched_xqueue_id(t->xq) : 0;
	return NULL;
}

static int logged(uint32_t tag, int *device)
{
	unsigned int i;
	int hit = 0;

	pthread_mutex_lock(&fake_lock);
	for (i = 0; i < fake_nlog; i++)
		if (fake_log[i].tag == tag) {
			hit = 1;
			if (device)
				*device = fake_log[i].device;
		}
	pthread_mutex_unlock(&fake_lock);
	return hit;
}

TEST(interpose_caller_held_call_waits_for_higher_work_then_runs_on_its_thread)
{
	struct fake_stream *hi = fake_stream_new(5, 0), *lo = fake_stream_new(1, 0);
	struct ch_thread t = { (uintptr_t)lo, 3, 0, 2, NULL, 0 };
	struct timespec ms20 = { 0, 20000000 };
	pthread_t th;
	int dev = -1;

	fake_caller_held(0);
	fake_init();
	ASSERT_EQ(fakeLaunch((uintptr_t)lo, 1), 0);
	ASSERT_EQ(fakeLaunch((uintptr_t)hi, 2), 0);	/* in flight until completed */
	ASSERT_EQ(pthread_create(&th, NULL, ch_launch, &t), 0);
	nanosleep(&ms20, NULL);
	ASSERT_EQ(logged(3, NULL), 0);	/* held: not buffered, not made */
	fake_complete(hi, 1);
	pthread_join(th, NULL);
	ASSERT_EQ(logged(3, &dev), 1);
	ASSERT_EQ(dev, 2);	/* made by the caller's own thread */
	ASSERT_EQ(xq_info(t.xq).launched, 2);
	fake_complete(lo, 2);
	xsi_runtime_fini(&fake_rt);
}

/* XSCHED_LOG=trace: the hold, the policy's decisions and the release reach
 * the trace marker (a plain file here), one line each, naming the XQueue. */
TEST(interpose_trace_marker_has_hold_decisions_and_release)
{
	struct fake_stream *hi = fake_stream_new(5, 0), *lo = fake_stream_new(1, 0);
	struct ch_thread t = { (uintptr_t)lo, 3, 0, 2, NULL, 0 };
	struct timespec ms20 = { 0, 20000000 };
	char path[] = "/tmp/xsched-marker-XXXXXX", want[128], *m;
	uint32_t hid;
	pthread_t th;
	FILE *f;
	long n;
	int fd;

	fd = mkstemp(path);
	ASSERT_TRUE(fd >= 0);
	close(fd);
	setenv("XSCHED_TRACE_MARKER", path, 1);
	setenv("XSCHED_LOG", "trace", 1);
	xs_config_reload();
	fake_caller_held(0);
	fake_init();
	ASSERT_EQ(fakeLaunch((uintptr_t)lo, 1), 0);
	ASSERT_EQ(fakeLaunch((uintptr_t)hi, 2), 0);	/* in flight until completed */
	hid = xsched_xqueue_id(xq_of((uintptr_t)hi, 0));
	ASSERT_EQ(pthread_create(&th, NULL, ch_launch, &t), 0);
	nanosleep(&ms20, NULL);
	fake_complete(hi, 1);
	pthread_join(th, NULL);
	fake_complete(lo, 2);
	xsi_runtime_fini(&fake_rt);

	f = fopen(path, "r");
	ASSERT_TRUE(f != NULL);
	m = calloc(1, 65536);
	n = (long)fread(m, 1, 65535, f);
	fclose(f);
	unlink(path);
	ASSERT_TRUE(n > 0);
	snprintf(want, sizeof(want), "xsched_lib_hold: pid=%d q=%u rt=fake call=fakeLaunch stream=",
		 (int)getpid(), t.id);
	ASSERT_EQ(count_substr(m, want), 1);
	snprintf(want, sizeof(want), "xsched_lib_release: pid=%d q=%u rt=fake call=fakeLaunch stream=",
		 (int)getpid(), t.id);
	ASSERT_EQ(count_substr(m, want), 1);
	ASSERT_TRUE(strstr(m, "xsched_lib_hold") < strstr(m, "xsched_lib_release"));
	snprintf(want, sizeof(want), "xsched_lib_decision: pid=%d q=%u prio=1 level=1 action=suspend other=%u other_prio=5 err=0 ",
		 (int)getpid(), t.id, hid);
	ASSERT_EQ(count_substr(m, want), 1);
	snprintf(want, sizeof(want), "xsched_lib_decision: pid=%d q=%u prio=1 level=1 action=resume ",
		 (int)getpid(), t.id);
	ASSERT_EQ(count_substr(m, want), 1);
	free(m);
}

TEST(interpose_caller_held_wait_is_bounded_by_hold_max)
{
	struct fake_stream *hi = fake_stream_new(5, 0), *lo = fake_stream_new(1, 0);
	uint64_t t0;

	fake_caller_held(30000000);
	fake_init();
	ASSERT_EQ(fakeLaunch((uintptr_t)lo, 1), 0);
	ASSERT_EQ(fakeLaunch((uintptr_t)hi, 2), 0);	/* never completes here */
	t0 = xs_now_ns();
	ASSERT_EQ(fakeLaunch((uintptr_t)lo, 3), 0);
	ASSERT_GE(xs_now_ns() - t0, 30000000);
	ASSERT_EQ(logged(3, NULL), 1);
	fake_complete(hi, 1);
	fake_complete(lo, 2);
	xsi_runtime_fini(&fake_rt);
}

TEST(interpose_caller_held_per_thread_streams_are_one_per_thread)
{
	struct ch_thread a = { 0, 1, XSI_ENTRY_PER_THREAD, 0, NULL, 0 };
	struct ch_thread b = { 0, 2, XSI_ENTRY_PER_THREAD, 0, NULL, 0 };
	pthread_t ta, tb;

	fake_auto = true;
	fake_caller_held(0);
	fake_init();
	ASSERT_EQ(pthread_create(&ta, NULL, ch_launch, &a), 0);
	pthread_join(ta, NULL);
	ASSERT_EQ(pthread_create(&tb, NULL, ch_launch, &b), 0);
	pthread_join(tb, NULL);
	ASSERT_TRUE(a.id && b.id && a.id != b.id);
	/* Both threads exited: their streams are gone with them. */
	ASSERT_EQ(xsi_stream_count(&fake_rt), 0);
	/* The null handle through a per-thread entry is this thread's. */
	ASSERT_TRUE(xq_of(0, XSI_ENTRY_PER_THREAD) == xq_of(2, 0));
	ASSERT_TRUE(xq_of(0, XSI_ENTRY_PER_THREAD) != xq_of(0, 0));
	xsi_runtime_fini(&fake_rt);
}

TEST(interpose_synchronize_tells_completion_without_a_mark)
{
	struct fake_stream *hi = fake_stream_new(5, 0), *lo = fake_stream_new(1, 0);
	struct xsi_sync *y;
	unsigned int marks;

	fake_caller_held(0);
	fake_init();
	ASSERT_EQ(fakeLaunch((uintptr_t)lo, 1), 0);
	fake_complete(lo, 1);
	ASSERT_EQ(fakeLaunch((uintptr_t)hi, 2), 0);
	pthread_mutex_lock(&fake_lock);
	marks = fake_marks;
	pthread_mutex_unlock(&fake_lock);
	y = xsi_sync_begin(&fake_rt, xsi_stream_get(&fake_rt, (uintptr_t)hi, 0),
			   XSI_SCOPE_STREAM);
	ASSERT_TRUE(y != NULL);
	fake_complete(hi, 1);	/* the runtime's synchronize returned */
	xsi_sync_end(y, true);
	ASSERT_EQ(xq_info(xq_of((uintptr_t)hi, 0)).completed, 1);
	ASSERT_EQ(fakeLaunch((uintptr_t)lo, 3), 0);	/* not held */
	pthread_mutex_lock(&fake_lock);
	ASSERT_EQ(fake_marks, marks);
	pthread_mutex_unlock(&fake_lock);
	fake_complete(lo, 1);
	xsi_runtime_fini(&fake_rt);
}

TEST(interpose_caller_held_captured_calls_are_neither_held_nor_counted)
{
	struct fake_stream *hi = fake_stream_new(5, 0), *lo = fake_stream_new(1, 0);
	struct xsi_stream *s;

	fake_caller_held(0);
	fake_init();
	ASSERT_EQ(fakeLaunch((uintptr_t)lo, 1), 0);
	ASSERT_EQ(fakeLaunch((uintptr_t)hi, 2), 0);	/* in flight */
	s = xsi_stream_get(&fake_rt, (uintptr_t)lo, 0);
	xsi_stream_capture(s, true);
	ASSERT_EQ(fakeLaunch((uintptr_t)lo, 3), 0);	/* would hang if held */
	ASSERT_EQ(xq_info(xsi_stream_xqueue(s)).launched, 1);
	xsi_stream_capture(s, false);
	fake_complete(hi, 1);
	fake_complete(lo, 2);
	xsi_runtime_fini(&fake_rt);
}

static void *launch_blocking(void *p)
{
	fakeLaunch((uintptr_t)p, FAKE_TAG_BLOCK);
	return NULL;
}

static atomic_bool urgent_done;

static void *launch_urgent(void *p)
{
	fakeLaunch((uintptr_t)p, 1);
	atomic_store(&urgent_done, true);
	return NULL;
}

/* A lower stream's call is inside the runtime and blocks there (holding
 * nothing of ours that a decision needs): an urgent launch that makes the
 * policy hold that stream returns without waiting for it. */
TEST(interpose_hold_decision_never_waits_for_a_call_inside_the_runtime)
{
	struct fake_stream *lo = fake_stream_new(0, 0), *hi = fake_stream_new(5, 0);
	pthread_t t1, t2;
	bool blocked;

	fake_auto = true;
	fake_init();
	ASSERT_EQ(fakeLaunch((uintptr_t)lo, 1), 0);	/* both known */
	ASSERT_EQ(fakeLaunch((uintptr_t)hi, 1), 0);
	ASSERT_EQ(fakeStreamSynchronize((uintptr_t)hi), 0);
	ASSERT_EQ(pthread_create(&t1, NULL, launch_blocking, lo), 0);
	WAIT_UNTIL(({ pthread_mutex_lock(&fake_lock); blocked = fake_blocked;
		      pthread_mutex_unlock(&fake_lock); blocked; }), 2000);
	ASSERT_TRUE(blocked);
	ASSERT_EQ(pthread_create(&t2, NULL, launch_urgent, hi), 0);
	WAIT_UNTIL(atomic_load(&urgent_done), 2000);
	/* Before: the hold took the lower stream's lock, held across the call. */
	ASSERT_TRUE(atomic_load(&urgent_done));
	pthread_mutex_lock(&fake_lock);
	blocked = fake_blocked;
	pthread_mutex_unlock(&fake_lock);
	ASSERT_TRUE(blocked);	/* it returned while the lower call still blocked */
	fake_release_block();
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	xsi_runtime_fini(&fake_rt);
}

static void *launch_fifth(void *p)
{
	fakeLaunch((uintptr_t)p, 5);
	return NULL;
}

/* A created stream caps lower streams at once, but has no XQueue (nothing
 * for the policy to evaluate) until its first call. */
TEST(interpose_created_stream_gates_at_once_and_gets_its_xqueue_at_first_call)
{
	struct fake_stream *hi = fake_stream_new(5, 0), *lo = fake_stream_new(0, 0);
	struct xsi_stream_desc d = { .priority = 5, .device = 0 };
	pthread_t t;
	int i;

	setenv("XSCHED_THRESHOLD", "4", 1);
	setenv("XSCHED_BATCH", "2", 1);
	xs_config_reload();
	fake_caller_held(0);
	fake_auto = false;
	fake_init();
	ASSERT_TRUE(xsi_stream_created(&fake_rt, (uintptr_t)hi, &d) != NULL);
	ASSERT_EQ(xs_sched_count(), 0);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(fakeLaunch((uintptr_t)lo, 1), 0);
	ASSERT_EQ(xs_sched_count(), 1);	/* lo's only */
	/* The 5th waits for room: hi exists, though it never ran anything. */
	ASSERT_EQ(pthread_create(&t, NULL, launch_fifth, lo), 0);
	ASSERT_TRUE(!WAIT_UNTIL(fake_launched(lo) == 5, 200));
	fake_complete(lo, 4);
	ASSERT_TRUE(WAIT_UNTIL(fake_launched(lo) == 5, 2000));
	pthread_join(t, NULL);
	ASSERT_EQ(fakeLaunch((uintptr_t)hi, 2), 0);
	ASSERT_EQ(xs_sched_count(), 2);
	fake_complete(lo, 100);
	fake_complete(hi, 100);
	unsetenv("XSCHED_THRESHOLD");
	unsetenv("XSCHED_BATCH");
	xs_config_reload();
	xsi_runtime_fini(&fake_rt);
}

/* Four calls on @lo (@before launched so far), then a fifth from another
 * thread: whether it reached the runtime within @ms (it did not wait for
 * room).  Everything completes before the return. */
static bool fifth_runs_within(struct fake_stream *lo, unsigned int before, int ms)
{
	pthread_t t;
	bool ran;
	int i;

	for (i = 0; i < 4; i++)
		ASSERT_EQ(fakeLaunch((uintptr_t)lo, 1), 0);
	ASSERT_EQ(pthread_create(&t, NULL, launch_fifth, lo), 0);
	ran = WAIT_UNTIL(fake_launched(lo) == before + 5, ms);
	fake_complete(lo, before + 4);
	ASSERT_TRUE(WAIT_UNTIL(fake_launched(lo) == before + 5, 2000));
	pthread_join(t, NULL);
	fake_complete(lo, before + 5);
	return ran;
}

/* A stream described cap_off caps nothing until xsi_stream_caps() arms it,
 * and nothing again once disarmed; an unknown stream is -ENOENT. */
TEST(interpose_cap_is_armed_and_disarmed_by_the_runtime)
{
	struct fake_stream *hi = fake_stream_new(5, 0), *lo = fake_stream_new(0, 0);
	struct xsi_stream_desc d = { .priority = 5, .device = 0, .cap_off = true };

	setenv("XSCHED_THRESHOLD", "4", 1);
	setenv("XSCHED_BATCH", "2", 1);
	xs_config_reload();
	fake_caller_held(0);
	fake_auto = false;
	fake_init();
	ASSERT_EQ(xsi_stream_caps(&fake_rt, (uintptr_t)hi, true), -ENOENT);
	ASSERT_TRUE(xsi_stream_created(&fake_rt, (uintptr_t)hi, &d) != NULL);
	ASSERT_TRUE(fifth_runs_within(lo, 0, 2000));	/* not armed */
	ASSERT_EQ(xsi_stream_caps(&fake_rt, (uintptr_t)hi, true), 0);
	ASSERT_TRUE(!fifth_runs_within(lo, 5, 200));	/* armed: it waits for room */
	ASSERT_EQ(xsi_stream_caps(&fake_rt, (uintptr_t)hi, false), 0);
	ASSERT_TRUE(fifth_runs_within(lo, 10, 2000));	/* disarmed */
	unsetenv("XSCHED_THRESHOLD");
	unsetenv("XSCHED_BATCH");
	xs_config_reload();
	xsi_runtime_fini(&fake_rt);
}

static void *launch_lower(void *p)
{
	fakeLaunch((uintptr_t)p, 7);
	return NULL;
}

/* A burst of @hi (its @n-th launch, left running): did a lower launch made
 * meanwhile run within 200 ms?  Then the burst completes and its
 * synchronize ends it. */
static bool lower_runs_during_burst(struct fake_stream *hi, struct fake_stream *lo,
				    unsigned int n)
{
	struct xsi_sync *y;
	pthread_t t;
	bool ran;

	ASSERT_EQ(fakeLaunch((uintptr_t)hi, 1), 0);
	ASSERT_EQ(pthread_create(&t, NULL, launch_lower, lo), 0);
	ran = WAIT_UNTIL(fake_launched(lo) == n, 200);
	y = xsi_sync_begin(&fake_rt, xsi_stream_get(&fake_rt, (uintptr_t)hi, 0),
			   XSI_SCOPE_STREAM);
	fake_complete(hi, n);
	ASSERT_TRUE(WAIT_UNTIL(fake_launched(lo) == n, 2000));
	pthread_join(t, NULL);
	fake_complete(lo, n);
	xsi_sync_end(y, true);
	return ran;
}

/* A stream that chooses (bursts.c) holds the lower ones in its lv1 bursts
 * only: its first burst runs native (mode.c measures each mode in turn,
 * native first), its second lv1. */
TEST(interpose_chosen_stream_holds_only_in_its_lv1_bursts)
{
	struct fake_stream *hi = fake_stream_new(5, 0), *lo = fake_stream_new(0, 0);
	struct xsi_stream_desc d = { .priority = 5, .device = 0, .chooses = true };

	fake_caller_held(0);
	fake_auto = false;
	fake_init();
	ASSERT_TRUE(xsi_stream_created(&fake_rt, (uintptr_t)hi, &d) != NULL);
	ASSERT_TRUE(lower_runs_during_burst(hi, lo, 1));	/* native */
	/* The next one holds: the cap is armed ahead of it. */
	ASSERT_TRUE(atomic_load(&xsi_stream_get(&fake_rt, (uintptr_t)hi, 0)->caps));
	ASSERT_TRUE(!lower_runs_during_burst(hi, lo, 2));	/* lv1: held */
	xsi_runtime_fini(&fake_rt);
}

static void *bursts_of(void *p)
{
	struct xsi_sync *y;
	int i;

	for (i = 0; i < 200; i++) {
		ASSERT_EQ(fakeLaunch((uintptr_t)p, 1), 0);
		y = xsi_sync_begin(&fake_rt, xsi_stream_get(&fake_rt, (uintptr_t)p, 0),
				   XSI_SCOPE_STREAM);
		xsi_sync_end(y, fakeStreamSynchronize((uintptr_t)p) == 0);
	}
	return NULL;
}

static void *lower_calls(void *p)
{
	int i;

	for (i = 0; i < 2000; i++)
		ASSERT_EQ(fakeLaunch((uintptr_t)p, 2), 0);
	return NULL;
}

/* Two threads end the bursts of one stream that chooses while a third
 * calls on a lower one (the cap moving under it): once they are done the
 * cap is what the choice wants (no change lost), and under ThreadSanitizer
 * nothing races. */
TEST(interpose_concurrent_bursts_leave_the_cap_as_the_choice_wants)
{
	struct fake_stream *hi = fake_stream_new(5, 0), *lo = fake_stream_new(0, 0);
	struct xsi_stream_desc d = { .priority = 5, .device = 0, .chooses = true };
	struct xsi_stream *s;
	pthread_t a, b, c;

	fake_caller_held(0);
	fake_auto = true;
	fake_init();
	ASSERT_TRUE(xsi_stream_created(&fake_rt, (uintptr_t)hi, &d) != NULL);
	ASSERT_EQ(pthread_create(&c, NULL, lower_calls, lo), 0);
	ASSERT_EQ(pthread_create(&a, NULL, bursts_of, hi), 0);
	ASSERT_EQ(pthread_create(&b, NULL, bursts_of, hi), 0);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	pthread_join(c, NULL);
	s = xsi_stream_get(&fake_rt, (uintptr_t)hi, 0);
	ASSERT_TRUE(s != NULL && s->bursts != NULL);
	ASSERT_EQ(atomic_load(&s->caps), atomic_load(&s->bursts->caps));
	ASSERT_GE(s->bursts->st.burst, 10);
	xsi_runtime_fini(&fake_rt);
}

/* Priorities are normalised once, when a stream is learned: two streams
 * whose runtime priorities differ beyond the range an XQueue takes are
 * equal to the cap as they are to the policy (neither caps the other). */
TEST(interpose_priorities_beyond_the_range_are_equal_to_the_cap_too)
{
	struct fake_stream *hi = fake_stream_new(1000, 0), *lo = fake_stream_new(200, 0);
	struct xsi_stream_desc d = { .priority = 1000, .device = 0 };
	pthread_t t;
	bool capped;
	int i;

	setenv("XSCHED_THRESHOLD", "4", 1);
	setenv("XSCHED_BATCH", "2", 1);
	xs_config_reload();
	fake_caller_held(0);
	fake_auto = false;
	fake_init();
	ASSERT_TRUE(xsi_stream_created(&fake_rt, (uintptr_t)hi, &d) != NULL);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(fakeLaunch((uintptr_t)lo, 1), 0);
	/* Past the threshold: not capped, so it does not wait for room. */
	ASSERT_EQ(pthread_create(&t, NULL, launch_fifth, lo), 0);
	capped = !WAIT_UNTIL(fake_launched(lo) == 5, 2000);
	fake_complete(lo, 4);
	pthread_join(t, NULL);
	ASSERT_TRUE(!capped);
	ASSERT_EQ(xq_info(xq_of((uintptr_t)lo, 0)).priority, XSCHED_PRIO_MAX);
	ASSERT_EQ(xsi_stream_desc(xsi_stream_get(&fake_rt, (uintptr_t)hi, 0))->priority,
		  XSCHED_PRIO_MAX);
	fake_complete(lo, 100);
	unsetenv("XSCHED_THRESHOLD");
	unsetenv("XSCHED_BATCH");
	xs_config_reload();
	xsi_runtime_fini(&fake_rt);
}
