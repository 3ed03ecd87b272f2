/* SPDX-License-Identifier: MIT */
/* Description: what the files of the fake libcuda share: its objects, its state, the calls between them. */
/*
 * The fake libcuda.so.1 (fake_libcuda.h says what it models) is one shared
 * object built from
 *   fake_libcuda.c       contexts, the device, green contexts, the table of
 *                        cuGetProcAddress, and the state of streams and
 *                        contexts declared below;
 *   fake_cuda_stream.c   streams, capture, host functions, graphs, memory
 *                        waits and writes, launches;
 *   fake_cuda_event.c    events;
 *   fake_cuda_code.c     modules, libraries, functions and kernels;
 *   fake_cuda_memory.c   allocations, copies, memsets;
 *   fake_timeline.c      the modelled GPU time and the command log
 *                        (fake_timeline.h: its lock, mu, is the fake's one lock).
 * What they share is declared here, each under the file that defines it,
 * and hidden (FAKE_HIDDEN; the fake is built with -fvisibility=hidden too):
 * a program sees only the API exports.  "mu held": the caller holds mu.
 */
#ifndef FAKE_LIBCUDA_INTERNAL_H
#define FAKE_LIBCUDA_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "fake_libcuda.h"
#include "fake_timeline.h"

/* The _ptsz exports and old ABIs that cuda.h does not declare. */
CUresult cuLaunchKernel_ptsz(CUfunction, unsigned int, unsigned int, unsigned int,
			     unsigned int, unsigned int, unsigned int, unsigned int,
			     CUstream, void **, void **);
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *, CUfunction, void **, void **);
CUresult cuMemcpyAsync_ptsz(CUdeviceptr, CUdeviceptr, size_t, CUstream);
CUresult cuStreamSynchronize_ptsz(CUstream);
CUresult cuStreamQuery_ptsz(CUstream);
CUresult cuStreamSetAttribute_ptsz(CUstream, CUstreamAttrID, const CUstreamAttrValue *);
CUresult cuStreamCopyAttributes_ptsz(CUstream, CUstream);
CUresult cuStreamIsCapturing_ptsz(CUstream, CUstreamCaptureStatus *);
CUresult cuEventRecord_ptsz(CUevent, CUstream);
CUresult cuStreamBeginCapture_v2_ptsz(CUstream, CUstreamCaptureMode);
CUresult cuStreamEndCapture_ptsz(CUstream, CUgraph *);
#undef cuStreamDestroy
CUresult cuStreamDestroy(CUstream);
#undef cuGetProcAddress
CUresult cuGetProcAddress(const char *, void **, int, cuuint64_t);
CUresult cuCtxCreate_v2(CUcontext *, unsigned int, CUdevice);
#undef cuEventElapsedTime
CUresult cuEventElapsedTime(float *, CUevent, CUevent);
CUresult cuEventRecordWithFlags_ptsz(CUevent, CUstream, unsigned int);
CUresult cuLaunchHostFunc_ptsz(CUstream, CUhostFn, void *);
CUresult cuStreamAddCallback_ptsz(CUstream, CUstreamCallback, void *, unsigned int);
CUresult cuGraphLaunch_ptsz(CUgraphExec, CUstream);
CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr, const void *, size_t, CUstream);
CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr, CUdeviceptr, size_t, CUstream);
CUresult cuStreamGetFlags_ptsz(CUstream, unsigned int *);
CUresult cuStreamGetCtx_ptsz(CUstream, CUcontext *);
CUresult cuStreamGetCtx_v2_ptsz(CUstream, CUcontext *, CUgreenCtx *);
CUresult cuStreamGetPriority_ptsz(CUstream, int *);
CUresult cuMemcpyDtoHAsync_v2_ptsz(void *, CUdeviceptr, size_t, CUstream);
CUresult cuStreamWaitEvent_ptsz(CUstream, CUevent, unsigned int);
CUresult cuLaunchCooperativeKernel_ptsz(CUfunction, unsigned int, unsigned int, unsigned int,
					unsigned int, unsigned int, unsigned int, unsigned int,
					CUstream, void **);
/* The memory waits and writes under every exported name (cuda.h maps the
 * plain names to _v2). */
#undef cuStreamWaitValue32
#undef cuStreamWaitValue64
#undef cuStreamWriteValue32
#undef cuStreamWriteValue64
#define MEMOP_NAMES(X) \
	X(cuStreamWaitValue32, cuuint32_t, 0, 0) X(cuStreamWaitValue32_ptsz, cuuint32_t, 0, 1) \
	X(cuStreamWaitValue32_v2, cuuint32_t, 0, 0) X(cuStreamWaitValue32_v2_ptsz, cuuint32_t, 0, 1) \
	X(cuStreamWaitValue64, cuuint64_t, 1, 0) X(cuStreamWaitValue64_ptsz, cuuint64_t, 1, 1) \
	X(cuStreamWaitValue64_v2, cuuint64_t, 1, 0) X(cuStreamWaitValue64_v2_ptsz, cuuint64_t, 1, 1)
#define WRITE_NAMES(X) \
	X(cuStreamWriteValue32, cuuint32_t, 0, 0) X(cuStreamWriteValue32_ptsz, cuuint32_t, 0, 1) \
	X(cuStreamWriteValue32_v2, cuuint32_t, 0, 0) X(cuStreamWriteValue32_v2_ptsz, cuuint32_t, 0, 1) \
	X(cuStreamWriteValue64, cuuint64_t, 1, 0) X(cuStreamWriteValue64_ptsz, cuuint64_t, 1, 1) \
	X(cuStreamWriteValue64_v2, cuuint64_t, 1, 0) X(cuStreamWriteValue64_v2_ptsz, cuuint64_t, 1, 1)
#define MEMOP_DECL(n, T, wide, pt) CUresult n(CUstream, CUdeviceptr, T, unsigned int);
MEMOP_NAMES(MEMOP_DECL)
WRITE_NAMES(MEMOP_DECL)

CUresult cuMemsetD8Async_ptsz(CUdeviceptr, unsigned char, size_t, CUstream);
CUresult cuMemsetD16Async_ptsz(CUdeviceptr, unsigned short, size_t, CUstream);
CUresult cuMemsetD32Async_ptsz(CUdeviceptr, unsigned int, size_t, CUstream);
CUresult cuMemsetD2D8Async_ptsz(CUdeviceptr, size_t, unsigned char, size_t, size_t, CUstream);
CUresult cuMemsetD2D16Async_ptsz(CUdeviceptr, size_t, unsigned short, size_t, size_t, CUstream);
CUresult cuMemsetD2D32Async_ptsz(CUdeviceptr, size_t, unsigned int, size_t, size_t, CUstream);
/* The memsets under their exported names (cuda.h maps them). */
#undef cuMemsetD8Async
#undef cuMemsetD16Async
#undef cuMemsetD32Async
#undef cuMemsetD2D8Async
#undef cuMemsetD2D16Async
#undef cuMemsetD2D32Async

#define MAX_CTX 16

struct fgreen {
	int ctx_obj;		/* its CUcontext is &ctx_obj */
	int id;
	unsigned int sms;
};

struct fctx;

struct fstream {
	int id;
	struct fgreen *green;	/* made by cuGreenCtxStreamCreate, or NULL */
	struct fctx *ctx;	/* its context (NULL: the primary) */
	unsigned int flags;
	int prio;
	int capturing;		/* the id of the capture it is in (the origin stream's), or 0 */
	struct fake_tl tl;
	int destroyed;		/* its handle is invalid until made again */
	struct fstream *next_free;
	struct fstream *next_all;	/* every stream ever made: never leaked */
};

struct fevent {
	int rec;		/* the log record of its last record, -1: never recorded */
	int capture;		/* recorded in this capture (0: none) */
	struct fctx *ctx;	/* the context current at its creation */
	unsigned int flags;
	int destroyed;		/* then every use answers INVALID_HANDLE */
	struct fevent *next;	/* every event: kept, never leaked nor reused */
};

/* A context: the primary (id 0) or one of cuCtxCreate. */
struct fctx {
	int id;
	unsigned int flags;
	int destroyed;
	struct fstream dflt;	/* a created context's default stream */
};

#define MAX_FN 16
#define NATTR CU_FUNC_ATTRIBUTE_MAX

struct fkern;
struct fmodule;
struct flib;

/* A CUfunction of a module (or of cuKernelGetFunction: kern set). */
struct ffunc {
	struct fmodule *mod;
	struct fkern *kern;
	char name[32];
	uint64_t ns;
	int attr[NATTR];
	int loaded;		/* lazy loading: by cuModuleGetFunction or a launch */
};

/* A CUkernel: context-free. */
struct fkern {
	struct flib *lib;
	char name[32];
	uint64_t ns;
	int attr[NATTR];
	unsigned long long loaded;	/* contexts it was loaded in (lazily) */
};

struct fmodule {
	int id;			/* 1, 2, ... in load order */
	struct fctx *ctx;
	struct flib *lib;	/* a library's module in a context, or NULL */
	int unloaded;
	int n;
	struct ffunc fn[MAX_FN];
	struct fmodule *next;	/* every module: never leaked */
	struct fmodule *next_free;	/* unloaded: handed out again first */
};

struct flib {
	int id;
	int unloaded;
	int n;
	struct fkern k[MAX_FN];
	struct fmodule *mod[MAX_CTX + 1];	/* its module in each context */
	struct flib *next;
	struct flib *next_free;	/* unloaded: handed out again first */
};

/* fake_libcuda.c */
extern FAKE_HIDDEN int next_id;
extern FAKE_HIDDEN struct fstream legacy;
extern FAKE_HIDDEN struct fstream *free_streams;
extern FAKE_HIDDEN struct fstream *all_streams;
extern FAKE_HIDDEN __thread struct fstream pt_stream;
extern FAKE_HIDDEN __thread int pt_ready;
extern FAKE_HIDDEN struct fctx primary;
extern FAKE_HIDDEN struct fctx *ctxs[MAX_CTX + 1];
extern FAKE_HIDDEN int nctx;
extern FAKE_HIDDEN int ngreen;
FAKE_HIDDEN struct fctx *ctx_of(CUcontext c);
FAKE_HIDDEN struct fctx *cur_ctx(void);
FAKE_HIDDEN struct fctx *sctx(const struct fstream *s);
FAKE_HIDDEN struct fstream *stream_of(CUstream h, int ptsz);
FAKE_HIDDEN struct fake_rec *log_add(struct fstream *s, int kernel, int variant, uint64_t ns);
FAKE_HIDDEN void ctx_wait(int id);
/* fake_cuda_stream.c */
FAKE_HIDDEN CUresult stream_make(CUstream *ph, unsigned int flags, int prio);
FAKE_HIDDEN CUresult launch(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
			    unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem,
			    CUstream h, void **params, void **extra, int variant,
			    const void *config);
FAKE_HIDDEN CUresult internal_launch(CUfunction f, unsigned int gx, unsigned int gy,
				     unsigned int gz, unsigned int bx, unsigned int by,
				     unsigned int bz, unsigned int smem, CUstream h,
				     void **params, void **extra);
/* fake_cuda_code.c */
FAKE_HIDDEN int *testfn_attr(const void *f, const char **name);
FAKE_HIDDEN struct ffunc *as_func(const void *p);
FAKE_HIDDEN struct fkern *as_kern(const void *p);
FAKE_HIDDEN int named_id(const char *name);
/* fake_cuda_memory.c */
FAKE_HIDDEN CUresult internal_memcpy(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h);

#endif
