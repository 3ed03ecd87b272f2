// SPDX-License-Identifier: GPL-2.0
/*
 * What the uapi programs share: a registered sim queue, user pointers that
 * fault, a page the module may read but not write, dropping CAP_SYS_NICE.
 */
#include <sys/syscall.h>
#include <linux/capability.h>

#include "xsched_util.h"

void xs_bad_pointers(void *guard, void *out[3])
{
	out[0] = NULL;
	out[1] = guard;
	out[2] = (void *)(uintptr_t)0xffff888000000000ULL;	/* kernel half */
}

int xs_make_queue(int cfd, int sfd, uint32_t ring, uint32_t *id, uint32_t *uid)
{
	int ret = xs_queue_create(sfd, ring, id, NULL);

	return ret ? ret : xs_register(cfd, sfd, *id, 0, uid);
}

void *xs_read_only_copy(const void *src, size_t len)
{
	void *p = mmap(NULL, XS_PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memcpy(p, src, len);
	if (mprotect(p, XS_PAGE, PROT_READ)) {
		munmap(p, XS_PAGE);
		return NULL;
	}
	return p;
}

int xs_drop_cap_sys_nice(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[CAP_SYS_NICE / 32].effective &= ~(1U << (CAP_SYS_NICE % 32));
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return 0;
}
