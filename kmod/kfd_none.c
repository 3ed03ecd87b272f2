// SPDX-License-Identifier: GPL-2.0
/*
 * The kfd backend when the module was built without KFD_SRC: it needs
 * KFD's private headers from the amdgpu source that matches the running
 * amdgpu.ko, so without them every kfd request answers ENODEV.
 */
#include <linux/err.h>

#include "xsched.h"

bool xkfd_available(void)
{
	return false;
}

int xkfd_attach(struct xkfd_attach **attach, struct xsched_kfd_attach *a)
{
	return -ENODEV;
}

void xkfd_detach(struct xkfd_attach *attach)
{
}

struct xsched_queue *xkfd_register(struct xkfd_attach *attach, u64 ring,
				   s32 priority)
{
	return ERR_PTR(-ENODEV);
}

void xkfd_debugfs(struct dentry *root)
{
}
