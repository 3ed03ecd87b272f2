// SPDX-License-Identifier: MIT
/*
 * The CUDA interposer's scheduler (cuda_lv1.h says what Lv1 means here).
 *
 * Queues.  One struct xc_queue per stream: an application stream (by
 * handle), the legacy default stream of a context, or a thread's per-thread
 * default stream in a context.  A queue is made at the stream's first hooked
 * call (streams made before the library loaded are found the same way),
 * with the stream's CUDA priority negated as its priority (CUDA: lower is
 * more urgent; xsched: higher is).  It becomes live at its first scheduled
 * call; only live queues count for the policy.  Queue objects are never
 * freed (a destroyed stream's queue is marked dead), so a scan of a device's
 * live queues needs no lock.
 *
 * Completion.  `launched` counts the scheduled calls a queue handed to the
 * driver, `done` how many of them are known to have completed.  `done` moves
 * when a stream or context synchronize or a stream query succeeds, and when
 * an event we recorded completes: a lower queue records a progress event
 * every `step` calls on its own stream; a waiter for a higher queue records
 * that queue's marker on it (a per-thread default stream cannot be named
 * from another thread, so its owner records the marker after every call
 * while a lower queue exists).
 *
 * Locks: tab.lock (rwlock) protects the handle table and the legacy list;
 * dom->lock the device's live array; q->lock a queue's events and capture
 * flag.  Order: tab.lock -> dom->lock -> q->lock.  No driver call is made
 * under tab.lock or dom->lock except in queue creation (describe), which
 * calls only query functions.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../internal.h"
#include "cuda_lv1.h"

#define XC_MAX_DEV 64
#define XC_DOM_MAX 256		/* live queues per device that the policy sees */
#define XC_RING 34		/* progress events per queue */
#define XC_TAB_BITS 12		/* explicit-handle table: 4096 slots */
#define XC_TAB_SIZE (1U << XC_TAB_BITS)
#define XC_MAX_QUEUES 65536
#define XC_TLS_CACHE 4

struct xc_real xc_real;

struct xc_queue {
	uint32_t id;
	enum xc_kind kind;
	CUstream handle;	/* explicit handle; unused for default streams */
	CUcontext ctx;
	int dev;
	int cuda_prio;
	int prio;
	pid_t owner;		/* per-thread streams: the owning thread */
	atomic_bool live;
	atomic_bool dead;
	atomic_uint_fast64_t launched;
	atomic_uint_fast64_t done;
	atomic_int users;	/* threads waiting on its events */

	pthread_mutex_t lock;
	atomic_bool capturing;	/* begun through a hooked begin-capture */
	CUevent marker;
	uint64_t marker_seq;
	CUevent prog[XC_RING];
	uint64_t prog_seq[XC_RING];
	unsigned int prog_head, prog_n;	/* oldest entry, entries in use */
	bool events_dead;

	atomic_uint_fast64_t holds, hold_ns, cap_waits;
	struct xc_queue *all_next;	/* every queue, for context teardown */
};

struct xc_dom {
	pthread_mutex_t lock;
	_Atomic(struct xc_queue *) live[XC_DOM_MAX];
	atomic_int nlive;
	atomic_int max_prio;	/* of live queues; INT_MIN when none */
	atomic_int min_prio;
	bool full_warned;
};

static struct {
	pthread_rwlock_t lock;
	struct { CUstream h; struct xc_queue *q; } slot[XC_TAB_SIZE];
	unsigned int used;	/* slots in use, tombstones included */
	struct xc_queue *all;	/* every queue ever made */
	atomic_uint nqueues;
	atomic_uint_fast64_t gen;	/* bumped when a mapping goes away */
	bool full_warned;
} tab = { .lock = PTHREAD_RWLOCK_INITIALIZER };

#define XC_TOMB ((struct xc_queue *)1)

static struct xc_dom doms[XC_MAX_DEV];
static atomic_uint_fast64_t stat_unmatched;
static unsigned int cfg_threshold, cfg_step;
static uint64_t cfg_hold_max_ns, cfg_hyst_ns;

struct xc_tls_ent {
	enum xc_kind kind;
	uintptr_t key;		/* handle (explicit) or context (defaults) */
	struct xc_queue *q;
	uint64_t gen;
};
static __thread struct xc_tls_ent tls_cache[XC_TLS_CACHE];
static __thread unsigned int tls_next;
static __thread bool tls_in_init;
/* This thread's per-thread default streams, one per context: only this
 * thread can name them, so this is their table. */
static __thread struct xc_tls_ent tls_pt[XC_TLS_CACHE];
static pthread_key_t pt_key;	/* its destructor retires them at thread exit */

static void make_dead(struct xc_queue *q);
static void pt_exit(void *arg);

/* ---- helpers -------------------------------------------------------------- */

static bool dbg(void)
{
	return xs_log_enabled(XS_LOG_DEBUG);
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static const char *kind_name(enum xc_kind k)
{
	return k == XC_LEGACY ? "legacy default" :
	       k == XC_PER_THREAD ? "per-thread default" : "stream";
}

static void atomic_max_u64(atomic_uint_fast64_t *a, uint64_t v)
{
	uint64_t cur = atomic_load(a);

	while (cur < v && !atomic_compare_exchange_weak(a, &cur, v))
		;
}

/* Our own waits and records must not break another thread's stream capture
 * in global mode: run them in relaxed mode. */
static CUstreamCaptureMode relax(bool *swapped)
{
	CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;

	*swapped = xc_real.exchange_capture_mode &&
		   xc_real.exchange_capture_mode(&m) == CUDA_SUCCESS;
	return m;
}

static void unrelax(bool swapped, CUstreamCaptureMode m)
{
	if (swapped)
		xc_real.exchange_capture_mode(&m);
}

/*
 * Wait until @ev completed or @deadline (CLOCK_MONOTONIC ns) passed: 0,
 * -ETIMEDOUT or -EIO.  It polls (a yield, then sleeps of 10 us growing to
 * 100 us) rather than blocking in cuEventSynchronize, so that the deadline
 * (XSCHED_CUDA_HOLD_MAX_MS) holds even when the awaited work waits for the
 * host.
 */
static int wait_event(CUevent ev, uint64_t deadline)
{
	uint64_t ns = 0;
	bool sw;
	CUstreamCaptureMode m = relax(&sw);
	int ret;

	for (;;) {
		CUresult r = xc_real.event_query(ev);

		if (r == CUDA_SUCCESS) {
			ret = 0;
			break;
		}
		if (r != CUDA_ERROR_NOT_READY) {
			ret = -EIO;
			break;
		}
		if (xs_now_ns() >= deadline) {
			ret = -ETIMEDOUT;
			break;
		}
		if (!ns) {
			sched_yield();
			ns = 10000;
		} else {
			struct timespec ts = { 0, (long)ns };

			nanosleep(&ts, NULL);
			if (ns < 100000)
				ns *= 2;
		}
	}
	unrelax(sw, m);
	return ret;
}

/* The handle that names @q's stream from any thread (per-thread: only from
 * its owner). */
static CUstream queue_stream(const struct xc_queue *q)
{
	switch (q->kind) {
	case XC_LEGACY:
		return CU_STREAM_LEGACY;
	case XC_PER_THREAD:
		return CU_STREAM_PER_THREAD;
	default:
		return q->handle;
	}
}

static bool stream_capturing(const struct xc_queue *q)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;

	if (!xc_real.stream_is_capturing)
		return false;
	if (xc_real.stream_is_capturing(queue_stream(q), &st) != CUDA_SUCCESS)
		return false;
	return st != CU_STREAM_CAPTURE_STATUS_NONE;
}

/* Locked q: make an event in q's context. */
static CUevent make_event(struct xc_queue *q)
{
	CUcontext old;
	CUevent ev = NULL;

	if (xc_real.ctx_push(q->ctx) != CUDA_SUCCESS)
		return NULL;
	if (xc_real.event_create(&ev, CU_EVENT_DISABLE_TIMING) !=
	    CUDA_SUCCESS)
		ev = NULL;
	xc_real.ctx_pop(&old);
	return ev;
}

/* Locked q: record @ev on q's stream from any thread (not per-thread). */
static CUresult record_on(struct xc_queue *q, CUevent ev)
{
	CUcontext old;
	bool sw;
	CUstreamCaptureMode m;
	CUresult r;

	if (xc_real.ctx_push(q->ctx) != CUDA_SUCCESS)
		return CUDA_ERROR_INVALID_CONTEXT;
	m = relax(&sw);
	r = xc_real.event_record(ev, queue_stream(q));
	unrelax(sw, m);
	xc_real.ctx_pop(&old);
	return r;
}

/* ---- set-up --------------------------------------------------------------- */

static void *(*real_dlsym_fn)(void *, const char *);

/* dlsym() runs before anything else is set up (a sanitizer runtime calls it
 * while it initialises itself): this path must not be instrumented. */
#define XC_EARLY __attribute__((no_sanitize("address", "undefined")))

XC_EARLY static void *real_dlsym(void *h, const char *name)
{
	void *(*f)(void *, const char *) = __atomic_load_n(&real_dlsym_fn, __ATOMIC_ACQUIRE);

	if (!f) {
		f = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
		if (!f)
			f = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
		if (!f)
			return NULL;
		__atomic_store_n(&real_dlsym_fn, f, __ATOMIC_RELEASE);
	}
	return f(h, name);
}

static void fork_prepare(void)
{
	pthread_rwlock_wrlock(&tab.lock);
}

static void fork_parent(void)
{
	pthread_rwlock_unlock(&tab.lock);
}

/* The child starts with no queues: its parent's streams are not its own
 * (CUDA does not carry over fork), and nothing the parent's threads held may
 * be waited for here.  The parent's queue objects are abandoned. */
static void fork_child(void)
{
	unsigned int i;

	pthread_rwlock_init(&tab.lock, NULL);
	memset(tab.slot, 0, sizeof(tab.slot));
	tab.used = 0;
	tab.all = NULL;
	atomic_fetch_add(&tab.gen, 1);
	for (i = 0; i < XC_MAX_DEV; i++) {
		pthread_mutex_init(&doms[i].lock, NULL);
		atomic_store(&doms[i].nlive, 0);
		atomic_store(&doms[i].max_prio, INT_MIN);
		atomic_store(&doms[i].min_prio, INT_MAX);
	}
}

static void print_stats(void)
{
	struct xc_queue *q;

	if (!xs_log_enabled(XS_LOG_INFO))
		return;
	for (q = tab.all; q; q = q->all_next) {
		if (!atomic_load(&q->live))
			continue;
		xs_info("cuda: q%u (%s %p, ctx %p, dev %d, prio %d): %llu scheduled calls, %llu holds for %llu us, %llu waits for in-flight room",
			q->id, kind_name(q->kind), (void *)q->handle, (void *)q->ctx, q->dev,
			q->prio, (unsigned long long)atomic_load(&q->launched),
			(unsigned long long)atomic_load(&q->holds),
			(unsigned long long)atomic_load(&q->hold_ns) / 1000,
			(unsigned long long)atomic_load(&q->cap_waits));
	}
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static atomic_bool init_ok;
static void *cuda_handle;	/* the libcuda the real functions came from */

#define REAL(field, sym) (xc_real.field = (__typeof__(xc_real.field))real_dlsym(h, sym))

static void do_init(void)
{
	const struct xs_config *cfg = xs_config();
	const char *s;
	unsigned int i, miss = 0;
	void *h;

	tls_in_init = true;
	h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h) {
		xs_warn("cuda: libcuda.so.1 cannot be loaded (%s); nothing is scheduled",
			dlerror());
		tls_in_init = false;
		return;
	}
	cuda_handle = h;
	for (i = 0; i < xc_nentries; i++) {
		*xc_entries[i].real = real_dlsym(h, xc_entries[i].name);
		if (!*xc_entries[i].real) {
			miss++;
			if (dbg())
				xs_debug("cuda: %s is not in this libcuda; its hook is never handed out",
					 xc_entries[i].name);
		}
	}
	REAL(ctx_get_current, "cuCtxGetCurrent");
	REAL(ctx_push, "cuCtxPushCurrent_v2");
	REAL(ctx_pop, "cuCtxPopCurrent_v2");
	REAL(ctx_get_device, "cuCtxGetDevice");
	REAL(stream_get_ctx, "cuStreamGetCtx");
	REAL(stream_get_priority, "cuStreamGetPriority");
	REAL(stream_is_capturing, "cuStreamIsCapturing");
	REAL(stream_is_capturing_ptsz, "cuStreamIsCapturing_ptsz");
	REAL(event_create, "cuEventCreate");
	REAL(event_destroy, "cuEventDestroy_v2");
	REAL(event_record, "cuEventRecord");
	REAL(event_record_ptsz, "cuEventRecord_ptsz");
	REAL(event_synchronize, "cuEventSynchronize");
	REAL(event_query, "cuEventQuery");
	REAL(exchange_capture_mode, "cuThreadExchangeStreamCaptureMode");
	if (!xc_real.ctx_get_current || !xc_real.ctx_push || !xc_real.ctx_pop ||
	    !xc_real.ctx_get_device || !xc_real.stream_get_ctx ||
	    !xc_real.stream_get_priority || !xc_real.event_create ||
	    !xc_real.event_destroy || !xc_real.event_record ||
	    !xc_real.event_query) {
		xs_warn("cuda: libcuda.so.1 lacks functions the scheduler needs; nothing is scheduled");
		tls_in_init = false;
		return;
	}

	cfg_threshold = cfg->threshold;
	/* Progress events every `batch` calls, but never more than XC_RING - 2
	 * per threshold. */
	cfg_step = cfg->batch;
	if (cfg_step < (cfg_threshold + XC_RING - 3) / (XC_RING - 2))
		cfg_step = (cfg_threshold + XC_RING - 3) / (XC_RING - 2);
	cfg_hold_max_ns = 10000ULL * 1000000ULL;
	s = getenv("XSCHED_CUDA_HOLD_MAX_MS");
	if (s && *s) {
		char *end;
		unsigned long long v = strtoull(s, &end, 10);

		if (*end || !v)
			xs_warn("cuda: XSCHED_CUDA_HOLD_MAX_MS=%s is not a positive number of ms; using 10000", s);
		else
			cfg_hold_max_ns = v * 1000000ULL;
	}
	cfg_hyst_ns = 500000;
	s = getenv("XSCHED_HYSTERESIS_US");
	if (s && *s) {
		char *end;
		unsigned long long v = strtoull(s, &end, 10);

		if (*end || v > 1000000)
			xs_warn("cuda: XSCHED_HYSTERESIS_US=%s is not a number of us up to 1000000; using 500", s);
		else
			cfg_hyst_ns = v * 1000ULL;
	}
	for (i = 0; i < XC_MAX_DEV; i++) {
		pthread_mutex_init(&doms[i].lock, NULL);
		atomic_store(&doms[i].max_prio, INT_MIN);
		atomic_store(&doms[i].min_prio, INT_MAX);
	}
	pthread_key_create(&pt_key, pt_exit);
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	atexit(print_stats);
	xs_info("cuda: interposer ready: Lv1, threshold %u, progress every %u calls, hysteresis %llu us, hold limit %llu ms; %u of %u hooked symbols absent from this libcuda",
		cfg_threshold, cfg_step, (unsigned long long)(cfg_hyst_ns / 1000),
		(unsigned long long)(cfg_hold_max_ns / 1000000), miss, xc_nentries);
	atomic_store(&init_ok, true);
	tls_in_init = false;
}

bool xc_init(void)
{
	if (atomic_load_explicit(&init_ok, memory_order_acquire))
		return true;
	if (tls_in_init)	/* libcuda's own loading called back into us */
		return false;
	pthread_once(&init_once, do_init);
	return atomic_load(&init_ok);
}

/* ---- the stream table ---------------------------------------------------- */

static unsigned int hash_h(CUstream h)
{
	uint64_t x = (uint64_t)(uintptr_t)h;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (unsigned int)x & (XC_TAB_SIZE - 1);
}

/* tab.lock held (read or write): the live mapping of @h, or NULL. */
static struct xc_queue *tab_find(CUstream h)
{
	unsigned int i, k = hash_h(h);

	for (i = 0; i < XC_TAB_SIZE; i++) {
		unsigned int s = (k + i) & (XC_TAB_SIZE - 1);

		if (!tab.slot[s].q)
			return NULL;
		if (tab.slot[s].q != XC_TOMB && tab.slot[s].h == h)
			return tab.slot[s].q;
	}
	return NULL;
}

/* tab.lock held for writing. */
static bool tab_insert(CUstream h, struct xc_queue *q)
{
	unsigned int i, k = hash_h(h);

	if (tab.used >= XC_TAB_SIZE - XC_TAB_SIZE / 8) {
		/* Too many tombstones or streams: rebuild without tombstones. */
		unsigned int j, n = 0;

		for (j = 0; j < XC_TAB_SIZE; j++)
			if (tab.slot[j].q && tab.slot[j].q != XC_TOMB)
				n++;
		if (n >= XC_TAB_SIZE - XC_TAB_SIZE / 8)
			return false;
		{
			static __typeof__(tab.slot) old;

			memcpy(old, tab.slot, sizeof(old));
			memset(tab.slot, 0, sizeof(tab.slot));
			tab.used = 0;
			for (j = 0; j < XC_TAB_SIZE; j++)
				if (old[j].q && old[j].q != XC_TOMB)
					tab_insert(old[j].h, old[j].q);
		}
	}
	for (i = 0; i < XC_TAB_SIZE; i++) {
		unsigned int s = (k + i) & (XC_TAB_SIZE - 1);

		if (!tab.slot[s].q || tab.slot[s].q == XC_TOMB) {
			if (!tab.slot[s].q)
				tab.used++;
			tab.slot[s].h = h;
			tab.slot[s].q = q;
			return true;
		}
	}
	return false;
}

static void tab_remove(CUstream h)
{
	unsigned int i, k = hash_h(h);

	for (i = 0; i < XC_TAB_SIZE; i++) {
		unsigned int s = (k + i) & (XC_TAB_SIZE - 1);

		if (!tab.slot[s].q)
			return;
		if (tab.slot[s].q != XC_TOMB && tab.slot[s].h == h) {
			tab.slot[s].q = XC_TOMB;
			return;
		}
	}
}

/*
 * A new queue for a stream (tab.lock held for writing).  Only query calls:
 * the stream's context, device and priority.  NULL if the driver cannot
 * describe it (logged by the caller).
 */
static struct xc_queue *queue_new(enum xc_kind kind, CUstream h, CUcontext ctx)
{
	struct xc_queue *q;
	CUcontext old;
	CUdevice dev = 0;
	int prio = 0;

	if (atomic_load(&tab.nqueues) >= XC_MAX_QUEUES) {
		if (!tab.full_warned)
			xs_warn("cuda: %u streams seen; further streams are not scheduled",
				XC_MAX_QUEUES);
		tab.full_warned = true;
		return NULL;
	}
	if (kind == XC_EXPLICIT) {
		if (xc_real.stream_get_ctx(h, &ctx) != CUDA_SUCCESS || !ctx)
			return NULL;
		if (xc_real.stream_get_priority(h, &prio) != CUDA_SUCCESS)
			prio = 0;
	}
	if (!ctx || xc_real.ctx_push(ctx) != CUDA_SUCCESS)
		return NULL;
	if (xc_real.ctx_get_device(&dev) != CUDA_SUCCESS)
		dev = -1;
	xc_real.ctx_pop(&old);
	if (dev < 0 || dev >= XC_MAX_DEV)
		return NULL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->id = atomic_fetch_add(&tab.nqueues, 1) + 1;
	q->kind = kind;
	q->handle = kind == XC_EXPLICIT ? h : NULL;
	q->ctx = ctx;
	q->dev = dev;
	q->cuda_prio = prio;
	q->prio = -prio;
	q->owner = kind == XC_PER_THREAD ? gettid_() : 0;
	pthread_mutex_init(&q->lock, NULL);
	q->all_next = tab.all;
	tab.all = q;
	if (dbg())
		xs_debug("cuda: %s %p (ctx %p) -> q%u created (at its first hooked call), CUDA priority %d -> prio %d, device %d",
			 kind_name(kind), (void *)h, (void *)ctx, q->id, prio, q->prio, dev);
	return q;
}

static void pt_exit(void *arg)
{
	unsigned int i;

	(void)arg;
	for (i = 0; i < XC_TLS_CACHE; i++) {
		if (tls_pt[i].q && tls_pt[i].gen == atomic_load(&tab.gen))
			make_dead(tls_pt[i].q);
		tls_pt[i].q = NULL;
	}
}

static struct xc_queue *lookup_per_thread(CUcontext ctx, uint64_t gen)
{
	struct xc_queue *q;
	unsigned int i, free_slot = XC_TLS_CACHE;

	for (i = 0; i < XC_TLS_CACHE; i++) {
		if (tls_pt[i].q && tls_pt[i].key == (uintptr_t)ctx && tls_pt[i].gen == gen &&
		    !atomic_load(&tls_pt[i].q->dead))
			return tls_pt[i].q;
		if (!tls_pt[i].q || tls_pt[i].gen != gen || atomic_load(&tls_pt[i].q->dead))
			free_slot = i;
	}
	if (free_slot == XC_TLS_CACHE)
		return NULL;	/* a fifth context in one thread: not scheduled */
	pthread_rwlock_wrlock(&tab.lock);
	q = queue_new(XC_PER_THREAD, NULL, ctx);
	pthread_rwlock_unlock(&tab.lock);
	if (!q)
		return NULL;
	tls_pt[free_slot].kind = XC_PER_THREAD;
	tls_pt[free_slot].key = (uintptr_t)ctx;
	tls_pt[free_slot].q = q;
	tls_pt[free_slot].gen = gen;
	pthread_setspecific(pt_key, (void *)1);	/* so that pt_exit runs */
	return q;
}

/* Which queue a call through @e on @h belongs to; NULL: not scheduled. */
static struct xc_queue *lookup(const struct xc_entry *e, CUstream h)
{
	enum xc_kind kind;
	uintptr_t key;
	CUcontext ctx = NULL;
	uint64_t gen = atomic_load_explicit(&tab.gen, memory_order_acquire);
	struct xc_queue *q;
	unsigned int i;

	if (!h)
		kind = e->per_thread ? XC_PER_THREAD : XC_LEGACY;
	else if (h == CU_STREAM_LEGACY)
		kind = XC_LEGACY;
	else if (h == CU_STREAM_PER_THREAD)
		kind = XC_PER_THREAD;
	else
		kind = XC_EXPLICIT;
	if (kind != XC_EXPLICIT) {
		if (xc_real.ctx_get_current(&ctx) != CUDA_SUCCESS || !ctx)
			return NULL;
		key = (uintptr_t)ctx;
	} else {
		key = (uintptr_t)h;
	}
	if (kind == XC_PER_THREAD)
		return lookup_per_thread(ctx, gen);
	for (i = 0; i < XC_TLS_CACHE; i++) {
		struct xc_tls_ent *t = &tls_cache[i];

		if (t->q && t->key == key && t->kind == kind && t->gen == gen)
			return t->q;
	}

	q = NULL;
	{
		pthread_rwlock_rdlock(&tab.lock);
		if (kind == XC_EXPLICIT) {
			q = tab_find(h);
		} else {
			for (q = tab.all; q; q = q->all_next)
				if (q->kind == XC_LEGACY && q->ctx == ctx &&
				    !atomic_load(&q->dead))
					break;
		}
		pthread_rwlock_unlock(&tab.lock);
		if (!q) {
			pthread_rwlock_wrlock(&tab.lock);
			q = kind == XC_EXPLICIT ? tab_find(h) : NULL;
			if (!q) {
				q = queue_new(kind, h, ctx);
				if (q && kind == XC_EXPLICIT && !tab_insert(h, q)) {
					atomic_store(&q->dead, true);
					q = NULL;
				}
			}
			pthread_rwlock_unlock(&tab.lock);
		}
	}
	if (!q)
		return NULL;
	tls_cache[tls_next].kind = kind;
	tls_cache[tls_next].key = key;
	tls_cache[tls_next].q = q;
	tls_cache[tls_next].gen = gen;
	tls_next = (tls_next + 1) % XC_TLS_CACHE;
	return q;
}

/* ---- the policy: per device, over live queues ----------------------------- */

/* dom->lock held. */
static void dom_recompute(struct xc_dom *d)
{
	int n = atomic_load(&d->nlive), i, mx = INT_MIN, mn = INT_MAX;

	for (i = 0; i < n; i++) {
		struct xc_queue *q = atomic_load(&d->live[i]);

		if (q->prio > mx)
			mx = q->prio;
		if (q->prio < mn)
			mn = q->prio;
	}
	if (mx != atomic_load(&d->max_prio) && mn < mx && dbg())
		xs_debug("cuda: device %ld: priorities %d..%d live: lower streams are held while a higher one has work (Lv1, threshold %u)",
			 (long)(d - doms), mn, mx, cfg_threshold);
	atomic_store(&d->max_prio, mx);
	atomic_store(&d->min_prio, mn);
}

static void make_live(struct xc_queue *q)
{
	struct xc_dom *d = &doms[q->dev];
	int n;

	pthread_mutex_lock(&d->lock);
	if (!atomic_load(&q->live) && !atomic_load(&q->dead)) {
		n = atomic_load(&d->nlive);
		if (n < XC_DOM_MAX) {
			atomic_store(&d->live[n], q);
			atomic_store(&d->nlive, n + 1);
			dom_recompute(d);
		} else if (!d->full_warned) {
			d->full_warned = true;
			xs_warn("cuda: device %d has %d live streams; q%u and later ones are not seen by the policy",
				q->dev, XC_DOM_MAX, q->id);
		}
		atomic_store(&q->live, true);
	}
	pthread_mutex_unlock(&d->lock);
}

static void make_dead(struct xc_queue *q)
{
	struct xc_dom *d = &doms[q->dev];
	int n, i;

	pthread_mutex_lock(&d->lock);
	atomic_store(&q->dead, true);
	n = atomic_load(&d->nlive);
	for (i = 0; i < n; i++) {
		if (atomic_load(&d->live[i]) == q) {
			atomic_store(&d->live[i], atomic_load(&d->live[n - 1]));
			atomic_store(&d->nlive, n - 1);
			dom_recompute(d);
			break;
		}
	}
	pthread_mutex_unlock(&d->lock);
	/* Its events go once nobody waits on them. */
	pthread_mutex_lock(&q->lock);
	while (atomic_load(&q->users)) {
		pthread_mutex_unlock(&q->lock);
		sched_yield();
		pthread_mutex_lock(&q->lock);
	}
	if (!q->events_dead) {
		unsigned int i2;

		q->events_dead = true;
		if (q->marker)
			xc_real.event_destroy(q->marker);
		for (i2 = 0; i2 < XC_RING; i2++)
			if (q->prog[i2])
				xc_real.event_destroy(q->prog[i2]);
	}
	pthread_mutex_unlock(&q->lock);
}

/* A higher-priority live queue of @q's device with work in flight. */
static struct xc_queue *busy_higher(const struct xc_queue *q)
{
	struct xc_dom *d = &doms[q->dev];
	int n = atomic_load(&d->nlive), i;
	struct xc_queue *best = NULL;

	for (i = 0; i < n; i++) {
		struct xc_queue *o = atomic_load(&d->live[i]);

		if (!o || o == q || o->prio <= q->prio || atomic_load(&o->dead))
			continue;
		if (atomic_load(&o->launched) <= atomic_load(&o->done))
			continue;
		if (!best || o->prio > best->prio)
			best = o;
	}
	return best;
}

/*
 * Wait until @h's calls handed to the driver so far have completed: 0,
 * -ETIMEDOUT, or -EAGAIN when that cannot be known now (@h is being
 * captured into a graph, or its marker failed): the caller then does not
 * hold.
 */
static int wait_idle(struct xc_queue *h, uint64_t deadline)
{
	uint64_t l = atomic_load(&h->launched), seq;
	CUevent ev;
	int r;

	pthread_mutex_lock(&h->lock);
	if (h->events_dead || atomic_load(&h->dead)) {
		pthread_mutex_unlock(&h->lock);
		return -EAGAIN;
	}
	if (h->kind == XC_PER_THREAD) {
		/* Its owner marks it after every call while a lower queue is
		 * live; calls from before that were never marked. */
		ev = h->marker;
		seq = h->marker_seq;
		if (!ev) {
			pthread_mutex_unlock(&h->lock);
			atomic_max_u64(&h->done, l);
			return 0;
		}
	} else {
		if (h->capturing || stream_capturing(h)) {
			pthread_mutex_unlock(&h->lock);
			return -EAGAIN;
		}
		if (!h->marker)
			h->marker = make_event(h);
		if (!h->marker || record_on(h, h->marker) != CUDA_SUCCESS) {
			pthread_mutex_unlock(&h->lock);
			return -EAGAIN;
		}
		ev = h->marker;
		seq = l;
		h->marker_seq = l;
	}
	atomic_fetch_add(&h->users, 1);
	pthread_mutex_unlock(&h->lock);
	r = wait_event(ev, deadline);
	atomic_fetch_sub(&h->users, 1);
	if (r)
		return r == -ETIMEDOUT ? r : -EAGAIN;
	if (h->kind == XC_PER_THREAD && seq < l) {
		/* Nothing marks what came before the owner started marking. */
		pthread_mutex_lock(&h->lock);
		if (h->marker_seq == seq)
			seq = l;
		pthread_mutex_unlock(&h->lock);
	}
	atomic_max_u64(&h->done, seq);
	return 0;
}

/*
 * Hold @q while a higher-priority queue of its device has work, and for
 * XSCHED_HYSTERESIS_US after it went idle: an urgent job launched from
 * Python leaves short gaps between its own kernels, and a release into each
 * gap would let batch work in between them.
 */
static void hold_wait(struct xc_queue *q)
{
	uint64_t t0 = 0, idle_since = 0, now;
	struct xc_queue *h, *first = NULL;
	int r;

	for (;;) {
		h = busy_higher(q);
		if (h) {
			if (!t0) {
				t0 = xs_now_ns();
				first = h;
				if (dbg())
					xs_debug("cuda: hold q%u (prio %d, dev %d): q%u (prio %d) has %llu calls in flight",
						 q->id, q->prio, q->dev, h->id, h->prio,
						 (unsigned long long)(atomic_load(&h->launched) -
								      atomic_load(&h->done)));
			}
			r = wait_idle(h, t0 + cfg_hold_max_ns);
			if (r == -ETIMEDOUT) {
				now = xs_now_ns();
				xs_warn("cuda: q%u held for %llu ms by q%u; letting its call through (XSCHED_CUDA_HOLD_MAX_MS)",
					q->id, (unsigned long long)((now - t0) / 1000000), h->id);
				break;
			}
			if (r)
				break;
			idle_since = xs_now_ns();
			continue;
		}
		if (!t0)
			return;
		now = xs_now_ns();
		if (now - idle_since >= cfg_hyst_ns || now - t0 > cfg_hold_max_ns)
			break;
		{
			uint64_t left = cfg_hyst_ns - (now - idle_since);
			struct timespec ts = { 0, (long)(left < 20000 ? left : 20000) };

			nanosleep(&ts, NULL);
		}
	}
	{
		uint64_t dur = xs_now_ns() - t0;

		atomic_fetch_add(&q->holds, 1);
		atomic_fetch_add(&q->hold_ns, dur);
		if (dbg())
			xs_debug("cuda: release q%u (prio %d): q%u and higher idle for %llu us, held %llu.%03llu us",
				 q->id, q->prio, first->id,
				 (unsigned long long)(cfg_hyst_ns / 1000),
				 (unsigned long long)(dur / 1000),
				 (unsigned long long)(dur % 1000));
	}
}

/* Owner of a gated call, q->lock held: append a progress event at @seq. */
static void record_progress_locked(struct xc_queue *q, uint64_t seq)
{
	unsigned int slot;

	if (q->events_dead)
		return;
	if (q->prog_n == XC_RING) {	/* reuse the oldest */
		q->prog_head = (q->prog_head + 1) % XC_RING;
		q->prog_n--;
	}
	slot = (q->prog_head + q->prog_n) % XC_RING;
	if (!q->prog[slot])
		q->prog[slot] = make_event(q);
	if (!q->prog[slot] || record_on(q, q->prog[slot]) != CUDA_SUCCESS)
		return;
	q->prog_seq[slot] = seq;
	q->prog_n++;
}

/* Wait until fewer than threshold of q's calls are in flight. */
static void cap_wait(struct xc_queue *q)
{
	uint64_t deadline = 0;

	for (;;) {
		uint64_t l = atomic_load(&q->launched), d = atomic_load(&q->done);
		uint64_t need, seq = 0;
		CUevent ev = NULL;
		unsigned int i;
		int r;

		if (l - d < cfg_threshold)
			return;
		need = l - cfg_threshold + 1;
		pthread_mutex_lock(&q->lock);
		if (q->events_dead) {
			pthread_mutex_unlock(&q->lock);
			return;
		}
		/* Drop what is known complete; take the oldest that suffices. */
		while (q->prog_n && q->prog_seq[q->prog_head] <= d) {
			q->prog_head = (q->prog_head + 1) % XC_RING;
			q->prog_n--;
		}
		for (i = 0; i < q->prog_n; i++) {
			unsigned int s = (q->prog_head + i) % XC_RING;

			if (q->prog_seq[s] >= need) {
				ev = q->prog[s];
				seq = q->prog_seq[s];
				break;
			}
		}
		if (!ev) {
			/* Nothing marks a recent enough call (the queue ran
			 * unmarked before it was gated): mark everything. */
			if (q->capturing || (q->kind != XC_PER_THREAD && stream_capturing(q))) {
				pthread_mutex_unlock(&q->lock);
				atomic_max_u64(&q->done, l);	/* captured calls never run */
				return;
			}
			record_progress_locked(q, l);
			if (q->prog_n) {
				unsigned int s = (q->prog_head + q->prog_n - 1) % XC_RING;

				ev = q->prog[s];
				seq = q->prog_seq[s];
			}
		}
		if (!ev) {
			pthread_mutex_unlock(&q->lock);
			return;	/* cannot mark: do not hold */
		}
		atomic_fetch_add(&q->users, 1);
		pthread_mutex_unlock(&q->lock);
		atomic_fetch_add(&q->cap_waits, 1);
		if (!deadline)
			deadline = xs_now_ns() + cfg_hold_max_ns;
		r = wait_event(ev, deadline);
		atomic_fetch_sub(&q->users, 1);
		if (r == -ETIMEDOUT)
			xs_warn("cuda: q%u waited %llu ms for in-flight room; letting its call through (XSCHED_CUDA_HOLD_MAX_MS)",
				q->id, (unsigned long long)(cfg_hold_max_ns / 1000000));
		if (r)
			return;
		atomic_max_u64(&q->done, seq);
	}
}

/* ---- what the hooks call ---------------------------------------------------- */

static void log_first(struct xc_entry *e, CUstream h, const struct xc_queue *q)
{
	if (atomic_load_explicit(&e->used, memory_order_relaxed) ||
	    atomic_exchange(&e->used, true) || !dbg())
		return;
	if (q)
		xs_debug("cuda: first call of %s (stream %p -> q%u, %s): %s", e->name,
			 (void *)h, q->id, kind_name(q->kind),
			 e->cls == XC_SCHEDULED ? "scheduled" : "ordered pass-through");
	else
		xs_debug("cuda: first call of %s (stream %p): NOT scheduled (no current context, or the stream cannot be described); passed through in order",
			 e->name, (void *)h);
}

void xc_gate_enter(struct xc_gate *g, struct xc_entry *e, CUstream h)
{
	struct xc_queue *q = lookup(e, h);
	int maxp;

	g->q = q;
	g->gated = false;
	log_first(e, h, q);
	if (!q)
		return;
	if (!atomic_load_explicit(&q->live, memory_order_relaxed))
		make_live(q);
	if (atomic_load_explicit(&q->capturing, memory_order_relaxed)) {
		/* captured calls do not run now */
		g->q = NULL;
		return;
	}
	maxp = atomic_load_explicit(&doms[q->dev].max_prio, memory_order_relaxed);
	if (q->prio < maxp) {
		g->gated = true;
		cap_wait(q);
		hold_wait(q);
	}
}

void xc_gate_exit(struct xc_gate *g, bool ok)
{
	struct xc_queue *q = g->q;
	uint64_t n;

	if (!q || !ok)
		return;
	n = atomic_fetch_add(&q->launched, 1) + 1;
	if (g->gated && n % cfg_step == 0) {
		pthread_mutex_lock(&q->lock);
		if (q->kind == XC_PER_THREAD || !stream_capturing(q))
			record_progress_locked(q, n);
		pthread_mutex_unlock(&q->lock);
	}
	if (q->kind == XC_PER_THREAD &&
	    atomic_load_explicit(&doms[q->dev].min_prio, memory_order_relaxed) < q->prio) {
		/* Only this thread can name its stream: mark it for waiters. */
		CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;

		if (xc_real.stream_is_capturing_ptsz &&
		    xc_real.stream_is_capturing_ptsz(NULL, &st) == CUDA_SUCCESS &&
		    st != CU_STREAM_CAPTURE_STATUS_NONE)
			return;
		pthread_mutex_lock(&q->lock);
		if (!q->events_dead) {
			if (!q->marker)
				q->marker = make_event(q);
			if (q->marker && xc_real.event_record(q->marker, CU_STREAM_PER_THREAD) ==
			    CUDA_SUCCESS)
				q->marker_seq = n;
		}
		pthread_mutex_unlock(&q->lock);
	}
}

uint64_t xc_stream_launched(struct xc_entry *e, CUstream h, struct xc_queue **qp)
{
	struct xc_queue *q = xc_init() ? lookup(e, h) : NULL;

	log_first(e, h, q);
	*qp = q;
	return q ? atomic_load(&q->launched) : 0;
}

void xc_stream_done(struct xc_queue *q, uint64_t upto)
{
	if (q)
		atomic_max_u64(&q->done, upto);
}

unsigned int xc_ctx_snapshot(CUcontext ctx, uint64_t *snap, unsigned int max)
{
	struct xc_queue *q;
	unsigned int n = 0;

	(void)ctx;
	pthread_rwlock_rdlock(&tab.lock);
	for (q = tab.all; q && n + 2 <= max; q = q->all_next) {
		if (q->ctx != ctx || !atomic_load(&q->live))
			continue;
		snap[n++] = (uint64_t)(uintptr_t)q;
		snap[n++] = atomic_load(&q->launched);
	}
	pthread_rwlock_unlock(&tab.lock);
	return n;
}

void xc_ctx_synchronized(CUcontext ctx, const uint64_t *snap, unsigned int n)
{
	unsigned int i;

	(void)ctx;
	for (i = 0; i + 1 < n; i += 2)
		atomic_max_u64(&((struct xc_queue *)(uintptr_t)snap[i])->done, snap[i + 1]);
}

void xc_stream_destroyed(CUstream h)
{
	struct xc_queue *q;

	if (!h || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD || !xc_init())
		return;
	pthread_rwlock_wrlock(&tab.lock);
	q = tab_find(h);
	if (q)
		tab_remove(h);
	atomic_fetch_add(&tab.gen, 1);
	pthread_rwlock_unlock(&tab.lock);
	if (!q)
		return;
	if (dbg())
		xs_debug("cuda: stream %p destroyed -> q%u gone (%llu scheduled calls)",
			 (void *)h, q->id, (unsigned long long)atomic_load(&q->launched));
	make_dead(q);
}

void xc_ctx_destroyed(CUcontext ctx, int device)
{
	struct xc_queue *q, *list;

	if (!xc_init())
		return;
	pthread_rwlock_wrlock(&tab.lock);
	for (q = tab.all; q; q = q->all_next) {
		if (atomic_load(&q->dead))
			continue;
		if (device >= 0 ? q->dev != device : q->ctx != ctx)
			continue;
		if (q->kind == XC_EXPLICIT)
			tab_remove(q->handle);
		atomic_store(&q->dead, true);
	}
	atomic_fetch_add(&tab.gen, 1);
	list = tab.all;
	pthread_rwlock_unlock(&tab.lock);
	for (q = list; q; q = q->all_next)	/* off its device, events freed */
		if (device >= 0 ? q->dev == device : q->ctx == ctx)
			make_dead(q);
	if (dbg())
		xs_debug("cuda: context %p / device %d torn down: its streams' queues are gone",
			 (void *)ctx, device);
}

void xc_capture(struct xc_entry *e, CUstream h, bool begin)
{
	struct xc_queue *q = xc_init() ? lookup(e, h) : NULL;

	log_first(e, h, q);
	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	atomic_store(&q->capturing, begin);
	pthread_mutex_unlock(&q->lock);
	if (dbg())
		xs_debug("cuda: q%u capture %s: its calls are %s", q->id,
			 begin ? "begins" : "ends",
			 begin ? "recorded into a graph, not scheduled" : "scheduled again");
}

void xc_note_pass(struct xc_entry *e, CUstream h)
{
	log_first(e, h, NULL);
}

/* ---- symbol redirection ----------------------------------------------------- */

/* Does libcuda export an ABI of @name (name_vN, N >= 2) that has no hook
 * here?  Then an unknown address may be that ABI: no hook fits it. */
static bool newer_abi(const char *name, bool pt)
{
	char buf[128];
	unsigned int v, i;

	for (v = 2; v <= 9; v++) {
		snprintf(buf, sizeof(buf), "%s_v%u%s", name, v, pt ? "_ptsz" : "");
		if (!cuda_handle || !real_dlsym(cuda_handle, buf))
			continue;
		for (i = 0; i < xc_nentries; i++)
			if (!strcmp(xc_entries[i].name, buf))
				break;
		if (i == xc_nentries)
			return true;
	}
	return false;
}

void *xc_redirect(const char *how, const char *name, void *real, int ver,
		  uint64_t flags)
{
	bool pt = flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
	struct xc_entry *best = NULL;
	bool hooked_name = false;
	unsigned int i;

	if (!real || !name || name[0] != 'c' || name[1] != 'u')
		return real;
	for (i = 0; i < xc_nentries && !hooked_name; i++)
		hooked_name = !strcmp(xc_entries[i].base, name) ||
			      !strcmp(xc_entries[i].name, name);
	if (!hooked_name) {
		/* Not stream work (allocation, properties, modules, the
		 * runtime's own cuda* names through dlsym): untouched. */
		if (dbg() && (ver || strncmp(name, "cuda", 4)))
			xs_debug("cuda: %s(%s%s) -> pass-through (harmless: not stream work)", how,
				 name, ver ? (pt ? ", per-thread" : ", legacy") : "");
		return real;
	}
	if (!xc_init())
		return real;
	for (i = 0; i < xc_nentries; i++) {
		struct xc_entry *e = &xc_entries[i];

		if (*e->real == real || e->hook == real) {
			if (dbg())
				xs_debug("cuda: %s(%s%s) -> hook of %s (%s)", how, name,
					 ver ? (pt ? ", per-thread" : ", legacy") : "", e->name,
					 e->cls == XC_SCHEDULED ? "scheduled" : "ordered pass-through");
			return e->hook;
		}
	}
	if (ver) {
		/* cuGetProcAddress gave an address that is no exported symbol:
		 * pick our hook by what was asked (variant, ABI version). */
		for (i = 0; i < xc_nentries; i++) {
			struct xc_entry *e = &xc_entries[i];

			if (strcmp(e->base, name) || e->per_thread != pt || ver < e->since ||
			    !*e->real)
				continue;
			if (!best || e->since > best->since)
				best = e;
		}
		if (best && !newer_abi(name, pt)) {
			xs_warn("cuda: %s(%s, %d, %s) returned %p, which is no exported symbol; using the hook of %s (matched by name, version and flags)",
				how, name, ver, pt ? "per-thread" : "legacy", real, best->name);
			return best->hook;
		}
	}
	atomic_fetch_add(&stat_unmatched, 1);
	xs_warn("cuda: %s(%s, %d, 0x%llx) returned a variant this library does not know; calls through it are NOT scheduled",
		how, name, ver, (unsigned long long)flags);
	return real;
}

/* Every dlsym() of the process: driver functions get their hooks. */
XC_EARLY __attribute__((visibility("default"))) void *dlsym(void *handle, const char *name)
{
	void *r = real_dlsym(handle, name);

	/* RTLD_NEXT is relative to the caller, which the real dlsym now takes
	 * to be us: what it found is the next definition after this library. */
	if (handle == RTLD_NEXT || !r || name[0] != 'c' || name[1] != 'u')
		return r;
	return xc_redirect("dlsym", name, r, 0, 0);
}
