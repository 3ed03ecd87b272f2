/* SPDX-License-Identifier: MIT */
/*
 * The stand-in HIP runtime's own header (hip.c and hip_*.c, one
 * libamdhip64.so.5): its objects, its state and the functions its files
 * share.  Nothing here is exported; the entry points are EXPORT.
 */
#ifndef HIP_STANDIN_H
#define HIP_STANDIN_H

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
#define NCLASS 3	/* high, normal, low */

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

/* ---- state (hip.c) ---- */

extern hipError_t g_init_err;
extern hsa_agent_t g_agent;
extern hsa_amd_memory_pool_t g_pool;
extern bool g_ignore_prio;	/* DEBUG_HIP_IGNORE_STREAM_PRIORITY (see hip.c) */
/* g_lock: the pool, the stream list and the kernel registry.  Order: g_lock,
 * then an hq's lock. */
extern pthread_mutex_t g_lock;
extern struct hq g_hqs[NCLASS][MAX_QUEUES_PER_CLASS];
extern unsigned int g_nhq[NCLASS];
extern struct ihipStream_t *g_streams;
extern struct ihipStream_t *g_null;
extern __thread int t_device;
extern __thread struct ihipStream_t *t_per_thread;
extern pthread_key_t g_pt_key;

/* @e, kept as the thread's last error unless it is hipSuccess. */
hipError_t ret(hipError_t e);
hipError_t init(void);

/* ---- queues and packets (hip.c) ---- */

int prio_class(int priority);
struct hq *acquire_queue(int cls);
void put_barrier_locked(struct hq *h, const hsa_signal_t *deps, int ndeps,
			hsa_signal_t done, uint64_t *last);
void retire(hsa_signal_t s);
bool stream_idle_locked(struct ihipStream_t *s);
int implicit_deps(struct ihipStream_t *s, hsa_signal_t *deps, int max);
void begin(struct ihipStream_t *s);
void end(struct ihipStream_t *s);
void put_kernel(struct ihipStream_t *s, uint32_t sim_kernel, uint32_t grid,
		uint32_t block, const struct standin_kernarg *ka);
void put_agent(struct ihipStream_t *s, uint16_t op, uint64_t a0, uint64_t a1,
	       uint64_t a2);
void wait_stream(struct ihipStream_t *s);
void reap(void);

/* ---- streams (hip_stream.c) ---- */

struct ihipStream_t *null_stream(void);
void per_thread_exit(void *p);
struct ihipStream_t *resolve(hipStream_t stream, bool spt);
hipError_t stream_sync(hipStream_t stream, bool spt);

#define STREAM_OR_FAIL(s, handle, spt)						\
	struct ihipStream_t *s = resolve(handle, spt);				\
	if (!s)									\
		return ret(g_init_err ? g_init_err : hipErrorOutOfMemory)

/* ---- memory (hip_memory.c) ---- */

hipError_t capture_add(struct ihipStream_t *s, const struct node *n);

#endif /* HIP_STANDIN_H */
