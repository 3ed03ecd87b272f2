// SPDX-License-Identifier: MIT
/* Helpers of the CUDA interposer's host tests: see cuda_helpers.h. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fake_libcuda.h"
#include "harness.h"
#include "cuda_helpers.h"

/* The urgent context on, every burst gathered (the mode "auto" picks
 * among: tested on its own below). */
void lv3(const char *v)
{
	setenv("XSCHED_CUDA_LV3", v, 1);
	setenv("XSCHED_CUDA_LV3_MODE", "gather", 1);
}

CUstream mk(int prio)
{
	CUstream h = NULL;

	ASSERT_EQ(cuStreamCreateWithPriority(&h, CU_STREAM_NON_BLOCKING, prio), CUDA_SUCCESS);
	return h;
}

static struct fake_kernel kern[256];

/* A test kernel: a CUfunction of the primary context that no module the
 * program loaded holds (it cannot be carried to another context). */
CUfunction K(int id, uint64_t ns)
{
	kern[id].id = id;
	kern[id].ns = ns;
	return (CUfunction)&kern[id];
}

void go(CUfunction f, CUstream h)
{
	ASSERT_EQ(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, h, NULL, NULL), CUDA_SUCCESS);
}

void launch(CUstream h, int id, uint64_t ns)
{
	ASSERT_EQ(cuLaunchKernel(K(id, ns), 1, 1, 1, 32, 1, 1, 0, h, NULL, NULL), CUDA_SUCCESS);
}

int in_xsched(const void *p)
{
	Dl_info di;

	return dladdr(p, &di) && di.dli_fname && strstr(di.dli_fname, "libxsched-cuda");
}

/* A library of "fakecubin k<id>=<ns> ..." and one of its kernels. */
CUlibrary lib_load(const char *image)
{
	CUlibrary l = NULL;

	ASSERT_EQ(cuLibraryLoadData(&l, image, NULL, NULL, 0, NULL, NULL, 0), CUDA_SUCCESS);
	return l;
}

CUfunction kernel_of(CUlibrary l, const char *name)
{
	CUkernel k = NULL;

	ASSERT_EQ(cuLibraryGetKernel(&k, l, name), CUDA_SUCCESS);
	return (CUfunction)k;
}

/* A CUkernel named k<id> of @ns, in a library of its own. */
CUfunction CK(int id, uint64_t ns)
{
	char image[64], name[16];

	snprintf(image, sizeof(image), "fakecubin k%d=%llu", id, (unsigned long long)ns);
	snprintf(name, sizeof(name), "k%d", id);
	return kernel_of(lib_load(image), name);
}

CUmodule mod_load(const char *image)
{
	CUmodule m = NULL;

	ASSERT_EQ(cuModuleLoadData(&m, image), CUDA_SUCCESS);
	return m;
}

CUfunction func_of(CUmodule m, const char *name)
{
	CUfunction f = NULL;

	ASSERT_EQ(cuModuleGetFunction(&f, m, name), CUDA_SUCCESS);
	return f;
}

int most_in_flight(CUstream h, int from)
{
	struct fake_rec r, o;
	int i, j, n, most = 0;

	for (i = 0; i < fake_log_count(); i++) {
		fake_log_get(i, &r);
		if (r.kernel < from || r.stream != fake_stream_id(h))
			continue;
		for (j = 0, n = 1; j < i; j++) {
			fake_log_get(j, &o);
			if (o.kernel >= from && o.stream == r.stream && o.end > r.submit)
				n++;
		}
		if (n > most)
			most = n;
	}
	return most;
}

/* The log record of the last command of kernel @id. */
struct fake_rec rec_of(int id)
{
	struct fake_rec r, found;
	int i, n = fake_log_count(), hit = 0;

	memset(&found, 0, sizeof(found));
	for (i = 0; i < n; i++) {
		fake_log_get(i, &r);
		if (r.kernel == id) {
			found = r;
			hit = 1;
		}
	}
	if (!hit)
		xt_fail(__FILE__, __LINE__, "kernel %d never reached the driver", id);
	return found;
}

/* Records of kind @kernel (FAKE_COPY, ...) from log index @from on, on
 * memory @mem (NULL: any): how many, and how many ran in context @ctx. */
int count_at(int from, int kernel, void *mem, int ctx, int *in_ctx)
{
	struct fake_rec r;
	int i, n = 0;

	*in_ctx = 0;
	for (i = from; i < fake_log_count(); i++) {
		fake_log_get(i, &r);
		if (r.kernel != kernel || (mem && r.mem != mem))
			continue;
		n++;
		*in_ctx += r.ctx == ctx;
	}
	return n;
}

int count_kind(int from, int kernel, int ctx, int *in_ctx)
{
	return count_at(from, kernel, NULL, ctx, in_ctx);
}

/* How many commands ran in a context other than the primary. */
int off_primary(void)
{
	struct fake_rec r;
	int i, n = 0;

	for (i = 0; i < fake_log_count(); i++) {
		fake_log_get(i, &r);
		n += r.ctx != 0;
	}
	return n;
}

/* A watchdog too slow to rescue a test: a gate the library should have
 * opened shows as a call that takes seconds. */
void slow_watchdog(void)
{
	setenv("XSCHED_CUDA_GATHER_MAX_MS", "20000", 1);
}

