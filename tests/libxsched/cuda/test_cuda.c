// SPDX-License-Identifier: MIT
/*
 * Host tests of the CUDA interposer (libxsched-cuda.so) against the fake
 * libcuda.so.1 (fake_libcuda.h): this program links the fake, and runs with
 * the interposer preloaded (it re-executes itself with LD_PRELOAD=$XC_PRELOAD
 * when that is not so yet).  Each test runs in its own forked process, so
 * each starts with a fresh interposer and its own environment.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_libcuda.h"
#include "harness.h"
#include "cuda_helpers.h"

CUresult cuLaunchKernel_ptsz(CUfunction, unsigned int, unsigned int, unsigned int,
			     unsigned int, unsigned int, unsigned int, unsigned int,
			     CUstream, void **, void **);

/* ---- helpers (and cuda_helpers.h's) ---- */

static int in_fake(const void *p)
{
	Dl_info di;

	return dladdr(p, &di) && di.dli_fname && strstr(di.dli_fname, "libcuda.so");
}

typedef CUresult (*gpa_fn)(const char *, void **, int, cuuint64_t,
			   CUdriverProcAddressQueryResult *);
typedef CUresult (*launch_fn)(CUfunction, unsigned int, unsigned int, unsigned int,
			      unsigned int, unsigned int, unsigned int, unsigned int,
			      CUstream, void **, void **);

static gpa_fn gpa(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	gpa_fn f;

	ASSERT_TRUE(h != NULL);
	f = (gpa_fn)dlsym(h, "cuGetProcAddress_v2");
	ASSERT_TRUE(f != NULL);
	return f;
}

/* ---- symbol redirection ---- */

TEST(exported_symbols_are_the_hooks)
{
	struct fake_rec r;

	ASSERT_TRUE(in_xsched((void *)cuLaunchKernel));
	ASSERT_TRUE(in_xsched((void *)cuStreamSynchronize));
	launch(NULL, 7, 0);
	r = rec_of(7);
	ASSERT_EQ(r.variant, FAKE_LEGACY);
	ASSERT_EQ(r.stream, 0);	/* the legacy default stream */
}

TEST(dlsym_hands_out_hooks_and_passes_the_rest)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW);

	ASSERT_TRUE(h != NULL);
	ASSERT_TRUE(in_xsched(dlsym(h, "cuLaunchKernel_ptsz")));
	ASSERT_TRUE(in_xsched(dlsym(h, "cuGetProcAddress_v2")));
	ASSERT_TRUE(in_xsched(dlsym(h, "cuMemcpyAsync")));
	ASSERT_TRUE(in_fake(dlsym(h, "cuCtxGetDevice")));
	ASSERT_TRUE(dlsym(h, "cuNoSuchFunction") == NULL);
}

/* RTLD_NEXT is relative to the caller: a library loaded after the
 * interposer that asks for the next definition of a function it defines
 * gets the one after it, not its own (ThreadSanitizer's runtime, finding
 * its own interceptor, recursed for ever). */
TEST(dlsym_rtld_next_is_relative_to_its_caller)
{
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);

	ASSERT_TRUE(fake_next_definition("fake_now") == NULL);	/* defined by the fake only */
	ASSERT_TRUE(fake_next_definition("cuInit") == NULL);	/* nor given a hook */
	ASSERT_TRUE(libc != NULL);
	ASSERT_TRUE(fake_next_definition("getpid") == dlsym(libc, "getpid"));
}

TEST(getprocaddress_keeps_the_per_thread_variant)
{
	gpa_fn f = gpa();
	void *pt = NULL, *leg = NULL, *self = NULL, *dev = NULL;
	CUdriverProcAddressQueryResult st;
	struct fake_rec r;

	ASSERT_EQ(f("cuLaunchKernel", &pt, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
		    &st), CUDA_SUCCESS);
	ASSERT_TRUE(pt == (void *)cuLaunchKernel_ptsz);
	ASSERT_EQ(f("cuLaunchKernel", &leg, 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &st),
		  CUDA_SUCCESS);
	ASSERT_TRUE(leg == (void *)cuLaunchKernel);
	ASSERT_EQ(f("cuGetProcAddress", &self, 13000, 0, &st), CUDA_SUCCESS);
	ASSERT_TRUE(self == (void *)f);
	ASSERT_EQ(f("cuCtxGetDevice", &dev, 13000, 0, &st), CUDA_SUCCESS);
	ASSERT_TRUE(in_fake(dev));

	/* A null stream through the per-thread hook is the caller's own
	 * per-thread stream, through the driver's per-thread export. */
	ASSERT_EQ(((launch_fn)pt)(K(1, 0), 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_SUCCESS);
	r = rec_of(1);
	ASSERT_EQ(r.variant, FAKE_PTSZ);
	ASSERT_EQ(r.stream, -(int)syscall(SYS_gettid));
	ASSERT_EQ(((launch_fn)leg)(K(2, 0), 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_SUCCESS);
	r = rec_of(2);
	ASSERT_EQ(r.variant, FAKE_LEGACY);
	ASSERT_EQ(r.stream, 0);
}

TEST(unknown_address_is_matched_by_name)
{
	gpa_fn f = gpa();
	void *p = NULL;

	setenv("FAKE_CUDA_PROC_INTERNAL", "1", 1);
	ASSERT_EQ(f("cuLaunchKernel", &p, 13000, 0, NULL), CUDA_SUCCESS);
	ASSERT_TRUE(p == (void *)cuLaunchKernel);
	ASSERT_EQ(((launch_fn)p)(K(3, 0), 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_SUCCESS);
	ASSERT_EQ(rec_of(3).variant, FAKE_LEGACY);
}

TEST(unknown_address_of_a_newer_abi_is_not_hooked)
{
	gpa_fn f = gpa();
	void *p = NULL;

	/* libcuda exports cuMemcpyAsync_v2, which has no hook: an unknown
	 * address for "cuMemcpyAsync" may be that ABI, so it passes through
	 * (with a warning) rather than reach a hook of another signature. */
	setenv("FAKE_CUDA_PROC_INTERNAL", "1", 1);
	ASSERT_EQ(f("cuMemcpyAsync", &p, 13000, 0, NULL), CUDA_SUCCESS);
	ASSERT_TRUE(in_fake(p));
}

TEST(launch_arguments_reach_the_driver_unchanged)
{
	void *params[2] = { (void *)1, (void *)2 }, *extra[1] = { NULL };
	CUlaunchConfig cfg;
	CUstream s = mk(0);
	struct fake_rec r;

	ASSERT_EQ(cuLaunchKernel(K(4, 0), 7, 8, 9, 32, 2, 1, 4096, s, params, extra),
		  CUDA_SUCCESS);
	r = rec_of(4);
	ASSERT_TRUE(r.params == params);
	ASSERT_TRUE(r.extra == extra);
	ASSERT_EQ(r.grid[0], 7);
	ASSERT_EQ(r.grid[2], 9);
	ASSERT_EQ(r.block[1], 2);
	ASSERT_EQ(r.smem, 4096);
	ASSERT_EQ(r.stream, fake_stream_id(s));
	memset(&cfg, 0, sizeof(cfg));
	cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
	cfg.blockDimX = cfg.blockDimY = cfg.blockDimZ = 1;
	cfg.hStream = s;
	ASSERT_EQ(cuLaunchKernelEx(&cfg, K(5, 0), params, NULL), CUDA_SUCCESS);
	r = rec_of(5);
	ASSERT_TRUE(r.config == &cfg);
	ASSERT_TRUE(r.params == params);
}

/* ---- Lv1 with per-stream priorities ---- */

struct thr_arg {
	CUstream s;
	int id;
};

static void *launch_thread(void *p)
{
	struct thr_arg *a = p;

	launch(a->s, a->id, MS);
	return NULL;
}

TEST(lower_stream_waits_while_higher_has_work)
{
	CUstream hi = mk(-1), lo = mk(0);
	struct fake_rec h, r;
	int i;

	launch(lo, 9, 0);
	launch(hi, 10, 40 * MS);
	for (i = 0; i < 3; i++)
		launch(lo, 11 + i, MS);
	h = rec_of(10);
	for (i = 0; i < 3; i++) {
		r = rec_of(11 + i);
		ASSERT_GE(r.submit, h.end);
		ASSERT_LE(r.submit, h.end + 20 * MS);
	}
}

TEST(lower_stream_has_at_most_threshold_in_flight)
{
	CUstream hi, lo;
	int i, most;

	setenv("XSCHED_THRESHOLD", "4", 1);
	setenv("XSCHED_BATCH", "2", 1);
	hi = mk(-1);
	lo = mk(0);
	launch(hi, 20, 0);	/* live, and idle */
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	for (i = 0; i < 30; i++)
		launch(lo, 30 + (i % 30), 2 * MS);
	most = most_in_flight(lo, 30);
	ASSERT_LE(most, 4);
	ASSERT_GE(most, 3);	/* and it does run ahead of the GPU up to it */
}

/* Event records the driver saw on @h. */
static int records_on(CUstream h)
{
	struct fake_rec r;
	int i, n = 0;

	for (i = 0; i < fake_log_count(); i++) {
		fake_log_get(i, &r);
		if (r.kernel == -2 && r.stream == fake_stream_id(h))
			n++;
	}
	return n;
}

/* The cap learns completion from a mark every `batch` launches, recorded
 * on events it reuses: no mark (or event) per launch. */
TEST(capped_stream_marks_every_batch)
{
	CUstream hi, lo;
	int i, created, marks;

	setenv("XSCHED_THRESHOLD", "16", 1);
	setenv("XSCHED_BATCH", "8", 1);
	hi = mk(-1);
	lo = mk(0);
	launch(hi, 77, 0);	/* live, and idle */
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	created = fake_events_created();
	for (i = 0; i < 128; i++)
		launch(lo, 78, 200000);
	ASSERT_EQ(cuStreamSynchronize(lo), CUDA_SUCCESS);
	marks = records_on(lo);
	ASSERT_LE(marks, 128 / 8 + 2);
	ASSERT_GE(marks, 128 / 8 - 2);	/* and the cap did wait on them */
	ASSERT_LE(fake_events_created() - created, 4);
}

/* A capped stream waits for one batch to complete while the next runs:
 * its kernels follow each other with no gap (the GPU never runs dry), as
 * they would uncapped. */
TEST(capped_stream_keeps_the_gpu_busy)
{
	CUstream hi, lo;
	struct fake_rec r;
	uint64_t tail = 0;
	int i, gaps = 0, seen = 0;

	setenv("XSCHED_THRESHOLD", "4", 1);
	setenv("XSCHED_BATCH", "2", 1);
	hi = mk(-1);
	lo = mk(0);
	launch(hi, 79, 0);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	for (i = 0; i < 24; i++)
		launch(lo, 80, 5 * MS);
	ASSERT_EQ(cuStreamSynchronize(lo), CUDA_SUCCESS);
	for (i = 0; i < fake_log_count(); i++) {
		fake_log_get(i, &r);
		if (r.kernel != 80)
			continue;
		if (seen++ && r.start > tail)
			gaps++;
		tail = r.end;
	}
	ASSERT_EQ(seen, 24);
	ASSERT_LE(gaps, 1);	/* draining every threshold: about 6 */
}

TEST(hysteresis_bridges_a_gap_in_higher_work)
{
	CUstream hi, lo;
	struct fake_rec b, r;
	struct timespec gap = { 0, 2000000 };
	pthread_t t;
	struct thr_arg a;

	setenv("XSCHED_HYSTERESIS_US", "20000", 1);
	hi = mk(-1);
	lo = mk(0);
	launch(lo, 73, 0);
	launch(hi, 74, 20 * MS);
	a.s = lo;
	a.id = 75;
	ASSERT_EQ(pthread_create(&t, NULL, launch_thread, &a), 0);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	nanosleep(&gap, NULL);	/* the urgent job's host work between kernels */
	launch(hi, 76, 20 * MS);
	pthread_join(t, NULL);
	b = rec_of(76);
	r = rec_of(75);
	ASSERT_GE(r.submit, b.end);
}

TEST(equal_priorities_never_wait)
{
	CUstream a = mk(0), b = mk(0);
	struct fake_rec ra, rb;

	launch(a, 40, 40 * MS);
	launch(b, 41, MS);
	ra = rec_of(40);
	rb = rec_of(41);
	ASSERT_LE(rb.submit - ra.submit, 10 * MS);
}

typedef CUresult (*set_attr_fn)(CUstream, CUstreamAttrID, const CUstreamAttrValue *);

/* A priority set as a stream attribute, as the runtime reaches it (through
 * cuGetProcAddress): the stream's XQueue follows, and the equal stream
 * beside it now waits for it. */
TEST(priority_set_as_attribute_is_followed)
{
	CUstream a = mk(0), lo = mk(0);
	CUdriverProcAddressQueryResult st;
	CUstreamAttrValue v;
	struct fake_rec h, r;
	void *fn = NULL;

	launch(a, 100, 0);	/* both in the table, equal */
	launch(lo, 101, 0);
	ASSERT_EQ(gpa()("cuStreamSetAttribute", &fn, 13000, 0, &st), CUDA_SUCCESS);
	ASSERT_TRUE(in_xsched(fn));
	memset(&v, 0, sizeof(v));
	v.priority = -1;
	ASSERT_EQ(((set_attr_fn)fn)(a, CU_STREAM_ATTRIBUTE_PRIORITY, &v), CUDA_SUCCESS);
	launch(a, 102, 40 * MS);
	launch(lo, 103, MS);
	h = rec_of(102);
	r = rec_of(103);
	ASSERT_GE(r.submit, h.end);
}

/* Attributes copied from an urgent stream make the copy urgent. */
TEST(priority_copied_with_attributes_is_followed)
{
	CUstream hi = mk(-1), b = mk(0), lo = mk(0);
	struct fake_rec h, r;

	launch(b, 104, 0);
	launch(lo, 105, 0);
	ASSERT_EQ(cuStreamCopyAttributes(b, hi), CUDA_SUCCESS);
	launch(b, 106, 40 * MS);
	launch(lo, 107, MS);
	h = rec_of(106);
	r = rec_of(107);
	ASSERT_GE(r.submit, h.end);
}

static void launch_from_thread(CUstream s, int id)
{
	struct thr_arg a = { s, id };
	pthread_t t;

	ASSERT_EQ(pthread_create(&t, NULL, launch_thread, &a), 0);
	pthread_join(t, NULL);
}

TEST(per_thread_default_stream_is_scheduled)
{
	CUstream lo = mk(1);	/* below the default streams' 0 */
	struct fake_rec p, r;

	launch(lo, 50, 0);
	ASSERT_EQ(cuLaunchKernel_ptsz(K(51, 0), 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL),
		  CUDA_SUCCESS);
	ASSERT_EQ(cuLaunchKernel_ptsz(K(52, 40 * MS), 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL),
		  CUDA_SUCCESS);
	launch_from_thread(lo, 53);
	p = rec_of(52);
	r = rec_of(53);
	ASSERT_EQ(p.variant, FAKE_PTSZ);
	ASSERT_GE(r.submit, p.end);
}

TEST(legacy_default_stream_is_scheduled)
{
	CUstream lo = mk(1);
	struct fake_rec p, r;

	launch(lo, 54, 0);
	launch(NULL, 55, 40 * MS);
	launch_from_thread(lo, 56);
	p = rec_of(55);
	r = rec_of(56);
	ASSERT_EQ(p.stream, 0);
	ASSERT_GE(r.submit, p.end);
}

TEST(captured_calls_are_not_held)
{
	CUstream hi = mk(-1), lo = mk(0);
	CUgraph g;
	struct fake_rec h, r;

	launch(lo, 57, 0);
	launch(hi, 58, 40 * MS);
	ASSERT_EQ(cuStreamBeginCapture(lo, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	launch(lo, 59, MS);
	ASSERT_EQ(cuStreamEndCapture(lo, &g), CUDA_SUCCESS);
	h = rec_of(58);
	r = rec_of(59);
	ASSERT_EQ(r.captured, 1);
	ASSERT_LE(r.submit - h.submit, 10 * MS);
}

TEST(destroyed_handle_reused_with_its_new_priority)
{
	CUstream a = mk(-1), b, c;
	struct fake_rec rb, rc;

	launch(a, 60, 0);
	ASSERT_EQ(cuStreamDestroy(a), CUDA_SUCCESS);
	b = mk(0);
	ASSERT_TRUE(b == a);	/* the fake hands the handle out again */
	c = mk(0);
	launch(b, 61, 40 * MS);
	launch(c, 62, MS);
	rb = rec_of(61);
	rc = rec_of(62);
	ASSERT_LE(rc.submit - rb.submit, 10 * MS);
}

TEST(synchronize_tells_what_completed)
{
	CUstream hi = mk(-1), lo = mk(0);
	struct fake_rec r;
	int i, marks = 0;

	launch(lo, 63, 0);
	launch(hi, 64, 20 * MS);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	launch(lo, 65, 0);
	/* No marker was needed to learn that hi is idle. */
	for (i = 0; i < fake_log_count(); i++) {
		fake_log_get(i, &r);
		if (r.kernel == -2 && r.stream == fake_stream_id(hi))
			marks++;
	}
	ASSERT_EQ(marks, 0);
}

TEST(hold_is_bounded_by_hold_max)
{
	CUstream hi, lo;
	struct fake_rec h, r;

	setenv("XSCHED_CUDA_HOLD_MAX_MS", "50", 1);
	hi = mk(-1);
	lo = mk(0);
	launch(lo, 66, 0);
	launch(hi, 67, 400 * MS);
	launch(lo, 68, 0);
	h = rec_of(67);
	r = rec_of(68);
	ASSERT_GE(r.submit - h.submit, 40 * MS);
	ASSERT_LE(r.submit - h.submit, 200 * MS);
}

TEST(fork_child_uses_the_library)
{
	CUstream s = mk(0);
	int status;
	pid_t pid;

	launch(s, 69, MS);
	pid = fork();
	if (pid == 0) {
		CUstream t = mk(-1);

		launch(t, 70, MS);
		launch(s, 71, MS);
		_exit(cuStreamSynchronize(t) == CUDA_SUCCESS ? 0 : 3);
	}
	ASSERT_TRUE(pid > 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	launch(s, 72, 0);
	ASSERT_EQ(cuStreamSynchronize(s), CUDA_SUCCESS);
}

char *self_argv0;

/* ---- the SM partition (XSCHED_CUDA_SM_SPLIT) and XSCHED_CUDA_HOLD ---- */

static CUstream mk_plain(void)
{
	CUstream h = NULL;

	ASSERT_EQ(cuStreamCreate(&h, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
	return h;
}

TEST(split_puts_urgent_and_other_streams_on_their_partitions)
{
	CUstream hi, top, lo, plain, low;
	unsigned int n_hi, n_lo, n;
	int g_hi, g_lo, prio = 0;

	setenv("XSCHED_CUDA_SM_SPLIT", "16", 1);
	hi = mk(-1);
	top = mk(-5);
	lo = mk(0);
	plain = mk_plain();
	low = mk(3);	/* clamped to the least priority: not urgent */
	g_hi = fake_stream_green(hi, &n_hi);
	g_lo = fake_stream_green(lo, &n_lo);
	ASSERT_TRUE(g_hi > 0);
	ASSERT_TRUE(g_lo > 0);
	ASSERT_TRUE(g_hi != g_lo);
	ASSERT_EQ(n_hi, 16);
	ASSERT_EQ(n_lo, FAKE_SMS - 16);
	ASSERT_EQ(fake_stream_green(top, &n), g_hi);
	ASSERT_EQ(fake_stream_green(plain, &n), g_lo);
	ASSERT_EQ(fake_stream_green(low, &n), g_lo);
	ASSERT_EQ(fake_green_count(), 2);	/* one pair per device, made once */
	ASSERT_EQ(cuStreamGetPriority(hi, &prio), CUDA_SUCCESS);
	ASSERT_EQ(prio, -1);	/* the requested priority is kept */
	launch(hi, 80, 0);
	launch(lo, 81, 0);
	ASSERT_EQ(rec_of(80).stream, fake_stream_id(hi));
	ASSERT_EQ(rec_of(81).stream, fake_stream_id(lo));
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
}

TEST(split_is_rounded_up_to_the_driver_granularity)
{
	CUstream hi, lo;
	unsigned int n_hi, n_lo;

	setenv("XSCHED_CUDA_SM_SPLIT", "12", 1);
	hi = mk(-1);
	lo = mk(0);
	ASSERT_TRUE(fake_stream_green(hi, &n_hi) > 0);
	ASSERT_TRUE(fake_stream_green(lo, &n_lo) > 0);
	ASSERT_EQ(n_hi, 16);
	ASSERT_EQ(n_lo, FAKE_SMS - 16);
}

TEST(no_partition_without_the_variable)
{
	CUstream hi, lo;
	unsigned int n;

	unsetenv("XSCHED_CUDA_SM_SPLIT");
	hi = mk(-1);
	lo = mk(0);
	ASSERT_EQ(fake_stream_green(hi, &n), 0);
	ASSERT_EQ(fake_stream_green(lo, &n), 0);
	ASSERT_EQ(fake_green_count(), 0);
}

/* The driver makes green-context streams non-blocking only: a blocking
 * stream is made as asked, on every SM, rather than changing its meaning. */
TEST(split_leaves_a_blocking_stream_as_asked)
{
	CUstream h = NULL, hi;
	unsigned int n;

	setenv("XSCHED_CUDA_SM_SPLIT", "16", 1);
	hi = mk(-1);
	ASSERT_EQ(cuStreamCreateWithPriority(&h, CU_STREAM_DEFAULT, -1), CUDA_SUCCESS);
	ASSERT_EQ(fake_stream_green(h, &n), 0);
	ASSERT_TRUE(fake_stream_green(hi, &n) > 0);
	launch(h, 82, 0);
	ASSERT_EQ(rec_of(82).stream, fake_stream_id(h));
}

TEST(split_bad_value_is_a_config_error)
{
	FILE *f = err_capture();
	CUstream hi, lo;
	const char *e;
	unsigned int n;

	setenv("XSCHED_CUDA_SM_SPLIT", "16x", 1);
	hi = mk(-1);
	lo = mk(0);
	e = err_read(f);
	ASSERT_EQ(count_of(e, "XSCHED_CUDA_SM_SPLIT='16x' is not a whole number of SMs"), 1);
	ASSERT_EQ(fake_stream_green(hi, &n), 0);
	ASSERT_EQ(fake_stream_green(lo, &n), 0);
	ASSERT_EQ(fake_green_count(), 0);
	fclose(f);
}

TEST(split_of_every_sm_is_refused_once)
{
	FILE *f = err_capture();
	CUstream hi, lo;
	const char *e;
	unsigned int n;

	setenv("XSCHED_CUDA_SM_SPLIT", "132", 1);
	hi = mk(-1);
	lo = mk(0);
	e = err_read(f);
	ASSERT_EQ(count_of(e, "XSCHED_CUDA_SM_SPLIT=132 leaves none of device 0's 132 SMs"), 1);
	ASSERT_EQ(fake_stream_green(hi, &n), 0);
	ASSERT_EQ(fake_stream_green(lo, &n), 0);
	fclose(f);
}

/* Run by split_without_green_contexts_warns_once_and_runs in a process
 * whose libcuda is the older fake (no green contexts). */
static int nogreen_body(void)
{
	CUstream hi, lo;

	ASSERT_TRUE(dlsym(RTLD_DEFAULT, "cuGreenCtxCreate") == NULL);
	hi = mk(-1);
	lo = mk(0);
	launch(hi, 83, MS);
	launch(lo, 84, 0);
	ASSERT_EQ(cuStreamSynchronize(lo), CUDA_SUCCESS);
	ASSERT_EQ(rec_of(83).stream, fake_stream_id(hi));
	ASSERT_EQ(rec_of(84).stream, fake_stream_id(lo));
	ASSERT_GE(rec_of(84).submit, rec_of(83).end);	/* Lv1 still holds lo */
	ASSERT_EQ(fake_green_count(), 0);
	return 0;
}

TEST(split_without_green_contexts_warns_once_and_runs)
{
	const char *old = getenv("XC_FAKE_OLD");
	char path[] = "/tmp/xc-nogreen-XXXXXX";
	int fd = mkstemp(path), status;
	char *args[] = { self_argv0, (char *)"--nogreen-body", NULL };
	FILE *f;
	const char *text;
	pid_t pid;

	ASSERT_TRUE(old != NULL);	/* the Makefile names the older fake */
	ASSERT_TRUE(fd >= 0);
	pid = fork();
	if (pid == 0) {
		dup2(fd, 2);
		setenv("LD_LIBRARY_PATH", old, 1);
		setenv("XSCHED_CUDA_SM_SPLIT", "16", 1);
		execv("/proc/self/exe", args);
		_exit(127);
	}
	ASSERT_TRUE(pid > 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	f = fdopen(fd, "r");
	ASSERT_TRUE(f != NULL);
	text = err_read(f);
	fclose(f);
	unlink(path);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	ASSERT_EQ(count_of(text, "needs green contexts"), 1);
	ASSERT_EQ(count_of(text, "this libcuda lacks cuDeviceGetDevResource"), 1);
}

/* Default: the partition's streams are scheduled as any others. */
TEST(split_streams_keep_lv1_holds)
{
	CUstream hi, lo;
	struct fake_rec h, r;
	unsigned int n;

	setenv("XSCHED_CUDA_SM_SPLIT", "16", 1);
	hi = mk(-1);
	lo = mk(0);
	ASSERT_TRUE(fake_stream_green(hi, &n) > 0);
	launch(lo, 85, 0);
	launch(hi, 86, 40 * MS);
	launch(lo, 87, MS);
	h = rec_of(86);
	r = rec_of(87);
	ASSERT_GE(r.submit, h.end);
}

TEST(hold_off_never_holds)
{
	CUstream hi, lo;
	struct fake_rec h, r;

	setenv("XSCHED_CUDA_HOLD", "0", 1);
	hi = mk(-1);
	lo = mk(0);
	launch(lo, 88, 0);
	launch(hi, 89, 40 * MS);
	launch(lo, 90, MS);
	h = rec_of(89);
	r = rec_of(90);
	ASSERT_LE(r.submit, h.start + 20 * MS);
}

TEST(hold_bad_value_is_a_config_error)
{
	FILE *f = err_capture();
	CUstream hi, lo;
	struct fake_rec h, r;

	setenv("XSCHED_CUDA_HOLD", "no", 1);
	hi = mk(-1);
	lo = mk(0);
	launch(lo, 91, 0);
	launch(hi, 92, 40 * MS);
	launch(lo, 93, MS);
	h = rec_of(92);
	r = rec_of(93);
	ASSERT_LE(r.submit, h.start + 20 * MS);	/* the default: its first burst holds nothing */
	ASSERT_EQ(count_of(err_read(f), "XSCHED_CUDA_HOLD='no' is not 0, 1 or auto; using auto"), 1);
	fclose(f);
}

/* ---- main ---- */

int main(int argc, char **argv)
{
	const char *want = getenv("XC_PRELOAD");
	const char *have = getenv("LD_PRELOAD");
	const char *suite;

	if (want && (!have || strcmp(have, want))) {
		setenv("LD_PRELOAD", want, 1);
		execv("/proc/self/exe", argv);
		perror("execv");
		return 2;
	}
	if (!in_xsched((void *)cuLaunchKernel)) {
		printf("not ok 0 the interposer is not preloaded (set XC_PRELOAD)\n");
		return 1;
	}
	self_argv0 = argv[0];
	if (argc > 1 && !strcmp(argv[1], "--nogreen-body"))
		return nogreen_body();
	if (argc > 2 && !strcmp(argv[1], "--old-body"))
		return !strcmp(argv[2], "probe") ? old_probe_body() : old_call_body();
	suite = getenv("XSCHED_UNIT_SUITE");	/* the ThreadSanitizer run's */
	return xt_run(suite && *suite ? suite : "libxsched-cuda", argc > 1 ? argv[1] : NULL, NULL);
}
