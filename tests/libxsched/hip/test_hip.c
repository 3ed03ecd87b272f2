// SPDX-License-Identifier: MIT
/*
 * Host tests of the HIP interposer (libxsched.so) against the fake
 * libamdhip64.so.5 (fake_libamdhip64.h): this program links the fake as a
 * HIP program links libamdhip64, and runs with libxsched.so preloaded (it
 * re-executes itself with LD_PRELOAD=$XH_PRELOAD when that is not so yet).
 * Each test runs in its own forked process (a fresh interposer, its own
 * environment).  XH_LINKED names this program built with -lxsched too (the
 * preload + link test); XH_SO the production libxsched.so (symbol checks).
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

/* ---- helpers (and hip_helpers.h's) ---- */

struct thr_arg {
	hipStream_t s;
	int id;
	uint64_t ns;
};

static void *launch_thread(void *p)
{
	struct thr_arg *a = p;

	launch(a->s, a->id, a->ns);
	return NULL;
}

static void launch_from_thread(hipStream_t s, int id)
{
	struct thr_arg a = { s, id, 0 };
	pthread_t t;

	ASSERT_EQ(pthread_create(&t, NULL, launch_thread, &a), 0);
	pthread_join(t, NULL);
}

/* ---- symbols ---- */

/* Does @file define @name at version node @node (objdump -T: the node, or
 * "(node)" when it is not the default one)?  "Base" (unversioned) is not. */
static int defines_at(const char *file, const char *name, const char *node, char *got, size_t len)
{
	char cmd[4096], line[1024], want[128];
	FILE *f;
	int hit = 0;

	snprintf(cmd, sizeof(cmd), "objdump -T '%s'", file);
	snprintf(want, sizeof(want), "(%s)", node);
	snprintf(got, len, "no definition");
	f = popen(cmd, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *tok[16], *save = NULL, *t;
		int n = 0;

		if (strstr(line, "*UND*"))
			continue;
		for (t = strtok_r(line, " \t\n", &save); t && n < 16; t = strtok_r(NULL, " \t\n", &save))
			tok[n++] = t;
		if (n < 3 || strcmp(tok[n - 1], name))
			continue;
		snprintf(got, len, "%s", tok[n - 2]);
		if (!strcmp(tok[n - 2], node) || !strcmp(tok[n - 2], want))
			hit = 1;
	}
	pclose(f);
	return hit;
}

TEST(versioned_references_bind_to_the_interposer)
{
	static char out[64 << 20];
	const char *want[] = { "hipLaunchKernel", "hipStreamCreateWithPriority",
			       "__hipRegisterFunction", "__hipPopCallConfiguration",
			       "hipStreamSynchronize", "hipLaunchKernel_spt", NULL };
	char line[1024], pat[256], lib[1024], node[64], got[64];
	int i;

	/* Bound at start-up (LD_BIND_NOW), before the probe starts threads
	 * whose lazy bindings would interleave with these lines. */
	ASSERT_EQ(run_self("LD_DEBUG=bindings LD_BIND_NOW=1", "--probe", out, sizeof(out)), 0);
	/* "binding file <exe> [0] to <lib> [0]: normal symbol `name' [node]":
	 * the node is the one the program's reference asks for; the dynamic
	 * linker also accepts an unversioned definition for it, so the node
	 * is checked at the definition in <lib> too. */
	for (i = 0; want[i]; i++) {
		char *p = out, *hit = NULL, *to, *end;

		snprintf(pat, sizeof(pat), "symbol `%s' [", want[i]);
		while ((p = strstr(p, pat))) {
			char *bol = p;

			while (bol > out && bol[-1] != '\n' && strncmp(bol, "binding file ", 13))
				bol--;
			if (!strncmp(bol, "binding file ", 13) && strstr(bol, "test_hip") &&
			    strstr(bol, "test_hip") < p)
				hit = bol;
			p++;
		}
		if (!hit)
			xt_fail(__FILE__, __LINE__, "no binding of the program's %s", want[i]);
		snprintf(line, sizeof(line), "%.*s", (int)(strchr(hit, '\n') - hit), hit);
		to = strstr(line, " to ");
		end = to ? strstr(to + 4, " [") : NULL;
		p = strstr(line, pat);
		if (!end || sscanf(p + strlen(pat), "%63[^]]", node) != 1)
			xt_fail(__FILE__, __LINE__, "cannot read the binding of %s: %s", want[i], line);
		snprintf(lib, sizeof(lib), "%.*s", (int)(end - (to + 4)), to + 4);
		if (!strstr(lib, "libxsched.so"))
			xt_fail(__FILE__, __LINE__, "%s bound elsewhere: %s", want[i], line);
		if (strncmp(node, "hip_", 4))
			xt_fail(__FILE__, __LINE__, "%s: the reference carries no hip_ node: %s",
				want[i], line);
		if (!defines_at(lib, want[i], node, got, sizeof(got)))
			xt_fail(__FILE__, __LINE__, "%s@%s bound to %s, which defines it at %s, not %s",
				want[i], node, lib, got, node);
	}
}

/* Run @cmd (a shell command line), stdout and stderr into @buf. */
static int run_cmd(const char *cmd, char *buf, size_t len)
{
	FILE *f = popen(cmd, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	return pclose(f);
}

/* A framework's way in (tests/libxsched/hip/dlopen_prog.c): a program that does not
 * link libamdhip64 dlopens it RTLD_LOCAL and looks up on that handle.  The
 * runtime is in no global scope there, so only the dlsym() override can
 * answer with a hook; the hooks find the runtime by its soname. */
static void dlsym_case(const char *fake)
{
	const char *prog = getenv("XH_DLOPEN");
	char cmd[8192], out[1 << 16];

	ASSERT_TRUE(prog != NULL && fake != NULL);
	snprintf(cmd, sizeof(cmd), "XSCHED_LOG=debug LD_PRELOAD='%s' '%s' '%s' 2>&1",
		 getenv("LD_PRELOAD"), prog, fake);
	ASSERT_EQ(run_cmd(cmd, out, sizeof(out)), 0);
	expect_line(out, "dlsym hipLaunchKernel: hook\n");
	expect_line(out, "dlsym hipLaunchKernel_spt: hook\n");
	expect_line(out, "dlsym hipMemcpyAsync: hook\n");
	expect_line(out, "dlsym hipGetProcAddress: hook\n");
	expect_line(out, "dlsym hipGetDevice: runtime\n");
	expect_line(out, "dlsym hipNoSuchFunction: none\n");
	/* The hook reached the RTLD_LOCAL runtime, through the scheduler. */
	expect_line(out, "launched: 1 command(s) reached the runtime\n");
	expect_line(out, "-> q1: created (lazy)");
}

TEST(dlsym_hands_out_hooks_and_passes_the_rest)
{
	dlsym_case(getenv("XH_FAKE"));
}

/* The same runtime under ROCm 6's soname: the hooks find it too. */
TEST(dlsym_hooks_find_a_rocm6_soname)
{
	dlsym_case(getenv("XH_FAKE6"));
}

typedef hipError_t (*gpa_fn)(const char *, void **, int, uint64_t, int *);
typedef hipError_t (*launch_fn)(const void *, dim3, dim3, void **, size_t, hipStream_t);

TEST(getprocaddress_hands_out_hooks_per_variant)
{
	gpa_fn f = (gpa_fn)dlsym(RTLD_DEFAULT, "hipGetProcAddress");
	void *leg = NULL, *pt = NULL, *dev = NULL;
	dim3 one = { 1, 1, 1 };
	struct fake_rec r;

	ASSERT_TRUE(f && in_xsched(f));
	ASSERT_EQ(f("hipLaunchKernel", &leg, 60100000, 0, NULL), hipSuccess);
	ASSERT_EQ(f("hipLaunchKernel", &pt, 60100000, 2, NULL), hipSuccess);
	ASSERT_EQ(f("hipGetDevice", &dev, 60100000, 0, NULL), hipSuccess);
	ASSERT_TRUE(in_xsched(leg));
	ASSERT_TRUE(in_xsched(pt));
	ASSERT_TRUE(leg != pt);
	ASSERT_TRUE(in_fake(dev));
	ASSERT_EQ(((launch_fn)pt)(K(1, 0), one, one, NULL, 0, NULL), hipSuccess);
	r = rec_of(1);
	ASSERT_EQ(r.variant, FAKE_SPT);
	ASSERT_EQ(r.stream, -(int)syscall(SYS_gettid));
}

typedef hipError_t (*gde_fn)(const char *, void **, unsigned long long, void *);

/* hipGetDriverEntryPoint (ROCm 7.1, hip_7.1), hipGetProcAddress under
 * CUDA's name: flag 2 asks for the per-thread variant, which its _spt
 * export gives unless flag 1 asks for the legacy one. */
TEST(driver_entry_point_hands_out_hooks_per_variant)
{
	gde_fn f = (gde_fn)dlsym(RTLD_DEFAULT, "hipGetDriverEntryPoint");
	gde_fn fs = (gde_fn)dlsym(RTLD_DEFAULT, "hipGetDriverEntryPoint_spt");
	void *leg = NULL, *pt = NULL, *spt = NULL, *spt_leg = NULL, *dev = NULL;
	dim3 one = { 1, 1, 1 };
	struct fake_rec r;

	ASSERT_TRUE(f && in_xsched(f));
	ASSERT_TRUE(fs && in_xsched(fs));
	ASSERT_EQ(f("hipLaunchKernel", &leg, 0, NULL), hipSuccess);
	ASSERT_EQ(f("hipLaunchKernel", &pt, 2, NULL), hipSuccess);
	ASSERT_EQ(fs("hipLaunchKernel", &spt, 0, NULL), hipSuccess);
	ASSERT_EQ(fs("hipLaunchKernel", &spt_leg, 1, NULL), hipSuccess);
	ASSERT_EQ(f("hipGetDevice", &dev, 0, NULL), hipSuccess);
	ASSERT_TRUE(in_xsched(leg));
	ASSERT_TRUE(in_xsched(pt));
	ASSERT_TRUE(leg != pt);
	ASSERT_TRUE(spt == pt);
	ASSERT_TRUE(spt_leg == leg);
	ASSERT_TRUE(in_fake(dev));
	ASSERT_EQ(((launch_fn)spt)(K(3, 0), one, one, NULL, 0, NULL), hipSuccess);
	r = rec_of(3);
	ASSERT_EQ(r.variant, FAKE_SPT);
	ASSERT_EQ(r.stream, -(int)syscall(SYS_gettid));
}

/* ---- the <<<>>> path and argument buffers ---- */

TEST(push_pop_launch_reaches_the_registered_stub_unchanged)
{
	void **mod = __hipRegisterFatBinary("fatbin");
	dim3 g = { 7, 8, 9 }, b = { 32, 2, 1 }, g2, b2;
	void *args[2] = { (void *)1, (void *)2 };
	hipStream_t s = mk(0), s2;
	struct fake_rec r;
	size_t smem;

	K(2, 0);
	kern[2].needs_registration = 1;
	__hipRegisterFunction(mod, &kern[2], (char *)"k", "k", 0, NULL, NULL, NULL, NULL, NULL);
	ASSERT_TRUE(fake_registered(&kern[2]));
	ASSERT_EQ(__hipPushCallConfiguration(g, b, 4096, s), hipSuccess);
	ASSERT_EQ(__hipPopCallConfiguration(&g2, &b2, &smem, &s2), hipSuccess);
	ASSERT_EQ(hipLaunchKernel(&kern[2], g2, b2, args, smem, s2), hipSuccess);
	r = rec_of(2);
	ASSERT_TRUE(r.args == args);
	ASSERT_EQ(r.grid[0], 7);
	ASSERT_EQ(r.grid[2], 9);
	ASSERT_EQ(r.block[1], 2);
	ASSERT_EQ(r.smem, 4096);
	ASSERT_EQ(r.stream, fake_stream_id(s));
	ASSERT_EQ(r.tid, (long)syscall(SYS_gettid));
}

/* ---- Lv1 with per-stream priorities ---- */

TEST(lower_stream_waits_while_higher_has_work)
{
	hipStream_t hi = mk(-1), lo = mk(0);
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

/* Stream calls that ROCm 6.2, 6.4 and 7.1 added: this program references
 * them at hip_6.2, hip_6.4 and hip_7.1 (the fake exports them there), binds
 * them to the hooks, and a lower stream's call waits for the higher
 * stream's kernel as a launch does. */
TEST(rocm6_and_rocm7_stream_calls_are_scheduled)
{
	hipStream_t hi = mk(-1), lo = mk(0);
	const int kinds[] = { FAKE_ARRAY_COPY, FAKE_BATCH_MEMOP, FAKE_MEMSET2D };
	char host[16] = "x";
	struct fake_rec h, r;
	int i;

	launch(lo, 82, 0);
	for (i = 0; i < 3; i++) {
		launch(hi, 83 + i, 30 * MS);
		switch (kinds[i]) {
		case FAKE_ARRAY_COPY:
			ASSERT_EQ(hipMemcpyHtoAAsync(NULL, 0, host, sizeof(host), lo), hipSuccess);
			break;
		case FAKE_BATCH_MEMOP:
			ASSERT_EQ(hipStreamBatchMemOp(lo, 0, NULL, 0), hipSuccess);
			break;
		default:
			ASSERT_EQ(hipMemsetD2D32Async(NULL, 0, 0, 0, 0, lo), hipSuccess);
		}
		h = rec_of(83 + i);
		r = rec_of(kinds[i]);
		ASSERT_EQ(r.stream, fake_stream_id(lo));
		ASSERT_GE(r.submit, h.end);
	}
}

/* The C++ names of the module launches, as a program or library built
 * against ROCm 5.x's hip_ext.h (rocBLAS 5.5) imports them. */
hipError_t cxx_ext_launch(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
			  uint32_t, size_t, hipStream_t, void **, void **, hipEvent_t,
			  hipEvent_t, uint32_t)
	__asm__("_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j");
hipError_t cxx_hcc_launch(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
			  uint32_t, size_t, hipStream_t, void **, void **, hipEvent_t,
			  hipEvent_t)
	__asm__("_Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_");
void cxx_ggl_launch(uintptr_t, const dim3 *, const dim3 *, uint32_t, hipStream_t, void **)
	__asm__("_ZN8hip_impl22hipLaunchKernelGGLImplEmRK4dim3S2_jP12ihipStream_tPPv");

/* The fake exports these launches under their C++ names only, as ROCm 5.x
 * does: each reaches the runtime through its hook (it answered
 * hipErrorNotSupported when the real function was looked up by its C name
 * alone), and a lower stream's launch waits for the higher stream's kernel.
 * (hip_impl::hipLaunchKernelGGLImpl, C++ only, re-enters the runtime's
 * hipModuleLaunchKernel: its test is among the SELF_CALLS below.) */
TEST(cxx_named_module_launches_reach_the_runtime)
{
	hipStream_t hi = mk(-1), lo = mk(0);
	struct fake_rec h, r;

	ASSERT_TRUE(in_xsched(cxx_ext_launch));
	ASSERT_TRUE(in_xsched(cxx_hcc_launch));
	ASSERT_TRUE(in_xsched(cxx_ggl_launch));
	launch(lo, 90, 0);
	launch(hi, 91, 30 * MS);
	ASSERT_EQ(cxx_ext_launch((hipFunction_t)K(92, 0), 1, 1, 1, 1, 1, 1, 0, lo, NULL, NULL,
				 NULL, NULL, 0), hipSuccess);
	launch(hi, 93, 30 * MS);
	ASSERT_EQ(cxx_hcc_launch((hipFunction_t)K(94, 0), 1, 1, 1, 1, 1, 1, 0, lo, NULL, NULL,
				 NULL, NULL), hipSuccess);
	for (int i = 0; i < 2; i++) {
		h = rec_of(91 + 2 * i);
		r = rec_of(92 + 2 * i);
		ASSERT_EQ(r.stream, fake_stream_id(lo));
		ASSERT_GE(r.submit, h.end);
	}
}

/* A lookup by C name (hipGetProcAddress and dlsym callers, 6.x-built
 * code) on a runtime that exports only the C++ name gets the hook, whose
 * real function is the C++ export. */
TEST(c_named_module_launches_find_the_cxx_export)
{
	hipError_t (*ext)(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
			  uint32_t, size_t, hipStream_t, void **, void **, hipEvent_t,
			  hipEvent_t, uint32_t) =
		(__typeof__(ext))dlsym(RTLD_DEFAULT, "hipExtModuleLaunchKernel");
	hipError_t (*hcc)(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
			  uint32_t, size_t, hipStream_t, void **, void **, hipEvent_t,
			  hipEvent_t) =
		(__typeof__(hcc))dlsym(RTLD_DEFAULT, "hipHccModuleLaunchKernel");
	void *cxx = dlsym(RTLD_DEFAULT,
			  "_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j");
	hipStream_t s = mk(0);

	ASSERT_TRUE(in_xsched(ext));
	ASSERT_TRUE(in_xsched(hcc));
	ASSERT_TRUE(in_xsched(cxx));
	ASSERT_EQ(ext((hipFunction_t)K(97, 0), 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL, NULL, NULL, 0),
		  hipSuccess);
	ASSERT_EQ(hcc((hipFunction_t)K(98, 0), 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL, NULL, NULL),
		  hipSuccess);
	ASSERT_EQ(rec_of(97).stream, fake_stream_id(s));
	ASSERT_EQ(rec_of(98).stream, fake_stream_id(s));
}

/* hipGraphInstantiateWithParams (6.1) with hipGraphInstantiateFlagUpload
 * uploads on a stream: hooked (ordered on that stream), and the upload
 * reaches the runtime on that stream. */
TEST(graph_instantiate_with_upload_is_hooked)
{
	hipGraphInstantiateParams p;
	hipGraphExec_t gx = NULL;
	hipStream_t s = mk(0);

	memset(&p, 0, sizeof(p));
	p.flags = 2;	/* hipGraphInstantiateFlagUpload */
	p.uploadStream = s;
	ASSERT_TRUE(in_xsched(hipGraphInstantiateWithParams));
	ASSERT_EQ(hipGraphInstantiateWithParams(&gx, NULL, &p), hipSuccess);
	ASSERT_EQ(rec_of(FAKE_UPLOAD).stream, fake_stream_id(s));
}

/*
 * The real runtimes call some of their own exports through their PLT, so a
 * preloaded hook is entered again from inside the runtime, on the caller's
 * thread and stream.  SELF_CALLS(X): X(entry, the export it calls) for
 * every such path tests/hip-real/selfcalls.py finds in Debian's 5.2.3,
 * 5.7.1, 6.4.3 and 7.2.4 (it checks this list against them and against the
 * fake, which makes the same calls).  Each test enters the path on a
 * scheduled stream and must return, with the inner call on that stream.
 */
#define SELF_CALLS(X) \
	X(hipMemcpyFromSymbolAsync, hipMemcpyAsync) \
	X(hipMemcpyFromSymbolAsync_spt, hipMemcpyAsync) \
	X(hipMemcpyToSymbolAsync, hipMemcpyAsync) \
	X(hipMemcpyToSymbolAsync_spt, hipMemcpyAsync) \
	X(hipMemcpyPeerAsync, hipMemcpyAsync) \
	X(hipMemcpyPeer, hipMemcpy) \
	X(hipLaunchByPtr, hipModuleLaunchKernel) \
	X(hipLaunchKernelGGLImpl, hipModuleLaunchKernel)

#define SELF_CALL_S 5

static void self_call_hung(int sig)
{
	static const char msg[] = "#   did not return in " "5" " s: the nested hook "
				  "waits for the outer one on the same thread and stream\n";

	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

static char sym_buf[64];

/* Each enters one path on @h (NULL from the _spt ones: the per-thread
 * stream) and says which kernel or command the runtime must record. */
static hipError_t enter_hipMemcpyFromSymbolAsync(hipStream_t h, int *kind)
{
	char dst[8];

	*kind = FAKE_COPY;
	return hipMemcpyFromSymbolAsync(dst, sym_buf, sizeof(dst), 0, hipMemcpyDeviceToHost, h);
}

static hipError_t enter_hipMemcpyFromSymbolAsync_spt(hipStream_t h, int *kind)
{
	char dst[8];

	(void)h;
	*kind = FAKE_COPY;
	return hipMemcpyFromSymbolAsync_spt(dst, sym_buf, sizeof(dst), 0, hipMemcpyDeviceToHost,
					    NULL);
}

static hipError_t enter_hipMemcpyToSymbolAsync(hipStream_t h, int *kind)
{
	*kind = FAKE_COPY;
	return hipMemcpyToSymbolAsync(sym_buf, "x", 1, 0, hipMemcpyHostToDevice, h);
}

static hipError_t enter_hipMemcpyToSymbolAsync_spt(hipStream_t h, int *kind)
{
	(void)h;
	*kind = FAKE_COPY;
	return hipMemcpyToSymbolAsync_spt(sym_buf, "x", 1, 0, hipMemcpyHostToDevice, NULL);
}

static hipError_t enter_hipMemcpyPeerAsync(hipStream_t h, int *kind)
{
	*kind = FAKE_COPY;
	return hipMemcpyPeerAsync(sym_buf + 8, 0, sym_buf, 0, 8, h);
}

static hipError_t enter_hipMemcpyPeer(hipStream_t h, int *kind)
{
	(void)h;
	*kind = FAKE_SYNC_COPY;
	return hipMemcpyPeer(sym_buf + 8, 0, sym_buf, 0, 8);
}

static hipError_t enter_hipLaunchByPtr(hipStream_t h, int *kind)
{
	dim3 one = { 1, 1, 1 };
	hipError_t r = hipConfigureCall(one, one, 0, h);

	*kind = 99;
	return r != hipSuccess ? r : hipLaunchByPtr(K(99, 0));
}

static hipError_t enter_hipLaunchKernelGGLImpl(hipStream_t h, int *kind)
{
	dim3 one = { 1, 1, 1 };

	*kind = 100;
	cxx_ggl_launch((uintptr_t)K(100, 0), &one, &one, 0, h, NULL);
	return hipSuccess;
}

static void self_call(hipError_t (*enter)(hipStream_t, int *), int spt)
{
	hipStream_t s = mk(0);
	int kind = 0;

	signal(SIGALRM, self_call_hung);
	alarm(SELF_CALL_S);
	ASSERT_EQ(enter(s, &kind), hipSuccess);
	alarm(0);
	ASSERT_EQ(rec_of(kind).stream, kind == FAKE_SYNC_COPY ? 0 :
		  fake_stream_id(spt ? hipStreamPerThread : s));
}

#define SELF_TEST(entry, callee)					\
	TEST(self_call_##entry##_to_##callee##_returns)			\
	{								\
		self_call(enter_##entry, strstr(#entry, "_spt") != NULL); \
	}
SELF_CALLS(SELF_TEST)

TEST(higher_stream_never_waits_for_lower)
{
	hipStream_t hi = mk(-1), lo = mk(1);
	struct fake_rec h, r;

	launch(hi, 14, 0);
	launch(lo, 15, 40 * MS);
	launch(hi, 16, 0);
	r = rec_of(15);
	h = rec_of(16);
	ASSERT_LE(h.submit - r.submit, 10 * MS);
}

/* While a higher stream is live (it ran once, now idle: nothing holds the
 * lower one), a lower stream keeps at most XSCHED_THRESHOLD calls in flight:
 * the third waits for the first to complete. */
TEST(lower_stream_keeps_threshold_in_flight)
{
	hipStream_t hi, lo;
	struct fake_rec a, c;
	int i;

	setenv("XSCHED_THRESHOLD", "2", 1);	/* read at the first HIP call */
	setenv("XSCHED_BATCH", "1", 1);
	hi = mk(-1);
	lo = mk(0);
	launch(hi, 70, 0);
	ASSERT_EQ(hipStreamSynchronize(hi), hipSuccess);
	for (i = 0; i < 4; i++)
		launch(lo, 71 + i, 20 * MS);
	for (i = 0; i < 2; i++) {
		a = rec_of(71 + i);
		c = rec_of(73 + i);
		ASSERT_GE(c.submit, a.end);
	}
	a = rec_of(71);
	c = rec_of(72);
	ASSERT_LE(c.submit + MS, a.end);	/* two in flight: the second did not wait */
}

TEST(null_stream_is_scheduled)
{
	hipStream_t lo = mk(1);	/* below the null stream's 0 */
	struct fake_rec p, r;

	launch(lo, 17, 0);
	launch(NULL, 18, 40 * MS);
	launch_from_thread(lo, 19);
	p = rec_of(18);
	r = rec_of(19);
	ASSERT_EQ(p.stream, 0);
	ASSERT_GE(r.submit, p.end);
}

TEST(per_thread_streams_are_scheduled)
{
	hipStream_t lo = mk(1);
	dim3 one = { 1, 1, 1 };
	struct fake_rec p, q, r;

	launch(lo, 20, 0);
	ASSERT_EQ(hipLaunchKernel_spt(K(21, 30 * MS), one, one, NULL, 0, NULL), hipSuccess);
	launch_from_thread(lo, 22);
	ASSERT_EQ(hipLaunchKernel(K(23, 30 * MS), one, one, NULL, 0, hipStreamPerThread),
		  hipSuccess);
	launch_from_thread(lo, 24);
	p = rec_of(21);
	q = rec_of(23);
	ASSERT_EQ(p.variant, FAKE_SPT);
	ASSERT_EQ(p.stream, -(int)syscall(SYS_gettid));
	ASSERT_EQ(q.stream, p.stream);
	r = rec_of(22);
	ASSERT_GE(r.submit, p.end);
	r = rec_of(24);
	ASSERT_GE(r.submit, q.end);
}

TEST(pass_throughs_keep_program_order)
{
	hipStream_t s = mk(0);
	char a[64] = "x", b[64];
	struct fake_rec r;
	int order[] = { 30, FAKE_COPY, FAKE_SYNC_COPY, 31, FAKE_COPY, FAKE_EVENT, FAKE_WAIT, 32 };
	hipEvent_t ev;
	int i;

	ASSERT_EQ(hipEventCreate(&ev), hipSuccess);
	launch(NULL, 30, MS);
	ASSERT_EQ(hipMemsetAsync(b, 0, sizeof(b), NULL), hipSuccess);
	ASSERT_EQ(hipMemcpy(b, a, sizeof(a), hipMemcpyHostToHost), hipSuccess);
	launch(s, 31, MS);
	ASSERT_EQ(hipMemcpyAsync(b, a, sizeof(a), hipMemcpyHostToHost, s), hipSuccess);
	ASSERT_EQ(hipEventRecord(ev, s), hipSuccess);
	ASSERT_EQ(hipStreamWaitEvent(NULL, ev, 0), hipSuccess);
	launch(NULL, 32, MS);
	ASSERT_EQ(fake_log_count(), 8);
	for (i = 0; i < 8; i++) {
		fake_log_get(i, &r);
		ASSERT_EQ(r.kernel, order[i]);
	}
	ASSERT_EQ(hipDeviceSynchronize(), hipSuccess);
	ASSERT_EQ(hipEventDestroy(ev), hipSuccess);
}

TEST(stream_wait_event_releases_the_held_source)
{
	hipStream_t hi = mk(-1), lo = mk(0);
	struct fake_rec w, r;
	hipEvent_t ev;

	ASSERT_EQ(hipEventCreate(&ev), hipSuccess);
	launch(lo, 40, 0);
	launch(hi, 41, 60 * MS);	/* lo is held from now on ... */
	launch_from_thread(lo, 42);	/* ... so this waits for 41 */
	ASSERT_EQ(hipEventRecord(ev, lo), hipSuccess);
	/* hi's next kernel needs lo's work: the policy must let lo run. */
	ASSERT_EQ(hipStreamWaitEvent(hi, ev, 0), hipSuccess);
	launch(hi, 43, 20 * MS);	/* long: lo must get there well before it ends */
	launch_from_thread(lo, 44);
	w = rec_of(43);
	r = rec_of(44);
	ASSERT_LE(r.submit, w.end);	/* lo is not held behind what waits on it */
	ASSERT_EQ(hipStreamSynchronize(hi), hipSuccess);
}

TEST(fork_child_uses_the_interposer)
{
	hipStream_t s = mk(0);
	int status;
	pid_t pid;

	launch(s, 50, MS);
	pid = fork();
	if (pid == 0) {
		hipStream_t hi = mk(-1);

		launch(hi, 51, 20 * MS);
		launch(s, 52, 0);
		_exit(rec_of(52).submit >= rec_of(51).end &&
		      hipStreamSynchronize(hi) == hipSuccess ? 0 : 3);
	}
	ASSERT_TRUE(pid > 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	launch(s, 53, 0);
	ASSERT_EQ(hipStreamSynchronize(s), hipSuccess);
}

/* ---- priorities ---- */

/* Run "--mode" under @env; expect @pat in the interposer's log. */
static void logged(const char *env, const char *mode, const char *pat)
{
	char out[1 << 16];

	run_self(env, mode, out, sizeof(out));
	if (!strstr(out, pat))
		xt_fail(__FILE__, __LINE__, "under '%s' %s: expected '%s' in:\n%s",
			env, mode, pat, out);
}

static void created_prio(const char *env, int hip_prio, int want)
{
	char mode[64], pat[64];

	snprintf(mode, sizeof(mode), "--create %d", hip_prio);
	snprintf(pat, sizeof(pat), "created (hooked), prio %d,", want);
	logged(env, mode, pat);
}

/* The process default applies to every stream the table learns: created
 * ones (hooked), and the null and per-thread streams, which no call
 * creates (lazy: described on first use). */
TEST(priority_is_negated_onto_the_process_default)
{
	created_prio("XSCHED_LOG=debug", -1, 1);
	created_prio("XSCHED_LOG=debug", 1, -1);
	created_prio("XSCHED_LOG=debug", -7, 1);	/* the runtime clamps to -1 */
	created_prio("XSCHED_LOG=debug XSCHED_PRIORITY=5", -1, 6);
	created_prio("XSCHED_LOG=debug XSCHED_PRIORITY=5", 0, 5);
	logged("XSCHED_LOG=debug", "--default", "created (lazy), prio 0,");
	logged("XSCHED_LOG=debug", "--default", "created (lazy, per-thread), prio 0,");
	logged("XSCHED_LOG=debug XSCHED_PRIORITY=5", "--default", "created (lazy), prio 5,");
	logged("XSCHED_LOG=debug XSCHED_PRIORITY=-3", "--default",
	       "created (lazy, per-thread), prio -3,");
}

TEST(c_api_sets_a_stream_priority)
{
	int (*set)(const void *, int32_t) =
		(int (*)(const void *, int32_t))dlsym(RTLD_DEFAULT, "xsched_stream_set_priority");
	hipStream_t a = mk(0), b = mk(0);
	struct fake_rec h, r;

	ASSERT_TRUE(set != NULL);
	ASSERT_EQ(set(a, 1000), -22);
	ASSERT_EQ(set(a, 10), 0);
	launch(b, 60, 0);
	launch(a, 61, 40 * MS);
	launch(b, 62, 0);
	h = rec_of(61);
	r = rec_of(62);
	ASSERT_GE(r.submit, h.end);
}

/* A priority set as a stream attribute (bound at hip_7.1): the stream's
 * XQueue follows, and the equal stream beside it now waits for it. */
TEST(priority_set_as_attribute_is_followed)
{
	hipStream_t a = mk(0), b = mk(0);
	hipStreamAttrValue v;
	struct fake_rec h, r;

	launch(a, 63, 0);	/* both in the table, equal */
	launch(b, 64, 0);
	memset(&v, 0, sizeof(v));
	v.priority = -1;
	ASSERT_EQ(hipStreamSetAttribute(a, hipStreamAttributePriority, &v), hipSuccess);
	launch(a, 65, 40 * MS);
	launch(b, 66, 0);
	h = rec_of(65);
	r = rec_of(66);
	ASSERT_GE(r.submit, h.end);
}

/* Attributes copied from an urgent stream (bound at hip_7.2) make the copy
 * urgent, as the runtime reports it; a runtime that ignores priorities
 * reports none, and the copy stays as it was (Documentation/hip.rst). */
TEST(priority_copied_with_attributes_is_followed)
{
	hipStream_t hi = mk(-1), a = mk(0), b = mk(0);
	struct fake_rec h, r;

	launch(a, 67, 0);
	launch(b, 68, 0);
	ASSERT_EQ(hipStreamCopyAttributes(a, hi), hipSuccess);
	launch(a, 69, 40 * MS);
	launch(b, 70, 0);
	h = rec_of(69);
	r = rec_of(70);
	if (fake_priority_ignored() == 1)
		ASSERT_TRUE(r.submit < h.end);
	else
		ASSERT_GE(r.submit, h.end);
}

/* ---- a runtime that ignores stream priority ---- */

/* ROCm with DEBUG_HIP_IGNORE_STREAM_PRIORITY on reports 0 for every stream:
 * the priority is the program's request all the same (clamped to -1..1). */
TEST(requested_priority_survives_a_runtime_that_reports_none)
{
	created_prio("FAKE_HIP_PRIORITY_IGNORED=always XSCHED_LOG=debug", -1, 1);
	created_prio("FAKE_HIP_PRIORITY_IGNORED=always XSCHED_LOG=debug", 1, -1);
	created_prio("FAKE_HIP_PRIORITY_IGNORED=always XSCHED_LOG=debug", -7, 1);
	created_prio("FAKE_HIP_PRIORITY_IGNORED=always XSCHED_LOG=debug XSCHED_PRIORITY=5", -1, 6);
}

/* Run test @name in a child under @env; its exit status. */
static int run_test_under(const char *env, const char *name)
{
	char out[1 << 16];

	return run_self(env, name, out, sizeof(out));
}

/* On such a runtime an urgent stream still goes first, and a priority set
 * as an attribute is still taken. */
TEST(urgent_stream_goes_first_on_a_runtime_that_ignores_priority)
{
	ASSERT_EQ(run_test_under("FAKE_HIP_PRIORITY_IGNORED=always",
				 "lower_stream_waits_while_higher_has_work"), 0);
	ASSERT_EQ(run_test_under("FAKE_HIP_PRIORITY_IGNORED=always",
				 "priority_set_as_attribute_is_followed"), 0);
}

/* A ROCm whose flag is on by default (FAKE_HIP_PRIORITY_IGNORED=1) reads
 * DEBUG_HIP_IGNORE_STREAM_PRIORITY at initialisation: libxsched sets it to
 * 0 before then, so the runtime keeps its priority classes (separate HSA
 * queue pools); a value the user set is kept, and named in one warning. */
TEST(runtime_is_told_to_keep_priority_classes)
{
	char out[1 << 16];

	/* (this process's own libxsched set the variable: not inherited) */
	run_self("env -u DEBUG_HIP_IGNORE_STREAM_PRIORITY FAKE_HIP_PRIORITY_IGNORED=1", "--ignored",
		 out, sizeof(out));
	if (!strstr(out, "ignored 0"))
		xt_fail(__FILE__, __LINE__, "the runtime still ignores priorities:\n%s", out);
	run_self("FAKE_HIP_PRIORITY_IGNORED=1 DEBUG_HIP_IGNORE_STREAM_PRIORITY=1", "--ignored",
		 out, sizeof(out));
	if (!strstr(out, "ignored 1") ||
	    !strstr(out, "DEBUG_HIP_IGNORE_STREAM_PRIORITY=1 (set by the user, kept)"))
		xt_fail(__FILE__, __LINE__, "the user's setting was not kept and named:\n%s", out);
	run_self("FAKE_HIP_PRIORITY_IGNORED=1 DEBUG_HIP_IGNORE_STREAM_PRIORITY=0", "--ignored",
		 out, sizeof(out));
	if (!strstr(out, "ignored 0") || strstr(out, "set by the user"))
		xt_fail(__FILE__, __LINE__, "DEBUG_HIP_IGNORE_STREAM_PRIORITY=0:\n%s", out);
}

/* ---- loading ---- */

static int count_xsched(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	if (info->dlpi_name && strstr(info->dlpi_name, "libxsched.so"))
		(*(int *)data)++;
	return 0;
}

TEST(preload_and_link_is_one_instance)
{
	const char *linked = getenv("XH_LINKED");
	char out[1 << 16], env[4096];

	ASSERT_TRUE(linked != NULL);
	snprintf(env, sizeof(env), "LD_PRELOAD='%s' %s", getenv("LD_PRELOAD"), linked);
	{
		char cmd[8192];
		FILE *f;
		size_t n;

		snprintf(cmd, sizeof(cmd), "%s --instances 2>&1", env);
		f = popen(cmd, "r");
		ASSERT_TRUE(f != NULL);
		n = fread(out, 1, sizeof(out) - 1, f);
		out[n] = 0;
		ASSERT_EQ(pclose(f), 0);
	}
	if (!strstr(out, "instances 1 set 0\n"))
		xt_fail(__FILE__, __LINE__, "expected one libxsched and one scheduler: %s", out);
}

/* The probe's own report of what reached the runtime (see probe()). */
static const char *probe_report(const char *out)
{
	const char *p = strstr(out, "probe: ");

	return p ? p : "(no probe report)";
}

TEST(no_device_says_so_once_and_changes_nothing)
{
	char out[1 << 16], base[1 << 16], *p;
	size_t l;
	int n = 0;

	/* Without the interposer: what the program does on its own. */
	ASSERT_EQ(run_self("FAKE_HIP_NODEV=1 LD_PRELOAD=", "--probe", base, sizeof(base)), 0);
	ASSERT_TRUE(strstr(base, "probe: ") != NULL);
	ASSERT_TRUE(strstr(base, "no usable HIP device") == NULL);
	/* The probe asks about the null stream on two threads and the
	 * per-thread stream: each is a new question about a default stream. */
	ASSERT_EQ(run_self("FAKE_HIP_NODEV=1", "--probe", out, sizeof(out)), 0);
	for (p = out; (p = strstr(p, "no usable HIP device")); p++)
		n++;
	if (n != 1)
		xt_fail(__FILE__, __LINE__, "expected one 'no usable HIP device' line, got %d in:\n%s",
			n, out);
	l = strcspn(probe_report(base), "\n");
	if (strncmp(probe_report(out), probe_report(base), l))
		xt_fail(__FILE__, __LINE__, "the runtime got other commands under the interposer:\n"
			"without: %.*s\nwith:    %s", (int)l, probe_report(base), probe_report(out));
}

/* libxsched.so built without the HIP headers (no hooks) in front of a HIP
 * program: one line says HIP calls are not scheduled; the program runs. */
TEST(built_without_hooks_says_so_once)
{
	const char *nohip = getenv("XH_NOHIP");
	char cmd[8192], self[1024], out[1 << 16], *p;
	ssize_t l = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int n = 0;

	ASSERT_TRUE(nohip != NULL && l > 0);
	self[l] = 0;
	snprintf(cmd, sizeof(cmd), "XH_PRELOAD= LD_PRELOAD='%s %s' '%s' --create 0 2>&1",
		 strtok(strdup(getenv("LD_PRELOAD")), " "), nohip, self);
	ASSERT_EQ(run_cmd(cmd, out, sizeof(out)), 0);
	for (p = out; (p = strstr(p, "built without the HIP interposer")); p++)
		n++;
	if (n != 1)
		xt_fail(__FILE__, __LINE__, "expected one 'built without the HIP interposer' line, got %d in:\n%s",
			n, out);
	expect_line(out, "libamdhip64.so.5 is in this process");
}

TEST(only_dlsym_and_dlvsym_are_unversioned)
{
	const char *so = getenv("XH_SO");
	char cmd[4096], line[512];
	FILE *f;
	int base = 0;

	ASSERT_TRUE(so != NULL);
	snprintf(cmd, sizeof(cmd), "objdump -T '%s'", so);
	f = popen(cmd, "r");
	ASSERT_TRUE(f != NULL);
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, " Base ") || strstr(line, "*UND*"))
			continue;
		if (!strstr(line, " dlsym\n") && !strstr(line, " dlvsym\n"))
			xt_fail(__FILE__, __LINE__, "unversioned export: %s", line);
		base++;
	}
	pclose(f);
	ASSERT_EQ(base, 2);
}

/* ---- modes run by the tests above ---- */

static void *probe_null(void *p)
{
	dim3 one = { 1, 1, 1 };

	(void)p;
	return (void *)(uintptr_t)(hipLaunchKernel(K(8, 0), one, one, NULL, 0, NULL) != hipSuccess);
}

/* Launches through every path a program's first calls take, then reports
 * on stderr what the runtime received, in its order. */
static int probe(void)
{
	void **mod = __hipRegisterFatBinary("fatbin");
	dim3 one = { 1, 1, 1 }, g, b;
	hipStream_t s = mk(-1), s2;
	struct fake_rec r;
	size_t smem;
	pthread_t t;
	void *tr = (void *)1;
	int i;

	__hipRegisterFunction(mod, &kern[3], (char *)"k", "k", 0, NULL, NULL, NULL, NULL, NULL);
	if (__hipPushCallConfiguration(one, one, 0, s) != hipSuccess ||
	    __hipPopCallConfiguration(&g, &b, &smem, &s2) != hipSuccess ||
	    hipLaunchKernel(K(3, 0), g, b, NULL, smem, s2) != hipSuccess ||
	    hipLaunchKernel(K(4, 0), g, b, NULL, smem, NULL) != hipSuccess ||
	    hipLaunchKernel(K(5, 0), g, b, NULL, smem, NULL) != hipSuccess ||
	    hipLaunchKernel_spt(K(6, 0), g, b, NULL, smem, NULL) != hipSuccess ||
	    pthread_create(&t, NULL, probe_null, NULL) || pthread_join(t, &tr) || tr ||
	    hipStreamSynchronize(s) != hipSuccess)
		return 3;
	fprintf(stderr, "probe: the runtime got");
	for (i = 0; !fake_log_get(i, &r); i++)
		fprintf(stderr, " k%d@%s", r.kernel,
			r.stream == 0 ? "null" : r.stream < 0 ? "per-thread" : "stream");
	fprintf(stderr, "\n");
	return 0;
}

static int instances(void)
{
	int (*set)(const void *, int32_t) =
		(int (*)(const void *, int32_t))dlsym(RTLD_DEFAULT, "xsched_stream_set_priority");
	int n = 0;

	dl_iterate_phdr(count_xsched, &n);
	/* One scheduler: the stream the linked copy knows is the preloaded one's. */
	hipStream_t s = mk(0);

	launch(s, 7, 0);
	printf("instances %d set %d\n", n, set ? set(s, 3) : -1);
	return 0;
}

int main(int argc, char **argv)
{
	const char *want = getenv("XH_PRELOAD");
	const char *have = getenv("LD_PRELOAD");
	const char *mode;

	if (argc > 1 && !strcmp(argv[1], "--probe"))
		return probe();
	if (argc > 1 && !strcmp(argv[1], "--instances"))
		return instances();
	if (argc > 1 && !strcmp(argv[1], "--held-reentry"))
		return held_reentry_body();
	if (argc > 1 && !strcmp(argv[1], "--bursts"))
		return bursts_logged_body(false);
	if (argc > 1 && !strcmp(argv[1], "--stale-event"))
		return bursts_logged_body(true);
	if (argc > 1 && !strcmp(argv[1], "--default")) {
		dim3 one = { 1, 1, 1 };

		return hipLaunchKernel(K(1, 0), one, one, NULL, 0, NULL) != hipSuccess ||
		       hipLaunchKernel(K(2, 0), one, one, NULL, 0, hipStreamPerThread) != hipSuccess ?
		       3 : 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--ignored")) {
		hipStream_t s = mk(-1);

		launch(s, 1, 0);	/* the scheduler is up: its warnings said */
		fprintf(stderr, "ignored %d\n", fake_priority_ignored());
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "--create")) {
		hipStream_t s = mk(atoi(argv[2]));

		return hipStreamDestroy(s) == hipSuccess ? 0 : 3;
	}
	if (want && (!have || strcmp(have, want))) {
		setenv("LD_PRELOAD", want, 1);
		execv("/proc/self/exe", argv);
		perror("execv");
		return 2;
	}
	if (!in_xsched(hipLaunchKernel)) {
		printf("not ok 0 the interposer is not preloaded (set XH_PRELOAD)\n");
		return 1;
	}
	/* FAKE_HIP_PRIORITY_IGNORED=always: the whole suite again against a
	 * runtime that ignores stream priority (make check-hip's second run). */
	mode = getenv("FAKE_HIP_PRIORITY_IGNORED");
	return xt_run(mode && !strcmp(mode, "always") ? "libxsched-hip-prio-ignored" :
		      "libxsched-hip", argc > 1 ? argv[1] : NULL, NULL);
}
