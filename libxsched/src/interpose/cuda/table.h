/* SPDX-License-Identifier: MIT */
/*
 * The CUDA driver entry points the interposer hooks (cuda/hooks.c), as X-macro
 * lists: scheduled calls, ordered and harmless pass-through, the urgent
 * context's bookkeeping, the stream calls routed but not scheduled, and
 * the synchronous copies the gather must open for.
 * Included by cuda/hooks.c only.
 */
#ifndef XSCHED_CUDA_TABLE_H
#define XSCHED_CUDA_TABLE_H

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
#define WAIT32_P (CUstream h, CUdeviceptr addr, cuuint32_t v, unsigned int fl)
#define WAIT64_P (CUstream h, CUdeviceptr addr, cuuint64_t v, unsigned int fl)
#define WAITV_A (h, addr, v, fl)
#define BATCH_P (CUstream h, unsigned int n, CUstreamBatchMemOpParams *ops, unsigned int fl)
#define BATCH_A (h, n, ops, fl)

#define SCHEDULED(X) \
	X(cuLaunchKernel, "cuLaunchKernel", 0, 4000, LAUNCH_P, LAUNCH_A, h, ROUTE_F) \
	X(cuLaunchKernel_ptsz, "cuLaunchKernel", 1, 7000, LAUNCH_P, LAUNCH_A, h, ROUTE_F) \
	X(cuLaunchKernelEx, "cuLaunchKernelEx", 0, 11060, EX_P, EX_A, cfg ? cfg->hStream : NULL, ROUTE_EX) \
	X(cuLaunchKernelEx_ptsz, "cuLaunchKernelEx", 1, 11060, EX_P, EX_A, cfg ? cfg->hStream : NULL, ROUTE_EX) \
	X(cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel", 0, 9000, COOP_P, COOP_A, h, ROUTE_F) \
	X(cuLaunchCooperativeKernel_ptsz, "cuLaunchCooperativeKernel", 1, 9000, COOP_P, COOP_A, h, ROUTE_F) \
	X(cuLaunchHostFunc, "cuLaunchHostFunc", 0, 10000, HOSTFN_P, HOSTFN_A, h, ROUTE_H) \
	X(cuLaunchHostFunc_ptsz, "cuLaunchHostFunc", 1, 10000, HOSTFN_P, HOSTFN_A, h, ROUTE_H) \
	X(cuStreamAddCallback, "cuStreamAddCallback", 0, 5000, CB_P, CB_A, h, ROUTE_CB) \
	X(cuStreamAddCallback_ptsz, "cuStreamAddCallback", 1, 7000, CB_P, CB_A, h, ROUTE_CB) \
	X(cuGraphLaunch, "cuGraphLaunch", 0, 10000, GRAPH_P, GRAPH_A, h, ROUTE_H) \
	X(cuGraphLaunch_ptsz, "cuGraphLaunch", 1, 10000, GRAPH_P, GRAPH_A, h, ROUTE_H) \
	X(cuMemcpyAsync, "cuMemcpyAsync", 0, 4000, CPY_P, CPY_A, h, ROUTE_H) \
	X(cuMemcpyAsync_ptsz, "cuMemcpyAsync", 1, 7000, CPY_P, CPY_A, h, ROUTE_H) \
	X(cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync", 0, 3020, HTOD_P, HTOD_A, h, ROUTE_H) \
	X(cuMemcpyHtoDAsync_v2_ptsz, "cuMemcpyHtoDAsync", 1, 7000, HTOD_P, HTOD_A, h, ROUTE_H) \
	X(cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync", 0, 3020, DTOH_P, DTOH_A, h, ROUTE_H) \
	X(cuMemcpyDtoHAsync_v2_ptsz, "cuMemcpyDtoHAsync", 1, 7000, DTOH_P, DTOH_A, h, ROUTE_H) \
	X(cuMemcpyDtoDAsync_v2, "cuMemcpyDtoDAsync", 0, 3020, CPY_P, CPY_A, h, ROUTE_G) \
	X(cuMemcpyDtoDAsync_v2_ptsz, "cuMemcpyDtoDAsync", 1, 7000, CPY_P, CPY_A, h, ROUTE_G) \
	X(cuMemcpy2DAsync_v2, "cuMemcpy2DAsync", 0, 3020, C2D_P, CP_A, h, ROUTE_H) \
	X(cuMemcpy2DAsync_v2_ptsz, "cuMemcpy2DAsync", 1, 7000, C2D_P, CP_A, h, ROUTE_H) \
	X(cuMemcpy3DAsync_v2, "cuMemcpy3DAsync", 0, 3020, C3D_P, CP_A, h, ROUTE_H) \
	X(cuMemcpy3DAsync_v2_ptsz, "cuMemcpy3DAsync", 1, 7000, C3D_P, CP_A, h, ROUTE_H) \
	X(cuMemcpyPeerAsync, "cuMemcpyPeerAsync", 0, 4000, PEER_P, PEER_A, h, ROUTE_H) \
	X(cuMemcpyPeerAsync_ptsz, "cuMemcpyPeerAsync", 1, 7000, PEER_P, PEER_A, h, ROUTE_H) \
	X(cuMemcpy3DPeerAsync, "cuMemcpy3DPeerAsync", 0, 4000, C3DP_P, CP_A, h, ROUTE_H) \
	X(cuMemcpy3DPeerAsync_ptsz, "cuMemcpy3DPeerAsync", 1, 7000, C3DP_P, CP_A, h, ROUTE_H) \
	X(cuMemsetD8Async, "cuMemsetD8Async", 0, 3020, SET8_P, SET_A, h, ROUTE_G) \
	X(cuMemsetD8Async_ptsz, "cuMemsetD8Async", 1, 7000, SET8_P, SET_A, h, ROUTE_G) \
	X(cuMemsetD16Async, "cuMemsetD16Async", 0, 3020, SET16_P, SET_A, h, ROUTE_G) \
	X(cuMemsetD16Async_ptsz, "cuMemsetD16Async", 1, 7000, SET16_P, SET_A, h, ROUTE_G) \
	X(cuMemsetD32Async, "cuMemsetD32Async", 0, 3020, SET32_P, SET_A, h, ROUTE_G) \
	X(cuMemsetD32Async_ptsz, "cuMemsetD32Async", 1, 7000, SET32_P, SET_A, h, ROUTE_G) \
	X(cuMemsetD2D8Async, "cuMemsetD2D8Async", 0, 3020, S2D8_P, S2D_A, h, ROUTE_G) \
	X(cuMemsetD2D8Async_ptsz, "cuMemsetD2D8Async", 1, 7000, S2D8_P, S2D_A, h, ROUTE_G) \
	X(cuMemsetD2D16Async, "cuMemsetD2D16Async", 0, 3020, S2D16_P, S2D_A, h, ROUTE_G) \
	X(cuMemsetD2D16Async_ptsz, "cuMemsetD2D16Async", 1, 7000, S2D16_P, S2D_A, h, ROUTE_G) \
	X(cuMemsetD2D32Async, "cuMemsetD2D32Async", 0, 3020, S2D32_P, S2D_A, h, ROUTE_G) \
	X(cuMemsetD2D32Async_ptsz, "cuMemsetD2D32Async", 1, 7000, S2D32_P, S2D_A, h, ROUTE_G) \
	X(cuStreamWaitValue32, "cuStreamWaitValue32", 0, 8000, WAIT32_P, WAITV_A, h, ROUTE_H) \
	X(cuStreamWaitValue32_ptsz, "cuStreamWaitValue32", 1, 8000, WAIT32_P, WAITV_A, h, ROUTE_H) \
	X(cuStreamWaitValue64, "cuStreamWaitValue64", 0, 9000, WAIT64_P, WAITV_A, h, ROUTE_H) \
	X(cuStreamWaitValue64_ptsz, "cuStreamWaitValue64", 1, 9000, WAIT64_P, WAITV_A, h, ROUTE_H) \
	X(cuStreamBatchMemOp, "cuStreamBatchMemOp", 0, 8000, BATCH_P, BATCH_A, h, ROUTE_H) \
	X(cuStreamBatchMemOp_ptsz, "cuStreamBatchMemOp", 1, 8000, BATCH_P, BATCH_A, h, ROUTE_H) \
	X(cuStreamWaitValue32_v2, "cuStreamWaitValue32", 0, 11070, WAIT32_P, WAITV_A, h, ROUTE_H) \
	X(cuStreamWaitValue32_v2_ptsz, "cuStreamWaitValue32", 1, 11070, WAIT32_P, WAITV_A, h, ROUTE_H) \
	X(cuStreamWaitValue64_v2, "cuStreamWaitValue64", 0, 11070, WAIT64_P, WAITV_A, h, ROUTE_H) \
	X(cuStreamWaitValue64_v2_ptsz, "cuStreamWaitValue64", 1, 11070, WAIT64_P, WAITV_A, h, ROUTE_H) \
	X(cuStreamBatchMemOp_v2, "cuStreamBatchMemOp", 0, 11070, BATCH_P, BATCH_A, h, ROUTE_H) \
	X(cuStreamBatchMemOp_v2_ptsz, "cuStreamBatchMemOp", 1, 11070, BATCH_P, BATCH_A, h, ROUTE_H)

/* Ordered and harmless pass-through entry points (hand-written hooks
 * below): X(symbol, base name, per-thread, since, class, drain scope). */
#define ORDERED(X) \
	X(cuStreamCreate, "cuStreamCreate", 0, 2000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuStreamCreateWithPriority, "cuStreamCreateWithPriority", 0, 5050, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuStreamSynchronize, "cuStreamSynchronize", 0, 2000, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuStreamSynchronize_ptsz, "cuStreamSynchronize", 1, 7000, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuStreamQuery, "cuStreamQuery", 0, 2000, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuStreamQuery_ptsz, "cuStreamQuery", 1, 7000, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuCtxSynchronize, "cuCtxSynchronize", 0, 2000, XSI_ORDERED, XSI_SCOPE_DEVICE) \
	X(cuCtxSynchronize_v2, "cuCtxSynchronize", 0, 12090, XSI_ORDERED, XSI_SCOPE_DEVICE) \
	X(cuStreamDestroy, "cuStreamDestroy", 0, 2000, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuStreamDestroy_v2, "cuStreamDestroy", 0, 4000, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuStreamBeginCapture, "cuStreamBeginCapture", 0, 10000, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuStreamBeginCapture_ptsz, "cuStreamBeginCapture", 1, 10000, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuStreamBeginCapture_v2, "cuStreamBeginCapture", 0, 10010, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuStreamBeginCapture_v2_ptsz, "cuStreamBeginCapture", 1, 10010, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuStreamBeginCaptureToGraph, "cuStreamBeginCaptureToGraph", 0, 12030, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuStreamBeginCaptureToGraph_ptsz, "cuStreamBeginCaptureToGraph", 1, 12030, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuStreamEndCapture, "cuStreamEndCapture", 0, 10000, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuStreamEndCapture_ptsz, "cuStreamEndCapture", 1, 10000, XSI_ORDERED, XSI_SCOPE_STREAM) \
	X(cuCtxDestroy, "cuCtxDestroy", 0, 2000, XSI_ORDERED, XSI_SCOPE_DEVICE) \
	X(cuCtxDestroy_v2, "cuCtxDestroy", 0, 4000, XSI_ORDERED, XSI_SCOPE_DEVICE) \
	X(cuDevicePrimaryCtxReset, "cuDevicePrimaryCtxReset", 0, 7000, XSI_ORDERED, XSI_SCOPE_DEVICE) \
	X(cuDevicePrimaryCtxReset_v2, "cuDevicePrimaryCtxReset", 0, 11000, XSI_ORDERED, XSI_SCOPE_DEVICE) \
	X(cuStreamSetAttribute, "cuStreamSetAttribute", 0, 11000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuStreamSetAttribute_ptsz, "cuStreamSetAttribute", 1, 11000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuStreamCopyAttributes, "cuStreamCopyAttributes", 0, 11000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuStreamCopyAttributes_ptsz, "cuStreamCopyAttributes", 1, 11000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuGetProcAddress, "cuGetProcAddress", 0, 11030, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuGetProcAddress_v2, "cuGetProcAddress", 0, 12000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	URGENT(X)

/* Pass-through with the urgent context's bookkeeping (hand-written hooks
 * below): events, code, and the stream calls that are not scheduled. */
#define URGENT(X) \
	X(cuEventCreate, "cuEventCreate", 0, 2000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuEventDestroy, "cuEventDestroy", 0, 2000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuEventDestroy_v2, "cuEventDestroy", 0, 4000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuEventRecord, "cuEventRecord", 0, 2000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuEventRecord_ptsz, "cuEventRecord", 1, 7000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuEventRecordWithFlags, "cuEventRecordWithFlags", 0, 11010, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuEventRecordWithFlags_ptsz, "cuEventRecordWithFlags", 1, 11010, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuStreamWaitEvent, "cuStreamWaitEvent", 0, 3020, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuStreamWaitEvent_ptsz, "cuStreamWaitEvent", 1, 7000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuEventSynchronize, "cuEventSynchronize", 0, 2000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuEventQuery, "cuEventQuery", 0, 2000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuEventElapsedTime, "cuEventElapsedTime", 0, 2000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuEventElapsedTime_v2, "cuEventElapsedTime", 0, 12080, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuModuleLoadData, "cuModuleLoadData", 0, 2000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuModuleLoadDataEx, "cuModuleLoadDataEx", 0, 2010, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuModuleLoadFatBinary, "cuModuleLoadFatBinary", 0, 2000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuModuleLoad, "cuModuleLoad", 0, 2000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuModuleUnload, "cuModuleUnload", 0, 2000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuLibraryLoadData, "cuLibraryLoadData", 0, 12000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuLibraryLoadFromFile, "cuLibraryLoadFromFile", 0, 12000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuLibraryUnload, "cuLibraryUnload", 0, 12000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuLibraryGetModule, "cuLibraryGetModule", 0, 12000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuKernelGetFunction, "cuKernelGetFunction", 0, 12000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuModuleGetFunction, "cuModuleGetFunction", 0, 2000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuLibraryGetKernel, "cuLibraryGetKernel", 0, 12000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuFuncSetAttribute, "cuFuncSetAttribute", 0, 9000, XSI_HARMLESS, XSI_SCOPE_STREAM) \
	X(cuFuncSetCacheConfig, "cuFuncSetCacheConfig", 0, 3000, XSI_HARMLESS, XSI_SCOPE_STREAM)

/* Stream calls that are not scheduled: an urgent stream's run on its twin,
 * the gather's gates opened first (O), or, what names an object of the
 * program's context, on its own stream after the twin's work (S).  X(symbol, base, per-thread, since,
 * params, args, how). */
#define WV32_P (CUstream h, CUdeviceptr a, cuuint32_t v, unsigned int fl)
#define WV64_P (CUstream h, CUdeviceptr a, cuuint64_t v, unsigned int fl)
#define PF1_P (CUdeviceptr p, size_t n, CUdevice d, CUstream h)
#define PF2_P (CUdeviceptr p, size_t n, CUmemLocation l, unsigned int fl, CUstream h)
#define ALLOC_P (CUdeviceptr *p, size_t n, CUstream h)
#define FREE_P (CUdeviceptr p, CUstream h)
#define POOL_P (CUdeviceptr *p, size_t n, CUmemoryPool mp, CUstream h)
#define ATTACH_P (CUstream h, CUdeviceptr p, size_t n, unsigned int fl)
#define UPLOAD_P (CUgraphExec g, CUstream h)
#define SIG_P (const CUexternalSemaphore *e, const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS *p, \
	       unsigned int n, CUstream h)
#define WSEM_P (const CUexternalSemaphore *e, const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS *p, \
		unsigned int n, CUstream h)
#define ROUTED(X) \
	X(cuStreamWriteValue32, "cuStreamWriteValue32", 0, 8000, WV32_P, (h, a, v, fl), XU_OPEN) \
	X(cuStreamWriteValue32_ptsz, "cuStreamWriteValue32", 1, 8000, WV32_P, (h, a, v, fl), XU_OPEN) \
	X(cuStreamWriteValue64, "cuStreamWriteValue64", 0, 9000, WV64_P, (h, a, v, fl), XU_OPEN) \
	X(cuStreamWriteValue64_ptsz, "cuStreamWriteValue64", 1, 9000, WV64_P, (h, a, v, fl), XU_OPEN) \
	X(cuStreamWriteValue32_v2, "cuStreamWriteValue32", 0, 11070, WV32_P, (h, a, v, fl), XU_OPEN) \
	X(cuStreamWriteValue32_v2_ptsz, "cuStreamWriteValue32", 1, 11070, WV32_P, (h, a, v, fl), XU_OPEN) \
	X(cuStreamWriteValue64_v2, "cuStreamWriteValue64", 0, 11070, WV64_P, (h, a, v, fl), XU_OPEN) \
	X(cuStreamWriteValue64_v2_ptsz, "cuStreamWriteValue64", 1, 11070, WV64_P, (h, a, v, fl), XU_OPEN) \
	X(cuMemPrefetchAsync, "cuMemPrefetchAsync", 0, 8000, PF1_P, (p, n, d, h), XU_OPEN) \
	X(cuMemPrefetchAsync_ptsz, "cuMemPrefetchAsync", 1, 8000, PF1_P, (p, n, d, h), XU_OPEN) \
	X(cuMemPrefetchAsync_v2, "cuMemPrefetchAsync", 0, 12020, PF2_P, (p, n, l, fl, h), XU_OPEN) \
	X(cuMemPrefetchAsync_v2_ptsz, "cuMemPrefetchAsync", 1, 12020, PF2_P, (p, n, l, fl, h), XU_OPEN) \
	X(cuMemAllocAsync, "cuMemAllocAsync", 0, 11020, ALLOC_P, (p, n, h), XU_STAY) \
	X(cuMemAllocAsync_ptsz, "cuMemAllocAsync", 1, 11020, ALLOC_P, (p, n, h), XU_STAY) \
	X(cuMemFreeAsync, "cuMemFreeAsync", 0, 11020, FREE_P, (p, h), XU_STAY) \
	X(cuMemFreeAsync_ptsz, "cuMemFreeAsync", 1, 11020, FREE_P, (p, h), XU_STAY) \
	X(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", 0, 11020, POOL_P, (p, n, mp, h), XU_STAY) \
	X(cuMemAllocFromPoolAsync_ptsz, "cuMemAllocFromPoolAsync", 1, 11020, POOL_P, (p, n, mp, h), XU_STAY) \
	X(cuStreamAttachMemAsync, "cuStreamAttachMemAsync", 0, 6000, ATTACH_P, (h, p, n, fl), XU_STAY) \
	X(cuStreamAttachMemAsync_ptsz, "cuStreamAttachMemAsync", 1, 7000, ATTACH_P, (h, p, n, fl), XU_STAY) \
	X(cuGraphUpload, "cuGraphUpload", 0, 11010, UPLOAD_P, (g, h), XU_OPEN) \
	X(cuGraphUpload_ptsz, "cuGraphUpload", 1, 11010, UPLOAD_P, (g, h), XU_OPEN) \
	X(cuSignalExternalSemaphoresAsync, "cuSignalExternalSemaphoresAsync", 0, 10000, SIG_P, (e, p, n, h), XU_STAY) \
	X(cuSignalExternalSemaphoresAsync_ptsz, "cuSignalExternalSemaphoresAsync", 1, 10000, SIG_P, (e, p, n, h), XU_STAY) \
	X(cuWaitExternalSemaphoresAsync, "cuWaitExternalSemaphoresAsync", 0, 10000, WSEM_P, (e, p, n, h), XU_STAY) \
	X(cuWaitExternalSemaphoresAsync_ptsz, "cuWaitExternalSemaphoresAsync", 1, 10000, WSEM_P, (e, p, n, h), XU_STAY)

/* Synchronous copies and memsets: not scheduled (they run on the legacy or
 * per-thread stream and return when done), but the host waits in them, so
 * the gather opens first when a stream of the program's context waits for
 * gathered work.  X(symbol, base, per-thread, since, params, args). */
#define SCPY_P (CUdeviceptr dst, CUdeviceptr src, size_t n)
#define SHTOD_P (CUdeviceptr dst, const void *src, size_t n)
#define SDTOH_P (void *dst, CUdeviceptr src, size_t n)
#define S2D_P (const CUDA_MEMCPY2D *p)
#define S3D_P (const CUDA_MEMCPY3D *p)
#define SSET8_P (CUdeviceptr dst, unsigned char v, size_t n)
#define SSET16_P (CUdeviceptr dst, unsigned short v, size_t n)
#define SSET32_P (CUdeviceptr dst, unsigned int v, size_t n)
#define WAITS(X) \
	X(cuMemcpy, "cuMemcpy", 0, 4000, SCPY_P, (dst, src, n)) \
	X(cuMemcpy_ptds, "cuMemcpy", 1, 7000, SCPY_P, (dst, src, n)) \
	X(cuMemcpyHtoD_v2, "cuMemcpyHtoD", 0, 3020, SHTOD_P, (dst, src, n)) \
	X(cuMemcpyHtoD_v2_ptds, "cuMemcpyHtoD", 1, 7000, SHTOD_P, (dst, src, n)) \
	X(cuMemcpyDtoH_v2, "cuMemcpyDtoH", 0, 3020, SDTOH_P, (dst, src, n)) \
	X(cuMemcpyDtoH_v2_ptds, "cuMemcpyDtoH", 1, 7000, SDTOH_P, (dst, src, n)) \
	X(cuMemcpyDtoD_v2, "cuMemcpyDtoD", 0, 3020, SCPY_P, (dst, src, n)) \
	X(cuMemcpyDtoD_v2_ptds, "cuMemcpyDtoD", 1, 7000, SCPY_P, (dst, src, n)) \
	X(cuMemcpy2D_v2, "cuMemcpy2D", 0, 3020, S2D_P, (p)) \
	X(cuMemcpy2D_v2_ptds, "cuMemcpy2D", 1, 7000, S2D_P, (p)) \
	X(cuMemcpy3D_v2, "cuMemcpy3D", 0, 3020, S3D_P, (p)) \
	X(cuMemcpy3D_v2_ptds, "cuMemcpy3D", 1, 7000, S3D_P, (p)) \
	X(cuMemsetD8_v2, "cuMemsetD8", 0, 3020, SSET8_P, (dst, v, n)) \
	X(cuMemsetD8_v2_ptds, "cuMemsetD8", 1, 7000, SSET8_P, (dst, v, n)) \
	X(cuMemsetD16_v2, "cuMemsetD16", 0, 3020, SSET16_P, (dst, v, n)) \
	X(cuMemsetD16_v2_ptds, "cuMemsetD16", 1, 7000, SSET16_P, (dst, v, n)) \
	X(cuMemsetD32_v2, "cuMemsetD32", 0, 3020, SSET32_P, (dst, v, n)) \
	X(cuMemsetD32_v2_ptds, "cuMemsetD32", 1, 7000, SSET32_P, (dst, v, n))

#endif
