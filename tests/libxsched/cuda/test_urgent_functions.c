// SPDX-License-Identifier: MIT
/* Description: the urgent context's functions: each runs as its twin, or in place if it cannot be carried. */
/*
 * Host tests of the urgent context (XSCHED_CUDA_LV3, issue 24) against the
 * fake libcuda (fake_libcuda.h: contexts, modules, libraries, events and
 * graphs as the real driver has them across contexts): the work of a
 * stream above the lowest priority runs on a twin stream in a context the
 * library owns, the program's handles unchanged.  Linked into test_cuda
 * (its main runs these too); each test runs in its own forked process and
 * sets XSCHED_CUDA_LV3 before its first CUDA call.
 *
 * The fake's priority range is [0 least, -5 greatest]: -1..-5 are urgent.
 * The urgent context is the first context the process creates: id 1 in
 * fake_rec.ctx; the primary is 0.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fake_libcuda.h"
#include "harness.h"
#include "cuda_helpers.h"

CUresult cuLaunchKernel_ptsz(CUfunction, unsigned int, unsigned int, unsigned int,
			     unsigned int, unsigned int, unsigned int, unsigned int,
			     CUstream, void **, void **);
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *, CUfunction, void **, void **);
CUresult cuLaunchCooperativeKernel_ptsz(CUfunction, unsigned int, unsigned int, unsigned int,
					unsigned int, unsigned int, unsigned int, unsigned int,
					CUstream, void **);

/* ---- functions ---- */

TEST(module_function_runs_as_its_twin_with_its_attribute)
{
	CUstream hi, lo;
	CUmodule m;
	CUfunction f;
	struct fake_rec r;

	lv3("1");
	hi = mk(-1);
	lo = mk(0);
	m = mod_load("fakecubin k42=2000000 other=5");
	f = func_of(m, "k42");
	ASSERT_EQ(cuFuncSetAttribute(f, SMEM_ATTR, 100000), CUDA_SUCCESS);
	ASSERT_EQ(cuLaunchKernel(f, 2, 1, 1, 64, 1, 1, 80000, hi, NULL, NULL), CUDA_SUCCESS);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);	/* it ran */
	r = rec_of(42);
	ASSERT_URGENT(r, hi);
	ASSERT_EQ(r.fn, FAKE_FN_MODULE);
	ASSERT_TRUE(!strcmp(r.name, "k42"));
	ASSERT_EQ(r.smem, 80000);
	ASSERT_EQ(r.end - r.start, 2 * MS);	/* the same function's run time */
	ASSERT_EQ(fake_module_count(URGENT), 1);	/* loaded again there, once */
	ASSERT_EQ(cuLaunchKernel(f, 2, 1, 1, 64, 1, 1, 80000, hi, NULL, NULL), CUDA_SUCCESS);
	ASSERT_EQ(fake_module_count(URGENT), 1);
	ASSERT_EQ(cuLaunchKernel(f, 2, 1, 1, 64, 1, 1, 80000, lo, NULL, NULL), CUDA_SUCCESS);
	ASSERT_IN_PLACE(rec_of(42), lo);
}

TEST(module_of_every_loader_is_carried)
{
	static const char img_ex[] = "fakecubin k43=0", img_fat[] = "fakecubin k44=0";
	CUstream hi;
	CUmodule a = NULL, b = NULL;
	CUfunction fa, fb, fc;

	lv3("1");
	hi = mk(-1);
	ASSERT_EQ(cuModuleLoadDataEx(&a, img_ex, 0, NULL, NULL), CUDA_SUCCESS);
	ASSERT_EQ(cuModuleLoadFatBinary(&b, img_fat), CUDA_SUCCESS);
	fa = func_of(a, "k43");
	fb = func_of(b, "k44");
	fc = func_of(mod_load("fakecubin k45=0"), "k45");
	go(fa, hi);
	go(fb, hi);
	go(fc, hi);
	ASSERT_URGENT(rec_of(43), hi);
	ASSERT_URGENT(rec_of(44), hi);
	ASSERT_URGENT(rec_of(45), hi);
}

TEST(module_loaded_after_the_urgent_context_exists_is_carried)
{
	CUstream hi;
	CUfunction f;

	lv3("1");
	hi = mk(-1);
	go(CK(46, 0), hi);
	ASSERT_EQ(fake_ctx_count(), 1);
	f = func_of(mod_load("fakecubin k47=0"), "k47");
	go(f, hi);
	ASSERT_URGENT(rec_of(47), hi);
}

TEST(attribute_set_after_the_first_urgent_launch_reaches_the_twin)
{
	CUstream hi;
	CUfunction f;

	lv3("1");
	hi = mk(-1);
	f = func_of(mod_load("fakecubin k48=0"), "k48");
	go(f, hi);		/* the twin function exists from here */
	ASSERT_URGENT(rec_of(48), hi);
	ASSERT_EQ(cuFuncSetAttribute(f, SMEM_ATTR, 120000), CUDA_SUCCESS);
	ASSERT_EQ(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 100000, hi, NULL, NULL), CUDA_SUCCESS);
	ASSERT_URGENT(rec_of(48), hi);
	ASSERT_EQ(rec_of(48).smem, 100000);
}

TEST(cukernel_runs_as_is_in_the_urgent_context)
{
	CUstream hi;
	CUfunction ck;
	struct fake_rec r;

	lv3("1");
	hi = mk(-1);
	ck = CK(49, MS);
	ASSERT_EQ(cuKernelSetAttribute(SMEM_ATTR, 100000, (CUkernel)ck, 0), CUDA_SUCCESS);
	ASSERT_EQ(cuLaunchKernel(ck, 1, 1, 1, 32, 1, 1, 70000, hi, NULL, NULL), CUDA_SUCCESS);
	r = rec_of(49);
	ASSERT_URGENT(r, hi);
	ASSERT_EQ(r.fn, FAKE_FN_KERNEL);
	ASSERT_EQ(r.smem, 70000);
}

TEST(function_of_a_cukernel_runs_as_its_kernel)
{
	CUstream hi;
	CUfunction ck, f = NULL;
	struct fake_rec r;

	lv3("1");
	hi = mk(-1);
	ck = CK(50, MS);
	ASSERT_EQ(cuKernelGetFunction(&f, (CUkernel)ck), CUDA_SUCCESS);	/* the primary's */
	go(f, hi);
	r = rec_of(50);
	ASSERT_URGENT(r, hi);
	ASSERT_EQ(r.fn, FAKE_FN_KERNEL);
}

TEST(every_launch_kind_runs_in_the_urgent_context)
{
	CUlaunchConfig cfg;
	CUstream hi;
	int i;

	lv3("1");
	hi = mk(-1);
	memset(&cfg, 0, sizeof(cfg));
	cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
	cfg.blockDimX = 32;
	cfg.blockDimY = cfg.blockDimZ = 1;
	cfg.hStream = hi;
	ASSERT_EQ(cuLaunchKernel(CK(51, 0), 1, 1, 1, 32, 1, 1, 0, hi, NULL, NULL), CUDA_SUCCESS);
	ASSERT_EQ(cuLaunchKernel_ptsz(CK(52, 0), 1, 1, 1, 32, 1, 1, 0, hi, NULL, NULL),
		  CUDA_SUCCESS);
	ASSERT_EQ(cuLaunchKernelEx(&cfg, CK(53, 0), NULL, NULL), CUDA_SUCCESS);
	ASSERT_EQ(cuLaunchKernelEx_ptsz(&cfg, CK(54, 0), NULL, NULL), CUDA_SUCCESS);
	ASSERT_EQ(cuLaunchCooperativeKernel(CK(55, 0), 1, 1, 1, 32, 1, 1, 0, hi, NULL),
		  CUDA_SUCCESS);
	ASSERT_EQ(cuLaunchCooperativeKernel_ptsz(CK(56, 0), 1, 1, 1, 32, 1, 1, 0, hi, NULL),
		  CUDA_SUCCESS);
	for (i = 51; i <= 56; i++)
		ASSERT_URGENT(rec_of(i), hi);
}

TEST(ex_launch_config_is_unchanged_for_the_caller)
{
	CUlaunchAttribute at[1];
	CUlaunchConfig cfg;
	CUstream hi;
	void *params[1] = { (void *)7 };
	struct fake_rec r;

	lv3("1");
	hi = mk(-1);
	memset(&cfg, 0, sizeof(cfg));
	memset(at, 0, sizeof(at));
	at[0].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
	at[0].value.cooperative = 1;
	cfg.gridDimX = 3;
	cfg.gridDimY = 2;
	cfg.gridDimZ = 1;
	cfg.blockDimX = 128;
	cfg.blockDimY = cfg.blockDimZ = 1;
	cfg.sharedMemBytes = 1024;
	cfg.hStream = hi;
	cfg.attrs = at;
	cfg.numAttrs = 1;
	ASSERT_EQ(cuLaunchKernelEx(&cfg, CK(57, 0), params, NULL), CUDA_SUCCESS);
	ASSERT_TRUE(cfg.hStream == hi);
	ASSERT_TRUE(cfg.attrs == at);
	ASSERT_EQ(cfg.numAttrs, 1);
	ASSERT_EQ(at[0].id, CU_LAUNCH_ATTRIBUTE_COOPERATIVE);
	ASSERT_EQ(at[0].value.cooperative, 1);
	ASSERT_EQ(cfg.gridDimX, 3);
	ASSERT_EQ(cfg.sharedMemBytes, 1024);
	r = rec_of(57);
	ASSERT_URGENT(r, hi);
	ASSERT_EQ(r.grid[0], 3);
	ASSERT_EQ(r.grid[1], 2);
	ASSERT_EQ(r.block[0], 128);
	ASSERT_EQ(r.smem, 1024);
	ASSERT_TRUE(r.params == params);
	/* The driver got the caller's attributes. */
	ASSERT_EQ(r.nattrs, 1);
	ASSERT_EQ(r.attrs[0].id, CU_LAUNCH_ATTRIBUTE_COOPERATIVE);
	ASSERT_EQ(r.attrs[0].value.cooperative, 1);
}

TEST(uncarried_function_runs_on_the_programs_stream_after_earlier_urgent_work)
{
	CUstream hi;
	struct fake_rec a, b;

	lv3("1");
	hi = mk(-1);
	go(CK(58, 20 * MS), hi);
	go(K(59, MS), hi);		/* no module known: cannot be carried */
	a = rec_of(58);
	b = rec_of(59);
	ASSERT_URGENT(a, hi);
	ASSERT_IN_PLACE(b, hi);
	ASSERT_GE(b.start, a.end);
}

TEST(urgent_work_after_an_uncarried_launch_waits_for_it)
{
	CUfunction c;
	CUstream hi;
	struct fake_rec a, b;

	lv3("1");
	hi = mk(-1);
	/*
	 * The twin exists and k62 is loaded in the urgent context: a load
	 * there at the second launch would itself wait for K(61), and hide
	 * a missing join of the two sides.
	 */
	c = CK(62, MS);
	go(c, hi);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	go(K(61, 20 * MS), hi);	/* on the program's stream */
	go(c, hi);		/* stream order: after K(61) */
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	a = rec_of(61);
	b = rec_of(62);
	ASSERT_IN_PLACE(a, hi);
	ASSERT_URGENT(b, hi);
	ASSERT_GE(b.start, a.end);
}

TEST(uncarried_function_is_named_once_in_the_log)
{
	FILE *f = err_capture();
	CUstream hi;
	char addr[32];
	const char *e;

	lv3("1");
	setenv("XSCHED_LOG", "debug", 1);
	hi = mk(-1);
	go(CK(63, 0), hi);
	go(K(64, 0), hi);
	go(K(64, 0), hi);
	go(K(64, 0), hi);
	ASSERT_EQ(cuStreamSynchronize(hi), CUDA_SUCCESS);
	snprintf(addr, sizeof(addr), "%p", (void *)K(64, 0));
	e = err_read(f);
	if (lines_with(e, "urgent context", "fake_kernel_64", addr) != 1)
		xt_fail(__FILE__, __LINE__, "expected one line naming fake_kernel_64 (%s) with \"urgent context\", got %d; the log:\n%s",
			addr, lines_with(e, "urgent context", "fake_kernel_64", addr), e);
	ASSERT_IN_PLACE(rec_of(64), hi);
	fclose(f);
}
