// SPDX-License-Identifier: MIT
/* Description: runtime calls that block, re-enter the hooks, or are missing, beside urgent work. */
/*
 * Host tests of the HIP interposer against the fake libamdhip64.so.5
 * (fake_libamdhip64.h) where the runtime itself blocks (a copy to pageable
 * memory, a synchronize), calls its own exported functions (the hook is
 * entered again inside itself), or lacks an entry point, as the items of
 * issue 21 found them; captures, memory waits and stream destruction beside
 * held streams.  Linked into test_hip (its main runs these too, and
 * held_reentry_body() for "--held-reentry"); each test runs in its own
 * forked process.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fake_libamdhip64.h"
#include "harness.h"
#include "hip_helpers.h"

/* ---- runtime calls that block, re-enter, or are missing ---- */

/* The last log record of kind @kernel on fake stream id @sid. */
static int find_rec(int kernel, int sid, struct fake_rec *out)
{
	struct fake_rec r;
	int i, hit = -1;

	for (i = 0; i < fake_log_count(); i++) {
		fake_log_get(i, &r);
		if (r.kernel == kernel && r.stream == sid) {
			*out = r;
			hit = i;
		}
	}
	return hit;
}

static void *dev_alloc(size_t n)
{
	void *d = NULL;

	ASSERT_EQ(hipMalloc(&d, n), hipSuccess);
	return d;
}

static void *pinned_alloc(size_t n)
{
	void *p = NULL;

	ASSERT_EQ(hipHostMalloc(&p, n, 0), hipSuccess);
	return p;
}

struct copier {
	hipStream_t s;
	void *dev;
	char *host;		/* pageable */
	uint64_t ns;		/* the kernel before the copy */
	int id;
	int sync;		/* hipMemcpy (s is NULL) rather than hipMemcpyAsync */
};

/* A lower thread: a long kernel, then a copy to pageable memory, which
 * returns only once the kernel (and the copy) ended. */
static void *copy_thread(void *p)
{
	struct copier *c = p;

	launch(c->s, c->id, c->ns);
	if (c->sync)
		ASSERT_EQ(hipMemcpy(c->host, c->dev, 64, hipMemcpyDeviceToHost), hipSuccess);
	else
		ASSERT_EQ(hipMemcpyAsync(c->host, c->dev, 64, hipMemcpyDeviceToHost, c->s),
			  hipSuccess);
	return NULL;
}

/* The urgent thread launches twice while a lower thread is blocked in a
 * copy (@sync: hipMemcpy, after the null stream's kernel). */
static void urgent_beside_a_blocked_copy(int sync)
{
	static char host[64];
	int kind = sync ? FAKE_SYNC_COPY : FAKE_COPY;
	struct copier c;
	struct fake_rec cp, u;
	hipStream_t hi = mk(-1), lo = sync ? NULL : mk(0);
	pthread_t t;
	uint64_t t_ret;
	int i;

	launch(hi, 110, 0);	/* both live, hi idle */
	ASSERT_EQ(hipStreamSynchronize(hi), hipSuccess);
	c.s = lo;
	c.dev = dev_alloc(64);
	c.host = host;
	c.ns = 300 * MS;
	c.id = 111;
	c.sync = sync;
	ASSERT_EQ(pthread_create(&t, NULL, copy_thread, &c), 0);
	for (i = 0; i < 20000 && find_rec(kind, fake_stream_id(lo), &cp) < 0; i++)
		usleep(100);	/* until the lower thread is in the copy */
	usleep(20000);
	launch(hi, 112, 0);
	launch(hi, 113, 0);
	t_ret = now_ns();
	pthread_join(t, NULL);
	ASSERT_TRUE(find_rec(kind, fake_stream_id(lo), &cp) >= 0);
	u = rec_of(113);
	ASSERT_GE(cp.ret, rec_of(111).end);	/* the copy did block */
	if (u.submit >= cp.ret || t_ret >= cp.ret)
		xt_fail(__FILE__, __LINE__, "the urgent launches (2nd submitted at +%.1f ms, returned at +%.1f ms) waited for the lower thread's copy (returned at +%.1f ms); expected both before it",
			(u.submit - cp.submit) / 1e6, (t_ret - cp.submit) / 1e6,
			(cp.ret - cp.submit) / 1e6);
}

/* Item 1: the urgent thread's launches reach the runtime, and return,
 * while a lower thread is blocked inside a copy to pageable memory. */
TEST(urgent_launch_is_not_delayed_by_a_lower_thread_blocked_in_a_copy)
{
	urgent_beside_a_blocked_copy(0);
}

/* The same beside the synchronous hipMemcpy (a guard: it passes today, as
 * the hook holds no lock across it). */
TEST(urgent_launch_is_not_delayed_by_a_lower_thread_in_a_synchronous_copy)
{
	urgent_beside_a_blocked_copy(1);
}

enum reentry { FROM_SYMBOL, TO_SYMBOL, PEER, BY_PTR };

/* Item 2: a call whose runtime makes it through another hooked export
 * on the same thread (CLR's own calls through its PLT). */
static void reentrant_call(enum reentry how, hipStream_t s, int id)
{
	static char sym[64];
	dim3 one = { 1, 1, 1 };
	void *pinned = pinned_alloc(64), *dev = dev_alloc(64);

	switch (how) {
	case FROM_SYMBOL:
		ASSERT_EQ(hipMemcpyFromSymbolAsync(pinned, sym, 64, 0, hipMemcpyDeviceToHost, s),
			  hipSuccess);
		break;
	case TO_SYMBOL:
		ASSERT_EQ(hipMemcpyToSymbolAsync(sym, pinned, 64, 0, hipMemcpyHostToDevice, s),
			  hipSuccess);
		break;
	case PEER:
		ASSERT_EQ(hipMemcpyPeerAsync(dev, 0, sym, 0, 64, s), hipSuccess);
		break;
	default:
		ASSERT_EQ(hipConfigureCall(one, one, 0, s), hipSuccess);
		ASSERT_EQ(hipLaunchByPtr(K(id, MS)), hipSuccess);
	}
}

static const char *const reentry_name[] = {
	"hipMemcpyFromSymbolAsync (the runtime calls the hooked hipMemcpyAsync on the same thread)",
	"hipMemcpyToSymbolAsync (the runtime calls the hooked hipMemcpyAsync on the same thread)",
	"hipMemcpyPeerAsync (the runtime calls the hooked hipMemcpyAsync on the same thread)",
	"hipLaunchByPtr (the runtime calls the hooked hipModuleLaunchKernel on the same thread)",
};

/* The call returns, and the stream's commands reach the runtime in order. */
static void reentry_case(enum reentry how)
{
	hipStream_t s = mk(0);
	int i, n = 0, order[3] = { 120, how == BY_PTR ? 121 : FAKE_COPY, 122 };
	struct fake_rec r;

	ASSERT_TRUE(in_xsched(fake_self_call_target()));	/* the runtime's call reaches the hook */
	launch(s, 120, MS);
	wd_arm(3000, reentry_name[how]);
	reentrant_call(how, s, 121);
	wd_disarm();
	launch(s, 122, MS);
	for (i = 0; i < fake_log_count(); i++) {
		fake_log_get(i, &r);
		if (r.stream != fake_stream_id(s) || r.kernel == FAKE_EVENT)
			continue;
		ASSERT_TRUE(n < 3);
		if (r.kernel != order[n])
			xt_fail(__FILE__, __LINE__, "stream order: command %d is %d, expected %d",
				n, r.kernel, order[n]);
		n++;
	}
	ASSERT_EQ(n, 3);
}

TEST(hook_reentered_by_memcpy_from_symbol_async_returns_in_stream_order)
{
	reentry_case(FROM_SYMBOL);
}

TEST(hook_reentered_by_memcpy_to_symbol_async_returns_in_stream_order)
{
	reentry_case(TO_SYMBOL);
}

TEST(hook_reentered_by_memcpy_peer_async_returns_in_stream_order)
{
	reentry_case(PEER);
}

TEST(hook_reentered_by_launch_by_ptr_returns_in_stream_order)
{
	reentry_case(BY_PTR);
}

/* Item 2: the hook entered again inside a held call is not held a second
 * time: the outer call waits out the hold limit once, the inner goes.  Run
 * with XSCHED_HIP_HOLD_MAX_MS=200 (read when the library loads) by the
 * test below; its failures go to stderr. */
int held_reentry_body(void)
{
	hipStream_t hi, lo;
	struct fake_rec r;
	uint64_t t0;

	dup2(2, 1);
	hi = mk(-1);
	lo = mk(0);
	launch(lo, 123, 0);
	launch(hi, 124, 5000 * MS);	/* holds lo past the limit */
	t0 = now_ns();
	wd_arm(3000, reentry_name[FROM_SYMBOL]);
	reentrant_call(FROM_SYMBOL, lo, 0);
	wd_disarm();
	ASSERT_TRUE(find_rec(FAKE_COPY, fake_stream_id(lo), &r) >= 0);
	ASSERT_GE(r.submit - t0, 150 * MS);	/* held once, to the limit */
	ASSERT_LE(r.submit - t0, 350 * MS);	/* not twice */
	return 0;
}

TEST(hook_reentered_inside_a_held_call_is_not_held_again)
{
	char out[1 << 16];
	int st = run_self("XSCHED_HIP_HOLD_MAX_MS=200", "--held-reentry", out, sizeof(out));

	if (st != 0)
		xt_fail(__FILE__, __LINE__, "under XSCHED_HIP_HOLD_MAX_MS=200 (status %#x):\n%s", st, out);
}

/* Item 3: a feature probe for an entry point this runtime lacks
 * (hipMemsetD2D8Async, ROCm 7.1+) finds nothing, on any handle. */
TEST(dlsym_of_an_entry_point_the_runtime_lacks_is_null)
{
	void *h = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_NOLOAD);
	void *p;

	ASSERT_TRUE(h != NULL);
	p = dlsym(h, "hipMemsetD2D8Async");
	if (p)
		xt_fail(__FILE__, __LINE__, "dlsym(libamdhip64 handle, \"hipMemsetD2D8Async\") on a runtime without it: expected NULL, got %p (%s)",
			p, in_xsched(p) ? "the interposer's hook" : "elsewhere");
	p = dlsym(RTLD_DEFAULT, "hipMemsetD2D8Async");
	if (p)
		xt_fail(__FILE__, __LINE__, "dlsym(RTLD_DEFAULT, \"hipMemsetD2D8Async\") on a runtime without it: expected NULL, got %p (%s)",
			p, in_xsched(p) ? "the interposer's hook" : "elsewhere");
}

/* ROCm 7.1's, which the fake lacks: a weak reference, bound at run time
 * to the interposer's export, as a program built against 7.1 binds it. */
#if HIP_VERSION < 70100000
hipError_t hipMemsetD2D8Async(hipDeviceptr_t, size_t, unsigned char, size_t, size_t, hipStream_t);
#endif
#pragma weak hipMemsetD2D8Async

/* Item 3: after such a probe, the hook answers an error rather than
 * calling itself. */
TEST(hook_of_an_entry_point_the_runtime_lacks_answers_an_error)
{
	hipStream_t s = mk(0);
	hipError_t r;

	ASSERT_TRUE(hipMemsetD2D8Async != NULL && in_xsched(hipMemsetD2D8Async));
	(void)dlsym(RTLD_DEFAULT, "hipMemsetD2D8Async");	/* a feature probe */
	wd_arm(3000, "the hook of hipMemsetD2D8Async, absent from the runtime,");
	r = hipMemsetD2D8Async(NULL, 0, 0, 0, 0, s);
	wd_disarm();
	ASSERT_NE(r, hipSuccess);
}

/* Item 3: dlvsym on the runtime's handle hands out the hook, as dlsym does. */
TEST(dlvsym_on_the_runtime_hands_out_the_hook)
{
	void *h = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_NOLOAD);
	void *p;

	ASSERT_TRUE(h != NULL);
	p = dlvsym(h, "hipLaunchKernel", "hip_4.2");
	ASSERT_TRUE(p != NULL);
	if (!in_xsched(p))
		xt_fail(__FILE__, __LINE__, "dlvsym(libamdhip64 handle, \"hipLaunchKernel\", \"hip_4.2\"): expected the interposer's hook, got %s",
			in_fake(p) ? "the runtime's own function" : "something else");
}

/* Item 4: destroying a stream with work pending returns at once. */
TEST(stream_destroy_with_pending_work_returns_at_once)
{
	hipStream_t s = mk(0);
	uint64_t t;

	launch(s, 130, 300 * MS);
	wd_arm(3000, "hipStreamDestroy of a stream with work pending");
	ASSERT_EQ(hipStreamDestroy(s), hipSuccess);
	t = now_ns();
	wd_disarm();
	if (t >= rec_of(130).end)
		xt_fail(__FILE__, __LINE__, "hipStreamDestroy returned %.1f ms after the pending kernel's end; expected before it (at once)",
			(t - rec_of(130).end) / 1e6);
	ASSERT_EQ(hipDeviceSynchronize(), hipSuccess);	/* its work still completes */
}

/* Item 4: a lower stream held by a destroyed stream's work is released
 * when that work ends (not never, not at the hold limit). */
TEST(lower_stream_is_released_when_a_destroyed_streams_work_ends)
{
	hipStream_t hi, lo;
	struct fake_rec h, r;
	uint64_t t;

	hi = mk(-1);	/* the hold limit: the default 10 s */
	lo = mk(0);
	launch(lo, 131, 0);
	launch(hi, 132, 100 * MS);
	wd_arm(3000, "hipStreamDestroy of a stream with work pending");
	ASSERT_EQ(hipStreamDestroy(hi), hipSuccess);
	t = now_ns();
	h = rec_of(132);
	if (t >= h.end)	/* the precondition: destroy returned at once */
		xt_fail(__FILE__, __LINE__, "hipStreamDestroy returned %.1f ms after the pending kernel's end; expected before it",
			(t - h.end) / 1e6);
	wd_arm(3000, "a lower stream's launch held by a destroyed stream's work");
	launch(lo, 133, 0);
	wd_disarm();
	r = rec_of(133);
	ASSERT_GE(r.submit, h.end);		/* held while the work ran */
	ASSERT_LE(r.submit, h.end + 20 * MS);	/* and released at its end */
}

static void *pt_launch_thread(void *p)
{
	dim3 one = { 1, 1, 1 };

	(void)p;
	ASSERT_EQ(hipLaunchKernel_spt(K(140, 300 * MS), one, one, NULL, 0, NULL), hipSuccess);
	return NULL;
}

/* Item 5: a thread that exits with work on its per-thread default stream
 * does not wait for the work. */
TEST(thread_exit_does_not_wait_for_its_per_thread_stream)
{
	pthread_t t;
	uint64_t j;

	ASSERT_EQ(pthread_create(&t, NULL, pt_launch_thread, NULL), 0);
	wd_arm(3000, "pthread_join of a thread that left work on its per-thread stream");
	pthread_join(t, NULL);
	j = now_ns();
	wd_disarm();
	if (j >= rec_of(140).end)
		xt_fail(__FILE__, __LINE__, "pthread_join returned %.1f ms after the thread's kernel ended; expected before it (the exit does not wait)",
			(j - rec_of(140).end) / 1e6);
}

/* Item 6: a side stream that joins a capture through an event, as
 * PyTorch's do: its calls are captured, and not held while a higher
 * stream is busy. */
TEST(stream_joined_to_a_capture_by_an_event_is_not_held)
{
	hipStream_t hi = mk(-1), cap = mk(0), side = mk(0);
	hipEvent_t ev, ev2;
	hipGraph_t g;
	struct fake_rec h, r;

	ASSERT_EQ(hipEventCreate(&ev), hipSuccess);
	ASSERT_EQ(hipEventCreate(&ev2), hipSuccess);
	launch(cap, 150, 0);
	launch(side, 151, 0);
	launch(hi, 152, 40 * MS);
	ASSERT_EQ(hipStreamBeginCapture(cap, hipStreamCaptureModeGlobal), hipSuccess);
	ASSERT_EQ(hipEventRecord(ev, cap), hipSuccess);
	ASSERT_EQ(hipStreamWaitEvent(side, ev, 0), hipSuccess);
	launch(side, 153, MS);
	ASSERT_EQ(hipEventRecord(ev2, side), hipSuccess);
	ASSERT_EQ(hipStreamWaitEvent(cap, ev2, 0), hipSuccess);
	ASSERT_EQ(hipStreamEndCapture(cap, &g), hipSuccess);
	h = rec_of(152);
	r = rec_of(153);
	ASSERT_EQ(hipEventDestroy(ev), hipSuccess);
	ASSERT_EQ(hipEventDestroy(ev2), hipSuccess);
	ASSERT_EQ(r.captured, 1);	/* the fake: side joined the capture */
	if (r.submit >= h.end)
		xt_fail(__FILE__, __LINE__, "the joined stream's captured launch was held until the higher stream's kernel ended (+%.1f ms after its submit); expected not held",
			(r.submit - h.submit) / 1e6);
}

struct lo_call {
	hipStream_t s;
	int id;
	uint64_t called, returned, cpu_ns;
};

static void *lo_call_thread(void *p)
{
	struct lo_call *c = p;
	uint64_t cpu = thread_cpu_ns();

	c->called = now_ns();
	launch(c->s, c->id, 0);
	c->returned = now_ns();
	c->cpu_ns = thread_cpu_ns() - cpu;
	return NULL;
}

/* Item 6: captured calls on a joined (higher) stream do not run: a lower
 * stream is not held because of them, and does not spin meanwhile. */
TEST(lower_stream_is_not_held_by_captured_work_on_a_joined_stream)
{
	hipStream_t cap = mk(-1), side = mk(-1), lo = mk(0);
	struct lo_call c = { lo, 156, 0, 0, 0 };
	hipEvent_t ev, ev2;
	hipGraph_t g;
	pthread_t t;
	uint64_t ended;

	ASSERT_EQ(hipEventCreate(&ev), hipSuccess);
	ASSERT_EQ(hipEventCreate(&ev2), hipSuccess);
	launch(lo, 154, 0);
	launch(side, 155, 0);
	ASSERT_EQ(hipStreamSynchronize(side), hipSuccess);
	ASSERT_EQ(hipStreamBeginCapture(cap, hipStreamCaptureModeRelaxed), hipSuccess);
	ASSERT_EQ(hipEventRecord(ev, cap), hipSuccess);
	ASSERT_EQ(hipStreamWaitEvent(side, ev, 0), hipSuccess);
	launch(side, 157, 10 * MS);	/* captured: never runs */
	ASSERT_EQ(rec_of(157).captured, 1);
	ASSERT_EQ(pthread_create(&t, NULL, lo_call_thread, &c), 0);
	usleep(200000);		/* the capture lasts */
	ASSERT_EQ(hipEventRecord(ev2, side), hipSuccess);
	ASSERT_EQ(hipStreamWaitEvent(cap, ev2, 0), hipSuccess);
	ASSERT_EQ(hipStreamEndCapture(cap, &g), hipSuccess);
	ended = now_ns();
	ASSERT_EQ(hipEventDestroy(ev), hipSuccess);
	ASSERT_EQ(hipEventDestroy(ev2), hipSuccess);
	wd_arm(3000, "a lower stream's launch beside captured work");
	pthread_join(t, NULL);
	wd_disarm();
	if (rec_of(156).submit >= ended)
		xt_fail(__FILE__, __LINE__, "the lower launch was held by captured work for the whole capture (submitted %.1f ms after its call, %.1f ms of it on the CPU); expected not held",
			(rec_of(156).submit - c.called) / 1e6, c.cpu_ns / 1e6);
	ASSERT_LE(rec_of(156).submit - c.called, 20 * MS);
}

/* Item 7: a higher stream waits on a value a lower stream writes
 * (hipStreamWriteValue32): the write is not held to the hold limit. */
TEST(producer_of_a_memory_wait_is_not_held_to_the_hold_limit)
{
	hipStream_t hi, lo;
	uint32_t *flag;
	struct fake_rec r, w;
	uint64_t t;

	hi = mk(-1);	/* the hold limit: the default 10 s */
	lo = mk(0);
	flag = pinned_alloc(sizeof(*flag));
	launch(lo, 160, 0);
	ASSERT_EQ(hipStreamWaitValue32(hi, flag, 1, hipStreamWaitValueGte, 0xffffffffU), hipSuccess);
	launch(hi, 161, MS);	/* waits for the flag */
	t = now_ns();
	wd_arm(1500, "hipStreamWriteValue32 of the flag a higher stream waits on");
	ASSERT_EQ(hipStreamWriteValue32(lo, flag, 1, 0), hipSuccess);
	wd_disarm();
	ASSERT_TRUE(find_rec(FAKE_WRITE_VALUE, fake_stream_id(lo), &r) >= 0);
	ASSERT_LE(r.submit - t, 1000 * MS);
	ASSERT_EQ(hipStreamSynchronize(hi), hipSuccess);
	w = rec_of(161);
	ASSERT_GE(w.start, r.end);	/* the fake: the wait held hi until the write */
}

/* Item 8: an urgent stream protects from its creation: created, not used
 * yet, it already caps a lower stream at `threshold` in flight. */
TEST(urgent_stream_caps_a_lower_stream_from_its_creation)
{
	hipStream_t hi, lo;
	struct fake_rec r, o;
	int i, j, most = 0;

	setenv("XSCHED_THRESHOLD", "4", 1);
	setenv("XSCHED_BATCH", "2", 1);
	hi = mk(-1);
	lo = mk(0);
	(void)hi;	/* created, never used */
	for (i = 0; i < 30; i++)
		launch(lo, 170, 2 * MS);
	for (i = 0; i < fake_log_count(); i++) {
		int n = 0;

		fake_log_get(i, &r);
		if (r.kernel != 170)
			continue;
		for (j = 0; j < i; j++) {
			fake_log_get(j, &o);
			if (o.kernel == 170 && o.end > r.submit)
				n++;
		}
		if (n + 1 > most)
			most = n + 1;
	}
	ASSERT_LE(most, 4);
}

/* Item 9: launches on the per-thread default stream, with no stream of
 * another priority, create and record no event. */
TEST(per_thread_default_stream_launches_record_no_event)
{
	int i, created = fake_events_created(), recs = 0;
	dim3 one = { 1, 1, 1 };
	struct fake_rec r;

	for (i = 0; i < 200; i++) {
		ASSERT_EQ(hipLaunchKernel_spt(K(175, 0), one, one, NULL, 0, NULL), hipSuccess);
		ASSERT_EQ(hipStreamSynchronize_spt(NULL), hipSuccess);
	}
	for (i = 0; i < fake_log_count(); i++) {
		fake_log_get(i, &r);
		recs += r.kernel == FAKE_EVENT;
	}
	ASSERT_EQ(recs, 0);
	ASSERT_EQ(fake_events_created() - created, 0);
}
