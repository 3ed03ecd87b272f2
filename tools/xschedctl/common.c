// SPDX-License-Identifier: GPL-2.0
/*
 * xschedctl: what its commands share besides the queue table (list.c):
 * why a debugfs, tracefs or device path could not be opened, as an exit
 * status (XC_* in xschedctl.h), and the clock.  It calls no other file of
 * xschedctl, so every command file may call it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "xschedctl.h"

#define DEBUGFS_MAGIC	0x64626720
#define TRACEFS_MAGIC	0x74726163

static bool fs_is(const char *dir, long magic)
{
	struct statfs st;

	return !statfs(dir, &st) && st.f_type == magic;
}

int xc_explain(const char *path, int err, const char *what)
{
	if (err == EACCES || err == EPERM) {
		fprintf(stderr, "xschedctl: %s: permission denied (%s is root's: run as root)\n",
			path, what);
		return XC_PERMISSION;
	}
	if (err == ENOENT && access(XC_MODULE_DIR, F_OK)) {
		fprintf(stderr, "xschedctl: the xsched_kfd module is not loaded (modprobe xsched_kfd)\n");
		return XC_NO_MODULE;
	}
	if (err == ENOENT && !strcmp(what, "debugfs") &&
	    !fs_is(XC_DEBUGFS_ROOT, DEBUGFS_MAGIC)) {
		fprintf(stderr, "xschedctl: debugfs is not mounted on " XC_DEBUGFS_ROOT
			" (mount -t debugfs none " XC_DEBUGFS_ROOT ")\n");
		return XC_NOT_MOUNTED;
	}
	if (err == ENOENT && !strcmp(what, "tracefs")) {
		fprintf(stderr, "xschedctl: tracefs is not mounted (mount -t tracefs none /sys/kernel/tracing)\n");
		return XC_NOT_MOUNTED;
	}
	fprintf(stderr, "xschedctl: %s: %s\n", path, strerror(err));
	return XC_ERROR;
}

uint64_t xc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}
