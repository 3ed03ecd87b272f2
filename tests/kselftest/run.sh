#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs a kselftest suite's binaries (inside the VM, with xsched_kfd.ko
# loaded), prints the TAP output of each and ends with one line
#   <suite>: N passed, N failed, N skipped
# counting individual harness test cases.  Exits non-zero if any failed.
# Each suite's Makefile installs it beside the binaries with the runner
# library (tests/harness/vm-runner.sh: the limit, the splat gate, the TAP
# count, the object check, the closing line) and two files: "suite" (the
# name) and "tests.list".
#
# Usage: [SUITE=name] ./run.sh [test ...]
# Default: the programs in tests.list, else every executable here.  SUITE
# renames the suite in the closing line (the same binaries against another
# build of the module).

cd "$(dirname "$0")" || exit 1
# shellcheck source=tests/harness/vm-runner.sh
. ./vm-runner.sh
suite=${SUITE:-$(cat suite 2>/dev/null)}
[ -n "$suite" ] || suite=kselftest

if [ $# -gt 0 ]; then
	TESTS=$*
elif [ -f tests.list ]; then
	TESTS=$(cat tests.list)
else
	TESTS=
	for f in *; do
		[ -f "$f" ] && [ -x "$f" ] && [ "$f" != run.sh ] && TESTS="$TESTS $f"
	done
fi

timeout_s=$(sed -n 's/^timeout=//p' settings 2>/dev/null)
[ -n "$timeout_s" ] || timeout_s=180

# The sim's fault knobs and the queue table live in debugfs.
if [ ! -d /sys/kernel/debug/xsched ]; then
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
fi

vr_begin "$suite" "${suite%-kselftest}"
vr_limit "$timeout_s"
for t in $TESTS; do
	echo "# $vr_tag: running $t (timeout ${timeout_s}s)"
	if [ ! -x "./$t" ]; then
		echo "not ok - $t # binary missing"
		vr_count 0 1 0
		continue
	fi
	vr_mark
	vr_run "$t" "./$t"
	vr_tap "$t"
done
vr_objects
vr_end --skipped
