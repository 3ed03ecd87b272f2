#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs inside the VM with xsched_kfd.ko loaded: every libxsched VM test
# program, then one closing line "libxsched-vm: N passed, N failed".
cd "$(dirname "$0")" || exit 1
passed=0
failed=0
for t in sim_basic priority exactly_once two_process; do
	echo "# libxsched-vm: $t"
	out=$(./$t 2>&1)
	rc=$?
	echo "$out"
	line=$(echo "$out" | grep -E "^$t: [0-9]+ passed, [0-9]+ failed" | tail -n 1)
	if [ -z "$line" ]; then
		echo "# $t: no result line (exit $rc)"
		failed=$((failed + 1))
		continue
	fi
	p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed.*/\1/')
	f=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed.*/\2/')
	passed=$((passed + p))
	failed=$((failed + f))
done
echo "libxsched-vm: $passed passed, $failed failed"
[ "$failed" = 0 ]
