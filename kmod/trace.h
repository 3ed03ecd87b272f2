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

#endif /* XSCHED_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
