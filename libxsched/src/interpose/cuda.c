// SPDX-License-Identifier: MIT
/*
 * The CUDA driver API table of the interposer (libxsched-cuda.so).
 *
 * Every hooked function is exported under the name libcuda exports it by,
 * so a program linked against libcuda reaches the hook, and the same hook
 * is what dlsym() and cuGetProcAddress() hand out for it (cuda_lv1.c:
 * xc_redirect(), by the address the real lookup returned).
 *
 * Scheduled (xc_gate_enter/exit around the real call): kernel launches
 * (plain, Ex, cooperative), host functions and stream callbacks, graph
 * launches, async copies and memsets, each in its legacy and its per-thread
 * (_ptsz) variant.
 * Ordered pass-through with bookkeeping: stream and context synchronize and
 * stream query (they tell what completed), stream destroy and context
 * teardown (the handle table), begin/end of stream capture (captured calls
 * do not run), cuGetProcAddress itself.
 * Everything else passes through untouched; since no call is ever buffered
 * (cuda_lv1.h), each reaches the driver in program order.  Each lookup of a
 * driver function is named in the debug log with its class.
 */
#include <cuda.h>

#include "../internal.h"
#include "cuda_lv1.h"

/* Exported names whose cuda.h macro points at a later ABI: ours are the
 * exported symbols themselves. */
#undef cuStreamDestroy
#undef cuStreamBeginCapture
#undef cuCtxDestroy
#undef cuDevicePrimaryCtxReset
#undef cuGetProcAddress

#define EXPORT_AS(sym) \
	extern __typeof__(hook_##sym) sym __attribute__((alias("hook_" #sym), visibility("default")));

/*
 * Scheduled entry points: X(symbol, base name, per-thread, since, params,
 * args, stream).  `base` and `since` are what cuGetProcAddress is asked for
 * (the fallback when its answer is no exported symbol).
 */
#define LAUNCH_P (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, \
		  unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem, \
		  CUstream h, void **params, void **extra)
#define LAUNCH_A (f, gx, gy, gz, bx, by, bz, smem, h, params, extra)
#define COOP_P (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, \
		unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem, \
		CUstream h, void **params)
#define COOP_A (f, gx, gy, gz, bx, by, bz, smem, h, params)
#define EX_P (const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
#define EX_A (cfg, f, params, extra)
#define HOSTFN_P (CUstream h, CUhostFn fn, void *data)
#define HOSTFN_A (h, fn, data)
#define CB_P (CUstream h, CUstreamCallback cb, void *data, unsigned int flags)
#define CB_A (h, cb, data, flags)
#define GRAPH_P (CUgraphExec gx, CUstream h)
#define GRAPH_A (gx, h)
#define CPY_P (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
#define CPY_A (dst, src, n, h)
#define HTOD_P (CUdeviceptr dst, const void *src, size_t n, CUstream h)
#define HTOD_A (dst, src, n, h)
#define DTOH_P (void *dst, CUdeviceptr src, size_t n, CUstream h)
#define DTOH_A (dst, src, n, h)
#define C2D_P (const CUDA_MEMCPY2D *p, CUstream h)
#define C3D_P (const CUDA_MEMCPY3D *p, CUstream h)
#define C3DP_P (const CUDA_MEMCPY3D_PEER *p, CUstream h)
#define CP_A (p, h)
#define PEER_P (CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n, \
		CUstream h)
#define PEER_A (dst, dctx, src, sctx, n, h)
#define SET8_P (CUdeviceptr dst, unsigned char v, size_t n, CUstream h)
#define SET16_P (CUdeviceptr dst, unsigned short v, size_t n, CUstream h)
#define SET32_P (CUdeviceptr dst, unsigned int v, size_t n, CUstream h)
#define SET_A (dst, v, n, h)
#define S2D8_P (CUdeviceptr dst, size_t pitch, unsigned char v, size_t w, size_t ht, CUstream h)
#define S2D16_P (CUdeviceptr dst, size_t pitch, unsigned short v, size_t w, size_t ht, CUstream h)
#define S2D32_P (CUdeviceptr dst, size_t pitch, unsigned int v, size_t w, size_t ht, CUstream h)
#define S2D_A (dst, pitch, v, w, ht, h)

#define SCHEDULED(X) \
	X(cuLaunchKernel, "cuLaunchKernel", 0, 4000, LAUNCH_P, LAUNCH_A, h) \
	X(cuLaunchKernel_ptsz, "cuLaunchKernel", 1, 7000, LAUNCH_P, LAUNCH_A, h) \
	X(cuLaunchKernelEx, "cuLaunchKernelEx", 0, 11060, EX_P, EX_A, cfg ? cfg->hStream : NULL) \
	X(cuLaunchKernelEx_ptsz, "cuLaunchKernelEx", 1, 11060, EX_P, EX_A, cfg ? cfg->hStream : NULL) \
	X(cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel", 0, 9000, COOP_P, COOP_A, h) \
	X(cuLaunchCooperativeKernel_ptsz, "cuLaunchCooperativeKernel", 1, 9000, COOP_P, COOP_A, h) \
	X(cuLaunchHostFunc, "cuLaunchHostFunc", 0, 10000, HOSTFN_P, HOSTFN_A, h) \
	X(cuLaunchHostFunc_ptsz, "cuLaunchHostFunc", 1, 10000, HOSTFN_P, HOSTFN_A, h) \
	X(cuStreamAddCallback, "cuStreamAddCallback", 0, 5000, CB_P, CB_A, h) \
	X(cuStreamAddCallback_ptsz, "cuStreamAddCallback", 1, 7000, CB_P, CB_A, h) \
	X(cuGraphLaunch, "cuGraphLaunch", 0, 10000, GRAPH_P, GRAPH_A, h) \
	X(cuGraphLaunch_ptsz, "cuGraphLaunch", 1, 10000, GRAPH_P, GRAPH_A, h) \
	X(cuMemcpyAsync, "cuMemcpyAsync", 0, 4000, CPY_P, CPY_A, h) \
	X(cuMemcpyAsync_ptsz, "cuMemcpyAsync", 1, 7000, CPY_P, CPY_A, h) \
	X(cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync", 0, 3020, HTOD_P, HTOD_A, h) \
	X(cuMemcpyHtoDAsync_v2_ptsz, "cuMemcpyHtoDAsync", 1, 7000, HTOD_P, HTOD_A, h) \
	X(cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync", 0, 3020, DTOH_P, DTOH_A, h) \
	X(cuMemcpyDtoHAsync_v2_ptsz, "cuMemcpyDtoHAsync", 1, 7000, DTOH_P, DTOH_A, h) \
	X(cuMemcpyDtoDAsync_v2, "cuMemcpyDtoDAsync", 0, 3020, CPY_P, CPY_A, h) \
	X(cuMemcpyDtoDAsync_v2_ptsz, "cuMemcpyDtoDAsync", 1, 7000, CPY_P, CPY_A, h) \
	X(cuMemcpy2DAsync_v2, "cuMemcpy2DAsync", 0, 3020, C2D_P, CP_A, h) \
	X(cuMemcpy2DAsync_v2_ptsz, "cuMemcpy2DAsync", 1, 7000, C2D_P, CP_A, h) \
	X(cuMemcpy3DAsync_v2, "cuMemcpy3DAsync", 0, 3020, C3D_P, CP_A, h) \
	X(cuMemcpy3DAsync_v2_ptsz, "cuMemcpy3DAsync", 1, 7000, C3D_P, CP_A, h) \
	X(cuMemcpyPeerAsync, "cuMemcpyPeerAsync", 0, 4000, PEER_P, PEER_A, h) \
	X(cuMemcpyPeerAsync_ptsz, "cuMemcpyPeerAsync", 1, 7000, PEER_P, PEER_A, h) \
	X(cuMemcpy3DPeerAsync, "cuMemcpy3DPeerAsync", 0, 4000, C3DP_P, CP_A, h) \
	X(cuMemcpy3DPeerAsync_ptsz, "cuMemcpy3DPeerAsync", 1, 7000, C3DP_P, CP_A, h) \
	X(cuMemsetD8Async, "cuMemsetD8Async", 0, 3020, SET8_P, SET_A, h) \
	X(cuMemsetD8Async_ptsz, "cuMemsetD8Async", 1, 7000, SET8_P, SET_A, h) \
	X(cuMemsetD16Async, "cuMemsetD16Async", 0, 3020, SET16_P, SET_A, h) \
	X(cuMemsetD16Async_ptsz, "cuMemsetD16Async", 1, 7000, SET16_P, SET_A, h) \
	X(cuMemsetD32Async, "cuMemsetD32Async", 0, 3020, SET32_P, SET_A, h) \
	X(cuMemsetD32Async_ptsz, "cuMemsetD32Async", 1, 7000, SET32_P, SET_A, h) \
	X(cuMemsetD2D8Async, "cuMemsetD2D8Async", 0, 3020, S2D8_P, S2D_A, h) \
	X(cuMemsetD2D8Async_ptsz, "cuMemsetD2D8Async", 1, 7000, S2D8_P, S2D_A, h) \
	X(cuMemsetD2D16Async, "cuMemsetD2D16Async", 0, 3020, S2D16_P, S2D_A, h) \
	X(cuMemsetD2D16Async_ptsz, "cuMemsetD2D16Async", 1, 7000, S2D16_P, S2D_A, h) \
	X(cuMemsetD2D32Async, "cuMemsetD2D32Async", 0, 3020, S2D32_P, S2D_A, h) \
	X(cuMemsetD2D32Async_ptsz, "cuMemsetD2D32Async", 1, 7000, S2D32_P, S2D_A, h)

/* Ordered pass-through entry points (hand-written hooks below). */
#define ORDERED(X) \
	X(cuStreamSynchronize, "cuStreamSynchronize", 0, 2000) \
	X(cuStreamSynchronize_ptsz, "cuStreamSynchronize", 1, 7000) \
	X(cuStreamQuery, "cuStreamQuery", 0, 2000) \
	X(cuStreamQuery_ptsz, "cuStreamQuery", 1, 7000) \
	X(cuCtxSynchronize, "cuCtxSynchronize", 0, 2000) \
	X(cuCtxSynchronize_v2, "cuCtxSynchronize", 0, 12090) \
	X(cuStreamDestroy, "cuStreamDestroy", 0, 2000) \
	X(cuStreamDestroy_v2, "cuStreamDestroy", 0, 4000) \
	X(cuStreamBeginCapture, "cuStreamBeginCapture", 0, 10000) \
	X(cuStreamBeginCapture_ptsz, "cuStreamBeginCapture", 1, 10000) \
	X(cuStreamBeginCapture_v2, "cuStreamBeginCapture", 0, 10010) \
	X(cuStreamBeginCapture_v2_ptsz, "cuStreamBeginCapture", 1, 10010) \
	X(cuStreamBeginCaptureToGraph, "cuStreamBeginCaptureToGraph", 0, 12030) \
	X(cuStreamBeginCaptureToGraph_ptsz, "cuStreamBeginCaptureToGraph", 1, 12030) \
	X(cuStreamEndCapture, "cuStreamEndCapture", 0, 10000) \
	X(cuStreamEndCapture_ptsz, "cuStreamEndCapture", 1, 10000) \
	X(cuCtxDestroy, "cuCtxDestroy", 0, 2000) \
	X(cuCtxDestroy_v2, "cuCtxDestroy", 0, 4000) \
	X(cuDevicePrimaryCtxReset, "cuDevicePrimaryCtxReset", 0, 7000) \
	X(cuDevicePrimaryCtxReset_v2, "cuDevicePrimaryCtxReset", 0, 11000) \
	X(cuGetProcAddress, "cuGetProcAddress", 0, 11030) \
	X(cuGetProcAddress_v2, "cuGetProcAddress", 0, 12000)

#define ENUM_S(sym, base, pt, since, P, A, S) E_##sym,
#define ENUM_O(sym, base, pt, since) E_##sym,
enum { SCHEDULED(ENUM_S) ORDERED(ENUM_O) E_COUNT };

/* ---- scheduled hooks ---------------------------------------------------- */

#define HOOK_S(sym, base, pt, since, P, A, S)				\
	static CUresult (*real_##sym) P;				\
	static CUresult hook_##sym P					\
	{								\
		struct xc_gate gate_;				\
		CUresult r;						\
									\
		if (!xc_init() || !real_##sym)				\
			return CUDA_ERROR_NOT_INITIALIZED;		\
		xc_gate_enter(&gate_, &xc_entries[E_##sym], (S));		\
		r = real_##sym A;					\
		xc_gate_exit(&gate_, r == CUDA_SUCCESS);			\
		return r;						\
	}								\
	EXPORT_AS(sym)
SCHEDULED(HOOK_S)

/* ---- ordered pass-through hooks ----------------------------------------- */

/* The old exported ABIs that cuda.h no longer declares. */
typedef CUresult (*begin_capture_v1_fn)(CUstream);
typedef CUresult (*get_proc_v1_fn)(const char *, void **, int, cuuint64_t);

static CUresult (*real_cuStreamSynchronize)(CUstream);
static CUresult (*real_cuStreamSynchronize_ptsz)(CUstream);
static CUresult (*real_cuStreamQuery)(CUstream);
static CUresult (*real_cuStreamQuery_ptsz)(CUstream);
static CUresult (*real_cuCtxSynchronize)(void);
static CUresult (*real_cuCtxSynchronize_v2)(CUcontext);
static CUresult (*real_cuStreamDestroy)(CUstream);
static CUresult (*real_cuStreamDestroy_v2)(CUstream);
static begin_capture_v1_fn real_cuStreamBeginCapture;
static begin_capture_v1_fn real_cuStreamBeginCapture_ptsz;
static CUresult (*real_cuStreamBeginCapture_v2)(CUstream, CUstreamCaptureMode);
static CUresult (*real_cuStreamBeginCapture_v2_ptsz)(CUstream, CUstreamCaptureMode);
static CUresult (*real_cuStreamBeginCaptureToGraph)(CUstream, CUgraph, const CUgraphNode *,
						     const CUgraphEdgeData *, size_t,
						     CUstreamCaptureMode);
static CUresult (*real_cuStreamBeginCaptureToGraph_ptsz)(CUstream, CUgraph, const CUgraphNode *,
							  const CUgraphEdgeData *, size_t,
							  CUstreamCaptureMode);
static CUresult (*real_cuStreamEndCapture)(CUstream, CUgraph *);
static CUresult (*real_cuStreamEndCapture_ptsz)(CUstream, CUgraph *);
static CUresult (*real_cuCtxDestroy)(CUcontext);
static CUresult (*real_cuCtxDestroy_v2)(CUcontext);
static CUresult (*real_cuDevicePrimaryCtxReset)(CUdevice);
static CUresult (*real_cuDevicePrimaryCtxReset_v2)(CUdevice);
static get_proc_v1_fn real_cuGetProcAddress;
static CUresult (*real_cuGetProcAddress_v2)(const char *, void **, int, cuuint64_t,
					     CUdriverProcAddressQueryResult *);

#define READY(sym) do {						\
	if (!xc_init() || !real_##sym)				\
		return CUDA_ERROR_NOT_INITIALIZED;		\
} while (0)

/* A successful synchronize or query: everything handed over before it ran
 * has completed. */
#define SYNC_HOOK(sym, ok)						\
	static CUresult hook_##sym(CUstream h)				\
	{								\
		struct xc_queue *q;					\
		uint64_t n;						\
		CUresult r;						\
									\
		READY(sym);						\
		n = xc_stream_launched(&xc_entries[E_##sym], h, &q);	\
		r = real_##sym(h);					\
		if (r == (ok))						\
			xc_stream_done(q, n);				\
		return r;						\
	}								\
	EXPORT_AS(sym)
SYNC_HOOK(cuStreamSynchronize, CUDA_SUCCESS)
SYNC_HOOK(cuStreamSynchronize_ptsz, CUDA_SUCCESS)
SYNC_HOOK(cuStreamQuery, CUDA_SUCCESS)
SYNC_HOOK(cuStreamQuery_ptsz, CUDA_SUCCESS)

static CUresult hook_cuCtxSynchronize(void)
{
	uint64_t snap[512];
	unsigned int n = 0;
	CUcontext ctx = NULL;
	CUresult r;

	READY(cuCtxSynchronize);
	xc_note_pass(&xc_entries[E_cuCtxSynchronize], NULL);
	if (xc_real.ctx_get_current(&ctx) == CUDA_SUCCESS && ctx)
		n = xc_ctx_snapshot(ctx, snap, 512);
	r = real_cuCtxSynchronize();
	if (r == CUDA_SUCCESS)
		xc_ctx_synchronized(ctx, snap, n);
	return r;
}
EXPORT_AS(cuCtxSynchronize)

/* CUDA 12.9+: synchronize a given context (NULL: the current one). */
static CUresult hook_cuCtxSynchronize_v2(CUcontext c)
{
	uint64_t snap[512];
	unsigned int n = 0;
	CUcontext ctx = c;
	CUresult r;

	READY(cuCtxSynchronize_v2);
	xc_note_pass(&xc_entries[E_cuCtxSynchronize_v2], NULL);
	if (!ctx && xc_real.ctx_get_current(&ctx) != CUDA_SUCCESS)
		ctx = NULL;
	if (ctx)
		n = xc_ctx_snapshot(ctx, snap, 512);
	r = real_cuCtxSynchronize_v2(c);
	if (r == CUDA_SUCCESS)
		xc_ctx_synchronized(ctx, snap, n);
	return r;
}
EXPORT_AS(cuCtxSynchronize_v2)

#define DESTROY_HOOK(sym)						\
	static CUresult hook_##sym(CUstream h)				\
	{								\
		READY(sym);						\
		xc_note_pass(&xc_entries[E_##sym], h);			\
		xc_stream_destroyed(h);					\
		return real_##sym(h);					\
	}								\
	EXPORT_AS(sym)
DESTROY_HOOK(cuStreamDestroy)
DESTROY_HOOK(cuStreamDestroy_v2)

#define BEGIN_HOOK(sym, P, A)						\
	static CUresult hook_##sym P					\
	{								\
		CUresult r;						\
									\
		READY(sym);						\
		r = real_##sym A;					\
		if (r == CUDA_SUCCESS)					\
			xc_capture(&xc_entries[E_##sym], h, true);	\
		return r;						\
	}								\
	EXPORT_AS(sym)
BEGIN_HOOK(cuStreamBeginCapture, (CUstream h), (h))
BEGIN_HOOK(cuStreamBeginCapture_ptsz, (CUstream h), (h))
BEGIN_HOOK(cuStreamBeginCapture_v2, (CUstream h, CUstreamCaptureMode m), (h, m))
BEGIN_HOOK(cuStreamBeginCapture_v2_ptsz, (CUstream h, CUstreamCaptureMode m), (h, m))
BEGIN_HOOK(cuStreamBeginCaptureToGraph,
	   (CUstream h, CUgraph g, const CUgraphNode *d, const CUgraphEdgeData *dd, size_t n,
	    CUstreamCaptureMode m), (h, g, d, dd, n, m))
BEGIN_HOOK(cuStreamBeginCaptureToGraph_ptsz,
	   (CUstream h, CUgraph g, const CUgraphNode *d, const CUgraphEdgeData *dd, size_t n,
	    CUstreamCaptureMode m), (h, g, d, dd, n, m))

/* The capture ends whatever the result (an invalidated capture too). */
#define END_HOOK(sym)							\
	static CUresult hook_##sym(CUstream h, CUgraph *g)		\
	{								\
		CUresult r;						\
									\
		READY(sym);						\
		r = real_##sym(h, g);					\
		xc_capture(&xc_entries[E_##sym], h, false);		\
		return r;						\
	}								\
	EXPORT_AS(sym)
END_HOOK(cuStreamEndCapture)
END_HOOK(cuStreamEndCapture_ptsz)

#define CTX_HOOK(sym)							\
	static CUresult hook_##sym(CUcontext c)				\
	{								\
		READY(sym);						\
		xc_note_pass(&xc_entries[E_##sym], NULL);		\
		xc_ctx_destroyed(c, -1);				\
		return real_##sym(c);					\
	}								\
	EXPORT_AS(sym)
CTX_HOOK(cuCtxDestroy)
CTX_HOOK(cuCtxDestroy_v2)

#define RESET_HOOK(sym)							\
	static CUresult hook_##sym(CUdevice d)				\
	{								\
		READY(sym);						\
		xc_note_pass(&xc_entries[E_##sym], NULL);		\
		xc_ctx_destroyed(NULL, (int)d);				\
		return real_##sym(d);					\
	}								\
	EXPORT_AS(sym)
RESET_HOOK(cuDevicePrimaryCtxReset)
RESET_HOOK(cuDevicePrimaryCtxReset_v2)

/* The runtime resolves every driver function through here: hand out hooks. */
static CUresult hook_cuGetProcAddress_v2(const char *sym, void **pfn, int ver,
					 cuuint64_t flags,
					 CUdriverProcAddressQueryResult *status)
{
	CUresult r;

	READY(cuGetProcAddress_v2);
	r = real_cuGetProcAddress_v2(sym, pfn, ver, flags, status);
	if (r == CUDA_SUCCESS && pfn && *pfn)
		*pfn = xc_redirect("cuGetProcAddress", sym, *pfn, ver, flags);
	return r;
}
EXPORT_AS(cuGetProcAddress_v2)

static CUresult hook_cuGetProcAddress(const char *sym, void **pfn, int ver,
				      cuuint64_t flags)
{
	CUresult r;

	READY(cuGetProcAddress);
	r = real_cuGetProcAddress(sym, pfn, ver, flags);
	if (r == CUDA_SUCCESS && pfn && *pfn)
		*pfn = xc_redirect("cuGetProcAddress", sym, *pfn, ver, flags);
	return r;
}
EXPORT_AS(cuGetProcAddress)

/* ---- the table ---------------------------------------------------------- */

#define ENT_S(sym, b, pt, s, P, A, S) \
	[E_##sym] = { .name = #sym, .base = b, .cls = XC_SCHEDULED, .per_thread = pt, \
		      .since = s, .hook = (void *)hook_##sym, .real = (void **)&real_##sym },
#define ENT_O(sym, b, pt, s) \
	[E_##sym] = { .name = #sym, .base = b, .cls = XC_ORDERED, .per_thread = pt, \
		      .since = s, .hook = (void *)hook_##sym, .real = (void **)&real_##sym },
struct xc_entry xc_entries[] = { SCHEDULED(ENT_S) ORDERED(ENT_O) };
const unsigned int xc_nentries = E_COUNT;
