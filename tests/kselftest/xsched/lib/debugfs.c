// SPDX-License-Identifier: GPL-2.0
/*
 * The sim's debugfs knobs, the module's live-object counters and queue
 * table, and module parameters.
 */
#include "xsched_util.h"

int xs_debugfs_ready(void)
{
	if (!access(XS_SIM_DIR, F_OK))
		return 0;
	mount("debugfs", XS_DEBUGFS_ROOT, "debugfs", 0, NULL);
	return access(XS_SIM_DIR, F_OK) ? -errno : 0;
}

int xs_write_file(const char *path, const char *text)
{
	ssize_t n;
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != strlen(text))
		ret = -EIO;
	close(fd);
	return ret;
}

int xs_knob_write(const char *knob, uint64_t value)
{
	char path[256], text[32];

	snprintf(path, sizeof(path), XS_SIM_DIR "/%s", knob);
	snprintf(text, sizeof(text), "%" PRIu64 "\n", value);
	return xs_write_file(path, text);
}

int xs_knob_read(const char *knob, uint64_t *value)
{
	char path[256], text[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), XS_SIM_DIR "/%s", knob);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	text[n] = 0;
	*value = strtoull(text, NULL, 0);
	return 0;
}

int xs_objects_read(struct xs_objects *o)
{
	char line[128];
	FILE *f;

	memset(o, 0, sizeof(*o));
	f = fopen(XS_OBJECTS_PATH, "re");
	if (!f)
		return -errno;
	while (o->n < XS_MAX_OBJECTS && fgets(line, sizeof(line), f))
		if (sscanf(line, "%31s %ld", o->name[o->n], &o->count[o->n]) == 2)
			o->n++;
	fclose(f);
	return o->n ? o->n : -EPROTO;
}

int xs_objects_diff(const struct xs_objects *a,
		    const struct xs_objects *b)
{
	int i;

	if (a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++)
		if (strcmp(a->name[i], b->name[i]) || a->count[i] != b->count[i])
			return i;
	return -1;
}

int xs_queue_table(struct xs_row *rows, int max)
{
	int uid_col = -1, state_col = -1, n = 0, col;
	char line[1024], *tok, *save;
	FILE *f;

	f = fopen(XS_QUEUES_PATH, "re");
	if (!f)
		return -errno;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -EIO;
	}
	for (col = 0, tok = strtok_r(line, " \t\n", &save); tok;
	     col++, tok = strtok_r(NULL, " \t\n", &save)) {
		if (!strcmp(tok, "uid"))
			uid_col = col;
		else if (!strcmp(tok, "state"))
			state_col = col;
	}
	if (uid_col < 0 || state_col < 0) {
		fclose(f);
		return -EPROTO;
	}
	while (n < max && fgets(line, sizeof(line), f)) {
		struct xs_row r = { 0 };
		bool have_uid = false, have_state = false;

		for (col = 0, tok = strtok_r(line, " \t\n", &save); tok;
		     col++, tok = strtok_r(NULL, " \t\n", &save)) {
			if (col == uid_col) {
				r.uid = (uint32_t)strtoul(tok, NULL, 0);
				have_uid = true;
			} else if (col == state_col) {
				snprintf(r.state, sizeof(r.state), "%s", tok);
				have_state = true;
			}
		}
		if (have_uid && have_state)
			rows[n++] = r;
	}
	fclose(f);
	return n;
}

int xs_table_count_stopped(void)
{
	static struct xs_row rows[XS_MAX_ROWS];
	int n = xs_queue_table(rows, XS_MAX_ROWS), i, stopped = 0;

	if (n < 0)
		return n;
	for (i = 0; i < n; i++)
		if (!strncasecmp(rows[i].state, "suspend", 7))
			stopped++;
	return stopped;
}

int xs_table_state(uint32_t uid, char *state, size_t len)
{
	static struct xs_row rows[XS_MAX_ROWS];
	int n = xs_queue_table(rows, XS_MAX_ROWS), i;

	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		if (rows[i].uid == uid) {
			snprintf(state, len, "%s", rows[i].state);
			return 1;
		}
	}
	return 0;
}

void xs_param_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = -1;

	if (fd >= 0) {
		n = read(fd, buf, len - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0] = 0;
}

/* One answer of debugfs sim/ring_bucket, on @fd opened read-write. */
static int ring_bucket_ask(int fd, uint64_t ring, uint32_t *bucket)
{
	char text[32];
	ssize_t n;

	n = snprintf(text, sizeof(text), "0x%" PRIx64 "\n", ring);
	if (pwrite(fd, text, n, 0) != n)
		return -errno;
	n = pread(fd, text, sizeof(text) - 1, 0);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	text[n] = 0;
	*bucket = strtoul(text, NULL, 10);
	return 0;
}

int xs_ring_bucket(uint64_t ring, uint32_t *bucket)
{
	int fd, ret;

	fd = open(XS_SIM_DIR "/ring_bucket", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = ring_bucket_ask(fd, ring, bucket);
	close(fd);
	return ret;
}

int xs_rings_in_bucket(uint64_t base, uint32_t bucket, uint64_t *rings,
		       unsigned int n)
{
	unsigned int found = 0;
	uint64_t ring;
	uint32_t b;
	int fd, ret = 0;

	fd = open(XS_SIM_DIR "/ring_bucket", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* 1024 buckets: about 1024 tries per ring; 2^20 is far beyond bad luck. */
	for (ring = base; found < n && ring < base + (64ULL << 20); ring += 64) {
		ret = ring_bucket_ask(fd, ring, &b);
		if (ret)
			break;
		if (b == bucket)
			rings[found++] = ring;
	}
	close(fd);
	if (!ret && found < n)
		ret = -ENOSPC;
	return ret;
}

int xs_rings_sharing_a_bucket(uint64_t base, uint64_t *rings, unsigned int n)
{
	uint32_t bucket;
	int ret;

	ret = xs_ring_bucket(base, &bucket);
	return ret ? ret : xs_rings_in_bucket(base, bucket, rings, n);
}
