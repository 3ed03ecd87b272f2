// SPDX-License-Identifier: GPL-2.0
/*
 * Backend registration: a backend in a module of its own (the sim,
 * xsched_sim.ko) registers its ops here, and the core reaches it only through
 * them.  The kfd backend is part of the core and registers nothing.
 *
 * XSCHED_IOC_REGISTER looks a registered backend up and holds a reference on
 * its module while it binds; each queue it binds holds one until it is freed
 * (xsched_queue_create/xsched_queue_free), so a backend module cannot go away
 * under its queues, and its exit (which unregisters) runs only once none is
 * left.
 */
#include <linux/module.h>
#include <linux/mutex.h>

#include "xsched.h"

static DEFINE_MUTEX(xsched_backends_lock);	/* protects xsched_backends[] */
static const struct xsched_backend_ops *xsched_backends[XSCHED_BACKEND_NR];

int xsched_backend_register(u32 backend, const struct xsched_backend_ops *ops)
{
	int ret = 0;

	/* The kfd backend lives in the core. */
	if (backend != XSCHED_BACKEND_SIM || !ops->bind)
		return -EINVAL;
	mutex_lock(&xsched_backends_lock);
	if (xsched_backends[backend])
		ret = -EBUSY;
	else
		xsched_backends[backend] = ops;
	mutex_unlock(&xsched_backends_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(xsched_backend_register);

void xsched_backend_unregister(u32 backend, const struct xsched_backend_ops *ops)
{
	mutex_lock(&xsched_backends_lock);
	if (!WARN_ON(backend >= XSCHED_BACKEND_NR ||
		     xsched_backends[backend] != ops))
		xsched_backends[backend] = NULL;
	mutex_unlock(&xsched_backends_lock);
}
EXPORT_SYMBOL_GPL(xsched_backend_unregister);

/* The backend's ops with a reference on its module, or NULL if none is loaded. */
const struct xsched_backend_ops *xsched_backend_get(u32 backend)
{
	const struct xsched_backend_ops *ops = NULL;

	if (backend >= XSCHED_BACKEND_NR)
		return NULL;
	mutex_lock(&xsched_backends_lock);
	if (xsched_backends[backend] &&
	    try_module_get(xsched_backends[backend]->owner))
		ops = xsched_backends[backend];
	mutex_unlock(&xsched_backends_lock);
	return ops;
}

void xsched_backend_put(const struct xsched_backend_ops *ops)
{
	module_put(ops->owner);
}

bool xsched_backend_loaded(u32 backend)
{
	bool loaded;

	mutex_lock(&xsched_backends_lock);
	loaded = backend < XSCHED_BACKEND_NR && xsched_backends[backend];
	mutex_unlock(&xsched_backends_lock);
	return loaded;
}
