// SPDX-License-Identifier: MIT
/*
 * A stand-in HSA runtime (libhsa-runtime64.so.1) on the sim GPU, for tests
 * only: the part of the real HSA API (Debian's hsa.h, ROCm 5.2.3) that the
 * stand-in HIP runtime uses.  One GPU agent backed by /dev/xsched_sim.
 *
 * Queues are made the way ROCr makes them: an AQL ring of 64-byte packets in
 * user memory, an hsa_queue_t naming it (base_address, size, doorbell_signal,
 * id) and write/read indices.  Behind each HSA queue is ONE sim queue, created
 * with the ring's address (ring_addr, see sim_queue_create()), and a packet
 * processor thread that plays the command processor: it waits for the
 * doorbell, reads packets in order, runs kernel dispatches as sim packets on
 * that queue's own sim queue, waits for barrier-AND dependencies, runs agent
 * dispatches (copies, memsets) and decrements completion signals.  The packet
 * layout it expects from the HIP side is in standin.h.
 *
 * Not done: barrier-OR packets, multiple agents, signals shared between
 * processes, interrupts (waits use one process-wide condition variable).
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <linux/xsched_sim.h>

#include "standin.h"

#define EXPORT __attribute__((visibility("default")))

/*
 * ring_addr of struct xsched_sim_queue_create (branch `hsa`): the AQL ring the
 * sim queue stands behind, so the interposer finds the sim queue from
 * hsa_queue_t.base_address.  It is the u64 right after save_area_size, which
 * was reserved[0] before that field existed; written by offset so this
 * compiles against either header.  A module without the field refuses it
 * (EINVAL) and the queue is created again without it.
 */
#define SIM_QC_RING_ADDR_OFFSET (offsetof(struct xsched_sim_queue_create, save_area_size) + 8)
_Static_assert(sizeof(struct xsched_sim_queue_create) == 40, "xsched_sim_queue_create changed");

#define SIGNAL_MAGIC 0x5349474e414cULL
#define GPU_AGENT 0x6770750001ULL	/* the one agent's handle */
#define POOL_HANDLE 0x706f6f6c01ULL	/* its one memory pool */
#define ARENA_SIZE (16ULL << 20)	/* sim buffers are carved into allocations */
#define ALLOC_ALIGN 256
#define WAIT_SLICE_NS 200000000ULL	/* one XSCHED_IOC_SIM_WAIT; then look again */

struct signal {
	uint64_t magic;
	_Atomic int64_t value;
	uint64_t t_start, t_end;	/* CLOCK_MONOTONIC ns of the packet that completed it */
};

struct queue {
	hsa_queue_t q;			/* what the caller sees; first */
	_Atomic uint64_t write_index;
	_Atomic uint64_t read_index;
	uint32_t sim_queue;
	int priority;			/* hsa_amd_queue_priority_t; recorded only */
	bool stop;
	pthread_t processor;
	void (*callback)(hsa_status_t, hsa_queue_t *, void *);
	void *data;
	struct queue *next;
};

/* Device memory: sim buffers (at most XSCHED_SIM_MEM_BUFFERS per sim fd and
 * none freed before close) mapped into the process and carved up. */
struct arena {
	uint8_t *base;
	uint64_t gpu_addr, size, used;
	unsigned int live;
};

struct async_handler {
	struct signal *sig;
	hsa_signal_condition_t cond;
	hsa_signal_value_t value;
	hsa_amd_signal_handler handler;
	void *arg;
	struct async_handler *next;
};

/* g_lock protects every field below and every signal change is broadcast on
 * g_cond under it, so a waiter cannot miss one. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static int g_refs;
static int g_sim_fd = -1;
static struct queue *g_queues;
static uint32_t g_next_qid;
static struct arena g_arenas[XSCHED_SIM_MEM_BUFFERS];
static unsigned int g_narenas;
static struct async_handler *g_handlers;
static pthread_t g_handler_thread;
static bool g_handler_running, g_handler_stop;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static struct signal *sig_of(hsa_signal_t s)
{
	struct signal *sig = (struct signal *)(uintptr_t)s.handle;

	if (!sig || sig->magic != SIGNAL_MAGIC) {
		fprintf(stderr, "hsa-standin: invalid signal %#llx\n", (unsigned long long)s.handle);
		abort();
	}
	return sig;
}

static void fatal(const char *what)
{
	fprintf(stderr, "hsa-standin: %s: %s\n", what, strerror(errno));
	abort();
}

/* ---- runtime ---- */

EXPORT hsa_status_t hsa_init(void)
{
	hsa_status_t st = HSA_STATUS_SUCCESS;

	pthread_mutex_lock(&g_lock);
	if (g_refs == 0) {
		/* No sim device: the runtime starts and has no GPU agent, as ROCr
		 * with no GPU reports none. */
		g_sim_fd = open("/dev/" XSCHED_SIM_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	}
	g_refs++;
	pthread_mutex_unlock(&g_lock);
	return st;
}

EXPORT hsa_status_t hsa_shut_down(void)
{
	pthread_mutex_lock(&g_lock);
	if (g_refs == 0) {
		pthread_mutex_unlock(&g_lock);
		return HSA_STATUS_ERROR_NOT_INITIALIZED;
	}
	if (--g_refs == 0 && g_queues == NULL) {
		for (unsigned int i = 0; i < g_narenas; i++)
			munmap(g_arenas[i].base, g_arenas[i].size);
		g_narenas = 0;
		if (g_sim_fd >= 0)
			close(g_sim_fd);
		g_sim_fd = -1;
	}
	pthread_mutex_unlock(&g_lock);
	return HSA_STATUS_SUCCESS;
}

EXPORT hsa_status_t hsa_system_get_info(hsa_system_info_t attribute, void *value)
{
	switch ((int)attribute) {
	case HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY:
		*(uint64_t *)value = 1000000000ULL;	/* timestamps are ns */
		return HSA_STATUS_SUCCESS;
	case HSA_SYSTEM_INFO_TIMESTAMP:
		*(uint64_t *)value = now_ns();
		return HSA_STATUS_SUCCESS;
	case HSA_SYSTEM_INFO_VERSION_MAJOR:
		*(uint16_t *)value = 1;
		return HSA_STATUS_SUCCESS;
	case HSA_SYSTEM_INFO_VERSION_MINOR:
		*(uint16_t *)value = 1;
		return HSA_STATUS_SUCCESS;
	default:
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	}
}

EXPORT hsa_status_t hsa_status_string(hsa_status_t status, const char **str)
{
	*str = status == HSA_STATUS_SUCCESS ? "HSA_STATUS_SUCCESS" : "HSA stand-in error";
	return HSA_STATUS_SUCCESS;
}

/* ---- agents ---- */

EXPORT hsa_status_t hsa_iterate_agents(hsa_status_t (*callback)(hsa_agent_t, void *), void *data)
{
	hsa_agent_t a = { GPU_AGENT };

	if (g_refs == 0)
		return HSA_STATUS_ERROR_NOT_INITIALIZED;
	if (g_sim_fd < 0)
		return HSA_STATUS_SUCCESS;
	hsa_status_t st = callback(a, data);

	return st == HSA_STATUS_INFO_BREAK ? HSA_STATUS_SUCCESS : st;
}

EXPORT hsa_status_t hsa_agent_get_info(hsa_agent_t agent, hsa_agent_info_t attribute, void *value)
{
	struct xsched_sim_info info = { 0 };

	if (agent.handle != GPU_AGENT)
		return HSA_STATUS_ERROR_INVALID_AGENT;
	switch ((int)attribute) {
	case HSA_AGENT_INFO_NAME:
		memset(value, 0, 64);
		strcpy(value, "xsched-sim");
		return HSA_STATUS_SUCCESS;
	case HSA_AGENT_INFO_DEVICE:
		*(hsa_device_type_t *)value = HSA_DEVICE_TYPE_GPU;
		return HSA_STATUS_SUCCESS;
	case HSA_AGENT_INFO_QUEUE_MIN_SIZE:
		*(uint32_t *)value = 2;
		return HSA_STATUS_SUCCESS;
	case HSA_AGENT_INFO_QUEUE_MAX_SIZE:
		*(uint32_t *)value = XSCHED_SIM_RING_MAX;
		return HSA_STATUS_SUCCESS;
	case HSA_AGENT_INFO_QUEUES_MAX:
		*(uint32_t *)value = XSCHED_SIM_QUEUES;
		return HSA_STATUS_SUCCESS;
	case HSA_AGENT_INFO_FEATURE:
		*(hsa_agent_feature_t *)value = HSA_AGENT_FEATURE_KERNEL_DISPATCH;
		return HSA_STATUS_SUCCESS;
	case HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT:
		if (ioctl(g_sim_fd, XSCHED_IOC_SIM_INFO, &info))
			return HSA_STATUS_ERROR;
		*(uint32_t *)value = info.cus;
		return HSA_STATUS_SUCCESS;
	default:
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	}
}

/* ---- signals ---- */

EXPORT hsa_status_t hsa_signal_create(hsa_signal_value_t initial_value, uint32_t num_consumers,
				      const hsa_agent_t *consumers, hsa_signal_t *signal)
{
	struct signal *sig = calloc(1, sizeof(*sig));

	(void)num_consumers;
	(void)consumers;
	if (!sig)
		return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
	sig->magic = SIGNAL_MAGIC;
	atomic_store(&sig->value, initial_value);
	signal->handle = (uint64_t)(uintptr_t)sig;
	return HSA_STATUS_SUCCESS;
}

EXPORT hsa_status_t hsa_signal_destroy(hsa_signal_t signal)
{
	struct signal *sig = sig_of(signal);

	sig->magic = 0;
	free(sig);
	return HSA_STATUS_SUCCESS;
}

EXPORT hsa_signal_value_t hsa_signal_load_scacquire(hsa_signal_t signal)
{
	return atomic_load(&sig_of(signal)->value);
}

EXPORT hsa_signal_value_t hsa_signal_load_relaxed(hsa_signal_t signal)
{
	return atomic_load_explicit(&sig_of(signal)->value, memory_order_relaxed);
}

static void signal_set(struct signal *sig, hsa_signal_value_t v, bool add)
{
	pthread_mutex_lock(&g_lock);
	if (add)
		atomic_fetch_add(&sig->value, v);
	else
		atomic_store(&sig->value, v);
	pthread_cond_broadcast(&g_cond);
	pthread_mutex_unlock(&g_lock);
}

EXPORT void hsa_signal_store_relaxed(hsa_signal_t signal, hsa_signal_value_t value)
{
	signal_set(sig_of(signal), value, false);
}

EXPORT void hsa_signal_store_screlease(hsa_signal_t signal, hsa_signal_value_t value)
{
	signal_set(sig_of(signal), value, false);
}

EXPORT void hsa_signal_subtract_screlease(hsa_signal_t signal, hsa_signal_value_t value)
{
	signal_set(sig_of(signal), -value, true);
}

EXPORT void hsa_signal_subtract_relaxed(hsa_signal_t signal, hsa_signal_value_t value)
{
	signal_set(sig_of(signal), -value, true);
}

EXPORT void hsa_signal_add_screlease(hsa_signal_t signal, hsa_signal_value_t value)
{
	signal_set(sig_of(signal), value, true);
}

static bool cond_met(hsa_signal_value_t v, hsa_signal_condition_t c, hsa_signal_value_t cmp)
{
	switch (c) {
	case HSA_SIGNAL_CONDITION_EQ: return v == cmp;
	case HSA_SIGNAL_CONDITION_NE: return v != cmp;
	case HSA_SIGNAL_CONDITION_LT: return v < cmp;
	case HSA_SIGNAL_CONDITION_GTE: return v >= cmp;
	}
	return true;
}

/* Wait under g_lock until the condition holds or the deadline (ns) passes. */
static hsa_signal_value_t wait_locked(struct signal *sig, hsa_signal_condition_t c,
				      hsa_signal_value_t cmp, uint64_t timeout_ns)
{
	uint64_t deadline = timeout_ns == UINT64_MAX ? UINT64_MAX : now_ns() + timeout_ns;
	hsa_signal_value_t v;

	while (!cond_met(v = atomic_load(&sig->value), c, cmp)) {
		if (deadline == UINT64_MAX) {
			pthread_cond_wait(&g_cond, &g_lock);
		} else {
			struct timespec ts;
			uint64_t t = now_ns();

			if (t >= deadline)
				break;
			clock_gettime(CLOCK_REALTIME, &ts);
			t = (uint64_t)ts.tv_nsec + (deadline - t);
			ts.tv_sec += (time_t)(t / 1000000000ULL);
			ts.tv_nsec = (long)(t % 1000000000ULL);
			pthread_cond_timedwait(&g_cond, &g_lock, &ts);
		}
	}
	return v;
}

EXPORT hsa_signal_value_t hsa_signal_wait_scacquire(hsa_signal_t signal,
						    hsa_signal_condition_t condition,
						    hsa_signal_value_t compare_value,
						    uint64_t timeout_hint,
						    hsa_wait_state_t wait_state_hint)
{
	struct signal *sig = sig_of(signal);
	hsa_signal_value_t v;

	(void)wait_state_hint;
	pthread_mutex_lock(&g_lock);
	v = wait_locked(sig, condition, compare_value, timeout_hint);
	pthread_mutex_unlock(&g_lock);
	return v;
}

EXPORT hsa_signal_value_t hsa_signal_wait_relaxed(hsa_signal_t signal,
						  hsa_signal_condition_t condition,
						  hsa_signal_value_t compare_value,
						  uint64_t timeout_hint,
						  hsa_wait_state_t wait_state_hint)
{
	return hsa_signal_wait_scacquire(signal, condition, compare_value, timeout_hint,
					 wait_state_hint);
}

/* hsa_amd_signal_async_handler: one thread runs handlers whose condition
 * holds (CLR runs host callbacks and event callbacks this way). */
static void *handler_thread(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&g_lock);
	while (!g_handler_stop) {
		struct async_handler **pp = &g_handlers, *h = NULL;

		while (*pp) {
			if (cond_met(atomic_load(&(*pp)->sig->value), (*pp)->cond, (*pp)->value)) {
				h = *pp;
				*pp = h->next;
				break;
			}
			pp = &(*pp)->next;
		}
		if (!h) {
			pthread_cond_wait(&g_cond, &g_lock);
			continue;
		}
		pthread_mutex_unlock(&g_lock);
		bool again = h->handler(atomic_load(&h->sig->value), h->arg);

		pthread_mutex_lock(&g_lock);
		if (again) {
			h->next = g_handlers;
			g_handlers = h;
		} else {
			free(h);
		}
	}
	pthread_mutex_unlock(&g_lock);
	return NULL;
}

EXPORT hsa_status_t hsa_amd_signal_async_handler(hsa_signal_t signal,
						 hsa_signal_condition_t cond,
						 hsa_signal_value_t value,
						 hsa_amd_signal_handler handler, void *arg)
{
	struct async_handler *h = calloc(1, sizeof(*h));

	if (!h)
		return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
	h->sig = sig_of(signal);
	h->cond = cond;
	h->value = value;
	h->handler = handler;
	h->arg = arg;
	pthread_mutex_lock(&g_lock);
	if (!g_handler_running) {
		if (pthread_create(&g_handler_thread, NULL, handler_thread, NULL)) {
			pthread_mutex_unlock(&g_lock);
			free(h);
			return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
		}
		pthread_detach(g_handler_thread);
		g_handler_running = true;
	}
	h->next = g_handlers;
	g_handlers = h;
	pthread_cond_broadcast(&g_cond);
	pthread_mutex_unlock(&g_lock);
	return HSA_STATUS_SUCCESS;
}

EXPORT hsa_status_t hsa_amd_profiling_get_dispatch_time(hsa_agent_t agent, hsa_signal_t signal,
							hsa_amd_profiling_dispatch_time_t *time)
{
	struct signal *sig = sig_of(signal);

	if (agent.handle != GPU_AGENT)
		return HSA_STATUS_ERROR_INVALID_AGENT;
	pthread_mutex_lock(&g_lock);
	time->start = sig->t_start;
	time->end = sig->t_end;
	pthread_mutex_unlock(&g_lock);
	return HSA_STATUS_SUCCESS;
}

EXPORT hsa_status_t hsa_amd_profiling_set_profiler_enabled(hsa_queue_t *queue, int enable)
{
	(void)queue;
	(void)enable;	/* timestamps are always taken */
	return HSA_STATUS_SUCCESS;
}

/* ---- memory ---- */

EXPORT hsa_status_t hsa_amd_agent_iterate_memory_pools(hsa_agent_t agent,
		hsa_status_t (*callback)(hsa_amd_memory_pool_t, void *), void *data)
{
	hsa_amd_memory_pool_t pool = { POOL_HANDLE };

	if (agent.handle != GPU_AGENT)
		return HSA_STATUS_ERROR_INVALID_AGENT;
	hsa_status_t st = callback(pool, data);

	return st == HSA_STATUS_INFO_BREAK ? HSA_STATUS_SUCCESS : st;
}

EXPORT hsa_status_t hsa_amd_memory_pool_get_info(hsa_amd_memory_pool_t pool,
						 hsa_amd_memory_pool_info_t attribute, void *value)
{
	if (pool.handle != POOL_HANDLE)
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	switch ((int)attribute) {
	case HSA_AMD_MEMORY_POOL_INFO_SEGMENT:
		*(hsa_amd_segment_t *)value = HSA_AMD_SEGMENT_GLOBAL;
		return HSA_STATUS_SUCCESS;
	case HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS:
		*(uint32_t *)value = HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED;
		return HSA_STATUS_SUCCESS;
	case HSA_AMD_MEMORY_POOL_INFO_SIZE:
		*(size_t *)value = XSCHED_SIM_MEM_BUFFERS * XSCHED_SIM_MEM_MAX;
		return HSA_STATUS_SUCCESS;
	case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED:
		*(bool *)value = true;
		return HSA_STATUS_SUCCESS;
	default:
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	}
}

static struct arena *arena_new_locked(uint64_t size)
{
	struct xsched_sim_mem m = { .size = size };
	struct arena *a;
	void *p;

	if (g_narenas == XSCHED_SIM_MEM_BUFFERS || ioctl(g_sim_fd, XSCHED_IOC_SIM_MEM_ALLOC, &m))
		return NULL;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, g_sim_fd, (off_t)m.gpu_addr);
	if (p == MAP_FAILED)
		return NULL;
	a = &g_arenas[g_narenas++];
	*a = (struct arena){ .base = p, .gpu_addr = m.gpu_addr, .size = size };
	return a;
}

EXPORT hsa_status_t hsa_amd_memory_pool_allocate(hsa_amd_memory_pool_t pool, size_t size,
						 uint32_t flags, void **ptr)
{
	uint64_t want = (size + ALLOC_ALIGN - 1) & ~(uint64_t)(ALLOC_ALIGN - 1);
	struct arena *a = NULL;

	(void)flags;
	if (pool.handle != POOL_HANDLE || size == 0 || !ptr)
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	if (want > XSCHED_SIM_MEM_MAX)
		return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
	pthread_mutex_lock(&g_lock);
	if (g_sim_fd < 0) {
		pthread_mutex_unlock(&g_lock);
		return HSA_STATUS_ERROR_NOT_INITIALIZED;
	}
	for (unsigned int i = 0; i < g_narenas && !a; i++)
		if (g_arenas[i].size - g_arenas[i].used >= want)
			a = &g_arenas[i];
	if (!a)
		a = arena_new_locked(want > ARENA_SIZE ? want : ARENA_SIZE);
	if (!a) {
		pthread_mutex_unlock(&g_lock);
		return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
	}
	*ptr = a->base + a->used;
	a->used += want;
	a->live++;
	pthread_mutex_unlock(&g_lock);
	return HSA_STATUS_SUCCESS;
}

static struct arena *arena_of_locked(const void *p)
{
	for (unsigned int i = 0; i < g_narenas; i++) {
		struct arena *a = &g_arenas[i];

		if ((const uint8_t *)p >= a->base && (const uint8_t *)p < a->base + a->size)
			return a;
	}
	return NULL;
}

EXPORT hsa_status_t hsa_amd_memory_pool_free(void *ptr)
{
	struct arena *a;

	pthread_mutex_lock(&g_lock);
	a = arena_of_locked(ptr);
	if (!a || a->live == 0) {
		pthread_mutex_unlock(&g_lock);
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	}
	/* Space is reused once every allocation of the arena is freed. */
	if (--a->live == 0)
		a->used = 0;
	pthread_mutex_unlock(&g_lock);
	return HSA_STATUS_SUCCESS;
}

/* Device address of [p, p + bytes) in one arena, or 0. */
static uint64_t gpu_addr_of(uint64_t p, uint64_t bytes)
{
	struct arena *a;
	uint64_t addr = 0;

	pthread_mutex_lock(&g_lock);
	a = arena_of_locked((const void *)(uintptr_t)p);
	if (a && p + bytes <= (uint64_t)(uintptr_t)a->base + a->size)
		addr = a->gpu_addr + (p - (uint64_t)(uintptr_t)a->base);
	pthread_mutex_unlock(&g_lock);
	return addr;
}

/* ---- queues and the packet processor ---- */

static uint16_t packet_type(uint16_t header)
{
	return (header >> HSA_PACKET_HEADER_TYPE) & ((1 << HSA_PACKET_HEADER_WIDTH_TYPE) - 1);
}

static void complete(hsa_signal_t s, uint64_t t_start)
{
	struct signal *sig;

	if (!s.handle)
		return;
	sig = sig_of(s);
	pthread_mutex_lock(&g_lock);
	sig->t_start = t_start;
	sig->t_end = now_ns();
	atomic_fetch_sub(&sig->value, 1);
	pthread_cond_broadcast(&g_cond);
	pthread_mutex_unlock(&g_lock);
}

static void queue_error(struct queue *q, hsa_status_t st, const char *why)
{
	fprintf(stderr, "hsa-standin: queue %llu: %s\n", (unsigned long long)q->q.id, why);
	if (q->callback)
		q->callback(st, &q->q, q->data);
	abort();	/* as ROCr, a queue error is fatal to the process */
}

static void run_kernel(struct queue *q, const hsa_kernel_dispatch_packet_t *p)
{
	const struct standin_kernarg *ka = p->kernarg_address;
	struct xsched_sim_packet sp = { 0 };
	struct xsched_sim_submit sub = { 0 };
	struct xsched_sim_wait w = { 0 };
	uint32_t wgs = p->workgroup_size_x ? p->workgroup_size_x : 1;
	uint64_t dst_words;

	if (!ka)
		queue_error(q, HSA_STATUS_ERROR_INVALID_PACKET_FORMAT, "kernel dispatch without kernarg");
	sp.kernel = (uint32_t)p->kernel_object;
	sp.grid = (p->grid_size_x + wgs - 1) / wgs;
	sp.steps = ka->steps;
	sp.step_ns = ka->step_ns;
	sp.seed = ka->seed;
	dst_words = sp.kernel == XSCHED_SIM_KERNEL_MARK ? 2ULL * sp.grid : sp.grid;
	sp.dst = gpu_addr_of(ka->dst, dst_words * 8);
	sp.src = ka->src ? gpu_addr_of(ka->src, (uint64_t)sp.grid * 8) : 0;
	if (!sp.dst || (ka->src && !sp.src))
		queue_error(q, HSA_STATUS_ERROR_INVALID_ARGUMENT,
			    "kernel argument outside device memory");
	sub.queue_id = q->sim_queue;
	sub.count = 1;
	sub.packets = (uint64_t)(uintptr_t)&sp;
	if (ioctl(g_sim_fd, XSCHED_IOC_SIM_SUBMIT, &sub)) {
		errno = errno ? errno : EIO;
		queue_error(q, HSA_STATUS_ERROR_INVALID_PACKET_FORMAT, strerror(errno));
	}
	w.queue_id = q->sim_queue;
	w.seq = sub.seq;
	/* A suspended sim queue waits as long as the scheduler holds it. */
	for (;;) {
		w.timeout_ns = WAIT_SLICE_NS;
		if (ioctl(g_sim_fd, XSCHED_IOC_SIM_WAIT, &w) == 0)
			break;
		if (errno != ETIMEDOUT && errno != ETIME && errno != EINTR && errno != EAGAIN)
			queue_error(q, HSA_STATUS_ERROR, strerror(errno));
	}
}

static void run_barrier_and(const hsa_barrier_and_packet_t *p)
{
	pthread_mutex_lock(&g_lock);
	for (int i = 0; i < 5; i++)
		if (p->dep_signal[i].handle)
			wait_locked(sig_of(p->dep_signal[i]), HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX);
	pthread_mutex_unlock(&g_lock);
}

static void run_agent(struct queue *q, const hsa_agent_dispatch_packet_t *p)
{
	void *dst = (void *)(uintptr_t)p->arg[0];

	switch (p->type) {
	case STANDIN_AGENT_COPY:
		memmove(dst, (const void *)(uintptr_t)p->arg[1], p->arg[2]);
		break;
	case STANDIN_AGENT_MEMSET:
		memset(dst, (int)p->arg[1], p->arg[2]);
		break;
	default:
		queue_error(q, HSA_STATUS_ERROR_INVALID_PACKET_FORMAT, "unknown agent dispatch");
	}
}

static void *packet_processor(void *arg)
{
	struct queue *q = arg;
	hsa_kernel_dispatch_packet_t *ring = q->q.base_address;
	struct signal *bell = sig_of(q->q.doorbell_signal);

	for (;;) {
		uint64_t rd = atomic_load(&q->read_index);
		_Atomic uint16_t *hdr = (_Atomic uint16_t *)&ring[rd & (q->q.size - 1)].header;
		uint16_t header;
		uint64_t t0;

		pthread_mutex_lock(&g_lock);
		/* The doorbell carries the index of the newest packet. */
		while (!q->stop && (atomic_load(&bell->value) < (int64_t)rd ||
				    packet_type(atomic_load(hdr)) == HSA_PACKET_TYPE_INVALID))
			pthread_cond_wait(&g_cond, &g_lock);
		if (q->stop) {
			pthread_mutex_unlock(&g_lock);
			break;
		}
		pthread_mutex_unlock(&g_lock);
		header = atomic_load(hdr);
		/* Each packet completes before the next starts: that honours every
		 * barrier bit (AQL lets packets without it overlap; a sim queue runs
		 * its packets in order anyway). */
		t0 = now_ns();
		switch (packet_type(header)) {
		case HSA_PACKET_TYPE_KERNEL_DISPATCH: {
			hsa_kernel_dispatch_packet_t *p = &ring[rd & (q->q.size - 1)];

			run_kernel(q, p);
			complete(p->completion_signal, t0);
			break;
		}
		case HSA_PACKET_TYPE_BARRIER_AND: {
			hsa_barrier_and_packet_t *p = (void *)&ring[rd & (q->q.size - 1)];

			run_barrier_and(p);
			complete(p->completion_signal, t0);
			break;
		}
		case HSA_PACKET_TYPE_AGENT_DISPATCH: {
			hsa_agent_dispatch_packet_t *p = (void *)&ring[rd & (q->q.size - 1)];

			run_agent(q, p);
			complete(p->completion_signal, t0);
			break;
		}
		default:
			queue_error(q, HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
				    "unsupported packet type");
		}
		/* The slot goes back to the producer. */
		atomic_store(hdr, (uint16_t)(HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE));
		pthread_mutex_lock(&g_lock);
		atomic_store(&q->read_index, rd + 1);
		pthread_cond_broadcast(&g_cond);
		pthread_mutex_unlock(&g_lock);
	}
	return NULL;
}

static int sim_queue_create(uint32_t ring_size, void *ring, uint32_t *id)
{
	const char *trace = getenv("HIP_STANDIN_TRACE");
	struct xsched_sim_queue_create qc = { .ring_size = ring_size };

	uint64_t addr = (uint64_t)(uintptr_t)ring;

	memcpy((char *)&qc + SIM_QC_RING_ADDR_OFFSET, &addr, sizeof(addr));
	if (ioctl(g_sim_fd, XSCHED_IOC_SIM_QUEUE_CREATE, &qc)) {
		/* A module without ring_addr: that word is reserved, must be 0. */
		if (errno != EINVAL)
			return -errno;
		memset(&qc, 0, sizeof(qc));
		qc.ring_size = ring_size;
		if (ioctl(g_sim_fd, XSCHED_IOC_SIM_QUEUE_CREATE, &qc))
			return -errno;
		addr = 0;
	}
	if (trace)
		fprintf(stderr, "hsa-standin: ring %p -> sim queue %u (%s)\n", ring, qc.queue_id,
			addr ? "ring_addr set" : "the module has no ring_addr");
	*id = qc.queue_id;
	return 0;
}

EXPORT hsa_status_t hsa_queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
				     void (*callback)(hsa_status_t status, hsa_queue_t *source,
						      void *data),
				     void *data, uint32_t private_segment_size,
				     uint32_t group_segment_size, hsa_queue_t **queue)
{
	struct queue *q;
	size_t bytes = (size_t)size * sizeof(hsa_kernel_dispatch_packet_t);
	hsa_kernel_dispatch_packet_t *ring;
	int err;

	(void)private_segment_size;
	(void)group_segment_size;
	if (agent.handle != GPU_AGENT || g_sim_fd < 0)
		return HSA_STATUS_ERROR_INVALID_AGENT;
	if (size < 2 || size > XSCHED_SIM_RING_MAX || (size & (size - 1)) || !queue)
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	q = calloc(1, sizeof(*q));
	if (!q)
		return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
	/* The ring: user memory, page aligned, every slot INVALID until written. */
	ring = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ring == MAP_FAILED) {
		free(q);
		return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
	}
	for (uint32_t i = 0; i < size; i++)
		ring[i].header = HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE;
	err = sim_queue_create(size, ring, &q->sim_queue);
	if (err) {
		munmap(ring, bytes);
		free(q);
		return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
	}
	q->q.type = type;
	q->q.features = HSA_QUEUE_FEATURE_KERNEL_DISPATCH | HSA_QUEUE_FEATURE_AGENT_DISPATCH;
	q->q.base_address = ring;
	q->q.size = size;
	hsa_signal_create(-1, 0, NULL, &q->q.doorbell_signal);
	q->callback = callback;
	q->data = data;
	q->priority = HSA_AMD_QUEUE_PRIORITY_NORMAL;
	pthread_mutex_lock(&g_lock);
	q->q.id = g_next_qid++;
	q->next = g_queues;
	g_queues = q;
	pthread_mutex_unlock(&g_lock);
	if (pthread_create(&q->processor, NULL, packet_processor, q))
		fatal("pthread_create");
	*queue = &q->q;
	return HSA_STATUS_SUCCESS;
}

EXPORT hsa_status_t hsa_queue_destroy(hsa_queue_t *queue)
{
	struct queue *q = (struct queue *)queue, **pp;

	pthread_mutex_lock(&g_lock);
	for (pp = &g_queues; *pp && *pp != q; pp = &(*pp)->next)
		;
	if (!*pp) {
		pthread_mutex_unlock(&g_lock);
		return HSA_STATUS_ERROR_INVALID_QUEUE;
	}
	*pp = q->next;
	q->stop = true;
	pthread_cond_broadcast(&g_cond);
	pthread_mutex_unlock(&g_lock);
	pthread_join(q->processor, NULL);
	/* The sim queue lives until the sim fd closes (no destroy ioctl). */
	hsa_signal_destroy(q->q.doorbell_signal);
	munmap(q->q.base_address, (size_t)q->q.size * sizeof(hsa_kernel_dispatch_packet_t));
	free(q);
	return HSA_STATUS_SUCCESS;
}

EXPORT hsa_status_t hsa_amd_queue_set_priority(hsa_queue_t *queue,
					       hsa_amd_queue_priority_t priority)
{
	/* Recorded only: on KFD it biases dispatch, it does not preempt. */
	((struct queue *)queue)->priority = priority;
	return HSA_STATUS_SUCCESS;
}

EXPORT uint64_t hsa_queue_load_read_index_scacquire(const hsa_queue_t *queue)
{
	return atomic_load(&((struct queue *)queue)->read_index);
}

EXPORT uint64_t hsa_queue_load_read_index_relaxed(const hsa_queue_t *queue)
{
	return atomic_load_explicit(&((struct queue *)queue)->read_index, memory_order_relaxed);
}

EXPORT uint64_t hsa_queue_load_write_index_scacquire(const hsa_queue_t *queue)
{
	return atomic_load(&((struct queue *)queue)->write_index);
}

EXPORT uint64_t hsa_queue_load_write_index_relaxed(const hsa_queue_t *queue)
{
	return atomic_load_explicit(&((struct queue *)queue)->write_index, memory_order_relaxed);
}

EXPORT uint64_t hsa_queue_add_write_index_screlease(const hsa_queue_t *queue, uint64_t value)
{
	return atomic_fetch_add(&((struct queue *)queue)->write_index, value);
}

EXPORT uint64_t hsa_queue_add_write_index_relaxed(const hsa_queue_t *queue, uint64_t value)
{
	return atomic_fetch_add(&((struct queue *)queue)->write_index, value);
}

EXPORT uint64_t hsa_queue_add_write_index_scacq_screl(const hsa_queue_t *queue, uint64_t value)
{
	return atomic_fetch_add(&((struct queue *)queue)->write_index, value);
}

EXPORT uint64_t hsa_queue_cas_write_index_scacq_screl(const hsa_queue_t *queue,
						      uint64_t expected, uint64_t value)
{
	atomic_compare_exchange_strong(&((struct queue *)queue)->write_index, &expected, value);
	return expected;
}

EXPORT void hsa_queue_store_write_index_relaxed(const hsa_queue_t *queue, uint64_t value)
{
	atomic_store(&((struct queue *)queue)->write_index, value);
}

EXPORT void hsa_queue_store_write_index_screlease(const hsa_queue_t *queue, uint64_t value)
{
	atomic_store(&((struct queue *)queue)->write_index, value);
}
