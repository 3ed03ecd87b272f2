// SPDX-License-Identifier: MIT
/*
 * A stand-in HIP runtime (libamdhip64.so.5) for tests only, over the HSA API
 * (the stand-in libhsa-runtime64.so.1 beside it runs that on the sim GPU).
 * This file: its state, initialisation, the HSA queue pool and packets, and
 * devices and errors; hip_stream.c, hip_memory.c, hip_kernel.c, hip_event.c
 * and hip_graph.c the rest, sharing hip_standin.h.
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
#include "hip_standin.h"

/* ---- state ---- */

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
hipError_t g_init_err;
hsa_agent_t g_agent;
static bool g_have_gpu;
hsa_amd_memory_pool_t g_pool;
static unsigned int g_max_hw_queues = 4;
bool g_ignore_prio;	/* DEBUG_HIP_IGNORE_STREAM_PRIORITY (see the top) */

/* g_lock: the pool, the stream list and the kernel registry.  Order: g_lock,
 * then an hq's lock. */
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
struct hq g_hqs[NCLASS][MAX_QUEUES_PER_CLASS];
unsigned int g_nhq[NCLASS];
struct ihipStream_t *g_streams;
struct ihipStream_t *g_null;
/* Signals of internal markers, freed once every queue is idle (a barrier on
 * another queue may still refer to one until then). */
static hsa_signal_t *g_retired;
static size_t g_nretired, g_capretired;

__thread int t_device;
static __thread hipError_t t_last_error = hipSuccess;
__thread struct ihipStream_t *t_per_thread;
pthread_key_t g_pt_key;


hipError_t ret(hipError_t e)
{
	if (e != hipSuccess)
		t_last_error = e;
	return e;
}

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

hipError_t init(void)
{
	pthread_once(&g_once, init_once);
	return g_init_err;
}

/* ---- queues and packets ---- */

int prio_class(int priority)
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
struct hq *acquire_queue(int cls)
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

void put_barrier_locked(struct hq *h, const hsa_signal_t *deps, int ndeps,
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

void retire(hsa_signal_t s)
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

bool stream_idle_locked(struct ihipStream_t *s)
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

/*
 * Implicit synchronisation with the null stream, before a command on @s:
 * the null stream waits for every blocking stream, a blocking stream for
 * the null stream.  Returns the number of signals to wait on in deps.
 */
int implicit_deps(struct ihipStream_t *s, hsa_signal_t *deps, int max)
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
void begin(struct ihipStream_t *s)
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

void end(struct ihipStream_t *s)
{
	pthread_mutex_unlock(&s->hq->lock);
}

void put_kernel(struct ihipStream_t *s, uint32_t sim_kernel, uint32_t grid,
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

void put_agent(struct ihipStream_t *s, uint16_t op, uint64_t a0, uint64_t a1,
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
void wait_stream(struct ihipStream_t *s)
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
void reap(void)
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
