#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs a kselftest suite's binaries (inside the VM, with xsched_kfd.ko
# loaded), prints the TAP output of each and ends with one line
#   <suite>: N passed, N failed, N skipped
# counting individual harness test cases.  Exits non-zero if any failed.
# Plain POSIX sh: it runs under busybox.  Each suite's Makefile installs it
# beside the binaries with two files: "suite" (the name) and "tests.list".
#
# A program counts as failed too when it exits non-zero although every case
# it reported passed (or exits 4, "skip", without skipping everything), when
# the kernel logged a splat while it ran, and the suite gets one more failure
# if the module's live objects are not all back to zero at its end (both
# checked with vm-gate, which tools/qemu-run.sh installs in the guest).
#
# Usage: [SUITE=name] ./run.sh [test ...]
# Default: the programs in tests.list, else every executable here.  SUITE
# renames the suite in the closing line (the same binaries against another
# build of the module).

cd "$(dirname "$0")" || exit 1
suite=${SUITE:-$(cat suite 2>/dev/null)}
[ -n "$suite" ] || suite=kselftest
tag=${suite%-kselftest}

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

if command -v vm-gate >/dev/null 2>&1; then
	gate=1
else
	gate=0
	echo "# $tag: vm-gate not found: the kernel log and live objects are not checked"
fi

# vm-limit (installed by tools/qemu-run.sh) ends the program's whole process
# group, and gives up on one stuck in the kernel, saying which; elsewhere
# (a kernel tree's run_kselftest.sh setup) timeout(1) signals the program.
if command -v vm-limit >/dev/null 2>&1; then
	run_limited() { XSCHED_TEST_TIMEOUT=$timeout_s vm-limit "$@"; }
elif command -v timeout >/dev/null 2>&1; then
	run_limited() { timeout "$timeout_s" "$@"; }
else
	run_limited() { "$@"; }
fi

passed=0
failed=0
skipped=0
suite_start=$(date +%s)

for t in $TESTS; do
	log=./.$t.tap
	rcfile=./.$t.rc

	echo "# $tag: running $t (timeout ${timeout_s}s)"
	if [ ! -x "./$t" ]; then
		echo "not ok - $t # binary missing"
		failed=$((failed + 1))
		continue
	fi
	start=$(date +%s)
	[ "$gate" = 1 ] && mark=$(vm-gate mark)
	{ run_limited "./$t" 2>&1; echo $? >"$rcfile"; } | tee "$log"
	rc=$(cat "$rcfile")
	elapsed=$(( $(date +%s) - start ))

	plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\).*/\1/p' "$log" | head -n 1)
	skip=$(grep -c '^ok .*# SKIP' "$log")
	pass=$(( $(grep -c '^ok ' "$log") - skip ))
	fail=$(grep -c '^not ok ' "$log")
	seen=$((pass + skip + fail))

	# A binary that crashed or hit the timeout leaves cases unreported.
	if [ -n "$plan" ] && [ "$seen" -lt "$plan" ]; then
		echo "# $tag: $t reported $seen of $plan cases (exit $rc); the rest count as failed"
		fail=$((fail + plan - seen))
	elif [ -z "$plan" ] && [ "$rc" -ne 0 ]; then
		echo "# $tag: $t printed no plan (exit $rc); counted as one failure"
		fail=$((fail + 1))
	elif [ "$fail" -eq 0 ] && [ "$rc" -ne 0 ] &&
		! { [ "$rc" -eq 4 ] && [ "$skip" -eq "$seen" ]; }; then
		# The harness exits 0 when all passed and 4 when all skipped; anything
		# else (a crash in teardown, a timeout, a child left failing) is a failure.
		echo "# $tag: $t reported no failed case but exited $rc; counted as one failure"
		fail=$((fail + 1))
	fi
	if [ "$gate" = 1 ] && ! vm-gate log "$mark" "$t"; then
		echo "# $tag: the kernel logged a splat while $t ran; counted as one failure"
		fail=$((fail + 1))
	fi
	echo "# $tag: $t: $pass passed, $fail failed, $skip skipped, exit $rc, ${elapsed}s"

	passed=$((passed + pass))
	failed=$((failed + fail))
	skipped=$((skipped + skip))
	rm -f "$log" "$rcfile"
done

if [ "$gate" = 1 ] && ! vm-gate objects "$suite"; then
	echo "# $tag: module objects left alive after the suite; counted as one failure"
	failed=$((failed + 1))
fi
echo "# $tag: suite took $(( $(date +%s) - suite_start ))s"
echo "$suite: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
