# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# The in-VM runner: what every VM suite's run.sh does around its programs,
# written once.  A suite's run.sh sources it (it is installed beside it) and
# keeps only its list of programs and its own verdicts:
#
#   . ./vm-runner.sh
#   vr_begin libxsched-vm
#   for t in sim_basic priority; do
#           vr_mark
#           vr_run "$t" "./$t"
#           vr_result "$t" "$t"
#   done
#   vr_objects
#   vr_end
#
# Plain POSIX sh: it runs under busybox.  Around each program it takes a
# time limit (tools/vm-limit: the program's whole session is signalled at
# the limit, and one stuck in the kernel is named and given up on; outside
# the VM timeout(1)), marks the kernel log before the run and scans it
# after (tools/vm-gate: a splat is pinned on the program), and at the end
# of the suite checks the module's live objects and prints the one closing
# line tools/check.sh counts:
#
#   SUITE: N passed, N failed[, N skipped]
#
#   vr_begin SUITE [TAG]   start a suite; TAG prefixes its "# TAG: ..." notes
#                          (default SUITE); says so when vm-gate is missing
#   vr_limit SECONDS       each program's limit (default XSCHED_TEST_TIMEOUT,
#                          else vm-limit's own 600 s)
#   vr_mark                mark the kernel log (before a program, or a few
#                          that vr_splat is to check together)
#   vr_run NAME CMD...     run CMD under the limit, its output shown as it
#                          comes and kept in $vr_out; $vr_rc its status,
#                          $vr_elapsed its seconds
#   vr_capture CMD...      the same, the output only kept in $vr_out
#   vr_splat NAME          the kernel log since the mark: 1, the splat lines
#                          printed ("# splat (NAME): ..."), if the kernel
#                          logged a splat
#   vr_tap NAME            count a kselftest program's TAP in $vr_out
#   vr_result NAME LINE    count the result line "LINE: N passed, N failed[, N
#                          skipped]" of $vr_out
#   vr_ok NAME, vr_bad NAME WHY   one test of the suite's own verdicts
#   vr_count P F S         add to the suite's counts
#   vr_objects [WHAT]      one more failure, named WHAT if given (a "not ok
#                          WHAT" line), when module objects are left alive
#   vr_end [--skipped]     the closing line (with the skipped count; then
#                          $VR_NOTE after a tab when set); returns non-zero
#                          when any test failed
# vr_tap and vr_result count one more failure for a program that crashed,
# timed out or exited non-zero without a failed case, and for a splat while
# it ran; a suite with verdicts of its own calls vr_splat itself.

vr_begin() {
	vr_suite=$1
	vr_tag=${2:-$1}
	vr_passed=0
	vr_failed=0
	vr_skipped=0
	vr_start=$(date +%s)
	vr_timeout=${XSCHED_TEST_TIMEOUT:-}
	if command -v vm-gate >/dev/null 2>&1; then
		vr_gate=1
	else
		vr_gate=0
		echo "# $vr_tag: vm-gate not found: the kernel log and live objects are not checked"
	fi
}

vr_limit() { vr_timeout=$1; }

# CMD under the limit: vm-limit (installed by tools/qemu-run.sh) ends the
# program's whole session; elsewhere (a kernel tree's run_kselftest.sh,
# a machine with a GPU) timeout(1) signals the program.
vr_limited() {
	if command -v vm-limit >/dev/null 2>&1; then
		if [ -n "$vr_timeout" ]; then
			XSCHED_TEST_TIMEOUT=$vr_timeout vm-limit "$@"
		else
			vm-limit "$@"
		fi
	elif [ -n "$vr_timeout" ] && command -v timeout >/dev/null 2>&1; then
		timeout "$vr_timeout" "$@"
	else
		"$@"
	fi
}

vr_mark() {
	vr_mark_at=
	if [ "$vr_gate" = 1 ]; then
		vr_mark_at=$(vm-gate mark)
	fi
}

vr_run() {
	_log=./.$1.log
	shift
	_t0=$(date +%s)
	{ vr_limited "$@" 2>&1; echo $? > "$_log.rc"; } | tee "$_log"
	vr_rc=$(cat "$_log.rc")
	vr_out=$(cat "$_log")
	vr_elapsed=$(( $(date +%s) - _t0 ))
	rm -f "$_log" "$_log.rc"
}

vr_capture() {
	vr_out=$(vr_limited "$@" 2>&1)
	vr_rc=$?
}

vr_splat() {
	[ "$vr_gate" = 1 ] || return 0
	vm-gate log "$vr_mark_at" "$1"
}

vr_count() {
	vr_passed=$((vr_passed + $1))
	vr_failed=$((vr_failed + $2))
	vr_skipped=$((vr_skipped + ${3:-0}))
}

vr_ok() {
	echo "ok $1"
	vr_count 1 0 0
}

vr_bad() {
	echo "not ok $1: $2"
	vr_count 0 1 0
}

# A kselftest program's TAP: its cases; a crash or a timeout leaves cases
# unreported, which count as failed; the harness exits 0 when all passed
# and 4 when all skipped, anything else with no failed case is one failure.
vr_tap() {
	_plan=$(echo "$vr_out" | sed -n 's/^1\.\.\([0-9][0-9]*\).*/\1/p' | head -n 1)
	_skip=$(echo "$vr_out" | grep -c '^ok .*# SKIP')
	_pass=$(( $(echo "$vr_out" | grep -c '^ok ') - _skip ))
	_fail=$(echo "$vr_out" | grep -c '^not ok ')
	_seen=$((_pass + _skip + _fail))
	if [ -n "$_plan" ] && [ "$_seen" -lt "$_plan" ]; then
		echo "# $vr_tag: $1 reported $_seen of $_plan cases (exit $vr_rc); the rest count as failed"
		_fail=$((_fail + _plan - _seen))
	elif [ -z "$_plan" ] && [ "$vr_rc" -ne 0 ]; then
		echo "# $vr_tag: $1 printed no plan (exit $vr_rc); counted as one failure"
		_fail=$((_fail + 1))
	elif [ "$_fail" -eq 0 ] && [ "$vr_rc" -ne 0 ] &&
		! { [ "$vr_rc" -eq 4 ] && [ "$_skip" -eq "$_seen" ]; }; then
		echo "# $vr_tag: $1 reported no failed case but exited $vr_rc; counted as one failure"
		_fail=$((_fail + 1))
	fi
	if ! vr_splat "$1"; then
		echo "# $vr_tag: the kernel logged a splat while $1 ran; counted as one failure"
		_fail=$((_fail + 1))
	fi
	echo "# $vr_tag: $1: $_pass passed, $_fail failed, $_skip skipped, exit $vr_rc, ${vr_elapsed}s"
	vr_count "$_pass" "$_fail" "$_skip"
}

# A program that prints its own "LINE: N passed, N failed[, N skipped]"
# (the last such line counts): no line is one failure, and so is a non-zero
# exit without a failed case.
vr_result() {
	_line=$(echo "$vr_out" | grep -E "^$2: [0-9]+ passed, [0-9]+ failed" | tail -n 1)
	if [ -z "$_line" ]; then
		echo "# $1: no result line (exit $vr_rc)"
		_pass=0 _fail=1 _skip=0
	else
		_pass=$(echo "$_line" | sed -E 's/.*: ([0-9]+) passed.*/\1/')
		_fail=$(echo "$_line" | sed -E 's/.*: [0-9]+ passed, ([0-9]+) failed.*/\1/')
		_skip=$(echo "$_line" | sed -E -n 's/.*, ([0-9]+) skipped.*/\1/p')
		_skip=${_skip:-0}
		if [ "$_fail" = 0 ] && [ "$vr_rc" != 0 ]; then
			echo "# $1: no failed case but exit $vr_rc; counted as one failure"
			_fail=1
		fi
	fi
	if ! vr_splat "$1"; then
		echo "# $1: the kernel logged a splat; counted as one failure"
		_fail=$((_fail + 1))
	fi
	vr_count "$_pass" "$_fail" "$_skip"
}

vr_objects() {
	[ "$vr_gate" = 1 ] || return 0
	vm-gate objects "$vr_suite" && return 0
	if [ -n "${1:-}" ]; then
		vr_bad "$1" "module objects left alive after the suite"
	else
		echo "# $vr_tag: module objects left alive after the suite; counted as one failure"
		vr_count 0 1 0
	fi
}

vr_end() {
	echo "# $vr_tag: suite took $(( $(date +%s) - vr_start ))s"
	if [ "${1:-}" = --skipped ]; then
		printf '%s' "$vr_suite: $vr_passed passed, $vr_failed failed, $vr_skipped skipped"
	else
		printf '%s' "$vr_suite: $vr_passed passed, $vr_failed failed"
	fi
	printf '%s\n' "${VR_NOTE:+	$VR_NOTE}"
	[ "$vr_failed" -eq 0 ]
}
