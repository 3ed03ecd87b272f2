// SPDX-License-Identifier: GPL-2.0
/*
 * The kfd backend on a real AMD GPU: HSA queues created by ROCm's runtime
 * in this process, registered by ring base, suspended with CWSR and
 * resumed.  Only a HW=1 build has this program (it needs ROCm's HSA runtime
 * to make queues with); its tests skip, with the reason, only where a device
 * or privilege is missing: no /dev/xsched, no kfd backend, no /dev/kfd, no
 * GPU in the KFD process, or not root for a module parameter.
 *
 * Figures worth recording (Documentation/kfd-backend.rst) are printed as
 * "# figure: ..." lines.
 *
 * Build on the GPU machine:  make -C tests/kselftest/xsched_kfd HW=1
 * (ROCM_PATH=/opt/rocm, GPU_ARCH=native or e.g. gfx942); spin.co, the
 * kernel the preemption tests run, is built next to the binary with hipcc
 * and found in the current directory or $XSCHED_KFD_SPIN_CO.
 */
#include <inttypes.h>
#include <time.h>
#include <sys/mman.h>

#include "kfd_test.h"

#ifndef KT_HSA
#error "kfd_hw.c needs ROCm's HSA runtime: build it with make HW=1"
#endif
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#define KT_NS_PER_MS	1000000ULL

static inline uint64_t kt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static inline int kt_suspend(int qfd, uint32_t mode, struct xsched_suspend *out)
{
	struct xsched_suspend s;
	int ret;

	memset(&s, 0, sizeof(s));
	s.mode = mode;
	ret = kt_ioctl(qfd, XSCHED_IOC_SUSPEND, &s);
	if (out)
		*out = s;
	return ret;
}

static inline int kt_resume(int qfd)
{
	struct xsched_resume r;

	memset(&r, 0, sizeof(r));
	return kt_ioctl(qfd, XSCHED_IOC_RESUME, &r);
}

static inline int kt_query(int qfd, struct xsched_queue_info *i)
{
	memset(i, 0, sizeof(*i));
	return kt_ioctl(qfd, XSCHED_IOC_QUERY, i);
}

struct kt_gpu {
	hsa_agent_t agent;
	hsa_region_t kernarg;		/* fine-grained system memory */
	bool have_agent, have_kernarg;
	char name[64];
	/* the spin kernel, if spin.co was found */
	hsa_code_object_reader_t reader;
	hsa_executable_t exec;
	bool have_kernel;
	uint64_t kernel_object;
	uint32_t kernarg_size, group_size, private_size;
};

static hsa_status_t kt_find_gpu(hsa_agent_t agent, void *data)
{
	struct kt_gpu *g = data;
	hsa_device_type_t type;

	if (hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type) ||
	    type != HSA_DEVICE_TYPE_GPU)
		return HSA_STATUS_SUCCESS;
	g->agent = agent;
	g->have_agent = true;
	hsa_agent_get_info(agent, HSA_AGENT_INFO_NAME, g->name);
	return HSA_STATUS_INFO_BREAK;
}

static hsa_status_t kt_find_kernarg(hsa_region_t region, void *data)
{
	struct kt_gpu *g = data;
	hsa_region_global_flag_t flags;
	hsa_region_segment_t seg;

	if (hsa_region_get_info(region, HSA_REGION_INFO_SEGMENT, &seg) ||
	    seg != HSA_REGION_SEGMENT_GLOBAL)
		return HSA_STATUS_SUCCESS;
	if (hsa_region_get_info(region, HSA_REGION_INFO_GLOBAL_FLAGS, &flags) ||
	    !(flags & HSA_REGION_GLOBAL_FLAG_KERNARG))
		return HSA_STATUS_SUCCESS;
	g->kernarg = region;
	g->have_kernarg = true;
	return HSA_STATUS_INFO_BREAK;
}

/*
 * spin.co as built by hipcc --genco: either a plain code object (ELF) or an
 * uncompressed clang offload bundle; returns the code object for @arch.
 */
static const void *kt_code_object(const uint8_t *buf, size_t len,
				  const char *arch, size_t *size)
{
	static const char magic[] = "__CLANG_OFFLOAD_BUNDLE__";
	size_t mlen = sizeof(magic) - 1, pos;
	uint64_t n, i;

	if (len >= 4 && !memcmp(buf, "\177ELF", 4)) {
		*size = len;
		return buf;
	}
	if (len < mlen + 8 || memcmp(buf, magic, mlen))
		return NULL;
	memcpy(&n, buf + mlen, 8);
	pos = mlen + 8;
	for (i = 0; i < n; i++) {
		uint64_t off, sz, tlen;
		const char *triple;

		if (pos + 24 > len)
			return NULL;
		memcpy(&off, buf + pos, 8);
		memcpy(&sz, buf + pos + 8, 8);
		memcpy(&tlen, buf + pos + 16, 8);
		pos += 24;
		if (tlen > len - pos)
			return NULL;
		triple = (const char *)buf + pos;
		pos += tlen;
		/* e.g. "hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-" */
		if (off > len || sz > len - off || !memmem(triple, tlen, arch, strlen(arch)))
			continue;
		if (strncmp(triple, "hip", 3))
			continue;
		*size = sz;
		return buf + off;
	}
	return NULL;
}

/* Load spin.co for the GPU; false (with why) if there is none usable. */
static bool kt_load_spin(struct kt_gpu *g, char *why, size_t whylen)
{
	const char *path = getenv("XSCHED_KFD_SPIN_CO");
	hsa_executable_symbol_t sym;
	const void *co = NULL;
	char arch[64], *colon;
	size_t len = 0, colen;
	uint8_t *buf = NULL;
	struct stat st;
	FILE *f;

	if (!path)
		path = "./spin.co";
	f = fopen(path, "rb");
	if (!f || fstat(fileno(f), &st) || st.st_size <= 0) {
		snprintf(why, whylen, "%s: not found (build with make HW=1)", path);
		if (f)
			fclose(f);
		return false;
	}
	len = st.st_size;
	buf = malloc(len);
	if (buf && fread(buf, 1, len, f) != len) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	snprintf(arch, sizeof(arch), "%s", g->name);
	colon = strchr(arch, ':');
	if (colon)
		*colon = '\0';
	if (buf)
		co = kt_code_object(buf, len, arch, &colen);
	if (!co) {
		snprintf(why, whylen, "%s: no code object for %s in it", path, arch);
		free(buf);
		return false;
	}
	if (hsa_code_object_reader_create_from_memory(co, colen, &g->reader) ||
	    hsa_executable_create_alt(HSA_PROFILE_FULL,
				      HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
				      NULL, &g->exec) ||
	    hsa_executable_load_agent_code_object(g->exec, g->agent, g->reader,
						  NULL, NULL) ||
	    hsa_executable_freeze(g->exec, NULL) ||
	    hsa_executable_get_symbol_by_name(g->exec, "xkfd_spin.kd", &g->agent,
					      &sym) ||
	    hsa_executable_symbol_get_info(sym,
			HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &g->kernel_object) ||
	    hsa_executable_symbol_get_info(sym,
			HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
			&g->kernarg_size) ||
	    hsa_executable_symbol_get_info(sym,
			HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE,
			&g->group_size) ||
	    hsa_executable_symbol_get_info(sym,
			HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE,
			&g->private_size)) {
		snprintf(why, whylen, "%s: the HSA loader refused it", path);
		free(buf);
		return false;
	}
	free(buf);
	g->have_kernel = true;
	return true;
}

static void *kt_alloc(struct kt_gpu *g, size_t size)
{
	void *p = NULL;

	if (hsa_memory_allocate(g->kernarg, size, &p))
		return NULL;
	memset(p, 0, size);
	return p;
}

static hsa_queue_t *kt_queue_create(struct kt_gpu *g)
{
	hsa_queue_t *q = NULL;

	if (hsa_queue_create(g->agent, 4096, HSA_QUEUE_TYPE_SINGLE, NULL, NULL,
			     UINT32_MAX, UINT32_MAX, &q))
		return NULL;
	return q;
}

/* Put a packet body in the next slot; returns its index. */
static uint64_t kt_reserve(hsa_queue_t *q, void **slot)
{
	uint64_t index = hsa_queue_add_write_index_relaxed(q, 1);
	uint32_t mask = q->size - 1;

	*slot = (char *)q->base_address + (index & mask) * 64;
	return index;
}

static void kt_publish(hsa_queue_t *q, void *slot, uint16_t header,
		       uint16_t setup, uint64_t index)
{
	__atomic_store_n((uint32_t *)slot, header | ((uint32_t)setup << 16),
			 __ATOMIC_RELEASE);
	hsa_signal_store_screlease(q->doorbell_signal, index);
}

#define KT_SYSTEM_FENCES \
	((HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) | \
	 (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE))

/* A barrier-AND packet: the command processor completes it, no waves. */
static void kt_barrier(hsa_queue_t *q, hsa_signal_t done)
{
	hsa_barrier_and_packet_t *p;
	uint64_t index = kt_reserve(q, (void **)&p);

	memset((char *)p + 4, 0, sizeof(*p) - 4);
	p->completion_signal = done;
	kt_publish(q, p, (HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE) |
		   KT_SYSTEM_FENCES, 0, index);
}

struct kt_spin_args {
	uint64_t flag;		/* volatile u64 *: spin while 0 */
	uint64_t started;	/* u64 *: workgroups that started */
	uint64_t out;		/* u64 *: iterations per workgroup */
};

/* Dispatch @groups workgroups of the spin kernel. */
static int kt_spin(struct kt_gpu *g, hsa_queue_t *q, struct kt_spin_args *args,
		   uint32_t groups, hsa_signal_t done)
{
	hsa_kernel_dispatch_packet_t *p;
	struct kt_spin_args *ka;
	uint64_t index;

	ka = kt_alloc(g, g->kernarg_size > sizeof(*ka) ? g->kernarg_size : sizeof(*ka));
	if (!ka)
		return -ENOMEM;
	*ka = *args;
	index = kt_reserve(q, (void **)&p);
	memset((char *)p + 4, 0, sizeof(*p) - 4);
	p->workgroup_size_x = 64;
	p->workgroup_size_y = 1;
	p->workgroup_size_z = 1;
	p->grid_size_x = 64 * groups;
	p->grid_size_y = 1;
	p->grid_size_z = 1;
	p->private_segment_size = g->private_size;
	p->group_segment_size = g->group_size;
	p->kernel_object = g->kernel_object;
	p->kernarg_address = ka;
	p->completion_signal = done;
	kt_publish(q, p, (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
		   KT_SYSTEM_FENCES,
		   1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS, index);
	return 0;
}

/* Has @s reached 0 within @ms? */
static bool kt_done_within(hsa_signal_t s, uint64_t ms)
{
	uint64_t end = kt_now_ns() + ms * KT_NS_PER_MS;

	while (hsa_signal_load_scacquire(s) >= 1) {
		if (kt_now_ns() >= end)
			return false;
		usleep(1000);
	}
	return true;
}

FIXTURE(hw)
{
	int cfd;
	int kfd;
	uint32_t gpus;
	bool hsa_up;
	struct kt_gpu gpu;
	hsa_queue_t *queue;
	int qfd;
};

FIXTURE_SETUP(hw)
{
	struct xsched_version v;
	int ret;

	self->kfd = -1;
	self->hsa_up = false;
	self->queue = NULL;
	self->qfd = -1;
	memset(&self->gpu, 0, sizeof(self->gpu));
	KT_OPEN_DEV_OR_SKIP(self->cfd, KT_XSCHED, "is xsched_kfd.ko loaded?");
	ASSERT_EQ(0, kt_version(self->cfd, &v));
	if (!(v.backends & (1U << XSCHED_BACKEND_KFD)))
		SKIP(return, "xsched_kfd.ko was built without KFD_SRC (no kfd backend)");
	KT_OPEN_DEV_OR_SKIP(self->kfd, KT_KFD, "no amdgpu.ko, no AMD GPU");
	ret = kt_attach(self->cfd, self->kfd, &self->gpus);
	ASSERT_EQ(0, ret) TH_LOG("attach: %s", kt_err(ret));
	if (!self->gpus)
		SKIP(return, "no AMD GPU: the KFD process has no devices");
	ASSERT_EQ(HSA_STATUS_SUCCESS, hsa_init());
	self->hsa_up = true;
	ASSERT_EQ(HSA_STATUS_INFO_BREAK, hsa_iterate_agents(kt_find_gpu, &self->gpu));
	ASSERT_EQ(HSA_STATUS_INFO_BREAK,
		  hsa_agent_iterate_regions(self->gpu.agent, kt_find_kernarg, &self->gpu));
	self->queue = kt_queue_create(&self->gpu);
	ASSERT_NE(NULL, self->queue);
	self->qfd = kt_register(self->cfd, (uintptr_t)self->queue->base_address, 0);
	ASSERT_LE(0, self->qfd) TH_LOG("register ring %p: %s",
				      self->queue->base_address, kt_err(self->qfd));
	TH_LOG("gpu %s, queue ring %p", self->gpu.name, self->queue->base_address);
}

FIXTURE_TEARDOWN(hw)
{
	if (self->qfd >= 0)
		close(self->qfd);
	if (self->queue)
		hsa_queue_destroy(self->queue);
	if (self->gpu.have_kernel) {
		hsa_executable_destroy(self->gpu.exec);
		hsa_code_object_reader_destroy(self->gpu.reader);
	}
	if (self->hsa_up)
		hsa_shut_down();
	if (self->kfd >= 0)
		close(self->kfd);
	if (self->cfd >= 0)
		close(self->cfd);
}

/* amdgpu's other character devices (DRM nodes, amdgpu's fops once open) are not KFD. */
TEST_F(hw, attach_drm_node_is_einval)
{
	static const char *const nodes[] = {
		"/dev/dri/renderD128", "/dev/dri/card0", "/dev/dri/card1",
	};
	int tried = 0;
	unsigned int i;

	for (i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		int fd = open(nodes[i], O_RDWR | O_CLOEXEC);

		if (fd < 0)
			continue;
		EXPECT_EQ(-EINVAL, kt_attach(self->cfd, fd, NULL))
			TH_LOG("%s", nodes[i]);
		close(fd);
		tried++;
	}
	/* The KFD process has a GPU, so amdgpu made a DRM node for it. */
	EXPECT_LT(0, tried) TH_LOG("no DRM node of the %u GPU(s) could be opened", self->gpus);
}

TEST_F(hw, registered_queue_reports_kfd_state)
{
	struct xsched_queue_info i;

	ASSERT_EQ(0, kt_query(self->qfd, &i));
	EXPECT_EQ(XSCHED_BACKEND_KFD, i.backend);
	EXPECT_EQ(XSCHED_STATE_ACTIVE, i.state);
	EXPECT_EQ(i.rptr, i.wptr) TH_LOG("idle queue: rptr %llu wptr %llu",
					 (unsigned long long)i.rptr,
					 (unsigned long long)i.wptr);
	EXPECT_LT(0, i.save_area_size);
	TH_LOG("figure: CWSR save area %llu bytes", (unsigned long long)i.save_area_size);
}

TEST_F(hw, same_ring_twice_is_eexist)
{
	EXPECT_EQ(-EEXIST, kt_register(self->cfd,
				      (uintptr_t)self->queue->base_address, 0));
}

TEST_F(hw, drain_is_eopnotsupp)
{
	struct xsched_queue_info i;

	memset(&i, 0, sizeof(i));
	ASSERT_EQ(0, kt_ioctl(self->qfd, XSCHED_IOC_QUERY, &i));
	EXPECT_EQ(1U << XSCHED_MODE_SAVE, i.modes);
	EXPECT_EQ(-EOPNOTSUPP, kt_suspend(self->qfd, XSCHED_MODE_DRAIN, NULL));
}

/* The global HWS cost: suspend and resume of an idle queue, 20 times. */
TEST_F(hw, idle_suspend_resume_latency)
{
	uint64_t sum = 0, max = 0, rsum = 0, t;
	struct xsched_suspend s;
	int i;

	for (i = 0; i < 20; i++) {
		ASSERT_EQ(0, kt_suspend(self->qfd, XSCHED_MODE_SAVE, &s));
		sum += s.latency_ns;
		max = s.latency_ns > max ? s.latency_ns : max;
		t = kt_now_ns();
		ASSERT_EQ(0, kt_resume(self->qfd));
		rsum += kt_now_ns() - t;
	}
	TH_LOG("figure: idle suspend mean %llu ns max %llu ns, resume mean %llu ns",
	       (unsigned long long)(sum / 20), (unsigned long long)max,
	       (unsigned long long)(rsum / 20));
}

/* The cost grows with the queues HWS must unmap and map again. */
TEST_F(hw, suspend_latency_with_more_queues)
{
	hsa_queue_t *extra[15];
	struct xsched_suspend s;
	int n = 0, round, i;

	for (round = 0; round < 3; round++) {
		int want = round == 0 ? 0 : round == 1 ? 3 : 15;
		uint64_t sum = 0;

		while (n < want) {
			extra[n] = kt_queue_create(&self->gpu);
			ASSERT_NE(NULL, extra[n]);
			n++;
		}
		for (i = 0; i < 10; i++) {
			ASSERT_EQ(0, kt_suspend(self->qfd, XSCHED_MODE_SAVE, &s));
			sum += s.latency_ns;
			ASSERT_EQ(0, kt_resume(self->qfd));
		}
		TH_LOG("figure: %d other queues: suspend mean %llu ns", n,
		       (unsigned long long)(sum / 10));
	}
	while (n--)
		hsa_queue_destroy(extra[n]);
}

/* A suspended queue does not process packets; resume lets it. */
TEST_F(hw, suspended_queue_runs_nothing_until_resumed)
{
	hsa_signal_t done;

	ASSERT_EQ(0, hsa_signal_create(1, 0, NULL, &done));
	ASSERT_EQ(0, kt_suspend(self->qfd, XSCHED_MODE_SAVE, NULL));
	kt_barrier(self->queue, done);
	EXPECT_FALSE(kt_done_within(done, 300));
	ASSERT_EQ(0, kt_resume(self->qfd));
	EXPECT_TRUE(kt_done_within(done, 5000));
	hsa_signal_destroy(done);
}

/* Closing the queue fd resumes a suspended queue. */
TEST_F(hw, close_resumes_suspended_queue)
{
	hsa_signal_t done;

	ASSERT_EQ(0, hsa_signal_create(1, 0, NULL, &done));
	ASSERT_EQ(0, kt_suspend(self->qfd, XSCHED_MODE_SAVE, NULL));
	kt_barrier(self->queue, done);
	EXPECT_FALSE(kt_done_within(done, 200));
	close(self->qfd);
	self->qfd = -1;
	EXPECT_TRUE(kt_done_within(done, 5000));
	hsa_signal_destroy(done);
}

/* A queue destroyed by its owner fails its registration with ENODEV. */
TEST_F(hw, destroyed_queue_fails_with_enodev)
{
	struct xsched_queue_info i;

	hsa_queue_destroy(self->queue);
	self->queue = NULL;
	EXPECT_EQ(-ENODEV, kt_suspend(self->qfd, XSCHED_MODE_SAVE, NULL));
	ASSERT_EQ(0, kt_query(self->qfd, &i));
	EXPECT_EQ(XSCHED_STATE_FAILED, i.state);
	EXPECT_EQ(-ENODEV, i.last_error);
}

/*
 * The spin kernel runs until the host sets a flag.  Suspended with SAVE
 * mid-kernel it must neither finish nor restart: after resume every
 * workgroup has started exactly once.
 */
TEST_F(hw, save_preempts_mid_kernel_and_resumes_where_it_stopped)
{
	const uint32_t groups = 1024;
	struct kt_spin_args args;
	struct xsched_suspend s;
	uint64_t *flag, *started, *out, t0;
	hsa_signal_t done;
	char why[256];
	uint32_t i;

	ASSERT_TRUE(kt_load_spin(&self->gpu, why, sizeof(why))) TH_LOG("%s", why);
	flag = kt_alloc(&self->gpu, 4096);
	started = kt_alloc(&self->gpu, 4096);
	out = kt_alloc(&self->gpu, groups * sizeof(uint64_t));
	ASSERT_TRUE(flag && started && out);
	ASSERT_EQ(0, hsa_signal_create(1, 0, NULL, &done));
	args.flag = (uintptr_t)flag;
	args.started = (uintptr_t)started;
	args.out = (uintptr_t)out;
	ASSERT_EQ(0, kt_spin(&self->gpu, self->queue, &args, groups, done));

	/* Wait until waves run (some workgroups started), then preempt. */
	t0 = kt_now_ns();
	while (!__atomic_load_n(started, __ATOMIC_ACQUIRE) &&
	       kt_now_ns() - t0 < 5000 * KT_NS_PER_MS)
		usleep(100);
	ASSERT_NE(0, __atomic_load_n(started, __ATOMIC_ACQUIRE));
	usleep(20000);
	ASSERT_EQ(0, kt_suspend(self->qfd, XSCHED_MODE_SAVE, &s));
	TH_LOG("figure: mid-kernel suspend %llu ns, %llu bytes of wave state saved",
	       (unsigned long long)s.latency_ns, (unsigned long long)s.saved_bytes);
	EXPECT_LT(0, s.saved_bytes);

	/* Let the kernel finish if it were running: it must not. */
	__atomic_store_n(flag, 1, __ATOMIC_RELEASE);
	EXPECT_FALSE(kt_done_within(done, 500));
	t0 = kt_now_ns();
	ASSERT_EQ(0, kt_resume(self->qfd));
	TH_LOG("figure: resume %llu ns", (unsigned long long)(kt_now_ns() - t0));
	ASSERT_TRUE(kt_done_within(done, 10000));
	EXPECT_EQ(groups, __atomic_load_n(started, __ATOMIC_ACQUIRE))
		TH_LOG("workgroups started %llu times for %u workgroups",
		       (unsigned long long)*started, groups);
	for (i = 0; i < groups; i++)
		if (!out[i])
			break;
	EXPECT_EQ(groups, i) TH_LOG("workgroup %u wrote no result", i);
	hsa_signal_destroy(done);
	hsa_memory_free(out);
	hsa_memory_free(started);
	hsa_memory_free(flag);
}

/*
 * The arbiter's batches on the real device: KT_BATCH_QUEUES arbitrated
 * queues at priority -1 each run the spin kernel; an urgent arbitrated
 * queue then runs one for 50 ms.  Every batch queue must be stopped by the
 * arbiter and resumed, and every spin kernel must finish exactly once.  With
 * arbiter_batch on, all of them are stopped with one device preemption; the
 * figures compare the time until all are stopped with batches on and off.
 */
#define KT_BATCH_QUEUES	8
#define KT_BATCH_PARAM	"/sys/module/xsched_kfd/parameters/arbiter_batch"

struct kt_spinner {
	hsa_queue_t *q;
	int qfd;
	uint64_t *flag, *started, *out;
	hsa_signal_t done;
};

/* Start the spin kernel (@groups workgroups) on a new queue registered as @prio. */
static int kt_spinner_start(struct kt_gpu *g, int cfd, struct kt_spinner *s,
			    int32_t prio, uint32_t groups)
{
	struct kt_spin_args args;

	memset(s, 0, sizeof(*s));
	s->qfd = -1;
	s->q = kt_queue_create(g);
	s->flag = kt_alloc(g, 4096);
	s->started = kt_alloc(g, 4096);
	s->out = kt_alloc(g, groups * sizeof(uint64_t));
	if (!s->q || !s->flag || !s->started || !s->out ||
	    hsa_signal_create(1, 0, NULL, &s->done))
		return -ENOMEM;
	s->qfd = kt_register_flags(cfd, (uintptr_t)s->q->base_address, prio,
				   XSCHED_REGISTER_ARBITRATE);
	if (s->qfd < 0)
		return s->qfd;
	args.flag = (uintptr_t)s->flag;
	args.started = (uintptr_t)s->started;
	args.out = (uintptr_t)s->out;
	return kt_spin(g, s->q, &args, groups, s->done);
}

static void kt_spinner_stop(struct kt_spinner *s)
{
	if (s->qfd >= 0)
		close(s->qfd);
	if (s->q)
		hsa_queue_destroy(s->q);
	if (s->done.handle)
		hsa_signal_destroy(s->done);
	if (s->out)
		hsa_memory_free(s->out);
	if (s->started)
		hsa_memory_free(s->started);
	if (s->flag)
		hsa_memory_free(s->flag);
}

TEST_F(hw, arbiter_batch_stops_every_queue_and_loses_nothing)
{
	const uint32_t groups = 64;
	struct kt_spinner b[KT_BATCH_QUEUES], u;
	int round, i, stopped;
	char why[256];
	int ret;

	ASSERT_TRUE(kt_load_spin(&self->gpu, why, sizeof(why))) TH_LOG("%s", why);
	ret = kt_write_file(KT_BATCH_PARAM, "Y");
	if (ret == -EACCES || ret == -EPERM)
		SKIP(return, "%s: %s (needs root)", KT_BATCH_PARAM, kt_err(ret));
	ASSERT_EQ(0, ret) TH_LOG("%s: %s", KT_BATCH_PARAM, kt_err(ret));
	for (round = 0; round < 2; round++) {
		struct xsched_queue_info info;
		uint64_t t0, all_stopped = 0;

		ASSERT_EQ(0, kt_write_file(KT_BATCH_PARAM, round ? "N" : "Y"));
		for (i = 0; i < KT_BATCH_QUEUES; i++)
			ASSERT_EQ(0, kt_spinner_start(&self->gpu, self->cfd, &b[i],
						      -1, groups));
		usleep(20000);
		t0 = kt_now_ns();
		ASSERT_EQ(0, kt_spinner_start(&self->gpu, self->cfd, &u, 0, 1));
		/* The arbiter sees the urgent queue busy within arbiter_poll_us. */
		while (kt_now_ns() - t0 < 5000 * KT_NS_PER_MS) {
			for (i = 0, stopped = 0; i < KT_BATCH_QUEUES; i++) {
				ASSERT_EQ(0, kt_query(b[i].qfd, &info));
				stopped += info.state == XSCHED_STATE_SUSPENDED;
			}
			if (stopped == KT_BATCH_QUEUES) {
				all_stopped = kt_now_ns() - t0;
				break;
			}
			usleep(100);
		}
		EXPECT_NE(0, all_stopped) TH_LOG("not every batch queue was stopped");
		usleep(50000);
		__atomic_store_n(u.flag, 1, __ATOMIC_RELEASE);
		EXPECT_TRUE(kt_done_within(u.done, 5000));
		for (i = 0; i < KT_BATCH_QUEUES; i++)
			__atomic_store_n(b[i].flag, 1, __ATOMIC_RELEASE);
		for (i = 0; i < KT_BATCH_QUEUES; i++) {
			EXPECT_TRUE(kt_done_within(b[i].done, 10000));
			EXPECT_EQ(groups, __atomic_load_n(b[i].started, __ATOMIC_ACQUIRE));
			ASSERT_EQ(0, kt_query(b[i].qfd, &info));
			EXPECT_LE(1, info.arbiter_suspends);
			EXPECT_EQ(0, info.faults) TH_LOG("last_error %d", info.last_error);
		}
		TH_LOG("figure: arbiter_batch=%s: %d queues all stopped %llu us after the urgent dispatch",
		       round ? "N" : "Y", KT_BATCH_QUEUES,
		       (unsigned long long)(all_stopped / 1000));
		kt_spinner_stop(&u);
		for (i = 0; i < KT_BATCH_QUEUES; i++)
			kt_spinner_stop(&b[i]);
	}
	kt_write_file(KT_BATCH_PARAM, "Y");
}

TEST_HARNESS_MAIN
