// SPDX-License-Identifier: MIT
/*
 * A stand-in HIP runtime (libamdhip64.so.5) for tests only, over the HSA API
 * (the stand-in libhsa-runtime64.so.1 beside it runs that on the sim GPU).
 * It behaves like CLR where the interposer and the test programs can tell:
 *
 * - Exported with the real library's symbol version nodes (the map is made at
 *   build time from Debian's libamdhip64.so.5; a symbol the real library does
 *   not export fails the build).
 * - __hipRegisterFatBinary/__hipRegisterFunction record host stub -> device
 *   kernel name; a launch resolves its host stub on the calling thread's
 *   device, and a miss is hipErrorInvalidDeviceFunction, as in CLR.
 * - Streams take an HSA queue from a pool per priority class (high, normal,
 *   low) of at most GPU_MAX_HW_QUEUES (default 4): below the cap a new stream
 *   gets its own queue, at the cap it shares the least used one of its class;
 *   classes never share.  The null stream takes its queue from the normal
 *   pool; it waits for the blocking streams and they wait for it.
 *   HIP_STANDIN_TRACE=1 prints which queue each stream got.
 * - DEBUG_HIP_IGNORE_STREAM_PRIORITY (read at initialisation, as CLR reads
 *   its flags; anything but 0 is on): every stream goes to the normal pool
 *   (classes collapse) and reports priority 0 (the request is not echoed);
 *   the range stays -1..1.  HIP_STANDIN_PRIORITY_IGNORED=1 is the mode of
 *   a ROCm whose flag is on by default (ROCm from mid 2026): on unless the
 *   variable says 0.
 * - Every command is an AQL packet on the stream's queue: kernels as kernel
 *   dispatches, copies and memsets as agent dispatches, event records and
 *   stream waits as barrier-AND packets, stream callbacks as a marker whose
 *   completion runs the callback and a barrier that holds the queue until it
 *   returned.  Graphs are captured from one stream (kernels, copies, memsets)
 *   and replayed as the same packets.
 *
 * Kernels: the test kernels (tests/hip-sim/progs/simkernels.h) are matched by
 * name and signature, accumulate/mark(uint64_t *, const uint64_t *, uint32_t,
 * uint64_t, uint64_t), and run as the sim kernels of that name with one
 * workgroup per block (standin.h has the packet layout).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <linux/xsched_sim.h>

#include "standin.h"

#define EXPORT __attribute__((visibility("default")))
#define RING_SIZE 1024
#define MAX_QUEUES_PER_CLASS 16
#define MAX_KERNELS 256
#define NCLASS 3	/* high, normal, low */

/* ---- state ---- */

struct hq {			/* one HSA queue of the pool */
	hsa_queue_t *q;
	int cls;
	unsigned int users;
	struct standin_kernarg *kernargs;	/* one per ring slot */
	pthread_mutex_t lock;	/* packet slots and the last index of its streams */
};

struct node {			/* a captured command */
	enum { NODE_KERNEL, NODE_COPY, NODE_MEMSET } type;
	uint32_t sim_kernel, grid, block;
	struct standin_kernarg ka;
	uint64_t a0, a1, a2;
	struct node *next;
};

struct ihipGraph {
	struct node *head, **tail;
};

struct hipGraphExec {
	struct ihipGraph g;
};

struct ihipStream_t {
	struct hq *hq;
	int priority;
	unsigned int flags;
	bool null, per_thread;
	uint64_t last;		/* 1 + ring index of its newest packet; 0: none (hq->lock) */
	struct ihipGraph *capture;
	struct ihipStream_t *next;
};

struct ihipEvent_t {
	hsa_signal_t sig;	/* 1 while recorded and not reached, then 0 */
	unsigned int flags;
	bool recorded;
};

struct kernel {
	const void *host_stub;
	char name[128];
	uint32_t sim_kernel;	/* 0: no sim equivalent */
};

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static hipError_t g_init_err;
static hsa_agent_t g_agent;
static bool g_have_gpu;
static hsa_amd_memory_pool_t g_pool;
static unsigned int g_max_hw_queues = 4;
static bool g_ignore_prio;	/* DEBUG_HIP_IGNORE_STREAM_PRIORITY (see the top) */

/* g_lock: the pool, the stream list and the kernel registry.  Order: g_lock,
 * then an hq's lock. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hq g_hqs[NCLASS][MAX_QUEUES_PER_CLASS];
static unsigned int g_nhq[NCLASS];
static struct ihipStream_t *g_streams;
static struct ihipStream_t *g_null;
static struct kernel g_kernels[MAX_KERNELS];
static unsigned int g_nkernels;
/* Signals of internal markers, freed once every queue is idle (a barrier on
 * another queue may still refer to one until then). */
static hsa_signal_t *g_retired;
static size_t g_nretired, g_capretired;

static __thread int t_device;
static __thread hipError_t t_last_error = hipSuccess;
static __thread struct ihipStream_t *t_per_thread;
static pthread_key_t g_pt_key;

struct call_config {
	dim3 grid, block;
	size_t shmem;
	hipStream_t stream;
};
static __thread struct call_config t_configs[8];
static __thread int t_nconfigs;

static hipError_t ret(hipError_t e)
{
	if (e != hipSuccess)
		t_last_error = e;
	return e;
}

static void per_thread_exit(void *s);

static hsa_status_t find_pool(hsa_amd_memory_pool_t pool, void *data)
{
	hsa_amd_segment_t seg;

	(void)data;
	if (hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg) ==
	    HSA_STATUS_SUCCESS && seg == HSA_AMD_SEGMENT_GLOBAL) {
		g_pool = pool;
		return HSA_STATUS_INFO_BREAK;
	}
	return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_gpu(hsa_agent_t agent, void *data)
{
	hsa_device_type_t type;

	(void)data;
	if (hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type) == HSA_STATUS_SUCCESS &&
	    type == HSA_DEVICE_TYPE_GPU) {
		g_agent = agent;
		g_have_gpu = true;
		return HSA_STATUS_INFO_BREAK;
	}
	return HSA_STATUS_SUCCESS;
}

static void init_once(void)
{
	const char *env = getenv("GPU_MAX_HW_QUEUES");
	const char *ign = getenv("DEBUG_HIP_IGNORE_STREAM_PRIORITY");
	const char *mode = getenv("HIP_STANDIN_PRIORITY_IGNORED");

	g_ignore_prio = ign ? strcmp(ign, "0") != 0 : mode && !strcmp(mode, "1");
	if (env && atoi(env) > 0)
		g_max_hw_queues = (unsigned int)atoi(env);
	if (g_max_hw_queues > MAX_QUEUES_PER_CLASS)
		g_max_hw_queues = MAX_QUEUES_PER_CLASS;
	pthread_key_create(&g_pt_key, per_thread_exit);
	if (hsa_init() != HSA_STATUS_SUCCESS) {
		g_init_err = hipErrorNoDevice;
		return;
	}
	hsa_iterate_agents(find_gpu, NULL);
	if (!g_have_gpu) {
		g_init_err = hipErrorNoDevice;
		return;
	}
	hsa_amd_agent_iterate_memory_pools(g_agent, find_pool, NULL);
}

static hipError_t init(void)
{
	pthread_once(&g_once, init_once);
	return g_init_err;
}

/* ---- queues and packets ---- */

static int prio_class(int priority)
{
	return priority <= -1 ? 0 : priority >= 1 ? 2 : 1;	/* CLR's clamping */
}

static void queue_error(hsa_status_t st, hsa_queue_t *q, void *data)
{
	(void)data;
	fprintf(stderr, "hip-standin: HSA queue %llu failed (status %d)\n",
		(unsigned long long)q->id, (int)st);
}

/* A queue of class @cls for a new stream (g_lock held). */
static struct hq *acquire_queue(int cls)
{
	static const hsa_amd_queue_priority_t prio[NCLASS] = {
		HSA_AMD_QUEUE_PRIORITY_HIGH, HSA_AMD_QUEUE_PRIORITY_NORMAL,
		HSA_AMD_QUEUE_PRIORITY_LOW,
	};
	struct hq *h;

	if (g_nhq[cls] < g_max_hw_queues) {
		h = &g_hqs[cls][g_nhq[cls]];
		if (hsa_queue_create(g_agent, RING_SIZE, HSA_QUEUE_TYPE_MULTI, queue_error, NULL,
				     UINT32_MAX, UINT32_MAX, &h->q) != HSA_STATUS_SUCCESS)
			return NULL;
		hsa_amd_queue_set_priority(h->q, prio[cls]);
		h->kernargs = calloc(RING_SIZE, sizeof(*h->kernargs));
		pthread_mutex_init(&h->lock, NULL);
		h->cls = cls;
		g_nhq[cls]++;
	} else {
		h = &g_hqs[cls][0];
		for (unsigned int i = 1; i < g_nhq[cls]; i++)
			if (g_hqs[cls][i].users < h->users)
				h = &g_hqs[cls][i];
	}
	h->users++;
	return h;
}

/* Reserve a slot (h->lock held): wait while the ring is full. */
static uint64_t slot(struct hq *h)
{
	uint64_t idx = hsa_queue_add_write_index_screlease(h->q, 1);

	while (idx - hsa_queue_load_read_index_scacquire(h->q) >= h->q->size)
		usleep(50);
	return idx;
}

static void *packet_at(struct hq *h, uint64_t idx)
{
	return (hsa_kernel_dispatch_packet_t *)h->q->base_address + (idx & (h->q->size - 1));
}

/* Publish the packet at idx: header last, then the doorbell (h->lock held). */
static void publish(struct hq *h, uint64_t idx, uint16_t type, uint16_t setup)
{
	uint16_t header = (uint16_t)(type << HSA_PACKET_HEADER_TYPE) |
			  (1 << HSA_PACKET_HEADER_BARRIER) |
			  (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
			  (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);

	__atomic_store_n((uint32_t *)packet_at(h, idx), header | ((uint32_t)setup << 16),
			 __ATOMIC_RELEASE);
	hsa_signal_store_screlease(h->q->doorbell_signal, (hsa_signal_value_t)idx);
}

static void put_barrier_locked(struct hq *h, const hsa_signal_t *deps, int ndeps,
			       hsa_signal_t done, uint64_t *last)
{
	uint64_t idx = slot(h);
	hsa_barrier_and_packet_t *p = packet_at(h, idx);

	memset((char *)p + 4, 0, sizeof(*p) - 4);
	for (int i = 0; i < ndeps && i < 5; i++)
		p->dep_signal[i] = deps[i];
	p->completion_signal = done;
	publish(h, idx, HSA_PACKET_TYPE_BARRIER_AND, 0);
	if (last)
		*last = idx + 1;
}

static void retire(hsa_signal_t s)
{
	pthread_mutex_lock(&g_lock);
	if (g_nretired == g_capretired) {
		g_capretired = g_capretired ? 2 * g_capretired : 64;
		g_retired = realloc(g_retired, g_capretired * sizeof(*g_retired));
		if (!g_retired)
			abort();
	}
	g_retired[g_nretired++] = s;
	pthread_mutex_unlock(&g_lock);
}

static bool stream_idle_locked(struct ihipStream_t *s)
{
	return s->last == 0 || hsa_queue_load_read_index_scacquire(s->hq->q) >= s->last;
}

/* A marker on @s whose fresh signal reaches 0 when everything before it on
 * its stream is done (s->hq->lock held). */
static hsa_signal_t marker_locked(struct ihipStream_t *s)
{
	hsa_signal_t sig;

	hsa_signal_create(1, 0, NULL, &sig);
	put_barrier_locked(s->hq, NULL, 0, sig, &s->last);
	return sig;
}

static struct ihipStream_t *null_stream(void);

/*
 * Implicit synchronisation with the null stream, before a command on @s:
 * the null stream waits for every blocking stream, a blocking stream for
 * the null stream.  Returns the number of signals to wait on in deps.
 */
static int implicit_deps(struct ihipStream_t *s, hsa_signal_t *deps, int max)
{
	int n = 0;

	if (s->flags & hipStreamNonBlocking)
		return 0;
	pthread_mutex_lock(&g_lock);
	if (s->null) {
		for (struct ihipStream_t *o = g_streams; o && n < max; o = o->next) {
			if (o == s || (o->flags & hipStreamNonBlocking))
				continue;
			pthread_mutex_lock(&o->hq->lock);
			if (o->hq != s->hq && !stream_idle_locked(o))
				deps[n++] = marker_locked(o);
			pthread_mutex_unlock(&o->hq->lock);
		}
	} else if (g_null && g_null->hq != s->hq) {
		pthread_mutex_lock(&g_null->hq->lock);
		if (!stream_idle_locked(g_null))
			deps[n++] = marker_locked(g_null);
		pthread_mutex_unlock(&g_null->hq->lock);
	}
	pthread_mutex_unlock(&g_lock);
	return n;
}

/* Lock @s's queue for a new command, with its implicit dependencies queued
 * first (returns with s->hq->lock held). */
static void begin(struct ihipStream_t *s)
{
	hsa_signal_t deps[MAX_QUEUES_PER_CLASS * NCLASS + 1];
	int n = implicit_deps(s, deps, (int)(sizeof(deps) / sizeof(deps[0])));

	pthread_mutex_lock(&s->hq->lock);
	if (n == 0)
		return;
	for (int i = 0; i < n; i += 5)
		put_barrier_locked(s->hq, deps + i, n - i, (hsa_signal_t){ 0 }, &s->last);
	/* Retired only once queued (lock order: g_lock before an hq's lock). */
	pthread_mutex_unlock(&s->hq->lock);
	for (int i = 0; i < n; i++)
		retire(deps[i]);
	pthread_mutex_lock(&s->hq->lock);
}

static void end(struct ihipStream_t *s)
{
	pthread_mutex_unlock(&s->hq->lock);
}

static void put_kernel(struct ihipStream_t *s, uint32_t sim_kernel, uint32_t grid,
		       uint32_t block, const struct standin_kernarg *ka)
{
	uint64_t idx;
	hsa_kernel_dispatch_packet_t *p;

	begin(s);
	idx = slot(s->hq);
	p = packet_at(s->hq, idx);
	/* The slot's kernarg is free: its previous packet was consumed. */
	s->hq->kernargs[idx & (s->hq->q->size - 1)] = *ka;
	memset((char *)p + 4, 0, sizeof(*p) - 4);
	p->workgroup_size_x = (uint16_t)block;
	p->workgroup_size_y = 1;
	p->workgroup_size_z = 1;
	p->grid_size_x = grid * block;
	p->grid_size_y = 1;
	p->grid_size_z = 1;
	p->kernel_object = sim_kernel;
	p->kernarg_address = &s->hq->kernargs[idx & (s->hq->q->size - 1)];
	publish(s->hq, idx, HSA_PACKET_TYPE_KERNEL_DISPATCH,
		1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS);
	s->last = idx + 1;
	end(s);
}

static void put_agent(struct ihipStream_t *s, uint16_t op, uint64_t a0, uint64_t a1,
		      uint64_t a2)
{
	uint64_t idx;
	hsa_agent_dispatch_packet_t *p;

	begin(s);
	idx = slot(s->hq);
	p = packet_at(s->hq, idx);
	memset((char *)p + 4, 0, sizeof(*p) - 4);
	p->arg[0] = a0;
	p->arg[1] = a1;
	p->arg[2] = a2;
	publish(s->hq, idx, HSA_PACKET_TYPE_AGENT_DISPATCH, op);
	s->last = idx + 1;
	end(s);
}

/* Wait until everything queued on @s so far is done. */
static void wait_stream(struct ihipStream_t *s)
{
	hsa_signal_t sig;

	pthread_mutex_lock(&s->hq->lock);
	if (stream_idle_locked(s)) {
		pthread_mutex_unlock(&s->hq->lock);
		return;
	}
	sig = marker_locked(s);
	pthread_mutex_unlock(&s->hq->lock);
	hsa_signal_wait_scacquire(sig, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX,
				  HSA_WAIT_STATE_BLOCKED);
	retire(sig);
}

/* Free retired signals if no queue has a packet left (nothing refers to them). */
static void reap(void)
{
	pthread_mutex_lock(&g_lock);
	for (int c = 0; c < NCLASS; c++)
		for (unsigned int i = 0; i < g_nhq[c]; i++)
			if (hsa_queue_load_read_index_scacquire(g_hqs[c][i].q) !=
			    hsa_queue_load_write_index_scacquire(g_hqs[c][i].q))
				goto busy;
	for (size_t i = 0; i < g_nretired; i++)
		hsa_signal_destroy(g_retired[i]);
	g_nretired = 0;
busy:
	pthread_mutex_unlock(&g_lock);
}

/* ---- streams ---- */

static struct ihipStream_t *stream_new(int priority, unsigned int flags)
{
	struct ihipStream_t *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	if (priority < -1)
		priority = -1;
	if (priority > 1)
		priority = 1;
	s->priority = g_ignore_prio ? 0 : priority;
	s->flags = flags;
	pthread_mutex_lock(&g_lock);
	s->hq = acquire_queue(prio_class(s->priority));
	if (!s->hq) {
		pthread_mutex_unlock(&g_lock);
		free(s);
		return NULL;
	}
	s->next = g_streams;
	g_streams = s;
	pthread_mutex_unlock(&g_lock);
	/* For the suite's queue-pool test: which HSA queue a stream got. */
	if (getenv("HIP_STANDIN_TRACE"))
		fprintf(stderr, "hip-standin: stream priority %d -> HSA queue %llu ring %p class %d\n",
			priority, (unsigned long long)s->hq->q->id, s->hq->q->base_address,
			s->hq->cls);
	return s;
}

static void stream_free(struct ihipStream_t *s)
{
	struct ihipStream_t **pp;

	wait_stream(s);
	pthread_mutex_lock(&g_lock);
	for (pp = &g_streams; *pp && *pp != s; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = s->next;
	s->hq->users--;	/* the queue stays in the pool, as in CLR */
	pthread_mutex_unlock(&g_lock);
	free(s);
}

static struct ihipStream_t *null_stream(void)
{
	pthread_mutex_lock(&g_lock);
	if (!g_null) {
		pthread_mutex_unlock(&g_lock);
		struct ihipStream_t *s = stream_new(0, 0);

		pthread_mutex_lock(&g_lock);
		if (s && !g_null) {
			s->null = true;
			g_null = s;
		}
	}
	pthread_mutex_unlock(&g_lock);
	return g_null;
}

static void per_thread_exit(void *p)
{
	stream_free(p);
}

static struct ihipStream_t *per_thread_stream(void)
{
	if (!t_per_thread) {
		t_per_thread = stream_new(0, 0);
		if (t_per_thread) {
			t_per_thread->per_thread = true;
			pthread_setspecific(g_pt_key, t_per_thread);
		}
	}
	return t_per_thread;
}

/* The stream a handle names; @spt: the _spt entry points' meaning of 0. */
static struct ihipStream_t *resolve(hipStream_t stream, bool spt)
{
	if (init() != hipSuccess)
		return NULL;
	if (stream == hipStreamPerThread || (spt && stream == NULL))
		return per_thread_stream();
	if (stream == NULL)
		return null_stream();
	return stream;
}

#define STREAM_OR_FAIL(s, handle, spt)						\
	struct ihipStream_t *s = resolve(handle, spt);				\
	if (!s)									\
		return ret(g_init_err ? g_init_err : hipErrorOutOfMemory)

EXPORT hipError_t hipStreamCreateWithPriority(hipStream_t *stream, unsigned int flags,
					      int priority)
{
	hipError_t e = init();

	if (e)
		return ret(e);
	if (!stream || (flags & ~(unsigned int)hipStreamNonBlocking))
		return ret(hipErrorInvalidValue);
	*stream = stream_new(priority, flags);
	return *stream ? hipSuccess : ret(hipErrorOutOfMemory);
}

EXPORT hipError_t hipStreamCreateWithFlags(hipStream_t *stream, unsigned int flags)
{
	return hipStreamCreateWithPriority(stream, flags, 0);
}

EXPORT hipError_t hipStreamCreate(hipStream_t *stream)
{
	return hipStreamCreateWithPriority(stream, 0, 0);
}

EXPORT hipError_t hipStreamDestroy(hipStream_t stream)
{
	if (!stream || stream == hipStreamPerThread)
		return ret(hipErrorInvalidResourceHandle);
	stream_free(stream);
	return hipSuccess;
}

static hipError_t stream_sync(hipStream_t stream, bool spt)
{
	STREAM_OR_FAIL(s, stream, spt);
	/* The null stream waits for the blocking streams too. */
	if (s->null) {
		hsa_signal_t deps[MAX_QUEUES_PER_CLASS * NCLASS + 1];
		int n = implicit_deps(s, deps, (int)(sizeof(deps) / sizeof(deps[0])));

		for (int i = 0; i < n; i++) {
			hsa_signal_wait_scacquire(deps[i], HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX,
						  HSA_WAIT_STATE_BLOCKED);
			retire(deps[i]);
		}
	}
	wait_stream(s);
	reap();
	return hipSuccess;
}

EXPORT hipError_t hipStreamSynchronize(hipStream_t stream)
{
	return stream_sync(stream, false);
}

EXPORT hipError_t hipStreamSynchronize_spt(hipStream_t stream)
{
	return stream_sync(stream, true);
}

static hipError_t stream_query(hipStream_t stream, bool spt)
{
	bool idle;

	STREAM_OR_FAIL(s, stream, spt);
	pthread_mutex_lock(&s->hq->lock);
	idle = stream_idle_locked(s);
	pthread_mutex_unlock(&s->hq->lock);
	return idle ? hipSuccess : hipErrorNotReady;
}

EXPORT hipError_t hipStreamQuery(hipStream_t stream)
{
	return stream_query(stream, false);
}

EXPORT hipError_t hipStreamQuery_spt(hipStream_t stream)
{
	return stream_query(stream, true);
}

static hipError_t stream_priority(hipStream_t stream, int *priority, bool spt)
{
	STREAM_OR_FAIL(s, stream, spt);
	if (!priority)
		return ret(hipErrorInvalidValue);
	*priority = s->priority;
	return hipSuccess;
}

EXPORT hipError_t hipStreamGetPriority(hipStream_t stream, int *priority)
{
	return stream_priority(stream, priority, false);
}

EXPORT hipError_t hipStreamGetPriority_spt(hipStream_t stream, int *priority)
{
	return stream_priority(stream, priority, true);
}

static hipError_t stream_flags(hipStream_t stream, unsigned int *flags, bool spt)
{
	STREAM_OR_FAIL(s, stream, spt);
	if (!flags)
		return ret(hipErrorInvalidValue);
	*flags = s->flags;
	return hipSuccess;
}

EXPORT hipError_t hipStreamGetFlags(hipStream_t stream, unsigned int *flags)
{
	return stream_flags(stream, flags, false);
}

EXPORT hipError_t hipStreamGetFlags_spt(hipStream_t stream, unsigned int *flags)
{
	return stream_flags(stream, flags, true);
}

EXPORT int hipGetStreamDeviceId(hipStream_t stream)
{
	(void)stream;
	return init() == hipSuccess ? 0 : -1;	/* one device */
}

EXPORT hipError_t hipDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
	if (leastPriority)
		*leastPriority = 1;
	if (greatestPriority)
		*greatestPriority = -1;
	return hipSuccess;
}

EXPORT hipError_t hipDeviceSynchronize(void)
{
	hipError_t e = init();
	struct hq *hqs[NCLASS * MAX_QUEUES_PER_CLASS];
	int n = 0;

	if (e)
		return ret(e);
	pthread_mutex_lock(&g_lock);
	for (int c = 0; c < NCLASS; c++)
		for (unsigned int i = 0; i < g_nhq[c]; i++)
			hqs[n++] = &g_hqs[c][i];
	pthread_mutex_unlock(&g_lock);
	for (int i = 0; i < n; i++) {
		hsa_signal_t sig;

		hsa_signal_create(1, 0, NULL, &sig);
		pthread_mutex_lock(&hqs[i]->lock);
		put_barrier_locked(hqs[i], NULL, 0, sig, NULL);
		pthread_mutex_unlock(&hqs[i]->lock);
		hsa_signal_wait_scacquire(sig, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX,
					  HSA_WAIT_STATE_BLOCKED);
		retire(sig);
	}
	reap();
	return hipSuccess;
}

/* ---- devices ---- */

EXPORT hipError_t hipGetDeviceCount(int *count)
{
	hipError_t e = init();

	if (!count)
		return ret(hipErrorInvalidValue);
	*count = e ? 0 : 1;
	return e ? ret(e) : hipSuccess;
}

EXPORT hipError_t hipSetDevice(int device)
{
	hipError_t e = init();

	if (e)
		return ret(e);
	if (device != 0)
		return ret(hipErrorInvalidDevice);
	t_device = device;
	return hipSuccess;
}

EXPORT hipError_t hipGetDevice(int *device)
{
	hipError_t e = init();

	if (e)
		return ret(e);
	*device = t_device;
	return hipSuccess;
}

EXPORT hipError_t hipGetLastError(void)
{
	hipError_t e = t_last_error;

	t_last_error = hipSuccess;
	return e;
}

EXPORT hipError_t hipPeekAtLastError(void)
{
	return t_last_error;
}

EXPORT const char *hipGetErrorName(hipError_t e)
{
	switch (e) {
	case hipSuccess: return "hipSuccess";
	case hipErrorInvalidValue: return "hipErrorInvalidValue";
	case hipErrorOutOfMemory: return "hipErrorOutOfMemory";
	case hipErrorNoDevice: return "hipErrorNoDevice";
	case hipErrorInvalidDevice: return "hipErrorInvalidDevice";
	case hipErrorInvalidDeviceFunction: return "hipErrorInvalidDeviceFunction";
	case hipErrorInvalidConfiguration: return "hipErrorInvalidConfiguration";
	case hipErrorInvalidResourceHandle: return "hipErrorInvalidResourceHandle";
	case hipErrorNotReady: return "hipErrorNotReady";
	case hipErrorNotSupported: return "hipErrorNotSupported";
	case hipErrorStreamCaptureUnsupported: return "hipErrorStreamCaptureUnsupported";
	case hipErrorIllegalState: return "hipErrorIllegalState";
	default: return "hipErrorUnknown";
	}
}

EXPORT const char *hipGetErrorString(hipError_t e)
{
	switch (e) {
	case hipSuccess: return "no error";
	case hipErrorNoDevice: return "no ROCm-capable device is detected";
	case hipErrorInvalidDeviceFunction: return "invalid device function";
	default: return hipGetErrorName(e);
	}
}

/* ---- memory ---- */

EXPORT hipError_t hipMalloc(void **ptr, size_t size)
{
	hipError_t e = init();

	if (e)
		return ret(e);
	if (!ptr)
		return ret(hipErrorInvalidValue);
	if (size == 0) {
		*ptr = NULL;
		return hipSuccess;
	}
	if (hsa_amd_memory_pool_allocate(g_pool, size, 0, ptr) != HSA_STATUS_SUCCESS)
		return ret(hipErrorOutOfMemory);
	return hipSuccess;
}

EXPORT hipError_t hipFree(void *ptr)
{
	if (!ptr)
		return hipSuccess;
	hipDeviceSynchronize();	/* as CLR: nothing may still use it */
	return hsa_amd_memory_pool_free(ptr) == HSA_STATUS_SUCCESS ? hipSuccess :
	       ret(hipErrorInvalidValue);
}

EXPORT hipError_t hipHostMalloc(void **ptr, size_t size, unsigned int flags)
{
	(void)flags;
	if (!ptr || posix_memalign(ptr, 4096, size ? size : 1))
		return ret(hipErrorOutOfMemory);
	return hipSuccess;
}

EXPORT hipError_t hipHostFree(void *ptr)
{
	free(ptr);
	return hipSuccess;
}

/* Record a command in @s's capture instead of running it. */
static hipError_t capture_add(struct ihipStream_t *s, const struct node *n)
{
	struct node *c = malloc(sizeof(*c));

	if (!c)
		return ret(hipErrorOutOfMemory);
	*c = *n;
	c->next = NULL;
	*s->capture->tail = c;
	s->capture->tail = &c->next;
	return hipSuccess;
}

static hipError_t copy_on(hipStream_t stream, void *dst, const void *src, size_t n, bool spt,
			  bool sync)
{
	STREAM_OR_FAIL(s, stream, spt);
	if (n == 0)
		return hipSuccess;
	if (!dst || !src)
		return ret(hipErrorInvalidValue);
	if (s->capture)
		return capture_add(s, &(struct node){ .type = NODE_COPY, .a0 = (uintptr_t)dst,
						      .a1 = (uintptr_t)src, .a2 = n });
	put_agent(s, STANDIN_AGENT_COPY, (uintptr_t)dst, (uintptr_t)src, n);
	return sync ? stream_sync(stream, spt) : hipSuccess;
}

EXPORT hipError_t hipMemcpyAsync(void *dst, const void *src, size_t n, hipMemcpyKind kind,
				 hipStream_t stream)
{
	(void)kind;	/* all memory is addressable from the host here */
	return copy_on(stream, dst, src, n, false, false);
}

EXPORT hipError_t hipMemcpyAsync_spt(void *dst, const void *src, size_t n, hipMemcpyKind kind,
				     hipStream_t stream)
{
	(void)kind;
	return copy_on(stream, dst, src, n, true, false);
}

EXPORT hipError_t hipMemcpy(void *dst, const void *src, size_t n, hipMemcpyKind kind)
{
	(void)kind;
	return copy_on(NULL, dst, src, n, false, true);
}

EXPORT hipError_t hipMemcpy_spt(void *dst, const void *src, size_t n, hipMemcpyKind kind)
{
	(void)kind;
	return copy_on(NULL, dst, src, n, true, true);
}

EXPORT hipError_t hipMemcpyWithStream(void *dst, const void *src, size_t n, hipMemcpyKind kind,
				      hipStream_t stream)
{
	(void)kind;
	return copy_on(stream, dst, src, n, false, true);
}

EXPORT hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, void *src, size_t n, hipStream_t stream)
{
	return copy_on(stream, dst, src, n, false, false);
}

EXPORT hipError_t hipMemcpyDtoHAsync(void *dst, hipDeviceptr_t src, size_t n, hipStream_t stream)
{
	return copy_on(stream, dst, src, n, false, false);
}

EXPORT hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src, size_t n,
				     hipStream_t stream)
{
	return copy_on(stream, dst, src, n, false, false);
}

static hipError_t memset_on(hipStream_t stream, void *dst, int value, size_t n, bool spt,
			    bool sync)
{
	STREAM_OR_FAIL(s, stream, spt);
	if (n == 0)
		return hipSuccess;
	if (!dst)
		return ret(hipErrorInvalidValue);
	if (s->capture)
		return capture_add(s, &(struct node){ .type = NODE_MEMSET, .a0 = (uintptr_t)dst,
						      .a1 = (uint8_t)value, .a2 = n });
	put_agent(s, STANDIN_AGENT_MEMSET, (uintptr_t)dst, (uint8_t)value, n);
	return sync ? stream_sync(stream, spt) : hipSuccess;
}

EXPORT hipError_t hipMemsetAsync(void *dst, int value, size_t n, hipStream_t stream)
{
	return memset_on(stream, dst, value, n, false, false);
}

EXPORT hipError_t hipMemset(void *dst, int value, size_t n)
{
	return memset_on(NULL, dst, value, n, false, true);
}

EXPORT hipError_t hipMemset_spt(void *dst, int value, size_t n)
{
	return memset_on(NULL, dst, value, n, true, true);
}

/* ---- kernels ---- */

/* The test kernels' names, from "_Z<len><name><params>" or a plain C name;
 * the parameters must be (uint64_t *, const uint64_t *, uint32_t, uint64_t,
 * uint64_t), mangled "PmPKmjmm". */
static uint32_t sim_kernel_of(const char *mangled)
{
	static const struct { const char *name; uint32_t k; } known[] = {
		{ "accumulate", XSCHED_SIM_KERNEL_ACCUMULATE },
		{ "mark", XSCHED_SIM_KERNEL_MARK },
	};
	char name[64];
	const char *params = "PmPKmjmm";
	size_t len;
	char *endp;

	if (strncmp(mangled, "_Z", 2) == 0) {
		len = strtoul(mangled + 2, &endp, 10);
		if (len == 0 || len >= sizeof(name) || strlen(endp) < len)
			return 0;
		memcpy(name, endp, len);
		name[len] = 0;
		if (strcmp(endp + len, params) != 0)
			return 0;
	} else {
		snprintf(name, sizeof(name), "%s", mangled);
	}
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(name, known[i].name) == 0)
			return known[i].k;
	return 0;
}

EXPORT void **__hipRegisterFatBinary(const void *data)
{
	static void *module;	/* one code object holder; contents unused here */

	(void)data;
	return &module;
}

EXPORT void __hipRegisterFunction(void **modules, const void *hostFunction, char *deviceFunction,
				  const char *deviceName, unsigned int threadLimit, void *tid,
				  void *bid, dim3 *blockDim, dim3 *gridDim, int *wSize)
{
	(void)modules; (void)deviceFunction; (void)threadLimit; (void)tid; (void)bid;
	(void)blockDim; (void)gridDim; (void)wSize;
	pthread_mutex_lock(&g_lock);
	if (g_nkernels < MAX_KERNELS) {
		struct kernel *k = &g_kernels[g_nkernels++];

		k->host_stub = hostFunction;
		snprintf(k->name, sizeof(k->name), "%s", deviceName);
		k->sim_kernel = sim_kernel_of(deviceName);
	}
	pthread_mutex_unlock(&g_lock);
}

EXPORT void __hipUnregisterFatBinary(void **modules)
{
	(void)modules;
}

EXPORT hipError_t __hipPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
					     hipStream_t stream)
{
	if (t_nconfigs == (int)(sizeof(t_configs) / sizeof(t_configs[0])))
		return ret(hipErrorInvalidConfiguration);
	t_configs[t_nconfigs++] = (struct call_config){ gridDim, blockDim, sharedMem, stream };
	return hipSuccess;
}

EXPORT hipError_t __hipPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
					    hipStream_t *stream)
{
	if (t_nconfigs == 0)
		return ret(hipErrorInvalidConfiguration);
	t_nconfigs--;
	*gridDim = t_configs[t_nconfigs].grid;
	*blockDim = t_configs[t_nconfigs].block;
	*sharedMem = t_configs[t_nconfigs].shmem;
	*stream = t_configs[t_nconfigs].stream;
	return hipSuccess;
}

/* The kernel a host stub names on the calling thread's device. */
static const struct kernel *lookup(const void *host_stub)
{
	const struct kernel *k = NULL;

	if (t_device != 0)
		return NULL;	/* one device: nothing is registered elsewhere */
	pthread_mutex_lock(&g_lock);
	for (unsigned int i = 0; i < g_nkernels && !k; i++)
		if (g_kernels[i].host_stub == host_stub)
			k = &g_kernels[i];
	pthread_mutex_unlock(&g_lock);
	return k;
}

static hipError_t launch(const void *fn, dim3 grid, dim3 block, void **args, hipStream_t stream,
			 bool spt)
{
	const struct kernel *k;
	struct standin_kernarg ka = { 0 };
	uint64_t g = (uint64_t)grid.x * grid.y * grid.z;

	STREAM_OR_FAIL(s, stream, spt);
	k = lookup(fn);
	if (!k)
		return ret(hipErrorInvalidDeviceFunction);
	if (!k->sim_kernel) {
		fprintf(stderr, "hip-standin: kernel %s has no sim equivalent\n", k->name);
		return ret(hipErrorNotSupported);
	}
	if (!args || g == 0 || g > XSCHED_SIM_GRID_MAX || grid.y != 1 || grid.z != 1 ||
	    block.x == 0 || block.x > 1024 || block.y != 1 || block.z != 1)
		return ret(hipErrorInvalidConfiguration);
	/* The parameters in their C layout (standin.h). */
	memcpy(&ka.dst, args[0], 8);
	memcpy(&ka.src, args[1], 8);
	memcpy(&ka.steps, args[2], 4);
	memcpy(&ka.step_ns, args[3], 8);
	memcpy(&ka.seed, args[4], 8);
	if (s->capture)
		return capture_add(s, &(struct node){ .type = NODE_KERNEL,
						      .sim_kernel = k->sim_kernel, .grid = grid.x,
						      .block = block.x, .ka = ka });
	put_kernel(s, k->sim_kernel, grid.x, block.x, &ka);
	return hipSuccess;
}

EXPORT hipError_t hipLaunchKernel(const void *function_address, dim3 numBlocks, dim3 dimBlocks,
				  void **args, size_t sharedMemBytes, hipStream_t stream)
{
	(void)sharedMemBytes;
	return launch(function_address, numBlocks, dimBlocks, args, stream, false);
}

EXPORT hipError_t hipLaunchKernel_spt(const void *function_address, dim3 numBlocks,
				      dim3 dimBlocks, void **args, size_t sharedMemBytes,
				      hipStream_t stream)
{
	(void)sharedMemBytes;
	return launch(function_address, numBlocks, dimBlocks, args, stream, true);
}

/* ---- events ---- */

EXPORT hipError_t hipEventCreateWithFlags(hipEvent_t *event, unsigned int flags)
{
	hipError_t e = init();
	struct ihipEvent_t *ev;

	if (e)
		return ret(e);
	if (!event)
		return ret(hipErrorInvalidValue);
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return ret(hipErrorOutOfMemory);
	ev->flags = flags;
	hsa_signal_create(0, 0, NULL, &ev->sig);
	*event = ev;
	return hipSuccess;
}

EXPORT hipError_t hipEventCreate(hipEvent_t *event)
{
	return hipEventCreateWithFlags(event, 0);
}

EXPORT hipError_t hipEventDestroy(hipEvent_t event)
{
	if (!event)
		return ret(hipErrorInvalidResourceHandle);
	retire(event->sig);	/* a queued wait may still refer to it */
	free(event);
	return hipSuccess;
}

static hipError_t event_record(hipEvent_t event, hipStream_t stream, bool spt)
{
	if (!event)
		return ret(hipErrorInvalidResourceHandle);
	STREAM_OR_FAIL(s, stream, spt);
	if (s->capture)
		return ret(hipErrorStreamCaptureUnsupported);
	/* A new signal per record: waits queued on the old one keep theirs. */
	retire(event->sig);
	hsa_signal_create(1, 0, NULL, &event->sig);
	event->recorded = true;
	begin(s);
	put_barrier_locked(s->hq, NULL, 0, event->sig, &s->last);
	end(s);
	return hipSuccess;
}

EXPORT hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream)
{
	return event_record(event, stream, false);
}

EXPORT hipError_t hipEventQuery(hipEvent_t event)
{
	if (!event)
		return ret(hipErrorInvalidResourceHandle);
	return hsa_signal_load_scacquire(event->sig) == 0 ? hipSuccess : hipErrorNotReady;
}

EXPORT hipError_t hipEventSynchronize(hipEvent_t event)
{
	if (!event)
		return ret(hipErrorInvalidResourceHandle);
	hsa_signal_wait_scacquire(event->sig, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX,
				  HSA_WAIT_STATE_BLOCKED);
	return hipSuccess;
}

EXPORT hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop)
{
	hsa_amd_profiling_dispatch_time_t a, b;

	if (!ms || !start || !stop)
		return ret(hipErrorInvalidValue);
	if (!start->recorded || !stop->recorded)
		return ret(hipErrorInvalidResourceHandle);
	if (hsa_signal_load_scacquire(start->sig) || hsa_signal_load_scacquire(stop->sig))
		return ret(hipErrorNotReady);
	hsa_amd_profiling_get_dispatch_time(g_agent, start->sig, &a);
	hsa_amd_profiling_get_dispatch_time(g_agent, stop->sig, &b);
	*ms = (float)((double)((int64_t)(b.end - a.end)) / 1e6);
	return hipSuccess;
}

static hipError_t wait_event(hipStream_t stream, hipEvent_t event, unsigned int flags, bool spt)
{
	if (!event || flags)
		return ret(hipErrorInvalidValue);
	STREAM_OR_FAIL(s, stream, spt);
	if (s->capture)
		return ret(hipErrorStreamCaptureUnsupported);
	if (!event->recorded)
		return hipSuccess;
	begin(s);
	put_barrier_locked(s->hq, &event->sig, 1, (hsa_signal_t){ 0 }, &s->last);
	end(s);
	return hipSuccess;
}

EXPORT hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event, unsigned int flags)
{
	return wait_event(stream, event, flags, false);
}

EXPORT hipError_t hipStreamWaitEvent_spt(hipStream_t stream, hipEvent_t event,
					 unsigned int flags)
{
	return wait_event(stream, event, flags, true);
}

/* ---- stream callbacks (libamdhip64 5.2 exports no hipLaunchHostFunc) ---- */

struct host_call {
	hipStreamCallback_t cb;
	hipStream_t stream;
	void *data;
	hsa_signal_t release;
};

static bool run_host_call(hsa_signal_value_t v, void *arg)
{
	struct host_call *hc = arg;

	(void)v;
	hc->cb(hc->stream, hipSuccess, hc->data);
	hsa_signal_store_screlease(hc->release, 0);
	free(hc);
	return false;
}

static hipError_t host_call(hipStream_t stream, hipStreamCallback_t cb, void *data)
{
	struct host_call *hc;
	hsa_signal_t reached;

	STREAM_OR_FAIL(s, stream, false);
	if (s->capture)
		return ret(hipErrorStreamCaptureUnsupported);
	hc = calloc(1, sizeof(*hc));
	if (!hc)
		return ret(hipErrorOutOfMemory);
	*hc = (struct host_call){ .cb = cb, .stream = stream, .data = data };
	hsa_signal_create(1, 0, NULL, &reached);
	hsa_signal_create(1, 0, NULL, &hc->release);
	/* The queue reaches the marker, the function runs, then the queue goes on. */
	begin(s);
	put_barrier_locked(s->hq, NULL, 0, reached, &s->last);
	put_barrier_locked(s->hq, &hc->release, 1, (hsa_signal_t){ 0 }, &s->last);
	end(s);
	/* Freed once every queue is idle, which the release barrier prevents
	 * until the function has run. */
	retire(reached);
	retire(hc->release);
	if (hsa_amd_signal_async_handler(reached, HSA_SIGNAL_CONDITION_EQ, 0, run_host_call, hc) !=
	    HSA_STATUS_SUCCESS)
		return ret(hipErrorOutOfMemory);
	return hipSuccess;
}

EXPORT hipError_t hipStreamAddCallback(hipStream_t stream, hipStreamCallback_t callback,
				       void *userData, unsigned int flags)
{
	if (!callback || flags)
		return ret(hipErrorInvalidValue);
	return host_call(stream, callback, userData);
}

/* ---- graphs: captured from one stream, replayed in order ---- */

static hipError_t begin_capture(hipStream_t stream, hipStreamCaptureMode mode, bool spt)
{
	(void)mode;
	STREAM_OR_FAIL(s, stream, spt);
	if (s->null)
		return ret(hipErrorStreamCaptureUnsupported);	/* as CLR */
	if (s->capture)
		return ret(hipErrorIllegalState);
	s->capture = calloc(1, sizeof(*s->capture));
	if (!s->capture)
		return ret(hipErrorOutOfMemory);
	s->capture->tail = &s->capture->head;
	return hipSuccess;
}

EXPORT hipError_t hipStreamBeginCapture(hipStream_t stream, hipStreamCaptureMode mode)
{
	return begin_capture(stream, mode, false);
}

EXPORT hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t *graph)
{
	STREAM_OR_FAIL(s, stream, false);
	if (!s->capture)
		return ret(hipErrorIllegalState);
	if (!graph)
		return ret(hipErrorInvalidValue);
	*graph = s->capture;
	s->capture = NULL;
	return hipSuccess;
}

EXPORT hipError_t hipStreamIsCapturing(hipStream_t stream, hipStreamCaptureStatus *status)
{
	STREAM_OR_FAIL(s, stream, false);
	if (!status)
		return ret(hipErrorInvalidValue);
	*status = s->capture ? hipStreamCaptureStatusActive : hipStreamCaptureStatusNone;
	return hipSuccess;
}

static void free_nodes(struct node *n)
{
	while (n) {
		struct node *next = n->next;

		free(n);
		n = next;
	}
}

EXPORT hipError_t hipGraphInstantiate(hipGraphExec_t *exec, hipGraph_t graph,
				      hipGraphNode_t *errorNode, char *logBuffer,
				      size_t bufferSize)
{
	struct hipGraphExec *x;
	struct node **tail;

	(void)errorNode;
	if (logBuffer && bufferSize)
		logBuffer[0] = 0;
	if (!exec || !graph)
		return ret(hipErrorInvalidValue);
	x = calloc(1, sizeof(*x));
	if (!x)
		return ret(hipErrorOutOfMemory);
	tail = &x->g.head;
	for (struct node *n = graph->head; n; n = n->next) {
		struct node *c = malloc(sizeof(*c));

		if (!c) {
			free_nodes(x->g.head);
			free(x);
			return ret(hipErrorOutOfMemory);
		}
		*c = *n;
		c->next = NULL;
		*tail = c;
		tail = &c->next;
	}
	*exec = x;
	return hipSuccess;
}

EXPORT hipError_t hipGraphLaunch(hipGraphExec_t exec, hipStream_t stream)
{
	if (!exec)
		return ret(hipErrorInvalidValue);
	STREAM_OR_FAIL(s, stream, false);
	for (struct node *n = exec->g.head; n; n = n->next) {
		switch (n->type) {
		case NODE_KERNEL:
			put_kernel(s, n->sim_kernel, n->grid, n->block, &n->ka);
			break;
		case NODE_COPY:
			put_agent(s, STANDIN_AGENT_COPY, n->a0, n->a1, n->a2);
			break;
		case NODE_MEMSET:
			put_agent(s, STANDIN_AGENT_MEMSET, n->a0, n->a1, n->a2);
			break;
		}
	}
	return hipSuccess;
}

EXPORT hipError_t hipGraphExecDestroy(hipGraphExec_t exec)
{
	if (!exec)
		return ret(hipErrorInvalidValue);
	free_nodes(exec->g.head);
	free(exec);
	return hipSuccess;
}

EXPORT hipError_t hipGraphDestroy(hipGraph_t graph)
{
	if (!graph)
		return ret(hipErrorInvalidValue);
	free_nodes(graph->head);
	free(graph);
	return hipSuccess;
}
