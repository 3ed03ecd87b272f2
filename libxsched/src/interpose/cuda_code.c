// SPDX-License-Identifier: MIT
/*
 * Code in the urgent context: which function runs there in place of the
 * program's (Documentation/cuda.rst, "Lv3: the urgent context").
 *
 * A CUfunction belongs to the context its module was loaded in, and a
 * launch of it on another context's stream fails; a CUkernel (CUDA 12's
 * context-free handle) runs in any context.  So, at the first launch of a
 * function on an urgent stream:
 *  - a CUkernel runs as it is;
 *  - a CUfunction from cuKernelGetFunction runs as its CUkernel;
 *  - a CUfunction of a library's module (cuLibraryGetModule, or found among
 *    the libraries loaded) runs as the library's same-named CUkernel;
 *  - a CUfunction of a module the program loaded from an image or a file
 *    (cuModuleLoadData, ...Ex, ...FatBinary, cuModuleLoad: the image is
 *    copied at load) runs as the same-named function of that image loaded
 *    again in the urgent context, with the attributes the program set
 *    (cuFuncSetAttribute, cuFuncSetCacheConfig) applied, then and later;
 *  - anything else cannot be carried: the caller runs it in its own
 *    context, and the log names it once.
 * Attributes set on a function that runs as a CUkernel are applied to the
 * kernel for the device (cuKernelSetAttribute): they were the program's
 * wish for that kernel anyway.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "interpose.h"
#include "cuda_code.h"
#include "cuda_gather.h"
#include "handle_table.h"

#define XU_ATTRS 8		/* attributes kept per function */
#define XU_CACHE_ATTR (-1)	/* cuFuncSetCacheConfig, kept as an attribute */

#define ulog(...) do { if (xsi_log_on()) xs_debug("cuda: " __VA_ARGS__); } while (0)

static struct {
	CUresult (*ctx_push)(CUcontext);
	CUresult (*ctx_pop)(CUcontext *);
	CUresult (*ctx_get_device)(CUdevice *);
	CUresult (*kernel_get_name)(const char **, CUkernel);
	CUresult (*kernel_set_attribute)(CUfunction_attribute, int, CUkernel, CUdevice);
	CUresult (*func_get_name)(const char **, CUfunction);
	CUresult (*func_get_module)(CUmodule *, CUfunction);
	CUresult (*func_set_attribute)(CUfunction, CUfunction_attribute, int);
	CUresult (*func_set_cache_config)(CUfunction, CUfunc_cache);
	CUresult (*module_load_data)(CUmodule *, const void *);
	CUresult (*module_load)(CUmodule *, const char *);
	CUresult (*module_get_function)(CUfunction *, CUmodule, const char *);
	CUresult (*module_unload)(CUmodule);
	CUresult (*library_get_module)(CUmodule *, CUlibrary);
	CUresult (*library_get_kernel)(CUkernel *, CUlibrary, const char *);
} ur;

static bool lv3;

/* The function and module tables: held across a module's load into the
 * urgent context, which only a launch on an urgent stream waits for. */
static pthread_mutex_t code_lock = PTHREAD_MUTEX_INITIALIZER;

enum fn_state { FN_UNKNOWN, FN_KERNEL, FN_TWIN, FN_NONE };

struct xu_attr {
	int attr;		/* CUfunction_attribute, or XU_CACHE_ATTR */
	int val;
};

struct xu_fn {
	CUfunction f;
	enum fn_state state;
	CUkernel k;		/* FN_KERNEL: what runs anywhere */
	CUmodule mod;		/* FN_TWIN: the program's module */
	char *name;
	CUfunction twin[XU_CODE_DEVS];
	struct xu_attr attrs[XU_ATTRS];
	unsigned int nattrs;
	bool kernel_attrs;	/* FN_KERNEL: its attributes applied to the kernel */
	uint32_t launched;	/* devices whose urgent context launched it */
};

struct xu_mod {
	CUmodule m;
	void *image;		/* a copy of what was loaded, or NULL */
	char *path;		/* cuModuleLoad's file, or NULL */
	CUlibrary lib;		/* a library's module: its kernels run anywhere */
	CUmodule twin[XU_CODE_DEVS];
	bool dead;		/* unloaded: kept while functions name it */
};

static struct xu_table fns, mods;
static CUlibrary libs[256];	/* libraries loaded, for a module's origin */
static unsigned int nlibs;

static void fork_prepare(void)
{
	pthread_mutex_lock(&code_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&code_lock);
}

/* The child cannot use its parent's contexts: it starts afresh (what the
 * tables held is left, not freed: it names the parent's objects). */
static void fork_child(void)
{
	pthread_mutex_init(&code_lock, NULL);
	memset(&fns, 0, sizeof(fns));
	memset(&mods, 0, sizeof(mods));
	nlibs = 0;
}

#define REAL(field, sym) (ur.field = (__typeof__(ur.field))xsi_real_dlsym(h, sym))

bool xu_code_init(void *h)
{
	REAL(ctx_push, "cuCtxPushCurrent_v2");
	REAL(ctx_pop, "cuCtxPopCurrent_v2");
	REAL(ctx_get_device, "cuCtxGetDevice");
	REAL(kernel_get_name, "cuKernelGetName");
	REAL(kernel_set_attribute, "cuKernelSetAttribute");
	REAL(func_get_name, "cuFuncGetName");
	REAL(func_get_module, "cuFuncGetModule");
	REAL(func_set_attribute, "cuFuncSetAttribute");
	REAL(func_set_cache_config, "cuFuncSetCacheConfig");
	REAL(module_load_data, "cuModuleLoadData");
	REAL(module_load, "cuModuleLoad");
	REAL(module_get_function, "cuModuleGetFunction");
	REAL(module_unload, "cuModuleUnload");
	REAL(library_get_module, "cuLibraryGetModule");
	REAL(library_get_kernel, "cuLibraryGetKernel");
	if (!ur.ctx_push || !ur.ctx_pop || !ur.kernel_get_name || !ur.func_get_name ||
	    !ur.func_get_module || !ur.module_get_function || !ur.module_load_data ||
	    !ur.module_unload)
		return false;
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	lv3 = true;
	return true;
}

/* The size of a module image: an ELF cubin, a fatbin, or text (PTX). */
static size_t image_size(const void *image)
{
	const unsigned char *p = image;

	if (p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F' && p[4] == 2) {
		const uint8_t *e = image;
		uint64_t shoff, phoff, end;
		uint16_t shentsize, shnum, phentsize, phnum;

		memcpy(&phoff, e + 0x20, 8);
		memcpy(&shoff, e + 0x28, 8);
		memcpy(&phentsize, e + 0x36, 2);
		memcpy(&phnum, e + 0x38, 2);
		memcpy(&shentsize, e + 0x3a, 2);
		memcpy(&shnum, e + 0x3c, 2);
		end = shoff + (uint64_t)shentsize * shnum;
		if (phoff + (uint64_t)phentsize * phnum > end)
			end = phoff + (uint64_t)phentsize * phnum;
		return end > (1ULL << 31) ? 0 : (size_t)end;
	}
	if (p[0] == 0x50 && p[1] == 0xed && p[2] == 0x55 && p[3] == 0xba) {
		/* fatbin: magic, version, header size (16), then the size of
		 * what follows the header */
		uint16_t hsize;
		uint64_t fsize;

		memcpy(&hsize, p + 6, 2);
		memcpy(&fsize, p + 8, 8);
		return fsize > (1ULL << 31) ? 0 : hsize + (size_t)fsize;
	}
	return strlen(image) + 1;
}

/* A module file's contents, NUL-terminated (a PTX file is text). */
static void *file_image(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && n < (1L << 31) &&
	    fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n) {
			buf[n] = 0;
		} else {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}

void xu_module_loaded(CUmodule m, const void *image, const char *path)
{
	struct xu_mod *md, *old;
	size_t n;

	if (!lv3 || !m)
		return;
	md = calloc(1, sizeof(*md));
	if (!md)
		return;
	md->m = m;
	if (image) {
		n = image_size(image);
		md->image = n ? malloc(n) : NULL;
		if (md->image)
			memcpy(md->image, image, n);
	} else if (path) {
		/* The file may change or go: what was loaded is kept. */
		md->image = file_image(path);
		md->path = md->image ? NULL : strdup(path);
	}
	pthread_mutex_lock(&code_lock);
	old = xu_tget(&mods, m);	/* a handle the driver handed out again */
	if (old && xu_tput(&mods, m, md)) {
		free(old->image);
		free(old->path);
		free(old);
	} else if (!old && !xu_tput(&mods, m, md)) {
		free(md->image);
		free(md->path);
		free(md);
	}
	pthread_mutex_unlock(&code_lock);
}

void xu_module_unloaded(CUmodule m)
{
	struct xu_mod *md;
	unsigned int i;

	if (!lv3)
		return;
	pthread_mutex_lock(&code_lock);
	md = xu_tdel(&mods, m);
	if (md) {
		for (i = 0; i < XU_CODE_DEVS; i++)
			if (md->twin[i])
				ur.module_unload(md->twin[i]);
		free(md->image);
		free(md->path);
		free(md);
	}
	/* Its functions die with it; the driver may hand out their addresses
	 * again for the next module. */
	for (i = 0; i < XU_TABLE_SLOTS; i++) {
		struct xu_fn *fn = xu_tat(&fns, i);

		if (fn && fn->mod == m && fn->state != FN_KERNEL) {
			xu_tdel_at(&fns, i);
			free(fn->name);
			free(fn);
		}
	}
	pthread_mutex_unlock(&code_lock);
}

void xu_library_loaded(CUlibrary lib)
{
	if (!lv3 || !lib)
		return;
	pthread_mutex_lock(&code_lock);
	if (nlibs < sizeof(libs) / sizeof(libs[0]))
		libs[nlibs++] = lib;
	pthread_mutex_unlock(&code_lock);
}

void xu_library_unloaded(CUlibrary lib)
{
	unsigned int i;

	if (!lv3)
		return;
	pthread_mutex_lock(&code_lock);
	for (i = 0; i < nlibs; i++) {
		if (libs[i] == lib) {
			libs[i] = libs[--nlibs];
			break;
		}
	}
	pthread_mutex_unlock(&code_lock);
}

void xu_module_of_library(CUmodule m, CUlibrary lib)
{
	struct xu_mod *md;

	if (!lv3 || !m)
		return;
	pthread_mutex_lock(&code_lock);
	md = xu_tget(&mods, m);
	if (!md) {
		md = calloc(1, sizeof(*md));
		if (md && !xu_tput(&mods, m, md)) {
			free(md);
			md = NULL;
		}
		if (md)
			md->m = m;
	}
	if (md)
		md->lib = lib;
	pthread_mutex_unlock(&code_lock);
}

/* code_lock held */
static struct xu_fn *fn_get(CUfunction f)
{
	struct xu_fn *fn = xu_tget(&fns, f);

	if (fn)
		return fn;
	fn = calloc(1, sizeof(*fn));
	if (fn && !xu_tput(&fns, f, fn)) {
		free(fn);
		return NULL;
	}
	if (fn)
		fn->f = f;
	return fn;
}

void xu_function_of_kernel(CUfunction f, CUkernel k)
{
	struct xu_fn *fn;

	if (!lv3 || !f)
		return;
	pthread_mutex_lock(&code_lock);
	fn = fn_get(f);
	if (fn && fn->state == FN_UNKNOWN) {
		fn->state = FN_KERNEL;
		fn->k = k;
	}
	pthread_mutex_unlock(&code_lock);
}

/* code_lock held: @a on the function @t of the urgent context (or kernel @k on
 * the device). */
static void attr_apply(const struct xu_attr *a, CUfunction t, CUkernel k, int dev)
{
	if (a->attr == XU_CACHE_ATTR) {
		if (t && ur.func_set_cache_config)
			ur.func_set_cache_config(t, (CUfunc_cache)a->val);
	} else if (t && ur.func_set_attribute) {
		ur.func_set_attribute(t, (CUfunction_attribute)a->attr, a->val);
	} else if (k && ur.kernel_set_attribute) {
		ur.kernel_set_attribute((CUfunction_attribute)a->attr, a->val, k, (CUdevice)dev);
	}
}

/* The device a kernel attribute is for: the program's current one. */
static int kernel_dev(void)
{
	CUdevice d = 0;

	return ur.ctx_get_device && ur.ctx_get_device(&d) == CUDA_SUCCESS ? (int)d : 0;
}

void xu_function_attribute(CUfunction f, CUfunction_attribute attr, int v)
{
	struct xu_fn *fn;
	unsigned int i;
	int a = (int)attr;

	if (!lv3 || !f)
		return;
	pthread_mutex_lock(&code_lock);
	fn = fn_get(f);
	if (fn) {
		for (i = 0; i < fn->nattrs && fn->attrs[i].attr != a; i++)
			;
		if (i < XU_ATTRS) {
			fn->attrs[i].attr = a;
			fn->attrs[i].val = v;
			if (i == fn->nattrs)
				fn->nattrs++;
			/* Already carried: the twins, or the kernel, get it as well. */
			for (i = 0; i < XU_CODE_DEVS; i++)
				if (fn->twin[i])
					attr_apply(&fn->attrs[fn->nattrs - 1], fn->twin[i], NULL, (int)i);
			if (fn->state == FN_KERNEL && fn->kernel_attrs)
				attr_apply(&fn->attrs[fn->nattrs - 1], NULL, fn->k, kernel_dev());
		}
	}
	pthread_mutex_unlock(&code_lock);
}

void xu_function_cache_config(CUfunction f, CUfunc_cache c)
{
	xu_function_attribute(f, (CUfunction_attribute)XU_CACHE_ATTR, (int)c);
}

/* code_lock held: where @f comes from, the first time it is launched on an
 * urgent stream. */
static void fn_resolve(struct xu_fn *fn)
{
	const char *name = NULL;
	struct xu_mod *md;
	CUmodule m = NULL, lm;
	unsigned int i;

	if (ur.kernel_get_name((const char **)&name, (CUkernel)fn->f) == CUDA_SUCCESS) {
		fn->state = FN_KERNEL;	/* a CUkernel: it runs in any context */
		fn->k = (CUkernel)fn->f;
		return;
	}
	if (ur.func_get_name(&name, fn->f) != CUDA_SUCCESS || !name ||
	    ur.func_get_module(&m, fn->f) != CUDA_SUCCESS) {
		fn->state = FN_NONE;
		return;
	}
	fn->name = strdup(name);
	fn->mod = m;
	md = xu_tget(&mods, m);
	if (!md) {
		/* A library's module the program never asked for by name. */
		for (i = 0; i < nlibs; i++) {
			if (ur.library_get_module &&
			    ur.library_get_module(&lm, libs[i]) == CUDA_SUCCESS && lm == m) {
				md = calloc(1, sizeof(*md));
				if (md && !xu_tput(&mods, m, md)) {
					free(md);
					md = NULL;
				}
				if (md) {
					md->m = m;
					md->lib = libs[i];
				}
				break;
			}
		}
	}
	if (md && md->lib && ur.library_get_kernel && fn->name &&
	    ur.library_get_kernel(&fn->k, md->lib, fn->name) == CUDA_SUCCESS) {
		fn->state = FN_KERNEL;
		return;
	}
	fn->state = md && !md->dead && (md->image || md->path) && fn->name ? FN_TWIN : FN_NONE;
}

/* code_lock held: @fn's function in @dev's urgent context. */
static CUfunction fn_twin(struct xu_fn *fn, CUcontext uctx, int dev)
{
	struct xu_mod *md = xu_tget(&mods, fn->mod);
	CUcontext old;
	CUresult r = CUDA_ERROR_NOT_FOUND;
	unsigned int i;

	if (fn->twin[dev])
		return fn->twin[dev];
	if (!md || md->dead || ur.ctx_push(uctx) != CUDA_SUCCESS)
		return NULL;
	xg_pause();	/* loading waits for the context's work: none gathered */
	if (!md->twin[dev])
		r = md->image ? ur.module_load_data(&md->twin[dev], md->image) :
		    md->path && ur.module_load ? ur.module_load(&md->twin[dev], md->path) : r;
	xg_resume();
	if (md->twin[dev])
		r = ur.module_get_function(&fn->twin[dev], md->twin[dev], fn->name);
	if (r == CUDA_SUCCESS)
		for (i = 0; i < fn->nattrs; i++)
			attr_apply(&fn->attrs[i], fn->twin[dev], NULL, dev);
	ur.ctx_pop(&old);
	return r == CUDA_SUCCESS ? fn->twin[dev] : NULL;
}

bool xu_code_translate(CUcontext uctx, int dev, CUfunction *f, bool *first_use)
{
	struct xu_fn *fn;
	CUfunction to = NULL;
	const char *why = NULL;
	bool first = false;
	unsigned int i;

	pthread_mutex_lock(&code_lock);
	fn = fn_get(*f);
	if (fn && fn->state == FN_UNKNOWN) {
		fn_resolve(fn);
		first = true;
	}
	if (fn && fn->state == FN_KERNEL && !fn->kernel_attrs) {
		/* attributes the program set on the function, before */
		for (i = 0; i < fn->nattrs; i++)
			attr_apply(&fn->attrs[i], NULL, fn->k, dev);
		fn->kernel_attrs = true;
	}
	if (!fn) {
		why = "too many functions to follow";
	} else if (fn->state == FN_KERNEL) {
		to = (CUfunction)fn->k;
	} else if (fn->state == FN_TWIN) {
		to = fn_twin(fn, uctx, dev);
		if (!to) {
			fn->state = FN_NONE;
			first = true;
			why = "its module does not load in the urgent context";
		}
	} else if (first) {
		why = "not a CUkernel, and its module's image is not known";
	}
	if (fn && fn->state == FN_NONE && first)
		xs_info("cuda: function %s (%p) cannot run in the urgent context (%s): it runs in its own context, in stream order",
			fn->name ? fn->name : "?", (void *)*f, why ? why : "unknown origin");
	else if (first && xsi_log_on())
		ulog("function %s (%p): runs in the urgent context as %p",
			fn->name ? fn->name : "(kernel)", (void *)*f, (void *)to);
	/* Its first launch in that context loads it (lazily). */
	*first_use = fn && !(fn->launched & (1u << dev));
	if (fn && to)
		fn->launched |= 1u << dev;
	pthread_mutex_unlock(&code_lock);
	if (!to)
		return false;
	*f = to;
	return true;
}

