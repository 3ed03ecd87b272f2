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
	return (unsigned int)x & (XSI_HT_SLOTS - 1);
}

void *xsi_ht_get(const struct xsi_htable *t, const void *k)
{
	unsigned int i = slot_of(k), n;

	for (n = 0; n < XSI_HT_SLOTS && t->key[i]; n++, i = (i + 1) & (XSI_HT_SLOTS - 1))
		if (t->key[i] == k)
			return t->val[i];
	return NULL;
}

bool xsi_ht_put(struct xsi_htable *t, void *k, void *v)
{
	unsigned int i = slot_of(k), n, tomb = XSI_HT_SLOTS;

	for (n = 0; n < XSI_HT_SLOTS && t->key[i]; n++, i = (i + 1) & (XSI_HT_SLOTS - 1)) {
		if (t->key[i] == k) {
			t->val[i] = v;
			return true;
		}
		if (t->key[i] == XSI_HT_TOMB && tomb == XSI_HT_SLOTS)
			tomb = i;
	}
	if (tomb == XSI_HT_SLOTS && n == XSI_HT_SLOTS)
		return false;
	if (tomb != XSI_HT_SLOTS)
		i = tomb;
	t->key[i] = k;
	t->val[i] = v;
	return true;
}

void *xsi_ht_del(struct xsi_htable *t, const void *k)
{
	unsigned int i = slot_of(k), n;
	void *v;

	for (n = 0; n < XSI_HT_SLOTS && t->key[i]; n++, i = (i + 1) & (XSI_HT_SLOTS - 1)) {
		if (t->key[i] == k) {
			v = t->val[i];
			t->key[i] = XSI_HT_TOMB;
			t->val[i] = NULL;
			return v;
		}
	}
	return NULL;
}

void *xsi_ht_at(const struct xsi_htable *t, unsigned int i)
{
	return t->key[i] && t->key[i] != XSI_HT_TOMB ? t->val[i] : NULL;
}

void *xsi_ht_del_at(struct xsi_htable *t, unsigned int i)
{
	void *v = xsi_ht_at(t, i);

	if (v) {
		t->key[i] = XSI_HT_TOMB;
		t->val[i] = NULL;
	}
	return v;
}
