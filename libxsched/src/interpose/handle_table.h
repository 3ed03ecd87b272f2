/* SPDX-License-Identifier: MIT */
/*
 * A table from a runtime handle (a pointer the runtime gave out) to what
 * the interposer keeps of it: open addressing, fixed size, no locking (the
 * caller's lock), a removed entry leaves a tomb that a later insert reuses.
 * Generic (the core's prefix, xsi_ht_); used by the CUDA wing's urgent
 * streams, events and code (cuda/urgent.c, cuda/events.c, cuda/code.c).
 * It calls nothing.
 */
#ifndef XSCHED_HANDLE_TABLE_H
#define XSCHED_HANDLE_TABLE_H

#include <stdbool.h>

#define XSI_HT_SLOTS 65536	/* a power of two: PyTorch programs make thousands of events */
#define XSI_HT_TOMB ((void *)1)

struct xsi_htable {
	void *key[XSI_HT_SLOTS];
	void *val[XSI_HT_SLOTS];
};

void *xsi_ht_get(const struct xsi_htable *t, const void *k);
/* false: the table is full (the handle is not followed) */
bool xsi_ht_put(struct xsi_htable *t, void *k, void *v);
void *xsi_ht_del(struct xsi_htable *t, const void *k);
/* Walking the table: the value in slot @i (NULL: none there), and its
 * removal. */
void *xsi_ht_at(const struct xsi_htable *t, unsigned int i);
void *xsi_ht_del_at(struct xsi_htable *t, unsigned int i);

#endif
