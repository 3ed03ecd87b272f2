#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs inside the VM with xsched_kfd.ko loaded: every libxsched VM test
# program, then one closing line "libxsched-vm: N passed, N failed".
# A program also fails when it exits non-zero after its result line, when the
# kernel logged a splat while it ran, and the suite when the module's live
# objects are not back to zero at its end (vm-gate, from tools/qemu-run.sh).
cd "$(dirname "$0")" || exit 1
suite=libxsched-vm
# Each program under vm-limit (XSCHED_TEST_TIMEOUT): a hang fails it.
limited=vm-limit
command -v vm-limit >/dev/null 2>&1 || limited=
passed=0
failed=0
gate=0
if command -v vm-gate >/dev/null 2>&1; then
	gate=1
else
	echo "# $suite: vm-gate not found: the kernel log and live objects are not checked"
fi
for t in sim_basic priority exactly_once two_process ring_lv3; do
	echo "# $suite: $t"
	[ "$gate" = 1 ] && mark=$(vm-gate mark)
	out=$($limited ./$t 2>&1)
	rc=$?
	echo "$out"
	line=$(echo "$out" | grep -E "^$t: [0-9]+ passed, [0-9]+ failed" | tail -n 1)
	if [ -z "$line" ]; then
		echo "# $t: no result line (exit $rc)"
		p=0 f=1
	else
		p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed.*/\1/')
		f=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed.*/\2/')
		if [ "$f" = 0 ] && [ "$rc" != 0 ]; then
			echo "# $t: no failed case but exit $rc; counted as one failure"
			f=1
		fi
	fi
	if [ "$gate" = 1 ] && ! vm-gate log "$mark" "$t"; then
		echo "# $t: the kernel logged a splat; counted as one failure"
		f=$((f + 1))
	fi
	passed=$((passed + p))
	failed=$((failed + f))
done
if [ "$gate" = 1 ] && ! vm-gate objects "$suite"; then
	echo "# $suite: module objects left alive after the suite; counted as one failure"
	failed=$((failed + 1))
fi
echo "$suite: $passed passed, $failed failed"
[ "$failed" = 0 ]
