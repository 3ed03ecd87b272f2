// SPDX-License-Identifier: MIT
/* Description: helpers of the HIP interposer's host tests: see hip_helpers.h. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_libamdhip64.h"
#include "harness.h"
#include "hip_helpers.h"

hipStream_t mk(int hip_prio)
{
	hipStream_t h = NULL;

	ASSERT_EQ(hipStreamCreateWithPriority(&h, hipStreamNonBlocking, hip_prio), hipSuccess);
	return h;
}

struct fake_kernel kern[256];

const void *K(int id, uint64_t ns)
{
	kern[id].id = id;
	kern[id].ns = ns;
	return &kern[id];
}

void launch(hipStream_t h, int id, uint64_t ns)
{
	dim3 one = { 1, 1, 1 };

	ASSERT_EQ(hipLaunchKernel(K(id, ns), one, one, NULL, 0, h), hipSuccess);
}

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
		xt_fail(__FILE__, __LINE__, "kernel %d never reached the runtime", id);
	return found;
}

/* Is @p in the library whose file name (not its folder: the build folder
 * is named libxsched too) starts with @what? */
int in_lib(const void *p, const char *what)
{
	const char *base;
	Dl_info di;

	if (!p || !dladdr(p, &di) || !di.dli_fname)
		return 0;
	base = strrchr(di.dli_fname, '/');
	base = base ? base + 1 : di.dli_fname;
	return !strncmp(base, what, strlen(what));
}

/* Run this program with @env set and "--probe", stderr into @buf. */
int run_self(const char *env, const char *mode, char *buf, size_t len)
{
	char cmd[4096], self[1024];
	ssize_t l = readlink("/proc/self/exe", self, sizeof(self) - 1);
	FILE *f;
	size_t n;

	if (l <= 0)
		return -1;
	self[l] = 0;
	snprintf(cmd, sizeof(cmd), "%s '%s' %s 2>&1 >/dev/null", env, self, mode);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	return pclose(f);
}

void expect_line(const char *out, const char *line)
{
	if (!strstr(out, line))
		xt_fail(__FILE__, __LINE__, "expected '%s' in:\n%s", line, out);
}
