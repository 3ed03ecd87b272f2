// SPDX-License-Identifier: MIT
/* Description: the fake libcuda's streams: capture, host functions, graphs, memory waits, launches. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fake_libcuda_internal.h"

/* ---- streams ---- */

/* Internal: a call to an exported name would reach the interposer's hook. */
CUresult stream_make(CUstream *ph, unsigned int flags, int prio)
{
	struct fstream *s, *next;
	struct fctx *c;

	pthread_mutex_lock(&mu);
	c = cur_ctx();
	if (!c) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	s = free_streams;	/* a destroyed handle comes back first, as in CUDA */
	if (s) {
		free_streams = s->next_free;
		next = s->next_all;
	} else {
		s = malloc(sizeof(*s));
		next = all_streams;
		all_streams = s;
	}
	memset(s, 0, sizeof(*s));
	s->next_all = next;
	s->id = next_id++;
	s->prio = prio;
	s->flags = flags;
	s->ctx = c->id ? c : NULL;
	pthread_mutex_unlock(&mu);
	*ph = (CUstream)s;
	return CUDA_SUCCESS;
}

API CUresult cuStreamCreateWithPriority(CUstream *ph, unsigned int flags, int prio)
{
	return stream_make(ph, flags, prio);
}

API CUresult cuStreamCreate(CUstream *ph, unsigned int flags)
{
	return stream_make(ph, flags, 0);
}

API CUresult cuStreamDestroy_v2(CUstream h)
{
	struct fstream *s = (struct fstream *)h;

	if (!h || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD)
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&mu);
	if (s->destroyed || s->id < 0) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	s->destroyed = 1;	/* queued work still runs (its records stay) */
	s->next_free = free_streams;
	free_streams = s;
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API CUresult cuStreamDestroy(CUstream h)
{
	return cuStreamDestroy_v2(h);
}

API CUresult cuCtxGetStreamPriorityRange(int *least, int *greatest)
{
	*least = 0;
	*greatest = -5;
	return CUDA_SUCCESS;
}

/* A green context's stream names the green context's CUcontext. */
static CUresult stream_get_ctx(CUstream h, CUcontext *c, int ptsz)
{
	struct fstream *s;

	pthread_mutex_lock(&mu);
	s = stream_of(h, ptsz);
	*c = s->green ? (CUcontext)&s->green->ctx_obj : (CUcontext)sctx(s);
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API CUresult cuStreamGetCtx(CUstream h, CUcontext *c)
{
	return stream_get_ctx(h, c, 0);
}

API CUresult cuStreamGetCtx_ptsz(CUstream h, CUcontext *c)
{
	return stream_get_ctx(h, c, 1);
}

/* A green context's stream: NULL and the green context. */
static CUresult stream_get_ctx2(CUstream h, CUcontext *c, CUgreenCtx *g, int ptsz)
{
	struct fstream *s;

	pthread_mutex_lock(&mu);
	s = stream_of(h, ptsz);
	*c = s->green ? NULL : (CUcontext)sctx(s);
	*g = s->green ? (CUgreenCtx)s->green : NULL;
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API CUresult cuStreamGetCtx_v2(CUstream h, CUcontext *c, CUgreenCtx *g)
{
	return stream_get_ctx2(h, c, g, 0);
}

API CUresult cuStreamGetCtx_v2_ptsz(CUstream h, CUcontext *c, CUgreenCtx *g)
{
	return stream_get_ctx2(h, c, g, 1);
}

static CUresult stream_get_flags(CUstream h, unsigned int *f, int ptsz)
{
	pthread_mutex_lock(&mu);
	*f = stream_of(h, ptsz)->flags;
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API CUresult cuStreamGetFlags(CUstream h, unsigned int *f)
{
	return stream_get_flags(h, f, 0);
}

API CUresult cuStreamGetFlags_ptsz(CUstream h, unsigned int *f)
{
	return stream_get_flags(h, f, 1);
}

API int fake_live_streams(void)
{
	struct fstream *s;
	int n = 0;

	pthread_mutex_lock(&mu);
	for (s = all_streams; s; s = s->next_all)
		n += !s->destroyed;
	pthread_mutex_unlock(&mu);
	return n;
}

API int fake_stream_green(CUstream h, unsigned int *sms)
{
	struct fgreen *g;

	pthread_mutex_lock(&mu);
	g = stream_of(h, 0)->green;
	*sms = g ? g->sms : 0;
	pthread_mutex_unlock(&mu);
	return g ? g->id : 0;
}

API int fake_green_count(void)
{
	int n;

	pthread_mutex_lock(&mu);
	n = ngreen;
	pthread_mutex_unlock(&mu);
	return n;
}

static CUresult get_priority(CUstream h, int *p, int ptsz)
{
	pthread_mutex_lock(&mu);
	*p = stream_of(h, ptsz)->prio;
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API CUresult cuStreamGetPriority(CUstream h, int *p)
{
	return get_priority(h, p, 0);
}

API CUresult cuStreamGetPriority_ptsz(CUstream h, int *p)
{
	return get_priority(h, p, 1);
}

/* Of the stream attributes only the priority is modelled; it is clamped to
 * the range, as CUDA does. */
static CUresult set_attribute(CUstream h, CUstreamAttrID a, const CUstreamAttrValue *v,
			      int ptsz)
{
	struct fstream *s;

	if (!v)
		return CUDA_ERROR_INVALID_VALUE;
	if (a != CU_STREAM_ATTRIBUTE_PRIORITY)
		return CUDA_SUCCESS;
	pthread_mutex_lock(&mu);
	s = stream_of(h, ptsz);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	s->prio = v->priority > 0 ? 0 : v->priority < -5 ? -5 : v->priority;
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API CUresult cuStreamSetAttribute(CUstream h, CUstreamAttrID a, const CUstreamAttrValue *v)
{
	return set_attribute(h, a, v, 0);
}

API CUresult cuStreamSetAttribute_ptsz(CUstream h, CUstreamAttrID a, const CUstreamAttrValue *v)
{
	return set_attribute(h, a, v, 1);
}

static CUresult copy_attributes(CUstream dst, CUstream src, int ptsz)
{
	pthread_mutex_lock(&mu);
	stream_of(dst, ptsz)->prio = stream_of(src, ptsz)->prio;
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API CUresult cuStreamCopyAttributes(CUstream dst, CUstream src)
{
	return copy_attributes(dst, src, 0);
}

API CUresult cuStreamCopyAttributes_ptsz(CUstream dst, CUstream src)
{
	return copy_attributes(dst, src, 1);
}

static CUresult is_capturing(CUstream h, CUstreamCaptureStatus *st, int ptsz)
{
	pthread_mutex_lock(&mu);
	*st = stream_of(h, ptsz)->capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE :
	      CU_STREAM_CAPTURE_STATUS_NONE;
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API CUresult cuStreamIsCapturing(CUstream h, CUstreamCaptureStatus *st)
{
	return is_capturing(h, st, 0);
}

API CUresult cuStreamIsCapturing_ptsz(CUstream h, CUstreamCaptureStatus *st)
{
	return is_capturing(h, st, 1);
}

static int capture_seq;	/* capture ids: 1, 2, ... */

/* ---- host functions: called on one driver thread, in submission order,
 * once their command ended ---- */

#define MAX_HOSTFN 4096
static struct {
	int rec;
	CUhostFn fn;			/* or */
	CUstreamCallback cb;
	CUstream h;
	void *data;
} hostq[MAX_HOSTFN];
static unsigned int hostq_head, hostq_tail;
static pthread_cond_t hostq_cv = PTHREAD_COND_INITIALIZER;
static int host_thread_up, host_called;

#define MAX_HOST_NODES 8

/* A host function captured (cuLaunchHostFunc): a node of its graph. */
struct fhost_node {
	CUhostFn fn;
	void *data;
};

struct fgraph {
	int capture;		/* its capture's id */
	int nodes;
	uint64_t ns;		/* its commands' run times, summed */
	struct fhost_node host[MAX_HOST_NODES];	/* run after the rest */
	int nhost;
	int destroyed;
	struct fgraph *next;	/* every graph: never leaked */
};

struct fgexec {
	struct fgraph *g;
	int ctx;		/* where it was instantiated: where it runs */
	int destroyed;
	struct fgexec *next;
};

/* Host functions captured and not yet in a graph (a capture holding
 * MAX_HOST_NODES, or this full, refuses another: nothing is dropped). */
static struct {
	int capture;
	struct fhost_node n;
} captured_host[MAX_HOST_NODES * 4];
static int ncaptured_host;

/* mu held: may capture @id take another host function? */
static int host_node_room(int id)
{
	int i, k = 0;

	for (i = 0; i < ncaptured_host; i++)
		k += captured_host[i].capture == id;
	return k < MAX_HOST_NODES &&
	       ncaptured_host < (int)(sizeof(captured_host) / sizeof(captured_host[0]));
}

static void hostq_push(int rec, CUhostFn fn, CUstreamCallback cb, CUstream h, void *data);

static struct fgraph *all_graphs;
static struct fgexec *all_execs;

static CUresult begin_capture(CUstream h, int ptsz)
{
	struct fstream *s;

	pthread_mutex_lock(&mu);
	s = stream_of(h, ptsz);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	s->capturing = ++capture_seq;
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API CUresult cuStreamBeginCapture_v2(CUstream h, CUstreamCaptureMode m)
{
	(void)m;
	return begin_capture(h, 0);
}

API CUresult cuStreamBeginCapture_v2_ptsz(CUstream h, CUstreamCaptureMode m)
{
	(void)m;
	return begin_capture(h, 1);
}

/* The capture ends on every stream that joined it; its graph holds what
 * it recorded. */
static CUresult end_capture(CUstream h, CUgraph *g, int ptsz)
{
	struct fstream *s, *o;
	struct fgraph *gr = calloc(1, sizeof(*gr));
	int id, i;

	if (!gr)
		return CUDA_ERROR_OUT_OF_MEMORY;

	pthread_mutex_lock(&mu);
	s = stream_of(h, ptsz);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		free(gr);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	id = s->capturing;
	s->capturing = 0;
	for (o = all_streams; o && id; o = o->next_all)
		if (o->capturing == id)
			o->capturing = 0;
	if (id && legacy.capturing == id)
		legacy.capturing = 0;
	if (id && pt_ready && pt_stream.capturing == id)
		pt_stream.capturing = 0;
	for (i = 1; i <= nctx && id; i++)
		if (ctxs[i]->dflt.capturing == id)
			ctxs[i]->dflt.capturing = 0;
	gr->capture = id;
	for (i = 0; i < nlog && id; i++) {
		if (logv[i].captured && logv[i].capture == id) {
			gr->nodes++;
			gr->ns += logv[i].ns;
		}
	}
	for (i = 0; i < ncaptured_host; i++) {
		if (captured_host[i].capture != id)
			continue;
		gr->host[gr->nhost++] = captured_host[i].n;	/* room: host_fn() */
		captured_host[i--] = captured_host[--ncaptured_host];
	}
	gr->next = all_graphs;
	all_graphs = gr;
	pthread_mutex_unlock(&mu);
	*g = (CUgraph)gr;
	return CUDA_SUCCESS;
}

API CUresult cuStreamEndCapture(CUstream h, CUgraph *g)
{
	return end_capture(h, g, 0);
}

API CUresult cuStreamEndCapture_ptsz(CUstream h, CUgraph *g)
{
	return end_capture(h, g, 1);
}

API CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *m)
{
	static __thread CUstreamCaptureMode cur = CU_STREAM_CAPTURE_MODE_GLOBAL;
	CUstreamCaptureMode old = cur;

	cur = *m;
	*m = old;
	return CUDA_SUCCESS;
}

static CUresult stream_sync(CUstream h, int ptsz)
{
	struct fstream *s;

	pthread_mutex_lock(&mu);
	s = stream_of(h, ptsz);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	pthread_mutex_unlock(&mu);
	fake_tl_wait(&s->tl);
	return CUDA_SUCCESS;
}

API CUresult cuStreamSynchronize(CUstream h)
{
	return stream_sync(h, 0);
}

API CUresult cuStreamSynchronize_ptsz(CUstream h)
{
	return stream_sync(h, 1);
}

static CUresult stream_query(CUstream h, int ptsz)
{
	int idle;

	pthread_mutex_lock(&mu);
	idle = fake_tl_idle(&stream_of(h, ptsz)->tl);
	pthread_mutex_unlock(&mu);
	return idle ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

API CUresult cuStreamQuery(CUstream h)
{
	return stream_query(h, 0);
}

API CUresult cuStreamQuery_ptsz(CUstream h)
{
	return stream_query(h, 1);
}

/* The current context's work only. */
API CUresult cuCtxSynchronize(void)
{
	struct fctx *c;

	pthread_mutex_lock(&mu);
	c = cur_ctx();
	pthread_mutex_unlock(&mu);
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	ctx_wait(c->id);
	return CUDA_SUCCESS;
}

/* CUDA 12.9: a context's work (NULL: the current one's). */
API CUresult cuCtxSynchronize_v2(CUcontext h)
{
	struct fctx *c;

	pthread_mutex_lock(&mu);
	c = h ? ctx_of(h) : cur_ctx();
	pthread_mutex_unlock(&mu);
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	ctx_wait(c->id);
	return CUDA_SUCCESS;
}

/* ---- graphs: what a capture recorded, launched as one command ---- */

API CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
	struct fgraph *gr = (struct fgraph *)g;
	struct fgexec *x;

	(void)flags;
	if (!gr || gr->destroyed)
		return CUDA_ERROR_INVALID_VALUE;
	x = calloc(1, sizeof(*x));
	if (!x)
		return CUDA_ERROR_OUT_OF_MEMORY;
	x->g = gr;
	pthread_mutex_lock(&mu);
	x->ctx = cur_ctx() ? cur_ctx()->id : 0;
	x->next = all_execs;
	all_execs = x;
	pthread_mutex_unlock(&mu);
	*e = (CUgraphExec)x;
	return CUDA_SUCCESS;
}

/* The graph's nodes keep what they were; the exec stays valid. */
API CUresult cuGraphDestroy(CUgraph g)
{
	struct fgraph *gr = (struct fgraph *)g;

	if (!gr || gr->destroyed)
		return CUDA_ERROR_INVALID_VALUE;
	gr->destroyed = 1;
	return CUDA_SUCCESS;
}

API CUresult cuGraphExecDestroy(CUgraphExec e)
{
	struct fgexec *x = (struct fgexec *)e;

	if (!x || x->destroyed)
		return CUDA_ERROR_INVALID_VALUE;
	x->destroyed = 1;
	return CUDA_SUCCESS;
}

/* On any context's stream, in stream order, but run by the context it was
 * instantiated in (as the real driver does: a graph launched on another
 * context's stream gains nothing from that context); its host nodes are
 * called once the rest ended. */
static CUresult graph_launch(CUgraphExec e, CUstream h, int ptsz)
{
	struct fgexec *x = (struct fgexec *)e;
	struct fstream *s;
	struct fake_rec *r;
	int i;

	if (!x || x->destroyed)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mu);
	s = stream_of(h, ptsz);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	if (hostq_tail - hostq_head + (unsigned int)x->g->nhost > MAX_HOSTFN) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	r = log_add(s, FAKE_GRAPH, ptsz, x->g->ns);
	r->nodes = x->g->nodes;
	if (!r->captured) {
		r->capture = x->g->capture;
		r->ctx = x->ctx;
		for (i = 0; i < x->g->nhost; i++)
			hostq_push((int)(r - logv), x->g->host[i].fn, NULL, h, x->g->host[i].data);
	}
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API CUresult cuGraphLaunch(CUgraphExec e, CUstream h)
{
	return graph_launch(e, h, 0);
}

API CUresult cuGraphLaunch_ptsz(CUgraphExec e, CUstream h)
{
	return graph_launch(e, h, 1);
}

/* ---- memory waits and writes ---- */

static CUresult memop(CUstream h, CUdeviceptr addr, uint64_t v, unsigned int flags, int wide,
		      int ptsz, int write)
{
	struct fstream *s;
	struct fake_rec *r;

	if (!addr)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mu);
	s = stream_of(h, ptsz);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	r = log_add(s, write ? FAKE_WRITE_VALUE : FAKE_WAIT_VALUE, ptsz, 0);
	fake_memop(&s->tl, r, write ? FAKE_MEM_WRITE : FAKE_MEM_WAIT, (void *)(uintptr_t)addr, v,
		   ~0ULL, (int)(flags & 3), wide);
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

#define MEMOP_DEF(n, T, wide, pt)						\
	API CUresult n(CUstream h, CUdeviceptr addr, T v, unsigned int flags)	\
	{									\
		return memop(h, addr, v, flags, wide, pt, 0);			\
	}
#define WRITE_DEF(n, T, wide, pt)						\
	API CUresult n(CUstream h, CUdeviceptr addr, T v, unsigned int flags)	\
	{									\
		return memop(h, addr, v, flags, wide, pt, 1);			\
	}
MEMOP_NAMES(MEMOP_DEF)
WRITE_NAMES(WRITE_DEF)

/* ---- work ---- */

/*
 * A K() kernel runs on the primary's streams only, a module's function on
 * its module's context's, a CUkernel on any; a launch asking for more than
 * 48 KiB of dynamic shared memory needs the attribute.
 */
/* Lazy loading: a CUkernel's first launch in a context loads it there,
 * which waits for that context's work (measured: cuLaunchKernel returned
 * only when the context's earlier work could run). */
static void lazy_load(CUfunction f, CUstream h, int variant)
{
	struct fkern *kn;
	int id = -1;

	pthread_mutex_lock(&mu);
	kn = as_func(f) ? NULL : as_kern(f);
	if (kn) {
		struct fstream *s = stream_of(h, variant == FAKE_PTSZ);
		int c = sctx(s)->id;

		if (c >= 0 && c < 64 && !(kn->loaded & (1ULL << c))) {
			kn->loaded |= 1ULL << c;
			id = c;
		}
	}
	pthread_mutex_unlock(&mu);
	if (id >= 0)
		ctx_wait(id);
}

CUresult launch(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
		unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem,
		CUstream h, void **params, void **extra, int variant,
		const void *config)
{
	const struct fake_kernel *k = (const struct fake_kernel *)f;
	struct fstream *s;
	struct fake_rec *r;
	struct ffunc *fn;
	struct fkern *kn;
	struct fctx *owner;
	const char *name = "";
	int id, kind, module = 0, lib = 0, limit, *a;
	uint64_t ns;

	if (!k)
		return CUDA_ERROR_INVALID_HANDLE;
	lazy_load(f, h, variant);
	pthread_mutex_lock(&mu);
	s = stream_of(h, variant == FAKE_PTSZ);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	fn = as_func(f);
	kn = fn ? NULL : as_kern(f);
	if (fn) {
		if (fn->mod->unloaded || fn->mod->ctx->destroyed) {
			pthread_mutex_unlock(&mu);
			return CUDA_ERROR_INVALID_HANDLE;
		}
		owner = fn->mod->ctx;
		kind = fn->kern ? FAKE_FN_OF_KERNEL : FAKE_FN_MODULE;
		name = fn->name;
		ns = fn->ns;
		module = fn->mod->id;
		lib = fn->kern ? fn->kern->lib->id : 0;
		limit = fn->attr[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES];
		if (fn->kern &&
		    fn->kern->attr[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES] > limit)
			limit = fn->kern->attr[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES];
		id = named_id(name);
	} else if (kn) {
		if (kn->lib->unloaded) {
			pthread_mutex_unlock(&mu);
			return CUDA_ERROR_INVALID_HANDLE;
		}
		owner = sctx(s);
		kind = FAKE_FN_KERNEL;
		name = kn->name;
		ns = kn->ns;
		lib = kn->lib->id;
		limit = kn->attr[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES];
		id = named_id(name);
	} else {
		a = testfn_attr(f, NULL);
		owner = &primary;
		kind = FAKE_FN_TEST;
		ns = k->ns;
		limit = a ? a[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES] : FAKE_SMEM_DEFAULT;
		id = k->id;
	}
	if (owner != sctx(s)) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;	/* a function of another context */
	}
	if (smem > FAKE_SMEM_DEFAULT && (int)smem > limit) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_VALUE;
	}
	r = log_add(s, id, variant, ns);
	r->fn = kind;
	r->module = module;
	r->lib = lib;
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->params = params;
	r->extra = extra;
	r->grid[0] = gx;
	r->grid[1] = gy;
	r->grid[2] = gz;
	r->block[0] = bx;
	r->block[1] = by;
	r->block[2] = bz;
	r->smem = smem;
	r->config = config;
	if (config) {
		const CUlaunchConfig *c = config;
		unsigned int i;

		r->nattrs = c->numAttrs;
		for (i = 0; i < c->numAttrs && i < FAKE_MAX_ATTRS && c->attrs; i++)
			r->attrs[i] = c->attrs[i];
	}
	if (kind == FAKE_FN_TEST && k->flag)
		fake_memop(r->tl, r, FAKE_MEM_WRITE, k->flag, k->flag_val, ~0ULL, 0, 0);
	else if (kind != FAKE_FN_TEST && !strncmp(name, "flag", 4) && params && params[0] &&
		 params[1])	/* flag*(CUdeviceptr p, uint32_t v): *p = v at its end */
		fake_memop(r->tl, r, FAKE_MEM_WRITE,
			   (void *)(uintptr_t)*(const CUdeviceptr *)params[0],
			   *(const uint32_t *)params[1], ~0ULL, 0, 0);
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

API CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
			    unsigned int bx, unsigned int by, unsigned int bz,
			    unsigned int smem, CUstream h, void **params, void **extra)
{
	return launch(f, gx, gy, gz, bx, by, bz, smem, h, params, extra, FAKE_LEGACY, NULL);
}

API CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
				 unsigned int gz, unsigned int bx, unsigned int by,
				 unsigned int bz, unsigned int smem, CUstream h,
				 void **params, void **extra)
{
	return launch(f, gx, gy, gz, bx, by, bz, smem, h, params, extra, FAKE_PTSZ, NULL);
}

#ifndef FAKE_CUDA_NO_GREEN
/* CUDA 9+; the "older driver" build lacks it (an entry point the
 * interposer hooks that a driver may not have). */
API CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy,
				       unsigned int gz, unsigned int bx, unsigned int by,
				       unsigned int bz, unsigned int smem, CUstream h,
				       void **params)
{
	return launch(f, gx, gy, gz, bx, by, bz, smem, h, params, NULL, FAKE_LEGACY, NULL);
}

API CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
					    unsigned int gz, unsigned int bx, unsigned int by,
					    unsigned int bz, unsigned int smem, CUstream h,
					    void **params)
{
	return launch(f, gx, gy, gz, bx, by, bz, smem, h, params, NULL, FAKE_PTSZ, NULL);
}
#endif

/* What FAKE_CUDA_PROC_INTERNAL hands out: no exported symbol. */
CUresult internal_launch(CUfunction f, unsigned int gx, unsigned int gy,
			 unsigned int gz, unsigned int bx, unsigned int by,
			 unsigned int bz, unsigned int smem, CUstream h,
			 void **params, void **extra)
{
	return launch(f, gx, gy, gz, bx, by, bz, smem, h, params, extra, FAKE_INTERNAL, NULL);
}

API CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params,
			      void **extra)
{
	return launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
		      c->blockDimZ, c->sharedMemBytes, c->hStream, params, extra,
		      FAKE_LEGACY, c);
}

API CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **params,
				   void **extra)
{
	return launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
		      c->blockDimZ, c->sharedMemBytes, c->hStream, params, extra,
		      FAKE_PTSZ, c);
}

/* ---- host functions: the driver thread that calls them, and their calls ---- */

API int fake_host_fns_called(void)
{
	return __atomic_load_n(&host_called, __ATOMIC_ACQUIRE);
}

static void *host_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	for (;;) {
		unsigned int i;

		while (hostq_head == hostq_tail)
			pthread_cond_wait(&hostq_cv, &mu);
		i = hostq_head % MAX_HOSTFN;
		pthread_mutex_unlock(&mu);
		fake_rec_wait(hostq[i].rec);
		if (hostq[i].fn)
			hostq[i].fn(hostq[i].data);
		else
			hostq[i].cb(hostq[i].h, CUDA_SUCCESS, hostq[i].data);
		__atomic_add_fetch(&host_called, 1, __ATOMIC_RELEASE);
		pthread_mutex_lock(&mu);
		hostq_head++;
	}
	return NULL;
}

static CUresult host_fn(CUstream h, CUhostFn fn, CUstreamCallback cb, void *data, int ptsz)
{
	struct fstream *s;
	struct fake_rec *r;

	if (!fn && !cb)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mu);
	s = stream_of(h, ptsz);
	if (s->destroyed) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	if (hostq_tail - hostq_head == MAX_HOSTFN ||
	    (fn && s->capturing && !host_node_room(s->capturing))) {
		pthread_mutex_unlock(&mu);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	r = log_add(s, FAKE_HOST_FN, ptsz, 0);
	if (!r->captured) {
		hostq_push((int)(r - logv), fn, cb, h, data);
	} else if (fn) {
		captured_host[ncaptured_host].capture = r->capture;
		captured_host[ncaptured_host].n.fn = fn;
		captured_host[ncaptured_host].n.data = data;
		ncaptured_host++;
	}
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}

/* mu held: @fn (or @cb) is called once logv[@rec] ended (the queue has room:
 * the caller checked). */
static void hostq_push(int rec, CUhostFn fn, CUstreamCallback cb, CUstream h, void *data)
{
	pthread_t t;
	unsigned int i;

	if (!host_thread_up) {
		if (pthread_create(&t, NULL, host_thread, NULL) == 0) {
			pthread_detach(t);
			host_thread_up = 1;
		}
	}
	i = hostq_tail++ % MAX_HOSTFN;
	hostq[i].rec = rec;
	hostq[i].fn = fn;
	hostq[i].cb = cb;
	hostq[i].h = h;
	hostq[i].data = data;
	pthread_cond_signal(&hostq_cv);
}

API CUresult cuLaunchHostFunc(CUstream h, CUhostFn fn, void *data)
{
	return fn ? host_fn(h, fn, NULL, data, 0) : CUDA_ERROR_INVALID_VALUE;
}

API CUresult cuLaunchHostFunc_ptsz(CUstream h, CUhostFn fn, void *data)
{
	return fn ? host_fn(h, fn, NULL, data, 1) : CUDA_ERROR_INVALID_VALUE;
}

API CUresult cuStreamAddCallback(CUstream h, CUstreamCallback cb, void *data, unsigned int fl)
{
	(void)fl;
	return cb ? host_fn(h, NULL, cb, data, 0) : CUDA_ERROR_INVALID_VALUE;
}

API CUresult cuStreamAddCallback_ptsz(CUstream h, CUstreamCallback cb, void *data,
				      unsigned int fl)
{
	(void)fl;
	return cb ? host_fn(h, NULL, cb, data, 1) : CUDA_ERROR_INVALID_VALUE;
}
