// SPDX-License-Identifier: MIT
/* Description: the fake libcuda's code: modules, libraries, functions and kernels, loaded lazily. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fake_libcuda_internal.h"

/* ---- modules, libraries, functions and kernels ---- */

/* What cuFuncGetModule answers for a K() kernel: the module the runtime
 * loaded it from, which the program never saw. */
static struct fmodule rt_module;
static struct fmodule *all_modules;
static struct fmodule *free_modules;	/* unloaded program modules, last first */
static struct flib *all_libs;
static struct flib *free_libs;		/* unloaded libraries, last first */
static int nmodules, nlibs;

/* A K() kernel's attributes and name (by its address). */
#define MAX_TESTFN 512
static struct {
	const void *f;
	int attr[NATTR];
	char name[32];
} testfn[MAX_TESTFN];

static void attr_init(int *a)
{
	memset(a, 0, sizeof(int) * NATTR);
	a[CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK] = 1024;
	a[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES] = FAKE_SMEM_DEFAULT;
}

/* mu held: a K() kernel's entry (made on first use; NULL: table full). */
int *testfn_attr(const void *f, const char **name)
{
	int i;

	for (i = 0; i < MAX_TESTFN && testfn[i].f && testfn[i].f != f; i++)
		;
	if (i == MAX_TESTFN)
		return NULL;
	if (!testfn[i].f) {
		testfn[i].f = f;
		attr_init(testfn[i].attr);
		snprintf(testfn[i].name, sizeof(testfn[i].name), "fake_kernel_%d",
			 ((const struct fake_kernel *)f)->id);
	}
	if (name)
		*name = testfn[i].name;
	return testfn[i].attr;
}

/* mu held: what a CUfunction (or CUkernel cast) handle is. */
struct ffunc *as_func(const void *p)
{
	struct fmodule *m;

	for (m = all_modules; m && p; m = m->next)
		if ((const char *)p >= (const char *)m->fn &&
		    (const char *)p < (const char *)(m->fn + m->n))
			return (struct ffunc *)p;
	return NULL;
}

struct fkern *as_kern(const void *p)
{
	struct flib *l;

	for (l = all_libs; l && p; l = l->next)
		if ((const char *)p >= (const char *)l->k &&
		    (const char *)p < (const char *)(l->k + l->n))
			return (struct fkern *)p;
	return NULL;
}

/* "fakecubin <name>=<ns> ...": the names and run times; -1: not an image. */
static int parse_image(const void *image, char (*names)[32], uint64_t *ns)
{
	const char *p = image;
	int n = 0;

	if (!p || strncmp(p, "fakecubin", 9) || (p[9] && p[9] != ' '))
		return -1;
	p += 9;
	for (;;) {
		const char *eq;
		size_t len;
		char *end;

		while (*p == ' ')
			p++;
		if (!*p)
			return n;
		eq = strchr(p, '=');
		if (!eq || eq == p || n == MAX_FN)
			return -1;
		len = (size_t)(eq - p);
		if (len >= 32 || memchr(p, ' ', len))
			return -1;
		memcpy(names[n], p, len);
		names[n][len] = 0;
		ns[n] = strtoull(eq + 1, &end, 10);
		if (end == eq + 1 || (*end && *end != ' '))
			return -1;
		n++;
		p = end;
	}
}

/* mu held: a module of @n functions in context @c. */
static struct fmodule *module_add(struct fctx *c, char (*names)[32], const uint64_t *ns, int n,
				  int reuse)
{
	struct fmodule *m = reuse ? free_modules : NULL, *next = NULL;
	int i;

	if (m) {		/* the handle and its functions' addresses come back */
		free_modules = m->next_free;
		next = m->next;
		memset(m, 0, sizeof(*m));
	} else {
		m = calloc(1, sizeof(*m));
		if (!m)
			return NULL;
		next = all_modules;
		all_modules = m;
	}
	m->next = next;
	m->id = ++nmodules;
	m->ctx = c;
	m->n = n;
	for (i = 0; i < n; i++) {
		m->fn[i].mod = m;
		memcpy(m->fn[i].name, names[i], sizeof(m->fn[i].name));
		m->fn[i].ns = ns[i];
		attr_init(m->fn[i].attr);
	}
	return m;
}

/* Into the current context. */
static CUresult module_load(CUmodule *pm, const void *image)
{
	char names[MAX_FN][32];
	uint64_t ns[MAX_FN];
	struct fmodule *m;
	struct fctx *c;
	int n;

	if (!pm || !image)
		return CUDA_ERROR_INVALID_VALUE;
	n = parse_image(image, names, ns);
	if (n < 0)
		return CUDA_ERROR_INVALID_IMAGE;
	pthread_mutex_lock(&mu);
	c = cur_ctx();
	pthread_mutex_unlock(&mu);
	if (c)
		ctx_wait(c->id);	/* a load waits for the context's work */
	pthread_mutex_lock(&mu);
	m = c ? module_add(c, names, ns, n, 1) : NULL;
	pthread_mutex_unlock(&mu);
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*pm = (CUmodule)m;
	return CUDA_SUCCESS;
}

API CUresult cuModuleLoadData(CUmodule *pm, const void *image)
{
	return module_load(pm, image);
}

API CUresult cuModuleLoadDataEx(CUmodule *pm, const void *image, unsigned int n,
				CUjit_option *opts, void **vals)
{
	(void)n;
	(void)opts;
	(void)vals;
	return module_load(pm, image);
}

API CUresult cuModuleLoadFatBinary(CUmodule *pm, const void *image)
{
	return module_load(pm, image);
}

/* A file that holds an image (its text). */
API CUresult cuModuleLoad(CUmodule *pm, const char *fname)
{
	char buf[4096];
	size_t n;
	FILE *f;

	if (!pm || !fname)
		return CUDA_ERROR_INVALID_VALUE;
	f = fopen(fname, "r");
	if (!f)
		return CUDA_ERROR_FILE_NOT_FOUND;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return module_load(pm, buf);
}

/* mu held: a live module of ours (the runtime's one included). */
static struct fmodule *as_module(CUmodule h)
{
	struct fmodule *m;

	if ((struct fmodule *)h == &rt_module)
		return &rt_module;
	for (m = all_modules; m; m = m->next)
		if ((CUmodule)m == h)
			return m->unloaded || (m->ctx && m->ctx->destroyed) ? NULL : m;
	return NULL;
}

/* mu held: function @f loaded in its module's context now (lazy loading);
 * the context whose work the load must wait for, or -1: loaded before. */
static int fn_load(struct ffunc *f)
{
	int c = f->mod->ctx ? f->mod->ctx->id : -1;

	if (f->loaded || c < 0)
		return -1;
	f->loaded = 1;
	if (f->kern) {		/* a library's kernel, in this context */
		if (c < 64 && (f->kern->loaded & (1ULL << c)))
			return -1;
		if (c < 64)
			f->kern->loaded |= 1ULL << c;
	}
	return c;
}

/* Lazy loading: the function is loaded here (not at cuModuleLoadData), which
 * waits for its context's work, once. */
API CUresult cuModuleGetFunction(CUfunction *pf, CUmodule h, const char *name)
{
	struct fmodule *m;
	int i, wait = -1;

	if (!pf || !name)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mu);
	m = as_module(h);
	if (!m) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	for (i = 0; i < m->n && strcmp(m->fn[i].name, name); i++)
		;
	if (i < m->n && m != &rt_module)
		wait = fn_load(&m->fn[i]);
	pthread_mutex_unlock(&mu);
	if (i == m->n)
		return CUDA_ERROR_NOT_FOUND;
	if (wait >= 0)
		ctx_wait(wait);
	*pf = (CUfunction)&m->fn[i];
	return CUDA_SUCCESS;
}

API CUresult cuModuleUnload(CUmodule h)
{
	struct fmodule *m;

	pthread_mutex_lock(&mu);
	m = as_module(h);
	if (m && m != &rt_module && !m->lib) {
		m->unloaded = 1;
		m->next_free = free_modules;
		free_modules = m;
	}
	pthread_mutex_unlock(&mu);
	return m && m != &rt_module && !m->lib ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

API CUresult cuLibraryLoadData(CUlibrary *pl, const void *code, CUjit_option *jo, void **jv,
			       unsigned int jn, CUlibraryOption *lo, void **lv, unsigned int ln)
{
	char names[MAX_FN][32];
	uint64_t ns[MAX_FN];
	struct flib *l;
	int n, i;

	(void)jo;
	(void)jv;
	(void)jn;
	(void)lo;
	(void)lv;
	(void)ln;
	if (!pl || !code)
		return CUDA_ERROR_INVALID_VALUE;
	n = parse_image(code, names, ns);
	if (n < 0)
		return CUDA_ERROR_INVALID_IMAGE;
	fake_log_wait();	/* measured: it waits for every context's work */
	pthread_mutex_lock(&mu);
	l = free_libs;
	if (l) {		/* the handle and its kernels' addresses come back */
		struct flib *next = l->next;

		free_libs = l->next_free;
		memset(l, 0, sizeof(*l));
		l->next = next;
	}
	pthread_mutex_unlock(&mu);
	if (!l) {
		l = calloc(1, sizeof(*l));
		if (!l)
			return CUDA_ERROR_OUT_OF_MEMORY;
		pthread_mutex_lock(&mu);
		l->next = all_libs;
		all_libs = l;
		pthread_mutex_unlock(&mu);
	}
	l->n = n;
	for (i = 0; i < n; i++) {
		l->k[i].lib = l;
		memcpy(l->k[i].name, names[i], sizeof(l->k[i].name));
		l->k[i].ns = ns[i];
		attr_init(l->k[i].attr);
	}
	pthread_mutex_lock(&mu);
	l->id = ++nlibs;
	pthread_mutex_unlock(&mu);
	*pl = (CUlibrary)l;
	return CUDA_SUCCESS;
}

/* mu held */
static struct flib *as_lib(CUlibrary h)
{
	struct flib *l;

	for (l = all_libs; l; l = l->next)
		if ((CUlibrary)l == h)
			return l->unloaded ? NULL : l;
	return NULL;
}

API CUresult cuLibraryUnload(CUlibrary h)
{
	struct flib *l;
	int i;

	pthread_mutex_lock(&mu);
	l = as_lib(h);
	if (l) {
		l->unloaded = 1;
		l->next_free = free_libs;
		free_libs = l;
		/* (the primary's last: it is handed out again first) */
		for (i = MAX_CTX; i >= 0; i--) {
			if (l->mod[i]) {
				l->mod[i]->unloaded = 1;
				l->mod[i]->next_free = free_modules;
				free_modules = l->mod[i];
			}
		}
	}
	pthread_mutex_unlock(&mu);
	return l ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

API CUresult cuLibraryGetKernel(CUkernel *pk, CUlibrary h, const char *name)
{
	struct flib *l;
	int i;

	if (!pk || !name)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mu);
	l = as_lib(h);
	for (i = 0; l && i < l->n && strcmp(l->k[i].name, name); i++)
		;
	pthread_mutex_unlock(&mu);
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	if (i == l->n)
		return CUDA_ERROR_NOT_FOUND;
	*pk = (CUkernel)&l->k[i];
	return CUDA_SUCCESS;
}

/* mu held: library @l's module in the current context (made on first use). */
static struct fmodule *lib_module(struct flib *l, CUresult *err)
{
	char names[MAX_FN][32];
	uint64_t ns[MAX_FN];
	struct fctx *c = cur_ctx();
	struct fmodule *m;
	int i;

	if (!c) {
		*err = CUDA_ERROR_INVALID_CONTEXT;
		return NULL;
	}
	if (l->mod[c->id])
		return l->mod[c->id];
	for (i = 0; i < l->n; i++) {
		memcpy(names[i], l->k[i].name, sizeof(names[i]));
		ns[i] = l->k[i].ns;
	}
	m = module_add(c, names, ns, l->n, 0);
	if (!m) {
		*err = CUDA_ERROR_OUT_OF_MEMORY;
		return NULL;
	}
	m->lib = l;
	for (i = 0; i < l->n; i++)
		m->fn[i].kern = &l->k[i];
	l->mod[c->id] = m;
	return m;
}

API CUresult cuLibraryGetModule(CUmodule *pm, CUlibrary h)
{
	CUresult err = CUDA_ERROR_INVALID_HANDLE;
	struct fmodule *m = NULL;
	struct flib *l;

	pthread_mutex_lock(&mu);
	l = as_lib(h);
	if (l)
		m = lib_module(l, &err);
	pthread_mutex_unlock(&mu);
	if (!m)
		return err;
	*pm = (CUmodule)m;
	return CUDA_SUCCESS;
}

/* A CUfunction of the current context: the kernel is loaded there (once,
 * waiting for the context's work). */
API CUresult cuKernelGetFunction(CUfunction *pf, CUkernel h)
{
	CUresult err = CUDA_ERROR_INVALID_HANDLE;
	struct fmodule *m = NULL;
	struct fkern *k;
	int wait = -1;

	pthread_mutex_lock(&mu);
	k = as_kern(h);
	if (k && !k->lib->unloaded)
		m = lib_module(k->lib, &err);
	if (m)
		wait = fn_load(&m->fn[k - k->lib->k]);
	pthread_mutex_unlock(&mu);
	if (!m)
		return err;
	if (wait >= 0)
		ctx_wait(wait);
	*pf = (CUfunction)&m->fn[k - k->lib->k];
	return CUDA_SUCCESS;
}

API CUresult cuKernelGetName(const char **name, CUkernel h)
{
	struct fkern *k;

	pthread_mutex_lock(&mu);
	k = as_kern(h);
	pthread_mutex_unlock(&mu);
	if (!k || !name)
		return CUDA_ERROR_INVALID_HANDLE;
	*name = k->name;
	return CUDA_SUCCESS;
}

API CUresult cuKernelGetLibrary(CUlibrary *pl, CUkernel h)
{
	struct fkern *k;

	pthread_mutex_lock(&mu);
	k = as_kern(h);
	pthread_mutex_unlock(&mu);
	if (!k || !pl)
		return CUDA_ERROR_INVALID_HANDLE;
	*pl = (CUlibrary)k->lib;
	return CUDA_SUCCESS;
}

API CUresult cuFuncGetName(const char **name, CUfunction h)
{
	struct ffunc *f;
	const char *n = NULL;

	if (!h || !name)
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&mu);
	f = as_func(h);
	if (f)
		n = f->name;
	else if (!as_kern(h))
		(void)testfn_attr(h, &n);
	pthread_mutex_unlock(&mu);
	if (!n)
		return CUDA_ERROR_INVALID_HANDLE;
	*name = n;
	return CUDA_SUCCESS;
}

API CUresult cuFuncGetModule(CUmodule *pm, CUfunction h)
{
	struct ffunc *f;
	int kern;

	if (!h || !pm)
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&mu);
	f = as_func(h);
	kern = as_kern(h) != NULL;
	pthread_mutex_unlock(&mu);
	if (kern)
		return CUDA_ERROR_INVALID_HANDLE;
	*pm = f ? (CUmodule)f->mod : (CUmodule)&rt_module;
	return CUDA_SUCCESS;
}

/* mu held: the attribute array of a function or kernel handle. */
static int *attrs_of(const void *h)
{
	struct ffunc *f = as_func(h);
	struct fkern *k = f ? NULL : as_kern(h);

	return f ? f->attr : k ? k->attr : testfn_attr(h, NULL);
}

static CUresult set_attr(int *a, CUfunction_attribute attr, int v)
{
	if (!a || (int)attr < 0 || attr >= NATTR)
		return CUDA_ERROR_INVALID_VALUE;
	if (attr == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES && (v < 0 || v > FAKE_SMEM_MAX))
		return CUDA_ERROR_INVALID_VALUE;
	a[attr] = v;
	return CUDA_SUCCESS;
}

/* On a CUkernel cast: the kernel's (as cuKernelSetAttribute). */
API CUresult cuFuncSetAttribute(CUfunction h, CUfunction_attribute attr, int v)
{
	CUresult r;

	if (!h)
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&mu);
	r = set_attr(attrs_of(h), attr, v);
	pthread_mutex_unlock(&mu);
	return r;
}

API CUresult cuFuncGetAttribute(int *v, CUfunction_attribute attr, CUfunction h)
{
	int *a;

	if (!h)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!v || (int)attr < 0 || attr >= NATTR)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mu);
	a = attrs_of(h);
	if (a)
		*v = a[attr];
	pthread_mutex_unlock(&mu);
	return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Kept per function (CU_FUNC_CACHE_PREFER_*); what it changes is not modelled. */
API CUresult cuFuncSetCacheConfig(CUfunction h, CUfunc_cache c)
{
	int *a;

	if (!h)
		return CUDA_ERROR_INVALID_HANDLE;
	if ((int)c < 0 || c > CU_FUNC_CACHE_PREFER_EQUAL)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mu);
	a = attrs_of(h);
	pthread_mutex_unlock(&mu);
	return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

API CUresult cuKernelSetAttribute(CUfunction_attribute attr, int v, CUkernel h, CUdevice dev)
{
	struct fkern *k;
	CUresult r;

	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&mu);
	k = as_kern(h);
	r = k ? set_attr(k->attr, attr, v) : CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_unlock(&mu);
	return r;
}

API CUresult cuKernelGetAttribute(int *v, CUfunction_attribute attr, CUkernel h, CUdevice dev)
{
	struct fkern *k;

	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	if (!v || (int)attr < 0 || attr >= NATTR)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mu);
	k = as_kern(h);
	if (k)
		*v = k->attr[attr];
	pthread_mutex_unlock(&mu);
	return k ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

API int fake_module_count(int ctx)
{
	struct fmodule *m;
	int n = 0;

	pthread_mutex_lock(&mu);
	for (m = all_modules; m; m = m->next)
		n += m->ctx && m->ctx->id == ctx && !m->unloaded;
	pthread_mutex_unlock(&mu);
	return n;
}

/* fake_rec.kernel of a named function: k<digits> its number. */
int named_id(const char *name)
{
	const char *p = name + 1;

	if (name[0] != 'k' || !*p)
		return FAKE_NAMED;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return FAKE_NAMED;
	return atoi(name + 1);
}
