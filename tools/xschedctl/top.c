// SPDX-License-Identifier: GPL-2.0
/*
 * xschedctl top: a live view of the queues, refreshed in place.  Per queue
 * and per interval: the share of time it ran (had unfinished work and was not
 * stopped: sampled SAMPLES times per interval), the share it was suspended
 * (exact: the module's stopped_ns), suspends per second and their mean
 * latency (the module's counters).  Sorted by priority, highest first.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "xschedctl.h"

#define SAMPLES	10

/* A queue across one interval. */
struct top_row {
	struct xc_queue now;
	const struct xc_queue *prev;	/* NULL: registered during the interval */
	unsigned int ran;		/* samples in which it ran */
	unsigned int seen;		/* samples in which it existed */
};

static volatile sig_atomic_t top_quit;
static struct termios saved_tio;
static bool tio_saved;

static void top_signal(int sig)
{
	(void)sig;
	top_quit = 1;
}

static void tty_restore(void)
{
	if (tio_saved)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
	tio_saved = false;
}

/* Keys one at a time, unechoed, so that 'q' quits without Enter. */
static void tty_raw(void)
{
	struct termios t;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_tio))
		return;
	tio_saved = true;
	t = saved_tio;
	t.c_lflag &= ~(ICANON | ECHO);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	tcsetattr(STDIN_FILENO, TCSANOW, &t);
}

/* Wait up to @ms for a key; true if it says quit. */
static bool wait_key(int ms)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	char c;

	if (!tio_saved) {
		poll(NULL, 0, ms);
		return top_quit;
	}
	if (poll(&p, 1, ms) > 0 && read(STDIN_FILENO, &c, 1) == 1 &&
	    (c == 'q' || c == 'Q'))
		return true;
	return top_quit;
}

static int by_priority(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	if (x->now.prio != y->now.prio)
		return x->now.prio > y->now.prio ? -1 : 1;
	return x->now.uid < y->now.uid ? -1 : x->now.uid > y->now.uid;
}

static const struct xc_queue *find(const struct xc_queue *v, int n, uint32_t uid)
{
	int i;

	for (i = 0; i < n; i++)
		if (v[i].uid == uid)
			return &v[i];
	return NULL;
}

static int screen_rows(void)
{
	struct winsize ws;

	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row > 0)
		return ws.ws_row;
	return 0;	/* unknown: no limit */
}

static void frame(struct top_row *r, int n, double secs, bool in_place)
{
	int rows = screen_rows(), i, shown;
	const char *eol = in_place ? "\033[K\n" : "\n";

	qsort(r, n, sizeof(*r), by_priority);
	if (in_place)
		fputs("\033[H", stdout);
	printf("xschedctl top: %d queue%s, every %.1f s (q quits)%s", n,
	       n == 1 ? "" : "s", secs, eol);
	printf("%5s %7s %-16s %4s %-7s %-10s %6s %6s %8s %13s%s", "UID", "PID",
	       "COMMAND", "PRIO", "ARBITER", "STATE", "RUN%", "SUSP%",
	       "SUSP/s", "MEAN_SUSP_US", eol);
	shown = rows ? rows - 3 : n;
	for (i = 0; i < n && i < shown; i++) {
		const struct xc_queue *q = &r[i].now, *p = r[i].prev;
		double run = r[i].seen ? 100.0 * r[i].ran / r[i].seen : 0;
		double susp = 0, rate = 0, mean = 0;
		uint64_t ds = 0;

		if (p) {
			susp = 100.0 * (q->stopped_ns - p->stopped_ns) / (secs * 1e9);
			if (susp > 100)
				susp = 100;
			ds = q->suspends - p->suspends;
			rate = ds / secs;
			mean = ds ? (q->total_ns - p->total_ns) / 1e3 / ds : 0;
		}
		printf("%5u %7d %-16.16s %4d %-7s %-10s %6.1f %6.1f %8.1f %13.1f%s",
		       q->uid, q->pid, q->comm, q->prio, q->arbiter, q->state, run,
		       susp, rate, mean, eol);
	}
	if (i < n)
		printf("(%d more)%s", n - i, eol);
	if (in_place)
		fputs("\033[J", stdout);
	else
		putchar('\n');
	fflush(stdout);
}

int cmd_top(int argc, char **argv)
{
	struct xc_queue *prev = NULL, *cur = NULL;
	unsigned long frames = 0, shown = 0;
	double secs = 1.0;
	bool batch = false;
	struct top_row *rows = NULL;
	int nprev, ncur = 0, nrows = 0, c, i, s, ret = XC_OK;
	char *end;

	optind = 2;
	while ((c = getopt(argc, argv, "d:n:b")) != -1) {
		switch (c) {
		case 'd':
			secs = strtod(optarg, &end);
			if (*end || secs < 0.05 || secs > 3600)
				return XC_USAGE;
			break;
		case 'n':
			frames = strtoul(optarg, &end, 10);
			if (*end || !frames)
				return XC_USAGE;
			break;
		case 'b':
			batch = true;
			break;
		default:
			return XC_USAGE;
		}
	}
	if (optind != argc)
		return XC_USAGE;
	if (!isatty(STDOUT_FILENO))
		batch = true;
	nprev = xc_read_queues(&prev);
	if (nprev < 0)
		return -nprev;
	signal(SIGINT, top_signal);
	signal(SIGTERM, top_signal);
	if (!batch) {
		tty_raw();
		fputs("\033[2J", stdout);	/* once; frames then overwrite */
	}
	while (!top_quit && (!frames || shown < frames)) {
		struct top_row *nr;

		free(rows);
		rows = NULL;
		nrows = 0;
		/* The samples of one interval; the last one is the frame's table. */
		for (s = 0; s < SAMPLES && !top_quit; s++) {
			if (wait_key((int)(secs * 1000 / SAMPLES))) {
				top_quit = 1;
				break;
			}
			free(cur);
			cur = NULL;
			ncur = xc_read_queues(&cur);
			if (ncur < 0) {
				ret = -ncur;
				goto out;
			}
			nr = calloc(ncur ? ncur : 1, sizeof(*nr));
			if (!nr) {
				ret = XC_ERROR;
				goto out;
			}
			/* Carry the counts of queues seen in earlier samples. */
			for (i = 0; i < ncur; i++) {
				int k;

				nr[i].now = cur[i];
				for (k = 0; rows && k < nrows; k++)
					if (rows[k].now.uid == cur[i].uid && rows[k].seen) {
						nr[i].ran = rows[k].ran;
						nr[i].seen = rows[k].seen;
					}
				nr[i].seen++;
				if (!strcmp(cur[i].state, "active") &&
				    cur[i].rptr != cur[i].wptr)
					nr[i].ran++;
			}
			free(rows);
			rows = nr;
			nrows = ncur;
		}
		if (top_quit || !rows)
			break;
		for (i = 0; i < ncur; i++)
			rows[i].prev = find(prev, nprev, rows[i].now.uid);
		frame(rows, ncur, secs, !batch);
		shown++;
		free(prev);
		prev = cur;
		nprev = ncur;
		cur = NULL;
		/* rows[].prev points into the old prev: recomputed next frame. */
		for (i = 0; i < ncur; i++)
			rows[i].prev = NULL;
	}
out:
	tty_restore();
	free(rows);
	free(prev);
	free(cur);
	return ret;
}
