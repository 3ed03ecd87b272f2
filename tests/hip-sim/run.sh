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

# A runtime that ignores stream priority (ROCm from mid 2026:
# DEBUG_HIP_IGNORE_STREAM_PRIORITY on by default; the stand-in's mode
# HIP_STANDIN_PRIORITY_IGNORED=1).  Alone, every stream of `streams` shares
# the one queue of the normal class (the mode collapses the classes).
echo "# $suite: queue_pool_priority_ignored"
pool=$(HIP_STANDIN_PRIORITY_IGNORED=1 GPU_MAX_HW_QUEUES=1 HIP_STANDIN_TRACE=1 ./streams 2>&1 |
	grep '^hip-standin: stream')
echo "$pool" | sed 's/^/#   /'
verdict=$(echo "$pool" | awk '{ n++; q[$8] = 1; if ($12 != 1) c++ }
	END { k = 0; for (i in q) k++
	      if (n < 5) print "streams missing: " n; else if (k != 1 || c) print k " queues, " c " outside the normal class"; else print "ok" }')
if [ "$verdict" = ok ]; then vr_ok queue_pool_priority_ignored; else vr_bad queue_pool_priority_ignored "$verdict"; fi

# Preloaded, on that runtime: libxsched tells it to keep its priority classes
# (DEBUG_HIP_IGNORE_STREAM_PRIORITY=0 before it initialises), so the urgent
# stream has an HSA queue of its own (high and low one each, the normal ones
# share the cap of 1), a stream goes to Lv3 (its queue is not shared), and
# the urgent stream's priority is the one the program asked for.  Every
# urgent burst holds here (XSCHED_HIP_HOLD=1): the hold is what is checked,
# not the choice of it (tests/libxsched/hip/test_bursts.c).
echo "# $suite: urgent_stream_has_its_own_queue_priority_ignored"
vr_mark
vr_capture env LD_PRELOAD=$preload HIP_STANDIN_PRIORITY_IGNORED=1 GPU_MAX_HW_QUEUES=1 \
	HIP_STANDIN_TRACE=1 XSCHED_LOG=debug XSCHED_HIP_HOLD=1 ./streams
pout=$vr_out
prc=$vr_rc
pool=$(echo "$pout" | grep '^hip-standin: stream')
echo "$pool" | sed 's/^/#   /'
echo "$pout" | grep -E 'created \(hooked\)|now Lv|preemptor|sharing|held' | head -n 30 | sed 's/^/#   /'
verdict=$(echo "$pool" | awk '{ if ($4 == -1) { h[$8] = 1; nh++ } else o[$8] = 1 }
	END { if (!nh) { print "no urgent stream"; exit }
	      for (i in h) if (i in o) { print "the urgent stream shares HSA queue " i; exit }
	      print "ok" }')
if [ "$verdict" != ok ]; then
	vr_bad urgent_stream_has_its_own_queue_priority_ignored "$verdict"
elif [ "$prc" != 0 ] || ! echo "$pout" | grep -q '^streams: PASS$'; then
	vr_bad urgent_stream_has_its_own_queue_priority_ignored "exit $prc"
elif ! echo "$pout" | grep -q 'created (hooked), prio 1,'; then
	vr_bad urgent_stream_has_its_own_queue_priority_ignored "no stream created with xsched priority 1 (HIP -1)"
elif ! echo "$pout" | grep -qE 'hsa: q[0-9]+: now Lv3'; then
	vr_bad urgent_stream_has_its_own_queue_priority_ignored "no stream reached Lv3"
elif ! { s0=$(echo "$pout" | sed -n 's/.*hip: stream \(0x[0-9a-f]*\): created (hooked), prio 0,.*/\1/p' | head -n 1)
	 [ -n "$s0" ] && echo "$pout" | grep -qE "hip: hip[A-Za-z0-9_]+ stream $s0 -> q[0-9]+: held"; }; then
	# Only the urgent stream (1) is above the normal one (0): its holds.
	vr_bad urgent_stream_has_its_own_queue_priority_ignored "the normal stream was never held behind the urgent one"
else
	vr_ok urgent_stream_has_its_own_queue_priority_ignored
fi
if ! vr_splat urgent_stream_has_its_own_queue_priority_ignored; then
	vr_bad urgent_stream_has_its_own_queue_priority_ignored_no_splat "the kernel logged a splat"
fi

vr_objects "${suite}_objects"
vr_end
