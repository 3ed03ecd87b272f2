/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The xsched kselftests' library (the files of lib/), as KVM selftests have theirs:
 * thin ioctl wrappers that return 0/-errno (or the ioctl's non-negative
 * result), the sim GPU and its device memory, the CPU reference of the sim
 * kernels, time and polling, the debugfs knobs and queue table, a seeded
 * RNG, percentiles and another user.  No assertion lives here: the library
 * answers, the tests assert (xsched_test.h adds the few assertions the tests
 * share, with kselftest_harness.h).
 */
#ifndef XSCHED_UTIL_H
#define XSCHED_UTIL_H

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
#include <sys/types.h>
#include <sys/wait.h>

#include <linux/xsched_kfd.h>
#include <linux/xsched_sim.h>

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

/* ------------------------------------- lib/xsched.c: the module's ioctls */

/* ioctl(2) as 0 or its non-negative result, or -errno. */
int xs_ioctl(int fd, unsigned long req, void *arg);
/* strerror(-ret), or "success". */
const char *xs_err(int ret);

/* Opens a client and reads its version; -errno when the device is missing. */
int xs_client_open(int *cfd, struct xsched_version *ver);

/*
 * Registers sim queue @id of sim fd @sfd on client @cfd with @flags
 * (XSCHED_REGISTER_ARBITRATE: the arbiter's); the queue fd or -errno.
 */
int xs_register_flags(int cfd, int sfd, uint32_t id, int32_t priority,
		      uint32_t flags, uint32_t *uid);
/* Registers sim queue @id of sim fd @sfd on client @cfd; the queue fd or -errno. */
int xs_register(int cfd, int sfd, uint32_t id, int32_t priority,
		uint32_t *uid);

int xs_query(int qfd, struct xsched_queue_info *info);
/* The queue's state, or -errno if QUERY fails. */
int xs_state(int qfd);
int xs_suspend(int qfd, uint32_t mode, uint32_t flags,
	       uint64_t grace_ns, struct xsched_suspend *out);
int xs_resume(int qfd, uint64_t *suspended_ns);
int xs_set_priority(int qfd, int32_t priority);

const char *xs_state_name(int state);
const char *xs_mode_name(uint32_t mode);

/* A signal handler that only interrupts (install it without SA_RESTART). */
void xs_interrupt_handler(int sig);

/* ------------------------------------------------ lib/sim.c: the sim GPU */

/* Opens the sim GPU (xsched_sim.ko) and reads its shape; -errno if missing. */
int xs_sim_open(int *sfd, struct xsched_sim_info *info);
/* Wave slots of the whole sim GPU: how many workgroups run at once. */
unsigned int xs_slots(const struct xsched_sim_info *s);

struct xs_buf {
	uint64_t gpu_addr;
	uint64_t size;		/* bytes asked for */
	uint64_t map_size;	/* bytes mapped (whole pages) */
	uint64_t *map;
};

int xs_mem_alloc(int sfd, uint64_t size, uint64_t *gpu_addr);
/* Allocates device memory and maps it; the mapping starts poisoned. */
int xs_buf_alloc(int sfd, uint64_t size, struct xs_buf *b);
void xs_buf_free(struct xs_buf *b);

int xs_queue_create(int sfd, uint32_t ring_size, uint32_t *id,
		    uint64_t *save_area_size);
int xs_submit(int sfd, uint32_t id,
	      const struct xsched_sim_packet *pkts, uint32_t count,
	      uint64_t *seq);
/* Submits, retrying while the ring is full (EAGAIN) for up to @patience_ns. */
int xs_submit_retry(int sfd, uint32_t id,
		    const struct xsched_sim_packet *pkts,
		    uint32_t count, uint64_t *seq,
		    uint64_t patience_ns);
int xs_wait(int sfd, uint32_t id, uint64_t seq,
	    uint64_t timeout_ns, uint64_t *completed);

/* ----------------- lib/packet.c: packets, marks and the CPU reference */

/* An ACCUMULATE packet. */
struct xsched_sim_packet xs_packet(uint32_t grid, uint32_t steps,
				   uint64_t step_ns, uint64_t seed,
				   uint64_t dst, uint64_t src);
/*
 * A MARK packet: ACCUMULATE into dst[0..grid), and one mark per executed step
 * at dst[grid + wg] (dst holds xs_packet_entries() words; clear the marks
 * with xs_marks_clear() before submitting).
 */
struct xsched_sim_packet xs_mark_packet(uint32_t grid, uint32_t steps,
					uint64_t step_ns, uint64_t seed,
					uint64_t dst, uint64_t src);
/* u64 entries the packet writes at dst: results, and marks for MARK. */
uint64_t xs_packet_entries(const struct xsched_sim_packet *p);
/* Wave steps one packet executes. */
uint64_t xs_packet_steps(const struct xsched_sim_packet *p);

/* Zeroes the marks of MARK packet @p whose dst is mapped at @out. */
void xs_marks_clear(const struct xsched_sim_packet *p, uint64_t *out);
/* The first workgroup whose mark is not @want, or -1. */
long xs_marks_not(const struct xsched_sim_packet *p,
		  const uint64_t *out, uint64_t want);
/* Steps the workgroups of MARK packet @p have executed, by their marks. */
uint64_t xs_marks_sum(const struct xsched_sim_packet *p,
		      const uint64_t *out);

/* One ACCUMULATE workgroup computed on the CPU. */
uint64_t xs_ref_workgroup(uint64_t seed, uint32_t wg,
			  uint32_t steps, const uint64_t *src);
/* The CPU reference of one ACCUMULATE packet; @src is the CPU copy or NULL. */
void xs_ref_packet(const struct xsched_sim_packet *p,
		   const uint64_t *src, uint64_t *out);
/* Index of the first differing entry, or -1 when all @n are equal. */
long xs_first_mismatch(const uint64_t *got, const uint64_t *want,
		       size_t n);
/*
 * Compares @out with the CPU reference of packet @p (@src: the CPU copy of
 * its input, or NULL): the first wrong workgroup, -1 if all are right, or
 * -ENOMEM.
 */
long xs_packet_mismatch(const struct xsched_sim_packet *p,
			const uint64_t *src, const uint64_t *out);

/* ---------------------------------------- lib/wait.c: time and polling */

uint64_t xs_now_ns(void);
void xs_sleep_ns(uint64_t ns);
/* Polls QUERY until the queue is in @state; 0, -ETIMEDOUT or QUERY's -errno. */
int xs_wait_state(int qfd, int state, uint64_t timeout_ns);
/* Polls QUERY until no wave is left in the save area (restore finished). */
int xs_wait_no_saved_waves(int qfd, uint64_t timeout_ns);
/* Polls QUERY until at least @steps wave steps ran (the kernel started). */
int xs_wait_steps(int qfd, uint64_t steps, uint64_t timeout_ns);
/* poll() on one fd; returns revents (0 on timeout) or -errno. */
int xs_poll(int fd, short events, int timeout_ms);

/* ------------- lib/debugfs.c: knobs, live objects, the queue table */

/* 0 when the sim's debugfs directory is there, mounting debugfs if needed. */
int xs_debugfs_ready(void);
/* Writes @text to @path in one write; 0 or -errno. */
int xs_write_file(const char *path, const char *text);
/* The sim's debugfs knob @knob. */
int xs_knob_write(const char *knob, uint64_t value);
int xs_knob_read(const char *knob, uint64_t *value);

/* The module's live-object counters (debugfs xsched/objects: "name count"). */
#define XS_MAX_OBJECTS	16

struct xs_objects {
	int n;
	char name[XS_MAX_OBJECTS][32];
	long count[XS_MAX_OBJECTS];
};

/* Reads the counters; the number of them or -errno. */
int xs_objects_read(struct xs_objects *o);
/* The first counter that differs between @a and @b (by name), or -1. */
int xs_objects_diff(const struct xs_objects *a,
		    const struct xs_objects *b);

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
int xs_queue_table(struct xs_row *rows, int max);
/* Rows whose state is suspended or suspending, or -errno. */
int xs_table_count_stopped(void);
/* Copies the state of queue @uid into @state; 1 if found, 0 if not, -errno. */
int xs_table_state(uint32_t uid, char *state, size_t len);

/*
 * The bucket of the sim's ring table (BY_RING lookups) that ring address
 * @ring of the calling process falls in (debugfs sim/ring_bucket: the hash
 * mixes in the kernel's mm pointer, so only the module can say).
 */
int xs_ring_bucket(uint64_t ring, uint32_t *bucket);
/*
 * Fills @rings with @n ring addresses of the calling process in bucket
 * @bucket, the first ones from @base up in steps of 64; -ENOSPC if there
 * are not that many in 64 MiB.
 */
int xs_rings_in_bucket(uint64_t base, uint32_t bucket, uint64_t *rings,
		       unsigned int n);
/* The same for @base's own bucket: @rings[0] is @base. */
int xs_rings_sharing_a_bucket(uint64_t base, uint64_t *rings, unsigned int n);

/* A file's text (a module parameter), "" if unreadable; to restore it later. */
void xs_param_read(const char *path, char *buf, size_t len);

/* --------------------------- lib/uapi.c: what the uapi programs share */

/* User pointers that no ioctl may read or write; @guard is a PROT_NONE page. */
void xs_bad_pointers(void *guard, void *out[3]);
/* A sim queue of @ring packets, registered at priority 0: the queue fd or -errno. */
int xs_make_queue(int cfd, int sfd, uint32_t ring, uint32_t *id, uint32_t *uid);
/* A page the module can read from but not write to, holding @len bytes of @src. */
void *xs_read_only_copy(const void *src, size_t len);
/* Drops CAP_SYS_NICE from the effective set of this (test) process. */
int xs_drop_cap_sys_nice(void);

/* ------- lib/util.c: seeds, random numbers, percentiles, another user */

/* A seed from $XSCHED_SEED or the clock; printed so a failure can be re-run. */
uint64_t xs_seed(const char *who);
uint64_t xs_rand(uint64_t *state);
/* Uniform in [lo, hi]. */
uint64_t xs_rand_range(uint64_t *state, uint64_t lo, uint64_t hi);

/* Sorts @v and returns its @pct-th percentile (nearest rank). */
uint64_t xs_percentile(uint64_t *v, size_t n, unsigned int pct);

/* Another user: a child running @fn as @uid; it reports on a pipe. */
struct xs_other {
	pid_t pid;
	int rfd;	/* child -> parent: one int, the child's result */
	int wfd;	/* parent -> child: closed when the child may exit */
};

/* Runs in the child; may report on @up and read @down itself. */
typedef int (*xs_other_fn)(void *arg, int up, int down);

int xs_other_start(struct xs_other *o, uid_t uid, xs_other_fn fn, void *arg);
/* The child's result (its fn's return value), or -EPIPE if it died. */
int xs_other_result(struct xs_other *o);
void xs_other_stop(struct xs_other *o);

#endif /* XSCHED_UTIL_H */
