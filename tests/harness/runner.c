// SPDX-License-Identifier: MIT
/*
 * The test runner of every host test binary (harness.h): registration,
 * failure, and xt_run(), which runs each registered test in its own forked
 * process.  It knows nothing of libxsched, so binaries that test the library
 * from outside (the interposers' and the ABI tests) share it too.
 */
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/wait.h>

#include "harness.h"

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
	} else {
		fprintf(stderr, "harness: more than %d tests, %s not run\n", XT_MAX, name);
		exit(2);
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

int xt_run(const char *suite, const char *filter, void (*after)(void))
{
	int passed = 0, failed = 0, i;

	for (i = 0; i < ntests; i++) {
		int status;
		pid_t pid;

		if (filter && !strstr(tests[i].name, filter))
			continue;
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			alarm(30);
			tests[i].fn();
			if (after)
				after();
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
	printf("%s: %d passed, %d failed\n", suite, passed, failed);
	return failed ? 1 : 0;
}
