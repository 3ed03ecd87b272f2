// SPDX-License-Identifier: MIT
/* The fake HSA runtime: see fake_hsa.h. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "fake_hsa.h"

#define FAKE_QUEUES 16

struct fake_q {
	hsa_queue_t q;		/* first: what the caller gets */
	_Atomic uint64_t wi;
	int used;
};

static struct fake_q qs[FAKE_QUEUES];
static uint64_t rings[FAKE_QUEUES][512] __attribute__((aligned(4096)));
static uint64_t next_id = 100;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

hsa_status_t hsa_queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
			      void (*callback)(hsa_status_t status, hsa_queue_t *source,
					       void *data),
			      void *data, uint32_t private_segment_size,
			      uint32_t group_segment_size, hsa_queue_t **queue)
{
	unsigned int i;

	(void)agent; (void)callback; (void)data;
	(void)private_segment_size; (void)group_segment_size;
	if (!queue || !size)
		return HSA_STATUS_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&lock);
	/* the lowest free slot: a destroyed queue's ring comes back first */
	for (i = 0; i < FAKE_QUEUES && qs[i].used; i++)
		;
	if (i == FAKE_QUEUES) {
		pthread_mutex_unlock(&lock);
		return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
	}
	memset(&qs[i].q, 0, sizeof(qs[i].q));
	qs[i].q.type = type;
	qs[i].q.base_address = rings[i];
	qs[i].q.doorbell_signal.handle = 0xd00b0000 + i;
	qs[i].q.size = size;
	qs[i].q.id = next_id++;
	atomic_store(&qs[i].wi, 0);
	qs[i].used = 1;
	*queue = &qs[i].q;
	pthread_mutex_unlock(&lock);
	return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_queue_destroy(hsa_queue_t *queue)
{
	struct fake_q *f = (struct fake_q *)queue;

	pthread_mutex_lock(&lock);
	f->used = 0;
	pthread_mutex_unlock(&lock);
	return HSA_STATUS_SUCCESS;
}

uint64_t hsa_queue_load_write_index_relaxed(const hsa_queue_t *queue)
{
	return atomic_load_explicit(&((struct fake_q *)queue)->wi, memory_order_relaxed);
}

void fake_hsa_dispatch(hsa_queue_t *q, uint64_t n)
{
	atomic_fetch_add(&((struct fake_q *)q)->wi, n);
}

unsigned int fake_hsa_live(void)
{
	unsigned int i, n = 0;

	pthread_mutex_lock(&lock);
	for (i = 0; i < FAKE_QUEUES; i++)
		n += qs[i].used;
	pthread_mutex_unlock(&lock);
	return n;
}
