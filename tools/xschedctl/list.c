// SPDX-License-Identifier: GPL-2.0
/*
 * xschedctl list [--json]: every registered queue, from debugfs
 * xsched/queues, whose header names its columns (they are looked up by
 * name, so the module may add columns).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xschedctl.h"

/* Undo the module's seq_escape(): \ooo octal. */
static void unescape(char *dst, size_t size, const char *src)
{
	size_t n = 0;

	while (*src && n + 1 < size) {
		if (src[0] == '\\' && src[1] >= '0' && src[1] <= '3' &&
		    src[2] >= '0' && src[2] <= '7' && src[3] >= '0' && src[3] <= '7') {
			dst[n++] = (char)((src[1] - '0') * 64 + (src[2] - '0') * 8 +
					  (src[3] - '0'));
			src += 4;
		} else {
			dst[n++] = *src++;
		}
	}
	dst[n] = 0;
}

enum col {
	C_UID, C_BACKEND, C_STATE, C_PRIO, C_ARBITER, C_RPTR, C_WPTR,
	C_SUSPENDS, C_RESUMES, C_FAULTS, C_LAST, C_MAX, C_TOTAL, C_SAVED,
	C_ERROR, C_PID, C_STOPPED, C_ARBSUSP, C_MODES, C_MODE, C_COMM, C_NR
};

static const char *const col_names[C_NR] = {
	"uid", "backend", "state", "prio", "arbiter", "rptr", "wptr",
	"suspends", "resumes", "faults", "last_ns", "max_ns", "total_ns",
	"saved_bytes", "last_error", "pid", "stopped_ns", "arbiter_suspends",
	"modes", "mode", "comm",
};

static void set_field(struct xc_queue *q, int c, const char *v)
{
	uint64_t u = strtoull(v, NULL, 0);

	switch (c) {
	case C_UID: q->uid = (uint32_t)u; break;
	case C_BACKEND: snprintf(q->backend, sizeof(q->backend), "%s", v); break;
	case C_STATE: snprintf(q->state, sizeof(q->state), "%s", v); break;
	case C_PRIO: q->prio = atoi(v); break;
	case C_ARBITER: snprintf(q->arbiter, sizeof(q->arbiter), "%s", v); break;
	case C_RPTR: q->rptr = u; break;
	case C_WPTR: q->wptr = u; break;
	case C_SUSPENDS: q->suspends = u; break;
	case C_RESUMES: q->resumes = u; break;
	case C_FAULTS: q->faults = u; break;
	case C_LAST: q->last_ns = u; break;
	case C_MAX: q->max_ns = u; break;
	case C_TOTAL: q->total_ns = u; break;
	case C_SAVED: q->saved_bytes = u; break;
	case C_ERROR: q->last_error = atoi(v); break;
	case C_PID: q->pid = atoi(v); break;
	case C_STOPPED: q->stopped_ns = u; break;
	case C_ARBSUSP: q->arbiter_suspends = u; break;
	case C_MODES: snprintf(q->modes, sizeof(q->modes), "%s", v); break;
	case C_MODE: snprintf(q->mode, sizeof(q->mode), "%s", v); break;
	case C_COMM: unescape(q->comm, sizeof(q->comm), v); break;
	}
}

int xc_read_queues(struct xc_queue **out)
{
	const char *path = XC_DEBUGFS "/queues";
	int where[64], ncols = 0, n = 0, cap = 0, i;
	char line[2048], *tok, *save;
	struct xc_queue *v = NULL;
	FILE *f = fopen(path, "re");

	if (!f)
		return -xc_explain(path, errno, "debugfs");
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		fprintf(stderr, "xschedctl: %s is empty\n", path);
		return -XC_ERROR;
	}
	for (tok = strtok_r(line, " \n", &save); tok && ncols < 64;
	     tok = strtok_r(NULL, " \n", &save)) {
		where[ncols] = -1;
		for (i = 0; i < C_NR; i++)
			if (!strcmp(tok, col_names[i]))
				where[ncols] = i;
		ncols++;
	}
	while (fgets(line, sizeof(line), f)) {
		struct xc_queue q = { .pid = -1 };
		int col = 0;

		snprintf(q.mode, sizeof(q.mode), "-");
		snprintf(q.arbiter, sizeof(q.arbiter), "-");
		for (tok = strtok_r(line, " \n", &save); tok && col < ncols;
		     tok = strtok_r(NULL, " \n", &save), col++)
			if (where[col] >= 0)
				set_field(&q, where[col], tok);
		if (n == cap) {
			struct xc_queue *nv;

			cap = cap ? 2 * cap : 16;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				fclose(f);
				fprintf(stderr, "xschedctl: out of memory\n");
				return -XC_ERROR;
			}
			v = nv;
		}
		v[n++] = q;
	}
	fclose(f);
	*out = v;
	return n;
}

int xc_level(const struct xc_queue *q)
{
	if (strstr(q->modes, "save"))
		return 3;
	if (strstr(q->modes, "drain"))
		return 2;
	return 0;
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void list_json(const struct xc_queue *v, int n)
{
	int i;

	printf("{\"queues\": [");
	for (i = 0; i < n; i++) {
		const struct xc_queue *q = &v[i];

		printf("%s\n  {\"uid\": %u, \"pid\": %d, \"command\": ", i ? "," : "",
		       q->uid, q->pid);
		json_string(q->comm);
		printf(", \"backend\": ");
		json_string(q->backend);
		printf(", \"level\": %d, \"modes\": ", xc_level(q));
		json_string(q->modes);
		printf(", \"mode\": ");
		if (strcmp(q->mode, "-"))
			json_string(q->mode);
		else
			printf("null");
		printf(", \"priority\": %d, \"arbitrated\": %s, \"arbiter\": ",
		       q->prio, strcmp(q->arbiter, "-") ? "true" : "false");
		if (strcmp(q->arbiter, "-"))
			json_string(q->arbiter);
		else
			printf("null");
		printf(", \"state\": ");
		json_string(q->state);
		printf(", \"suspends\": %llu, \"resumes\": %llu, \"faults\": %llu"
		       ", \"arbiter_suspends\": %llu, \"last_suspend_ns\": %llu"
		       ", \"max_suspend_ns\": %llu, \"total_suspend_ns\": %llu"
		       ", \"stopped_ns\": %llu, \"saved_bytes\": %llu"
		       ", \"last_error\": %d, \"rptr\": %llu, \"wptr\": %llu}",
		       (unsigned long long)q->suspends, (unsigned long long)q->resumes,
		       (unsigned long long)q->faults,
		       (unsigned long long)q->arbiter_suspends,
		       (unsigned long long)q->last_ns, (unsigned long long)q->max_ns,
		       (unsigned long long)q->total_ns,
		       (unsigned long long)q->stopped_ns,
		       (unsigned long long)q->saved_bytes, q->last_error,
		       (unsigned long long)q->rptr, (unsigned long long)q->wptr);
	}
	printf("%s]}\n", n ? "\n" : "");
}

static void list_table(const struct xc_queue *v, int n)
{
	int i;

	printf("%5s %7s %-16s %-7s %-5s %-5s %4s %-7s %-10s %8s %10s %12s %12s\n",
	       "UID", "PID", "COMMAND", "BACKEND", "LEVEL", "MODE", "PRIO",
	       "ARBITER", "STATE", "SUSPENDS", "LAST_US", "TOTAL_US",
	       "SAVED_BYTES");
	for (i = 0; i < n; i++) {
		const struct xc_queue *q = &v[i];
		char level[8], comm[17];
		size_t k;

		/* One word per column: a space in a command shows as '_'. */
		snprintf(comm, sizeof(comm), "%s", q->comm);
		for (k = 0; comm[k]; k++)
			if (comm[k] == ' ' || comm[k] == '\t')
				comm[k] = '_';
		if (xc_level(q))
			snprintf(level, sizeof(level), "Lv%d", xc_level(q));
		else
			snprintf(level, sizeof(level), "-");
		printf("%5u %7d %-16s %-7s %-5s %-5s %4d %-7s %-10s %8llu %10.1f %12.1f %12llu\n",
		       q->uid, q->pid, comm, q->backend, level, q->mode, q->prio,
		       q->arbiter, q->state, (unsigned long long)q->suspends,
		       q->last_ns / 1e3, q->total_ns / 1e3,
		       (unsigned long long)q->saved_bytes);
	}
}

int cmd_list(int argc, char **argv)
{
	struct xc_queue *v = NULL;
	bool json = false;
	int n;

	if (argc == 3 && !strcmp(argv[2], "--json"))
		json = true;
	else if (argc != 2)
		return XC_USAGE;
	n = xc_read_queues(&v);
	if (n < 0)
		return -n;
	if (json)
		list_json(v, n);
	else
		list_table(v, n);
	free(v);
	return fflush(stdout) ? XC_ERROR : XC_OK;
}
