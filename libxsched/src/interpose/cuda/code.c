// SPDX-License-Identifier: MIT
/*
 * Code in the urgent context: which function runs there in place of the
 * program's, and when it is loaded there (Documentation/cuda.rst, "Lv3:
 * the urgent context", "Code loads").
 *
 * A CUfunction belongs to the context its module was loaded in, and a
 * launch of it on another context's stream fails; a CUkernel (CUDA 12's
 * context-free handle) runs in any context.  So:
 *  - a CUkernel runs as it is;
 *  - a CUfunction from cuKernelGetFunction runs as its CUkernel;
 *  - a CUfunction of a library's module (cuLibraryGetModule, or found among
 *    the libraries loaded) runs as the library's same-named CUkernel;
 *  - a CUfunction of a module the program loaded from an image or a file
 *    (cuModuleLoadData, ...Ex, ...FatBinary, cuModuleLoad: the image is
 *    copied at load) runs as the same-named function of that image loaded
 *    again in the urgent context (its twin), with the attributes the
 *    program set (cuFuncSetAttribute, cuFuncSetCacheConfig) applied, then
 *    and later;
 *  - anything else cannot be carried: the caller runs it in its own
 *    context, and the log names it once.
 *
 * Loading code waits for the work of the context it loads into (lazy
 * loading: cuModuleGetFunction, cuKernelGetFunction and a CUkernel's first
 * launch in a context load it; on an H100 a consumer kernel loaded at its
 * first launch in the urgent context, behind a producer on another urgent
 * stream that waited for it, hung for ever).  So code is loaded into the
 * urgent context when the program loads it into its own, never later: a
 * module when the program loads it, a function when the program gets it
 * (cuModuleGetFunction, cuKernelGetFunction) or first launches it in its
 * own context; what the program loaded before the urgent context existed,
 * when that context is made (empty: nothing to wait for).  The cost is the
 * code the program loads, twice in device memory.  A launch of code loaded
 * where the library could not see it still loads at its first launch in
 * the urgent context (named in the debug log).
 *
 * Translations live exactly as long as the handles they translate: an
 * unload drops every entry of its code, whatever its kind (the driver
 * hands freed addresses out again: on an H100 a later module's function
 * took a library's freed function's address in 73 of 100 rounds), and a
 * handle handed out again starts clean.
 *
 * Attributes set on a function that runs as a CUkernel are applied to the
 * kernel for the device (cuKernelSetAttribute): they were the program's
 * wish for that kernel anyway.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../internal.h"
#include "../interpose.h"
#include "driver.h"
#include "code.h"
#include "gather.h"
#include "../handle_table.h"

#define XU_ATTRS 8		/* attributes kept per function */
#define XU_CACHE_ATTR (-1)	/* cuFuncSetCacheConfig, kept as an attribute */

static bool lv3;

/* The function and module tables.  Never held across a driver call that
 * may wait for GPU work (a load): another thread's launch must not wait
 * for it. */
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
	CUlibrary lib;		/* FN_KERNEL: its library, NULL: not known */
	CUmodule mod;		/* its module (FN_TWIN, a library's module), or NULL */
	char *name;
	CUfunction twin[XU_CODE_DEVS];
	struct xu_attr attrs[XU_ATTRS];
	unsigned int nattrs;
	bool kernel_attrs;	/* FN_KERNEL: its attributes applied to the kernel */
	uint32_t program;	/* devices whose program context loaded it */
	uint32_t loaded;	/* devices whose urgent context has it loaded */
};

struct xu_mod {
	CUmodule m;
	void *image;		/* a copy of what was loaded, or NULL */
	char *path;		/* cuModuleLoad's file, or NULL */
	CUlibrary lib;		/* a library's module: its kernels run anywhere */
	int dev;		/* the device of the context it was loaded in */
	CUmodule twin[XU_CODE_DEVS];
	int users;		/* loads in progress that read image or path */
	bool dead;		/* unloaded while used: the last user frees it */
};

static struct xsi_htable fns, mods;
static CUlibrary libs[256];	/* libraries loaded, for a module's origin */
static unsigned int nlibs;
static CUcontext uctxs[XU_CODE_DEVS];	/* the urgent contexts made */
/* Bumped by every unload: what was read before it may name freed code. */
static atomic_uint gen;
static atomic_ulong npreloads;	/* functions loaded in an urgent context ahead */

void xu_code_fork_prepare(void)
{
	pthread_mutex_lock(&code_lock);
}

void xu_code_fork_parent(void)
{
	pthread_mutex_unlock(&code_lock);
}

/* The child cannot use its parent's contexts: it starts afresh (what the
 * tables held is left, not freed: it names the parent's objects). */
void xu_code_fork_child(void)
{
	pthread_mutex_init(&code_lock, NULL);
	if (!lv3)
		return;
	memset(&fns, 0, sizeof(fns));
	memset(&mods, 0, sizeof(mods));
	memset(uctxs, 0, sizeof(uctxs));
	nlibs = 0;
}

static void tell_preloads(void)
{
	unsigned long n = atomic_load(&npreloads);

	if (n)
		xs_info("cuda: %lu functions were loaded in the urgent context when the program loaded them",
			n);
}

bool xu_code_init(void)
{
	if (!xc_drv.ctx_push || !xc_drv.ctx_pop || !xc_drv.ctx_get_device || !xc_drv.kernel_get_name ||
	    !xc_drv.kernel_get_function || !xc_drv.func_get_name || !xc_drv.func_get_module ||
	    !xc_drv.module_get_function || !xc_drv.module_load_data || !xc_drv.module_unload)
		return false;
	atexit(tell_preloads);
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

/* The device of the current context (the program's), or -1. */
static int cur_dev(void)
{
	CUdevice d = 0;

	if (xc_drv.ctx_get_device(&d) != CUDA_SUCCESS || d < 0 || d >= XU_CODE_DEVS)
		return -1;
	return (int)d;
}

static void fn_free(struct xu_fn *fn)
{
	free(fn->name);
	free(fn);
}

static void mod_free(struct xu_mod *md)
{
	free(md->image);
	free(md->path);
	free(md);
}

/* code_lock held: a new entry for module @m, of library @lib (NULL: the
 * program's); NULL: table full. */
static struct xu_mod *mod_add(CUmodule m, CUlibrary lib)
{
	struct xu_mod *md = calloc(1, sizeof(*md));

	if (md && !xsi_ht_put(&mods, m, md)) {
		free(md);
		return NULL;
	}
	if (md) {
		md->m = m;
		md->lib = lib;
		md->dev = -1;
	}
	return md;
}

/* code_lock held: @md, out of the table, freed once no load reads it. */
static void mod_drop(struct xu_mod *md)
{
	if (md->users)
		md->dead = true;
	else
		mod_free(md);
}

/* code_lock held: @f's entry, made (FN_UNKNOWN) if new; NULL: table full. */
static struct xu_fn *fn_get(CUfunction f)
{
	struct xu_fn *fn = xsi_ht_get(&fns, f);

	if (fn)
		return fn;
	fn = calloc(1, sizeof(*fn));
	if (fn && !xsi_ht_put(&fns, f, fn)) {
		free(fn);
		return NULL;
	}
	if (fn)
		fn->f = f;
	return fn;
}

/* code_lock held: @f was just handed out by the driver: an entry that names
 * other code (of @k, or of module @m) is dropped, and a new one made. */
static struct xu_fn *fn_fresh(CUfunction f, CUkernel k, CUmodule m)
{
	struct xu_fn *fn = xsi_ht_get(&fns, f);

	if (fn && fn->state != FN_UNKNOWN &&
	    (k ? fn->state != FN_KERNEL || fn->k != k : fn->mod != m)) {
		xsi_ht_del(&fns, f);
		fn_free(fn);
		atomic_fetch_add(&gen, 1);
	}
	return fn_get(f);
}

/* code_lock held: where @fn comes from, the first time it is needed. */
static void fn_resolve(struct xu_fn *fn)
{
	const char *name = NULL;
	struct xu_mod *md;
	CUmodule m = NULL, lm;
	unsigned int i;

	if (xc_drv.kernel_get_name((const char **)&name, (CUkernel)fn->f) == CUDA_SUCCESS) {
		fn->state = FN_KERNEL;	/* a CUkernel: it runs in any context */
		fn->k = (CUkernel)fn->f;
		if (!fn->lib && xc_drv.kernel_get_library)
			(void)xc_drv.kernel_get_library(&fn->lib, fn->k);
		return;
	}
	if (xc_drv.func_get_name(&name, fn->f) != CUDA_SUCCESS || !name ||
	    xc_drv.func_get_module(&m, fn->f) != CUDA_SUCCESS) {
		fn->state = FN_NONE;
		return;
	}
	fn->name = strdup(name);
	fn->mod = m;
	md = xsi_ht_get(&mods, m);
	if (!md) {
		/* A library's module the program never asked for by name. */
		for (i = 0; i < nlibs; i++) {
			if (xc_drv.library_get_module &&
			    xc_drv.library_get_module(&lm, libs[i]) == CUDA_SUCCESS && lm == m) {
				md = mod_add(m, libs[i]);
				break;
			}
		}
	}
	if (md && md->lib && xc_drv.library_get_kernel && fn->name &&
	    xc_drv.library_get_kernel(&fn->k, md->lib, fn->name) == CUDA_SUCCESS) {
		fn->state = FN_KERNEL;
		fn->lib = md->lib;
		return;
	}
	fn->state = md && (md->image || md->path) && fn->name ? FN_TWIN : FN_NONE;
}

/* code_lock held: @fn's entry, resolved. */
static struct xu_fn *fn_known(CUfunction f, bool *first)
{
	struct xu_fn *fn = fn_get(f);

	if (fn && fn->state == FN_UNKNOWN) {
		fn_resolve(fn);
		if (first)
			*first = true;
	}
	return fn;
}

/* code_lock held: @a on the function @t of the urgent context (or kernel @k on
 * the device). */
static void attr_apply(const struct xu_attr *a, CUfunction t, CUkernel k, int dev)
{
	if (a->attr == XU_CACHE_ATTR) {
		if (t && xc_drv.func_set_cache_config)
			xc_drv.func_set_cache_config(t, (CUfunc_cache)a->val);
	} else if (t && xc_drv.func_set_attribute) {
		xc_drv.func_set_attribute(t, (CUfunction_attribute)a->attr, a->val);
	} else if (k && xc_drv.kernel_set_attribute) {
		xc_drv.kernel_set_attribute((CUfunction_attribute)a->attr, a->val, k, (CUdevice)dev);
	}
}

/* ---- loading into the urgent context ------------------------------------- */

/* Module @m loaded again in @dev's urgent context (at most once): its twin,
 * or NULL.  Waits for that context's work (gates opened): called where the
 * program's own load waited for its context's. */
static CUmodule mod_twin(CUmodule m, int dev)
{
	struct xu_mod *md;
	CUcontext uctx, old;
	CUmodule tm = NULL, made = NULL;
	CUresult r = CUDA_ERROR_NOT_SUPPORTED;
	void *image;
	char *path;

	pthread_mutex_lock(&code_lock);
	md = xsi_ht_get(&mods, m);
	uctx = uctxs[dev];
	if (!md || !uctx || (!md->image && !md->path) || md->twin[dev]) {
		tm = md ? md->twin[dev] : NULL;
		pthread_mutex_unlock(&code_lock);
		return tm;
	}
	md->users++;		/* md, its image and path live until it drops */
	image = md->image;
	path = md->path;
	pthread_mutex_unlock(&code_lock);
	if (xc_drv.ctx_push(uctx) == CUDA_SUCCESS) {
		xg_pause();
		if (image)
			r = xc_drv.module_load_data(&made, image);
		else if (xc_drv.module_load)
			r = xc_drv.module_load(&made, path);
		xg_resume();
		xc_drv.ctx_pop(&old);
	}
	if (r != CUDA_SUCCESS)
		made = NULL;
	pthread_mutex_lock(&code_lock);
	md->users--;
	if (made && !md->dead && !md->twin[dev]) {
		md->twin[dev] = made;
		made = NULL;
	}
	tm = md->dead ? NULL : md->twin[dev];
	if (md->dead && !md->users)
		mod_free(md);
	pthread_mutex_unlock(&code_lock);
	if (made)		/* another thread's came first, or m was unloaded */
		xc_drv.module_unload(made);
	return tm;
}

/* code_lock held: @fn (and the entry of its kernel) now loaded in @dev's
 * urgent context. */
static void fn_mark_loaded(struct xu_fn *fn, int dev)
{
	struct xu_fn *kf;

	fn->loaded |= 1u << dev;
	if (fn->state == FN_KERNEL && fn->k != (CUkernel)fn->f) {
		kf = xsi_ht_get(&fns, (CUfunction)fn->k);
		if (kf && kf->state == FN_KERNEL && kf->k == fn->k)
			kf->loaded |= 1u << dev;
	}
}

/* Load @f into @dev's urgent context now, unless it is there: a CUkernel
 * by cuKernelGetFunction there, a module's function by getting it from its
 * module's twin (made first if need be).  Waits for the urgent context's
 * work (gates opened), without the table's lock.  true: it is there. */
static bool fn_load(CUfunction f, int dev)
{
	struct xu_fn *fn;
	CUcontext uctx, old;
	CUkernel k = NULL;
	CUmodule m = NULL, tm = NULL;
	CUfunction got = NULL;
	CUresult r = CUDA_ERROR_NOT_FOUND;
	char *name = NULL;
	unsigned int g;
	bool there;

	pthread_mutex_lock(&code_lock);
	g = atomic_load(&gen);
	fn = xsi_ht_get(&fns, f);
	uctx = uctxs[dev];
	there = fn && (fn->loaded & (1u << dev));
	if (!there && fn && uctx && fn->state == FN_KERNEL) {
		k = fn->k;
	} else if (!there && fn && uctx && fn->state == FN_TWIN) {
		m = fn->mod;
		name = strdup(fn->name);
	}
	pthread_mutex_unlock(&code_lock);
	if (there || (!k && !name))
		return there;
	if (m)
		tm = mod_twin(m, dev);
	if ((k || tm) && xc_drv.ctx_push(uctx) == CUDA_SUCCESS) {
		xg_pause();	/* a load waits for the context's work: none gathered */
		r = k ? xc_drv.kernel_get_function(&got, k) : xc_drv.module_get_function(&got, tm, name);
		xg_resume();
		xc_drv.ctx_pop(&old);
	}
	free(name);
	pthread_mutex_lock(&code_lock);
	fn = xsi_ht_get(&fns, f);
	/* (an unload meanwhile: what was loaded may name freed code) */
	there = r == CUDA_SUCCESS && fn && atomic_load(&gen) == g;
	if (there) {
		if (fn->state == FN_TWIN) {
			unsigned int i;

			fn->twin[dev] = got;
			for (i = 0; i < fn->nattrs; i++)
				attr_apply(&fn->attrs[i], got, NULL, dev);
		}
		fn_mark_loaded(fn, dev);
		atomic_fetch_add(&npreloads, 1);
	}
	pthread_mutex_unlock(&code_lock);
	return there;
}

/* @f is loaded in the program's context of @dev now: in the urgent
 * context too. */
static void program_loaded(CUfunction f, int dev)
{
	struct xu_fn *fn;
	bool load;

	pthread_mutex_lock(&code_lock);
	fn = fn_known(f, NULL);
	if (fn)
		fn->program |= 1u << dev;
	load = fn && uctxs[dev] && (fn->state == FN_KERNEL || fn->state == FN_TWIN);
	pthread_mutex_unlock(&code_lock);
	if (load)
		(void)fn_load(f, dev);
}

/* ---- what the program loads, gets and unloads -------------------------- */

void xu_module_loaded(CUmodule m, const void *image, const char *path)
{
	struct xu_mod *md;
	size_t n;
	int dev;

	if (!lv3 || !m)
		return;
	md = calloc(1, sizeof(*md));
	if (!md)
		return;
	md->m = m;
	md->dev = dev = cur_dev();
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
	/* A handle the driver handed out again: its unload dropped the old
	 * entry, unless the unload went unseen. */
	if (xsi_ht_get(&mods, m) || !xsi_ht_put(&mods, m, md)) {
		pthread_mutex_unlock(&code_lock);
		mod_free(md);
		return;
	}
	pthread_mutex_unlock(&code_lock);
	if (dev >= 0)
		(void)mod_twin(m, dev);	/* where the program's load waited too */
}

/* code_lock held: drop every entry of module @m or library @lib. */
static void drop_code(CUmodule m, CUlibrary lib)
{
	unsigned int i;

	for (i = 0; i < XSI_HT_SLOTS; i++) {
		struct xu_fn *fn = xsi_ht_at(&fns, i);
		struct xu_mod *md;

		if (!fn)
			continue;
		md = fn->mod ? xsi_ht_get(&mods, fn->mod) : NULL;
		if ((m && fn->mod == m) ||
		    (lib && (fn->lib == lib || (fn->state == FN_KERNEL && !fn->lib) ||
			     (md && md->lib == lib)))) {
			xsi_ht_del_at(&fns, i);
			fn_free(fn);
		}
	}
	atomic_fetch_add(&gen, 1);
}

void xu_module_unloaded(CUmodule m)
{
	CUmodule twins[XU_CODE_DEVS];
	struct xu_mod *md;
	unsigned int i;

	if (!lv3)
		return;
	pthread_mutex_lock(&code_lock);
	drop_code(m, NULL);
	md = xsi_ht_del(&mods, m);
	if (md) {
		memcpy(twins, md->twin, sizeof(twins));
		mod_drop(md);
	}
	pthread_mutex_unlock(&code_lock);
	for (i = 0; md && i < XU_CODE_DEVS; i++)
		if (twins[i])
			xc_drv.module_unload(twins[i]);
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
	drop_code(NULL, lib);
	/* its modules (they have no twins: their kernels run anywhere) */
	for (i = 0; i < XSI_HT_SLOTS; i++) {
		struct xu_mod *md = xsi_ht_at(&mods, i);

		if (md && md->lib == lib) {
			xsi_ht_del_at(&mods, i);
			mod_drop(md);
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
	md = xsi_ht_get(&mods, m);
	if (md && md->lib != lib) {	/* a handle handed out again */
		drop_code(m, NULL);
		xsi_ht_del(&mods, m);
		mod_drop(md);
		md = NULL;
	}
	if (!md)
		md = mod_add(m, lib);
	pthread_mutex_unlock(&code_lock);
}

void xu_kernel_of_library(CUkernel k, CUlibrary lib)
{
	struct xu_fn *fn;

	if (!lv3 || !k)
		return;
	pthread_mutex_lock(&code_lock);
	fn = fn_fresh((CUfunction)k, k, NULL);
	if (fn) {
		fn->state = FN_KERNEL;
		fn->k = k;
		fn->lib = lib;
	}
	pthread_mutex_unlock(&code_lock);
}

void xu_function_of_kernel(CUfunction f, CUkernel k)
{
	struct xu_fn *fn, *kf;
	int dev;

	if (!lv3 || !f)
		return;
	dev = cur_dev();
	pthread_mutex_lock(&code_lock);
	kf = fn_known((CUfunction)k, NULL);
	fn = fn_fresh(f, k, NULL);
	if (fn && fn->state == FN_UNKNOWN) {
		fn->state = FN_KERNEL;
		fn->k = k;
		fn->lib = kf && kf->state == FN_KERNEL ? kf->lib : NULL;
	}
	pthread_mutex_unlock(&code_lock);
	/* cuKernelGetFunction loaded the kernel in the program's context */
	if (dev >= 0)
		program_loaded(f, dev);
}

void xu_function_of_module(CUfunction f, CUmodule m)
{
	struct xu_fn *fn;
	int dev;

	if (!lv3 || !f)
		return;
	dev = cur_dev();
	pthread_mutex_lock(&code_lock);
	fn = fn_fresh(f, NULL, m);
	if (fn && fn->state == FN_UNKNOWN)
		fn_resolve(fn);
	pthread_mutex_unlock(&code_lock);
	/* cuModuleGetFunction loaded it (lazy loading) */
	if (dev >= 0)
		program_loaded(f, dev);
}

void xu_code_launched(CUfunction f, int dev)
{
	/* Seen by this thread since the last unload: already followed.  (A
	 * launch's fast path: no lock.) */
	static __thread struct {
		CUfunction f;
		unsigned int gen;
		int dev;
	} seen[256];
	unsigned int g, i;

	if (!lv3 || !f)
		return;
	g = atomic_load_explicit(&gen, memory_order_relaxed);
	i = (unsigned int)((uintptr_t)f >> 4) & 255;
	if (seen[i].f == f && seen[i].gen == g && seen[i].dev == dev)
		return;
	seen[i].f = f;
	seen[i].gen = g;
	seen[i].dev = dev;
	if (dev < 0)
		dev = cur_dev();
	if (dev >= 0)
		program_loaded(f, dev);
}

void xu_code_context_made(int dev, CUcontext uctx)
{
	void **keys;
	unsigned int i, n = 0, nm = 0;

	if (!lv3 || dev < 0 || dev >= XU_CODE_DEVS)
		return;
	keys = malloc(sizeof(*keys) * XSI_HT_SLOTS * 2);
	pthread_mutex_lock(&code_lock);
	uctxs[dev] = uctx;
	for (i = 0; keys && i < XSI_HT_SLOTS; i++) {
		struct xu_mod *md = xsi_ht_at(&mods, i);
		struct xu_fn *fn = xsi_ht_at(&fns, i);

		if (md && md->dev == dev && (md->image || md->path))
			keys[nm++] = md->m;
		if (fn && (fn->program & (1u << dev)))
			keys[XSI_HT_SLOTS + n++] = fn->f;
	}
	pthread_mutex_unlock(&code_lock);
	if (!keys) {
		xs_warn("cuda: no memory to load the program's code in the urgent context; it loads at its first launch there");
		return;
	}
	/* What the program loaded so far (the context is empty: no wait). */
	for (i = 0; i < nm; i++)
		(void)mod_twin(keys[i], dev);
	for (i = 0; i < n; i++)
		(void)fn_load(keys[XSI_HT_SLOTS + i], dev);
	free(keys);
	if (n + nm)
		xc_log("device %d: %u modules and %u functions the program loaded, loaded in the urgent context",
		     dev, nm, n);
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
				attr_apply(&fn->attrs[fn->nattrs - 1], NULL, fn->k, cur_dev());
		}
	}
	pthread_mutex_unlock(&code_lock);
}

void xu_function_cache_config(CUfunction f, CUfunc_cache c)
{
	xu_function_attribute(f, (CUfunction_attribute)XU_CACHE_ATTR, (int)c);
}

bool xu_code_translate(int dev, CUfunction *f, bool *first_use)
{
	struct xu_fn *fn;
	CUfunction to = NULL;
	const char *why = NULL;
	bool first = false, twin = false;
	unsigned int i;

	pthread_mutex_lock(&code_lock);
	fn = fn_known(*f, &first);
	twin = fn && fn->state == FN_TWIN && !fn->twin[dev];
	pthread_mutex_unlock(&code_lock);
	/* A module's function the program got where the library did not see
	 * it: its twin is loaded now (waiting for the urgent context's work). */
	if (twin && !fn_load(*f, dev))
		xc_log("function %p: its module does not load in the urgent context", (void *)*f);
	pthread_mutex_lock(&code_lock);
	fn = xsi_ht_get(&fns, *f);
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
		to = fn->twin[dev];
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
		xc_log("function %s (%p): runs in the urgent context as %p",
			fn->name ? fn->name : "(kernel)", (void *)*f, (void *)to);
	/* Not loaded there yet: its first launch loads it (lazily). */
	*first_use = fn && to && !(fn->loaded & (1u << dev));
	if (*first_use && xsi_log_on())
		xc_log("function %p: loaded in the urgent context at its first launch there (the program loaded it where the library did not see)",
		     (void *)*f);
	if (fn && to)
		fn_mark_loaded(fn, dev);
	pthread_mutex_unlock(&code_lock);
	if (!to)
		return false;
	*f = to;
	return true;
}
