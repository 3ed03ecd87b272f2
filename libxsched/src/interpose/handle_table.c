// SPDX-License-Identifier: MIT
/* A table from runtime handles to the interposer's records: handle_table.h. */
#include <stdint.h>
#include <stddef.h>

#include "handle_table.h"

static unsigned int slot_of(const void *k)
{
	uint64_t x = (uint64_t)(uintptr_t)k;

	/* handles are aligned pointers: mix the bits before taking the low ones */
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (unsigned int)x & (XU_TABLE_SLOTS - 1);
}

void *xu_tget(const struct xu_table *t, const void *k)
{
	unsigned int i = slot_of(k), n;

	for (n = 0; n < XU_TABLE_SLOTS && t->key[i]; n++, i = (i + 1) & (XU_TABLE_SLOTS - 1))
		if (t->key[i] == k)
			return t->val[i];
	return NULL;
}

bool xu_tput(struct xu_table *t, void *k, void *v)
{
	unsigned int i = slot_of(k), n, tomb = XU_TABLE_SLOTS;

	for (n = 0; n < XU_TABLE_SLOTS && t->key[i]; n++, i = (i + 1) & (XU_TABLE_SLOTS - 1)) {
		if (t->key[i] == k) {
			t->val[i] = v;
			return true;
		}
		if (t->key[i] == XU_TOMB && tomb == XU_TABLE_SLOTS)
			tomb = i;
	}
	if (tomb == XU_TABLE_SLOTS && n == XU_TABLE_SLOTS)
		return false;
	if (tomb != XU_TABLE_SLOTS)
		i = tomb;
	t->key[i] = k;
	t->val[i] = v;
	return true;
}

void *xu_tdel(struct xu_table *t, const void *k)
{
	unsigned int i = slot_of(k), n;
	void *v;

	for (n = 0; n < XU_TABLE_SLOTS && t->key[i]; n++, i = (i + 1) & (XU_TABLE_SLOTS - 1)) {
		if (t->key[i] == k) {
			v = t->val[i];
			t->key[i] = XU_TOMB;
			t->val[i] = NULL;
			return v;
		}
	}
	return NULL;
}

void *xu_tat(const struct xu_table *t, unsigned int i)
{
	return t->key[i] && t->key[i] != XU_TOMB ? t->val[i] : NULL;
}

void *xu_tdel_at(struct xu_table *t, unsigned int i)
{
	void *v = xu_tat(t, i);

	if (v) {
		t->key[i] = XU_TOMB;
		t->val[i] = NULL;
	}
	return v;
}
