#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run every test suite and print one closing line "N passed, N failed, N skipped"
# summing them.  Called by `make check` (which builds the module first) with
# KREL, CACHE, BUILD, KSRC and KDIR in the environment.
#
# Suites (each prints "<suite>: N passed, N failed[, N skipped]"):
#   lint               checkpatch and sparse on kmod/, Documentation parsed,
#                      the GPU tests built against Debian's HSA runtime (host)
#   libxsched-unit     libxsched core on its mock platform, ASan+UBSan (host)
#   xsched-kselftest   module kselftests, in a VM running Debian's kernel
#   libxsched-vm       libxsched on the sim GPU, same VM
#   tools              xschedctl and the demo, same VM
#   xsched-kfd-kselftest  the kfd backend, in a second VM beside the real amdgpu.ko
#   libxsched-kfd-vm   libxsched's kfd platform (module and debugger API), same VM
#   xsched-nokfd-kselftest  the uapi kselftests against the module built
#                      without KFD_SRC (kfd requests answer ENODEV)
#   vm-kfd-module      that VM booted, loaded amdgpu and the module, unloaded ours
#   vm-module          the VM booted, loaded the module and unloaded it after
#                      all of the above (no leaked reference)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
: "${KREL:?}" "${CACHE:?}" "${BUILD:?}" "${KSRC:?}" "${KDIR:?}"
logs=$BUILD/check
rm -rf "$logs"
mkdir -p "$logs"
vm=$BUILD/vm
rm -rf "$vm"
mkdir -p "$vm"
status=0

note() { echo "check: $*" >&2; }
# A suite that could not even run counts as one failure, so it cannot vanish.
broken() { echo "$1: 0 passed, 1 failed" >> "$logs/summary"; note "$1: $2"; status=1; }

note "lint (checkpatch, sparse)"
if KREL=$KREL KSRC=$KSRC KDIR=$KDIR "$top/tools/lint.sh" > "$logs/lint.log" 2>&1; then :; else status=1; fi
tail -n 1 "$logs/lint.log" | grep -E '^lint: ' >> "$logs/summary" || broken lint "no result, see $logs/lint.log"

if [ -f "$top/libxsched/Makefile" ]; then
	note "libxsched host unit tests (ASan, UBSan)"
	make -s -C "$top/libxsched" check TOP="$top" > "$logs/libxsched-unit.log" 2>&1 || status=1
	cat "$logs/libxsched-unit.log"
	grep -E '^libxsched-unit: ' "$logs/libxsched-unit.log" | tail -n 1 >> "$logs/summary" ||
		broken libxsched-unit "no result"
	if make -s -C "$top/libxsched" vmtests TOP="$top" OUT="$vm/libxsched" > "$logs/libxsched-build.log" 2>&1; then :; else
		cat "$logs/libxsched-build.log"; broken libxsched-vm "build failed"
	fi
fi

note "building kselftests"
if ! make -s -C "$top/tests/kselftest/xsched" TOP="$top" KREL="$KREL" KSFT_DIR="$KSRC/tools/testing/selftests" \
	OUT="$vm/kselftest" > "$logs/kselftest-build.log" 2>&1; then
	cat "$logs/kselftest-build.log"
	broken xsched-kselftest "build failed"
fi
cp "$top/tools/check-vm.sh" "$vm/"
mkdir -p "$vm/tools"
cp "$BUILD/tools/xschedctl" "$BUILD/tools/xsched-demo" "$top/tests/tools/run.sh" "$vm/tools/"

note "booting $KREL in QEMU with kmod/xsched_kfd.ko"
"$top/tools/qemu-run.sh" --cache "$CACHE" --krel "$KREL" --module "$top/kmod/xsched_kfd.ko" \
	--copy "$vm" --rmmod --timeout 2400 -- 'cd vm && ./check-vm.sh' 2>&1 | tee "$logs/vm.log"
rc=${PIPESTATUS[0]}
grep -E '^(xsched-kselftest|libxsched-vm|tools): [0-9]+ passed' "$logs/vm.log" >> "$logs/summary"
if [ "$rc" = 0 ]; then
	echo "vm-module: 1 passed, 0 failed" >> "$logs/summary"
else
	echo "vm-module: 0 passed, 1 failed" >> "$logs/summary"
	note "VM run exited $rc"
	status=1
fi
expect="xsched-kselftest tools"
[ -d "$vm/libxsched" ] && expect="$expect libxsched-vm"
for s in $expect; do
	grep -qE "^$s: " "$logs/summary" || broken "$s" "no result in the VM log"
done

# Built without KFD_SRC the module still loads and every kfd request answers
# ENODEV: the uapi kselftests again, against that build.
note "building the module without the kfd backend"
nokfd=$BUILD/nokfd
rm -rf "$nokfd"
mkdir -p "$nokfd/kmod"
cp "$top/Kbuild" "$nokfd/"
cp -r "$top/include" "$nokfd/"
cp "$top"/kmod/*.[ch] "$top"/kmod/Kbuild "$top"/kmod/*.sh "$nokfd/kmod/"
rm -f "$nokfd/kmod/xsched_kfd.mod.c"
if make -C "$KDIR" M="$nokfd" KFD_SRC= modules > "$logs/nokfd-build.log" 2>&1; then
	note "booting $KREL in QEMU with the module built without kfd"
	"$top/tools/qemu-run.sh" --cache "$CACHE" --krel "$KREL" --module "$nokfd/kmod/xsched_kfd.ko" \
		--copy "$vm/kselftest" --rmmod --timeout 600 -- \
		'cd kselftest && ./run.sh uapi | sed "s/^xsched-kselftest:/xsched-nokfd-kselftest:/"' \
		2>&1 | tee "$logs/vm-nokfd.log"
	grep -E '^xsched-nokfd-kselftest: [0-9]+ passed' "$logs/vm-nokfd.log" >> "$logs/summary" ||
		broken xsched-nokfd-kselftest "no result in the VM log"
	# The one test this run exists for must have run, not skipped.
	grep -qE '^ok [0-9]+ uapi.kfd_attach_without_kfd_backend_is_enodev$' "$logs/vm-nokfd.log" ||
		broken xsched-nokfd-kselftest "the ENODEV test did not pass (was kfd built in?)"
else
	cat "$logs/nokfd-build.log"
	broken xsched-nokfd-kselftest "build failed"
fi

# The kfd backend beside Debian's real amdgpu.ko (no GPU: attach and error
# paths run, hardware tests skip with the reason).
if [ -n "${KFD_SRC:-}" ]; then
	note "building kfd kselftests"
	vmk=$BUILD/vm-kfd
	rm -rf "$vmk"
	kfdlib=0
	if [ -f "$top/libxsched/Makefile" ]; then
		if make -s -C "$top/libxsched" vmtests-kfd TOP="$top" OUT="$vmk/libxsched_kfd" \
			> "$logs/libxsched-kfd-build.log" 2>&1; then
			kfdlib=1
		else
			cat "$logs/libxsched-kfd-build.log"
			broken libxsched-kfd-vm "build failed"
		fi
	fi
	if make -s -C "$top/tests/kselftest/xsched_kfd" TOP="$top" KREL="$KREL" \
		KSFT_DIR="$KSRC/tools/testing/selftests" OUT="$vmk/xsched_kfd" \
		> "$logs/kfd-build.log" 2>&1; then
		kfdcopy=(--copy "$vmk/xsched_kfd")
		kfdcmd='cd xsched_kfd && ./run.sh; cd ..'
		if [ "$kfdlib" = 1 ]; then
			kfdcopy+=(--copy "$vmk/libxsched_kfd")
			kfdcmd="$kfdcmd; cd libxsched_kfd && ./run.sh; cd .."
		fi
		note "booting $KREL in QEMU with amdgpu.ko and kmod/xsched_kfd.ko"
		"$top/tools/qemu-run.sh" --cache "$CACHE" --krel "$KREL" --amdgpu \
			--module "$top/kmod/xsched_kfd.ko" "${kfdcopy[@]}" --rmmod \
			--timeout 1200 -- "$kfdcmd; exit 0" 2>&1 | tee "$logs/vm-kfd.log"
		rc=${PIPESTATUS[0]}
		grep -E '^xsched-kfd-kselftest: [0-9]+ passed' "$logs/vm-kfd.log" >> "$logs/summary" ||
			broken xsched-kfd-kselftest "no result in the VM log"
		if [ "$kfdlib" = 1 ]; then
			grep -E '^libxsched-kfd-vm: [0-9]+ passed' "$logs/vm-kfd.log" | tail -n 1 >> "$logs/summary" ||
				broken libxsched-kfd-vm "no result in the VM log"
		fi
		# The suites' own failures are counted above; this is boot, load, unload.
		if [ "$rc" = 0 ]; then
			echo "vm-kfd-module: 1 passed, 0 failed" >> "$logs/summary"
		else
			broken vm-kfd-module "VM exited $rc (boot, load or unload)"
		fi
	else
		cat "$logs/kfd-build.log"
		broken xsched-kfd-kselftest "build failed"
		[ "$kfdlib" = 1 ] && broken libxsched-kfd-vm "not run: the kfd kselftests did not build"
	fi
else
	note "KFD_SRC not set: kfd backend not built, its suite skipped"
	echo "xsched-kfd-kselftest: 0 passed, 0 failed, 1 skipped" >> "$logs/summary"
	[ -f "$top/libxsched/Makefile" ] &&
		echo "libxsched-kfd-vm: 0 passed, 0 failed, 1 skipped" >> "$logs/summary"
fi

echo
echo "suites:"
sed 's/^/  /' "$logs/summary"
awk '
	{ for (i = 2; i <= NF; i++) {
		v = $i; w = $(i + 1); gsub(/,/, "", w)
		if (w == "passed") p += v; else if (w == "failed") f += v; else if (w == "skipped") s += v
	} }
	END { printf "%d passed, %d failed, %d skipped\n", p, f, s; exit (f > 0) }
' "$logs/summary" > "$logs/result" || status=1
cat "$logs/result"
exit $status
