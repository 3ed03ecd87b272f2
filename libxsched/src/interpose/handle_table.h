/* SPDX-License-Identifier: MIT */
/*
 * A table from a runtime handle (a pointer the runtime gave out) to what
 * the interposer keeps of it: open addressing, fixed size, no locking (the
 * caller's lock), a removed entry leaves a tomb that a later insert reuses.
 */
#ifndef XSCHED_HANDLE_TABLE_H
#define XSCHED_HANDLE_TABLE_H

#include <stdbool.h>

#define XU_TABLE_SLOTS 65536	/* a power of two: PyTorch programs make thousands of events */
#define XU_TOMB ((void *)1)

struct xu_table {
	void *key[XU_TABLE_SLOTS];
	void *val[XU_TABLE_SLOTS];
};

void *xu_tget(const struct xu_table *t, const void *k);
/* false: the table is full (the handle is not followed) */
bool xu_tput(struct xu_table *t, void *k, void *v);
void *xu_tdel(struct xu_table *t, const void *k);
/* Walking the table: the value in slot @i (NULL: none there), and its
 * removal. */
void *xu_tat(const struct xu_table *t, unsigned int i);
void *xu_tdel_at(struct xu_table *t, unsigned int i);

#endif
