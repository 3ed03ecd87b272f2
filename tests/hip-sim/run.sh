#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs inside the VM with xsched_kfd.ko and xsched_sim.ko loaded: the HIP
# programs (hipcc-built, run on the stand-in runtime in lib/) without and with
# LD_PRELOAD=libxsched.so, then one line "hip-sim: N passed, N failed".
# Per program, three tests: it passes alone (its CPU reference check and exit
# status), it passes preloaded with XSCHED_LOG=debug showing its streams
# scheduled (lib/xsched-hip-hooks, written at build time when `nm -D` shows
# hipLaunchKernel, must exist), and both runs print the same checksum.
# Each program is also checked for kernel splats, the suite for module
# objects left alive (vm-gate), as in tests/libxsched/vm/run.sh.
cd "$(dirname "$0")" || exit 1
. ./env.sh
suite=hip-sim
passed=0
failed=0
gate=0
command -v vm-gate >/dev/null 2>&1 && gate=1
[ "$gate" = 1 ] || echo "# $suite: vm-gate not found: the kernel log and live objects are not checked"
# Never a silent fallback: without libxsched.so, or with one built without
# the HIP interposer, every preloaded test fails (the build refuses the first).
preload=libxsched.so.0
[ -e lib/libxsched.so.0 ] || echo "# $suite: no lib/libxsched.so.0: every preloaded test fails"
[ -e lib/xsched-hip-hooks ] ||
	echo "# $suite: libxsched.so exports no hipLaunchKernel: the preloaded runs are not scheduled and fail"

# Each program under vm-limit (XSCHED_TEST_TIMEOUT): a hang fails it.
limited=vm-limit
command -v vm-limit >/dev/null 2>&1 || limited=
ok() { echo "ok $1"; passed=$((passed + 1)); }
bad() { echo "not ok $1: $2"; failed=$((failed + 1)); }

for t in null_stream streams graph per_thread; do
	echo "# $suite: $t"
	[ "$gate" = 1 ] && mark=$(vm-gate mark)
	out=$($limited ./$t 2>&1)
	rc=$?
	echo "$out" | sed 's/^/#   /'
	sum=$(echo "$out" | grep -E "^$t: checksum " | tail -n 1)
	if [ "$rc" = 0 ] && echo "$out" | grep -q "^$t: PASS$" && [ -n "$sum" ]; then
		ok "$t"
	else
		bad "$t" "exit $rc"
	fi
	pout=$(LD_PRELOAD=$preload XSCHED_LOG=debug $limited ./$t 2>&1)
	prc=$?
	echo "$pout" | grep -v '^xsched' | sed 's/^/#   preloaded: /'
	psum=$(echo "$pout" | grep -E "^$t: checksum " | tail -n 1)
	if [ "$prc" != 0 ] || ! echo "$pout" | grep -q "^$t: PASS$"; then
		bad "${t}_preloaded" "exit $prc"
	elif [ ! -e lib/xsched-hip-hooks ] ||
		! echo "$pout" | grep -E '^xsched.*(stream|queue)' | grep -qi 'hip'; then
		echo "$pout" | grep '^xsched' | head -n 20 | sed 's/^/#   /'
		bad "${t}_preloaded" "no XSCHED_LOG=debug line shows a HIP stream scheduled"
	else
		ok "${t}_preloaded"
	fi
	if [ -n "$sum" ] && [ "$sum" = "$psum" ]; then
		ok "${t}_same_output_preloaded"
	else
		bad "${t}_same_output_preloaded" "'$sum' alone, '$psum' preloaded"
	fi
	if [ "$gate" = 1 ] && ! vm-gate log "$mark" "$t"; then
		bad "${t}_no_splat" "the kernel logged a splat"
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
if [ "$verdict" = ok ]; then ok queue_pool; else bad queue_pool "$verdict"; fi

if [ "$gate" = 1 ] && ! vm-gate objects "$suite"; then
	bad "${suite}_objects" "module objects left alive after the suite"
fi
echo "$suite: $passed passed, $failed failed"
[ "$failed" = 0 ]
