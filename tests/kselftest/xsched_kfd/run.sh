#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs the kfd backend kselftests in this folder (xsched_kfd.ko loaded beside
# amdgpu.ko), prints the TAP output of each binary and ends with one line
#   xsched-kfd-kselftest: N passed, N failed, N skipped
# counting individual test cases.  Exits non-zero if any failed.  Plain POSIX
# sh: it runs under busybox in the VM.
#
# Usage: ./run.sh [test ...]        (default: all of them)

cd "$(dirname "$0")" || exit 1

TESTS=${*:-"kfd_attach kfd_hw"}

timeout_s=$(sed -n 's/^timeout=//p' settings 2>/dev/null)
[ -n "$timeout_s" ] || timeout_s=300

if command -v timeout >/dev/null 2>&1; then
	run_limited() { timeout "$timeout_s" "$@"; }
else
	run_limited() { "$@"; }
fi

passed=0
failed=0
skipped=0

for t in $TESTS; do
	log=./.$t.tap
	rcfile=./.$t.rc

	echo "# xsched-kfd: running $t (timeout ${timeout_s}s)"
	if [ ! -x "./$t" ]; then
		echo "not ok - $t # binary missing"
		failed=$((failed + 1))
		continue
	fi
	{ run_limited "./$t" 2>&1; echo $? >"$rcfile"; } | tee "$log"
	rc=$(cat "$rcfile")

	plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\).*/\1/p' "$log" | head -n 1)
	skip=$(grep -c '^ok .*# SKIP' "$log")
	pass=$(( $(grep -c '^ok ' "$log") - skip ))
	fail=$(grep -c '^not ok ' "$log")
	seen=$((pass + skip + fail))

	# A binary that crashed or timed out leaves cases unreported.
	if [ -n "$plan" ] && [ "$seen" -lt "$plan" ]; then
		echo "# xsched-kfd: $t reported $seen of $plan cases (exit $rc); the rest count as failed"
		fail=$((fail + plan - seen))
	elif [ -z "$plan" ] && [ "$rc" -ne 0 ]; then
		echo "# xsched-kfd: $t printed no plan (exit $rc); counted as one failure"
		fail=$((fail + 1))
	fi
	echo "# xsched-kfd: $t: $pass passed, $fail failed, $skip skipped, exit $rc"

	passed=$((passed + pass))
	failed=$((failed + fail))
	skipped=$((skipped + skip))
	rm -f "$log" "$rcfile"
done

echo "xsched-kfd-kselftest: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
