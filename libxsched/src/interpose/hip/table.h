/* SPDX-License-Identifier: MIT */
/*
 * The HIP table: every entry point of libamdhip64 the interposer knows, as
 * X-macro lists (HIP_SCHEDULED, HIP_SCHEDULED_MULTI, HIP_SCHEDULED_OWN,
 * HIP_ORDERED, HIP_ORDERED_OWN, HIP_HARMLESS: hooked; HIP_CXX_NAMES: C++
 * exports of hooked entries; HIP_UNHOOKED: deliberately not hooked, and
 * why) with the parameter lists their hooks take.  hip/hooks.c expands them
 * into hooks and the entry table; tests/libxsched/hip/coverage.py and
 * tests/hip-real read them from this file.
 */
#ifndef XSCHED_INTERPOSE_HIP_TABLE_H
#define XSCHED_INTERPOSE_HIP_TABLE_H

/* Parameter lists: P the declaration, A the call. */
#define LK_P (const void *f, dim3 g, dim3 b, void **args, size_t smem, hipStream_t h)
#define LK_A (f, g, b, args, smem, h)
#define COOP_P (const void *f, dim3 g, dim3 b, void **args, unsigned int smem, hipStream_t h)
#define EXTLK_P (const void *f, dim3 g, dim3 b, void **args, size_t smem, hipStream_t h, \
		 hipEvent_t e0, hipEvent_t e1, int fl)
#define EXTLK_A (f, g, b, args, smem, h, e0, e1, fl)
#define MLK_P (hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz, \
	       unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem, \
	       hipStream_t h, void **params, void **extra)
#define MLK_A (f, gx, gy, gz, bx, by, bz, smem, h, params, extra)
#define MCOOP_P (hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz, \
		 unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem, \
		 hipStream_t h, void **params)
#define MCOOP_A (f, gx, gy, gz, bx, by, bz, smem, h, params)
#define EXTMLK_P (hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, \
		  uint32_t by, uint32_t bz, size_t smem, hipStream_t h, void **params, \
		  void **extra, hipEvent_t e0, hipEvent_t e1, uint32_t fl)
#define EXTMLK_A (f, gx, gy, gz, bx, by, bz, smem, h, params, extra, e0, e1, fl)
#define HCCMLK_P (hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, \
		  uint32_t by, uint32_t bz, size_t smem, hipStream_t h, void **params, \
		  void **extra, hipEvent_t e0, hipEvent_t e1)
#define HCCMLK_A (f, gx, gy, gz, bx, by, bz, smem, h, params, extra, e0, e1)
#define LKEXC_P (const hipLaunchConfig_t *cfg, const void *f, void **args)
#define LKEXC_A (cfg, f, args)
#define DLKEX_P (const HIP_LAUNCH_CONFIG *cfg, hipFunction_t f, void **params, void **extra)
#define DLKEX_A (cfg, f, params, extra)
#define HOSTFN_P (hipStream_t h, hipHostFn_t fn, void *data)
#define HOSTFN_A (h, fn, data)
#define CB_P (hipStream_t h, hipStreamCallback_t cb, void *data, unsigned int fl)
#define CB_A (h, cb, data, fl)
#define GRAPH_P (hipGraphExec_t gx, hipStream_t h)
#define GRAPH_A (gx, h)
#define CPY_P (void *dst, const void *src, size_t n, hipMemcpyKind k, hipStream_t h)
#define CPY_A (dst, src, n, k, h)
#define HTOD_P (hipDeviceptr_t dst, xh_htod_async_src src, size_t n, hipStream_t h)
#define DTOH_P (void *dst, hipDeviceptr_t src, size_t n, hipStream_t h)
#define DTOD_P (hipDeviceptr_t dst, hipDeviceptr_t src, size_t n, hipStream_t h)
#define X3_A (dst, src, n, h)
#define C2D_P (void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t ht, \
	       hipMemcpyKind k, hipStream_t h)
#define C2D_A (dst, dp, src, sp, w, ht, k, h)
#define C2DTA_P (hipArray_t dst, size_t wo, size_t ho, const void *src, size_t sp, size_t w, \
		 size_t ht, hipMemcpyKind k, hipStream_t h)
#define C2DTA_A (dst, wo, ho, src, sp, w, ht, k, h)
#define C2DFA_P (void *dst, size_t dp, hipArray_const_t src, size_t wo, size_t ho, size_t w, \
		 size_t ht, hipMemcpyKind k, hipStream_t h)
#define C2DFA_A (dst, dp, src, wo, ho, w, ht, k, h)
#define C3D_P (const struct hipMemcpy3DParms *p, hipStream_t h)
#define DC3D_P (const HIP_MEMCPY3D *p, hipStream_t h)
#define P2D_P (const hip_Memcpy2D *p, hipStream_t h)
#define PH_A (p, h)
#define TOSYM_P (const void *sym, const void *src, size_t n, size_t off, hipMemcpyKind k, \
		 hipStream_t h)
#define TOSYM_A (sym, src, n, off, k, h)
#define FROMSYM_P (void *dst, const void *sym, size_t n, size_t off, hipMemcpyKind k, \
		   hipStream_t h)
#define FROMSYM_A (dst, sym, n, off, k, h)
#define PEER_P (void *dst, int dd, const void *src, int sd, size_t n, hipStream_t h)
#define PEER_A (dst, dd, src, sd, n, h)
#define SET_P (void *dst, int v, size_t n, hipStream_t h)
#define SET8_P (hipDeviceptr_t dst, unsigned char v, size_t n, hipStream_t h)
#define SET16_P (hipDeviceptr_t dst, unsigned short v, size_t n, hipStream_t h)
#define SET32_P (hipDeviceptr_t dst, int v, size_t n, hipStream_t h)
#define SET_A (dst, v, n, h)
#define S2D_P (void *dst, size_t pitch, int v, size_t w, size_t ht, hipStream_t h)
#define S2D_A (dst, pitch, v, w, ht, h)
#define S3D_P (hipPitchedPtr p, int v, hipExtent ext, hipStream_t h)
#define S3D_A (p, v, ext, h)
#define PREF_P (const void *p, size_t n, int dev, hipStream_t h)
#define MAPA_P (hipArrayMapInfo *l, unsigned int n, hipStream_t h)
#define MAPA_A (l, n, h)
#define PREF_A (p, n, dev, h)
#define WAIT32_P (hipStream_t h, void *p, uint32_t v, unsigned int fl, uint32_t mask)
#define WAIT64_P (hipStream_t h, void *p, uint64_t v, unsigned int fl, uint64_t mask)
#define WAITV_A (h, p, v, fl, mask)
#define WRITE32_P (hipStream_t h, void *p, uint32_t v, unsigned int fl)
#define WRITE64_P (hipStream_t h, void *p, uint64_t v, unsigned int fl)
#define WRITEV_A (h, p, v, fl)
#define SEMSIG_P (const hipExternalSemaphore_t *sem, \
		  const hipExternalSemaphoreSignalParams *par, unsigned int n, hipStream_t h)
#define SEMWAIT_P (const hipExternalSemaphore_t *sem, \
		   const hipExternalSemaphoreWaitParams *par, unsigned int n, hipStream_t h)
#define SEM_A (sem, par, n, h)
#define REC_P (hipEvent_t ev, hipStream_t h)
#define REC_A (ev, h)
#define RECF_P (hipEvent_t ev, hipStream_t h, unsigned int fl)
#define RECF_A (ev, h, fl)
#define WITHSTREAM_P (void *dst, const void *src, size_t n, hipMemcpyKind k, hipStream_t h)
#define ATOHA_P (void *dst, hipArray_t src, size_t off, size_t n, hipStream_t h)
#define ATOHA_A (dst, src, off, n, h)
#define HTOAA_P (hipArray_t dst, size_t off, const void *src, size_t n, hipStream_t h)
#define HTOAA_A (dst, off, src, n, h)
#define BATCHOP_P (hipStream_t h, unsigned int n, hipStreamBatchMemOpParams *ops, unsigned int fl)
#define BATCHOP_A (h, n, ops, fl)
#define SD2D8_P (hipDeviceptr_t dst, size_t pitch, unsigned char v, size_t w, size_t ht, \
		 hipStream_t h)
#define SD2D16_P (hipDeviceptr_t dst, size_t pitch, unsigned short v, size_t w, size_t ht, \
		  hipStream_t h)
#define SD2D32_P (hipDeviceptr_t dst, size_t pitch, unsigned int v, size_t w, size_t ht, \
		  hipStream_t h)
#define CPYB_P (void **dsts, void **srcs, size_t *sizes, size_t n, hipMemcpyAttributes *attrs, \
		size_t *attr_idx, size_t nattrs, size_t *fail_idx, hipStream_t h)
#define CPYB_A (dsts, srcs, sizes, n, attrs, attr_idx, nattrs, fail_idx, h)
#define C3DB_P (size_t n, struct hipMemcpy3DBatchOp *ops, size_t *fail_idx, unsigned long long fl, \
		hipStream_t h)
#define C3DB_A (n, ops, fail_idx, fl, h)
#define C3DP_P (hipMemcpy3DPeerParms *p, hipStream_t h)
#define PREF2_P (const void *p, size_t n, hipMemLocation loc, unsigned int fl, hipStream_t h)
#define PREF2_A (p, n, loc, fl, h)

/*
 * Scheduled: X(symbol, node, per-thread, params, args, stream).  The hook
 * holds the caller while the policy holds the stream, then makes the call.
 * Event records also tell the core which stream and sequence the event
 * stands for (events with their own hook below).
 */
#define HIP_SCHEDULED(X) \
	X(hipLaunchKernel, "hip_4.2", 0, LK_P, LK_A, h) \
	X(hipLaunchKernel_spt, "hip_5.2", 1, LK_P, LK_A, h) \
	X(hipExtLaunchKernel, "hip_4.2", 0, EXTLK_P, EXTLK_A, h) \
	X(hipLaunchCooperativeKernel, "hip_4.2", 0, COOP_P, LK_A, h) \
	X(hipLaunchCooperativeKernel_spt, "hip_5.2", 1, COOP_P, LK_A, h) \
	X(hipModuleLaunchKernel, "hip_4.2", 0, MLK_P, MLK_A, h) \
	X(hipModuleLaunchCooperativeKernel, "hip_5.5", 0, MCOOP_P, MCOOP_A, h) \
	X(hipExtModuleLaunchKernel, "hip_4.2", 0, EXTMLK_P, EXTMLK_A, h) \
	X(hipHccModuleLaunchKernel, "hip_4.2", 0, HCCMLK_P, HCCMLK_A, h) \
	X(hipLaunchKernelExC, "hip_6.5", 0, LKEXC_P, LKEXC_A, cfg ? cfg->stream : NULL) \
	X(hipDrvLaunchKernelEx, "hip_6.5", 0, DLKEX_P, DLKEX_A, cfg ? cfg->hStream : NULL) \
	X(hipLaunchHostFunc, "hip_5.3", 0, HOSTFN_P, HOSTFN_A, h) \
	X(hipLaunchHostFunc_spt, "hip_5.3", 1, HOSTFN_P, HOSTFN_A, h) \
	X(hipStreamAddCallback, "hip_4.2", 0, CB_P, CB_A, h) \
	X(hipStreamAddCallback_spt, "hip_5.3", 1, CB_P, CB_A, h) \
	X(hipGraphLaunch, "hip_4.3", 0, GRAPH_P, GRAPH_A, h) \
	X(hipGraphLaunch_spt, "hip_5.3", 1, GRAPH_P, GRAPH_A, h) \
	X(hipMemcpyAsync, "hip_4.2", 0, CPY_P, CPY_A, h) \
	X(hipMemcpyAsync_spt, "hip_5.2", 1, CPY_P, CPY_A, h) \
	X(hipMemcpyWithStream, "hip_4.2", 0, WITHSTREAM_P, CPY_A, h) \
	X(hipMemcpyHtoDAsync, "hip_4.2", 0, HTOD_P, X3_A, h) \
	X(hipMemcpyDtoHAsync, "hip_4.2", 0, DTOH_P, X3_A, h) \
	X(hipMemcpyDtoDAsync, "hip_4.2", 0, DTOD_P, X3_A, h) \
	X(hipMemcpy2DAsync, "hip_4.2", 0, C2D_P, C2D_A, h) \
	X(hipMemcpy2DAsync_spt, "hip_5.3", 1, C2D_P, C2D_A, h) \
	X(hipMemcpy2DToArrayAsync, "hip_4.3", 0, C2DTA_P, C2DTA_A, h) \
	X(hipMemcpy2DToArrayAsync_spt, "hip_5.3", 1, C2DTA_P, C2DTA_A, h) \
	X(hipMemcpy2DFromArrayAsync, "hip_4.2", 0, C2DFA_P, C2DFA_A, h) \
	X(hipMemcpy2DFromArrayAsync_spt, "hip_5.3", 1, C2DFA_P, C2DFA_A, h) \
	X(hipMemcpy3DAsync, "hip_4.2", 0, C3D_P, PH_A, h) \
	X(hipMemcpy3DAsync_spt, "hip_5.3", 1, C3D_P, PH_A, h) \
	X(hipDrvMemcpy3DAsync, "hip_4.2", 0, DC3D_P, PH_A, h) \
	X(hipMemcpyParam2DAsync, "hip_4.2", 0, P2D_P, PH_A, h) \
	X(hipMemcpyToSymbolAsync, "hip_4.2", 0, TOSYM_P, TOSYM_A, h) \
	X(hipMemcpyToSymbolAsync_spt, "hip_5.3", 1, TOSYM_P, TOSYM_A, h) \
	X(hipMemcpyFromSymbolAsync, "hip_4.2", 0, FROMSYM_P, FROMSYM_A, h) \
	X(hipMemcpyFromSymbolAsync_spt, "hip_5.3", 1, FROMSYM_P, FROMSYM_A, h) \
	X(hipMemcpyPeerAsync, "hip_4.2", 0, PEER_P, PEER_A, h) \
	X(hipMemsetAsync, "hip_4.2", 0, SET_P, SET_A, h) \
	X(hipMemsetAsync_spt, "hip_5.3", 1, SET_P, SET_A, h) \
	X(hipMemsetD8Async, "hip_4.2", 0, SET8_P, SET_A, h) \
	X(hipMemsetD16Async, "hip_4.2", 0, SET16_P, SET_A, h) \
	X(hipMemsetD32Async, "hip_4.2", 0, SET32_P, SET_A, h) \
	X(hipMemset2DAsync, "hip_4.2", 0, S2D_P, S2D_A, h) \
	X(hipMemset2DAsync_spt, "hip_5.3", 1, S2D_P, S2D_A, h) \
	X(hipMemset3DAsync, "hip_4.2", 0, S3D_P, S3D_A, h) \
	X(hipMemset3DAsync_spt, "hip_5.3", 1, S3D_P, S3D_A, h) \
	X(hipMemPrefetchAsync, "hip_4.2", 0, PREF_P, PREF_A, h) \
	X(hipMemMapArrayAsync, "hip_5.1", 0, MAPA_P, MAPA_A, h) \
	X(hipStreamWaitValue32, "hip_4.4", 0, WAIT32_P, WAITV_A, h) \
	X(hipStreamWaitValue64, "hip_4.4", 0, WAIT64_P, WAITV_A, h) \
	X(hipStreamWriteValue32, "hip_4.4", 0, WRITE32_P, WRITEV_A, h) \
	X(hipStreamWriteValue64, "hip_4.4", 0, WRITE64_P, WRITEV_A, h) \
	X(hipSignalExternalSemaphoresAsync, "hip_4.3", 0, SEMSIG_P, SEM_A, h) \
	X(hipWaitExternalSemaphoresAsync, "hip_4.3", 0, SEMWAIT_P, SEM_A, h) \
	X(hipMemcpyAtoHAsync, "hip_6.2", 0, ATOHA_P, ATOHA_A, h) \
	X(hipMemcpyHtoAAsync, "hip_6.2", 0, HTOAA_P, HTOAA_A, h) \
	X(hipStreamBatchMemOp, "hip_6.4", 0, BATCHOP_P, BATCHOP_A, h) \
	X(hipMemsetD2D8Async, "hip_7.1", 0, SD2D8_P, S2D_A, h) \
	X(hipMemsetD2D16Async, "hip_7.1", 0, SD2D16_P, S2D_A, h) \
	X(hipMemsetD2D32Async, "hip_7.1", 0, SD2D32_P, S2D_A, h) \
	X(hipMemcpyBatchAsync, "hip_7.1", 0, CPYB_P, CPYB_A, h) \
	X(hipMemcpy3DBatchAsync, "hip_7.1", 0, C3DB_P, C3DB_A, h) \
	X(hipMemcpy3DPeerAsync, "hip_7.1", 0, C3DP_P, PH_A, h) \
	X(hipMemPrefetchAsync_v2, "hip_7.1", 0, PREF2_P, PREF2_A, h)

/*
 * The C++ names the runtime exports an entry's function by, X(symbol,
 * C++ name, node): ROCm 5.x exports hipExtModuleLaunchKernel and
 * hipHccModuleLaunchKernel only under these, 6.x and 7.x under both, and
 * hip_impl::hipLaunchKernelGGLImpl has no C name.  Each is exported here
 * too (EXPORT_MANGLED: programs and libraries built against 5.x headers,
 * rocBLAS 5.5, import the C++ name), the real function is looked up under
 * the C name and then under this one (do_resolve), and dlsym() of this name
 * gets the hook.
 */
#define HIP_CXX_NAMES(X) \
	X(hipExtModuleLaunchKernel, \
	  "_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j", \
	  "hip_4.2") \
	X(hipHccModuleLaunchKernel, \
	  "_Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_", \
	  "hip_4.2") \
	X(hipLaunchKernelGGLImpl, "_ZN8hip_impl22hipLaunchKernelGGLImplEmRK4dim3S2_jP12ihipStream_tPPv", \
	  "hip_4.2")

/*
 * Scheduled on several streams: X(symbol, node, params, args, list, count).
 * The caller waits for each stream's release in turn, then makes the call.
 */
#define MULTI_P (hipLaunchParams *l, int n, unsigned int fl)
#define MULTI_A (l, n, fl)
#define MMULTI_P (hipFunctionLaunchParams *l, unsigned int n, unsigned int fl)
#define HIP_SCHEDULED_MULTI(X) \
	X(hipLaunchCooperativeKernelMultiDevice, "hip_4.2", MULTI_P, MULTI_A, stream) \
	X(hipExtLaunchMultiKernelMultiDevice, "hip_4.2", MULTI_P, MULTI_A, stream) \
	X(hipModuleLaunchCooperativeKernelMultiDevice, "hip_5.5", MMULTI_P, MULTI_A, hStream)

/*
 * Ordered pass-through: X(symbol, node, per-thread, scope, return type,
 * params, args, stream or 0).  Synchronous copies and memsets on the legacy
 * null stream order against every blocking stream of the device
 * (XSI_SCOPE_DEVICE); the _spt ones against the caller's per-thread stream.
 * Entries with bookkeeping (synchronize, query, destroy, capture, wait-event,
 * event destroy) have their own hooks below.
 */
#define MC_P (void *dst, const void *src, size_t n, hipMemcpyKind k)
#define MC_A (dst, src, n, k)
#define MHTOD_P (hipDeviceptr_t dst, xh_htod_src src, size_t n)
#define MDTOH_P (void *dst, hipDeviceptr_t src, size_t n)
#define MDTOD_P (hipDeviceptr_t dst, hipDeviceptr_t src, size_t n)
#define M3_A (dst, src, n)
#define M2D_P (void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t ht, \
	       hipMemcpyKind k)
#define M2D_A (dst, dp, src, sp, w, ht, k)
#define M2DTA_P (hipArray_t dst, size_t wo, size_t ho, const void *src, size_t sp, size_t w, \
		 size_t ht, hipMemcpyKind k)
#define M2DTA_A (dst, wo, ho, src, sp, w, ht, k)
#define M2DFA_P (void *dst, size_t dp, hipArray_const_t src, size_t wo, size_t ho, size_t w, \
		 size_t ht, hipMemcpyKind k)
#define M2DFA_A (dst, dp, src, wo, ho, w, ht, k)
#define MTA_P (hipArray_t dst, size_t wo, size_t ho, const void *src, size_t n, hipMemcpyKind k)
#define MTA_A (dst, wo, ho, src, n, k)
#define MFA_P (void *dst, hipArray_const_t src, size_t wo, size_t ho, size_t n, hipMemcpyKind k)
#define MFA_A (dst, src, wo, ho, n, k)
#define MATOH_P (void *dst, hipArray_t src, size_t off, size_t n)
#define MATOH_A (dst, src, off, n)
#define MHTOA_P (hipArray_t dst, size_t off, const void *src, size_t n)
#define MHTOA_A (dst, off, src, n)
#define M3D_P (const struct hipMemcpy3DParms *p)
#define MD3D_P (const HIP_MEMCPY3D *p)
#define MP2D_P (const hip_Memcpy2D *p)
#define P_A (p)
#define MTOSYM_P (const void *sym, const void *src, size_t n, size_t off, hipMemcpyKind k)
#define MTOSYM_A (sym, src, n, off, k)
#define MFROMSYM_P (void *dst, const void *sym, size_t n, size_t off, hipMemcpyKind k)
#define MFROMSYM_A (dst, sym, n, off, k)
#define MPEER_P (void *dst, int dd, const void *src, int sd, size_t n)
#define MPEER_A (dst, dd, src, sd, n)
#define MS_P (void *dst, int v, size_t n)
#define MS8_P (hipDeviceptr_t dst, unsigned char v, size_t n)
#define MS16_P (hipDeviceptr_t dst, unsigned short v, size_t n)
#define MS32_P (hipDeviceptr_t dst, int v, size_t n)
#define MS_A (dst, v, n)
#define MS2D_P (void *dst, size_t pitch, int v, size_t w, size_t ht)
#define MS2D_A (dst, pitch, v, w, ht)
#define MS3D_P (hipPitchedPtr p, int v, hipExtent ext)
#define MS3D_A (p, v, ext)
#define GFXMAP_P (int n, hipGraphicsResource_t *res, hipStream_t h)
#define GFXMAP_A (n, res, h)
#define MALLOCA_P (void **p, size_t n, hipStream_t h)
#define MALLOCA_A (p, n, h)
#define FREEA_P (void *p, hipStream_t h)
#define FREEA_A (p, h)
#define MALLOCP_P (void **p, size_t n, hipMemPool_t pool, hipStream_t h)
#define MALLOCP_A (p, n, pool, h)
#define ATTACH_P (hipStream_t h, void *p, size_t n, unsigned int fl)
#define ATTACH_A (h, p, n, fl)
#define EQ_P (hipEvent_t ev)
#define EQ_A (ev)
#define ELAPSED_P (float *ms, hipEvent_t a, hipEvent_t b)
#define ELAPSED_A (ms, a, b)
#define VOID_P (void)
#define VOID_A ()
#define DEV_P (int dev)
#define DEV_A (dev)
#define CTX_P (hipCtx_t c)
#define CTX_A (c)
#define MATOD_P (hipDeviceptr_t dst, hipArray_t src, size_t off, size_t n)
#define MATOD_A (dst, src, off, n)
#define MDTOA_P (hipArray_t dst, size_t off, hipDeviceptr_t src, size_t n)
#define MDTOA_A (dst, off, src, n)
#define MATOA_P (hipArray_t dst, size_t doff, hipArray_t src, size_t soff, size_t n)
#define MATOA_A (dst, doff, src, soff, n)
#define M2DATOA_P (hipArray_t dst, size_t dwo, size_t dho, hipArray_const_t src, size_t swo, \
		   size_t sho, size_t w, size_t ht, hipMemcpyKind k)
#define M2DATOA_A (dst, dwo, dho, src, swo, sho, w, ht, k)
#define MSD2D8_P (hipDeviceptr_t dst, size_t pitch, unsigned char v, size_t w, size_t ht)
#define MSD2D16_P (hipDeviceptr_t dst, size_t pitch, unsigned short v, size_t w, size_t ht)
#define MSD2D32_P (hipDeviceptr_t dst, size_t pitch, unsigned int v, size_t w, size_t ht)
#define M3DP_P (hipMemcpy3DPeerParms *p)
#define HIP_ORDERED(X) \
	X(hipMemcpy, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MC_P, MC_A, 0) \
	X(hipMemcpy_spt, "hip_5.2", 1, XSI_SCOPE_STREAM, hipError_t, MC_P, MC_A, 0) \
	X(hipMemcpyHtoD, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MHTOD_P, M3_A, 0) \
	X(hipMemcpyDtoH, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MDTOH_P, M3_A, 0) \
	X(hipMemcpyDtoD, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MDTOD_P, M3_A, 0) \
	X(hipMemcpy2D, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, M2D_P, M2D_A, 0) \
	X(hipMemcpy2D_spt, "hip_5.2", 1, XSI_SCOPE_STREAM, hipError_t, M2D_P, M2D_A, 0) \
	X(hipMemcpy2DToArray, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, M2DTA_P, M2DTA_A, 0) \
	X(hipMemcpy2DToArray_spt, "hip_5.2", 1, XSI_SCOPE_STREAM, hipError_t, M2DTA_P, M2DTA_A, 0) \
	X(hipMemcpy2DFromArray, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, M2DFA_P, M2DFA_A, 0) \
	X(hipMemcpy2DFromArray_spt, "hip_5.2", 1, XSI_SCOPE_STREAM, hipError_t, M2DFA_P, M2DFA_A, 0) \
	X(hipMemcpyToArray, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MTA_P, MTA_A, 0) \
	X(hipMemcpyFromArray, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MFA_P, MFA_A, 0) \
	X(hipMemcpyFromArray_spt, "hip_5.3", 1, XSI_SCOPE_STREAM, hipError_t, MFA_P, MFA_A, 0) \
	X(hipMemcpyAtoH, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MATOH_P, MATOH_A, 0) \
	X(hipMemcpyHtoA, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MHTOA_P, MHTOA_A, 0) \
	X(hipMemcpy3D, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, M3D_P, P_A, 0) \
	X(hipMemcpy3D_spt, "hip_5.2", 1, XSI_SCOPE_STREAM, hipError_t, M3D_P, P_A, 0) \
	X(hipDrvMemcpy3D, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MD3D_P, P_A, 0) \
	X(hipMemcpyParam2D, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MP2D_P, P_A, 0) \
	X(hipDrvMemcpy2DUnaligned, "hip_4.3", 0, XSI_SCOPE_DEVICE, hipError_t, MP2D_P, P_A, 0) \
	X(hipMemcpyToSymbol, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MTOSYM_P, MTOSYM_A, 0) \
	X(hipMemcpyToSymbol_spt, "hip_5.2", 1, XSI_SCOPE_STREAM, hipError_t, MTOSYM_P, MTOSYM_A, 0) \
	X(hipMemcpyFromSymbol, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MFROMSYM_P, MFROMSYM_A, 0) \
	X(hipMemcpyFromSymbol_spt, "hip_5.2", 1, XSI_SCOPE_STREAM, hipError_t, MFROMSYM_P, MFROMSYM_A, 0) \
	X(hipMemcpyPeer, "hip_4.2", 0, XSI_SCOPE_PROCESS, hipError_t, MPEER_P, MPEER_A, 0) \
	X(hipMemset, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MS_P, MS_A, 0) \
	X(hipMemset_spt, "hip_5.2", 1, XSI_SCOPE_STREAM, hipError_t, MS_P, MS_A, 0) \
	X(hipMemsetD8, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MS8_P, MS_A, 0) \
	X(hipMemsetD16, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MS16_P, MS_A, 0) \
	X(hipMemsetD32, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MS32_P, MS_A, 0) \
	X(hipMemset2D, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MS2D_P, MS2D_A, 0) \
	X(hipMemset2D_spt, "hip_5.2", 1, XSI_SCOPE_STREAM, hipError_t, MS2D_P, MS2D_A, 0) \
	X(hipMemset3D, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, MS3D_P, MS3D_A, 0) \
	X(hipMemset3D_spt, "hip_5.2", 1, XSI_SCOPE_STREAM, hipError_t, MS3D_P, MS3D_A, 0) \
	X(hipGraphicsMapResources, "hip_4.3", 0, XSI_SCOPE_STREAM, hipError_t, GFXMAP_P, GFXMAP_A, h) \
	X(hipGraphicsUnmapResources, "hip_4.3", 0, XSI_SCOPE_STREAM, hipError_t, GFXMAP_P, GFXMAP_A, h) \
	X(hipMallocAsync, "hip_5.1", 0, XSI_SCOPE_STREAM, hipError_t, MALLOCA_P, MALLOCA_A, h) \
	X(hipFreeAsync, "hip_5.1", 0, XSI_SCOPE_STREAM, hipError_t, FREEA_P, FREEA_A, h) \
	X(hipMallocFromPoolAsync, "hip_5.1", 0, XSI_SCOPE_STREAM, hipError_t, MALLOCP_P, MALLOCP_A, h) \
	X(hipStreamAttachMemAsync, "hip_4.2", 0, XSI_SCOPE_STREAM, hipError_t, ATTACH_P, ATTACH_A, h) \
	X(hipGraphUpload, "hip_5.3", 0, XSI_SCOPE_STREAM, hipError_t, GRAPH_P, GRAPH_A, h) \
	X(hipEventElapsedTime, "hip_4.2", 0, XSI_SCOPE_PROCESS, hipError_t, ELAPSED_P, ELAPSED_A, 0) \
	X(hipCtxDestroy, "hip_4.2", 0, XSI_SCOPE_DEVICE, hipError_t, CTX_P, CTX_A, 0) \
	X(hipMemcpyAtoD, "hip_6.2", 0, XSI_SCOPE_DEVICE, hipError_t, MATOD_P, MATOD_A, 0) \
	X(hipMemcpyDtoA, "hip_6.2", 0, XSI_SCOPE_DEVICE, hipError_t, MDTOA_P, MDTOA_A, 0) \
	X(hipMemcpyAtoA, "hip_6.2", 0, XSI_SCOPE_DEVICE, hipError_t, MATOA_P, MATOA_A, 0) \
	X(hipMemcpy2DArrayToArray, "hip_6.2", 0, XSI_SCOPE_DEVICE, hipError_t, M2DATOA_P, M2DATOA_A, 0) \
	X(hipMemsetD2D8, "hip_7.1", 0, XSI_SCOPE_DEVICE, hipError_t, MSD2D8_P, MS2D_A, 0) \
	X(hipMemsetD2D16, "hip_7.1", 0, XSI_SCOPE_DEVICE, hipError_t, MSD2D16_P, MS2D_A, 0) \
	X(hipMemsetD2D32, "hip_7.1", 0, XSI_SCOPE_DEVICE, hipError_t, MSD2D32_P, MS2D_A, 0) \
	X(hipMemcpy3DPeer, "hip_7.1", 0, XSI_SCOPE_PROCESS, hipError_t, M3DP_P, P_A, 0)

/* Ordered, with bookkeeping (own hooks): X(symbol, node, per-thread, scope). */
#define HIP_ORDERED_OWN(X) \
	X(hipEventSynchronize, "hip_4.2", 0, XSI_SCOPE_PROCESS) \
	X(hipEventQuery, "hip_4.2", 0, XSI_SCOPE_PROCESS) \
	X(hipStreamSynchronize, "hip_4.2", 0, XSI_SCOPE_STREAM) \
	X(hipStreamSynchronize_spt, "hip_5.2", 1, XSI_SCOPE_STREAM) \
	X(hipStreamQuery, "hip_4.2", 0, XSI_SCOPE_STREAM) \
	X(hipStreamQuery_spt, "hip_5.2", 1, XSI_SCOPE_STREAM) \
	X(hipDeviceSynchronize, "hip_4.2", 0, XSI_SCOPE_DEVICE) \
	X(hipCtxSynchronize, "hip_4.2", 0, XSI_SCOPE_DEVICE) \
	X(hipStreamWaitEvent, "hip_4.2", 0, XSI_SCOPE_STREAM) \
	X(hipStreamWaitEvent_spt, "hip_5.2", 1, XSI_SCOPE_STREAM) \
	X(hipStreamDestroy, "hip_4.2", 0, XSI_SCOPE_STREAM) \
	X(hipDeviceReset, "hip_4.2", 0, XSI_SCOPE_DEVICE) \
	X(hipDevicePrimaryCtxReset, "hip_4.2", 0, XSI_SCOPE_DEVICE) \
	X(hipStreamBeginCapture, "hip_4.3", 0, XSI_SCOPE_STREAM) \
	X(hipStreamBeginCapture_spt, "hip_5.3", 1, XSI_SCOPE_STREAM) \
	X(hipStreamBeginCaptureToGraph, "hip_6.1", 0, XSI_SCOPE_STREAM) \
	X(hipStreamEndCapture, "hip_4.3", 0, XSI_SCOPE_STREAM) \
	X(hipStreamEndCapture_spt, "hip_5.3", 1, XSI_SCOPE_STREAM) \
	X(hipEventDestroy, "hip_4.2", 0, XSI_SCOPE_PROCESS) \
	X(hipGraphInstantiateWithParams, "hip_6.1", 0, XSI_SCOPE_STREAM)

/*
 * Harmless pass-through (own hooks): X(symbol, node).  Stream creation
 * (the stream table learns the stream and its priority), kernel and
 * variable registration (must reach the runtime untouched), the launch
 * configuration calls of `<<<>>>` and of hipLaunchByPtr (the launch that
 * follows them on the same thread is held), the runtime's own lookup.
 */
#define HIP_HARMLESS(X) \
	X(hipStreamCreate, "hip_4.2") \
	X(hipStreamCreateWithFlags, "hip_4.2") \
	X(hipStreamCreateWithPriority, "hip_4.2") \
	X(hipExtStreamCreateWithCUMask, "hip_4.2") \
	X(__hipRegisterFatBinary, "hip_4.2") \
	X(__hipRegisterFunction, "hip_4.2") \
	X(__hipRegisterVar, "hip_4.2") \
	X(__hipUnregisterFatBinary, "hip_4.2") \
	X(__hipPushCallConfiguration, "hip_4.2") \
	X(__hipPopCallConfiguration, "hip_4.2") \
	X(hipConfigureCall, "hip_4.2") \
	X(hipGetProcAddress, "hip_6.1") \
	X(hipGetDriverEntryPoint, "hip_7.1") \
	X(hipGetDriverEntryPoint_spt, "hip_7.1") \
	X(hipStreamSetAttribute, "hip_7.1") \
	X(hipStreamCopyAttributes, "hip_7.2")

/* Scheduled, own hooks: X(symbol, node, per-thread). */
#define HIP_SCHEDULED_OWN(X) \
	X(hipEventRecord, "hip_4.2", 0) \
	X(hipEventRecord_spt, "hip_5.2", 1) \
	X(hipEventRecordWithFlags, "hip_6.4", 0) \
	X(hipLaunchByPtr, "hip_4.2", 0) \
	X(hipLaunchKernelGGLImpl, "hip_4.2", 0)

/*
 * Stream and event functions deliberately NOT hooked: they put no work on
 * a stream and wait for none, so neither holding nor ordering applies.
 * X(symbol, why).  (tests/libxsched/hip/coverage.py accepts these when a library
 * imports them; any other stream, event, launch, copy or synchronization
 * function it imports and the table lacks fails the check.)
 */
#define HIP_UNHOOKED(X) \
	X(hipStreamGetPriority, "query") \
	X(hipStreamGetPriority_spt, "query") \
	X(hipStreamGetFlags, "query") \
	X(hipStreamGetFlags_spt, "query") \
	X(hipStreamGetDevice, "query") \
	X(hipGetStreamDeviceId, "query") \
	X(hipExtStreamGetCUMask, "query") \
	X(hipStreamIsCapturing, "query") \
	X(hipStreamIsCapturing_spt, "query") \
	X(hipStreamGetCaptureInfo, "query") \
	X(hipStreamGetCaptureInfo_spt, "query") \
	X(hipStreamGetCaptureInfo_v2, "query") \
	X(hipStreamGetCaptureInfo_v2_spt, "query") \
	X(hipStreamUpdateCaptureDependencies, "capture bookkeeping, no work") \
	X(hipDeviceGetStreamPriorityRange, "query") \
	X(hipEventCreate, "no work") \
	X(hipEventCreateWithFlags, "no work") \
	X(hipIpcGetEventHandle, "no work") \
	X(hipIpcOpenEventHandle, "no work") \
	X(hipThreadExchangeStreamCaptureMode, "capture mode of the thread") \
	X(hipSetupArgument, "argument of hipConfigureCall; the launch is hipLaunchByPtr") \
	X(hipKernelNameRefByPtr, "query") \
	X(hipStreamGetId, "query") \
	X(hipStreamGetAttribute, "query")

#endif /* XSCHED_INTERPOSE_HIP_TABLE_H */
