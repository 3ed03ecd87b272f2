#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs inside the VM with Debian's amdgpu.ko and xsched_kfd.ko (kfd backend)
# loaded: the kfd platform's VM test (kselftest_harness.h: TAP), then one
# closing line "libxsched-kfd-vm: N passed, N failed, N skipped" counting
# its test cases.  The runner library (vm-runner.sh, installed beside) counts
# the cases a crash or a timeout left unreported as failed, one more failure
# for a non-zero exit without a failed case or a kernel splat, and for
# module objects left alive.
cd "$(dirname "$0")" || exit 1
# shellcheck source=tests/harness/vm-runner.sh
. ./vm-runner.sh
vr_begin libxsched-kfd-vm
vr_mark
vr_run kfd_platform ./kfd_platform
vr_tap kfd_platform
vr_objects
vr_end --skipped
