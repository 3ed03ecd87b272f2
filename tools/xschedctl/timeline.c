// SPDX-License-Identifier: GPL-2.0
/*
 * xschedctl timeline -o FILE [-t SECONDS | -- COMMAND [ARG...]]
 *
 * Records the module's tracepoints in a tracefs instance of its own (the
 * global trace buffer is left alone) for SECONDS or while COMMAND runs, and
 * writes them as Chrome trace-event JSON (Perfetto and chrome://tracing open
 * it): one process per queue owner, one thread track per queue, and on each
 * track slices that do not overlap:
 *
 *   running     the queue had unfinished work and was not stopped
 *               (from xsched_queue_progress: sim queues only)
 *   suspending  from the suspend request to the queue stopped
 *   suspended   from stopped to resumed
 *
 * Suspending and suspended slices carry who asked (the arbiter, and which
 * queue of which priority was busy; or a caller's pid), the mode, the
 * suspend latency and the bytes saved.  A failed suspend or resume and a
 * queue fault are instant events.
 *
 * libxsched writes its own decisions to the trace marker when XSCHED_LOG
 * has "trace" (libxsched/src/config.c); COMMAND is told to write them into
 * this recording's instance (XSCHED_TRACE_MARKER).  Each XQueue that decided
 * something gets a track of its own in its process:
 *
 *   held        the policy suspended the XQueue until it resumed it
 *   call held   the interposer held a runtime call until the policy let it go
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xschedctl.h"

enum show { SHOW_NONE, SHOW_RUNNING, SHOW_SUSPENDED };

struct tl_queue {
	uint32_t uid;
	int pid;
	char comm[64];
	char backend[8];
	int prio;
	bool arbitrated, known, gone;
	bool busy, stopped;
	enum show show;		/* the slice now open */
	double since;		/* its start, us */
	/* The suspend that stopped it, for the suspended slice's args. */
	char why[192];
};

static struct tl_queue *tq;
static int ntq, captq;

/* An XQueue of libxsched, from its trace marker lines. */
struct tl_xq {
	int pid;
	uint32_t q;		/* the library's XQueue id (q%u in its log) */
	int prio;
	unsigned int level;
	bool held, call_held, calls;
	double since, call_since;
	char why[256], call[192];
};

/* Track ids of XQueues: apart from the module's queue uids. */
#define TL_XQ_TID	0x40000000u
#define TL_CALL_TID	0x60000000u

static struct tl_xq *txq;
static int ntxq, captxq;

/* Processes seen through their marker lines: the writing thread's command. */
struct tl_proc {
	int pid;
	char comm[64];
};
static struct tl_proc *tproc;
static int ntproc, captproc;

static void *tl_grow(void *v, int *cap, size_t size)
{
	void *n;

	*cap = *cap ? 2 * *cap : 16;
	n = realloc(v, *cap * size);
	if (!n) {
		fprintf(stderr, "xschedctl: out of memory\n");
		exit(XC_ERROR);
	}
	return n;
}
static FILE *out;
static unsigned long nslices;
static volatile sig_atomic_t tl_stop;

static void tl_signal(int sig)
{
	(void)sig;
	tl_stop = 1;
}

static struct tl_queue *tl_find(uint32_t uid, bool create)
{
	int i;

	for (i = ntq - 1; i >= 0; i--)
		if (tq[i].uid == uid)
			return &tq[i];
	if (!create)
		return NULL;
	if (ntq == captq)
		tq = tl_grow(tq, &captq, sizeof(*tq));
	memset(&tq[ntq], 0, sizeof(tq[ntq]));
	tq[ntq].uid = uid;
	tq[ntq].pid = 0;
	snprintf(tq[ntq].comm, sizeof(tq[ntq].comm), "unknown");
	snprintf(tq[ntq].backend, sizeof(tq[ntq].backend), "?");
	return &tq[ntq++];
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* @args: the inside of a JSON object, or "". */
static void slice_on(int pid, uint32_t tid, const char *name, double ts,
		     double dur, const char *args)
{
	fprintf(out, "%s\n{\"ph\": \"X\", \"cat\": \"xsched\", \"name\": \"%s\", "
		"\"pid\": %d, \"tid\": %u, \"ts\": %.3f, \"dur\": %.3f, \"args\": {%s}}",
		nslices++ ? "," : "", name, pid, tid, ts, dur < 0 ? 0 : dur, args);
}

static void instant_on(int pid, uint32_t tid, const char *name, double ts,
		       const char *args)
{
	fprintf(out, "%s\n{\"ph\": \"i\", \"s\": \"t\", \"cat\": \"xsched\", "
		"\"name\": \"%s\", \"pid\": %d, \"tid\": %u, \"ts\": %.3f, \"args\": {%s}}",
		nslices++ ? "," : "", name, pid, tid, ts, args);
}

static void slice(const struct tl_queue *q, const char *name, double ts,
		  double dur, const char *args)
{
	slice_on(q->pid, q->uid, name, ts, dur, args);
}

static void instant(const struct tl_queue *q, const char *name, double ts,
		    const char *args)
{
	instant_on(q->pid, q->uid, name, ts, args);
}

/* Close the open slice at @ts and open what the queue's state now shows. */
static void tl_update(struct tl_queue *q, double ts)
{
	enum show want = q->gone ? SHOW_NONE : q->stopped ? SHOW_SUSPENDED :
			 q->busy ? SHOW_RUNNING : SHOW_NONE;

	if (want == q->show)
		return;
	if (q->show == SHOW_RUNNING)
		slice(q, "running", q->since, ts - q->since, "");
	else if (q->show == SHOW_SUSPENDED)
		slice(q, "suspended", q->since, ts - q->since, q->why);
	q->show = want;
	q->since = ts;
}

/* The number after " KEY=" (or at the start) in @args; @def if absent. */
static long long field(const char *args, const char *key, long long def)
{
	size_t n = strlen(key);
	const char *p = args;

	while ((p = strstr(p, key))) {
		if ((p == args || p[-1] == ' ') && p[n] == '=')
			return strtoll(p + n + 1, NULL, 0);
		p += n;
	}
	return def;
}

static void word(const char *args, const char *key, char *dst, size_t size)
{
	size_t n = strlen(key);
	const char *p = args;

	snprintf(dst, size, "?");
	while ((p = strstr(p, key))) {
		if ((p == args || p[-1] == ' ') && p[n] == '=') {
			p += n + 1;
			snprintf(dst, size, "%.*s", (int)strcspn(p, " \n"), p);
			return;
		}
		p += n;
	}
}

static void on_suspend(struct tl_queue *q, double ts, const char *a)
{
	double lat = field(a, "latency_ns", 0) / 1e3, from;
	char mode[16], by[16], args[192];
	int err = (int)field(a, "err", 0);

	word(a, "mode", mode, sizeof(mode));
	word(a, "by", by, sizeof(by));
	if (!strcmp(by, "arbiter"))
		snprintf(args, sizeof(args),
			 "\"by\": \"arbiter\", \"busy_queue\": %lld, \"busy_prio\": %lld, "
			 "\"mode\": \"%s\", \"latency_us\": %.3f, \"saved_bytes\": %lld",
			 field(a, "busy_queue", 0), field(a, "busy_prio", 0), mode, lat,
			 field(a, "saved_bytes", 0));
	else	/* the queue's owner (caller) or an administrator (admin) */
		snprintf(args, sizeof(args),
			 "\"by\": \"%s\", \"caller_pid\": %lld, \"mode\": \"%s\", "
			 "\"latency_us\": %.3f, \"saved_bytes\": %lld",
			 strcmp(by, "admin") ? "caller" : "admin", field(a, "pid", 0),
			 mode, lat, field(a, "saved_bytes", 0));
	if (err) {
		char e[256];

		snprintf(e, sizeof(e), "%s, \"err\": %d", args, err);
		instant(q, "suspend failed", ts, e);
		return;
	}
	if (q->stopped)
		return;
	/*
	 * The request was made latency_ns ago: what was open ends then (not
	 * before it began), and the suspending slice fills the rest.
	 */
	from = ts - lat > q->since ? ts - lat : q->since;
	if (q->show == SHOW_RUNNING)
		slice(q, "running", q->since, from - q->since, "");
	slice(q, "suspending", from, ts - from, args);
	snprintf(q->why, sizeof(q->why), "%s", args);
	q->stopped = true;
	q->show = SHOW_SUSPENDED;
	q->since = ts;
}

static void on_event(const char *name, double ts, const char *a)
{
	struct tl_queue *q;
	uint32_t uid = (uint32_t)field(a, "queue", 0);
	char e[64];

	if (!strcmp(name, "xsched_queue_register")) {
		const char *c = strstr(a, " comm=");

		q = tl_find(uid, false);
		if (q && q->known) {
			/* The uid was freed and given to a new queue. */
			q->gone = true;
			tl_update(q, ts);
			q = NULL;
		}
		if (!q)
			q = tl_find(uid, true);
		q->pid = (int)field(a, "pid", 0);
		q->prio = (int)field(a, "prio", 0);
		q->arbitrated = field(a, "arbitrated", 0);
		word(a, "backend", q->backend, sizeof(q->backend));
		if (c)
			snprintf(q->comm, sizeof(q->comm), "%.*s",
				 (int)strcspn(c + 6, "\n"), c + 6);
		q->known = true;
		return;
	}
	q = tl_find(uid, true);
	if (!strcmp(name, "xsched_queue_unregister")) {
		q->gone = true;
		tl_update(q, ts);
	} else if (!strcmp(name, "xsched_queue_progress")) {
		q->busy = field(a, "rptr", 0) != field(a, "wptr", 0);
		tl_update(q, ts);
	} else if (!strcmp(name, "xsched_queue_suspend")) {
		on_suspend(q, ts, a);
	} else if (!strcmp(name, "xsched_queue_resume")) {
		if (field(a, "err", 0)) {
			snprintf(e, sizeof(e), "\"err\": %lld", field(a, "err", 0));
			instant(q, "resume failed", ts, e);
			return;
		}
		if (!q->stopped)
			return;	/* a cancelled suspend: never stopped */
		/* The suspended slice's args gain how long it was stopped. */
		snprintf(q->why + strlen(q->why), sizeof(q->why) - strlen(q->why),
			 ", \"suspended_us\": %.3f", field(a, "suspended_ns", 0) / 1e3);
		q->stopped = false;
		tl_update(q, ts);
	} else if (!strcmp(name, "xsched_queue_fault")) {
		snprintf(e, sizeof(e), "\"err\": %lld", field(a, "err", 0));
		instant(q, "fault", ts, e);
	}
}

static struct tl_xq *tl_xq_find(int pid, uint32_t q)
{
	int i;

	for (i = 0; i < ntxq; i++)
		if (txq[i].pid == pid && txq[i].q == q)
			return &txq[i];
	if (ntxq == captxq)
		txq = tl_grow(txq, &captxq, sizeof(*txq));
	memset(&txq[ntxq], 0, sizeof(txq[ntxq]));
	txq[ntxq].pid = pid;
	txq[ntxq].q = q;
	return &txq[ntxq++];
}

static void tl_proc_seen(int pid, const char *comm)
{
	int i;

	for (i = 0; i < ntproc; i++)
		if (tproc[i].pid == pid)
			return;
	if (ntproc == captproc)
		tproc = tl_grow(tproc, &captproc, sizeof(*tproc));
	tproc[ntproc].pid = pid;
	snprintf(tproc[ntproc].comm, sizeof(tproc[ntproc].comm), "%s", comm);
	ntproc++;
}

/* @src as the inside of a JSON string, cut to fit @size. */
static void json_inside(char *dst, size_t size, const char *src)
{
	size_t n = 0;

	for (; *src && *src != '\n' && n + 2 < size; src++) {
		unsigned char c = (unsigned char)*src;

		if (c == '"' || c == '\\')
			dst[n++] = '\\';
		if (c >= 0x20)
			dst[n++] = (char)c;
	}
	dst[n] = 0;
}

/*
 * A line libxsched wrote to the trace marker: xsched_lib_@ev with @a its
 * "pid=P q=Q ..." fields; @comm the writing thread's command.
 */
static void on_lib(const char *ev, double ts, const char *a, const char *comm)
{
	int pid = (int)field(a, "pid", 0);
	struct tl_xq *x = tl_xq_find(pid, (uint32_t)field(a, "q", 0));
	char args[512], reason[96] = "?", w[64];
	const char *r;

	tl_proc_seen(pid, comm);
	if (!strcmp(ev, "decision")) {
		int err = (int)field(a, "err", 0);
		uint32_t other = (uint32_t)field(a, "other", 0);

		x->prio = (int)field(a, "prio", 0);
		x->level = (unsigned int)field(a, "level", 0);
		r = strstr(a, " reason=");
		if (r)
			json_inside(reason, sizeof(reason), r + 8);
		word(a, "action", w, sizeof(w));
		if (err) {
			snprintf(args, sizeof(args), "\"queue\": %u, \"reason\": \"%s\", \"err\": %d",
				 x->q, reason, err);
			instant_on(pid, TL_XQ_TID + x->q, strcmp(w, "suspend") ?
				   "resume failed" : "suspend failed", ts, args);
		} else if (!strcmp(w, "suspend") && !x->held) {
			int n = snprintf(x->why, sizeof(x->why),
					 "\"queue\": %u, \"prio\": %d, \"level\": %u, \"reason\": \"%s\"",
					 x->q, x->prio, x->level, reason);

			if (other && n > 0 && (size_t)n < sizeof(x->why))
				snprintf(x->why + n, sizeof(x->why) - n,
					 ", \"by_queue\": %u, \"by_prio\": %lld",
					 other, field(a, "other_prio", 0));
			x->held = true;
			x->since = ts;
		} else if (!strcmp(w, "resume") && x->held) {
			snprintf(args, sizeof(args), "%s, \"resume_reason\": \"%s\", \"stopped_us\": %.3f",
				 x->why, reason, field(a, "stopped_ns", 0) / 1e3);
			slice_on(pid, TL_XQ_TID + x->q, "held", x->since, ts - x->since, args);
			x->held = false;
		} else {
			/* Its other half fell outside the recording. */
			snprintf(args, sizeof(args), "\"queue\": %u, \"reason\": \"%s\"",
				 x->q, reason);
			instant_on(pid, TL_XQ_TID + x->q, w, ts, args);
		}
	} else if (!strcmp(ev, "hold")) {
		char rt[16], call[64], stream[24];

		word(a, "rt", rt, sizeof(rt));
		word(a, "call", call, sizeof(call));
		word(a, "stream", stream, sizeof(stream));
		snprintf(x->call, sizeof(x->call),
			 "\"queue\": %u, \"runtime\": \"%s\", \"call\": \"%s\", \"stream\": \"%s\"",
			 x->q, rt, call, stream);
		x->call_held = true;
		x->calls = true;
		x->call_since = ts;
	} else if (!strcmp(ev, "release") && x->call_held) {
		snprintf(args, sizeof(args), "%s, \"held_us\": %.3f", x->call,
			 field(a, "held_ns", 0) / 1e3);
		slice_on(pid, TL_CALL_TID + x->q, "call held", x->call_since,
			 ts - x->call_since, args);
		x->call_held = false;
	}
}

/* Queues registered before the recording started: their owners from debugfs. */
static void tl_known_queues(void)
{
	struct xc_queue *v = NULL;
	int n, i, fd, saved = dup(STDERR_FILENO);

	/* Best effort: without debugfs the tracks are named by uid only. */
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
	n = xc_read_queues(&v);
	if (saved >= 0) {
		dup2(saved, STDERR_FILENO);
		close(saved);
	}
	for (i = 0; i < n; i++) {
		struct tl_queue *q = tl_find(v[i].uid, true);

		q->pid = v[i].pid;
		q->prio = v[i].prio;
		q->arbitrated = strcmp(v[i].arbiter, "-");
		q->busy = v[i].rptr != v[i].wptr;
		q->stopped = false;	/* a queue stopped already shows from its resume */
		snprintf(q->comm, sizeof(q->comm), "%s", v[i].comm);
		snprintf(q->backend, sizeof(q->backend), "%s", v[i].backend);
		q->known = true;
	}
	if (n > 0)
		free(v);
}

/* The command of the task that wrote a trace line ("  comm-tid  [cpu] ..."). */
static void line_comm(const char *line, char *dst, size_t size)
{
	const char *b, *e;

	while (*line == ' ')
		line++;
	b = strstr(line, " [");
	for (e = b ? b : line; e > line && e[-1] == ' ';)
		e--;
	for (b = e; b > line && b[-1] != '-';)
		b--;
	if (b > line)
		e = b - 1;	/* before "-tid" */
	snprintf(dst, size, "%.*s", (int)(e - line), line);
}

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, val, strlen(val)) < 0)
		err = errno;
	close(fd);
	return err;
}

static const char *const tracefs_dirs[] = {
	"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
};

/* The mounted tracefs with the module's events, or an exit status. */
static int find_tracefs(const char **dir)
{
	char p[256];
	size_t i;
	int err = ENOENT;
	bool mounted = false;

	for (i = 0; i < sizeof(tracefs_dirs) / sizeof(tracefs_dirs[0]); i++) {
		snprintf(p, sizeof(p), "%s/instances", tracefs_dirs[i]);
		if (access(p, F_OK)) {
			if (errno == EACCES)
				err = EACCES;
			continue;
		}
		mounted = true;
		snprintf(p, sizeof(p), "%s/events/xsched", tracefs_dirs[i]);
		if (!access(p, F_OK)) {
			*dir = tracefs_dirs[i];
			return XC_OK;
		}
		if (errno == EACCES)
			err = EACCES;
	}
	if (mounted && err == ENOENT && !access(XC_MODULE_DIR, F_OK)) {
		fprintf(stderr, "xschedctl: tracefs has no xsched events\n");
		return XC_ERROR;
	}
	return xc_explain(tracefs_dirs[0], err, "tracefs");
}

static int usage_err(const char *msg)
{
	fprintf(stderr, "xschedctl timeline: %s\n", msg);
	return XC_USAGE;
}

int cmd_timeline(int argc, char **argv)
{
	const char *file = NULL, *tdir = NULL;
	char inst[256], p[512], line[1024];
	unsigned long long in_buf = 0, written = 0;
	double secs = 10, last_ts = 0;
	char **cmd = NULL;
	int c, ret, status = 0, err;
	pid_t child = -1;
	FILE *tr;
	char *end;
	int i;

	optind = 2;
	while ((c = getopt(argc, argv, "+o:t:")) != -1) {
		switch (c) {
		case 'o':
			file = optarg;
			break;
		case 't':
			secs = strtod(optarg, &end);
			if (*end || secs <= 0 || secs > 86400)
				return usage_err("-t wants seconds, 0 < S <= 86400");
			break;
		default:
			return XC_USAGE;
		}
	}
	if (!file)
		return usage_err("-o FILE is required");
	if (optind < argc)
		cmd = &argv[optind];
	ret = find_tracefs(&tdir);
	if (ret)
		return ret;
	snprintf(inst, sizeof(inst), "%s/instances/xschedctl-%d", tdir, (int)getpid());
	if (mkdir(inst, 0700))
		return xc_explain(inst, errno, "tracefs");
	snprintf(p, sizeof(p), "%s/buffer_size_kb", inst);
	write_file(p, "8192");
	snprintf(p, sizeof(p), "%s/events/xsched/enable", inst);
	err = write_file(p, "1");
	if (err) {
		rmdir(inst);
		return xc_explain(p, err, "tracefs");
	}
	out = fopen(file, "we");
	if (!out) {
		fprintf(stderr, "xschedctl: %s: %s\n", file, strerror(errno));
		rmdir(inst);
		return XC_ERROR;
	}
	tl_known_queues();

	signal(SIGINT, tl_signal);
	signal(SIGTERM, tl_signal);
	if (cmd) {
		child = fork();
		if (child == 0) {
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			/* libxsched's decisions (XSCHED_LOG=trace) into our instance. */
			snprintf(p, sizeof(p), "%s/trace_marker", inst);
			setenv("XSCHED_TRACE_MARKER", p, 1);
			execvp(cmd[0], cmd);
			fprintf(stderr, "xschedctl: %s: %s\n", cmd[0], strerror(errno));
			_exit(127);
		}
		if (child < 0)
			fprintf(stderr, "xschedctl: fork: %s\n", strerror(errno));
		while (child > 0 && waitpid(child, &status, 0) < 0 && errno == EINTR)
			;
	} else {
		uint64_t until = xc_now_ns() + (uint64_t)(secs * 1e9);

		fprintf(stderr, "xschedctl: recording for %.1f s (Ctrl-C stops)\n", secs);
		while (!tl_stop && xc_now_ns() < until)
			usleep(20000);
	}
	snprintf(p, sizeof(p), "%s/tracing_on", inst);
	write_file(p, "0");

	fprintf(out, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [");
	snprintf(p, sizeof(p), "%s/trace", inst);
	tr = fopen(p, "re");
	if (!tr) {
		ret = xc_explain(p, errno, "tracefs");
		fclose(out);
		rmdir(inst);
		return ret;
	}
	while (fgets(line, sizeof(line), tr)) {
		static const char marker[] = ": tracing_mark_write: xsched_lib_";
		char *ev, *name, *colon, *ts, *mark;
		double t;

		if (line[0] == '#') {
			sscanf(line, "# entries-in-buffer/entries-written: %llu/%llu",
			       &in_buf, &written);
			continue;
		}
		mark = strstr(line, marker);
		ev = mark ? mark : strstr(line, ": xsched_");
		if (!ev)
			continue;
		name = mark ? mark + strlen(marker) : ev + 2;
		colon = strchr(name, ':');
		if (!colon)
			continue;
		*colon = 0;
		for (ts = ev; ts > line && (ts[-1] == '.' || (ts[-1] >= '0' && ts[-1] <= '9'));)
			ts--;
		t = strtod(ts, NULL) * 1e6;
		last_ts = t;
		if (mark) {
			char comm[64];

			line_comm(line, comm, sizeof(comm));
			on_lib(name, t, colon + 2, comm);
		} else {
			on_event(name, t, colon + 2);
		}
	}
	fclose(tr);
	if (rmdir(inst) && errno == EBUSY)
		fprintf(stderr, "xschedctl: %s stays: a process still has its trace marker open\n",
			inst);
	/* Close what is still open at the last event. */
	for (i = 0; i < ntq; i++) {
		tq[i].gone = true;
		tl_update(&tq[i], last_ts);
	}
	for (i = 0; i < ntxq; i++) {
		if (txq[i].held)
			slice_on(txq[i].pid, TL_XQ_TID + txq[i].q, "held", txq[i].since,
				 last_ts - txq[i].since, txq[i].why);
		if (txq[i].call_held)
			slice_on(txq[i].pid, TL_CALL_TID + txq[i].q, "call held",
				 txq[i].call_since, last_ts - txq[i].call_since, txq[i].call);
	}
	/* Name the tracks: one process per owner, one thread per queue. */
	for (i = 0; i < ntq; i++) {
		char tname[128];

		fprintf(out, "%s\n{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, "
			"\"args\": {\"name\": ", nslices++ ? "," : "", tq[i].pid);
		json_str(out, tq[i].pid ? tq[i].comm : "queues of unknown owners");
		fprintf(out, "}}");
		snprintf(tname, sizeof(tname), "queue %u prio %d %s%s", tq[i].uid,
			 tq[i].prio, tq[i].backend, tq[i].arbitrated ? " arbitrated" : "");
		fprintf(out, ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, "
			"\"tid\": %u, \"args\": {\"name\": ", tq[i].pid, tq[i].uid);
		json_str(out, tname);
		/* Highest priority on top. */
		fprintf(out, "}},\n{\"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": %d, "
			"\"tid\": %u, \"args\": {\"sort_index\": %d}}", tq[i].pid, tq[i].uid,
			1000 - tq[i].prio);
	}
	/* libxsched's XQueues, under the module's queues of their process. */
	for (i = 0; i < ntproc; i++) {
		int j;

		/* Named by the module already (the command, not a thread's). */
		for (j = 0; j < ntq && tq[j].pid != tproc[i].pid; j++)
			;
		if (j < ntq)
			continue;
		fprintf(out, "%s\n{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, "
			"\"args\": {\"name\": ", nslices++ ? "," : "", tproc[i].pid);
		json_str(out, tproc[i].comm);
		fprintf(out, "}}");
	}
	for (i = 0; i < ntxq; i++) {
		fprintf(out, ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, "
			"\"tid\": %u, \"args\": {\"name\": \"libxsched q%u prio %d Lv%u\"}}",
			txq[i].pid, TL_XQ_TID + txq[i].q, txq[i].q, txq[i].prio, txq[i].level);
		fprintf(out, ",\n{\"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": %d, "
			"\"tid\": %u, \"args\": {\"sort_index\": %d}}", txq[i].pid,
			TL_XQ_TID + txq[i].q, 3000 - txq[i].prio);
		if (!txq[i].calls)
			continue;
		fprintf(out, ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, "
			"\"tid\": %u, \"args\": {\"name\": \"libxsched q%u calls\"}}",
			txq[i].pid, TL_CALL_TID + txq[i].q, txq[i].q);
		fprintf(out, ",\n{\"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": %d, "
			"\"tid\": %u, \"args\": {\"sort_index\": %d}}", txq[i].pid,
			TL_CALL_TID + txq[i].q, 3001 - txq[i].prio);
	}
	fprintf(out, "\n]}\n");
	if (fclose(out)) {
		fprintf(stderr, "xschedctl: writing %s: %s\n", file, strerror(errno));
		return XC_ERROR;
	}
	if (written > in_buf)
		fprintf(stderr, "xschedctl: %llu events lost (trace buffer full): the timeline starts late\n",
			written - in_buf);
	fprintf(stderr, "xschedctl: %s: %d queue%s (open it in https://ui.perfetto.dev)\n",
		file, ntq, ntq == 1 ? "" : "s");
	if (cmd && child > 0) {
		if (WIFEXITED(status))
			return WEXITSTATUS(status);
		return 128 + WTERMSIG(status);
	}
	return child < 0 && cmd ? XC_ERROR : XC_OK;
}
