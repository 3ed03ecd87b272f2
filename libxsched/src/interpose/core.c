// SPDX-License-Identifier: MIT
/*
 * The interposition core: see interpose.h.
 *
 * Stream table: open addressing over XSI_SLOTS atomic pointers.  Lookups
 * probe without a lock; inserts and removals take state->lock.  A removed
 * stream's slot becomes a tombstone and the stream object is retired, not
 * freed, until xsi_runtime_fini(): a lookup probing past it never touches
 * freed memory.  Keys: (kind, handle, device, thread): the legacy default
 * stream is one per device, the per-thread default stream one per (thread,
 * device).
 *
 * Per-thread default streams pass through unscheduled unless the runtime is
 * caller-held: their calls cannot run on another thread (the Lv1 worker),
 * and a completion mark for them cannot be recorded from another thread
 * either.  A caller-held runtime's calls run on the caller's thread, and
 * its per-thread streams are marked by their owner only (XS_CALLS_OWNER_MARKS),
 * after a call while a lower stream is held by them; they are forgotten
 * when their thread exits, without waiting for their work.
 *
 * Caller-held dispatch takes no lock across the runtime call (see
 * xsi_hold_begin() in interpose.h); the table lock is never held across a
 * runtime call either (forget() and reap() drop it).
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include "../internal.h"
#include "interpose.h"

#define XSI_SLOTS 4096		/* power of two */
#define XSI_EVENTS 4096		/* power of two */
#define XSI_RUNTIMES 4
#define XSI_DEVS 64		/* devices the caller-held gate tracks */
#define XSI_PT_MINE 8		/* per-thread streams one thread forgets at exit */
#define XSI_HOLD_MAX_NS (10ULL * 1000000000ULL)

enum { KIND_APP, KIND_LEGACY, KIND_PER_THREAD };

static bool caller_held(const struct xsi_runtime *rt)
{
	return rt->flags & XSI_RT_CALLER_HELD;
}

struct xsi_stream {
	struct xsi_runtime *rt;
	int kind;
	uintptr_t handle;	/* the key: the runtime's handle; 0 for the legacy stream */
	uintptr_t rt_handle;	/* what the runtime is given (marks) */
	int32_t device;		/* defaults */
	uint64_t thread;	/* per-thread */
	struct xsched_xqueue *xq;
	struct xsi_stream_desc desc;
	atomic_bool live;	/* caller-held: counts in the gate's maximum */
	atomic_bool capturing;	/* caller-held: its calls go into a graph */
	bool gone;		/* out of the table (state->lock) */
	struct xsi_stream *retired_next;
};

/* A destroyed stream's XQueue whose work still runs (xsi_stream_destroyed(),
 * thread exit): it goes on holding lower streams until a last mark says its
 * work completed, then it is destroyed (reap()). */
struct xsi_zombie {
	struct xsched_xqueue *xq;
	struct xsi_zombie *next;
};

struct xsi_event {
	uintptr_t event;	/* 0: free */
	uint32_t stream_id;	/* the XQueue id it was recorded on */
	struct xsi_stream *s;
	uint64_t seq;
};

struct xsi_state {
	pthread_mutex_t lock;	/* inserts, removals, the event table */
	void *libs[8];		/* rt->libs, opened */
	size_t nlibs;
	_Atomic(struct xsi_stream *) slots[XSI_SLOTS];
	unsigned int count;
	struct xsi_stream *retired;
	struct xsi_event events[XSI_EVENTS];
	/* Caller-held: the highest priority of a live stream per device. */
	_Atomic int32_t maxp[XSI_DEVS];
	/* Streams being captured into a graph (xsi_stream_capture()): while
	 * any is, a scheduled call asks the runtime whether its own stream
	 * joined a capture. */
	atomic_int captures;
	/* Devices the runtime has (0: not known yet; default_device()). */
	atomic_int ndev;
	/* Destroyed streams whose work runs on (under lock). */
	struct xsi_zombie *zombies;
	atomic_bool has_zombies;
};

static struct xsi_stream tombstone;
#define TOMB (&tombstone)

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xsi_runtime *registered[XSI_RUNTIMES];
static thread_local bool pt_logged;
/* Hooks of this thread between their begin and end: a hook entered from
 * inside the runtime (a runtime calling its own exported functions) goes
 * straight through, in the order of the call it is part of. */
static thread_local unsigned int depth;

/* This thread's per-thread streams of caller-held runtimes, forgotten at
 * its exit (pt_key's destructor). */
static thread_local struct {
	struct xsi_runtime *rt;
	int32_t device;
	unsigned int fork_gen;
} pt_mine[XSI_PT_MINE];
static pthread_key_t pt_key;
static _Atomic unsigned int core_fork_gen;

/* ---- log ----------------------------------------------------------------- */

bool xsi_log_on(void)
{
	return xs_log_enabled(XS_LOG_DEBUG);
}

void xsi_log(const struct xsi_runtime *rt, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!xsi_log_on())
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	xs_debug("%s: %s", rt->name, line);
}

/* ---- symbols -------------------------------------------------------------- */

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

XSI_EARLY void *xsi_real_dlsym(void *handle, const char *name)
{
	static void *_Atomic fn;
	dlsym_fn f = (dlsym_fn)libc_cached(&fn, "dlsym");

	return f ? f(handle, name) : NULL;
}

XSI_EARLY void *xsi_real_dlvsym(void *handle, const char *name, const char *version)
{
	static void *_Atomic fn;
	dlvsym_fn f = (dlvsym_fn)libc_cached(&fn, "dlvsym");

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
		struct xsi_runtime *rt = __atomic_load_n(&registered[i],
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

static void resolve(struct xsi_runtime *rt)
{
	void **libs = rt->state->libs;
	size_t i, nl = 0, l;

	for (l = 0; rt->libs && rt->libs[l] && nl < 8; l++) {
		void *h = dlopen(rt->libs[l], RTLD_LAZY | RTLD_GLOBAL);

		if (h)
			libs[nl++] = h;
	}
	for (i = 0; i < rt->nentries; i++) {
		struct xsi_entry *e = &rt->entries[i];
		void *f = NULL;

		if (!e->real || *e->real)
			continue;
		for (l = 0; l < nl && !f; l++)
			f = e->version ? xsi_real_dlvsym(libs[l], e->name, e->version) :
			    xsi_real_dlsym(libs[l], e->name);
		if (!f)
			f = e->version ? xsi_real_dlvsym(RTLD_NEXT, e->name, e->version) :
			    xsi_real_dlsym(RTLD_NEXT, e->name);
		if (f != e->hook)
			*e->real = f;
	}
	rt->state->nlibs = nl;
}

/* ---- fork ----------------------------------------------------------------- */

static void fork_prepare(void)
{
	unsigned int i;

	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < XSI_RUNTIMES; i++)
		if (registered[i])
			pthread_mutex_lock(&registered[i]->state->lock);
}

static void fork_parent(void)
{
	unsigned int i;

	for (i = 0; i < XSI_RUNTIMES; i++)
		if (registered[i])
			pthread_mutex_unlock(&registered[i]->state->lock);
	pthread_mutex_unlock(&reg_lock);
}

/* The child starts with empty tables: the parent's streams are its. */
static void fork_child(void)
{
	unsigned int i, k;

	for (i = 0; i < XSI_RUNTIMES; i++) {
		struct xsi_state *st;

		if (!registered[i])
			continue;
		st = registered[i]->state;
		for (k = 0; k < XSI_SLOTS; k++)
			atomic_store(&st->slots[k], NULL);
		st->count = 0;
		memset(st->events, 0, sizeof(st->events));
		for (k = 0; k < XSI_DEVS; k++)
			atomic_store(&st->maxp[k], INT32_MIN);
		atomic_store(&st->captures, 0);
		/* The parent's XQueues refuse the child (-ECHILD): forgotten. */
		while (st->zombies) {
			struct xsi_zombie *z = st->zombies;

			st->zombies = z->next;
			free(z);
		}
		atomic_store(&st->has_zombies, false);
		pthread_mutex_unlock(&st->lock);
	}
	atomic_fetch_add(&core_fork_gen, 1);
	pthread_mutex_unlock(&reg_lock);
}

static void pt_exit(void *arg);

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void fork_register(void)
{
	/* After the library's handlers: prepare handlers run in reverse, so
	 * the core's lock is taken before the library's (core -> sched). */
	xs_fork_init();
	if (pthread_atfork(fork_prepare, fork_parent, fork_child))
		xs_err("pthread_atfork failed: fork() with interposed streams is unsafe");
	if (pthread_key_create(&pt_key, pt_exit))
		xs_warn("no thread-exit hook: per-thread streams outlive their threads");
}

/* ---- set-up --------------------------------------------------------------- */

int xsi_runtime_init(struct xsi_runtime *rt)
{
	unsigned int i, slot = XSI_RUNTIMES;
	int ret = 0;

	if (!rt || !rt->name || !rt->default_kind || !rt->describe ||
	    !rt->mark_record || !rt->mark_wait || !rt->mark_free)
		return -EINVAL;
	pthread_once(&fork_once, fork_register);
	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < XSI_RUNTIMES; i++) {
		if (registered[i] == rt)
			goto out;
		if (!registered[i] && slot == XSI_RUNTIMES)
			slot = i;
	}
	if (slot == XSI_RUNTIMES) {
		ret = -ENOSPC;
		goto out;
	}
	rt->state = calloc(1, sizeof(*rt->state));
	if (!rt->state) {
		ret = -ENOMEM;
		goto out;
	}
	pthread_mutex_init(&rt->state->lock, NULL);
	for (i = 0; i < XSI_DEVS; i++)
		atomic_store(&rt->state->maxp[i], INT32_MIN);
	resolve(rt);
	__atomic_store_n(&registered[slot], rt, __ATOMIC_RELEASE);
	xsi_log(rt, "interposed: %zu entry points", rt->nentries);
out:
	pthread_mutex_unlock(&reg_lock);
	return ret;
}

/* A caller-held XQueue whose runtime stream is gone, or whose work is not
 * ours to wait for: it holds nobody from now on, and is destroyed. */
static void drop_xq(struct xsched_xqueue *xq)
{
	xs_xq_completed_upto(xq, xs_xq_launched(xq));
	(void)xsched_xqueue_destroy(xq);
}

void xsi_entries_flag(struct xsi_runtime *rt, const char *const *prefixes, uint32_t flag)
{
	size_t i, k;

	for (i = 0; i < rt->nentries; i++)
		for (k = 0; prefixes[k]; k++)
			if (!strncmp(rt->entries[i].name, prefixes[k], strlen(prefixes[k])))
				rt->entries[i].flags |= flag;
}

void xsi_runtime_fini(struct xsi_runtime *rt)
{
	struct xsi_state *st = rt->state;
	struct xsi_stream *s, *next;
	unsigned int i;

	if (!st)
		return;
	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < XSI_RUNTIMES; i++)
		if (registered[i] == rt)
			__atomic_store_n(&registered[i], NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&reg_lock);
	for (i = 0; i < XSI_SLOTS; i++) {
		s = atomic_load(&st->slots[i]);
		if (!s || s == TOMB)
			continue;
		/* Caller-held: nothing is buffered, and the runtime's work is
		 * not ours to wait for (a per-thread stream's completion may
		 * not even be learnable from this thread). */
		if (s->xq && caller_held(rt))
			drop_xq(s->xq);
		else if (s->xq)
			(void)xsched_xqueue_destroy(s->xq);
		free(s);
	}
	for (s = st->retired; s; s = next) {
		next = s->retired_next;
		free(s);
	}
	while (st->zombies) {
		struct xsi_zombie *z = st->zombies;

		st->zombies = z->next;
		drop_xq(z->xq);
		free(z);
	}
	pthread_mutex_destroy(&st->lock);
	free(st);
	rt->state = NULL;
}

/* ---- the stream table ------------------------------------------------------ */

static unsigned int hash(int kind, uintptr_t handle, int32_t device,
			 uint64_t thread)
{
	uint64_t h = (uint64_t)handle * 0x9e3779b97f4a7c15ULL;

	h ^= ((uint64_t)kind << 56) ^ ((uint64_t)(uint32_t)device << 40) ^
	     thread * 0xc2b2ae3d27d4eb4fULL;
	h ^= h >> 29;
	return (unsigned int)(h & (XSI_SLOTS - 1));
}

static bool same(const struct xsi_stream *s, int kind, uintptr_t handle,
		 int32_t device, uint64_t thread)
{
	return s->kind == kind && s->handle == handle && s->device == device &&
	       s->thread == thread;
}

static struct xsi_stream *lookup(struct xsi_state *st, int kind,
				 uintptr_t handle, int32_t device,
				 uint64_t thread, unsigned int *free_slot)
{
	unsigned int i = hash(kind, handle, device, thread), n;

	if (free_slot)
		*free_slot = XSI_SLOTS;
	for (n = 0; n < XSI_SLOTS; n++, i = (i + 1) & (XSI_SLOTS - 1)) {
		struct xsi_stream *s = atomic_load_explicit(&st->slots[i],
							    memory_order_acquire);

		if (!s) {
			if (free_slot && *free_slot == XSI_SLOTS)
				*free_slot = i;
			return NULL;
		}
		if (s == TOMB) {
			if (free_slot && *free_slot == XSI_SLOTS)
				*free_slot = i;
			continue;
		}
		if (same(s, kind, handle, device, thread))
			return s;
	}
	return NULL;
}

/* state->lock held: the gate's per-device maximum over live streams. */
static void maxp_recompute(struct xsi_state *st, int32_t dev)
{
	int32_t mx = INT32_MIN;
	unsigned int i;

	if (dev < 0 || dev >= XSI_DEVS)
		return;
	for (i = 0; i < XSI_SLOTS; i++) {
		struct xsi_stream *o = atomic_load(&st->slots[i]);

		if (o && o != TOMB && atomic_load(&o->live) &&
		    o->desc.device == dev && o->desc.priority > mx)
			mx = o->desc.priority;
	}
	atomic_store(&st->maxp[dev], mx);
}

/* A stream counts in its device's maximum from its creation: a lower
 * stream is capped before the urgent one's first call, not after. */
static void make_live(struct xsi_state *st, struct xsi_stream *s)
{
	int32_t dev = s->desc.device, cur;

	if (dev < 0 || dev >= XSI_DEVS || atomic_exchange(&s->live, true))
		return;
	cur = atomic_load(&st->maxp[dev]);
	while (cur < s->desc.priority &&
	       !atomic_compare_exchange_weak(&st->maxp[dev], &cur, s->desc.priority))
		;
}

/* state->lock held: take @s out of the table (retired, not freed). */
static void unlink_stream(struct xsi_state *st, struct xsi_stream *s)
{
	unsigned int i = hash(s->kind, s->handle, s->device, s->thread), n;

	for (n = 0; n < XSI_SLOTS; n++, i = (i + 1) & (XSI_SLOTS - 1)) {
		if (atomic_load(&st->slots[i]) == s) {
			atomic_store_explicit(&st->slots[i], TOMB,
					      memory_order_release);
			st->count--;
			break;
		}
	}
	s->gone = true;
	s->retired_next = st->retired;
	st->retired = s;
	if (atomic_load(&s->live))
		maxp_recompute(st, s->desc.device);
}

/* Call-command ops of a stream: the runtime's, with the stream. */
static int s_enter(void *ctx)
{
	struct xsi_stream *s = ctx;

	return s->rt->enter ? s->rt->enter(&s->desc) : 0;
}

static int s_mark_record(void *ctx, void **mark)
{
	struct xsi_stream *s = ctx;

	return s->rt->mark_record(s->rt_handle, &s->desc, mark);
}

static int s_mark_wait(void *ctx, void *mark, int64_t timeout_ns)
{
	struct xsi_stream *s = ctx;

	return s->rt->mark_wait(mark, timeout_ns);
}

static void s_mark_free(void *ctx, void *mark)
{
	struct xsi_stream *s = ctx;

	s->rt->mark_free(mark);
}

static const struct xsched_call_ops stream_ops = {
	.enter = s_enter,
	.mark_record = s_mark_record,
	.mark_wait = s_mark_wait,
	.mark_free = s_mark_free,
};

/* A runtime's priority as an XQueue can take it. */
static int32_t prio_clamp(int32_t p)
{
	return p < XSCHED_PRIO_MIN ? XSCHED_PRIO_MIN : p > XSCHED_PRIO_MAX ? XSCHED_PRIO_MAX : p;
}

/* state->lock held: give @s its XQueue (at its first call: a stream the
 * application made but never used costs the policy nothing).  0 or -errno
 * (logged; the stream's calls pass through). */
static int attach_xq(struct xsi_runtime *rt, struct xsi_stream *s, const char *how)
{
	struct xsched_xqueue *xq;
	struct xsched_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.flags = XSCHED_ATTR_PRIORITY | XSCHED_ATTR_GROUP;
	a.priority = prio_clamp(s->desc.priority);
	a.group = (uint32_t)s->desc.device + 1;	/* the policy's scope: one device */
	ret = caller_held(rt) ? xs_xqueue_create_caller_held(&xq, &stream_ops, s, &a) :
	      xsched_xqueue_create_calls(&xq, &stream_ops, s, &a);
	if (ret) {
		xs_warn("%s: stream %#lx: cannot create its XQueue (%s); it passes through",
			rt->name, (unsigned long)s->rt_handle, strerror(-ret));
		return ret;
	}
	if (caller_held(rt)) {
		/* Nothing is ever buffered (no worker was started); completion
		 * is learned by those who wait, never by polling with new marks. */
		xs_calls_set_mode(xq, s->kind == KIND_PER_THREAD ?
				  XS_CALLS_OWNER_MARKS : XS_CALLS_PASSIVE);
	}
	__atomic_store_n(&s->xq, xq, __ATOMIC_RELEASE);
	xsi_log(rt, "stream %#lx -> q%u: created (%s), prio %d, dev %d",
		(unsigned long)s->rt_handle, xsched_xqueue_id(xq), how, a.priority,
		s->desc.device);
	return 0;
}

/*
 * state->lock held: a new stream in a free slot, with its XQueue when
 * @with_xq (a call on it is being made), else without (its creation: it
 * counts in the gate from now on, and gets its XQueue at its first call).
 */
static struct xsi_stream *insert(struct xsi_runtime *rt, int kind,
				 uintptr_t handle, int32_t device,
				 uint64_t thread, unsigned int slot,
				 const struct xsi_stream_desc *d, const char *how,
				 bool with_xq)
{
	struct xsi_state *st = rt->state;
	struct xsi_stream *s;

	if (slot == XSI_SLOTS || st->count >= XSI_SLOTS * 3 / 4) {
		xs_warn("%s: stream table full; stream %#lx passes through", rt->name,
			(unsigned long)handle);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->rt = rt;
	s->kind = kind;
	s->handle = kind == KIND_APP ? handle : 0;
	s->rt_handle = kind == KIND_PER_THREAD && caller_held(rt) ? rt->per_thread_handle :
		       handle;
	s->device = device;
	s->thread = thread;
	s->desc = *d;
	if (with_xq && attach_xq(rt, s, how)) {
		free(s);
		return NULL;
	}
	atomic_store_explicit(&st->slots[slot], s, memory_order_release);
	st->count++;
	if (caller_held(rt))
		make_live(st, s);
	if (!with_xq)
		xsi_log(rt, "stream %#lx: created (%s), prio %d, dev %d; its XQueue at its first call",
			(unsigned long)handle, how, prio_clamp(d->priority), d->device);
	return s;
}

/* A stream found in the table: with its XQueue, made now if it has none. */
static struct xsi_stream *with_xq(struct xsi_runtime *rt, struct xsi_stream *s)
{
	struct xsi_state *st = rt->state;
	int ret = 0;

	if (!s || __atomic_load_n(&s->xq, __ATOMIC_ACQUIRE))
		return s;
	pthread_mutex_lock(&st->lock);
	/* Still listed (not destroyed meanwhile) and still without one? */
	if (!s->xq && !s->gone)
		ret = attach_xq(rt, s, "first call");
	pthread_mutex_unlock(&st->lock);
	return ret || !__atomic_load_n(&s->xq, __ATOMIC_ACQUIRE) ? NULL : s;
}

/*
 * The device a default stream named by the calling thread is on: with one
 * device in the process it is 0, without asking the runtime on every call
 * (a driver call is a tenth of a launch); else the caller's current one.
 */
static int32_t default_device(struct xsi_runtime *rt)
{
	struct xsi_state *st = rt->state;
	int n = atomic_load_explicit(&st->ndev, memory_order_relaxed);

	if (!n && rt->device_count) {
		n = rt->device_count();	/* fails before the runtime's init */
		if (n > 0)
			atomic_store(&st->ndev, n);
	}
	if (n == 1)
		return 0;
	return rt->current_device ? rt->current_device() : 0;
}

/* The caller's thread id, kept per thread (a system call is a tenth of a
 * launch); a fork child's thread asks again. */
static uint64_t thread_id(void)
{
	static thread_local uint64_t tid;
	static thread_local unsigned int gen;
	unsigned int g = atomic_load_explicit(&core_fork_gen, memory_order_relaxed);

	if (!tid || gen != g) {
		tid = (uint64_t)syscall(SYS_gettid);
		gen = g;
	}
	return tid;
}

/* The calling thread's per-thread stream on its current device. */
static struct xsi_stream *per_thread_get(struct xsi_runtime *rt, uintptr_t handle)
{
	struct xsi_state *st = rt->state;
	int32_t device = default_device(rt);
	uint64_t tid = thread_id();
	struct xsi_stream_desc d;
	struct xsi_stream *s;
	unsigned int slot, i;

	s = lookup(st, KIND_PER_THREAD, 0, device, tid, NULL);
	if (s)
		return s;
	pthread_mutex_lock(&st->lock);
	s = lookup(st, KIND_PER_THREAD, 0, device, tid, &slot);
	if (!s) {
		memset(&d, 0, sizeof(d));
		d.device = device;
		if (!rt->describe(handle, &d))
			s = insert(rt, KIND_PER_THREAD, 0, device, tid, slot, &d,
				   "lazy, per-thread", true);
	}
	pthread_mutex_unlock(&st->lock);
	if (!s)
		return NULL;
	for (i = 0; i < XSI_PT_MINE; i++) {
		if (pt_mine[i].rt &&
		    pt_mine[i].fork_gen == atomic_load(&core_fork_gen))
			continue;
		pt_mine[i].rt = rt;
		pt_mine[i].device = device;
		pt_mine[i].fork_gen = atomic_load(&core_fork_gen);
		(void)pthread_setspecific(pt_key, (void *)1);
		break;
	}
	return s;
}

/*
 * Destroyed XQueues whose last mark completed (and that nobody is looking
 * at) are destroyed now; their completion is polled first (a poll, never a
 * wait), and the policy told, so that what they held goes.  Called on the
 * paths that create and destroy streams and on held callers' waits.
 */
static void reap(struct xsi_runtime *rt)
{
	struct xsi_state *st = rt->state;
	struct xsi_zombie *z, *list, *keep = NULL, *done = NULL;

	if (!st || !atomic_load_explicit(&st->has_zombies, memory_order_relaxed))
		return;
	pthread_mutex_lock(&st->lock);
	list = st->zombies;
	st->zombies = NULL;
	pthread_mutex_unlock(&st->lock);
	while ((z = list)) {
		list = z->next;
		xs_xq_update_completed(z->xq);
		if (atomic_load(&z->xq->refs) == 1 && xs_xq_idle(z->xq)) {
			z->next = done;
			done = z;
		} else {
			z->next = keep;
			keep = z;
		}
	}
	pthread_mutex_lock(&st->lock);
	while ((z = keep)) {
		keep = z->next;
		z->next = st->zombies;
		st->zombies = z;
	}
	atomic_store(&st->has_zombies, st->zombies != NULL);
	pthread_mutex_unlock(&st->lock);
	while ((z = done)) {
		done = z->next;
		xsi_log(rt, "q%u: the work of its destroyed stream completed: freed",
			xsched_xqueue_id(z->xq));
		xs_sched_refresh(z->xq);
		(void)xsched_xqueue_destroy(z->xq);
		free(z);
	}
}

/*
 * state->lock held (dropped and taken again here): take @s out and destroy
 * its XQueue.  @runs_on: the runtime's stream is destroyed but its work
 * runs on (a stream destroy, a thread's exit), and the runtime returns at
 * once: so do we (caller-held), the XQueue goes on blocking lower streams
 * until a last mark says its work completed, and is reaped then.  Else
 * (the context is torn down with its work) its work counts as completed.
 */
static void forget(struct xsi_runtime *rt, struct xsi_stream *s, bool runs_on)
{
	struct xsi_state *st = rt->state;
	struct xsched_xqueue *xq;
	struct xsi_zombie *z;
	unsigned int i;
	bool closed;

	unlink_stream(st, s);
	for (i = 0; i < XSI_EVENTS; i++)
		if (st->events[i].s == s)
			memset(&st->events[i], 0, sizeof(st->events[i]));
	xq = s->xq;
	s->xq = NULL;
	if (atomic_load(&s->capturing))
		atomic_fetch_sub(&st->captures, 1);
	if (!xq) {	/* never used: nothing of it runs */
		xsi_log(rt, "stream %#lx: destroyed (never used)", (unsigned long)s->rt_handle);
		return;
	}
	pthread_mutex_unlock(&st->lock);
	if (!caller_held(rt)) {
		xsi_log(rt, "stream %#lx -> q%u: destroyed", (unsigned long)s->rt_handle,
			xsched_xqueue_id(xq));
		/* Drains what is buffered and waits for it. */
		(void)xsched_xqueue_destroy(xq);
		pthread_mutex_lock(&st->lock);
		return;
	}
	z = runs_on && !xs_xq_idle(xq) ? malloc(sizeof(*z)) : NULL;
	/* A per-thread stream at its thread's exit: no new mark (the runtime
	 * may have let go of the thread's stream already); the marks its
	 * owner made while it held someone cover its work, and without them
	 * nobody is held by it. */
	closed = z && xs_xq_close(xq, s->kind != KIND_PER_THREAD);
	/* Most streams are idle when destroyed: one poll of the last mark
	 * says so, and the XQueue goes now. */
	if (closed)
		xs_xq_update_completed(xq);
	if (closed && !xs_xq_idle(xq)) {
		xsi_log(rt, "stream %#lx -> q%u: destroyed; its work runs on, the XQueue goes when it completes",
			(unsigned long)s->rt_handle, xsched_xqueue_id(xq));
		pthread_mutex_lock(&st->lock);
		z->xq = xq;
		z->next = st->zombies;
		st->zombies = z;
		atomic_store(&st->has_zombies, true);
		return;
	}
	free(z);
	/* Idle, or its completion can never be learned (no last mark). */
	xsi_log(rt, "stream %#lx -> q%u: destroyed", (unsigned long)s->rt_handle,
		xsched_xqueue_id(xq));
	drop_xq(xq);
	pthread_mutex_lock(&st->lock);
}

/* Thread exit: its per-thread streams go. */
static void pt_exit(void *arg)
{
	uint64_t tid = thread_id();
	unsigned int i;

	(void)arg;
	for (i = 0; i < XSI_PT_MINE; i++) {
		struct xsi_runtime *rt = pt_mine[i].rt;
		struct xsi_stream *s;

		pt_mine[i].rt = NULL;
		if (!rt || pt_mine[i].fork_gen != atomic_load(&core_fork_gen) ||
		    !rt->state)
			continue;
		pthread_mutex_lock(&rt->state->lock);
		s = lookup(rt->state, KIND_PER_THREAD, 0, pt_mine[i].device, tid, NULL);
		if (s)
			forget(rt, s, true);
		pthread_mutex_unlock(&rt->state->lock);
		reap(rt);
	}
}

struct xsi_stream *xsi_stream_get(struct xsi_runtime *rt, uintptr_t handle,
				  uint32_t flags)
{
	struct xsi_state *st = rt->state;
	enum xsi_default k = rt->default_kind(handle);
	int32_t device = -1;
	int kind = KIND_APP;
	struct xsi_stream_desc d;
	struct xsi_stream *s;
	unsigned int slot;

	if (!st)
		return NULL;
	if ((k == XSI_DEFAULT_PER_THREAD ||
	     (k == XSI_DEFAULT_NULL && (flags & XSI_ENTRY_PER_THREAD))) &&
	    caller_held(rt))
		return per_thread_get(rt, handle);
	if (k == XSI_DEFAULT_PER_THREAD ||
	    (k == XSI_DEFAULT_NULL && (flags & XSI_ENTRY_PER_THREAD))) {
		if (!pt_logged) {
			pt_logged = true;
			xsi_log(rt, "stream %#lx: per-thread default stream: passes through",
				(unsigned long)handle);
		}
		return NULL;
	}
	if (k != XSI_NOT_DEFAULT) {
		kind = KIND_LEGACY;
		device = default_device(rt);
	}
	s = lookup(st, kind, kind == KIND_LEGACY ? 0 : handle, device, 0, NULL);
	if (s)
		return with_xq(rt, s);
	/* Unknown: a stream made before the library loaded, or the default
	 * stream's first use. */
	pthread_mutex_lock(&st->lock);
	s = lookup(st, kind, kind == KIND_LEGACY ? 0 : handle, device, 0, &slot);
	if (!s) {
		memset(&d, 0, sizeof(d));
		d.device = device < 0 ? 0 : device;
		if (rt->describe(handle, &d))
			xsi_log(rt, "stream %#lx: unknown to the runtime: passes through",
				(unsigned long)handle);
		else
			s = insert(rt, kind, handle, device, 0, slot, &d, "lazy", true);
	} else if (!s->xq && attach_xq(rt, s, "first call")) {
		s = NULL;
	}
	pthread_mutex_unlock(&st->lock);
	return s;
}

struct xsi_stream *xsi_stream_announce(struct xsi_runtime *rt, uintptr_t handle)
{
	struct xsi_state *st = rt->state;
	struct xsi_stream_desc d;
	struct xsi_stream *s;
	unsigned int slot;

	if (!st || rt->default_kind(handle) != XSI_NOT_DEFAULT)
		return NULL;
	pthread_mutex_lock(&st->lock);
	s = lookup(st, KIND_APP, handle, -1, 0, &slot);
	if (!s) {
		memset(&d, 0, sizeof(d));
		if (!rt->describe(handle, &d))
			s = insert(rt, KIND_APP, handle, -1, 0, slot, &d, "created", false);
	}
	pthread_mutex_unlock(&st->lock);
	reap(rt);
	return s;
}

struct xsi_stream *xsi_stream_created(struct xsi_runtime *rt, uintptr_t handle,
				      const struct xsi_stream_desc *d)
{
	struct xsi_state *st = rt->state;
	struct xsi_stream *s, *stale;
	unsigned int slot;

	if (!st || !d)
		return NULL;
	pthread_mutex_lock(&st->lock);
	stale = lookup(st, KIND_APP, handle, -1, 0, NULL);
	if (stale) {
		/* The runtime reused the handle of a stream whose destroy we
		 * did not see: that one is gone, and so is its work (the
		 * handle now names another stream: no mark can be made). */
		xsi_log(rt, "stream %#lx -> q%u: handle reused, old XQueue destroyed",
			(unsigned long)handle, xsched_xqueue_id(stale->xq));
		forget(rt, stale, false);
	}
	(void)lookup(st, KIND_APP, handle, -1, 0, &slot);
	s = insert(rt, KIND_APP, handle, -1, 0, slot, d, "hooked", false);
	pthread_mutex_unlock(&st->lock);
	reap(rt);
	return s;
}

int xsi_stream_destroyed(struct xsi_runtime *rt, uintptr_t handle)
{
	struct xsi_state *st = rt->state;
	struct xsi_stream *s;

	if (!st)
		return -ENOENT;
	pthread_mutex_lock(&st->lock);
	s = lookup(st, KIND_APP, handle, -1, 0, NULL);
	if (s)
		forget(rt, s, true);
	pthread_mutex_unlock(&st->lock);
	reap(rt);
	return s ? 0 : -ENOENT;
}

int xsi_stream_set_priority(struct xsi_runtime *rt, struct xsi_stream *s,
			    int32_t priority)
{
	struct xsi_state *st = rt->state;
	int32_t dev = s->desc.device;
	int ret;

	if (!st || !s->xq)
		return -ENOENT;
	ret = xsched_set_priority(s->xq, priority);
	if (ret)
		return ret;
	pthread_mutex_lock(&st->lock);
	s->desc.priority = priority;
	maxp_recompute(st, dev);
	pthread_mutex_unlock(&st->lock);
	xsi_log(rt, "stream %#lx -> q%u: priority set to %d", (unsigned long)s->rt_handle,
		xsched_xqueue_id(s->xq), priority);
	return 0;
}

void xsi_prio_watch_begin(struct xsi_runtime *rt, uintptr_t handle,
			  struct xsi_prio_watch *w)
{
	struct xsi_stream_desc d;

	memset(w, 0, sizeof(*w));
	if (!rt->state || rt->default_kind(handle) != XSI_NOT_DEFAULT)
		return;
	memset(&d, 0, sizeof(d));
	if (rt->describe(handle, &d))
		return;
	w->rt = rt;
	w->handle = handle;
	w->before = d.priority;
	w->armed = true;
}

void xsi_prio_watch_end(struct xsi_prio_watch *w, bool ok)
{
	struct xsi_runtime *rt = w->rt;
	struct xsi_stream_desc d;
	struct xsi_stream *s;

	if (!w->armed || !ok)
		return;
	memset(&d, 0, sizeof(d));
	if (rt->describe(w->handle, &d) || d.priority == w->before)
		return;
	/* A stream not in the table yet is described when first used. */
	s = lookup(rt->state, KIND_APP, w->handle, -1, 0, NULL);
	if (!s)
		return;
	xsi_log(rt, "stream %#lx: the runtime's priority moved (%d -> %d)",
		(unsigned long)w->handle, w->before, d.priority);
	if (xsi_stream_set_priority(rt, s, prio_clamp(d.priority)))
		xsi_log(rt, "stream %#lx: its XQueue keeps its priority (gone)",
			(unsigned long)w->handle);
}

struct xsched_xqueue *xsi_stream_xqueue(const struct xsi_stream *s)
{
	return s ? s->xq : NULL;
}

uintptr_t xsi_stream_handle(const struct xsi_stream *s)
{
	return s->handle;
}

const struct xsi_stream_desc *xsi_stream_desc(const struct xsi_stream *s)
{
	return &s->desc;
}

unsigned int xsi_stream_count(struct xsi_runtime *rt)
{
	unsigned int n;

	if (!rt->state)
		return 0;
	pthread_mutex_lock(&rt->state->lock);
	n = rt->state->count;
	pthread_mutex_unlock(&rt->state->lock);
	return n;
}

/* ---- dispatch ---------------------------------------------------------------- */

int xsi_call(struct xsi_stream *s, const struct xsched_call *c, int *status,
	     uint64_t *seq)
{
	uint64_t sq = 0;
	int st = 0, ret;

	if (!s || !s->xq || !c || !c->fn) {
		if (c && c->release)
			c->release(c->arg);
		return -EINVAL;
	}
	ret = xsched_submit_call(s->xq, c, 1, &sq, &st);
	if (status)
		*status = ret ? 0 : st;
	if (seq)
		*seq = sq;
	if (xsi_log_on()) {
		struct xsched_xq_info info;

		if (ret)
			xsi_log(s->rt, "stream %#lx -> q%u: refused (%s): passes through",
				(unsigned long)s->handle, xsched_xqueue_id(s->xq),
				strerror(-ret));
		else if (!xsched_query(s->xq, &info, sizeof(info)))
			xsi_log(s->rt, "stream %#lx -> q%u: %s seq %llu",
				(unsigned long)s->handle, info.id,
				info.launched >= sq ? "launched" : "buffered",
				(unsigned long long)sq);
	}
	return ret;
}

/* Flush every stream of @device (-1: all); each XQueue is referenced, so a
 * concurrent destroy is harmless. */
static int drain_all(struct xsi_runtime *rt, int32_t device)
{
	struct xsi_state *st = rt->state;
	struct xsched_xqueue **xqs;
	unsigned int i, n = 0;
	int ret = 0;

	xqs = calloc(XSI_SLOTS, sizeof(*xqs));
	if (!xqs)
		return -ENOMEM;
	pthread_mutex_lock(&st->lock);
	for (i = 0; i < XSI_SLOTS; i++) {
		struct xsi_stream *s = atomic_load(&st->slots[i]);

		if (!s || s == TOMB || !s->xq)
			continue;
		if (device >= 0 && s->desc.device != device)
			continue;
		xqs[n++] = s->xq;
	}
	for (i = 0; i < n; i++)
		atomic_fetch_add(&xqs[i]->refs, 1);
	pthread_mutex_unlock(&st->lock);
	/* Outside the table lock: a flush waits while its XQueue is held. */
	for (i = 0; i < n; i++) {
		int r = xsched_flush(xqs[i]);

		if (r && !ret && r != -ECHILD)
			ret = r;
		xs_xqueue_put(xqs[i]);
	}
	free(xqs);
	return ret;
}

int xsi_drain(struct xsi_runtime *rt, struct xsi_stream *s, enum xsi_scope scope)
{
	int ret;

	if (!rt->state || caller_held(rt))
		return 0;	/* caller-held: nothing is ever buffered */
	switch (scope) {
	case XSI_SCOPE_STREAM:
		if (!s || !s->xq)
			return 0;
		ret = xsched_flush(s->xq);
		xsi_log(rt, "stream %#lx -> q%u: drained", (unsigned long)s->handle,
			xsched_xqueue_id(s->xq));
		return ret;
	case XSI_SCOPE_DEVICE:
		ret = drain_all(rt, s ? s->desc.device :
				rt->current_device ? rt->current_device() : 0);
		xsi_log(rt, "device drained");
		return ret;
	default:
		ret = drain_all(rt, -1);
		xsi_log(rt, "every stream drained");
		return ret;
	}
}

int xsi_pass(struct xsi_runtime *rt, const struct xsi_entry *e, uintptr_t handle)
{
	struct xsi_stream *s = NULL;

	if (e->cls == XSI_HARMLESS) {
		xsi_log(rt, "%s: pass-through (harmless)", e->name);
		return 0;
	}
	if (e->scope == XSI_SCOPE_STREAM)
		s = xsi_stream_get(rt, handle, e->flags);
	else if (rt->default_kind(handle) == XSI_NOT_DEFAULT)
		s = xsi_stream_get(rt, handle, e->flags);
	xsi_log(rt, "%s stream %#lx: pass-through (ordered)", e->name,
		(unsigned long)handle);
	return xsi_drain(rt, s, e->scope);
}

/* ---- caller-held dispatch ------------------------------------------------------ */

static bool gated(struct xsi_runtime *rt, struct xsi_stream *s)
{
	int32_t dev = s->desc.device;

	if (dev < 0 || dev >= XSI_DEVS)
		return false;
	return s->desc.priority < atomic_load_explicit(&rt->state->maxp[dev],
						       memory_order_relaxed);
}

#define XSI_WAIT_SLICE_NS 50000000LL	/* one wait on a mark, at most */
#define XSI_HELD_SLICE_NS 1000000LL	/* one wait for the policy's release */
/* A stream held by one that waits on a memory value (whose writer may be
 * the held stream: the library cannot see who) waits at most this long. */
#define XSI_MEMWAIT_HOLD_NS 2000000ULL

/*
 * -EAGAIN from xs_xq_now_begin(): wait a little for what stops @s: its
 * blocker's completion (a mark on the blocker), the policy's release, or
 * room on its own stream.  false: that cannot be known (a mark could not be
 * made or failed): stop holding.  *memwait: the blocker has a memory wait
 * that is not known to have completed.
 */
static bool held_wait(struct xsi_stream *s, uint64_t left, bool *memwait)
{
	struct xsched_xqueue *b = xs_sched_blocker(s->xq);
	struct xsched_xq_info info;
	int64_t slice = left < XSI_WAIT_SLICE_NS ? (int64_t)left : XSI_WAIT_SLICE_NS;
	int64_t short_slice = slice < XSI_HELD_SLICE_NS ? slice : XSI_HELD_SLICE_NS;
	int r = 0;

	*memwait = false;
	if (b) {
		uint64_t upto = xs_xq_launched(b);

		*memwait = xs_xq_memwait(b);
		if (*memwait)
			slice = short_slice;
		/* A blocker no mark can speak for yet (its own thread makes
		 * them) is looked at again after a short sleep in the wait. */
		r = upto ? xsched_wait(b, upto, slice) : 0;
		xs_xqueue_put(b);
		if (!r)	/* now the policy's turn (hysteresis) */
			xs_xq_wait_unheld(s->xq, short_slice);
	} else if (!xsched_query(s->xq, &info, sizeof(info)) && info.hold) {
		xs_xq_wait_unheld(s->xq, short_slice);
	} else if (!xsched_query(s->xq, &info, sizeof(info)) &&
		   info.launched - info.completed >= info.threshold) {
		r = xsched_wait(s->xq, info.launched - info.threshold + 1, slice);
	}
	return !r || r == -ETIMEDOUT;
}

/* Is @s's call going into a graph (its own capture, or one it joined
 * through an event wait: only the runtime knows, asked only while some
 * stream of the process is being captured)? */
static bool captured(struct xsi_runtime *rt, struct xsi_stream *s,
		     const struct xsi_entry *e, uintptr_t handle)
{
	if (atomic_load_explicit(&s->capturing, memory_order_relaxed))
		return true;
	if (!handle && (e->flags & XSI_ENTRY_PER_THREAD))
		handle = rt->per_thread_handle;	/* null through a per-thread entry */
	if (!atomic_load_explicit(&rt->state->captures, memory_order_relaxed) ||
	    !rt->is_capturing || rt->is_capturing(handle) <= 0)
		return false;
	xsi_log(rt, "%s stream %#lx -> q%u: joined a capture: not scheduled", e->name,
		(unsigned long)s->rt_handle, xsched_xqueue_id(s->xq));
	return true;
}

void xsi_enter(void)
{
	depth++;
}

void xsi_leave(void)
{
	depth--;
}

void xsi_hold_begin(struct xsi_runtime *rt, const struct xsi_entry *e,
		    uintptr_t handle, struct xsi_hold *h)
{
	uint64_t t0 = 0, max = rt->hold_max_ns ? rt->hold_max_ns : XSI_HOLD_MAX_NS;
	unsigned int flags;
	bool memwait = false;
	int ret;

	h->s = NULL;
	h->in_call = false;
	h->flags = 0;
	h->entered = true;
	if (depth++) {
		/* Inside another hook's runtime call on this thread: part of
		 * that call, already scheduled and counted. */
		xsi_log(rt, "%s stream %#lx: entered from inside the runtime: straight through",
			e->name, (unsigned long)handle);
		return;
	}
	h->s = xsi_stream_get(rt, handle, e->flags);
	if (!h->s || !h->s->xq || captured(rt, h->s, e, handle)) {
		h->s = NULL;	/* recorded into a graph: runs later, elsewhere */
		return;
	}
	flags = gated(rt, h->s) ? XS_NOW_CAP : 0;
	while ((ret = xs_xq_now_begin(h->s->xq, flags)) == -EAGAIN) {
		uint64_t now = xs_now_ns(), limit = max;

		if (!t0) {
			t0 = now;
			xsi_log(rt, "%s stream %#lx -> q%u: held", e->name,
				(unsigned long)h->s->rt_handle, xsched_xqueue_id(h->s->xq));
			xs_trace("hold", "q=%u rt=%s call=%s stream=%#lx",
				 xsched_xqueue_id(h->s->xq), rt->name, e->name,
				 (unsigned long)h->s->rt_handle);
		}
		if (memwait && limit > XSI_MEMWAIT_HOLD_NS)
			limit = XSI_MEMWAIT_HOLD_NS;
		if (now - t0 >= limit) {
			if (memwait)
				xsi_log(rt, "%s stream %#lx -> q%u: its blocker waits on a memory value: let through after %llu us",
					e->name, (unsigned long)h->s->rt_handle,
					xsched_xqueue_id(h->s->xq),
					(unsigned long long)((now - t0) / 1000));
			else
				xs_warn("%s: q%u held for %llu ms; letting its call through (hold limit)",
					rt->name, xsched_xqueue_id(h->s->xq),
					(unsigned long long)((now - t0) / 1000000));
			flags |= XS_NOW_FORCE;
			continue;
		}
		if (!held_wait(h->s, t0 + limit - now, &memwait))
			flags |= XS_NOW_FORCE;
		reap(rt);
	}
	if (ret) {
		h->s = NULL;	/* -ECHILD, a failed XQueue: not scheduled */
		return;
	}
	h->in_call = true;
	h->flags = (flags & XS_NOW_CAP) | (e->flags & XSI_ENTRY_MEMWAIT ? XS_NOW_MEMWAIT : 0);
	if (t0) {
		xsi_log(rt, "%s stream %#lx -> q%u: released after %llu us", e->name,
			(unsigned long)h->s->rt_handle, xsched_xqueue_id(h->s->xq),
			(unsigned long long)((xs_now_ns() - t0) / 1000));
		xs_trace("release", "q=%u rt=%s call=%s stream=%#lx held_ns=%llu",
			 xsched_xqueue_id(h->s->xq), rt->name, e->name,
			 (unsigned long)h->s->rt_handle,
			 (unsigned long long)(xs_now_ns() - t0));
	}
}

void xsi_hold_end(struct xsi_hold *h, bool ok)
{
	if (h->s && h->in_call)
		xs_xq_now_end(h->s->xq, ok, h->flags);
	h->in_call = false;
	if (h->entered)
		depth--;
	h->entered = false;
}

void xsi_stream_capture(struct xsi_stream *s, bool on)
{
	if (!s)
		return;
	if (atomic_exchange(&s->capturing, on) != on && s->rt->state)
		atomic_fetch_add(&s->rt->state->captures, on ? 1 : -1);
	xsi_log(s->rt, "stream %#lx: capture %s", (unsigned long)s->rt_handle,
		on ? "begins: its calls are not scheduled" : "ends");
}

struct xsi_sync {
	unsigned int n;
	struct { struct xsched_xqueue *xq; uint64_t launched; } q[];
};

struct xsi_sync *xsi_sync_begin(struct xsi_runtime *rt, struct xsi_stream *s,
				enum xsi_scope scope)
{
	struct xsi_state *st = rt->state;
	struct xsi_sync *y;
	int32_t dev;
	unsigned int i;

	if (!st)
		return NULL;
	if (scope == XSI_SCOPE_STREAM) {
		if (!s || !s->xq)
			return NULL;
		y = malloc(sizeof(*y) + sizeof(y->q[0]));
		if (!y)
			return NULL;
		pthread_mutex_lock(&st->lock);
		y->n = 1;
		y->q[0].xq = s->xq;
		atomic_fetch_add(&s->xq->refs, 1);
		pthread_mutex_unlock(&st->lock);
		y->q[0].launched = xs_xq_launched(y->q[0].xq);
		return y;
	}
	dev = scope == XSI_SCOPE_PROCESS ? -1 : s ? s->desc.device :
	      rt->current_device ? rt->current_device() : 0;
	pthread_mutex_lock(&st->lock);
	y = malloc(sizeof(*y) + (st->count + 1) * sizeof(y->q[0]));
	if (y) {
		y->n = 0;
		for (i = 0; i < XSI_SLOTS && y->n <= st->count; i++) {
			struct xsi_stream *o = atomic_load(&st->slots[i]);

			if (!o || o == TOMB || !o->xq || (dev >= 0 && o->desc.device != dev))
				continue;
			atomic_fetch_add(&o->xq->refs, 1);
			y->q[y->n++].xq = o->xq;
		}
	}
	pthread_mutex_unlock(&st->lock);
	for (i = 0; y && i < y->n; i++)
		y->q[i].launched = xs_xq_launched(y->q[i].xq);
	return y;
}

void xsi_sync_end(struct xsi_sync *y, bool ok)
{
	unsigned int i;

	if (!y)
		return;
	for (i = 0; i < y->n; i++) {
		if (ok)
			xs_xq_completed_upto(y->q[i].xq, y->q[i].launched);
		xs_xqueue_put(y->q[i].xq);
	}
	free(y);
}

void xsi_context_gone(struct xsi_runtime *rt, uintptr_t context, int32_t device)
{
	struct xsi_state *st = rt->state;
	unsigned int i;

	if (!st)
		return;
	pthread_mutex_lock(&st->lock);
	for (i = 0; i < XSI_SLOTS; i++) {
		struct xsi_stream *o = atomic_load(&st->slots[i]);

		if (!o || o == TOMB)
			continue;
		if (context ? o->desc.context != context : o->desc.device != device)
			continue;
		forget(rt, o, false);	/* drops and retakes the lock */
	}
	pthread_mutex_unlock(&st->lock);
	xsi_log(rt, "context %#lx / device %d torn down: its streams are forgotten",
		(unsigned long)context, device);
}

/* ---- events ---------------------------------------------------------------- */

static struct xsi_event *event_slot(struct xsi_state *st, uintptr_t ev, bool add)
{
	unsigned int i = (unsigned int)((ev * 0x9e3779b97f4a7c15ULL) >> 40) &
			 (XSI_EVENTS - 1), n;
	struct xsi_event *free_e = NULL;

	for (n = 0; n < XSI_EVENTS; n++, i = (i + 1) & (XSI_EVENTS - 1)) {
		struct xsi_event *e = &st->events[i];

		if (e->event == ev)
			return e;
		if (!e->event && !free_e)
			free_e = e;
	}
	return add ? free_e : NULL;
}

void xsi_event_recorded(struct xsi_runtime *rt, uintptr_t event,
			struct xsi_stream *s, uint64_t seq)
{
	struct xsi_event *e;

	if (!rt->state || !s || !s->xq || !event)
		return;
	pthread_mutex_lock(&rt->state->lock);
	e = event_slot(rt->state, event, true);
	if (e) {
		e->event = event;
		e->s = s;
		e->stream_id = xsched_xqueue_id(s->xq);
		e->seq = seq;
	}
	pthread_mutex_unlock(&rt->state->lock);
}

void xsi_event_forget(struct xsi_runtime *rt, uintptr_t event)
{
	struct xsi_event *e;

	if (!rt->state || !event)
		return;
	pthread_mutex_lock(&rt->state->lock);
	e = event_slot(rt->state, event, false);
	if (e)
		memset(e, 0, sizeof(*e));
	pthread_mutex_unlock(&rt->state->lock);
}

int xsi_event_wait(struct xsi_runtime *rt, struct xsi_stream *waiter,
		   uintptr_t event)
{
	struct xsi_event *e;
	struct xsched_xqueue *src = NULL;
	uint64_t seq = 0;
	int ret = 0;

	if (!rt->state)
		return -ENOENT;
	pthread_mutex_lock(&rt->state->lock);
	e = event_slot(rt->state, event, false);
	if (e && e->s && e->s->xq) {
		src = e->s->xq;
		seq = e->seq;
	}
	if (!src) {
		pthread_mutex_unlock(&rt->state->lock);
		return -ENOENT;
	}
	atomic_fetch_add(&src->refs, 1);
	pthread_mutex_unlock(&rt->state->lock);
	if (waiter && waiter->xq && waiter->xq != src) {
		ret = xsched_depend(waiter->xq, src, seq);
		xsi_log(rt, "stream %#lx -> q%u: waits on q%u seq %llu",
			(unsigned long)waiter->handle, xsched_xqueue_id(waiter->xq),
			xsched_xqueue_id(src), (unsigned long long)seq);
	}
	/* The event's command must reach the runtime before anyone waits on
	 * it there (the drain-first rule for the source); caller-held: it
	 * did when its record returned (and a flush would wait out a hold). */
	if (!ret && !caller_held(rt))
		ret = xsched_flush(src);
	xs_xqueue_put(src);
	return ret;
}
