/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM xsched

#if !defined(XSCHED_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define XSCHED_TRACE_H

#include <linux/sched.h>
#include <linux/tracepoint.h>

/*
 * A suspend ended (err 0: the queue is stopped).  Who asked: the arbiter
 * (because queue busy_uid of priority busy_prio had work), a caller
 * (process pid, through XSCHED_IOC_SUSPEND on its queue fd) or an admin
 * (process pid, through XSCHED_IOC_ADMIN).  The request was made
 * latency_ns before this event.
 */
TRACE_EVENT(xsched_queue_suspend,
	TP_PROTO(u32 uid, u32 mode, u64 latency_ns, u64 saved_bytes, int err,
		 bool arbiter, bool admin, s32 pid, u32 busy_uid, s32 busy_prio),
	TP_ARGS(uid, mode, latency_ns, saved_bytes, err, arbiter, admin, pid,
		busy_uid, busy_prio),
	TP_STRUCT__entry(
		__field(u32, uid)
		__field(u32, mode)
		__field(u64, latency_ns)
		__field(u64, saved_bytes)
		__field(int, err)
		__field(bool, arbiter)
		__field(bool, admin)
		__field(s32, pid)
		__field(u32, busy_uid)
		__field(s32, busy_prio)
	),
	TP_fast_assign(
		__entry->uid = uid;
		__entry->mode = mode;
		__entry->latency_ns = latency_ns;
		__entry->saved_bytes = saved_bytes;
		__entry->err = err;
		__entry->arbiter = arbiter;
		__entry->admin = admin;
		__entry->pid = pid;
		__entry->busy_uid = busy_uid;
		__entry->busy_prio = busy_prio;
	),
	TP_printk("queue=%u mode=%s latency_ns=%llu saved_bytes=%llu err=%d by=%s pid=%d busy_queue=%u busy_prio=%d",
		  __entry->uid,
		  __print_symbolic(__entry->mode, { 1, "drain" }, { 2, "save" }),
		  __entry->latency_ns, __entry->saved_bytes, __entry->err,
		  __entry->arbiter ? "arbiter" :
		  __entry->admin ? "admin" : "caller", __entry->pid,
		  __entry->busy_uid, __entry->busy_prio)
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

/* A queue was registered by process pid (comm, last: it may hold spaces). */
TRACE_EVENT(xsched_queue_register,
	TP_PROTO(u32 uid, u32 backend, s32 prio, bool arbitrated, s32 pid,
		 const char *comm),
	TP_ARGS(uid, backend, prio, arbitrated, pid, comm),
	TP_STRUCT__entry(
		__field(u32, uid)
		__field(u32, backend)
		__field(s32, prio)
		__field(bool, arbitrated)
		__field(s32, pid)
		__array(char, comm, TASK_COMM_LEN)
	),
	TP_fast_assign(
		__entry->uid = uid;
		__entry->backend = backend;
		__entry->prio = prio;
		__entry->arbitrated = arbitrated;
		__entry->pid = pid;
		strscpy(__entry->comm, comm, TASK_COMM_LEN);
	),
	TP_printk("queue=%u backend=%s prio=%d arbitrated=%d pid=%d comm=%s",
		  __entry->uid,
		  __print_symbolic(__entry->backend, { 0, "sim" }, { 1, "kfd" }),
		  __entry->prio, __entry->arbitrated, __entry->pid, __entry->comm)
);

TRACE_EVENT(xsched_queue_unregister,
	TP_PROTO(u32 uid),
	TP_ARGS(uid),
	TP_STRUCT__entry(
		__field(u32, uid)
	),
	TP_fast_assign(
		__entry->uid = uid;
	),
	TP_printk("queue=%u", __entry->uid)
);

/*
 * The backend saw work submitted or completed: rptr != wptr means the
 * queue has unfinished work.  For backends without progress events (kfd)
 * the arbiter emits it when its poll finds an arbitrated queue's busy state
 * changed; their other queues have none.
 */
TRACE_EVENT(xsched_queue_progress,
	TP_PROTO(u32 uid, u64 rptr, u64 wptr),
	TP_ARGS(uid, rptr, wptr),
	TP_STRUCT__entry(
		__field(u32, uid)
		__field(u64, rptr)
		__field(u64, wptr)
	),
	TP_fast_assign(
		__entry->uid = uid;
		__entry->rptr = rptr;
		__entry->wptr = wptr;
	),
	TP_printk("queue=%u rptr=%llu wptr=%llu", __entry->uid,
		  __entry->rptr, __entry->wptr)
);

#endif /* XSCHED_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
