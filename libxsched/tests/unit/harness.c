// SPDX-License-Identifier: MIT
/* Runs every registered test in its own process; see harness.h. */
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/wait.h>

#include "harness.h"
#include "../../src/internal.h"

#define XT_MAX 256

static struct {
	const char *name;
	void (*fn)(void);
} tests[XT_MAX];
static int ntests;

void xt_register(const char *name, void (*fn)(void))
{
	if (ntests < XT_MAX) {
		tests[ntests].name = name;
		tests[ntests].fn = fn;
		ntests++;
	}
}

void xt_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stdout, "#   %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
	_exit(1);
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0, i;

	/* Registration order is reverse link order: run in name order of files. */
	for (i = 0; i < ntests; i++) {
		const char *filter = argc > 1 ? argv[1] : NULL;
		int status;
		pid_t pid;

		if (filter && !strstr(tests[i].name, filter))
			continue;
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			alarm(30);
			tests[i].fn();
			if (xs_sched_count())
				xt_fail(__FILE__, __LINE__, "%d XQueue(s) left alive",
					xs_sched_count());
			fflush(stdout);
			exit(0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) < 0) {
			perror("fork/waitpid");
			return 2;
		}
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			printf("ok %d %s\n", i + 1, tests[i].name);
			passed++;
		} else {
			if (WIFSIGNALED(status))
				printf("#   killed by signal %d (%s)\n", WTERMSIG(status),
				       WTERMSIG(status) == SIGALRM ? "timeout" :
				       strsignal(WTERMSIG(status)));
			printf("not ok %d %s\n", i + 1, tests[i].name);
			failed++;
		}
	}
	/* One suite name per binary: the fork and TSan builds are counted apart. */
	const char *suite = getenv("XSCHED_UNIT_SUITE");

	printf("%s: %d passed, %d failed\n", suite && *suite ? suite : "libxsched-unit",
	       passed, failed);
	return failed ? 1 : 0;
}
