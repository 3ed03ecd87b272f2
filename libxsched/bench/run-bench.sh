#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs inside the VM with xsched_kfd.ko loaded (make bench at the top level).
cd "$(dirname "$0")" || exit 1
exec ./xsched-bench ${XSCHED_BENCH_ARGS:-} "$@"
