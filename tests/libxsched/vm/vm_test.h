/* SPDX-License-Identifier: MIT */
/*
 * What every libxsched VM test includes: the helpers (vmutil.h) and the
 * kernel's kselftest_harness.h (TEST_F, ASSERT_*, TAP), with the fixture
 * each test gets: the sim GPU opened in the test's own process, its shape
 * read.  A failed test leaves its XQueues alone (closing the sim under them
 * is not what it tests); its process ends with it.
 */
#ifndef XSCHED_VM_TEST_H
#define XSCHED_VM_TEST_H

#include "vmutil.h"

#include "kselftest_harness.h"

FIXTURE(vm) {
	struct vm_env env;
};

FIXTURE_SETUP(vm)
{
	ASSERT_TRUE(vm_env_open(&self->env))
		TH_LOG("expected the sim GPU (/dev/xsched, /dev/xsched_sim) open");
}

FIXTURE_TEARDOWN(vm)
{
	if (_metadata->exit_code == KSFT_PASS)
		vm_env_close(&self->env);
}

#endif
