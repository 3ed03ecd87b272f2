#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs inside the VM: xschedctl and the demo against the loaded module.
# Last line: "tools: N passed, N failed".  Each test runs in a shell of its
# own under the time limit (XSCHED_TEST_TIMEOUT, here 300 s unless set; the
# runner library, vm-runner.sh, installed beside): a hang fails that test,
# named, and the suite goes on; so does a kernel splat while it ran.
here=$(cd "$(dirname "$0")" && pwd)
t() {
	name=$1
	shift
	vr_mark
	vr_capture sh "$0" --one "$@"
	if [ "$vr_rc" = 0 ] && vr_out=$(vr_splat "$name"); then
		vr_ok "$name"
	else
		echo "not ok $name"
		echo "$vr_out" | sed 's/^/#   /'
		vr_count 0 1 0
	fi
}

version() { ./xschedctl version | grep -qx 'api 1' && ./xschedctl version | grep -q '^backends sim'; }
bad_knob() { ./xschedctl fault no_such_knob 1; [ $? -eq 2 ]; }
bad_value() { ./xschedctl fault fail_save -3; [ $? -eq 2 ]; }
knob_roundtrip() {
	./xschedctl fault save_delay_us 7 &&
	[ "$(cat /sys/kernel/debug/xsched/sim/save_delay_us)" = 7 ] &&
	./xschedctl fault save_delay_us 0
}
# The demo's SAVE case must show up as suspend events with saved bytes.
demo_traced() {
	./xschedctl trace on || return 1
	./xsched-demo -n 4 -p 2000 -b 20 > demo.out || { cat demo.out; return 1; }
	./xschedctl trace off
	grep -q '^save (Lv3)' demo.out || { cat demo.out; return 1; }
	./xschedctl trace show > trace.out
	grep -q 'xsched_queue_suspend: queue=[0-9]* mode=save latency_ns=[0-9]* saved_bytes=[1-9]' trace.out &&
	grep -q 'xsched_queue_suspend: queue=[0-9]* mode=drain' trace.out &&
	grep -q 'xsched_queue_resume: queue=' trace.out || { tail -20 trace.out; return 1; }
}
# The demo's HWS table: with batches at most 2 runlist updates per urgent
# kernel (one stop, one resume pass), without more.  Updates/request is the
# next to last column.
demo_hws_table() {
	grep -q '^HWS model' demo.out &&
	awk '$1 == 16 && $2 == "on" { on = $(NF-1) } $1 == 16 && $2 == "off" { off = $(NF-1) }
	     END { exit !(on > 0 && on <= 2.0 && off > on) }' demo.out ||
		{ cat demo.out; return 1; }
}
hws_ctl() {
	./xschedctl hws on && ./xschedctl hws show | grep -qx 'hws 1' &&
	./xschedctl batch off && ./xschedctl batch show | grep -qx 'arbiter_batch N' &&
	./xschedctl batch on && ./xschedctl hws off &&
	./xschedctl hws show | grep -qx 'hws 0' &&
	./xschedctl hws show | grep -q '^runlist_updates [0-9]' &&
	{ ./xschedctl hws maybe; [ $? -eq 2 ]; }
}
# Each "hws show" line is the value of the file it names (after the demo,
# runlist_updates is its count of device-wide preemptions, not 0).
hws_show_values() {
	out=$(./xschedctl hws show) || return 1
	for k in hws hws_update_us runlist_updates; do
		v=$(echo "$out" | sed -n "s/^$k //p")
		[ -n "$v" ] && [ "$v" = "$(cat /sys/kernel/debug/xsched/sim/$k)" ] ||
			{ echo "$out"; echo "$k: expected $(cat /sys/kernel/debug/xsched/sim/$k)"; return 1; }
	done
}
# ---- xschedctl list, top, timeline against xsched-load's three queues ----
# Start the load for $1 seconds in the background; sets lp (its pid) and the
# uids batch, urgent, manual.
load_start() {
	rm -f load.out
	./xsched-load "$1" > load.out &
	lp=$!
	n=0
	until grep -q '^pid ' load.out 2>/dev/null; do
		n=$((n + 1))
		[ $n -lt 100 ] || { echo "xsched-load did not start"; cat load.out; return 1; }
		sleep 0.1
	done
	batch=$(awk '$1 == "batch" { print $2 }' load.out)
	urgent=$(awk '$1 == "urgent" { print $2 }' load.out)
	manual=$(awk '$1 == "manual" { print $2 }' load.out)
}
list_columns() {
	load_start 4 || return 1
	sleep 1.5
	./xschedctl list > list.out || { cat list.out; return 1; }
	wait $lp || { echo "xsched-load failed"; return 1; }
	cat list.out
	head -n 1 list.out | grep -qE '^ +UID +PID +COMMAND +BACKEND +LEVEL +MODE +PRIO +ARBITER +STATE +SUSPENDS +LAST_US +TOTAL_US +SAVED_BYTES$' ||
		{ echo "header changed"; return 1; }
	# The owner, level, priority and arbiter column of each queue; the
	# manual queue was suspended by its owner with SAVE.
	awk -v b="$batch" -v u="$urgent" -v m="$manual" -v p="$lp" '
		$2 == p && $3 == "xsched-load" && $4 == "sim" && $5 == "Lv3" { ok[$1] = 1 }
		$1 == b && $7 == -1 && ($8 == "run" || $8 == "stopped") { n++ }
		$1 == u && $7 == 5 && $8 == "run" && $6 == "-" { n++ }
		$1 == m && $7 == -2 && $8 == "-" && $6 == "save" && $10 > 0 && $12 > 0 { n++ }
		$1 == b || $1 == m { saved += $13 }
		END { exit !(n == 3 && ok[b] && ok[u] && ok[m] && saved > 0) }' list.out
}
list_json_parses() {
	load_start 4 || return 1
	sleep 1.5
	./xschedctl list --json > list.json || { cat list.json; return 1; }
	./xschedctl list > list.out
	wait $lp || { echo "xsched-load failed"; return 1; }
	./jsonflat list.json queues > list.flat || return 1
	cat list.flat
	# Every documented key in every row, and one row per table row.
	for k in uid pid command backend level modes mode priority arbitrated \
		arbiter state suspends resumes faults arbiter_suspends last_suspend_ns \
		max_suspend_ns total_suspend_ns stopped_ns saved_bytes last_error rptr wptr; do
		[ "$(grep -cE "(	|^)$k=" list.flat)" -eq "$(($(wc -l < list.out) - 1))" ] ||
			{ echo "key $k missing in a row"; return 1; }
	done
	grep -q "^uid=$urgent	pid=$lp	command=xsched-load	backend=sim	level=3	modes=drain,save	mode=null	priority=5	arbitrated=true	arbiter=run	state=active	" list.flat &&
	grep -q "^uid=$manual	pid=$lp	.*	mode=save	priority=-2	arbitrated=false	arbiter=null	" list.flat ||
		{ echo "urgent or manual row wrong"; return 1; }
}
# top on a terminal (a pty: ptyscreen reads the screen it leaves): refreshed
# in place, sorted by priority, the manual queue suspended part of the time.
top_on_terminal() {
	load_start 8 || return 1
	sleep 1
	./ptyscreen -r 12 -c 100 -t 4 -- ./xschedctl top -d 0.5 > screen.out 2> pty.err
	rc=$?
	wait $lp || { echo "xsched-load failed"; return 1; }
	cat screen.out pty.err
	[ $rc -eq 0 ] || { echo "top exited $rc after q"; return 1; }
	awk '{ f = $3; s = $5 } END { exit !(f >= 4 && s == 0) }' pty.err ||
		{ echo "not refreshed in place"; return 1; }
	head -n 1 screen.out | grep -q '^xschedctl top: 3 queues, every 0.5 s (q quits)$' &&
	sed -n 2p screen.out | grep -qE '^ +UID +PID +COMMAND +PRIO +ARBITER +STATE +RUN% +SUSP% +SUSP/s +MEAN_SUSP_US$' ||
		{ echo "header wrong"; return 1; }
	# Rows 3-5: urgent (5), batch (-1), manual (-2), in that order.
	[ "$(sed -n '3,5p' screen.out | awk '{ printf "%s ", $1 }')" = "$urgent $batch $manual " ] ||
		{ echo "not sorted by priority"; return 1; }
	# Columns: 7 RUN%, 8 SUSP%, 9 SUSP/s.  The manual queue is suspended
	# every other 50 ms tick; the urgent one never.
	awk -v u="$urgent" -v m="$manual" '
		$1 == m && $8 > 10 && $8 < 90 && $9 > 0 { okm = 1 }
		$1 == u && $8 == 0.0 && $9 == 0.0 { oku = 1 }
		END { exit !(okm && oku) }' screen.out || { echo "shares wrong"; return 1; }
}
top_batch_mode() {
	out=$(./xschedctl top -b -n 2 -d 0.2) || return 1
	echo "$out"
	[ "$(echo "$out" | grep -c '^xschedctl top: ')" -eq 2 ] && ! echo "$out" | grep -q "$(printf '\033')"
}
# The timeline: valid JSON, the arbiter's suspends of the batch queue name the
# urgent queue and its priority, the owner's suspends of the manual queue name
# it, every queue has a named track, and no two slices of a track overlap.
timeline_events() {
	./xschedctl timeline -o tl.json -- ./xsched-load 3 > load.out || return 1
	batch=$(awk '$1 == "batch" { print $2 }' load.out)
	urgent=$(awk '$1 == "urgent" { print $2 }' load.out)
	manual=$(awk '$1 == "manual" { print $2 }' load.out)
	lp=$(awk '$1 == "pid" { print $2 }' load.out)
	./jsonflat tl.json traceEvents > tl.flat || return 1
	awk -F'\t' -v b="$batch" -v u="$urgent" -v m="$manual" -v p="$lp" '
		{ delete e; for (i = 1; i <= NF; i++) { k = $i; sub(/=.*/, "", k); v = $i; sub(/^[^=]*=/, "", v); e[k] = v } }
		e["ph"] == "X" && e["name"] == "suspended" && e["tid"] == b && e["pid"] == p &&
		    e["args.by"] == "arbiter" && e["args.busy_queue"] == u && e["args.busy_prio"] == 5 &&
		    e["args.latency_us"] + 0 > 0 && e["args.suspended_us"] + 0 > 0 { arb++ }
		e["ph"] == "X" && e["name"] == "suspending" && e["tid"] == b && e["args.by"] == "arbiter" { sing++ }
		e["ph"] == "X" && e["name"] == "suspended" && e["tid"] == m && e["args.by"] == "caller" &&
		    e["args.caller_pid"] == p && e["args.mode"] == "save" { caller++ }
		e["ph"] == "X" && e["name"] == "running" && e["tid"] == u { run++ }
		e["ph"] == "M" && e["name"] == "thread_name" && e["args.name"] ~ /^queue [0-9]+ prio -?[0-9]+ sim/ { named[e["tid"]] = 1 }
		e["ph"] == "M" && e["name"] == "process_name" && e["pid"] == p && e["args.name"] == "xsched-load" { proc = 1 }
		e["ph"] == "X" { n++; tid[n] = e["tid"]; ts[n] = e["ts"] + 0; dur[n] = e["dur"] + 0 }
		END {
			printf "arbiter %d suspending %d caller %d running %d\n", arb, sing, caller, run
			for (i = 1; i <= n; i++)
				for (j = 1; j <= n; j++)
					if (i != j && tid[i] == tid[j] && ts[j] > ts[i] + 0.001 &&
					    ts[j] < ts[i] + dur[i] - 0.001) {
						print "overlap on track " tid[i] ": " ts[i] "+" dur[i] " and " ts[j]
						bad = 1
					}
			exit !(arb > 0 && sing > 0 && caller > 0 && run > 0 && named[b] && named[u] &&
			       named[m] && proc && !bad)
		}' tl.flat || { head -n 40 tl.flat; return 1; }
}
# libxsched's decisions (XSCHED_LOG=trace) in the same timeline: two XQueues
# of one process (../libxsched/decision_load), the batch one held by the
# policy because the urgent one (priority 10) had work, on the batch XQueue's
# own track; the module's suspend of that queue on the module's track.
timeline_lib_decisions() {
	XSCHED_LOG=trace ./xschedctl timeline -o tll.json -- ../libxsched/decision_load > dl.out ||
		{ cat dl.out; return 1; }
	cat dl.out
	batch=$(awk '$1 == "batch" { print $2 }' dl.out)
	urgent=$(awk '$1 == "urgent" { print $2 }' dl.out)
	lp=$(awk '$1 == "pid" { print $2 }' dl.out)
	grep -qE '^decisions suspend [1-9][0-9]* resume [1-9]' dl.out ||
		{ echo "the library made no suspend and resume decision"; return 1; }
	./jsonflat tll.json traceEvents > tll.flat || return 1
	# XQueue tracks are 0x40000000 + the XQueue id (timeline.c).
	awk -F'\t' -v b="$batch" -v u="$urgent" -v p="$lp" -v base=1073741824 '
		{ delete e; for (i = 1; i <= NF; i++) { k = $i; sub(/=.*/, "", k); v = $i; sub(/^[^=]*=/, "", v); e[k] = v } }
		e["ph"] == "X" && e["name"] == "held" && e["pid"] == p && e["tid"] == base + b &&
		    e["args.queue"] == b && e["args.prio"] == 0 && e["args.level"] == 3 &&
		    e["args.by_queue"] == u && e["args.by_prio"] == 10 &&
		    e["args.reason"] == "higher-priority queue busy" &&
		    e["args.resume_reason"] == "higher-priority queues idle" && e["dur"] + 0 > 0 { held++ }
		e["ph"] == "X" && e["name"] == "held" && e["args.queue"] == u { urgheld++ }
		e["ph"] == "M" && e["name"] == "thread_name" && e["tid"] == base + b &&
		    e["args.name"] == "libxsched q" b " prio 0 Lv3" { named = 1 }
		e["ph"] == "M" && e["name"] == "process_name" && e["pid"] == p &&
		    e["args.name"] == "decision_load" { proc = 1 }
		e["ph"] == "X" && e["name"] == "suspended" && e["pid"] == p && e["args.by"] == "caller" &&
		    e["args.caller_pid"] == p { mod++ }
		END {
			printf "held %d (urgent %d), track named %d, process named %d, module suspends %d\n",
			       held, urgheld, named, proc, mod
			exit !(held > 0 && !urgheld && named && proc && mod > 0)
		}' tll.flat || { grep -E 'name=(held|thread_name|process_name)' tll.flat | head -n 20; return 1; }
}
timeline_needs_output() { ./xschedctl timeline -t 1; [ $? -eq 2 ]; }
# Clear words and exit statuses: 5 not allowed, 4 not mounted (3, the module
# not loaded, runs in the DKMS VM before the module is loaded).
# A user without privileges: nobody, through su (busybox's setpriv cannot
# change uid); the initramfs has no passwd file of its own.
as_nobody() {
	grep -q '^nobody:' /etc/passwd 2>/dev/null ||
		echo 'nobody:x:65534:65534:nobody:/tmp:/bin/sh' >> /etc/passwd
	su nobody -s /bin/sh -c "$*"
}
not_root_is_permission() {
	out=$(as_nobody ./xschedctl list 2>&1)
	rc=$?
	echo "$out"
	[ $rc -eq 5 ] && echo "$out" | grep -q 'permission denied' || return 1
	out=$(as_nobody ./xschedctl timeline -o /tmp/x.json -t 1 2>&1)
	rc=$?
	echo "$out"
	[ $rc -eq 5 ] && echo "$out" | grep -q 'permission denied'
}
no_debugfs_is_not_mounted() {
	out=$(unshare -m sh -c 'umount -l /sys/kernel/debug && ./xschedctl list' 2>&1)
	rc=$?
	echo "$out"
	[ $rc -eq 4 ] && echo "$out" | grep -q 'debugfs is not mounted'
}
no_tracefs_is_not_mounted() {
	out=$(unshare -m sh -c 'umount -l /sys/kernel/tracing && umount -l /sys/kernel/debug &&
		./xschedctl timeline -o /tmp/x.json -t 1' 2>&1)
	rc=$?
	echo "$out"
	[ $rc -eq 4 ] && echo "$out" | grep -q 'tracefs is not mounted'
}
# ---- xschedctl set-priority / suspend / resume (XSCHED_IOC_ADMIN) ----
# Column of queue $1 in `xschedctl list`: 6 MODE, 7 PRIO, 9 STATE.
list_col() { ./xschedctl list | awk -v u="$1" -v c="$2" '$1 == u { print $c }'; }
# rc CODE CMD...: CMD exits with CODE.
rc() { want=$1; shift; "$@"; got=$?; [ "$got" -eq "$want" ] || { echo "exit $got, expected $want: $*"; return 1; }; }
admin_commands() {
	rm -f load.out
	./xsched-load 8 plain > load.out &
	lp=$!
	n=0
	until grep -q '^pid ' load.out 2>/dev/null; do
		n=$((n + 1))
		[ $n -lt 100 ] || { echo "xsched-load did not start"; cat load.out; return 1; }
		sleep 0.1
	done
	plain=$(awk '$1 == "plain" { print $2 }' load.out)
	batch=$(awk '$1 == "batch" { print $2 }' load.out)
	sleep 0.5
	out=$(./xschedctl suspend "$plain") || { echo "$out"; return 1; }
	echo "$out"
	echo "$out" | grep -qE "^queue $plain suspended \(save\) in [0-9.]+ us, [0-9]+ bytes saved$" &&
	[ "$(list_col "$plain" 9)" = suspended ] && [ "$(list_col "$plain" 6)" = save ] ||
		{ ./xschedctl list; return 1; }
	rc 1 ./xschedctl suspend "$plain" || return 1
	rc 5 as_nobody ./xschedctl resume "$plain" || return 1
	[ "$(list_col "$plain" 9)" = suspended ] || { echo "nobody resumed it"; return 1; }
	out=$(./xschedctl resume "$plain") || { echo "$out"; return 1; }
	echo "$out" | grep -qE "^queue $plain resumed after [0-9.]+ us$" &&
	[ "$(list_col "$plain" 9)" = active ] || { echo "$out"; ./xschedctl list; return 1; }
	rc 1 ./xschedctl resume "$plain" || return 1
	./xschedctl suspend "$plain" --mode drain > /dev/null &&
	[ "$(list_col "$plain" 6)" = drain ] && ./xschedctl resume "$plain" > /dev/null ||
		{ ./xschedctl list; return 1; }
	./xschedctl set-priority "$plain" 7 | grep -qx "queue $plain priority 7" &&
	[ "$(list_col "$plain" 7)" = 7 ] || { ./xschedctl list; return 1; }
	rc 5 as_nobody ./xschedctl set-priority "$plain" -3 || return 1
	[ "$(list_col "$plain" 7)" = 7 ] || { echo "nobody changed the priority"; return 1; }
	out=$(./xschedctl suspend "$batch" 2>&1)
	[ $? -eq 1 ] && echo "$out" | grep -q arbitrated || { echo "$out"; return 1; }
	out=$(./xschedctl resume 999999 2>&1)
	[ $? -eq 1 ] && echo "$out" | grep -q 'no registered queue' || { echo "$out"; return 1; }
	rc 2 ./xschedctl set-priority "$plain" 101 &&
	rc 2 ./xschedctl suspend "$plain" --mode fast &&
	rc 2 ./xschedctl resume x || return 1
	# Module not loaded: no /dev/xsched and no /sys/module/xsched_kfd.
	out=$(unshare -m sh -c 'mount -t tmpfs none /sys/module && mount -t tmpfs none /dev &&
		./xschedctl resume 1' 2>&1)
	[ $? -eq 3 ] && echo "$out" | grep -q 'not loaded' || { echo "$out"; return 1; }
	wait $lp || { echo "xsched-load failed"; return 1; }
}
# A program stuck in the kernel (D state: xsched-stuck's suspend sleeps in
# the KFD model's update_queue, as KFD waits for a preemption fence) under
# vm-limit with a 2 s limit: named, with its kernel stack, 10 s after its
# SIGKILL, and the runner goes on (137) while it is still stuck.  Without
# the kfd backend (check-debug's sim-only module) there is nothing to run.
stuck_program_is_named() {
	[ -e /sys/module/xsched_kfd/parameters/kfd_model ] || return 0
	start=$(date +%s)
	out=$(XSCHED_TEST_TIMEOUT=2 vm-limit ./xsched-stuck 60000 2>&1)
	rc=$?
	took=$(($(date +%s) - start))
	echo 0 > /sys/module/xsched_kfd/parameters/kfd_model
	# Out of the kernel (its fds closed) before the next test.
	while grep -qx xsched-stuck /proc/[0-9]*/comm 2>/dev/null; do sleep 1; done
	[ "$rc" = 137 ] && [ "$took" -lt 50 ] &&
		echo "$out" | grep -q 'xsched-stuck: still running 10s after SIGKILL: stuck in the kernel' &&
		echo "$out" | grep -q 'state D' ||
		{ echo "exit $rc after ${took}s"; echo "$out"; return 1; }
}
queues_empty_after() { [ "$(./xschedctl queues | wc -l)" -eq 1 ]; }
# Runs last in the VM: after every suite, no object may be left alive.
no_leaked_objects() {
	cat /sys/kernel/debug/xsched/objects && vm-gate objects "all suites"
}

# "run.sh --one FUNCTION": the one test the runner runs under its limit.
if [ "${1:-}" = --one ]; then
	shift
	"$@"
	exit
fi

# shellcheck source=tests/harness/vm-runner.sh
. "$here/vm-runner.sh"
vr_begin tools
vr_limit "${XSCHED_TEST_TIMEOUT:-300}"

t xschedctl_version version
t xschedctl_rejects_unknown_knob bad_knob
t xschedctl_rejects_negative_value bad_value
t xschedctl_sets_knob knob_roundtrip
t demo_suspends_show_in_trace demo_traced
t demo_prints_hws_table demo_hws_table
t xschedctl_hws_and_batch hws_ctl
t xschedctl_hws_show_reads_each_counter hws_show_values
t xschedctl_list_columns list_columns
t xschedctl_list_json_parses list_json_parses
t xschedctl_top_on_a_terminal top_on_terminal
t xschedctl_top_batch_mode top_batch_mode
t xschedctl_timeline_events timeline_events
t xschedctl_timeline_has_libxsched_decisions timeline_lib_decisions
t xschedctl_timeline_needs_output timeline_needs_output
t xschedctl_not_root_is_permission_denied not_root_is_permission
t xschedctl_without_debugfs_says_not_mounted no_debugfs_is_not_mounted
t xschedctl_without_tracefs_says_not_mounted no_tracefs_is_not_mounted
t xschedctl_admin_commands admin_commands
t vm_limit_names_a_program_stuck_in_the_kernel stuck_program_is_named
t queues_table_empty_after_demo queues_empty_after
t no_leaked_objects_after_all_suites no_leaked_objects
vr_end
