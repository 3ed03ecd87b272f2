#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs inside the VM with xsched_kfd.ko and xsched_sim.ko loaded: the HIP
# programs (hipcc-built, run on the stand-in runtime in lib/) without and with
# LD_PRELOAD=libxsched.so, then one line "hip-sim: N passed, N failed".
# Per program, three tests: it passes alone (its CPU reference check and exit
# status), it passes preloaded with XSCHED_LOG=debug showing its streams
# scheduled (lib/xsched-hip-hooks, written at build time when `nm -D` shows
# hipLaunchKernel, must exist), and both runs print the same checksum.
# The runner library (vm-runner.sh, installed beside) runs each program under
# the time limit; a kernel splat while a program's two runs went is one more
# failed test (PROGRAM_no_splat), module objects left alive another.
cd "$(dirname "$0")" || exit 1
# shellcheck source=tests/hip-sim/env.sh
. ./env.sh
# shellcheck source=tests/harness/vm-runner.sh
. ./vm-runner.sh
suite=hip-sim
vr_begin $suite
# Never a silent fallback: without libxsched.so, or with one built without
# the HIP interposer, every preloaded test fails (the build refuses the first).
preload=libxsched.so.0
[ -e lib/libxsched.so.0 ] || echo "# $suite: no lib/libxsched.so.0: every preloaded test fails"
[ -e lib/xsched-hip-hooks ] ||
	echo "# $suite: libxsched.so exports no hipLaunchKernel: the preloaded runs are not scheduled and fail"

for t in null_stream streams graph per_thread; do
	echo "# $suite: $t"
	vr_mark
	vr_capture "./$t"
	out=$vr_out
	rc=$vr_rc
	echo "$out" | sed 's/^/#   /'
	sum=$(echo "$out" | grep -E "^$t: checksum " | tail -n 1)
	if [ "$rc" = 0 ] && echo "$out" | grep -q "^$t: PASS$" && [ -n "$sum" ]; then
		vr_ok "$t"
	else
		vr_bad "$t" "exit $rc"
	fi
	vr_capture env LD_PRELOAD=$preload XSCHED_LOG=debug "./$t"
	pout=$vr_out
	prc=$vr_rc
	echo "$pout" | grep -v '^xsched' | sed 's/^/#   preloaded: /'
	psum=$(echo "$pout" | grep -E "^$t: checksum " | tail -n 1)
	if [ "$prc" != 0 ] || ! echo "$pout" | grep -q "^$t: PASS$"; then
		vr_bad "${t}_preloaded" "exit $prc"
	elif [ ! -e lib/xsched-hip-hooks ] ||
		! echo "$pout" | grep -E '^xsched.*(stream|queue)' | grep -qi 'hip'; then
		echo "$pout" | grep '^xsched' | head -n 20 | sed 's/^/#   /'
		vr_bad "${t}_preloaded" "no XSCHED_LOG=debug line shows a HIP stream scheduled"
	else
		vr_ok "${t}_preloaded"
	fi
	if [ -n "$sum" ] && [ "$sum" = "$psum" ]; then
		vr_ok "${t}_same_output_preloaded"
	else
		vr_bad "${t}_same_output_preloaded" "'$sum' alone, '$psum' preloaded"
	fi
	if ! vr_splat "$t"; then
		vr_bad "${t}_no_splat" "the kernel logged a splat"
	fi
done
# The stand-in's queue pool, which the interposer's queue discovery relies on:
# with GPU_MAX_HW_QUEUES=1 the three normal-priority streams of `streams` (its
# own, the null stream, two per-thread streams) share one HSA queue, and the
# high and low streams each have one of their own (priorities never share).
echo "# $suite: queue_pool"
pool=$(GPU_MAX_HW_QUEUES=1 HIP_STANDIN_TRACE=1 ./streams 2>&1 | grep '^hip-standin: stream')
echo "$pool" | sed 's/^/#   /'
verdict=$(echo "$pool" | awk '{ q[$4] = q[$4] " " $8; n[$4]++ }
	END {
		for (p in q) { split(q[p], ids, " "); for (i in ids) if (ids[i] != ids[1]) { print "class " p " has several queues"; exit } }
		if (n[-1] < 1 || n[0] < 3 || n[1] < 1) { print "streams missing: " n[-1] "/" n[0] "/" n[1]; exit }
		split(q[-1], h, " "); split(q[0], m, " "); split(q[1], l, " ")
		if (h[1] == m[1] || h[1] == l[1] || m[1] == l[1]) { print "two priorities share a queue"; exit }
		print "ok" }')
if [ "$verdict" = ok ]; then vr_ok queue_pool; else vr_bad queue_pool "$verdict"; fi

vr_objects "${suite}_objects"
vr_end
