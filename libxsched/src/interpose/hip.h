/* SPDX-License-Identifier: MIT */
/*
 * What the HIP table (hip.c) offers the rest of libxsched.
 *
 * Launch observation: hip.c calls xsi_hip_launch_observe_begin() just before
 * and xsi_hip_launch_observe_end() just after the caller's real call of
 * every scheduled entry point (launches, copies, memsets, event records,
 * graph launches, host functions), on the caller's thread.  @s is the
 * call's stream, NULL when it is not scheduled (a stream the runtime could
 * not describe, a stream being captured); @ok: the runtime returned
 * success.  The definitions in hip.c are weak no-ops: queue discovery (Lv3
 * on ROCm, hsaq.c) defines the strong ones to see which HSA queue's write
 * index a stream's launches move.
 */
#ifndef XSCHED_INTERPOSE_HIP_H
#define XSCHED_INTERPOSE_HIP_H

#include <stdbool.h>

struct xsi_stream;

void xsi_hip_launch_observe_begin(struct xsi_stream *s);
void xsi_hip_launch_observe_end(struct xsi_stream *s, bool ok);

#endif /* XSCHED_INTERPOSE_HIP_H */
