// SPDX-License-Identifier: MIT
/*
 * The stand-in HIP runtime's streams: create, destroy, synchronize, query,
 * priorities and flags, the null and per-thread streams, stream callbacks.
 */
#include "hip_standin.h"

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

struct ihipStream_t *null_stream(void)
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

void per_thread_exit(void *p)
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
struct ihipStream_t *resolve(hipStream_t stream, bool spt)
{
	if (init() != hipSuccess)
		return NULL;
	if (stream == hipStreamPerThread || (spt && stream == NULL))
		return per_thread_stream();
	if (stream == NULL)
		return null_stream();
	return stream;
}

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

hipError_t stream_sync(hipStream_t stream, bool spt)
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
