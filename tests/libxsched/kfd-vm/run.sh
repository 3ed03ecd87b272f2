#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs inside the VM with Debian's amdgpu.ko and xsched_kfd.ko (kfd backend)
# loaded: the kfd platform's VM test, then one closing line
# "libxsched-kfd-vm: N passed, N failed, N skipped" (the last such line
# counts).  A test program that crashes, prints no result, exits non-zero
# without a failed case, or makes the kernel log a splat counts as one more
# failure, and so do module objects left alive at the end (vm-gate).
cd "$(dirname "$0")" || exit 1
suite=libxsched-kfd-vm
# Each program under vm-limit (XSCHED_TEST_TIMEOUT): a hang fails it.
limited=vm-limit
command -v vm-limit >/dev/null 2>&1 || limited=
gate=0
if command -v vm-gate >/dev/null 2>&1; then
	gate=1
	mark=$(vm-gate mark)
else
	echo "# $suite: vm-gate not found: the kernel log and live objects are not checked"
fi
out=$($limited ./kfd_platform 2>&1)
rc=$?
echo "$out"
line=$(echo "$out" | grep -E "^$suite: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped" | tail -n 1)
if [ -z "$line" ]; then
	echo "# kfd_platform: no result line (exit $rc)"
	p=0 f=1 s=0
else
	p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1/')
	f=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\2/')
	s=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\3/')
	if [ "$f" = 0 ] && [ "$rc" != 0 ]; then
		echo "# kfd_platform: no failed case but exit $rc; counted as one failure"
		f=1
	fi
fi
if [ "$gate" = 1 ]; then
	vm-gate log "$mark" kfd_platform || { echo "# kfd_platform: kernel splat; one more failure"; f=$((f + 1)); }
	vm-gate objects "$suite" || { echo "# $suite: objects left alive; one more failure"; f=$((f + 1)); }
fi
echo "$suite: $p passed, $f failed, $s skipped"
[ "$f" = 0 ]
