#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs inside the VM with xsched_kfd.ko loaded: every libxsched VM test
# program, then one closing line "libxsched-vm: N passed, N failed".
# Each program prints its own result line; the runner library
# (vm-runner.sh, installed beside) runs it under the time limit, fails it
# when it exits non-zero after its result line or the kernel logged a splat
# while it ran, and the suite when module objects are left alive.
cd "$(dirname "$0")" || exit 1
# shellcheck source=tests/harness/vm-runner.sh
. ./vm-runner.sh
vr_begin libxsched-vm
for t in sim_basic priority exactly_once two_process ring_lv3; do
	echo "# libxsched-vm: $t"
	vr_mark
	vr_run "$t" "./$t"
	vr_result "$t" "$t"
done
vr_objects
vr_end
