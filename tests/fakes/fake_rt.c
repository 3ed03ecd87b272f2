// SPDX-License-Identifier: MIT
/* The fake runtime: see fake_rt.h. */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "fake_rt.h"
#include "harness.h"

struct fake_launch fake_log[FAKE_LOG_MAX];
unsigned int fake_nlog;
pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fake_cond = PTHREAD_COND_INITIALIZER;
bool fake_auto;
_Thread_local int fake_device;
static struct fake_stream defaults[4];	/* the null/legacy stream per device */

/* Kept reachable: a test's streams live until its process ends. */
static struct fake_stream *made[64];
static unsigned int nmade;

struct fake_stream *fake_stream_new(int32_t priority, int32_t device)
{
	struct fake_stream *s = calloc(1, sizeof(*s));

	if (!s || nmade == 64)
		abort();
	made[nmade++] = s;
	s->priority = priority;
	s->device = device;
	return s;
}

struct fake_stream *fake_default(int32_t device)
{
	return &defaults[device & 3];
}

static struct fake_stream *stream_of(uintptr_t h)
{
	return h <= 2 ? fake_default(fake_device) : (struct fake_stream *)h;
}

/* ---- the "real" runtime ---- */

bool fake_blocked, fake_unblock;

static int real_launch(uintptr_t stream, uint32_t tag)
{
	struct fake_stream *s = stream_of(stream);

	pthread_mutex_lock(&fake_lock);
	if (tag == FAKE_TAG_BLOCK) {
		/* A runtime call that blocks (a copy to pageable memory). */
		fake_blocked = true;
		pthread_cond_broadcast(&fake_cond);
		while (!fake_unblock)
			pthread_cond_wait(&fake_cond, &fake_lock);
		fake_blocked = false;
	}
	if (fake_nlog < FAKE_LOG_MAX) {
		fake_log[fake_nlog].stream = stream;
		fake_log[fake_nlog].tag = tag;
		fake_log[fake_nlog].device = fake_device;
		fake_nlog++;
	}
	s->launched++;
	if (fake_auto)
		s->done = s->launched;
	pthread_cond_broadcast(&fake_cond);
	pthread_mutex_unlock(&fake_lock);
	return tag == 0xdead ? 700 : 0;	/* a launch the runtime refuses */
}

static int real_sync(uintptr_t stream)
{
	struct fake_stream *s = stream_of(stream);

	pthread_mutex_lock(&fake_lock);
	while (s->done < s->launched)
		pthread_cond_wait(&fake_cond, &fake_lock);
	pthread_mutex_unlock(&fake_lock);
	return 0;
}

static int real_devsync(void)
{
	return 0;
}

static const char *real_name(void)
{
	return "fake";
}

void fake_release_block(void)
{
	pthread_mutex_lock(&fake_lock);
	fake_unblock = true;
	pthread_cond_broadcast(&fake_cond);
	pthread_mutex_unlock(&fake_lock);
}

void fake_complete(struct fake_stream *s, uint64_t n)
{
	pthread_mutex_lock(&fake_lock);
	s->done = s->done + n < s->launched ? s->done + n : s->launched;
	pthread_cond_broadcast(&fake_cond);
	pthread_mutex_unlock(&fake_lock);
}

uint64_t fake_launched(struct fake_stream *s)
{
	uint64_t v;

	pthread_mutex_lock(&fake_lock);
	v = s->launched;
	pthread_mutex_unlock(&fake_lock);
	return v;
}

/* ---- the table ---- */

static int (*p_launch)(uintptr_t, uint32_t);
static int (*p_launch_ptsz)(uintptr_t, uint32_t);
static int (*p_sync)(uintptr_t);
static int (*p_devsync)(void);
static const char *(*p_name)(void);

static struct xsi_entry entries[] = {
	{ "fakeLaunch", NULL, XSI_SCHEDULED, XSI_SCOPE_STREAM, 0,
	  (void *)fakeLaunch, (void **)&p_launch, NULL, 0 },
	{ "fakeLaunch_ptsz", NULL, XSI_SCHEDULED, XSI_SCOPE_STREAM,
	  XSI_ENTRY_PER_THREAD, (void *)fakeLaunch_ptsz, (void **)&p_launch_ptsz,
	  "fakeLaunch", 0 },
	{ "fakeStreamSynchronize", NULL, XSI_ORDERED, XSI_SCOPE_STREAM, 0,
	  (void *)fakeStreamSynchronize, (void **)&p_sync, NULL, 0 },
	{ "fakeDeviceSynchronize", NULL, XSI_ORDERED, XSI_SCOPE_DEVICE, 0,
	  (void *)fakeDeviceSynchronize, (void **)&p_devsync, NULL, 0 },
	{ "fakeGetName", NULL, XSI_HARMLESS, XSI_SCOPE_STREAM, 0,
	  (void *)fakeGetName, (void **)&p_name, NULL, 0 },
};

static enum xsi_default f_default_kind(uintptr_t h)
{
	return h == 0 ? XSI_DEFAULT_NULL : h == 1 ? XSI_DEFAULT_LEGACY :
	       h == 2 ? XSI_DEFAULT_PER_THREAD : XSI_NOT_DEFAULT;
}

static int f_current_device(void)
{
	return fake_device;
}

static int f_describe(uintptr_t h, struct xsi_stream_desc *d)
{
	struct fake_stream *s;

	if (h <= 2) {
		d->priority = 0;
		return 0;
	}
	if (h == 3)
		return -ENOENT;	/* not a stream of this runtime */
	s = (struct fake_stream *)h;
	d->priority = s->priority;
	d->device = s->device;
	return 0;
}

static int f_enter(const struct xsi_stream_desc *d)
{
	fake_device = d->device;
	return 0;
}

struct fake_mark {
	struct fake_stream *s;
	uint64_t target;
};

unsigned int fake_marks;

static int f_mark_record(uintptr_t h, const struct xsi_stream_desc *d, void **mark)
{
	struct fake_mark *m = malloc(sizeof(*m));

	(void)d;
	if (!m)
		return -ENOMEM;
	m->s = stream_of(h);
	pthread_mutex_lock(&fake_lock);
	fake_marks++;
	m->target = m->s->launched;
	pthread_mutex_unlock(&fake_lock);
	*mark = m;
	return 0;
}

static int f_mark_wait(void *mark, int64_t timeout_ns)
{
	struct fake_mark *m = mark;
	struct timespec ts;
	int ret = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (timeout_ns > 0) {
		ts.tv_sec += timeout_ns / 1000000000LL;
		ts.tv_nsec += timeout_ns % 1000000000LL;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
	}
	pthread_mutex_lock(&fake_lock);
	while (m->s->done < m->target) {
		if (timeout_ns == 0 ||
		    (timeout_ns > 0 &&
		     pthread_cond_timedwait(&fake_cond, &fake_lock, &ts))) {
			ret = -ETIMEDOUT;
			break;
		}
		if (timeout_ns < 0)
			pthread_cond_wait(&fake_cond, &fake_lock);
	}
	if (m->s->done >= m->target)
		ret = 0;
	pthread_mutex_unlock(&fake_lock);
	return ret;
}

static void f_mark_free(void *mark)
{
	free(mark);
}

static const char *const no_libs[] = { NULL };

struct xsi_runtime fake_rt = {
	.name = "fake",
	.libs = no_libs,
	.entries = entries,
	.nentries = sizeof(entries) / sizeof(entries[0]),
	.default_kind = f_default_kind,
	.current_device = f_current_device,
	.describe = f_describe,
	.enter = f_enter,
	.mark_record = f_mark_record,
	.mark_wait = f_mark_wait,
	.mark_free = f_mark_free,
};

void fake_init(void)
{
	/* The "real" functions are in this executable: known up front. */
	p_launch = real_launch;
	p_launch_ptsz = real_launch;
	p_sync = real_sync;
	p_devsync = real_devsync;
	p_name = real_name;
	ASSERT_EQ(xsi_runtime_init(&fake_rt), 0);
}

void fake_caller_held(uint64_t hold_max_ns)
{
	fake_rt.flags = XSI_RT_CALLER_HELD;
	fake_rt.per_thread_handle = 2;
	fake_rt.hold_max_ns = hold_max_ns;
}

/* ---- the hooks: what a runtime's table file writes ---- */

struct launch_arg {
	uintptr_t stream;
	uint32_t tag;
};

static int run_launch(void *arg)
{
	struct launch_arg *a = arg;

	return p_launch(a->stream, a->tag);
}

static int launch(uintptr_t stream, uint32_t tag, uint32_t flags)
{
	struct xsi_stream *s = xsi_stream_get(&fake_rt, stream, flags);
	struct xsched_call c;
	struct launch_arg *a;
	int st;

	if (!s)
		return (flags ? p_launch_ptsz : p_launch)(stream, tag);
	if (fake_rt.flags & XSI_RT_CALLER_HELD) {
		/* The caller makes the call itself, once released. */
		struct xsi_hold h;

		xsi_hold_begin(&fake_rt, &entries[flags ? 1 : 0], stream, &h);
		st = (flags ? p_launch_ptsz : p_launch)(stream, tag);
		xsi_hold_end(&h, st == 0);
		return st;
	}
	a = malloc(sizeof(*a));
	if (!a)
		return p_launch(stream, tag);
	a->stream = stream;
	a->tag = tag;
	c.fn = run_launch;
	c.arg = a;
	c.release = free;
	if (xsi_call(s, &c, &st, NULL)) {
		xsi_drain(&fake_rt, s, XSI_SCOPE_STREAM);
		return p_launch(stream, tag);
	}
	return st;
}

int fakeLaunch(uintptr_t stream, uint32_t tag)
{
	return launch(stream, tag, 0);
}

int fakeLaunch_ptsz(uintptr_t stream, uint32_t tag)
{
	return launch(stream, tag, XSI_ENTRY_PER_THREAD);
}

int fakeStreamSynchronize(uintptr_t stream)
{
	(void)xsi_pass(&fake_rt, &entries[2], stream);
	return p_sync(stream);
}

int fakeDeviceSynchronize(void)
{
	(void)xsi_pass(&fake_rt, &entries[3], 0);
	return p_devsync();
}

const char *fakeGetName(void)
{
	(void)xsi_pass(&fake_rt, &entries[4], 0);
	return p_name();
}
