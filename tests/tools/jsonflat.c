// SPDX-License-Identifier: GPL-2.0
/*
 * jsonflat FILE [KEY]: a strict JSON parser for the tools tests (busybox
 * has no JSON tool).  Any syntax error (RFC 8259: no trailing commas, no
 * bare words, no control characters in strings, nothing after the value)
 * exits 1 naming the byte offset.  Otherwise it prints the leaves as
 * PATH=VALUE (strings unquoted and unescaped, objects as a.b, arrays as
 * a[3]): one per line, or with KEY (the top level must be an object whose
 * KEY is an array) one line per element of that array, its leaves
 * separated by tabs and named from inside the element.  "-" reads stdin.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src, *pos;
static const char *file;
static char path[4096];
static char sep = '\n';	/* between leaves */
static int leaves;
static int quiet;

static void fail(const char *what)
{
	fprintf(stderr, "jsonflat: %s: byte %ld: %s\n", file, (long)(pos - src), what);
	exit(1);
}

static void ws(void)
{
	while (*pos == ' ' || *pos == '\t' || *pos == '\n' || *pos == '\r')
		pos++;
}

static void leaf(const char *value, size_t n)
{
	if (quiet)
		return;
	printf("%s%s=%.*s", leaves++ ? (sep == '\t' ? "\t" : "\n") : "",
	       path[0] == '.' ? path + 1 : path, (int)n, value);
}

/* A string at pos (after its quote) into buf, unescaped. */
static void string(char *buf, size_t size)
{
	size_t n = 0;

	for (;;) {
		unsigned char c = (unsigned char)*pos++;

		if (!c)
			fail("unterminated string");
		if (c < 0x20)
			fail("control character in a string");
		if (c == '"')
			break;
		if (c == '\\') {
			c = (unsigned char)*pos++;
			switch (c) {
			case '"': case '\\': case '/': break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case 'u': {
				unsigned int u = 0;
				int i;

				for (i = 0; i < 4; i++) {
					if (!isxdigit((unsigned char)pos[i]))
						fail("bad \\u escape");
					u = u * 16 + (isdigit((unsigned char)pos[i]) ?
						      pos[i] - '0' : (tolower(pos[i]) - 'a' + 10));
				}
				pos += 4;
				c = u < 0x80 ? (unsigned char)u : '?';
				break;
			}
			default:
				fail("bad escape");
			}
		}
		if (n + 1 < size)
			buf[n++] = (char)c;
	}
	buf[n] = 0;
}

static void value(int depth);

static void number(void)
{
	const char *s = pos;

	if (*pos == '-')
		pos++;
	if (*pos == '0')
		pos++;
	else if (isdigit((unsigned char)*pos))
		while (isdigit((unsigned char)*pos))
			pos++;
	else
		fail("bad number");
	if (*pos == '.') {
		pos++;
		if (!isdigit((unsigned char)*pos))
			fail("bad fraction");
		while (isdigit((unsigned char)*pos))
			pos++;
	}
	if (*pos == 'e' || *pos == 'E') {
		pos++;
		if (*pos == '+' || *pos == '-')
			pos++;
		if (!isdigit((unsigned char)*pos))
			fail("bad exponent");
		while (isdigit((unsigned char)*pos))
			pos++;
	}
	leaf(s, pos - s);
}

static void object(int depth)
{
	size_t len = strlen(path);
	char key[256];

	pos++;
	ws();
	if (*pos == '}') {
		pos++;
		return;
	}
	for (;;) {
		ws();
		if (*pos++ != '"')
			fail("expected a key");
		string(key, sizeof(key));
		ws();
		if (*pos++ != ':')
			fail("expected ':'");
		snprintf(path + len, sizeof(path) - len, ".%s", key);
		value(depth + 1);
		path[len] = 0;
		ws();
		if (*pos == ',') {
			pos++;
			continue;
		}
		if (*pos++ != '}')
			fail("expected ',' or '}'");
		return;
	}
}

static void array(int depth)
{
	size_t len = strlen(path);
	int i = 0;

	pos++;
	ws();
	if (*pos == ']') {
		pos++;
		return;
	}
	for (;; i++) {
		snprintf(path + len, sizeof(path) - len, "[%d]", i);
		value(depth + 1);
		path[len] = 0;
		ws();
		if (*pos == ',') {
			pos++;
			continue;
		}
		if (*pos++ != ']')
			fail("expected ',' or ']'");
		return;
	}
}

static void value(int depth)
{
	char buf[4096];

	if (depth > 64)
		fail("nested too deep");
	ws();
	switch (*pos) {
	case '{': object(depth); break;
	case '[': array(depth); break;
	case '"':
		pos++;
		string(buf, sizeof(buf));
		leaf(buf, strlen(buf));
		break;
	case 't':
		if (strncmp(pos, "true", 4))
			fail("bad word");
		leaf(pos, 4);
		pos += 4;
		break;
	case 'f':
		if (strncmp(pos, "false", 5))
			fail("bad word");
		leaf(pos, 5);
		pos += 5;
		break;
	case 'n':
		if (strncmp(pos, "null", 4))
			fail("bad word");
		leaf(pos, 4);
		pos += 4;
		break;
	default:
		number();
	}
}

/* KEY mode: the top-level object's KEY array, one line per element. */
static void elements(const char *want)
{
	char key[256];
	int found = 0;

	ws();
	if (*pos++ != '{')
		fail("the top level is not an object");
	ws();
	while (*pos != '}') {
		ws();
		if (*pos++ != '"')
			fail("expected a key");
		string(key, sizeof(key));
		ws();
		if (*pos++ != ':')
			fail("expected ':'");
		ws();
		if (!strcmp(key, want)) {
			found = 1;
			if (*pos++ != '[')
				fail("KEY is not an array");
			ws();
			while (*pos != ']') {
				path[0] = 0;
				leaves = 0;
				value(1);
				putchar('\n');
				ws();
				if (*pos == ',') {
					pos++;
					ws();
					if (*pos == ']')
						fail("trailing comma");
				} else if (*pos != ']') {
					fail("expected ',' or ']'");
				}
			}
			pos++;
		} else {
			/* Parsed, not printed. */
			quiet = 1;
			value(1);
			quiet = 0;
		}
		ws();
		if (*pos == ',') {
			pos++;
			ws();
			if (*pos == '}')
				fail("trailing comma");
		} else if (*pos != '}') {
			fail("expected ',' or '}'");
		}
	}
	pos++;
	if (!found) {
		fprintf(stderr, "jsonflat: %s: no key '%s'\n", file, want);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	size_t cap = 1 << 16, n = 0, r;
	char *buf;
	FILE *f;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: jsonflat FILE|- [KEY]\n");
		return 2;
	}
	file = argv[1];
	f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	if (!f) {
		perror(file);
		return 1;
	}
	buf = malloc(cap + 1);
	while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
		}
	}
	if (!buf) {
		fprintf(stderr, "jsonflat: out of memory\n");
		return 1;
	}
	buf[n] = 0;
	if (strlen(buf) != n) {
		fprintf(stderr, "jsonflat: %s: NUL byte in the input\n", file);
		return 1;
	}
	src = pos = buf;
	if (argc == 3) {
		sep = '\t';
		elements(argv[2]);
	} else {
		value(0);
		if (leaves)
			putchar('\n');
	}
	ws();
	if (*pos)
		fail("text after the value");
	return 0;
}
