#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kselftests the way upstream selftests run: tests/kselftest/xsched is
# copied into a copy of the unpacked Debian source's tools/testing/selftests
# (the cache itself is shared and never written), built and installed with
# the kernel's own selftests Makefile (lib.mk, TARGETS=xsched, O=), the uAPI
# header where `make headers` would put it, and the uapi programs (uapi and
# uapi_*, as the kernel's kselftest-list.txt names them) run in the VM
# through the kernel's own run_kselftest.sh, whose TAP output is checked.
# The runner wraps each test in `/usr/bin/timeout --foreground`, which
# busybox's timeout does not know: the guest removes that link, so the
# runner runs the test without it (qemu-run's --timeout still bounds it).
# Prints "ksft-tree: N passed, N failed" last.
#
# Environment (as tools/check.sh has it): KREL CACHE BUILD KSRC; MODULE
# (default kmod/xsched_kfd.ko; the sim test device, xsched_sim.ko, beside
# it in sim/).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
: "${KREL:?}" "${CACHE:?}" "${BUILD:?}" "${KSRC:?}"
module=${MODULE:-$top/kmod/xsched_kfd.ko}
sim_module=${module%/*}/sim/xsched_sim.ko
out=$BUILD/ksft-tree
tree=$out/linux
obj=$out/obj
pass=0
fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "not ok $1"; shift; [ $# -gt 0 ] && echo "# $*"; fail=$((fail + 1)); }
finish() { echo "ksft-tree: $pass passed, $fail failed"; exit $((fail > 0)); }

rm -rf "$out"
mkdir -p "$tree/tools/testing" "$tree/scripts" "$obj/usr/include/linux"
cp -r "$KSRC/tools/testing/selftests" "$tree/tools/testing/"
cp "$KSRC/scripts/subarch.include" "$tree/scripts/"
cp -r "$top/tests/kselftest/xsched" "$tree/tools/testing/selftests/"
cp "$top/include/uapi/linux/xsched_kfd.h" "$top/include/uapi/linux/xsched_sim.h" \
	"$obj/usr/include/linux/"

if make -C "$tree/tools/testing/selftests" TARGETS=xsched O="$obj" install \
	> "$out/build.log" 2>&1; then
	ok ksft_tree_builds_with_lib_mk
else
	tail -30 "$out/build.log"
	bad ksft_tree_builds_with_lib_mk "see $out/build.log"
	finish
fi
inst=$obj/kselftest/kselftest_install
# The uapi programs: uapi and uapi_*, one list entry each.
mapfile -t uapi < <(grep -sE '^xsched:uapi(_[a-z_]+)?$' "$inst/kselftest-list.txt")
installed=1
for t in "${uapi[@]}"; do
	[ -x "$inst/xsched/${t#xsched:}" ] || installed=0
done
if [ -x "$inst/run_kselftest.sh" ] && [ "$installed" = 1 ] &&
	[ -f "$inst/xsched/settings" ] && [ -f "$inst/xsched/config" ] &&
	grep -qx 'xsched:uapi' "$inst/kselftest-list.txt"; then
	ok ksft_tree_installs_runner_list_settings_config
else
	ls -R "$inst" | head -30
	bad ksft_tree_installs_runner_list_settings_config
	finish
fi

"$top/tools/qemu-run.sh" --cache "$CACHE" --krel "$KREL" --module "$module" \
	--module "$sim_module" --copy "$inst" --rmmod --timeout 600 -- \
	"rm -f /usr/bin/timeout && cd kselftest_install && ./run_kselftest.sh$(printf ' -t %s' "${uapi[@]}")" \
	> "$out/vm.log" 2>&1
rc=$?
cat "$out/vm.log"
# The kernel runner's TAP: a plan, and each target passing as a whole.
passed=1
for t in "${uapi[@]}"; do
	grep -qE "^ok [0-9]+ selftests: xsched: ${t#xsched:}\$" "$out/vm.log" || passed=0
done
if grep -q '^TAP version 13' "$out/vm.log" &&
	grep -qx "1\.\.${#uapi[@]}" "$out/vm.log" && [ "$passed" = 1 ]; then
	ok ksft_tree_runner_passes_xsched_uapi
else
	bad ksft_tree_runner_passes_xsched_uapi "(see $out/vm.log)"
fi
[ "$rc" = 0 ] || bad ksft_tree_vm "the VM exited $rc (see $out/vm.log)"
finish
