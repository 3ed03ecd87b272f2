/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the xsched kselftests: thin ioctl wrappers that return
 * 0/-errno (or the ioctl's non-negative result), device memory, the CPU
 * reference of the sim kernels, the debugfs knobs and queue table, time and a
 * seeded RNG.  Apart from XS_CLIENT_OPEN_OR_SKIP() and XS_DEBUGFS_OR_SKIP()
 * (a skip names the missing device, privilege or kernel feature; any other
 * error fails) and XS_EXPECT_MARKS() (a MARK packet's step marks), the
 * assertions live in the tests.
 */
#ifndef XSCHED_TEST_H
#define XSCHED_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <linux/xsched_kfd.h>
#include <linux/xsched_sim.h>

#include "kselftest_harness.h"

#define XS_DEV_PATH	"/dev/" XSCHED_DEVICE_NAME
#define XS_SIM_PATH	"/dev/" XSCHED_SIM_DEVICE_NAME
#define XS_DEBUGFS_ROOT	"/sys/kernel/debug"
#define XS_DEBUGFS_DIR	XS_DEBUGFS_ROOT "/xsched"
#define XS_SIM_DIR	XS_DEBUGFS_DIR "/sim"
#define XS_QUEUES_PATH	XS_DEBUGFS_DIR "/queues"
#define XS_OBJECTS_PATH	XS_DEBUGFS_DIR "/objects"

#define XS_US		1000ULL
#define XS_MS		1000000ULL
#define XS_SEC		1000000000ULL
#define XS_PAGE		4096ULL

#define XS_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------------------- ioctls */

static inline int xs_ioctl(int fd, unsigned long req, void *arg)
{
	int ret = ioctl(fd, req, arg);

	return ret < 0 ? -errno : ret;
}

static inline const char *xs_err(int ret)
{
	return ret < 0 ? strerror(-ret) : "success";
}

/* Opens a client and reads its version; -errno when the device is missing. */
static inline int xs_client_open(int *cfd, struct xsched_version *ver)
{
	struct xsched_version v;
	int fd, ret;

	*cfd = -1;
	fd = open(XS_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	memset(&v, 0, sizeof(v));
	ret = xs_ioctl(fd, XSCHED_IOC_VERSION, &v);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	if (ver)
		*ver = v;
	*cfd = fd;
	return 0;
}

/*
 * For FIXTURE_SETUP(): opens a client into @cfd/@ver, skipping the test when
 * the module is not loaded and failing it on any other error.
 */
#define XS_CLIENT_OPEN_OR_SKIP(cfd, ver) do {					\
	int __ret = xs_client_open(&(cfd), &(ver));				\
										\
	if (__ret == -ENOENT || __ret == -ENODEV || __ret == -ENXIO)		\
		SKIP(return, "%s: %s (is xsched_kfd.ko loaded?)", XS_DEV_PATH,	\
		     xs_err(__ret));						\
	ASSERT_EQ(0, __ret) TH_LOG("open/VERSION: %s", xs_err(__ret));		\
} while (0)

/* Opens the sim GPU (xsched_sim.ko) and reads its shape; -errno if missing. */
static inline int xs_sim_open(int *sfd, struct xsched_sim_info *info)
{
	struct xsched_sim_info i;
	int fd, ret;

	*sfd = -1;
	fd = open(XS_SIM_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	memset(&i, 0, sizeof(i));
	ret = xs_ioctl(fd, XSCHED_IOC_SIM_INFO, &i);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	if (info)
		*info = i;
	*sfd = fd;
	return 0;
}

/* For FIXTURE_SETUP(): the sim GPU, skipping when xsched_sim.ko is not loaded. */
#define XS_SIM_OPEN_OR_SKIP(sfd, info) do {					\
	int __ret = xs_sim_open(&(sfd), &(info));				\
										\
	if (__ret == -ENOENT || __ret == -ENODEV || __ret == -ENXIO)		\
		SKIP(return, "%s: %s (is xsched_sim.ko loaded?)", XS_SIM_PATH,	\
		     xs_err(__ret));						\
	ASSERT_EQ(0, __ret) TH_LOG("open/SIM_INFO: %s", xs_err(__ret));	\
} while (0)

/* Wave slots of the whole sim GPU: how many workgroups run at once. */
static inline unsigned int xs_slots(const struct xsched_sim_info *s)
{
	return s->cus * s->waves_per_cu;
}

struct xs_buf {
	uint64_t gpu_addr;
	uint64_t size;		/* bytes asked for */
	uint64_t map_size;	/* bytes mapped (whole pages) */
	uint64_t *map;
};

static inline int xs_mem_alloc(int sfd, uint64_t size, uint64_t *gpu_addr)
{
	struct xsched_sim_mem m = { .size = size };
	int ret = xs_ioctl(sfd, XSCHED_IOC_SIM_MEM_ALLOC, &m);

	if (ret >= 0 && gpu_addr)
		*gpu_addr = m.gpu_addr;
	return ret < 0 ? ret : 0;
}

/* Allocates device memory and maps it; the mapping starts poisoned. */
static inline int xs_buf_alloc(int sfd, uint64_t size, struct xs_buf *b)
{
	void *p;
	int ret;

	memset(b, 0, sizeof(*b));
	ret = xs_mem_alloc(sfd, size, &b->gpu_addr);
	if (ret)
		return ret;
	b->size = size;
	b->map_size = (size + XS_PAGE - 1) & ~(XS_PAGE - 1);
	p = mmap(NULL, b->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, sfd,
		 (off_t)b->gpu_addr);
	if (p == MAP_FAILED)
		return -errno;
	b->map = p;
	memset(b->map, 0xa5, b->map_size);
	return 0;
}

static inline void xs_buf_free(struct xs_buf *b)
{
	if (b->map)
		munmap(b->map, b->map_size);
	b->map = NULL;
}

static inline int xs_queue_create(int sfd, uint32_t ring_size, uint32_t *id,
				  uint64_t *save_area_size)
{
	struct xsched_sim_queue_create c = { .ring_size = ring_size };
	int ret = xs_ioctl(sfd, XSCHED_IOC_SIM_QUEUE_CREATE, &c);

	if (ret < 0)
		return ret;
	if (id)
		*id = c.queue_id;
	if (save_area_size)
		*save_area_size = c.save_area_size;
	return 0;
}

/*
 * Registers sim queue @id of sim fd @sfd on client @cfd with @flags
 * (XSCHED_REGISTER_ARBITRATE: the arbiter's); the queue fd or -errno.
 */
static inline int xs_register_flags(int cfd, int sfd, uint32_t id, int32_t priority,
				    uint32_t flags, uint32_t *uid)
{
	struct xsched_register r = {
		.backend = XSCHED_BACKEND_SIM,
		.flags = flags,
		.handle = id,
		.backend_fd = (__u32)sfd,
		.priority = priority,
	};
	int ret = xs_ioctl(cfd, XSCHED_IOC_REGISTER, &r);

	if (ret >= 0 && uid)
		*uid = r.queue_uid;
	return ret;
}

/* Registers sim queue @id of sim fd @sfd on client @cfd; the queue fd or -errno. */
static inline int xs_register(int cfd, int sfd, uint32_t id, int32_t priority,
			      uint32_t *uid)
{
	return xs_register_flags(cfd, sfd, id, priority, 0, uid);
}

static inline struct xsched_sim_packet xs_packet(uint32_t grid, uint32_t steps,
						 uint64_t step_ns, uint64_t seed,
						 uint64_t dst, uint64_t src)
{
	struct xsched_sim_packet p = {
		.kernel = XSCHED_SIM_KERNEL_ACCUMULATE,
		.grid = grid,
		.steps = steps,
		.step_ns = step_ns,
		.seed = seed,
		.dst = dst,
		.src = src,
	};

	return p;
}

/*
 * A MARK packet: ACCUMULATE into dst[0..grid), and one mark per executed step
 * at dst[grid + wg] (dst holds xs_packet_entries() words; clear the marks
 * with xs_marks_clear() before submitting).
 */
static inline struct xsched_sim_packet xs_mark_packet(uint32_t grid, uint32_t steps,
						      uint64_t step_ns, uint64_t seed,
						      uint64_t dst, uint64_t src)
{
	struct xsched_sim_packet p = xs_packet(grid, steps, step_ns, seed, dst, src);

	p.kernel = XSCHED_SIM_KERNEL_MARK;
	return p;
}

/* u64 entries the packet writes at dst: results, and marks for MARK. */
static inline uint64_t xs_packet_entries(const struct xsched_sim_packet *p)
{
	return p->kernel == XSCHED_SIM_KERNEL_MARK ? 2ULL * p->grid : p->grid;
}

/* Zeroes the marks of MARK packet @p whose dst is mapped at @out. */
static inline void xs_marks_clear(const struct xsched_sim_packet *p, uint64_t *out)
{
	memset(out + p->grid, 0, p->grid * sizeof(*out));
}

/* The first workgroup whose mark is not @want, or -1. */
static inline long xs_marks_not(const struct xsched_sim_packet *p,
				const uint64_t *out, uint64_t want)
{
	uint32_t wg;

	for (wg = 0; wg < p->grid; wg++)
		if (out[p->grid + wg] != want)
			return (long)wg;
	return -1;
}

/* Steps the workgroups of MARK packet @p have executed, by their marks. */
static inline uint64_t xs_marks_sum(const struct xsched_sim_packet *p,
				    const uint64_t *out)
{
	uint64_t sum = 0;
	uint32_t wg;

	for (wg = 0; wg < p->grid; wg++)
		sum += out[p->grid + wg];
	return sum;
}

/*
 * Every workgroup of completed MARK packet @p (dst mapped at @out) executed
 * exactly its steps: a re-run, even one that recomputed the same result,
 * leaves more marks; a lost step fewer.
 */
#define XS_EXPECT_MARKS(p, out) do {							long __bad = xs_marks_not((p), (out), (p)->steps);														EXPECT_EQ(-1, __bad)									TH_LOG("workgroup %ld of %u executed %" PRIu64 " steps by its "			       "marks, expected exactly %u (a step re-run or lost)",			       __bad, (p)->grid,							       __bad < 0 ? 0 : (out)[(p)->grid + __bad], (p)->steps);	} while (0)

/* Wave steps one packet executes. */
static inline uint64_t xs_packet_steps(const struct xsched_sim_packet *p)
{
	return (uint64_t)p->grid * p->steps;
}

static inline int xs_submit(int sfd, uint32_t id,
			    const struct xsched_sim_packet *pkts, uint32_t count,
			    uint64_t *seq)
{
	struct xsched_sim_submit s = {
		.queue_id = id,
		.count = count,
		.packets = (uintptr_t)pkts,
	};
	int ret = xs_ioctl(sfd, XSCHED_IOC_SIM_SUBMIT, &s);

	if (ret >= 0 && seq)
		*seq = s.seq;
	return ret < 0 ? ret : 0;
}

static inline int xs_wait(int sfd, uint32_t id, uint64_t seq,
			  uint64_t timeout_ns, uint64_t *completed)
{
	struct xsched_sim_wait w = {
		.queue_id = id,
		.seq = seq,
		.timeout_ns = timeout_ns,
		.completed = ~0ULL,
	};
	int ret = xs_ioctl(sfd, XSCHED_IOC_SIM_WAIT, &w);

	if (completed)
		*completed = w.completed;
	return ret < 0 ? ret : 0;
}

static inline int xs_query(int qfd, struct xsched_queue_info *info)
{
	int ret;

	memset(info, 0, sizeof(*info));
	ret = xs_ioctl(qfd, XSCHED_IOC_QUERY, info);
	return ret < 0 ? ret : 0;
}

/* The queue's state, or -errno if QUERY fails. */
static inline int xs_state(int qfd)
{
	struct xsched_queue_info info;
	int ret = xs_query(qfd, &info);

	return ret ? ret : (int)info.state;
}

static inline int xs_suspend(int qfd, uint32_t mode, uint32_t flags,
			     uint64_t grace_ns, struct xsched_suspend *out)
{
	struct xsched_suspend s = {
		.mode = mode,
		.flags = flags,
		.grace_ns = grace_ns,
	};
	int ret = xs_ioctl(qfd, XSCHED_IOC_SUSPEND, &s);

	if (out)
		*out = s;
	return ret < 0 ? ret : 0;
}

static inline int xs_resume(int qfd, uint64_t *suspended_ns)
{
	struct xsched_resume r = { 0 };
	int ret = xs_ioctl(qfd, XSCHED_IOC_RESUME, &r);

	if (ret >= 0 && suspended_ns)
		*suspended_ns = r.suspended_ns;
	return ret < 0 ? ret : 0;
}

static inline int xs_set_priority(int qfd, int32_t priority)
{
	struct xsched_set_priority p = { .priority = priority };
	int ret = xs_ioctl(qfd, XSCHED_IOC_SET_PRIORITY, &p);

	return ret < 0 ? ret : 0;
}

static inline const char *xs_state_name(int state)
{
	switch (state) {
	case XSCHED_STATE_ACTIVE:	return "ACTIVE";
	case XSCHED_STATE_SUSPENDING:	return "SUSPENDING";
	case XSCHED_STATE_SUSPENDED:	return "SUSPENDED";
	case XSCHED_STATE_FAILED:	return "FAILED";
	default:			return "?";
	}
}

static inline const char *xs_mode_name(uint32_t mode)
{
	return mode == XSCHED_MODE_SAVE ? "SAVE" :
	       mode == XSCHED_MODE_DRAIN ? "DRAIN" : "?";
}

/* A signal handler that only interrupts (install it without SA_RESTART). */
static inline void xs_interrupt_handler(int sig)
{
	(void)sig;
}

/* ------------------------------------------------------------------ time */

static inline uint64_t xs_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * XS_SEC + (uint64_t)ts.tv_nsec;
}

static inline void xs_sleep_ns(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / XS_SEC),
		.tv_nsec = (long)(ns % XS_SEC),
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Submits, retrying while the ring is full (EAGAIN) for up to @patience_ns. */
static inline int xs_submit_retry(int sfd, uint32_t id,
				  const struct xsched_sim_packet *pkts,
				  uint32_t count, uint64_t *seq,
				  uint64_t patience_ns)
{
	uint64_t end = xs_now_ns() + patience_ns;
	int ret;

	for (;;) {
		ret = xs_submit(sfd, id, pkts, count, seq);
		if (ret != -EAGAIN || xs_now_ns() > end)
			return ret;
		xs_sleep_ns(XS_MS);
	}
}

/* Polls QUERY until the queue is in @state; 0, -ETIMEDOUT or QUERY's -errno. */
static inline int xs_wait_state(int qfd, int state, uint64_t timeout_ns)
{
	uint64_t end = xs_now_ns() + timeout_ns;
	int s;

	for (;;) {
		s = xs_state(qfd);
		if (s < 0)
			return s;
		if (s == state)
			return 0;
		if (xs_now_ns() > end)
			return -ETIMEDOUT;
		xs_sleep_ns(XS_MS);
	}
}

/* Polls QUERY until no wave is left in the save area (restore finished). */
static inline int xs_wait_no_saved_waves(int qfd, uint64_t timeout_ns)
{
	uint64_t end = xs_now_ns() + timeout_ns;
	struct xsched_queue_info info;
	int ret;

	for (;;) {
		ret = xs_query(qfd, &info);
		if (ret)
			return ret;
		if (!info.saved_waves)
			return 0;
		if (xs_now_ns() > end)
			return -ETIMEDOUT;
		xs_sleep_ns(XS_MS);
	}
}

/* Polls QUERY until at least @steps wave steps ran (the kernel started). */
static inline int xs_wait_steps(int qfd, uint64_t steps, uint64_t timeout_ns)
{
	uint64_t end = xs_now_ns() + timeout_ns;
	struct xsched_queue_info info;
	int ret;

	for (;;) {
		ret = xs_query(qfd, &info);
		if (ret)
			return ret;
		if (info.steps_done >= steps)
			return 0;
		if (xs_now_ns() > end)
			return -ETIMEDOUT;
		xs_sleep_ns(200 * XS_US);
	}
}

/* poll() on one fd; returns revents (0 on timeout) or -errno. */
static inline int xs_poll(int fd, short events, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int ret = poll(&p, 1, timeout_ms);

	if (ret < 0)
		return -errno;
	return ret ? p.revents : 0;
}

/* ------------------------------------------------------------ reference */

/* One ACCUMULATE workgroup computed on the CPU. */
static inline uint64_t xs_ref_workgroup(uint64_t seed, uint32_t wg,
					uint32_t steps, const uint64_t *src)
{
	uint32_t lds[XSCHED_SIM_LDS_WORDS] = { 0 };
	uint64_t acc = src ? src[wg] : xsched_sim_init(seed, wg);
	uint32_t s;

	for (s = 0; s < steps; s++)
		acc = xsched_sim_step(acc, s, lds);
	return xsched_sim_finish(acc, lds);
}

/* The CPU reference of one ACCUMULATE packet; @src is the CPU copy or NULL. */
static inline void xs_ref_packet(const struct xsched_sim_packet *p,
				 const uint64_t *src, uint64_t *out)
{
	uint32_t wg;

	for (wg = 0; wg < p->grid; wg++)
		out[wg] = xs_ref_workgroup(p->seed, wg, p->steps, src);
}

/* Index of the first differing entry, or -1 when all @n are equal. */
static inline long xs_first_mismatch(const uint64_t *got, const uint64_t *want,
				     size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (got[i] != want[i])
			return (long)i;
	return -1;
}

/*
 * Compares @out with the CPU reference of packet @p (@src: the CPU copy of
 * its input, or NULL): the first wrong workgroup, -1 if all are right, or
 * -ENOMEM.
 */
static inline long xs_packet_mismatch(const struct xsched_sim_packet *p,
				      const uint64_t *src, const uint64_t *out)
{
	uint64_t *ref = malloc(p->grid * sizeof(*ref));
	long bad;

	if (!ref)
		return -ENOMEM;
	xs_ref_packet(p, src, ref);
	bad = xs_first_mismatch(out, ref, p->grid);
	free(ref);
	return bad;
}

/* ------------------------------------------------------------------ rng */

/* A seed from $XSCHED_SEED or the clock; printed so a failure can be re-run. */
static inline uint64_t xs_seed(const char *who)
{
	const char *env = getenv("XSCHED_SEED");
	uint64_t seed;

	if (env && *env)
		seed = strtoull(env, NULL, 0);
	else
		seed = xs_now_ns() ^ ((uint64_t)getpid() << 32);
	if (!seed)
		seed = 1;
	ksft_print_msg("%s: seed %" PRIu64 " (XSCHED_SEED=%" PRIu64
		       " repeats it)\n", who, seed, seed);
	return seed;
}

static inline uint64_t xs_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* Uniform in [lo, hi]. */
static inline uint64_t xs_rand_range(uint64_t *state, uint64_t lo, uint64_t hi)
{
	return lo + xs_rand(state) % (hi - lo + 1);
}

/* ---------------------------------------------------------------- stats */

static inline int xs_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorts @v and returns its @pct-th percentile (nearest rank). */
static inline uint64_t xs_percentile(uint64_t *v, size_t n, unsigned int pct)
{
	size_t rank;

	qsort(v, n, sizeof(*v), xs_cmp_u64);
	rank = (n * pct + 99) / 100;
	return v[rank ? rank - 1 : 0];
}

/* -------------------------------------------------------------- debugfs */

/* 0 when the sim's debugfs directory is there, mounting debugfs if needed. */
static inline int xs_debugfs_ready(void)
{
	if (!access(XS_SIM_DIR, F_OK))
		return 0;
	mount("debugfs", XS_DEBUGFS_ROOT, "debugfs", 0, NULL);
	return access(XS_SIM_DIR, F_OK) ? -errno : 0;
}

static inline int xs_write_file(const char *path, const char *text)
{
	ssize_t n;
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != strlen(text))
		ret = -EIO;
	close(fd);
	return ret;
}

static inline int xs_knob_write(const char *knob, uint64_t value)
{
	char path[256], text[32];

	snprintf(path, sizeof(path), XS_SIM_DIR "/%s", knob);
	snprintf(text, sizeof(text), "%" PRIu64 "\n", value);
	return xs_write_file(path, text);
}

static inline int xs_knob_read(const char *knob, uint64_t *value)
{
	char path[256], text[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), XS_SIM_DIR "/%s", knob);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	text[n] = 0;
	*value = strtoull(text, NULL, 0);
	return 0;
}

/* The module's live-object counters (debugfs xsched/objects: "name count"). */
#define XS_MAX_OBJECTS	16

struct xs_objects {
	int n;
	char name[XS_MAX_OBJECTS][32];
	long count[XS_MAX_OBJECTS];
};

/* Reads the counters; the number of them or -errno. */
static inline int xs_objects_read(struct xs_objects *o)
{
	char line[128];
	FILE *f;

	memset(o, 0, sizeof(*o));
	f = fopen(XS_OBJECTS_PATH, "re");
	if (!f)
		return -errno;
	while (o->n < XS_MAX_OBJECTS && fgets(line, sizeof(line), f))
		if (sscanf(line, "%31s %ld", o->name[o->n], &o->count[o->n]) == 2)
			o->n++;
	fclose(f);
	return o->n ? o->n : -EPROTO;
}

/* The first counter that differs between @a and @b (by name), or -1. */
static inline int xs_objects_diff(const struct xs_objects *a,
				  const struct xs_objects *b)
{
	int i;

	if (a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++)
		if (strcmp(a->name[i], b->name[i]) || a->count[i] != b->count[i])
			return i;
	return -1;
}

/* One row of debugfs xsched/queues. */
struct xs_row {
	uint32_t uid;
	char state[24];
};

#define XS_MAX_ROWS	512

/*
 * Reads the queue table: the header names the columns, "uid" and "state"
 * are looked up by name.  Returns the number of rows or -errno.
 */
static inline int xs_queue_table(struct xs_row *rows, int max)
{
	int uid_col = -1, state_col = -1, n = 0, col;
	char line[1024], *tok, *save;
	FILE *f;

	f = fopen(XS_QUEUES_PATH, "re");
	if (!f)
		return -errno;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -EIO;
	}
	for (col = 0, tok = strtok_r(line, " \t\n", &save); tok;
	     col++, tok = strtok_r(NULL, " \t\n", &save)) {
		if (!strcmp(tok, "uid"))
			uid_col = col;
		else if (!strcmp(tok, "state"))
			state_col = col;
	}
	if (uid_col < 0 || state_col < 0) {
		fclose(f);
		return -EPROTO;
	}
	while (n < max && fgets(line, sizeof(line), f)) {
		struct xs_row r = { 0 };
		bool have_uid = false, have_state = false;

		for (col = 0, tok = strtok_r(line, " \t\n", &save); tok;
		     col++, tok = strtok_r(NULL, " \t\n", &save)) {
			if (col == uid_col) {
				r.uid = (uint32_t)strtoul(tok, NULL, 0);
				have_uid = true;
			} else if (col == state_col) {
				snprintf(r.state, sizeof(r.state), "%s", tok);
				have_state = true;
			}
		}
		if (have_uid && have_state)
			rows[n++] = r;
	}
	fclose(f);
	return n;
}

/* Rows whose state is suspended or suspending, or -errno. */
static inline int xs_table_count_stopped(void)
{
	static struct xs_row rows[XS_MAX_ROWS];
	int n = xs_queue_table(rows, XS_MAX_ROWS), i, stopped = 0;

	if (n < 0)
		return n;
	for (i = 0; i < n; i++)
		if (!strncasecmp(rows[i].state, "suspend", 7))
			stopped++;
	return stopped;
}

/*
 * For tests that need the sim's debugfs (knobs, queue table, objects): skips
 * when the kernel has no debugfs (CONFIG_DEBUG_FS) or the caller may not
 * mount it, fails on any other error.  The module must be loaded already.
 */
#define XS_DEBUGFS_OR_SKIP() do {						\
	int __ret = xs_debugfs_ready();						\
										\
	if (__ret == -ENOENT || __ret == -ENODEV)				\
		SKIP(return, "%s: %s (needs CONFIG_DEBUG_FS)", XS_SIM_DIR,	\
		     xs_err(__ret));						\
	if (__ret == -EPERM || __ret == -EACCES)				\
		SKIP(return, "%s: %s (needs root)", XS_SIM_DIR, xs_err(__ret));	\
	ASSERT_EQ(0, __ret) TH_LOG("%s: %s", XS_SIM_DIR, xs_err(__ret));	\
} while (0)

/* Copies the state of queue @uid into @state; 1 if found, 0 if not, -errno. */
static inline int xs_table_state(uint32_t uid, char *state, size_t len)
{
	static struct xs_row rows[XS_MAX_ROWS];
	int n = xs_queue_table(rows, XS_MAX_ROWS), i;

	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		if (rows[i].uid == uid) {
			snprintf(state, len, "%s", rows[i].state);
			return 1;
		}
	}
	return 0;
}

/* A file's text (a module parameter), "" if unreadable; to restore it later. */
static inline void xs_param_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = -1;

	if (fd >= 0) {
		n = read(fd, buf, len - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0] = 0;
}

/* Another user: a child running @fn as @uid; it reports on a pipe. */
struct xs_other {
	pid_t pid;
	int rfd;	/* child -> parent: one int, the child's result */
	int wfd;	/* parent -> child: closed when the child may exit */
};

/* Runs in the child; may report on @up and read @down itself. */
typedef int (*xs_other_fn)(void *arg, int up, int down);

static inline int xs_other_start(struct xs_other *o, uid_t uid, xs_other_fn fn, void *arg)
{
	int up[2], down[2];
	char c;

	o->pid = -1;
	o->rfd = -1;
	o->wfd = -1;
	if (pipe(up))
		return -errno;
	if (pipe(down)) {
		close(up[0]);
		close(up[1]);
		return -errno;
	}
	o->pid = fork();
	if (o->pid < 0)
		return -errno;
	if (o->pid == 0) {
		int ret;

		close(up[0]);
		close(down[1]);
		if (setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
			ret = -errno;
		else
			ret = fn(arg, up[1], down[0]);
		if (write(up[1], &ret, sizeof(ret)) != sizeof(ret))
			_exit(1);
		/* Keep every fd open until the parent is done measuring. */
		while (read(down[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	o->rfd = up[0];
	o->wfd = down[1];
	return 0;
}

/* The child's result (its fn's return value), or -EPIPE if it died. */
static inline int xs_other_result(struct xs_other *o)
{
	int ret;

	if (read(o->rfd, &ret, sizeof(ret)) != sizeof(ret))
		return -EPIPE;
	return ret;
}

static inline void xs_other_stop(struct xs_other *o)
{
	close(o->wfd);
	close(o->rfd);
	waitpid(o->pid, NULL, 0);
}

#endif /* XSCHED_TEST_H */
