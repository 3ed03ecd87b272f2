// SPDX-License-Identifier: MIT
/*
 * Lv3 on ROCm: the HSA queue behind each HIP stream.  See hip/hsaq.h for what
 * this does and Documentation/hip.rst ("Lv3 on ROCm") for why.
 *
 * Locks: hq.lock protects the queue and stream tables and the job list; it
 * is never held while calling into the library's XQueue functions (the
 * helper thread drops it first), so it nests inside any XQueue lock the
 * launching thread holds.  Reading a queue's write index happens under
 * hq.lock, which hsa_queue_destroy takes before the real destroy: a queue is
 * never read after it is gone.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* XS_NO_HSA_H: build as without libhsa-runtime-dev (a compile check). */
#if __has_include(<hsa/hsa.h>) && !defined(XS_NO_HSA_H)
/* The real declarations: the hooks' signatures are checked against them. */
#include <hsa/hsa.h>
#else
/* ROCr's ABI (hsa.h), as much as the hooks use. */
typedef enum { HSA_STATUS_SUCCESS = 0, HSA_STATUS_ERROR = 0x1000 } hsa_status_t;
typedef struct hsa_agent_s { uint64_t handle; } hsa_agent_t;
typedef struct hsa_signal_s { uint64_t handle; } hsa_signal_t;
typedef uint32_t hsa_queue_type32_t;
typedef struct hsa_queue_s {
	hsa_queue_type32_t type;
	uint32_t features;
	void *base_address;
	hsa_signal_t doorbell_signal;
	uint32_t size;
	uint32_t reserved1;
	uint64_t id;
} hsa_queue_t;
hsa_status_t hsa_queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
			      void (*callback)(hsa_status_t status, hsa_queue_t *source,
					       void *data),
			      void *data, uint32_t private_segment_size,
			      uint32_t group_segment_size, hsa_queue_t **queue);
hsa_status_t hsa_queue_destroy(hsa_queue_t *queue);
#endif

#include "xsched-kfd.h"

#include "../../internal.h"
#include "hsaq.h"

#define HSAQ_QUEUES	128	/* live HSA queues of the process */
#define HSAQ_STREAMS	1024	/* streams observed */
#define HSAQ_JOBS	64
#define HSAQ_VERSION	"ROCR_1"	/* ROCr's version node */
#define HSAQ_RETRY_NS	(10ULL * 1000 * 1000)	/* between level attempts */

typedef hsa_status_t (*queue_create_fn)(hsa_agent_t, uint32_t, hsa_queue_type32_t,
					void (*)(hsa_status_t, hsa_queue_t *, void *),
					void *, uint32_t, uint32_t, hsa_queue_t **);
typedef hsa_status_t (*queue_destroy_fn)(hsa_queue_t *);
typedef uint64_t (*load_wi_fn)(const hsa_queue_t *);

static struct {
	queue_create_fn create;
	queue_destroy_fn destroy;
	load_wi_fn load_wi;
} real;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;

struct hq_queue {
	const hsa_queue_t *q;	/* NULL: free */
	uint64_t gen;		/* 1, 2, ...: tells a reused slot or ring apart */
	uint64_t ring, doorbell, id;
	uint32_t size, type;
};

struct hq_stream {
	const struct xsi_stream *s;	/* NULL: free */
	struct xsched_xqueue *xq;	/* with s, the key (a new XQueue is a new stream) */
	uint64_t gen;			/* its queue's gen; 0: not learned */
	unsigned int tries;
	bool gave_up;
	bool attached;			/* has its preemptor */
	bool attach_failed;
	bool job;			/* a job for it is queued or running */
	unsigned int want;		/* level wanted: 0 none, 1 (shared), 2, 3 */
	unsigned int level;		/* level set last (0: none) */
	uint64_t next_try_ns;
};

struct hq_job {
	unsigned int idx;		/* into streams[] */
	struct xsched_xqueue *xq;	/* holds a reference */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* jobs queued / the helper went idle */
	struct hq_queue queues[HSAQ_QUEUES];
	uint64_t gen;
	struct hq_stream streams[HSAQ_STREAMS];
	struct hq_job jobs[HSAQ_JOBS];
	unsigned int njobs;
	bool busy;			/* the helper runs a job */
	bool helper;			/* the helper thread exists */
	bool full_logged;
	char shared[1024];		/* the last sharing line */
	xs_hsaq_attach_fn attach;
} hq = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

/* Observed launches now between begin and end, and begins ever. */
static atomic_uint hq_active;
static atomic_ulong hq_begins;

/* This thread's observation (begin and end run on the launching thread). */
static _Thread_local struct {
	bool on;
	bool overlap;
	unsigned long seq;
	uint64_t max_gen;	/* queues created later are not in snap[] */
	unsigned int n;
	struct { uint64_t gen, wi; } snap[HSAQ_QUEUES];
} obs;

/*
 * fork(): the child has no helper thread, and the parent's HSA queues are
 * the parent's KFD queues, not the child's: it starts with empty tables
 * and a new lock (it is alone; another thread may have held the old one,
 * and no prepare handler takes it, as nothing the lock protects survives
 * into the child).  The parent's queued jobs keep their XQueue references
 * in the child (leaked: the child has only the parent's copies of them).
 * The default attach's platforms (the parent's /dev/xsched client and KFD
 * handle) are kept: a child has no GPU of its own on ROCm anyway.
 */
static void hq_fork_child(void)
{
	pthread_mutex_init(&hq.lock, NULL);
	pthread_cond_init(&hq.cond, NULL);
	memset(hq.queues, 0, sizeof(hq.queues));
	memset(hq.streams, 0, sizeof(hq.streams));
	hq.njobs = 0;
	hq.busy = false;
	hq.helper = false;
	hq.full_logged = false;
	hq.shared[0] = 0;
	atomic_store(&hq_active, 0);
	obs.on = false;
}

__attribute__((constructor)) static void hq_fork_register(void)
{
	if (pthread_atfork(NULL, NULL, hq_fork_child))
		xs_warn("hsa: pthread_atfork failed: a fork child gets no Lv3");
}

static void resolve_real(void)
{
	void *f;

	/* ROCr's node first; the stand-in runtimes of tests may have none. */
	f = xsi_real_dlvsym(RTLD_NEXT, "hsa_queue_create", HSAQ_VERSION);
	real.create = (queue_create_fn)(f ? f : xsi_real_dlsym(RTLD_NEXT, "hsa_queue_create"));
	f = xsi_real_dlvsym(RTLD_NEXT, "hsa_queue_destroy", HSAQ_VERSION);
	real.destroy = (queue_destroy_fn)(f ? f : xsi_real_dlsym(RTLD_NEXT, "hsa_queue_destroy"));
	f = xsi_real_dlvsym(RTLD_NEXT, "hsa_queue_load_write_index_relaxed", HSAQ_VERSION);
	real.load_wi = (load_wi_fn)(f ? f :
		       xsi_real_dlsym(RTLD_NEXT, "hsa_queue_load_write_index_relaxed"));
}

/*
 * Separate hardware queues for separate streams: CLR gives each stream its
 * own HSA queue until GPU_MAX_HW_QUEUES (default 4) per priority class, then
 * shares, and classes never share -- unless DEBUG_HIP_IGNORE_STREAM_PRIORITY
 * is on (a release flag of CLR; on by default in ROCm from mid 2026), which
 * puts every stream into the normal class's pool: an urgent stream then
 * shares a queue with batch ones (no Lv3 for either).  Both are read from
 * the environment when the runtime initialises (its first call), so set
 * them here, before that, unless the user did: the cap to XSCHED_HW_QUEUES
 * (0 keeps the runtime's default), the flag to 0.  A runtime without the
 * flag (ROCm 7.2 and older) ignores it.
 */
/* The user's own DEBUG_HIP_IGNORE_STREAM_PRIORITY ("": not set), copied:
 * the program may change its environment before the report. */
static char user_ignore_prio[32];

__attribute__((constructor)) static void hsaq_env(void)
{
	const char *ign = getenv("DEBUG_HIP_IGNORE_STREAM_PRIORITY");
	const char *v = getenv("XSCHED_HW_QUEUES");
	char *end = NULL;
	long n = 16;

	if (ign)
		snprintf(user_ignore_prio, sizeof(user_ignore_prio), "%s", ign);
	else
		setenv("DEBUG_HIP_IGNORE_STREAM_PRIORITY", "0", 0);
	if (v && *v) {
		n = strtol(v, &end, 10);
		if (*end || n < 0 || n > 1024) {
			/* The config's rule: a bad value is named, never ignored. */
			fprintf(stderr, "xsched: config: XSCHED_HW_QUEUES='%s' is not 0..1024; using 16\n",
				v);
			n = 16;
		}
	}
	if (!n || getenv("GPU_MAX_HW_QUEUES"))
		return;
	if (n == 16)
		setenv("GPU_MAX_HW_QUEUES", "16", 0);
	else
		setenv("GPU_MAX_HW_QUEUES", v, 0);
}

void xs_hsaq_env_report(void)
{
	if (user_ignore_prio[0] && strcmp(user_ignore_prio, "0"))
		xs_warn("hip: DEBUG_HIP_IGNORE_STREAM_PRIORITY=%s (set by the user, kept): the runtime may put streams of every priority on shared HSA queues; xsched still orders them at Lv1, but a stream on a shared queue gets no Lv3",
			user_ignore_prio);
}

/* ---- the hooks ------------------------------------------------------------ */

XS_EXPORT hsa_status_t hsa_queue_create(hsa_agent_t agent, uint32_t size,
					hsa_queue_type32_t type,
					void (*callback)(hsa_status_t status,
							 hsa_queue_t *source, void *data),
					void *data, uint32_t private_segment_size,
					uint32_t group_segment_size, hsa_queue_t **queue)
{
	hsa_status_t st;
	unsigned int i;

	pthread_once(&real_once, resolve_real);
	if (!real.create)
		return HSA_STATUS_ERROR;
	st = real.create(agent, size, type, callback, data, private_segment_size,
			 group_segment_size, queue);
	if (st != HSA_STATUS_SUCCESS || !queue || !*queue)
		return st;
	pthread_mutex_lock(&hq.lock);
	for (i = 0; i < HSAQ_QUEUES && hq.queues[i].q; i++)
		;
	if (i < HSAQ_QUEUES) {
		struct hq_queue *e = &hq.queues[i];

		e->q = *queue;
		e->gen = ++hq.gen;
		e->ring = (uint64_t)(uintptr_t)(*queue)->base_address;
		e->doorbell = (*queue)->doorbell_signal.handle;
		e->id = (*queue)->id;
		e->size = (*queue)->size;
		e->type = (uint32_t)type;
		xs_debug("hsa: queue id %llu created: ring %#llx, %u packets, doorbell %#llx, type %u",
			 (unsigned long long)e->id, (unsigned long long)e->ring,
			 e->size, (unsigned long long)e->doorbell, e->type);
	} else {
		xs_warn("hsa: more than %d HSA queues: queue id %llu is not tracked (no Lv3 for its streams)",
			HSAQ_QUEUES, (unsigned long long)(*queue)->id);
	}
	pthread_mutex_unlock(&hq.lock);
	return st;
}

XS_EXPORT hsa_status_t hsa_queue_destroy(hsa_queue_t *queue)
{
	unsigned int i;

	pthread_once(&real_once, resolve_real);
	if (!real.destroy)
		return HSA_STATUS_ERROR;
	pthread_mutex_lock(&hq.lock);
	for (i = 0; i < HSAQ_QUEUES; i++) {
		if (hq.queues[i].q != queue)
			continue;
		xs_debug("hsa: queue id %llu destroyed (ring %#llx)",
			 (unsigned long long)hq.queues[i].id,
			 (unsigned long long)hq.queues[i].ring);
		memset(&hq.queues[i], 0, sizeof(hq.queues[i]));
	}
	pthread_mutex_unlock(&hq.lock);
	return real.destroy(queue);
}

/* ---- tables (under hq.lock) ----------------------------------------------- */

static struct hq_queue *queue_by_gen(uint64_t gen)
{
	unsigned int i;

	for (i = 0; gen && i < HSAQ_QUEUES; i++)
		if (hq.queues[i].q && hq.queues[i].gen == gen)
			return &hq.queues[i];
	return NULL;
}

/* A stream entry is stale once the stream's XQueue changed (destroyed). */
static bool stream_live(const struct hq_stream *e)
{
	return e->s && xsi_stream_xqueue(e->s) == e->xq;
}

static struct hq_stream *stream_entry(const struct xsi_stream *s, bool create)
{
	struct xsched_xqueue *xq = xsi_stream_xqueue(s);
	struct hq_stream *free_e = NULL;
	unsigned int i;

	for (i = 0; i < HSAQ_STREAMS; i++) {
		struct hq_stream *e = &hq.streams[i];

		if (e->s == s && e->xq == xq)
			return e;
		if (!free_e && (!e->s || !stream_live(e)) && !e->job)
			free_e = e;
	}
	if (!create || !xq)
		return NULL;
	if (!free_e) {
		if (!hq.full_logged)
			xs_warn("hsa: more than %d streams: the queues of new ones are not learned",
				HSAQ_STREAMS);
		hq.full_logged = true;
		return NULL;
	}
	memset(free_e, 0, sizeof(*free_e));
	free_e->s = s;
	free_e->xq = xq;
	return free_e;
}

static unsigned int sharers(uint64_t gen)
{
	unsigned int i, n = 0;

	for (i = 0; i < HSAQ_STREAMS; i++)
		if (hq.streams[i].gen == gen && stream_live(&hq.streams[i]))
			n++;
	return n;
}

/* One line: every queue that live streams share, with their priorities. */
static void report_shared(void)
{
	char *p = hq.shared, *end = hq.shared + sizeof(hq.shared);
	bool mixed = false, any = false;
	unsigned int i, j;

	p += snprintf(p, (size_t)(end - p), "streams sharing a hardware queue:");
	for (i = 0; i < HSAQ_QUEUES && p < end; i++) {
		const struct hq_queue *q = &hq.queues[i];
		int32_t prio0 = 0;
		bool first = true;

		if (!q->q || sharers(q->gen) < 2)
			continue;
		any = true;
		p += snprintf(p, (size_t)(end - p), " queue %llu (ring %#llx):",
			      (unsigned long long)q->id, (unsigned long long)q->ring);
		for (j = 0; j < HSAQ_STREAMS && p < end; j++) {
			const struct hq_stream *e = &hq.streams[j];
			int32_t prio;

			if (e->gen != q->gen || !stream_live(e))
				continue;
			prio = xsi_stream_desc(e->s)->priority;
			if (first)
				prio0 = prio;
			else if (prio != prio0)
				mixed = true;
			p += snprintf(p, (size_t)(end - p), "%s stream %#lx (q%u, prio %d)",
				      first ? "" : ",", (unsigned long)xsi_stream_handle(e->s),
				      xsched_xqueue_id(e->xq), prio);
			first = false;
		}
		if (p < end)
			p += snprintf(p, (size_t)(end - p), ";");
	}
	if (!any) {
		hq.shared[0] = 0;
		return;
	}
	if (p < end)
		snprintf(p, (size_t)(end - p),
			 " no Lv3 for them (a suspend would stop every stream on the queue), Lv1 holds only%s",
			 mixed ? "; DIFFERENT PRIORITIES share a queue: the urgent work waits behind the other in its FIFO whatever xsched does (raise GPU_MAX_HW_QUEUES; DEBUG_HIP_IGNORE_STREAM_PRIORITY=1 pools every priority together)" : "");
	if (mixed)
		xs_warn("hsa: %s", hq.shared);
	else
		xs_info("hsa: %s", hq.shared);
}

/* ---- the helper thread: preemptors and levels, outside any XQueue lock ---- */

int xs_hsaq_attach_default(struct xsched_xqueue *xq, uint64_t ring, const char **via)
{
	static struct xsched_platform *simring;
	static struct xsched_kfd *kfd;
	static int sim_err, kfd_err;
	int ret = -ENOENT;

	/* One caller at a time (the helper thread): the statics need no lock. */
	if (!simring && !sim_err)
		sim_err = xs_sim_ring_open(&simring, NULL);
	if (simring) {
		*via = "the sim by ring address";
		ret = xsched_set_preemptor(xq, simring, ring);
		if (ret != -ENOENT)
			return ret;
	}
	if (!kfd && !kfd_err) {
		kfd_err = xsched_kfd_open(&kfd, -1, NULL);
		if (kfd_err)
			xs_warn("hsa: no kfd platform (%s): streams stay at Lv1",
				strerror(-kfd_err));
	}
	if (!kfd)
		return kfd_err ? kfd_err : ret;
	*via = "kfd";
	return xsched_set_preemptor(xq, xsched_kfd_platform(kfd), ring);
}

static void run_job(struct hq_stream *e, struct xsched_xqueue *xq)
{
	const char *via = "?";
	unsigned int want;
	uint64_t ring = 0;
	bool attach;
	int ret = 0;

	pthread_mutex_lock(&hq.lock);
	want = e->want;
	attach = want >= XSCHED_LV2 && !e->attached && !e->attach_failed;
	if (queue_by_gen(e->gen))
		ring = queue_by_gen(e->gen)->ring;
	pthread_mutex_unlock(&hq.lock);

	if (attach && ring) {
		ret = hq.attach(xq, ring, &via);
		pthread_mutex_lock(&hq.lock);
		e->attached = !ret;
		e->attach_failed = ret != 0;
		pthread_mutex_unlock(&hq.lock);
		if (ret) {
			xs_warn("hsa: q%u: no preemptor for ring %#llx: %s; it stays at Lv1",
				xsched_xqueue_id(xq), (unsigned long long)ring, strerror(-ret));
			return;
		}
		xs_info("hsa: q%u: preemptor for ring %#llx by %s", xsched_xqueue_id(xq),
			(unsigned long long)ring, via);
	}
	pthread_mutex_lock(&hq.lock);
	attach = e->attached;
	pthread_mutex_unlock(&hq.lock);
	if (!want || (want >= XSCHED_LV2 && !attach))
		return;
	ret = xs_set_level_live(xq, want);
	pthread_mutex_lock(&hq.lock);
	if (!ret)
		e->level = want;
	else
		e->next_try_ns = xs_now_ns() + HSAQ_RETRY_NS;
	pthread_mutex_unlock(&hq.lock);
	if (!ret)
		xs_info("hsa: q%u: now Lv%u%s", xsched_xqueue_id(xq), want,
			want == XSCHED_LV1 ? " (its hardware queue is shared)" : "");
	else if (ret != -EBUSY)
		xs_warn("hsa: q%u: cannot go to Lv%u: %s", xsched_xqueue_id(xq), want,
			strerror(-ret));
	else
		xs_debug("hsa: q%u: Lv%u waits: work buffered or held; again at a later launch",
			 xsched_xqueue_id(xq), want);
}

static void *helper(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&hq.lock);
	for (;;) {
		struct hq_job j;

		while (!hq.njobs)
			pthread_cond_wait(&hq.cond, &hq.lock);
		j = hq.jobs[0];
		memmove(&hq.jobs[0], &hq.jobs[1], --hq.njobs * sizeof(hq.jobs[0]));
		hq.busy = true;
		pthread_mutex_unlock(&hq.lock);
		run_job(&hq.streams[j.idx], j.xq);
		xs_xqueue_put(j.xq);
		pthread_mutex_lock(&hq.lock);
		hq.streams[j.idx].job = false;
		hq.busy = false;
		pthread_cond_broadcast(&hq.cond);
	}
	return NULL;
}

/* Locked: queue a job for @e, whose XQueue the caller is launching on. */
static void queue_job(struct hq_stream *e)
{
	pthread_t t;

	if (e->job || hq.njobs == HSAQ_JOBS)
		return;
	if (!hq.helper) {
		if (pthread_create(&t, NULL, helper, NULL)) {
			xs_warn("hsa: cannot start the helper thread: no Lv3");
			return;
		}
		pthread_detach(t);
		hq.helper = true;
	}
	if (!hq.attach)
		hq.attach = xs_hsaq_attach_default;
	/* The launch keeps the XQueue alive now; the job keeps it after. */
	atomic_fetch_add(&e->xq->refs, 1);
	hq.jobs[hq.njobs].idx = (unsigned int)(e - hq.streams);
	hq.jobs[hq.njobs].xq = e->xq;
	hq.njobs++;
	e->job = true;
	pthread_cond_broadcast(&hq.cond);
}

/* The level a stream alone on its queue goes to: XSCHED_LEVEL, else 3. */
static unsigned int wanted_level(void)
{
	const struct xs_config *c = xs_config();

	if (c->has_level && c->level)
		return c->level == XSCHED_LV1 ? 0 : c->level;
	return XSCHED_LV3;
}

/* ---- the call points ------------------------------------------------------ */

void xsi_hip_launch_observe_begin(struct xsi_stream *s)
{
	struct hq_stream *e;
	unsigned int i;

	obs.on = false;
	obs.overlap = atomic_fetch_add(&hq_active, 1) > 0;
	obs.seq = atomic_fetch_add(&hq_begins, 1) + 1;
	if (!s || !xsi_stream_xqueue(s))
		return;
	pthread_once(&real_once, resolve_real);
	pthread_mutex_lock(&hq.lock);
	e = stream_entry(s, true);
	if (!e || e->gave_up || !real.load_wi) {
		pthread_mutex_unlock(&hq.lock);
		return;
	}
	if (e->gen) {
		/* Known: only a level still to reach (not while buffered). */
		if (e->want && e->level != e->want && !e->job &&
		    !(e->want >= XSCHED_LV2 && e->attach_failed) &&
		    xs_now_ns() >= e->next_try_ns)
			queue_job(e);
		pthread_mutex_unlock(&hq.lock);
		return;
	}
	obs.n = 0;
	obs.max_gen = hq.gen;
	for (i = 0; i < HSAQ_QUEUES; i++) {
		if (!hq.queues[i].q)
			continue;
		obs.snap[obs.n].gen = hq.queues[i].gen;
		obs.snap[obs.n].wi = real.load_wi(hq.queues[i].q);
		obs.n++;
	}
	pthread_mutex_unlock(&hq.lock);
	obs.on = true;
}

/* Locked: the queues whose write index moved since begin; the last in *gen. */
static unsigned int moved(uint64_t *gen)
{
	unsigned int i, k, n = 0;

	for (i = 0; i < HSAQ_QUEUES; i++) {
		const struct hq_queue *q = &hq.queues[i];
		uint64_t wi;
		bool was = false;

		if (!q->q)
			continue;
		wi = real.load_wi(q->q);
		for (k = 0; k < obs.n; k++) {
			if (obs.snap[k].gen != q->gen)
				continue;
			was = true;
			if (obs.snap[k].wi != wi) {
				n++;
				*gen = q->gen;
			}
		}
		/* Made during the launch (a runtime that creates lazily). */
		if (!was && q->gen > obs.max_gen && wi) {
			n++;
			*gen = q->gen;
		}
	}
	return n;
}

void xsi_hip_launch_observe_end(struct xsi_stream *s)
{
	struct hq_stream *e;
	const struct hq_queue *q;
	uint64_t gen = 0;
	unsigned int n, share, i;
	const char *why;

	if (atomic_load(&hq_begins) != obs.seq)
		obs.overlap = true;	/* someone began while we were in */
	atomic_fetch_sub(&hq_active, 1);
	if (!obs.on || !s)
		return;
	obs.on = false;
	pthread_mutex_lock(&hq.lock);
	e = stream_entry(s, false);
	if (!e || e->gen) {
		pthread_mutex_unlock(&hq.lock);
		return;
	}
	n = moved(&gen);
	if (n == 1 && !obs.overlap) {
		q = queue_by_gen(gen);
		e->gen = gen;
		share = sharers(gen);
		xs_info("hsa: stream %#lx (q%u, prio %d): hardware queue %llu, ring %#llx, %u packets, doorbell %#llx (learned at launch %u)%s",
			(unsigned long)xsi_stream_handle(s), xsched_xqueue_id(e->xq),
			xsi_stream_desc(s)->priority, (unsigned long long)q->id,
			(unsigned long long)q->ring, q->size,
			(unsigned long long)q->doorbell, e->tries + 1,
			share > 1 ? ", shared" : "");
		if (share > 1) {
			/* Every stream on it goes (or stays) at Lv1. */
			for (i = 0; i < HSAQ_STREAMS; i++) {
				struct hq_stream *o = &hq.streams[i];

				if (o->gen != gen || !stream_live(o))
					continue;
				o->want = XSCHED_LV1;
				/* Never moved: still at the Lv1 it was made with. */
				if (!o->level && !o->job)
					o->level = XSCHED_LV1;
				if (o->level && o->level != XSCHED_LV1 && o != e &&
				    !o->job)
					xs_warn("hsa: q%u leaves Lv%u: its hardware queue is now shared",
						xsched_xqueue_id(o->xq), o->level);
			}
			report_shared();
			/* The others are not launching now: their next launch
			 * moves them (queue_job needs a live XQueue). */
		} else {
			e->want = wanted_level();
			if (e->want)
				queue_job(e);
		}
		pthread_mutex_unlock(&hq.lock);
		return;
	}
	why = n == 0 ? "no queue moved" :
	      n > 1 ? "several queues moved" : "another launch overlapped";
	if (++e->tries >= XS_HSAQ_TRIES) {
		e->gave_up = true;
		xs_warn("hsa: stream %#lx (q%u): hardware queue not learned in %u launches (last: %s); it stays at Lv1",
			(unsigned long)xsi_stream_handle(s), xsched_xqueue_id(e->xq),
			e->tries, why);
	} else {
		xs_debug("hsa: stream %#lx (q%u): hardware queue not learned at this launch: %s; again at the next",
			 (unsigned long)xsi_stream_handle(s), xsched_xqueue_id(e->xq), why);
	}
	pthread_mutex_unlock(&hq.lock);
}

/* ---- tests and the log ---------------------------------------------------- */

int xs_hsaq_stream_info(const struct xsi_stream *s, struct xs_hsaq_stream_info *out)
{
	const struct hq_queue *q;
	struct hq_stream *e;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&hq.lock);
	e = stream_entry(s, false);
	if (!e) {
		pthread_mutex_unlock(&hq.lock);
		return -ENOENT;
	}
	q = queue_by_gen(e->gen);
	if (q) {
		out->ring = q->ring;
		out->queue_id = q->id;
		out->sharers = sharers(e->gen);
	}
	out->tries = e->tries;
	out->gave_up = e->gave_up;
	out->preempted = e->attached;
	out->level = e->level;
	pthread_mutex_unlock(&hq.lock);
	return 0;
}

void xs_hsaq_set_attach(xs_hsaq_attach_fn fn)
{
	pthread_mutex_lock(&hq.lock);
	hq.attach = fn;
	pthread_mutex_unlock(&hq.lock);
}

void xs_hsaq_settle(void)
{
	pthread_mutex_lock(&hq.lock);
	while (hq.njobs || hq.busy)
		pthread_cond_wait(&hq.cond, &hq.lock);
	pthread_mutex_unlock(&hq.lock);
}

const char *xs_hsaq_shared_line(void)
{
	return hq.shared;
}
