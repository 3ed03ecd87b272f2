#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs inside the VM with Debian's amdgpu.ko and xsched_kfd.ko (kfd backend)
# loaded: the kfd platform's VM test, then one closing line
# "libxsched-kfd-vm: N passed, N failed, N skipped".  A test program that
# crashes or prints no result counts as one failure.
cd "$(dirname "$0")" || exit 1
out=$(./kfd_platform 2>&1)
rc=$?
echo "$out"
line=$(echo "$out" | grep -E '^libxsched-kfd-vm: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' | tail -n 1)
if [ -z "$line" ]; then
	echo "# kfd_platform: no result line (exit $rc)"
	echo "libxsched-kfd-vm: 0 passed, 1 failed, 0 skipped"
	exit 1
fi
echo "$line" | grep -q ' 0 failed'
