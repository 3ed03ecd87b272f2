// SPDX-License-Identifier: GPL-2.0
/*
 * ptyscreen [-r ROWS] [-c COLS] [-t SECONDS] [-k KEY] -- COMMAND [ARG...]
 *
 * Runs COMMAND on a pseudo-terminal of ROWS x COLS (default 24 x 100), as a
 * terminal would: its own session, the pty its controlling terminal.  What
 * it draws goes through a small terminal model (printable characters, CR,
 * LF with scrolling, ESC[row;colH, ESC[J, ESC[2J, ESC[K; other sequences are
 * ignored).  After SECONDS (default 3) it types KEY (default q) and waits up
 * to 5 s for COMMAND to exit.  Prints the screen as it was left (trailing
 * blanks and empty lines dropped) and, on stderr, "ptyscreen: frames N
 * scrolls N" (frames: cursor-home sequences; scrolls: lines pushed off the
 * top).  Exit status: COMMAND's, or 124 if it did not exit.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static int rows = 24, cols = 100;
static char *grid;
static int cr, cc;
static unsigned long frames, scrolls;

static char *cell(int r, int c)
{
	return &grid[r * cols + c];
}

static void clear_from(int r, int c)
{
	memset(cell(r, c), ' ', (size_t)(rows * cols - (r * cols + c)));
}

static void newline(void)
{
	if (++cr < rows)
		return;
	memmove(grid, grid + cols, (size_t)(rows - 1) * cols);
	memset(cell(rows - 1, 0), ' ', cols);
	cr = rows - 1;
	scrolls++;
}

/* The terminal model: one byte at a time. */
static void feed(unsigned char ch)
{
	static enum { TEXT, ESC, CSI } st;
	static int par[4], npar;

	switch (st) {
	case TEXT:
		if (ch == 0x1b) {
			st = ESC;
		} else if (ch == '\r') {
			cc = 0;
		} else if (ch == '\n') {
			newline();
		} else if (ch >= 0x20 && ch < 0x7f) {
			if (cc < cols)
				*cell(cr, cc++) = (char)ch;
		}
		return;
	case ESC:
		st = ch == '[' ? CSI : TEXT;
		memset(par, 0, sizeof(par));
		npar = 0;
		return;
	case CSI:
		if (ch >= '0' && ch <= '9') {
			if (npar < 4)
				par[npar] = par[npar] * 10 + (ch - '0');
			if (!npar)
				npar = 1;
			return;
		}
		if (ch == ';') {
			if (npar < 4)
				npar++;
			return;
		}
		if (ch == '?')
			return;
		st = TEXT;
		if (ch == 'H') {
			cr = par[0] ? par[0] - 1 : 0;
			cc = par[1] ? par[1] - 1 : 0;
			if (cr >= rows)
				cr = rows - 1;
			if (cc >= cols)
				cc = cols - 1;
			if (!cr && !cc)
				frames++;
		} else if (ch == 'J') {
			if (par[0] == 2)
				clear_from(0, 0);
			else
				clear_from(cr, cc);
		} else if (ch == 'K') {
			memset(cell(cr, cc), ' ', (size_t)(cols - cc));
		}
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Read what COMMAND draws until @until or its end; 1 if it has ended. */
static int pump(int m, double until)
{
	unsigned char buf[4096];
	struct pollfd p = { .fd = m, .events = POLLIN };
	ssize_t n, i;

	for (;;) {
		int ms = (int)((until - now()) * 1000);

		if (ms <= 0)
			return 0;
		if (poll(&p, 1, ms) <= 0)
			continue;
		n = read(m, buf, sizeof(buf));
		if (n <= 0)
			return 1;	/* EIO: the slave side is closed */
		for (i = 0; i < n; i++)
			feed(buf[i]);
	}
}

int main(int argc, char **argv)
{
	struct winsize ws = { 0 };
	const char *key = "q";
	double secs = 3;
	int m, s, c, r, status = 0, ended;
	pid_t pid;

	while ((c = getopt(argc, argv, "+r:c:t:k:")) != -1) {
		switch (c) {
		case 'r': rows = atoi(optarg); break;
		case 'c': cols = atoi(optarg); break;
		case 't': secs = atof(optarg); break;
		case 'k': key = optarg; break;
		default: goto usage;
		}
	}
	if (optind >= argc || rows < 2 || cols < 10 || secs <= 0)
		goto usage;
	grid = malloc((size_t)rows * cols);
	if (!grid)
		return 1;
	clear_from(0, 0);
	ws.ws_row = (unsigned short)rows;
	ws.ws_col = (unsigned short)cols;

	m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0 || grantpt(m) || unlockpt(m) || ioctl(m, TIOCSWINSZ, &ws)) {
		perror("ptyscreen: pty");
		return 1;
	}
	pid = fork();
	if (pid == 0) {
		setsid();
		s = open(ptsname(m), O_RDWR);
		if (s < 0 || ioctl(s, TIOCSCTTY, 0)) {
			perror("ptyscreen: slave");
			_exit(127);
		}
		dup2(s, 0);
		dup2(s, 1);
		dup2(s, 2);
		if (s > 2)
			close(s);
		execvp(argv[optind], &argv[optind]);
		perror(argv[optind]);
		_exit(127);
	}
	if (pid < 0) {
		perror("ptyscreen: fork");
		return 1;
	}
	ended = pump(m, now() + secs);
	if (!ended) {
		if (write(m, key, strlen(key)) < 0)
			perror("ptyscreen: typing");
		ended = pump(m, now() + 5);
	}
	/* Up to 5 s more to exit, then it is stopped. */
	for (r = 0; r < 100 && waitpid(pid, &status, WNOHANG) == 0; r++)
		usleep(50000);
	if (r == 100) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		status = 124 << 8;
	}
	(void)ended;
	/* The screen as left: trailing blanks and empty lines dropped. */
	for (c = rows; c > 0; c--) {
		int k;

		for (k = 0; k < cols && *cell(c - 1, k) == ' '; k++)
			;
		if (k < cols)
			break;
	}
	for (r = 0; r < c; r++) {
		int len = cols;

		while (len > 0 && *cell(r, len - 1) == ' ')
			len--;
		printf("%.*s\n", len, cell(r, 0));
	}
	fprintf(stderr, "ptyscreen: frames %lu scrolls %lu\n", frames, scrolls);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
usage:
	fprintf(stderr, "usage: ptyscreen [-r ROWS] [-c COLS] [-t SECONDS] [-k KEY] -- COMMAND [ARG...]\n");
	return 2;
}
