// SPDX-License-Identifier: MIT
/*
 * The interposition core's set-up: a runtime registers (xsi_runtime_init():
 * its state, its real functions resolved) and goes (xsi_runtime_fini());
 * fork() keeps the core's locks consistent and gives the child empty
 * tables.  interpose.h gives the whole contract; the stream table is
 * streams.c, dispatch dispatch.c, symbol redirection symbols.c.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_state.h"

static void resolve(struct xsi_runtime *rt)
{
	void **libs = rt->state->libs;
	size_t i, nl = 0, l;

	for (l = 0; rt->libs && rt->libs[l] && nl < 8; l++) {
		void *h = dlopen(rt->libs[l], RTLD_LAZY | RTLD_GLOBAL);

		if (h)
			libs[nl++] = h;
	}
	for (i = 0; i < rt->nentries; i++) {
		struct xsi_entry *e = &rt->entries[i];
		void *f = NULL;

		if (!e->real || *e->real)
			continue;
		for (l = 0; l < nl && !f; l++)
			f = e->version ? xsi_real_dlvsym(libs[l], e->name, e->version) :
			    xsi_real_dlsym(libs[l], e->name);
		if (!f)
			f = e->version ? xsi_real_dlvsym(RTLD_NEXT, e->name, e->version) :
			    xsi_real_dlsym(RTLD_NEXT, e->name);
		if (f != e->hook)
			*e->real = f;
	}
	rt->state->nlibs = nl;
}

/* ---- fork ----------------------------------------------------------------- */

static void fork_prepare(void)
{
	unsigned int i;

	pthread_mutex_lock(&xsi_reg_lock);
	for (i = 0; i < XSI_RUNTIMES; i++)
		if (xsi_registered[i])
			pthread_mutex_lock(&xsi_registered[i]->state->lock);
}

static void fork_parent(void)
{
	unsigned int i;

	for (i = 0; i < XSI_RUNTIMES; i++)
		if (xsi_registered[i])
			pthread_mutex_unlock(&xsi_registered[i]->state->lock);
	pthread_mutex_unlock(&xsi_reg_lock);
}

/* The child starts with empty tables: the parent's streams are its. */
static void fork_child(void)
{
	unsigned int i, k;

	for (i = 0; i < XSI_RUNTIMES; i++) {
		struct xsi_state *st;

		if (!xsi_registered[i])
			continue;
		st = xsi_registered[i]->state;
		for (k = 0; k < XSI_SLOTS; k++)
			atomic_store(&st->slots[k], NULL);
		st->count = 0;
		memset(st->events, 0, sizeof(st->events));
		for (k = 0; k < XSI_DEVS; k++)
			atomic_store(&st->maxp[k], INT32_MIN);
		atomic_store(&st->captures, 0);
		/* The parent's XQueues refuse the child (-ECHILD): forgotten. */
		while (st->zombies) {
			struct xsi_zombie *z = st->zombies;

			st->zombies = z->next;
			free(z);
		}
		atomic_store(&st->has_zombies, false);
		pthread_mutex_unlock(&st->lock);
	}
	atomic_fetch_add(&xsi_fork_gen, 1);
	pthread_mutex_unlock(&xsi_reg_lock);
}

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void fork_register(void)
{
	/* After the library's handlers: prepare handlers run in reverse, so
	 * the core's lock is taken before the library's (core -> sched). */
	xs_fork_init();
	if (pthread_atfork(fork_prepare, fork_parent, fork_child))
		xs_err("pthread_atfork failed: fork() with interposed streams is unsafe");
	if (pthread_key_create(&xsi_pt_key, xsi_pt_exit))
		xs_warn("no thread-exit hook: per-thread streams outlive their threads");
}

/* ---- set-up --------------------------------------------------------------- */

int xsi_runtime_init(struct xsi_runtime *rt)
{
	unsigned int i, slot = XSI_RUNTIMES;
	int ret = 0;

	if (!rt || !rt->name || !rt->default_kind || !rt->describe ||
	    !rt->mark_record || !rt->mark_wait || !rt->mark_free)
		return -EINVAL;
	pthread_once(&fork_once, fork_register);
	pthread_mutex_lock(&xsi_reg_lock);
	for (i = 0; i < XSI_RUNTIMES; i++) {
		if (xsi_registered[i] == rt)
			goto out;
		if (!xsi_registered[i] && slot == XSI_RUNTIMES)
			slot = i;
	}
	if (slot == XSI_RUNTIMES) {
		ret = -ENOSPC;
		goto out;
	}
	rt->state = calloc(1, sizeof(*rt->state));
	if (!rt->state) {
		ret = -ENOMEM;
		goto out;
	}
	pthread_mutex_init(&rt->state->lock, NULL);
	for (i = 0; i < XSI_DEVS; i++)
		atomic_store(&rt->state->maxp[i], INT32_MIN);
	resolve(rt);
	__atomic_store_n(&xsi_registered[slot], rt, __ATOMIC_RELEASE);
	xsi_log(rt, "interposed: %zu entry points", rt->nentries);
out:
	pthread_mutex_unlock(&xsi_reg_lock);
	return ret;
}

void xsi_entries_flag(struct xsi_runtime *rt, const char *const *prefixes, uint32_t flag)
{
	size_t i, k;

	for (i = 0; i < rt->nentries; i++)
		for (k = 0; prefixes[k]; k++)
			if (!strncmp(rt->entries[i].name, prefixes[k], strlen(prefixes[k])))
				rt->entries[i].flags |= flag;
}

void xsi_runtime_fini(struct xsi_runtime *rt)
{
	struct xsi_state *st = rt->state;
	struct xsi_stream *s, *next;
	unsigned int i;

	if (!st)
		return;
	pthread_mutex_lock(&xsi_reg_lock);
	for (i = 0; i < XSI_RUNTIMES; i++)
		if (xsi_registered[i] == rt)
			__atomic_store_n(&xsi_registered[i], NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&xsi_reg_lock);
	for (i = 0; i < XSI_SLOTS; i++) {
		s = atomic_load(&st->slots[i]);
		if (!s || s == TOMB)
			continue;
		/* Caller-held: nothing is buffered, and the runtime's work is
		 * not ours to wait for (a per-thread stream's completion may
		 * not even be learnable from this thread). */
		if (s->xq && caller_held(rt))
			xsi_drop_xq(s->xq);
		else if (s->xq)
			(void)xsched_xqueue_destroy(s->xq);
		xsi_stream_free(s);
	}
	for (s = st->retired; s; s = next) {
		next = s->retired_next;
		xsi_stream_free(s);
	}
	while (st->zombies) {
		struct xsi_zombie *z = st->zombies;

		st->zombies = z->next;
		xsi_drop_xq(z->xq);
		free(z);
	}
	pthread_mutex_destroy(&st->lock);
	free(st);
	rt->state = NULL;
}
