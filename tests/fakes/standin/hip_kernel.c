// SPDX-License-Identifier: MIT
/*
 * The stand-in HIP runtime's modules and kernels: fat binary and function
 * registration, the call configuration, launches as kernel dispatch packets.
 */
#include "hip_standin.h"

#define MAX_KERNELS 256

struct kernel {
	const void *host_stub;
	char name[128];
	uint32_t sim_kernel;	/* 0: no sim equivalent */
};

struct call_config {
	dim3 grid, block;
	size_t shmem;
	hipStream_t stream;
};
static __thread struct call_config t_configs[8];
static __thread int t_nconfigs;

static struct kernel g_kernels[MAX_KERNELS];
static unsigned int g_nkernels;

/* ---- kernels ---- */

/* The test kernels' names, from "_Z<len><name><params>" or a plain C name;
 * the parameters must be (uint64_t *, const uint64_t *, uint32_t, uint64_t,
 * uint64_t), mangled "PmPKmjmm". */
static uint32_t sim_kernel_of(const char *mangled)
{
	static const struct { const char *name; uint32_t k; } known[] = {
		{ "accumulate", XSCHED_SIM_KERNEL_ACCUMULATE },
		{ "mark", XSCHED_SIM_KERNEL_MARK },
	};
	char name[64];
	const char *params = "PmPKmjmm";
	size_t len;
	char *endp;

	if (strncmp(mangled, "_Z", 2) == 0) {
		len = strtoul(mangled + 2, &endp, 10);
		if (len == 0 || len >= sizeof(name) || strlen(endp) < len)
			return 0;
		memcpy(name, endp, len);
		name[len] = 0;
		if (strcmp(endp + len, params) != 0)
			return 0;
	} else {
		snprintf(name, sizeof(name), "%s", mangled);
	}
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(name, known[i].name) == 0)
			return known[i].k;
	return 0;
}

EXPORT void **__hipRegisterFatBinary(const void *data)
{
	static void *module;	/* one code object holder; contents unused here */

	(void)data;
	return &module;
}

EXPORT void __hipRegisterFunction(void **modules, const void *hostFunction, char *deviceFunction,
				  const char *deviceName, unsigned int threadLimit, void *tid,
				  void *bid, dim3 *blockDim, dim3 *gridDim, int *wSize)
{
	(void)modules; (void)deviceFunction; (void)threadLimit; (void)tid; (void)bid;
	(void)blockDim; (void)gridDim; (void)wSize;
	pthread_mutex_lock(&g_lock);
	if (g_nkernels < MAX_KERNELS) {
		struct kernel *k = &g_kernels[g_nkernels++];

		k->host_stub = hostFunction;
		snprintf(k->name, sizeof(k->name), "%s", deviceName);
		k->sim_kernel = sim_kernel_of(deviceName);
	}
	pthread_mutex_unlock(&g_lock);
}

EXPORT void __hipUnregisterFatBinary(void **modules)
{
	(void)modules;
}

EXPORT hipError_t __hipPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
					     hipStream_t stream)
{
	if (t_nconfigs == (int)(sizeof(t_configs) / sizeof(t_configs[0])))
		return ret(hipErrorInvalidConfiguration);
	t_configs[t_nconfigs++] = (struct call_config){ gridDim, blockDim, sharedMem, stream };
	return hipSuccess;
}

EXPORT hipError_t __hipPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
					    hipStream_t *stream)
{
	if (t_nconfigs == 0)
		return ret(hipErrorInvalidConfiguration);
	t_nconfigs--;
	*gridDim = t_configs[t_nconfigs].grid;
	*blockDim = t_configs[t_nconfigs].block;
	*sharedMem = t_configs[t_nconfigs].shmem;
	*stream = t_configs[t_nconfigs].stream;
	return hipSuccess;
}

/* The kernel a host stub names on the calling thread's device. */
static const struct kernel *lookup(const void *host_stub)
{
	const struct kernel *k = NULL;

	if (t_device != 0)
		return NULL;	/* one device: nothing is registered elsewhere */
	pthread_mutex_lock(&g_lock);
	for (unsigned int i = 0; i < g_nkernels && !k; i++)
		if (g_kernels[i].host_stub == host_stub)
			k = &g_kernels[i];
	pthread_mutex_unlock(&g_lock);
	return k;
}

static hipError_t launch(const void *fn, dim3 grid, dim3 block, void **args, hipStream_t stream,
			 bool spt)
{
	const struct kernel *k;
	struct standin_kernarg ka = { 0 };
	uint64_t g = (uint64_t)grid.x * grid.y * grid.z;

	STREAM_OR_FAIL(s, stream, spt);
	k = lookup(fn);
	if (!k)
		return ret(hipErrorInvalidDeviceFunction);
	if (!k->sim_kernel) {
		fprintf(stderr, "hip-standin: kernel %s has no sim equivalent\n", k->name);
		return ret(hipErrorNotSupported);
	}
	if (!args || g == 0 || g > XSCHED_SIM_GRID_MAX || grid.y != 1 || grid.z != 1 ||
	    block.x == 0 || block.x > 1024 || block.y != 1 || block.z != 1)
		return ret(hipErrorInvalidConfiguration);
	/* The parameters in their C layout (standin.h). */
	memcpy(&ka.dst, args[0], 8);
	memcpy(&ka.src, args[1], 8);
	memcpy(&ka.steps, args[2], 4);
	memcpy(&ka.step_ns, args[3], 8);
	memcpy(&ka.seed, args[4], 8);
	if (s->capture)
		return capture_add(s, &(struct node){ .type = NODE_KERNEL,
						      .sim_kernel = k->sim_kernel, .grid = grid.x,
						      .block = block.x, .ka = ka });
	put_kernel(s, k->sim_kernel, grid.x, block.x, &ka);
	return hipSuccess;
}

EXPORT hipError_t hipLaunchKernel(const void *function_address, dim3 numBlocks, dim3 dimBlocks,
				  void **args, size_t sharedMemBytes, hipStream_t stream)
{
	(void)sharedMemBytes;
	return launch(function_address, numBlocks, dimBlocks, args, stream, false);
}

EXPORT hipError_t hipLaunchKernel_spt(const void *function_address, dim3 numBlocks,
				      dim3 dimBlocks, void **args, size_t sharedMemBytes,
				      hipStream_t stream)
{
	(void)sharedMemBytes;
	return launch(function_address, numBlocks, dimBlocks, args, stream, true);
}
