#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs inside the VM with xsched_kfd.ko loaded: every libxsched VM test
# program (kselftest_harness.h: TAP), then one closing line
# "libxsched-vm: N passed, N failed, N skipped" counting their test cases.
# The runner library (vm-runner.sh, installed beside) runs each under the
# time limit and counts its TAP, a crash or a timeout as the cases it left
# unreported, a splat while it ran, and module objects left alive.
cd "$(dirname "$0")" || exit 1
# shellcheck source=tests/harness/vm-runner.sh
. ./vm-runner.sh
vr_begin libxsched-vm
for t in sim_basic priority exactly_once two_process ring_lv3; do
	echo "# libxsched-vm: $t"
	vr_mark
	vr_run "$t" "./$t"
	vr_tap "$t"
done
vr_objects
vr_end --skipped
