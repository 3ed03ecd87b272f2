#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs inside the VM with Debian's amdgpu.ko and xsched_kfd.ko (kfd backend)
# loaded: the kfd platform's VM test, then one closing line
# "libxsched-kfd-vm: N passed, N failed, N skipped".  The runner library
# (vm-runner.sh, installed beside) counts one more failure for a program
# that crashes, prints no result, exits non-zero without a failed case or
# makes the kernel log a splat, and for module objects left alive.
cd "$(dirname "$0")" || exit 1
# shellcheck source=tests/harness/vm-runner.sh
. ./vm-runner.sh
vr_begin libxsched-kfd-vm
vr_mark
vr_run kfd_platform ./kfd_platform
vr_result kfd_platform libxsched-kfd-vm
vr_objects
vr_end --skipped
