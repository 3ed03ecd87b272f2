/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM xsched

#if !defined(XSCHED_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define XSCHED_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(xsched_queue_suspend,
	TP_PROTO(u32 uid, u32 mode, u64 latency_ns, u64 saved_bytes, int err),
	TP_ARGS(uid, mode, latency_ns, saved_bytes, err),
	TP_STRUCT__entry(
		__field(u32, uid)
		__field(u32, mode)
		__field(u64, latency_ns)
		__field(u64, saved_bytes)
		__field(int, err)
	),
	TP_fast_assign(
		__entry->uid = uid;
		__entry->mode = mode;
		__entry->latency_ns = latency_ns;
		__entry->saved_bytes = saved_bytes;
		__entry->err = err;
	),
	TP_printk("queue=%u mode=%s latency_ns=%llu saved_bytes=%llu err=%d",
		  __entry->uid,
		  __print_symbolic(__entry->mode, { 1, "drain" }, { 2, "save" }),
		  __entry->latency_ns, __entry->saved_bytes, __entry->err)
);

TRACE_EVENT(xsched_queue_resume,
	TP_PROTO(u32 uid, u64 suspended_ns, int err),
	TP_ARGS(uid, suspended_ns, err),
	TP_STRUCT__entry(
		__field(u32, uid)
		__field(u64, suspended_ns)
		__field(int, err)
	),
	TP_fast_assign(
		__entry->uid = uid;
		__entry->suspended_ns = suspended_ns;
		__entry->err = err;
	),
	TP_printk("queue=%u suspended_ns=%llu err=%d",
		  __entry->uid, __entry->suspended_ns, __entry->err)
);

TRACE_EVENT(xsched_queue_fault,
	TP_PROTO(u32 uid, int err),
	TP_ARGS(uid, err),
	TP_STRUCT__entry(
		__field(u32, uid)
		__field(int, err)
	),
	TP_fast_assign(
		__entry->uid = uid;
		__entry->err = err;
	),
	TP_printk("queue=%u err=%d", __entry->uid, __entry->err)
);

TRACE_EVENT(xsched_arbiter_decision,
	TP_PROTO(u32 uid, s32 prio, bool suspend, u32 busy_uid, s32 busy_prio,
		 u64 stopped_ns, int err),
	TP_ARGS(uid, prio, suspend, busy_uid, busy_prio, stopped_ns, err),
	TP_STRUCT__entry(
		__field(u32, uid)
		__field(s32, prio)
		__field(bool, suspend)
		__field(u32, busy_uid)
		__field(s32, busy_prio)
		__field(u64, stopped_ns)
		__field(int, err)
	),
	TP_fast_assign(
		__entry->uid = uid;
		__entry->prio = prio;
		__entry->suspend = suspend;
		__entry->busy_uid = busy_uid;
		__entry->busy_prio = busy_prio;
		__entry->stopped_ns = stopped_ns;
		__entry->err = err;
	),
	TP_printk("queue=%u prio=%d %s busy_queue=%u busy_prio=%d stopped_ns=%llu err=%d",
		  __entry->uid, __entry->prio,
		  __entry->suspend ? "suspend" : "resume",
		  __entry->busy_uid, __entry->busy_prio, __entry->stopped_ns,
		  __entry->err)
);

#endif /* XSCHED_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
