// SPDX-License-Identifier: GPL-2.0
/*
 * xschedctl: look at and poke the xsched module.
 *
 *   xschedctl version               API version, backends, sim GPU size
 *   xschedctl list [--json]         every registered queue: owner, level, state, counters
 *   xschedctl top [-d S] [-n N] [-b]  live view: share of time run/suspended, suspends/s
 *   xschedctl timeline -o FILE [-t S | -- CMD...]
 *                                   record the tracepoints as a Chrome/Perfetto trace
 *   xschedctl queues                the raw debugfs queue table
 *   xschedctl fault KNOB VALUE      set a sim fault injection knob
 *   xschedctl trace on|off|show     the xsched tracepoints (tracefs)
 *   xschedctl hws on|off|show       the sim's HWS cost model, runlist updates
 *   xschedctl batch on|off|show     the arbiter's batches (module parameter)
 *   xschedctl set-priority UID PRIO  an administrator's actions on any queue
 *   xschedctl suspend UID [--mode save|drain]    (XSCHED_IOC_ADMIN)
 *   xschedctl resume UID
 *
 * Exit statuses (XC_* in xschedctl.h): 0 ok, 1 error, 2 usage, 3 module not
 * loaded, 4 debugfs or tracefs not mounted, 5 permission denied.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/xsched_kfd.h>
#include <linux/xsched_sim.h>

#include "xschedctl.h"

#define DEBUGFS "/sys/kernel/debug/xsched"
#define BATCH_PARAM "/sys/module/xsched_kfd/parameters/arbiter_batch"
static const char *const tracefs_dirs[] = {
	"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
};
static const char *const knobs[] = {
	"save_delay_us", "fail_save", "fail_resume", "save_timeout_ms", "reset_queue",
};

static int usage(void)
{
	fprintf(stderr,
		"usage: xschedctl version\n"
		"       xschedctl list [--json]\n"
		"       xschedctl top [-d SECONDS] [-n FRAMES] [-b]\n"
		"       xschedctl timeline -o FILE [-t SECONDS | -- COMMAND [ARG...]]\n"
		"       xschedctl queues\n"
		"       xschedctl fault {save_delay_us|fail_save|fail_resume|save_timeout_ms|reset_queue} VALUE\n"
		"       xschedctl trace {on|off|show}\n"
		"       xschedctl hws {on|off|show}\n"
		"       xschedctl batch {on|off|show}\n"
		"       xschedctl set-priority UID PRIO\n"
		"       xschedctl suspend UID [--mode save|drain]\n"
		"       xschedctl resume UID\n");
	return 2;
}

/* open(O_RDONLY), saying why not. */
static int open_ro(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		fprintf(stderr, "xschedctl: %s: %s%s\n", path, strerror(errno),
			errno == ENOENT ? " (module loaded? debugfs mounted?)" : "");
	return fd;
}

static int cat(const char *path)
{
	char buf[4096];
	ssize_t n;
	int fd = open_ro(path);

	if (fd < 0)
		return 1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (fwrite(buf, 1, n, stdout) != (size_t)n)
			break;
	close(fd);
	return n < 0;
}

static int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0) {
		fprintf(stderr, "xschedctl: %s: %s\n", path, strerror(errno));
		return 1;
	}
	n = write(fd, val, strlen(val));
	if (n < 0)
		fprintf(stderr, "xschedctl: writing %s to %s: %s\n", val, path,
			strerror(errno));
	close(fd);
	return n < 0;
}

static int cmd_version(void)
{
	struct xsched_version v = {};
	struct xsched_sim_info si = {};
	int fd = open("/dev/" XSCHED_DEVICE_NAME, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		perror("xschedctl: /dev/" XSCHED_DEVICE_NAME);
		return 1;
	}
	if (ioctl(fd, XSCHED_IOC_VERSION, &v)) {
		perror("xschedctl: XSCHED_IOC_VERSION");
		close(fd);
		return 1;
	}
	close(fd);
	printf("api %u\nbackends%s%s\n", v.api_version,
	       v.backends & (1u << XSCHED_BACKEND_SIM) ? " sim" : "",
	       v.backends & (1u << XSCHED_BACKEND_KFD) ? " kfd" : "");
	/* The sim is a test device of its own module, often not loaded. */
	fd = open("/dev/" XSCHED_SIM_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (fd >= 0 && !ioctl(fd, XSCHED_IOC_SIM_INFO, &si))
		printf("sim %u CUs x %u wave slots, %u bytes per saved wave\n",
		       si.cus, si.waves_per_cu, si.wave_state_bytes);
	if (fd >= 0)
		close(fd);
	return 0;
}

static int cmd_fault(const char *knob, const char *value)
{
	char path[256], *end;
	size_t i;

	for (i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++)
		if (!strcmp(knob, knobs[i]))
			break;
	if (i == sizeof(knobs) / sizeof(knobs[0])) {
		fprintf(stderr, "xschedctl: unknown knob '%s'\n", knob);
		return usage();
	}
	errno = 0;
	(void)strtoull(value, &end, 0);
	if (!*value || *end || errno || *value == '-') {
		fprintf(stderr, "xschedctl: '%s' is not a non-negative number\n", value);
		return 2;
	}
	snprintf(path, sizeof(path), DEBUGFS "/sim/%s", knob);
	return write_str(path, value);
}

static int cmd_trace(const char *what)
{
	char path[256];
	size_t i;

	for (i = 0; i < sizeof(tracefs_dirs) / sizeof(tracefs_dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/events/xsched/enable", tracefs_dirs[i]);
		if (access(path, F_OK) == 0)
			break;
	}
	if (i == sizeof(tracefs_dirs) / sizeof(tracefs_dirs[0])) {
		fprintf(stderr, "xschedctl: no xsched events in tracefs (module loaded? tracefs mounted?)\n");
		return 1;
	}
	if (!strcmp(what, "on"))
		return write_str(path, "1");
	if (!strcmp(what, "off"))
		return write_str(path, "0");
	if (!strcmp(what, "show")) {
		snprintf(path, sizeof(path), "%s/trace", tracefs_dirs[i]);
		return cat(path);
	}
	return usage();
}

/* Print "NAME VALUE" from a one-line file; 1 if unreadable. */
static int show_value(const char *name, const char *path)
{
	char buf[64];
	ssize_t n;
	int fd = open_ro(path);

	if (fd < 0)
		return 1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return 1;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	printf("%s %s\n", name, buf);
	return 0;
}

static int cmd_hws(const char *what)
{
	if (!strcmp(what, "on"))
		return write_str(DEBUGFS "/sim/hws", "1");
	if (!strcmp(what, "off"))
		return write_str(DEBUGFS "/sim/hws", "0");
	if (strcmp(what, "show"))
		return usage();
	return show_value("hws", DEBUGFS "/sim/hws") ||
	       show_value("hws_update_us", DEBUGFS "/sim/hws_update_us") ||
	       show_value("runlist_updates", DEBUGFS "/sim/runlist_updates") ||
	       show_value("arbiter_batch", BATCH_PARAM);
}

static int cmd_batch(const char *what)
{
	if (!strcmp(what, "on"))
		return write_str(BATCH_PARAM, "Y");
	if (!strcmp(what, "off"))
		return write_str(BATCH_PARAM, "N");
	if (!strcmp(what, "show"))
		return show_value("arbiter_batch", BATCH_PARAM);
	return usage();
}

/* A number in [min, max] from all of @s; false if it is not one. */
static bool parse_long(const char *s, long min, long max, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return *s && !*end && !errno && *out >= min && *out <= max;
}

/* Why XSCHED_IOC_ADMIN failed on queue @uid: prints it, returns the exit status. */
static int admin_explain(const char *cmd, unsigned long uid, int err)
{
	switch (err) {
	case EPERM:
		fprintf(stderr, "xschedctl: %s %lu: permission denied (another user's queue needs CAP_SYS_ADMIN, a priority above 0 CAP_SYS_NICE)\n",
			cmd, uid);
		return XC_PERMISSION;
	case ENOENT:
		fprintf(stderr, "xschedctl: %s %lu: no registered queue has uid %lu (xschedctl list)\n",
			cmd, uid, uid);
		return XC_ERROR;
	case EBUSY:
		fprintf(stderr, "xschedctl: %s %lu: the queue is arbitrated, so the module's arbiter owns its state (change its priority instead); kfd: or a debugger has its process\n",
			cmd, uid);
		return XC_ERROR;
	case EALREADY:
		fprintf(stderr, "xschedctl: %s %lu: the queue is %s already\n", cmd, uid,
			!strcmp(cmd, "resume") ? "active" : "suspended");
		return XC_ERROR;
	case EOPNOTSUPP:
		fprintf(stderr, "xschedctl: %s %lu: the queue's backend cannot suspend in that mode\n",
			cmd, uid);
		return XC_ERROR;
	case EIO:
		fprintf(stderr, "xschedctl: %s %lu: the queue has failed\n", cmd, uid);
		return XC_ERROR;
	case ENOTTY:
		fprintf(stderr, "xschedctl: %s: the loaded xsched_kfd has no XSCHED_IOC_ADMIN (older module)\n",
			cmd);
		return XC_ERROR;
	}
	fprintf(stderr, "xschedctl: %s %lu: %s\n", cmd, uid, strerror(err));
	return XC_ERROR;
}

/* set-priority UID PRIO, suspend UID [--mode save|drain], resume UID */
static int cmd_admin(int argc, char **argv)
{
	struct xsched_admin a = { .size = sizeof(a) };
	const char *cmd = argv[1];
	long uid, prio = 0;
	int fd, ret;

	if (argc < 3 || !parse_long(argv[2], 1, UINT32_MAX, &uid)) {
		if (argc >= 3)
			fprintf(stderr, "xschedctl: '%s' is not a queue uid\n", argv[2]);
		return usage();
	}
	a.queue_uid = (uint32_t)uid;
	if (!strcmp(cmd, "set-priority")) {
		if (argc != 4 || !parse_long(argv[3], XSCHED_PRIO_MIN, XSCHED_PRIO_MAX, &prio)) {
			if (argc == 4)
				fprintf(stderr, "xschedctl: priority '%s' is not in %d..%d\n",
					argv[3], XSCHED_PRIO_MIN, XSCHED_PRIO_MAX);
			return usage();
		}
		a.op = XSCHED_ADMIN_SET_PRIORITY;
		a.priority = (int32_t)prio;
	} else if (!strcmp(cmd, "suspend")) {
		a.op = XSCHED_ADMIN_SUSPEND;
		a.mode = XSCHED_MODE_SAVE;
		if (argc == 5 && !strcmp(argv[3], "--mode") && !strcmp(argv[4], "drain"))
			a.mode = XSCHED_MODE_DRAIN;
		else if (argc != 3 && !(argc == 5 && !strcmp(argv[3], "--mode") &&
					!strcmp(argv[4], "save")))
			return usage();
	} else {
		if (argc != 3)
			return usage();
		a.op = XSCHED_ADMIN_RESUME;
	}

	fd = open("/dev/" XSCHED_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return xc_explain("/dev/" XSCHED_DEVICE_NAME, errno, "device");
	ret = ioctl(fd, XSCHED_IOC_ADMIN, &a) ? errno : 0;
	close(fd);
	if (ret)
		return admin_explain(cmd, (unsigned long)uid, ret);
	if (a.op == XSCHED_ADMIN_SET_PRIORITY)
		printf("queue %ld priority %ld\n", uid, prio);
	else if (a.op == XSCHED_ADMIN_SUSPEND)
		printf("queue %ld suspended (%s) in %.1f us, %llu bytes saved\n", uid,
		       a.mode == XSCHED_MODE_SAVE ? "save" : "drain", a.latency_ns / 1e3,
		       (unsigned long long)a.saved_bytes);
	else
		printf("queue %ld resumed after %.1f us\n", uid, a.suspended_ns / 1e3);
	return XC_OK;
}

int main(int argc, char **argv)
{
	int ret;

	if (argc >= 2 && (!strcmp(argv[1], "list") || !strcmp(argv[1], "top") ||
			  !strcmp(argv[1], "timeline"))) {
		ret = !strcmp(argv[1], "list") ? cmd_list(argc, argv) :
		      !strcmp(argv[1], "top") ? cmd_top(argc, argv) :
		      cmd_timeline(argc, argv);
		return ret == XC_USAGE ? usage() : ret;
	}
	if (argc >= 2 && (!strcmp(argv[1], "set-priority") ||
			  !strcmp(argv[1], "suspend") || !strcmp(argv[1], "resume")))
		return cmd_admin(argc, argv);
	if (argc == 2 && !strcmp(argv[1], "version"))
		return cmd_version();
	if (argc == 2 && !strcmp(argv[1], "queues"))
		return cat(DEBUGFS "/queues");
	if (argc == 4 && !strcmp(argv[1], "fault"))
		return cmd_fault(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "trace"))
		return cmd_trace(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "hws"))
		return cmd_hws(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "batch"))
		return cmd_batch(argv[2]);
	return usage();
}
