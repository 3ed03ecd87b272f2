// SPDX-License-Identifier: MIT
/*
 * Symbol redirection (interpose.h, "Symbols"): the runtimes registered, the
 * real dlsym()/dlvsym() found by walking libc's own symbol table (no call
 * to dlsym() itself, which the preload library overrides), and what a
 * lookup answers: the hook for an entry point of a registered runtime,
 * NULL where only our definition answers, the real function otherwise.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "core_state.h"

pthread_mutex_t xsi_reg_lock = PTHREAD_MUTEX_INITIALIZER;
struct xsi_runtime *xsi_registered[XSI_RUNTIMES];

void *xsi_dlopen_loaded(const char *const *names, size_t n, const char **which)
{
	size_t i;

	for (i = 0; i < n; i++) {
		void *h = dlopen(names[i], RTLD_LAZY | RTLD_NOLOAD);

		if (h) {
			if (which)
				*which = names[i];
			return h;
		}
	}
	return NULL;
}

typedef void *(*dlsym_fn)(void *, const char *);
typedef void *(*dlvsym_fn)(void *, const char *, const char *);

/* The number of symbols a DT_GNU_HASH table covers. */
XSI_EARLY static uint32_t gnu_hash_nsyms(const uint32_t *h)
{
	uint32_t nbuckets = h[0], symoffset = h[1], bloom = h[2], i, last = 0;
	const uint32_t *buckets = h + 4 + bloom * (sizeof(ElfW(Addr)) / 4);
	const uint32_t *chain = buckets + nbuckets;

	for (i = 0; i < nbuckets; i++)
		if (buckets[i] > last)
			last = buckets[i];
	if (last < symoffset)
		return symoffset;
	while (!(chain[last - symoffset] & 1))
		last++;
	return last + 1;
}

/* strcmp() and a suffix test without libc: a sanitizer intercepts those, and
 * cannot take calls before it is initialised (see libc_function()). */
XSI_EARLY static bool early_eq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

XSI_EARLY static bool early_ends(const char *s, const char *suffix)
{
	const char *a = s, *b = suffix;

	while (*a)
		a++;
	while (*b)
		b++;
	while (b > suffix && a > s && *--a == *--b)
		;
	return b == suffix && *a == *b;
}

/*
 * glibc's own default definition of a function we also define (dlsym,
 * dlvsym), read from libc.so.6's dynamic symbol table: asking the dynamic
 * linker for it by name or by version would find ours (an unversioned
 * definition in a preloaded library answers every versioned reference).
 * The loaded objects are walked through _r_debug, calling nothing: a
 * sanitizer runtime asks for dlsym before it can take calls it intercepts
 * (dl_iterate_phdr, dlopen).
 */
XSI_EARLY static void *libc_function(const char *name)
{
	const struct link_map *m;

	for (m = _r_debug.r_map; m; m = m->l_next) {
		const ElfW(Sym) *sym = NULL;
		const ElfW(Half) *versym = NULL;
		const char *str = NULL;
		const uint32_t *gnu = NULL, *sysv = NULL;
		const ElfW(Dyn) *d;
		uint32_t n, i;

		if (!m->l_name || !early_ends(m->l_name, "/libc.so.6"))
			continue;
		/* The dynamic linker has relocated these to addresses. */
		for (d = m->l_ld; d && d->d_tag != DT_NULL; d++) {
			if (d->d_tag == DT_SYMTAB)
				sym = (const ElfW(Sym) *)d->d_un.d_ptr;
			else if (d->d_tag == DT_STRTAB)
				str = (const char *)d->d_un.d_ptr;
			else if (d->d_tag == DT_VERSYM)
				versym = (const ElfW(Half) *)d->d_un.d_ptr;
			else if (d->d_tag == DT_GNU_HASH)
				gnu = (const uint32_t *)d->d_un.d_ptr;
			else if (d->d_tag == DT_HASH)
				sysv = (const uint32_t *)d->d_un.d_ptr;
		}
		if (!sym || !str || (!gnu && !sysv))
			return NULL;
		n = gnu ? gnu_hash_nsyms(gnu) : sysv[1];
		for (i = 0; i < n; i++) {
			if (!sym[i].st_value || ELF64_ST_TYPE(sym[i].st_info) != STT_FUNC ||
			    !early_eq(str + sym[i].st_name, name))
				continue;
			if (versym && (versym[i] & 0x8000))
				continue;	/* a hidden (compat) version */
			return (void *)(m->l_addr + sym[i].st_value);
		}
		return NULL;
	}
	return NULL;
}

/* libc_function(@name), found once and kept in @slot. */
XSI_EARLY static void *libc_cached(void *_Atomic *slot, const char *name)
{
	void *f = atomic_load(slot);

	if (!f) {
		f = libc_function(name);
		atomic_store(slot, f);
	}
	return f;
}

XSI_EARLY void *xsi_libc_dlsym(void)
{
	static void *_Atomic fn;

	return libc_cached(&fn, "dlsym");
}

XSI_EARLY void *xsi_libc_dlvsym(void)
{
	static void *_Atomic fn;

	return libc_cached(&fn, "dlvsym");
}

XSI_EARLY void *xsi_real_dlsym(void *handle, const char *name)
{
	dlsym_fn f = (dlsym_fn)xsi_libc_dlsym();

	return f ? f(handle, name) : NULL;
}

XSI_EARLY void *xsi_real_dlvsym(void *handle, const char *name, const char *version)
{
	dlvsym_fn f = (dlvsym_fn)xsi_libc_dlvsym();

	return f ? f(handle, name, version) : NULL;
}

const struct xsi_entry *xsi_entry_find(const struct xsi_runtime *rt,
				       const char *name)
{
	size_t i;

	if (!name)
		return NULL;
	for (i = 0; i < rt->nentries; i++)
		if (!strcmp(rt->entries[i].name, name))
			return &rt->entries[i];
	return NULL;
}

void *xsi_redirect(struct xsi_runtime *rt, const char *name, void *real)
{
	const struct xsi_entry *e = xsi_entry_find(rt, name);

	if (!e || !real)
		return real;
	if (real == e->hook) {
		/* The lookup found our own export (a global lookup, where the
		 * preload comes first): the runtime has the function only if
		 * its real one was found.  Else NULL, as without us: a
		 * feature probe must not get a hook that has nothing to call. */
		if (e->real && *e->real)
			return real;
		xsi_log(rt, "%s: not in the runtime: NULL, as without the interposer", name);
		return NULL;
	}
	if (e->real && !*e->real)
		*e->real = real;
	xsi_log(rt, "%s redirected", name);
	return e->hook;
}

void *xsi_dlsym(void *handle, const char *name, void *real)
{
	unsigned int i;

	(void)handle;	/* any handle: frameworks dlopen the runtime themselves */
	if (!real)
		return real;
	for (i = 0; i < XSI_RUNTIMES; i++) {
		struct xsi_runtime *rt = __atomic_load_n(&xsi_registered[i],
							 __ATOMIC_ACQUIRE);

		if (rt && xsi_entry_find(rt, name))
			return xsi_redirect(rt, name, real);
	}
	return real;
}

/* Does the runtime's library export @name_v<N>[_ptsz] that no entry hooks? */
static bool newer_abi(const struct xsi_runtime *rt, const char *name, bool pt)
{
	char buf[128];
	unsigned int v;
	size_t l;

	for (v = 2; v <= 9; v++) {
		snprintf(buf, sizeof(buf), "%s_v%u%s", name, v, pt ? "_ptsz" : "");
		for (l = 0; l < rt->state->nlibs; l++)
			if (xsi_real_dlsym(rt->state->libs[l], buf) && !xsi_entry_find(rt, buf))
				return true;
	}
	return false;
}

static const char *base_of(const struct xsi_entry *e)
{
	return e->base ? e->base : e->name;
}

void *xsi_proc_redirect(struct xsi_runtime *rt, const char *name, void *real,
			int ver, bool per_thread)
{
	const struct xsi_entry *best = NULL;
	bool ours = false;
	size_t i;

	if (!real || !name || !rt->state)
		return real;
	for (i = 0; i < rt->nentries && !ours; i++)
		ours = !strcmp(base_of(&rt->entries[i]), name) ||
		       !strcmp(rt->entries[i].name, name);
	if (!ours) {
		xsi_log(rt, "%s(%s%s): pass-through (harmless)", "GetProcAddress", name,
			per_thread ? ", per-thread" : "");
		return real;
	}
	for (i = 0; i < rt->nentries; i++) {
		const struct xsi_entry *e = &rt->entries[i];

		if ((e->real && *e->real == real) || e->hook == real) {
			xsi_log(rt, "GetProcAddress(%s%s): hook of %s", name,
				per_thread ? ", per-thread" : "", e->name);
			return e->hook;
		}
	}
	/* An address that is no exported symbol: choose by what was asked. */
	for (i = 0; i < rt->nentries; i++) {
		const struct xsi_entry *e = &rt->entries[i];

		if (strcmp(base_of(e), name) || !!(e->flags & XSI_ENTRY_PER_THREAD) != per_thread ||
		    ver < e->since || !e->real)
			continue;
		if (!best || e->since > best->since)
			best = e;
	}
	if (best && !*best->real) {
		/* An ABI the library does not export (an old one kept for old
		 * callers): what the lookup returned is its implementation. */
		*best->real = real;
		xsi_log(rt, "GetProcAddress(%s, %d%s): hook of %s, on the address returned",
			name, ver, per_thread ? ", per-thread" : "", best->name);
		return best->hook;
	}
	if (best && !newer_abi(rt, name, per_thread)) {
		xs_warn("%s: GetProcAddress(%s, %d, %s) returned %p, which is no exported symbol; using the hook of %s (matched by name, version and variant)",
			rt->name, name, ver, per_thread ? "per-thread" : "legacy", real, best->name);
		return best->hook;
	}
	xs_warn("%s: GetProcAddress(%s, %d, %s) returned a variant this library does not know; calls through it are NOT scheduled",
		rt->name, name, ver, per_thread ? "per-thread" : "legacy");
	return real;
}
