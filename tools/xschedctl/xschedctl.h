/* SPDX-License-Identifier: GPL-2.0 */
/* xschedctl: what its commands share (Documentation/xschedctl.rst). */
#ifndef XSCHEDCTL_H
#define XSCHEDCTL_H

#include <stdbool.h>
#include <stdint.h>

/* Exit statuses, documented in Documentation/xschedctl.rst. */
enum {
	XC_OK = 0,
	XC_ERROR = 1,		/* anything else */
	XC_USAGE = 2,
	XC_NO_MODULE = 3,	/* xsched_kfd is not loaded */
	XC_NOT_MOUNTED = 4,	/* debugfs or tracefs is not mounted */
	XC_PERMISSION = 5,	/* not allowed (debugfs and tracefs are root's) */
};

#define XC_DEBUGFS_ROOT	"/sys/kernel/debug"
#define XC_DEBUGFS	XC_DEBUGFS_ROOT "/xsched"
#define XC_MODULE_DIR	"/sys/module/xsched_kfd"

/* One row of debugfs xsched/queues. */
struct xc_queue {
	uint32_t uid;
	int pid;
	char comm[64];
	char backend[8];
	char state[16];
	int prio;
	char arbiter[16];	/* "-" (not arbitrated), "run", "stopped" */
	char modes[16];		/* "drain", "save", "drain,save" */
	char mode[8];		/* of the last suspend, "-" if none */
	uint64_t rptr, wptr;
	uint64_t suspends, resumes, faults;
	uint64_t last_ns, max_ns, total_ns, stopped_ns;
	uint64_t saved_bytes, arbiter_suspends;
	int last_error;
};

/*
 * list.c: reads the queue table into *out (free() it).  Returns the number
 * of rows, or -XC_* after printing why not.
 */
int xc_read_queues(struct xc_queue **out);
/* The best preemption level the queue's backend offers: 3, 2 or 0. */
int xc_level(const struct xc_queue *q);
/*
 * common.c: why @path (under debugfs or tracefs, of kind @what) could not be
 * opened with @err: prints it, returns the exit status.
 */
int xc_explain(const char *path, int err, const char *what);
uint64_t xc_now_ns(void);

/* The commands of their own files, which main() (xschedctl.c) calls. */
int cmd_list(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_timeline(int argc, char **argv);

#endif
