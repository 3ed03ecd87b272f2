// SPDX-License-Identifier: GPL-2.0
/*
 * Per-user limits of the sim: /dev/xsched_sim is open to every user, so
 * what one user holds (sim fds, queues, device memory) is counted per uid
 * and bounded by the parameters below, past which a call gets EDQUOT unless
 * its caller has CAP_SYS_RESOURCE.  The entries live under xsim.users_lock,
 * taken inside xsim_vm.lock and never with xsim.lock held.
 */
#include <linux/capability.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "sim.h"

static unsigned int sim_user_queues = 4096;
module_param(sim_user_queues, uint, 0644);
MODULE_PARM_DESC(sim_user_queues,
		 "Sim queues one user may have at once; more give EDQUOT, except with CAP_SYS_RESOURCE (default 4096)");

static unsigned int sim_user_fds = 1024;
module_param(sim_user_fds, uint, 0644);
MODULE_PARM_DESC(sim_user_fds,
		 "Sim contexts (open sim fds, and closed ones a registration holds) one user may have; more give EDQUOT, except with CAP_SYS_RESOURCE (default 1024)");

static unsigned int sim_user_mem_mb = 256;
module_param(sim_user_mem_mb, uint, 0644);
MODULE_PARM_DESC(sim_user_mem_mb,
		 "Sim device memory one user may hold, MiB; more gives EDQUOT, except with CAP_SYS_RESOURCE (default 256)");

/*
 * The calling user's entry for one more sim fd, created on first use:
 * -EDQUOT past sim_user_fds (unless the caller has CAP_SYS_RESOURCE).
 */
struct xsim_user *xsim_user_get(kuid_t uid)
{
	struct xsim_user *u;

	/* capable() only past the limit: it audits every denial. */
	mutex_lock(&xsim.users_lock);
	list_for_each_entry(u, &xsim.users, node) {
		if (uid_eq(u->uid, uid)) {
			if (u->vms >= READ_ONCE(sim_user_fds) &&
			    !capable(CAP_SYS_RESOURCE))
				u = ERR_PTR(-EDQUOT);
			else
				u->vms++;
			goto out;
		}
	}
	if (!READ_ONCE(sim_user_fds) && !capable(CAP_SYS_RESOURCE)) {
		u = ERR_PTR(-EDQUOT);
		goto out;
	}
	/* Shared by the user's sim fds: not charged to one of them. */
	u = kzalloc(sizeof(*u), GFP_KERNEL);
	if (!u) {
		u = ERR_PTR(-ENOMEM);
		goto out;
	}
	u->uid = uid;
	u->vms = 1;
	list_add(&u->node, &xsim.users);
out:
	mutex_unlock(&xsim.users_lock);
	return u;
}

void xsim_user_put(struct xsim_user *u)
{
	mutex_lock(&xsim.users_lock);
	if (!--u->vms) {
		WARN_ON(u->queues || u->mem_bytes);
		list_del(&u->node);
		kfree(u);
	}
	mutex_unlock(&xsim.users_lock);
}

/*
 * Charge @queues queues and @bytes of memory to @u: -EDQUOT past
 * sim_user_queues or sim_user_mem_mb, unless the caller has
 * CAP_SYS_RESOURCE.  Negative values uncharge.
 */
int xsim_user_charge(struct xsim_user *u, int queues, s64 bytes)
{
	int ret = 0;

	mutex_lock(&xsim.users_lock);
	if ((queues > 0 && u->queues + queues > READ_ONCE(sim_user_queues)) ||
	    (bytes > 0 && u->mem_bytes + bytes >
			  (u64)READ_ONCE(sim_user_mem_mb) << 20)) {
		if (!capable(CAP_SYS_RESOURCE)) {
			ret = -EDQUOT;
			goto out;
		}
	}
	u->queues += queues;
	u->mem_bytes += bytes;
out:
	mutex_unlock(&xsim.users_lock);
	return ret;
}
