/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fixture of the uapi programs (uapi.c and uapi_*.c): a client, the sim
 * GPU and a PROT_NONE page, so that every test of them is uapi.<name>
 * whichever program runs it.  Their helpers are the library's (lib/uapi.c).
 */
#ifndef XSCHED_UAPI_H
#define XSCHED_UAPI_H

#include "xsched_test.h"

FIXTURE(uapi) {
	int cfd;
	struct xsched_version ver;
	int sfd;
	struct xsched_sim_info sim;
	void *guard;		/* a PROT_NONE page: a user pointer that faults */
};

FIXTURE_SETUP(uapi)
{
	XS_CLIENT_OPEN_OR_SKIP(self->cfd, self->ver);
	XS_SIM_OPEN_OR_SKIP(self->sfd, self->sim);
	self->guard = mmap(NULL, XS_PAGE, PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->guard);
}

FIXTURE_TEARDOWN(uapi)
{
	if (self->cfd >= 0)
		close(self->cfd);
	/* 0 if the client was missing: setup skipped before the sim */
	if (self->sfd > 0)
		close(self->sfd);
}

#endif /* XSCHED_UAPI_H */
