/* SPDX-License-Identifier: MIT */
/*
 * The interposition core: everything an interposer over a GPU runtime (HIP,
 * CUDA) needs that does not depend on the runtime.  A runtime adds one table
 * file (hip/hooks.c, cuda/hooks.c) that fills a struct xsi_runtime: its entry points and
 * how each is classified, and a few ops (which device is current, what a
 * stream's priority is, how to record and wait a completion mark).
 *
 * Streams.  Every runtime stream handle maps to one struct xsi_stream, which
 * owns one XQueue (a call queue: xsched_xqueue_create_calls()).  The lookup
 * on every call is lock-free; a miss creates the stream lazily (streams made
 * before the library loaded, or by a path the table does not hook), asking
 * the runtime's describe() for its priority and device.  Default streams:
 * rt->default_kind() says whether a handle is the null stream, the legacy
 * default stream or the per-thread default stream.  The null handle means the
 * per-thread stream when the call came through a per-thread entry
 * (XSI_ENTRY_PER_THREAD: CUDA _ptsz/_ptds, HIP _spt) and the legacy stream
 * otherwise; the legacy stream is one per device, the per-thread stream one
 * per (thread, device).  A destroyed handle may be reused by the runtime for
 * a new stream: xsi_stream_created() replaces whatever the table had.
 *
 * Classification.  Each entry point is one of
 *   XSI_SCHEDULED  the call becomes a call command on its stream's XQueue
 *                  (xsi_call()): it may be buffered (Lv1) or held by the
 *                  policy; a launch, an async copy or memset, an event
 *                  record, a host callback, a graph launch.
 *   XSI_ORDERED    ordered pass-through: the call goes to the runtime on the
 *                  caller's thread, but only after everything buffered on its
 *                  stream (entry->scope: or on every stream of the device, or
 *                  of the process) has been handed to the runtime
 *                  (xsi_drain(): the drain-first rule), so it keeps stream
 *                  order; synchronizations, synchronous copies, stream
 *                  queries, anything scheduled we cannot copy the arguments of.
 *   XSI_HARMLESS   harmless pass-through: straight to the runtime (device
 *                  properties, memory allocation, error strings).
 *
 * Symbols.  Runtimes and frameworks find entry points by dlsym() on their own
 * handle and through the runtime's own lookup (cuGetProcAddress,
 * hipGetProcAddress); both must return the hook, not the real function.  The
 * preload library overrides dlsym() and calls xsi_dlsym() (the real dlsym is
 * taken with dlvsym(RTLD_NEXT, "dlsym", ...)); a runtime's GetProcAddress
 * hook calls xsi_redirect() on what the real lookup returned.
 *
 * Fork.  pthread_atfork() handlers (installed once by xsi_runtime_init())
 * keep the core's and the library's locks consistent across fork(); in the
 * child every stream table starts empty and every XQueue inherited from the
 * parent refuses all operations with -ECHILD (the child cannot suspend or
 * resume its parent's queues, and has none of its threads).  The child's
 * first call on a stream creates a new stream lazily, as for an unknown
 * handle.
 *
 * Log.  XSCHED_LOG=debug prints one line per decision of the core:
 *   xsched[<time>] debug: <rt>: <entry> stream <handle> -> q<id>: <what>
 * where <what> is "launched seq N", "buffered seq N", "drained to seq N",
 * "created (lazy|hooked), prio P, dev D", "destroyed", "pass-through",
 * "redirected" or "waits on q<id> seq N".  xsi_log() writes such a line.
 *
 * Thread safety: every function here is thread safe.  A stream handle used
 * by one thread while another destroys it is the application's bug (as it is
 * for the runtime); the core does not detect it.
 */
#ifndef XSCHED_INTERPOSE_H
#define XSCHED_INTERPOSE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xsched.h"

enum xsi_class {
	XSI_SCHEDULED = 1,
	XSI_ORDERED = 2,
	XSI_HARMLESS = 3,
};

/* What an XSI_ORDERED call drains first. */
enum xsi_scope {
	XSI_SCOPE_STREAM = 0,	/* its own stream */
	XSI_SCOPE_DEVICE = 1,	/* every stream of the current device */
	XSI_SCOPE_PROCESS = 2,	/* every stream */
};

/* What a handle is, as far as default streams go (rt->default_kind()). */
enum xsi_default {
	XSI_NOT_DEFAULT = 0,	/* a stream the application created */
	XSI_DEFAULT_NULL = 1,	/* 0: legacy, or per-thread from a per-thread entry */
	XSI_DEFAULT_LEGACY = 2,	/* CU_STREAM_LEGACY */
	XSI_DEFAULT_PER_THREAD = 3,	/* CU_STREAM_PER_THREAD, hipStreamPerThread */
};

/* struct xsi_entry.flags, and the flags of xsi_stream_get(). */
#define XSI_ENTRY_PER_THREAD	(1U << 0)	/* per-thread default stream variant */
/* A wait on a memory value (stream wait-value, batch memory ops): its
 * writer is invisible to the library, so a stream it holds is let through
 * after a short bound (XSI_MEMWAIT_HOLD_NS), not the hold limit. */
#define XSI_ENTRY_MEMWAIT	(1U << 1)
/* A scheduled call that returns only once its stream's earlier work
 * completed (a synchronous copy on a stream): it ends a burst, as a
 * synchronize does (the hold chosen per burst). */
#define XSI_ENTRY_SYNCS	(1U << 2)

/* One entry point of the runtime. */
struct xsi_entry {
	const char *name;	/* the exported symbol, e.g. "cuLaunchKernel_ptsz" */
	const char *version;	/* its symbol version node ("hip_4.2"), or NULL */
	enum xsi_class cls;
	enum xsi_scope scope;	/* XSI_ORDERED only */
	uint32_t flags;		/* XSI_ENTRY_* */
	void *hook;		/* ours, with the runtime's signature */
	void **real;		/* where the runtime's function is stored */
	/* For the runtime's own lookup (xsi_proc_redirect()): the name it is
	 * asked for ("cuLaunchKernel" for cuLaunchKernel_ptsz; NULL: @name)
	 * and the first ABI version of that name with this signature. */
	const char *base;
	int since;
};

/* What the core knows of a stream. */
struct xsi_stream_desc {
	int32_t priority;	/* xsched priority (higher is more urgent) */
	int32_t device;		/* runtime device ordinal */
	uintptr_t context;	/* runtime context (CUcontext), or 0 */
	uint32_t flags;		/* runtime stream flags, for the table's use */
	bool cap_off;		/* caller-held: it caps no lower stream until
				 * xsi_stream_caps() says so */
	/* Caller-held: each of its bursts holds the lower streams or runs
	 * as without the library, as measured to pay (bursts.c); it caps
	 * only around the bursts that hold. */
	bool chooses;
};

struct xsi_stream;
struct xsi_state;		/* core-private, per runtime */

/*
 * A runtime, filled by its table file.  Every op returns 0 or a negative
 * errno unless said otherwise; ops run on any thread.
 */
struct xsi_runtime {
	const char *name;		/* "hip", "cuda": the log's prefix */
	const char *const *libs;	/* sonames to take real functions from,
					 * NULL-terminated; NULL: RTLD_NEXT only */
	struct xsi_entry *entries;
	size_t nentries;

	enum xsi_default (*default_kind)(uintptr_t handle);
	/* The caller's current device (for default streams). */
	int (*current_device)(void);
	/* Optional: how many devices the process has (> 0), or < 0 when the
	 * runtime cannot say yet; with one, default streams are on device 0
	 * and current_device() is not asked on every call. */
	int (*device_count)(void);
	/* A stream the core has not seen created: its priority, device and
	 * context.  For default streams @handle is the default handle and
	 * d->device is already set. */
	int (*describe)(uintptr_t handle, struct xsi_stream_desc *d);
	/* Make the calling (launching) thread use @d's device and context; the
	 * core calls it once per thread and stream before the first call
	 * command it runs there for someone else. */
	int (*enter)(const struct xsi_stream_desc *d);
	/* Completion marks: record a mark after everything handed to the
	 * runtime on @handle so far; wait for it (timeout_ns < 0: no limit;
	 * 0: poll) giving 0, -ETIMEDOUT or -EIO; free it. */
	int (*mark_record)(uintptr_t handle, const struct xsi_stream_desc *d,
			   void **mark);
	int (*mark_wait)(void *mark, int64_t timeout_ns);
	void (*mark_free)(void *mark);
	/* Optional: is @handle (per_thread_handle for the caller's per-thread
	 * stream) being captured into a graph?  1, 0 or -errno.  Asked only
	 * while some stream of the process is, so that a stream that joined a
	 * capture through an event wait is seen too. */
	int (*is_capturing)(uintptr_t handle);

	/* XSI_RT_CALLER_HELD: the runtime's calls cannot be copied (or must
	 * run on the caller's thread): the caller waits for its stream's
	 * release and makes the call itself (xsi_hold_begin()); nothing is
	 * buffered, per-thread default streams are streams of their own. */
	uint32_t flags;
	uintptr_t per_thread_handle;	/* names the caller's per-thread stream */
	uint64_t hold_max_ns;		/* caller-held: longest wait (0: 10 s) */

	struct xsi_state *state;	/* the core's; NULL until xsi_runtime_init() */
};

#define XSI_RT_CALLER_HELD	(1U << 0)

/* ---- set-up ------------------------------------------------------------- */

/*
 * Resolve every entry's real function (from rt->libs, by version where
 * given, else RTLD_NEXT), register @rt for xsi_dlsym(), install the fork
 * handlers.  Idempotent and thread safe.  An entry whose real function is
 * missing keeps *real NULL (its hook must answer "not supported").
 */
int xsi_runtime_init(struct xsi_runtime *rt);
/* Add @flag to every entry of @rt whose name starts with one of @prefixes
 * (NULL-terminated): how a table marks a family of entry points
 * (XSI_ENTRY_MEMWAIT).  Before xsi_runtime_init(). */
void xsi_entries_flag(struct xsi_runtime *rt, const char *const *prefixes, uint32_t flag);
/* Destroy every stream's XQueue (draining it) and unregister @rt. */
void xsi_runtime_fini(struct xsi_runtime *rt);

/* ---- the stream table --------------------------------------------------- */

/*
 * The stream for @handle as seen by a call through an entry with @flags
 * (XSI_ENTRY_PER_THREAD).  Lock-free when known; created lazily otherwise.
 * NULL when the stream cannot be scheduled (the runtime could not describe
 * it, or creating its XQueue failed: logged once): pass the call through.
 */
struct xsi_stream *xsi_stream_get(struct xsi_runtime *rt, uintptr_t handle,
				  uint32_t flags);
/* The create hook, after the real create succeeded: a new stream for
 * @handle (replacing any stale one of a reused handle).  It counts in its
 * device's gate from now on (lower streams are capped); its XQueue is made
 * at its first call (xsi_stream_get()), so a stream never used costs the
 * policy nothing. */
struct xsi_stream *xsi_stream_created(struct xsi_runtime *rt, uintptr_t handle,
				      const struct xsi_stream_desc *d);
/* The same, but a stream already in the table (its handle seen since the
 * create) is kept; @d: the stream as the create hook described it (NULL:
 * describe() is asked).  NULL: a default stream, or not described. */
struct xsi_stream *xsi_stream_announce(struct xsi_runtime *rt, uintptr_t handle,
				       const struct xsi_stream_desc *d);
/* The destroy hook, before the real destroy: forget @handle.  Caller-held
 * runtimes return at once, as the runtime does: a last mark is recorded on
 * the stream, and its XQueue keeps holding lower streams until that mark
 * completes, then it is freed.  Otherwise: drain what is buffered, wait for
 * its completion, destroy the XQueue.  0 or -ENOENT. */
int xsi_stream_destroyed(struct xsi_runtime *rt, uintptr_t handle);
struct xsched_xqueue *xsi_stream_xqueue(const struct xsi_stream *s);
uintptr_t xsi_stream_handle(const struct xsi_stream *s);
const struct xsi_stream_desc *xsi_stream_desc(const struct xsi_stream *s);
/* Set @s's xsched priority (the C API's xsched_stream_set_priority()):
 * its XQueue's and what the caller-held gate compares.  0 or -errno. */
int xsi_stream_set_priority(struct xsi_runtime *rt, struct xsi_stream *s,
			    int32_t priority);
/* Caller-held: whether the known stream @handle caps the streams below it
 * on its device (each keeps at most the threshold of its calls in flight,
 * xs_policy_capped()).  A stream caps from its creation unless its
 * description said cap_off; a runtime whose stream holds only now and
 * then (CUDA's choice of Lv1 per burst) arms the cap only around those
 * bursts, for a capped stream pays in throughput for what it buys.  Told
 * in the debug log.  0, or -ENOENT: not known (nothing changed). */
int xsi_stream_caps(struct xsi_runtime *rt, uintptr_t handle, bool on);
/*
 * A call that may move a stream's priority in the runtime (a stream
 * attribute set or copied): begin reads it (describe()) before the call,
 * end after a successful one.  When it moved, the stream's XQueue and the
 * caller-held gate follow; when it did not, a priority set through
 * xsched_stream_set_priority() stays.  Default streams are not watched.
 */
struct xsi_prio_watch {
	struct xsi_runtime *rt;
	uintptr_t handle;
	int32_t before;
	bool armed;
};
void xsi_prio_watch_begin(struct xsi_runtime *rt, uintptr_t handle,
			  struct xsi_prio_watch *w);
void xsi_prio_watch_end(struct xsi_prio_watch *w, bool ok);
/* Streams in the table (tests, the log). */
unsigned int xsi_stream_count(struct xsi_runtime *rt);

/* ---- dispatch ------------------------------------------------------------ */

/*
 * XSI_SCHEDULED: hand @c (its argument owned by the call; c->release frees
 * it once it ran or was dropped) to @s's XQueue.  Returns 0 or a negative
 * errno (then c->release has run and the caller passes the call through
 * itself); *status is the runtime's result when the call ran before this
 * returned, 0 when it was buffered (a later failure shows in the XQueue's
 * last_error and at the next synchronization).  *seq (may be NULL) is its
 * sequence number on the XQueue.
 */
int xsi_call(struct xsi_stream *s, const struct xsched_call *c, int *status,
	     uint64_t *seq);
/*
 * The drain-first rule, for XSI_ORDERED: hand everything buffered on @s
 * (XSI_SCOPE_STREAM), on every stream of @s's device or the current device
 * (XSI_SCOPE_DEVICE), or on every stream (XSI_SCOPE_PROCESS) to the runtime,
 * and return once it was handed over (not completed: the runtime keeps order
 * from there).  @s may be NULL for the wider scopes.
 */
int xsi_drain(struct xsi_runtime *rt, struct xsi_stream *s, enum xsi_scope scope);
/*
 * Classification in one call, for a hook: XSI_ORDERED drains by
 * e->scope, XSI_HARMLESS does nothing; logs the pass-through.  Returns 0 or
 * the drain's error (the hook calls the real function either way).
 */
int xsi_pass(struct xsi_runtime *rt, const struct xsi_entry *e, uintptr_t handle);

/* ---- caller-held dispatch (XSI_RT_CALLER_HELD) -------------------------- */

/*
 * The hold chosen per burst (a stream described with `chooses`): a burst is
 * the stream's calls from the first after a synchronize of it to the next
 * one that succeeds (xsi_sync_end(); an event recorded on it during the
 * burst synchronized, xsi_event_sync_begin(); an XSI_ENTRY_SYNCS call).
 * Each burst runs one of two modes, chosen by the tail of the latencies
 * measured in each (mode.c): lv1, its calls counted as any stream's (lower
 * streams held while they run, and capped), or native, its calls made as
 * without the library (waiting out a higher stream's hold as any call
 * does) but counted nowhere, so that they hold nothing (one that a higher
 * stream caps is counted).  The debug log names each burst's mode at its
 * first call and each change of the choice.
 */
/*
 * Around the caller's own real call through @e on @handle.  Begin waits
 * while the policy holds the stream (learning when its blocker completes by
 * a mark on the blocker) and, while a stream of higher priority exists on
 * its device (from its creation), while `threshold` of its calls are in
 * flight (refilled a batch at a time: every `batch`-th capped call leaves a
 * mark behind it, and a wait for room waits for the oldest mark that makes
 * room); at most rt->hold_max_ns (then the call goes, with a warning), and
 * at most XSI_MEMWAIT_HOLD_NS while the blocker waits on a memory value.
 * No lock is held from begin to end: the runtime call may block, re-enter
 * or run beside other threads' calls, and nobody waits for it.  A hook
 * entered from inside another hook's runtime call on the same thread (a
 * runtime calling its own exported functions) goes straight through,
 * neither held nor counted: it is part of that call.  A stream being
 * captured into a graph, or that joined a capture, is neither held nor
 * counted (captured calls do not run).  h->s is NULL when the call is not
 * scheduled.  Every begin has its end.  Logs "held"/"released".
 */
struct xsi_hold {
	struct xsi_stream *s;
	uint64_t before;	/* counted on its stream when the call began:
				 * what the call follows in stream order */
	uint64_t since;		/* XSI_ENTRY_SYNCS on a stream that chooses: its
				 * start, for the burst's end (0: none) */
	unsigned int flags;	/* XS_NOW_* for the end */
	bool in_call;		/* begun: counted at end */
	bool unseen;		/* a native burst's call (bursts.c): not counted */
	bool entered;		/* xsi_hold_begin() ran: end leaves */
};
void xsi_hold_begin(struct xsi_runtime *rt, const struct xsi_entry *e,
		    uintptr_t handle, struct xsi_hold *h);
void xsi_hold_end(struct xsi_hold *h, bool ok);
/* Around a real call made outside xsi_hold_begin()/end(), so that the hooks
 * the runtime enters from inside it go straight through. */
void xsi_enter(void);
void xsi_leave(void);
/* Capture into a graph began (@on) or ended on @s. */
void xsi_stream_capture(struct xsi_stream *s, bool on);
/*
 * A synchronization (stream: @s; XSI_SCOPE_DEVICE: every stream of @s's or
 * the current device) is about to be made: what was launched so far.
 * xsi_sync_end(): it succeeded (@ok), so all of that completed; frees it.
 * Learning completion this way costs no mark.
 */
struct xsi_sync;
struct xsi_sync *xsi_sync_begin(struct xsi_runtime *rt, struct xsi_stream *s,
				enum xsi_scope scope);
void xsi_sync_end(struct xsi_sync *y, bool ok);
/* The same for a synchronize of @event: what its record followed completed,
 * and the burst of the stream it was recorded on ended, unless the record
 * is older than that burst (an old event polled).  NULL: not known. */
struct xsi_sync *xsi_event_sync_begin(struct xsi_runtime *rt, uintptr_t event);
/* A context (@context != 0) or every context of @device (>= 0) is torn down:
 * its streams are forgotten (their XQueues destroyed). */
void xsi_context_gone(struct xsi_runtime *rt, uintptr_t context, int32_t device);

/* ---- events and dependencies -------------------------------------------- */

/* An event was recorded on @s as its command @seq (the event record's own
 * sequence number from xsi_call()). */
void xsi_event_recorded(struct xsi_runtime *rt, uintptr_t event,
			struct xsi_stream *s, uint64_t seq);
/* Caller-held: @event was recorded by the call @h just ended (successfully):
 * it stands for what was counted on the stream by then (for waits), and
 * its completion says that what the record followed completed (for
 * synchronizes). */
void xsi_event_recorded_held(struct xsi_runtime *rt, uintptr_t event,
			     const struct xsi_hold *h);
/* The event was destroyed (or recorded again elsewhere). */
void xsi_event_forget(struct xsi_runtime *rt, uintptr_t event);
/*
 * @waiter will wait for @event (stream-wait-event, event synchronize with
 * @waiter NULL): tell the policy that @waiter depends on the event's stream
 * up to its sequence, so a held source is released until it gets there
 * (xsched_depend()).  0, or -ENOENT for an event the core never saw.
 */
int xsi_event_wait(struct xsi_runtime *rt, struct xsi_stream *waiter,
		   uintptr_t event);

/* ---- symbol redirection ------------------------------------------------- */

/* dlsym() overrides run before anything is set up (a sanitizer runtime calls
 * dlsym while it initialises itself): such paths must not be instrumented. */
#define XSI_EARLY __attribute__((no_sanitize("address", "undefined", "thread")))

/* glibc's dlsym and dlvsym, never an override of them (ours included:
 * found in libc.so.6's own symbol table, not through the dynamic linker). */
void *xsi_real_dlsym(void *handle, const char *name);
void *xsi_real_dlvsym(void *handle, const char *name, const char *version);
/* The functions themselves (NULL: not found). */
void *xsi_libc_dlsym(void);
void *xsi_libc_dlvsym(void);

/*
 * The exported dlsym and dlvsym of an interposer, over its overrides @dl
 * and @dlv (hidden, with their signatures).  dlsym(RTLD_NEXT, name) is
 * relative to its caller, which glibc reads from its own return address:
 * an override that called glibc's made every caller look like this library,
 * so a library loaded after it that asked for the next definition of a
 * function it defines itself got its own back (ThreadSanitizer's runtime
 * recursed for ever).  On x86-64 the exported functions jump to glibc's
 * for RTLD_NEXT, the caller's return address left in place, and to the
 * overrides for every other handle; elsewhere the overrides are exported
 * as they are (RTLD_NEXT then finds the next definition after this
 * library).
 */
#if defined(__x86_64__)
/* One exported function @sym: handle (%rdi) RTLD_NEXT jumps to what
 * @lookup() returns (the arguments saved around the call, the stack kept
 * 16-byte aligned), any other to @impl. */
#define XSI_TRAMPOLINE(sym, impl, lookup)				\
	".globl " #sym "\n"						\
	".type " #sym ", @function\n"					\
	".p2align 4\n"							\
	#sym ":\n"							\
	".cfi_startproc\n"						\
	"	endbr64\n"						\
	"	cmpq $-1, %rdi\n"					\
	"	jne " #impl "\n"					\
	"	pushq %rdi\n"						\
	".cfi_adjust_cfa_offset 8\n"					\
	"	pushq %rsi\n"						\
	".cfi_adjust_cfa_offset 8\n"					\
	"	pushq %rdx\n"						\
	".cfi_adjust_cfa_offset 8\n"					\
	"	call " #lookup "\n"					\
	"	popq %rdx\n"						\
	".cfi_adjust_cfa_offset -8\n"					\
	"	popq %rsi\n"						\
	".cfi_adjust_cfa_offset -8\n"					\
	"	popq %rdi\n"						\
	".cfi_adjust_cfa_offset -8\n"					\
	"	testq %rax, %rax\n"					\
	"	jz 1f\n"						\
	"	jmp *%rax\n"						\
	"1:	ret\n"							\
	".cfi_endproc\n"						\
	".size " #sym ", .-" #sym "\n"
#define XSI_DLSYM_EXPORT(dl, dlv)					\
	__asm__(".text\n"						\
		XSI_TRAMPOLINE(dlsym, dl, xsi_libc_dlsym)		\
		XSI_TRAMPOLINE(dlvsym, dlv, xsi_libc_dlvsym))
#else
#define XSI_DLSYM_EXPORT(dl, dlv)					\
	__attribute__((visibility("default"), alias(#dl)))		\
	void *dlsym(void *handle, const char *name);			\
	__attribute__((visibility("default"), alias(#dlv)))		\
	void *dlvsym(void *handle, const char *name, const char *version)
#endif

/* The sonames a HIP runtime has gone by (ROCm 5, 6, 7). */
#define XSI_HIP_SONAMES { "libamdhip64.so.5", "libamdhip64.so.6", "libamdhip64.so.7" }

/* A handle on the first of @names already in the process (RTLD_NOLOAD:
 * nothing is loaded), its name in *@which; NULL if none is.  dlclose() it. */
void *xsi_dlopen_loaded(const char *const *names, size_t n, const char **which);

const struct xsi_entry *xsi_entry_find(const struct xsi_runtime *rt,
				       const char *name);
/* What the runtime's lookup returned for @name -> the hook if @name is an
 * entry of @rt (storing @real as its real function if none is known yet),
 * else @real. */
void *xsi_redirect(struct xsi_runtime *rt, const char *name, void *real);
/* dlsym(@handle, @name) gave @real: the hook of any registered runtime's
 * entry of that name, else @real. */
void *xsi_dlsym(void *handle, const char *name, void *real);
/*
 * The runtime's lookup (cuGetProcAddress) gave @real for @name asked at ABI
 * version @ver, per-thread variant or not: the hook of the entry whose real
 * function is @real; else, when @real is no exported symbol (the runtime
 * hands out internal addresses), the entry of base @name, that variant and
 * the highest `since` <= @ver, unless the runtime's library exports a later
 * ABI of @name (<name>_v<N>) that no entry hooks (its signature may differ:
 * then @real, with a warning); @real for a name no entry has.
 */
void *xsi_proc_redirect(struct xsi_runtime *rt, const char *name, void *real,
			int ver, bool per_thread);

/* ---- log ---------------------------------------------------------------- */

bool xsi_log_on(void);	/* XSCHED_LOG=debug: cheap test before formatting */
void xsi_log(const struct xsi_runtime *rt, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* XSCHED_INTERPOSE_H */
