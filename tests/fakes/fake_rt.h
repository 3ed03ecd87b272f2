/* SPDX-License-Identifier: MIT */
/*
 * A fake GPU runtime for the interposition core's unit tests: streams are
 * pointers to struct fake_stream, handle 0 is the null stream, 1 the legacy
 * and 2 the per-thread default stream (as in CUDA).  fakeLaunch(stream, tag)
 * is "scheduled", fakeStreamSynchronize ordered (stream), fakeDeviceSynchronize
 * ordered (device), fakeGetName harmless, fakeLaunch_ptsz the per-thread
 * variant of fakeLaunch.  Every launch that reaches the "runtime" is logged
 * with its stream, tag and the device of the thread that made it.
 * Completion: manual (fake_complete()) or, with fake_auto, at launch.
 * fake_caller_held() makes the runtime caller-held (XSI_RT_CALLER_HELD):
 * its hooks then use xsi_hold_begin/end instead of call commands.
 */
#ifndef XSCHED_FAKE_RT_H
#define XSCHED_FAKE_RT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../libxsched/src/interpose/interpose.h"

struct fake_stream {
	int32_t priority;
	int32_t device;
	uint64_t launched, done;	/* under fake_lock */
};

struct fake_launch {
	uintptr_t stream;	/* the handle it was launched on */
	uint32_t tag;
	int32_t device;		/* the launching thread's device */
};

#define FAKE_LOG_MAX 65536
extern struct fake_launch fake_log[FAKE_LOG_MAX];
extern unsigned int fake_nlog;
extern pthread_mutex_t fake_lock;
extern bool fake_auto;
extern struct xsi_runtime fake_rt;
extern unsigned int fake_marks;	/* marks recorded (under fake_lock) */
extern _Thread_local int fake_device;	/* the calling thread's device */

struct fake_stream *fake_stream_new(int32_t priority, int32_t device);
/* The application's calls (through the hooks, as if preloaded). */
int fakeLaunch(uintptr_t stream, uint32_t tag);
int fakeLaunch_ptsz(uintptr_t stream, uint32_t tag);
int fakeStreamSynchronize(uintptr_t stream);
int fakeDeviceSynchronize(void);
const char *fakeGetName(void);
/* A launch with this tag blocks inside the "runtime" (fake_blocked true)
 * until fake_release_block(), as a copy to pageable memory does. */
#define FAKE_TAG_BLOCK 0xb10cU
extern bool fake_blocked, fake_unblock;	/* under fake_lock */
void fake_release_block(void);
/* The GPU: complete up to @n launched calls of @s (0: the default ones). */
void fake_complete(struct fake_stream *s, uint64_t n);
struct fake_stream *fake_default(int32_t device);
uint64_t fake_launched(struct fake_stream *s);
void fake_init(void);	/* xsi_runtime_init(&fake_rt) */
void fake_caller_held(uint64_t hold_max_ns);	/* before fake_init() */

#endif
