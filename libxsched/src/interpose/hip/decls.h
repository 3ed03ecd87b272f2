/* SPDX-License-Identifier: MIT */
/*
 * The HIP entry points the table hooks that the headers we build against may
 * lack (or declare only in C++), with the prototype each ROCm's header
 * declares: a hook defines the runtime's own name, so the two must agree.
 * Included by hip/hooks.c only, after <hip/hip_runtime_api.h>.
 */
#ifndef XSCHED_INTERPOSE_HIP_DECLS_H
#define XSCHED_INTERPOSE_HIP_DECLS_H

/*
 * ---- what older headers lack: ROCm 5.3+, 6.x and 7.x entry points --------
 * Every prototype here and in the parameter lists below must be the one
 * each ROCm's header declares (a hook defines the runtime's name):
 * tools/check-hip-headers.sh builds this file against a ROCm's headers.
 */

#if HIP_VERSION < 50300000
hipError_t hipLaunchHostFunc_spt(hipStream_t, hipHostFn_t, void *);
hipError_t hipGraphLaunch_spt(hipGraphExec_t, hipStream_t);
hipError_t hipStreamAddCallback_spt(hipStream_t, hipStreamCallback_t, void *, unsigned int);
hipError_t hipMemsetAsync_spt(void *, int, size_t, hipStream_t);
hipError_t hipMemset2DAsync_spt(void *, size_t, int, size_t, size_t, hipStream_t);
hipError_t hipMemset3DAsync_spt(hipPitchedPtr, int, hipExtent, hipStream_t);
hipError_t hipMemcpy3DAsync_spt(const struct hipMemcpy3DParms *, hipStream_t);
hipError_t hipMemcpy2DAsync_spt(void *, size_t, const void *, size_t, size_t, size_t,
				hipMemcpyKind, hipStream_t);
hipError_t hipMemcpyFromSymbolAsync_spt(void *, const void *, size_t, size_t, hipMemcpyKind,
					hipStream_t);
hipError_t hipMemcpyToSymbolAsync_spt(const void *, const void *, size_t, size_t,
				      hipMemcpyKind, hipStream_t);
hipError_t hipMemcpyFromArray_spt(void *, hipArray_const_t, size_t, size_t, size_t,
				  hipMemcpyKind);
hipError_t hipMemcpy2DFromArrayAsync_spt(void *, size_t, hipArray_const_t, size_t, size_t,
					 size_t, size_t, hipMemcpyKind, hipStream_t);
hipError_t hipMemcpy2DToArrayAsync_spt(hipArray_t, size_t, size_t, const void *, size_t,
				       size_t, size_t, hipMemcpyKind, hipStream_t);
hipError_t hipStreamBeginCapture_spt(hipStream_t, hipStreamCaptureMode);
hipError_t hipStreamEndCapture_spt(hipStream_t, hipGraph_t *);
hipError_t hipEventRecord_spt(hipEvent_t, hipStream_t);
hipError_t hipGraphUpload(hipGraphExec_t, hipStream_t);
#endif
#if HIP_VERSION < 50500000
/* The module cooperative launches (ROCm 5.5). */
typedef struct hipFunctionLaunchParams_t {
	hipFunction_t function;
	unsigned int gridDimX, gridDimY, gridDimZ;
	unsigned int blockDimX, blockDimY, blockDimZ;
	unsigned int sharedMemBytes;
	hipStream_t hStream;
	void **kernelParams;
} hipFunctionLaunchParams;
hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t, unsigned int, unsigned int,
					    unsigned int, unsigned int, unsigned int,
					    unsigned int, unsigned int, hipStream_t, void **);
hipError_t hipModuleLaunchCooperativeKernelMultiDevice(hipFunctionLaunchParams *,
						       unsigned int, unsigned int);
#endif
/* hipGetProcAddress and hipStreamBeginCaptureToGraph: exported from ROCm 6.1
 * (hip_6.1), declared by the headers from 6.2 on (6.1.x's do not). */
#if HIP_VERSION < 60200000
/* hipGetProcAddress: dlsym on the runtime's own handle. */
typedef int hipDriverProcAddressQueryResult;
hipError_t hipGetProcAddress(const char *, void **, int, uint64_t,
			     hipDriverProcAddressQueryResult *);
hipError_t hipStreamBeginCaptureToGraph(hipStream_t, hipGraph_t, const hipGraphNode_t *,
					const void *, size_t, hipStreamCaptureMode);
#define XH_EDGE_DATA const void
#else
#define XH_EDGE_DATA const hipGraphEdgeData
#endif
#if HIP_VERSION < 60100000
/* hipGraphInstantiateWithParams (ROCm 6.1, hip_6.1): the layout of the
 * 6.1+ headers; only flags and uploadStream are read. */
typedef struct hipGraphInstantiateParams {
	hipGraphNode_t errNode_out;
	unsigned long long flags;
	int result_out;
	hipStream_t uploadStream;
} hipGraphInstantiateParams;
hipError_t hipGraphInstantiateWithParams(hipGraphExec_t *, hipGraph_t,
					 hipGraphInstantiateParams *);
#endif
/* hipGraphInstantiateFlagUpload: instantiate and upload on uploadStream. */
#define XH_INSTANTIATE_UPLOAD 2
#if HIP_VERSION >= 60100000
_Static_assert(hipGraphInstantiateFlagUpload == XH_INSTANTIATE_UPLOAD,
	       "hipGraphInstantiateFlagUpload moved");
#endif
#ifndef HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
#define HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (1ULL << 1)
#endif
#if HIP_VERSION < 60200000
/* The 1D array copies (ROCm 6.2). */
hipError_t hipMemcpyAtoHAsync(void *, hipArray_t, size_t, size_t, hipStream_t);
hipError_t hipMemcpyHtoAAsync(hipArray_t, size_t, const void *, size_t, hipStream_t);
hipError_t hipMemcpyAtoD(hipDeviceptr_t, hipArray_t, size_t, size_t);
hipError_t hipMemcpyDtoA(hipArray_t, size_t, hipDeviceptr_t, size_t);
hipError_t hipMemcpyAtoA(hipArray_t, size_t, hipArray_t, size_t, size_t);
hipError_t hipMemcpy2DArrayToArray(hipArray_t, size_t, size_t, hipArray_const_t, size_t, size_t,
				   size_t, size_t, hipMemcpyKind);
#endif
#if HIP_VERSION < 60400000
hipError_t hipEventRecordWithFlags(hipEvent_t, hipStream_t, unsigned int);
/* hipStreamBatchMemOp (6.4; 6.3's development headers declare it too, and
 * these declarations are the same). */
typedef union hipStreamBatchMemOpParams_union hipStreamBatchMemOpParams;
hipError_t hipStreamBatchMemOp(hipStream_t, unsigned int, hipStreamBatchMemOpParams *,
			       unsigned int);
#endif
#if HIP_VERSION < 70100000
/* ROCm 7.1: 2D memsets, batched and peer 3D copies, prefetch to a location,
 * and the driver entry point lookup (hipGetProcAddress's CUDA-named twin). */
typedef struct hipMemcpyAttributes hipMemcpyAttributes;
typedef struct hipMemcpy3DPeerParms hipMemcpy3DPeerParms;
struct hipMemcpy3DBatchOp;
typedef int hipDriverEntryPointQueryResult;
hipError_t hipMemsetD2D8(hipDeviceptr_t, size_t, unsigned char, size_t, size_t);
hipError_t hipMemsetD2D16(hipDeviceptr_t, size_t, unsigned short, size_t, size_t);
hipError_t hipMemsetD2D32(hipDeviceptr_t, size_t, unsigned int, size_t, size_t);
hipError_t hipMemsetD2D8Async(hipDeviceptr_t, size_t, unsigned char, size_t, size_t, hipStream_t);
hipError_t hipMemsetD2D16Async(hipDeviceptr_t, size_t, unsigned short, size_t, size_t,
			       hipStream_t);
hipError_t hipMemsetD2D32Async(hipDeviceptr_t, size_t, unsigned int, size_t, size_t, hipStream_t);
hipError_t hipMemcpyBatchAsync(void **, void **, size_t *, size_t, hipMemcpyAttributes *, size_t *,
			       size_t, size_t *, hipStream_t);
hipError_t hipMemcpy3DBatchAsync(size_t, struct hipMemcpy3DBatchOp *, size_t *, unsigned long long,
				 hipStream_t);
hipError_t hipMemcpy3DPeer(hipMemcpy3DPeerParms *);
hipError_t hipMemcpy3DPeerAsync(hipMemcpy3DPeerParms *, hipStream_t);
hipError_t hipMemPrefetchAsync_v2(const void *, size_t, hipMemLocation, unsigned int, hipStream_t);
hipError_t hipGetDriverEntryPoint(const char *, void **, unsigned long long,
				  hipDriverEntryPointQueryResult *);
hipError_t hipGetDriverEntryPoint_spt(const char *, void **, unsigned long long,
				      hipDriverEntryPointQueryResult *);
#endif
#ifndef hipEnableLegacyStream
#define hipEnableLegacyStream 0x1
#define hipEnablePerThreadDefaultStream 0x2
/* Stream attributes (7.1): forwarded; of the value only the priority is
 * read (a 64-byte union whose members all start at offset 0). */
typedef int hipStreamAttrID;
typedef union hipStreamAttrValue {
	char pad[64];
	int priority;
} hipStreamAttrValue;
#define hipStreamAttributePriority 8
hipError_t hipStreamSetAttribute(hipStream_t, hipStreamAttrID, const hipStreamAttrValue *);
#endif
#if HIP_VERSION < 70200000
hipError_t hipStreamCopyAttributes(hipStream_t, hipStream_t);
#endif
#if HIP_VERSION < 60500000
/* hipLaunchKernelExC / hipDrvLaunchKernelEx (ROCm 6.5): only the stream
 * is read here; the layouts are those of the 6.5 headers. */
typedef struct hipLaunchConfig_st {
	dim3 gridDim;
	dim3 blockDim;
	size_t dynamicSmemBytes;
	hipStream_t stream;
	void *attrs;
	unsigned int numAttrs;
} hipLaunchConfig_t;
typedef struct HIP_LAUNCH_CONFIG_st {
	unsigned int gridDimX, gridDimY, gridDimZ;
	unsigned int blockDimX, blockDimY, blockDimZ;
	unsigned int sharedMemBytes;
	hipStream_t hStream;
	void *attrs;
	unsigned int numAttrs;
} HIP_LAUNCH_CONFIG;
hipError_t hipLaunchKernelExC(const hipLaunchConfig_t *, const void *, void **);
hipError_t hipDrvLaunchKernelEx(const HIP_LAUNCH_CONFIG *, hipFunction_t, void **, void **);
#endif

/* hipMemcpyHtoD(Async)'s source: void * up to ROCm 6.4, const void * from
 * 7.0.  Taken from the header's own declaration, not from its version. */
#define XH_SRC_OF(fn, ...)						\
	__typeof__(_Generic(&fn, hipError_t (*)(hipDeviceptr_t, const void *, __VA_ARGS__) : \
			    (const void *)0, default: (void *)0))
typedef XH_SRC_OF(hipMemcpyHtoD, size_t) xh_htod_src;
typedef XH_SRC_OF(hipMemcpyHtoDAsync, size_t, hipStream_t) xh_htod_async_src;

/* Exported by every version but declared by no C header. */
void **__hipRegisterFatBinary(const void *data);
void __hipUnregisterFatBinary(void **modules);
void __hipRegisterFunction(void **modules, const void *host_fn, char *dev_fn,
			   const char *dev_name, unsigned int thread_limit, void *tid,
			   void *bid, dim3 *block, dim3 *grid, int *wsize);
void __hipRegisterVar(void **modules, void *var, char *host_var, char *dev_var, int ext,
		      size_t size, int constant, int global);
/* hip_ext.h is C++; the C exports (ROCm 6.x, 7.x) and the C++ ones (all,
 * HIP_CXX_NAMES). */
hipError_t hipExtModuleLaunchKernel(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t,
				    uint32_t, uint32_t, size_t, hipStream_t, void **, void **,
				    hipEvent_t, hipEvent_t, uint32_t);
hipError_t hipHccModuleLaunchKernel(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t,
				    uint32_t, uint32_t, size_t, hipStream_t, void **, void **,
				    hipEvent_t, hipEvent_t);

#endif /* XSCHED_INTERPOSE_HIP_DECLS_H */
