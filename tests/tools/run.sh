#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs inside the VM: xschedctl and the demo against the loaded module.
# Last line: "tools: N passed, N failed".  A test also fails when the kernel
# logged a splat while it ran (vm-gate, installed by tools/qemu-run.sh).
pass=0
fail=0
gate=0
if command -v vm-gate >/dev/null 2>&1; then
	gate=1
else
	echo "# tools: vm-gate not found: the kernel log is not checked"
fi
t() {
	name=$1
	shift
	[ "$gate" = 1 ] && mark=$(vm-gate mark)
	if out=$("$@" 2>&1) && { [ "$gate" = 0 ] || out=$(vm-gate log "$mark" "$name"); }; then
		echo "ok $name"
		pass=$((pass + 1))
	else
		echo "not ok $name"
		echo "$out" | sed 's/^/#   /'
		fail=$((fail + 1))
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
queues_empty_after() { [ "$(./xschedctl queues | wc -l)" -eq 1 ]; }
# Runs last in the VM: after every suite, no object may be left alive.
no_leaked_objects() {
	cat /sys/kernel/debug/xsched/objects && vm-gate objects "all suites"
}

t xschedctl_version version
t xschedctl_rejects_unknown_knob bad_knob
t xschedctl_rejects_negative_value bad_value
t xschedctl_sets_knob knob_roundtrip
t demo_suspends_show_in_trace demo_traced
t demo_prints_hws_table demo_hws_table
t xschedctl_hws_and_batch hws_ctl
t xschedctl_hws_show_reads_each_counter hws_show_values
t queues_table_empty_after_demo queues_empty_after
t no_leaked_objects_after_all_suites no_leaked_objects
echo "tools: $pass passed, $fail failed"
[ $fail -eq 0 ]
