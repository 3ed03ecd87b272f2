#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs inside the VM (make bench): the fused-kernel case through the HIP path,
# one row per level: native (stand-in runtime alone), default (libxsched.so
# preloaded: its holds chosen per burst), Lv1 (XSCHED_LEVEL=1) and Lv3
# (XSCHED_LEVEL=3), both holding on every burst, when the preloaded
# libxsched has HIP hooks (lib/xsched-hip-hooks, written at build time from
# `nm -D`); without them the preload schedules nothing and its rows say so.
# Ratios are urgent latency beside the batch kernel over alone, in one run.
cd "$(dirname "$0")" || exit 1
. ./env.sh
echo "hip-fused: batch MARK kernel on a low-priority stream, short urgent kernels on a high one"
printf '%-10s %5s %9s %9s %6s %9s %9s %8s %8s %9s  %s\n' level n P50-alone P99-alone n \
	P50-busy P99-busy P50x P99x batch-ms batch
./hip-fused-bench native "$@"
if [ -e lib/libxsched.so.0 ]; then
	[ -e lib/xsched-hip-hooks ] ||
		echo "# libxsched.so has no HIP hooks yet (no hipLaunchKernel export): Lv1/Lv3 rows run unscheduled"
	# The level rows hold on every urgent burst (XSCHED_HIP_HOLD=1): what
	# a level does; the default row, what the library's choice per burst
	# makes of it (Documentation/hip.rst).
	LD_PRELOAD=libxsched.so.0 XSCHED_HIP_HOLD= ./hip-fused-bench default "$@"
	LD_PRELOAD=libxsched.so.0 XSCHED_HIP_HOLD=1 XSCHED_LEVEL=1 ./hip-fused-bench Lv1 "$@"
	# The Lv3 row's evidence, without per-call debug lines in the timing:
	# which streams got a preemptor and went to Lv3 (info), and each
	# decision as a trace line in a file (XSCHED_TRACE_MARKER).
	: > /tmp/hip-lv3.trace	# XSCHED_TRACE_MARKER names a file that exists
	LD_PRELOAD=libxsched.so.0 XSCHED_HIP_HOLD=1 XSCHED_LEVEL=3 XSCHED_LOG=info,trace \
		XSCHED_TRACE_MARKER=/tmp/hip-lv3.trace ./hip-fused-bench Lv3 "$@" 2>/tmp/hip-lv3.log
	rc=$?
	grep -E 'hsa: q[0-9]+: (preemptor|now Lv)' /tmp/hip-lv3.log | sed 's/^xsched\[[^]]*\] /# /'
	echo "# Lv3 decisions: $(grep -c 'level=3 action=suspend' /tmp/hip-lv3.trace 2>/dev/null) suspends," \
		"$(grep -c 'level=3 action=resume' /tmp/hip-lv3.trace 2>/dev/null) resumes"
	[ $rc = 0 ] || { echo "# hip-fused-bench Lv3 exited $rc"; tail -n 20 /tmp/hip-lv3.log; exit $rc; }
fi
