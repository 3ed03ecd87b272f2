#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run every test suite and print one closing line "N passed, N failed, N skipped"
# summing the behavioural tests of every suite.  Called by `make check` (which builds
# the module first) with KREL, CACHE, BUILD, KSRC and KDIR in the environment.
#
# Suites (each prints "<suite>: N passed, N failed[, N skipped]"):
#   libxsched-unit     libxsched core on its mock platform, ASan+UBSan (host);
#                      the unit group runs each part of `make -C libxsched
#                      check` on its own, so each suite below reports whatever
#                      another did
#   libxsched-unit-fork  its fork and thread+fork stress tests (UBSan only: GCC 12's
#                      ASan allocator is not fork-safe)
#   libxsched-tsan     the unit tests again under ThreadSanitizer (one test)
#   libxsched-abi      libxsched.so's ABI: callers built against 0.1 and against a
#                      newer header (host)
#   libxsched-cuda     the CUDA interposer against a fake libcuda, same (host)
#   libxsched-cuda-tsan  the same again under ThreadSanitizer (one test)
#   libxsched-hip      the HIP interposer (in libxsched.so) against a fake
#                      libamdhip64, and its coverage of Debian's HIP libraries (host)
#   libxsched-hip-prio-ignored  the same tests against the fake in its mode of a
#                      runtime that ignores stream priority (host)
#   xsched-kselftest   module kselftests, in a VM running Debian's kernel
#   libxsched-vm       libxsched on the sim GPU, same VM
#   tools              xschedctl and the demo, same VM
#   hip-sim            hipcc-built HIP programs on the stand-in HIP/HSA runtimes
#                      (tests/hip-sim, test-only) on the sim GPU, alone and with
#                      libxsched.so preloaded, same VM
#   vm-module          that VM: boot, module load, unload, and no kernel splat
#   splat-gate         a VM with an injected kernel WARNING: the gate must fail the
#                      suite that hit it and print the kernel log
#   xsched-debug-kselftest  (group debug) the sim lifetimes' kselftests again
#                      (DEBUG_KSELFTESTS, default ring_lifetime ring_bucket ring
#                      reuse cleanup) on the KASAN/lockdep/kmemleak kernel of
#                      tools/debug-kernel.sh, cached in DEBUG_KDIR (default
#                      $CACHE/debug)
#   vm-debug-module    that VM: boot, module load, unload, no splat or leak
#   xsched-nokfd       the module built without KFD_SRC: the uapi kselftest programs
#                      again (one test: it passes there) and its ENODEV case (one)
#   xsched-kfd-kselftest  the kfd backend, in a VM beside the real amdgpu.ko
#   libxsched-kfd-vm   libxsched's kfd platform (module and debugger API), same VM
#   vm-kfd-module      that VM: boot, amdgpu and module load, unload, no splat
#   hip-real-host-SUITE  one of Debian's real ROCm stacks (HIP_REAL_SUITES,
#                      default sid: 6.4.3) on the host: its exports against the
#                      hook table, its PLT self-calls tested, LD_DEBUG=bindings
#                      of a program built by its hipcc and of its ROCm
#                      libraries (tests/hip-real/host-check.sh)
#   hip-real-fetch     tools/fetch-rocm.sh against a doctored package list:
#                      the manifest's stack (tests/hip-real/manifest) at its
#                      versions, a package gone or moved fails with apt's
#                      reason, stale lists refreshed (host, no network)
#   hip-real-SUITE     its libamdhip64 alone and with libxsched.so preloaded,
#                      in a VM beside the real amdgpu.ko (no GPU): same output,
#                      one no-device notice, symbol bindings (tests/hip-real;
#                      group hip-real, needs no KFD_SRC)
#   vm-hip-real-SUITE  that VM: boot, amdgpu load, no splat
#   dkms               (pkg) Debian's dkms builds and installs the module, a VM
#                      modprobes it and runs the uapi kselftest (tools/check-dkms.sh)
#   ksft-tree          (pkg) the kselftests built in a kernel tree with lib.mk, one
#                      run by the kernel's run_kselftest.sh in a VM
#   install            (pkg) libxsched/xschedctl installed, pkg-config, man pages
#   kernel-build@K     (kernels) the module built against Debian kernel K of
#                      CHECK_KERNELS (tools/fetch-kernel.sh --series K), with
#                      its in-tree amdkfd as KFD_SRC; a KFD the backend refuses
#                      by its compile tests (6.1) is one skip, the module then
#                      built with the sim backend only
#   kernel-sparse@K    the same build through sparse: no warning in kmod/
#   SUITE@K            the vm and kfd groups again (sim suites; kfd suites and
#                      kfd_model beside K's amdgpu.ko), booting K with the
#                      module built for it; nokfd instead of kfd where K's KFD
#                      is refused
# Every VM run ends with the module unloaded and the kernel log scanned
# (tools/qemu-run.sh); inside, each test program is checked for kernel splats
# and each suite for module objects left alive (tools/vm-gate).
#
# lint (checkpatch, sparse, the Documentation parsed, the GPU tests built) prints
# its own line and is not in the total; a lint failure still fails the check.
#
# Selection, for `make mutate` and quick runs (default: everything):
#   CHECK_SUITES="unit vm gate nokfd debug kfd hip-real pkg lint kernels"   groups of suites to run
#   CHECK_KERNELS="7.2"   the kernels group's Debian kernels (make check-kernels:
#                        6.1 6.12 7.2 7.3; the other groups run on KREL, 6.12)
#   HIP_REAL_SUITES="sid"   Debian suites of the hip-real group (make check-hip-real:
#                        bookworm trixie sid experimental)
#   CHECK_KSELFTESTS="exactly_once partway"      kselftest programs in the sim VM
# A suite that crashed, timed out or printed no result is one failure, named.
#
# `make check-debug` runs the sim suites through this script on its debug kernel:
#   QEMU_KERNEL=bzImage  boot it instead of Debian's kernel
#   MODULE=path.ko       the module built for it (default kmod/xsched_kfd.ko); the
#                        sim GPU is sim/xsched_sim.ko beside it
#   TOOLS=dir            where xschedctl and xsched-demo are (default $BUILD/tools)
#   VM_TIMEOUT=s         limit of the main VM run (default 2400)
# The kernels group runs this script again per kernel, with MODULE, TOOLS and
# SUITE_SUFFIX (@K, appended to every suite name it reports).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
: "${KREL:?}" "${CACHE:?}" "${BUILD:?}" "${KSRC:?}" "${KDIR:?}"
groups=${CHECK_SUITES:-unit vm gate nokfd debug kfd hip-real pkg lint kernels}
sfx=${SUITE_SUFFIX:-}
# The kselftest harness the test programs are built with (userspace: the
# same programs run on every kernel of the kernels group).
ksft=${KSFT_SRC:-$KSRC}/tools/testing/selftests
module=${MODULE:-$top/kmod/xsched_kfd.ko}
# The sim suites load the core, then the sim GPU (a test device) beside it.
sim_module=${module%/*}/sim/xsched_sim.ko
tools=${TOOLS:-$BUILD/tools}
ksft_only=${CHECK_KSELFTESTS:-}
logs=$BUILD/check
rm -rf "$logs"
mkdir -p "$logs"
: > "$logs/summary"
vm=$BUILD/vm
rm -rf "$vm"
mkdir -p "$vm"
status=0

note() { echo "check: $*" >&2; }
want() { case " $groups " in *" $1 "*) return 0 ;; esac; return 1; }
# A suite that could not run, or whose run went wrong outside its own tests,
# counts one failure under its own name, so it cannot vanish.
broken() { echo "$1$sfx: 0 passed, 1 failed" >> "$logs/summary"; note "$1$sfx: $2"; status=1; }
passed() { echo "$1$sfx: 1 passed, 0 failed" >> "$logs/summary"; }
# The last result line of suite $1 in log $2, or a failure if there is none.
result() {
	local line
	line=$(grep -E "^$1: [0-9]+ passed, [0-9]+ failed" "$2" | tail -n 1)
	if [ -n "$line" ]; then
		echo "$1$sfx:${line#"$1":}" >> "$logs/summary"
	else
		broken "$1" "no result in $2"
	fi
}
# The status of a VM run: 0 passes; otherwise say why, from qemu-run's codes.
vm_status() { # suite rc log
	case "$2" in
	0) passed "$1" ;;
	124) broken "$1" "the VM timed out (see $3)" ;;
	125) broken "$1" "the guest crashed or panicked (see $3)" ;;
	*)
		if grep -q '^qemu-run: kernel splat during the run' "$3"; then
			broken "$1" "kernel splat during the run (see $3)"
		elif grep -q '^qemu-run: rmmod .* failed' "$3"; then
			broken "$1" "module unload failed: a leaked reference (see $3)"
		else
			broken "$1" "VM exited $2: boot, module load or unload (see $3)"
		fi
		;;
	esac
}
qemu() {
	"$top/tools/qemu-run.sh" --cache "$CACHE" --krel "$KREL" \
		${QEMU_KERNEL:+--kernel "$QEMU_KERNEL"} "$@"
}

if want lint; then
	note "lint (checkpatch, sparse)"
	KREL=$KREL KSRC=$KSRC KDIR=$KDIR "$top/tools/lint.sh" > "$logs/lint.log" 2>&1
	lint_rc=$?
	lint=$(tail -n 1 "$logs/lint.log" | grep -E '^lint: ')
	if [ -z "$lint" ] || [ "$lint_rc" != 0 ]; then
		tail -n 30 "$logs/lint.log"
		lint=${lint:-lint: no result, see $logs/lint.log}
		status=1
	fi
fi

# One part of libxsched's host checks (make -C libxsched TARGET), run whatever
# the other parts did, in its own log, and its suite's line: a part whose make
# failed with no failure in that line (a build error, a crash after the line)
# counts one failure more.
unit_part() { # target suite
	local log=$logs/libxsched-$1.log rc
	make -s -C "$top/libxsched" "$1" TOP="$top" > "$log" 2>&1
	rc=$?
	cat "$log"
	if ! grep -qE "^$2: [0-9]+ passed, [0-9]+ failed" "$log"; then
		broken "$2" "no result: make -C libxsched $1 exited $rc (see $log)"
		return
	fi
	result "$2" "$log"
	if [ "$rc" != 0 ] && ! grep -qE "^$2: [0-9]+ passed, [1-9][0-9]* failed" "$log"; then
		broken "$2" "make -C libxsched $1 exited $rc (see $log)"
	fi
}
# A part run again under ThreadSanitizer counts as one test, "no data race".
tsan_part() { # target suite-printed suite-counted what
	local log=$logs/libxsched-$1.log
	make -s -C "$top/libxsched" "$1" TOP="$top" > "$log" 2>&1
	cat "$log"
	if grep -qE "^$2: [0-9]+ passed, 0 failed" "$log"; then
		echo "$3$sfx: 1 passed, 0 failed	($4 under ThreadSanitizer)" >> "$logs/summary"
	else
		broken "$3" "$4 under ThreadSanitizer failed or did not run (see $log)"
	fi
}

if want unit; then
	note "libxsched host tests (ASan, UBSan, ThreadSanitizer), each part on its own"
	# The CUDA interposer's host tests need CUDA's headers, not a GPU.
	if make -s -C "$top/libxsched" check-cuda-asan TOP="$top" -n 2>/dev/null |
		grep -q 'no CUDA headers'; then
		echo "libxsched-cuda$sfx: 0 passed, 0 failed, 1 skipped	(no CUDA headers)" >> "$logs/summary"
	else
		unit_part check-cuda-asan libxsched-cuda
		tsan_part check-cuda-tsan libxsched-cuda-tsan libxsched-cuda-tsan "the CUDA host tests"
	fi
	unit_part check-abi libxsched-abi
	if make -s -C "$top/libxsched" check-hip TOP="$top" -n 2>/dev/null |
		grep -q 'no HIP headers'; then
		echo "libxsched-hip$sfx: 0 passed, 0 failed, 1 skipped	(no HIP headers: libxsched.so built WITHOUT the HIP interposer)" >> "$logs/summary"
		note "libxsched.so was built WITHOUT the HIP interposer (no HIP headers; Debian: libamdhip64-dev)"
	else
		unit_part check-hip libxsched-hip
		unit_part check-hip-prio-ignored libxsched-hip-prio-ignored
	fi
	unit_part check-hsa libxsched-hsa
	unit_part check-unit libxsched-unit
	unit_part check-unit-fork libxsched-unit-fork
	tsan_part check-tsan libxsched-unit-tsan libxsched-tsan "the unit tests"
fi

if want vm || want gate || want nokfd || want debug; then
	note "building kselftests"
	if ! make -s -C "$top/tests/kselftest/xsched" TOP="$top" KREL="$KREL" \
		KSFT_DIR="$ksft" OUT="$vm/kselftest" \
		> "$logs/kselftest-build.log" 2>&1; then
		cat "$logs/kselftest-build.log"
		broken xsched-kselftest "build failed"
		groups=${groups//vm/}; groups=${groups//gate/}; groups=${groups//nokfd/}
		groups=${groups//debug/}
	fi
fi

if want vm; then
	expect="xsched-kselftest tools"
	if [ -f "$top/libxsched/Makefile" ]; then
		if make -s -C "$top/libxsched" vmtests TOP="$top" OUT="$vm/libxsched" \
			KSFT_DIR="$ksft" > "$logs/libxsched-build.log" 2>&1; then
			expect="$expect libxsched-vm"
		else
			cat "$logs/libxsched-build.log"
			broken libxsched-vm "build failed"
		fi
	fi
	# The HIP path: needs Debian's hipcc and libamdhip64-dev (tools/install-deps.sh).
	if make -s -C "$top/libxsched" all TOP="$top" BUILD="$BUILD/libxsched" > "$logs/hip-build.log" 2>&1 &&
		make -s -C "$top/tests/hip-sim" vm TOP="$top" BUILD="$BUILD" OUT="$vm/hip" \
			XSCHED_SO="$BUILD/libxsched/libxsched.so.0" \
			>> "$logs/hip-build.log" 2>&1; then
		expect="$expect hip-sim"
	else
		tail -n 30 "$logs/hip-build.log"
		broken hip-sim "build failed (see $logs/hip-build.log)"
		rm -rf "$vm/hip"
	fi
	cp "$top/tools/check-vm.sh" "$vm/"
	mkdir -p "$vm/tools"
	cp "$tools/xschedctl" "$tools/xsched-demo" "$tools/xsched-load" "$tools/jsonflat" \
		"$tools/ptyscreen" "$tools/xsched-stuck" "$top/tests/tools/run.sh" \
		"$top/tests/harness/vm-runner.sh" "$vm/tools/"
	note "booting ${QEMU_KERNEL:-$KREL} in QEMU with $module"
	qemu --module "$module" --module "$sim_module" --copy "$vm" --rmmod --timeout "${VM_TIMEOUT:-2400}" -- \
		"cd vm && KSFT='$ksft_only' ./check-vm.sh" 2>&1 | tee "$logs/vm.log"
	rc=${PIPESTATUS[0]}
	for s in $expect; do
		result "$s" "$logs/vm.log"
	done
	vm_status vm-module "$rc" "$logs/vm.log"
fi

# The gate itself: a WARNING injected into the first suspend of exactly_once
# must fail that program and its suite, be named, and fail the VM run with the
# kernel log printed.  If it did not, every suite's "no splat" would mean nothing.
if want gate; then
	note "booting $KREL with an injected kernel warning (the splat gate must catch it)"
	qemu --module "$module:debug_inject_warn=1" --module "$sim_module" --copy "$vm/kselftest" \
		--rmmod --timeout 600 -- 'cd kselftest && ./run.sh exactly_once' \
		> "$logs/splat-gate.log" 2>&1
	rc=$?
	why=
	[ "$rc" != 0 ] || why="the VM run passed"
	grep -qE '^# splat \(exactly_once\): .*WARNING:' "$logs/splat-gate.log" ||
		why="$why; no splat pinned on exactly_once"
	grep -qE '^xsched-kselftest: [0-9]+ passed, [1-9][0-9]* failed' "$logs/splat-gate.log" ||
		why="$why; the suite did not fail"
	grep -q '^qemu-run: kernel splat during the run' "$logs/splat-gate.log" ||
		why="$why; the run's final scan missed it"
	grep -q 'xsched: injected warning' "$logs/splat-gate.log" ||
		why="$why; the kernel log was not printed"
	if [ -z "$why" ]; then
		passed splat-gate
	else
		cat "$logs/splat-gate.log"
		broken splat-gate "${why#; }"
	fi
fi

# Built without KFD_SRC the module still loads and every kfd request answers
# ENODEV: the uapi kselftest programs again (uapi and uapi_*, as tests.list
# names them), against that build.  It counts as what it is: one test (the
# programs pass against the other build) and the one case that exists for
# this build.
if want nokfd; then
	note "building the module without the kfd backend"
	if nokfd_ko=$("$top/tools/build-module.sh" "$BUILD/nokfd" "$KDIR" 2> "$logs/nokfd-build.log"); then
		note "booting $KREL in QEMU with the module built without kfd"
		uapi=$(grep -E '^uapi(_[a-z_]+)?$' "$vm/kselftest/tests.list" | tr '\n' ' ')
		qemu --module "$nokfd_ko" --module "${nokfd_ko%/*}/sim/xsched_sim.ko" \
			--copy "$vm/kselftest" --rmmod --timeout 600 -- \
			"cd kselftest && SUITE=xsched-nokfd-uapi ./run.sh $uapi" 2>&1 | tee "$logs/vm-nokfd.log"
		rc=${PIPESTATUS[0]}
		if grep -qE '^xsched-nokfd-uapi: [0-9]+ passed, 0 failed' "$logs/vm-nokfd.log"; then
			echo "xsched-nokfd$sfx: 1 passed, 0 failed	(the uapi programs against this build)" >> "$logs/summary"
		else
			broken xsched-nokfd "the uapi programs failed against this build (see $logs/vm-nokfd.log)"
		fi
		[ "$rc" = 0 ] || vm_status xsched-nokfd "$rc" "$logs/vm-nokfd.log"
		# The one case this run exists for must have run, not skipped.
		if grep -qE '^ok [0-9]+ uapi.kfd_attach_without_kfd_backend_is_enodev$' "$logs/vm-nokfd.log"; then
			echo "xsched-nokfd$sfx: 1 passed, 0 failed	(kfd_attach_without_kfd_backend_is_enodev)" >> "$logs/summary"
		else
			broken xsched-nokfd "the ENODEV case did not pass (was kfd built in?)"
		fi
	else
		cat "$logs/nokfd-build.log"
		broken xsched-nokfd "build failed"
	fi
fi

# The sim's lifetimes on a kernel that sees them: KASAN, lockdep, kmemleak,
# debugobjects (tools/debug-kernel.sh, built once into $CACHE/debug).  A
# queue freed while a BY_RING lookup may still read it, or a lock taken out
# of order, is a report there that fails its program; on Debian's kernel it
# is silent.  DEBUG_KSELFTESTS picks the programs.
debug_ksft=${DEBUG_KSELFTESTS:-ring_lifetime ring_bucket ring reuse cleanup}
if want debug; then
	note "the debug kernel (KASAN, lockdep, kmemleak; cached in ${DEBUG_KDIR:-$CACHE/debug})"
	dstart=$(date +%s)
	if ! dkdir=$("$top/tools/debug-kernel.sh" "$KSRC" "${DEBUG_KDIR:-$CACHE/debug}" \
			2> "$logs/debug-kernel.log"); then
		cat "$logs/debug-kernel.log"
		broken xsched-debug-kselftest "the debug kernel did not build (see $logs/debug-kernel.log)"
	elif ! debug_ko=$("$top/tools/build-module.sh" "$BUILD/debug-module" "$dkdir" \
			2> "$logs/debug-module-build.log"); then
		cat "$logs/debug-module-build.log"
		broken xsched-debug-kselftest "the module did not build against the debug kernel"
	else
		note "debug kernel and module ready in $(( $(date +%s) - dstart )) s; booting it"
		# Four guest CPUs on the host's two: a vCPU is often descheduled
		# in the middle of a lookup while another frees what it reads.
		qemu --kernel "$dkdir/arch/x86/boot/bzImage" --smp 4 --module "$debug_ko" \
			--module "${debug_ko%/*}/sim/xsched_sim.ko" --copy "$vm/kselftest" \
			--rmmod --timeout 1800 -- \
			"cd kselftest && SUITE=xsched-debug-kselftest ./run.sh $debug_ksft" 2>&1 |
			tee "$logs/vm-debug.log"
		rc=${PIPESTATUS[0]}
		result xsched-debug-kselftest "$logs/vm-debug.log"
		vm_status vm-debug-module "$rc" "$logs/vm-debug.log"
	fi
fi

# The kfd backend beside Debian's real amdgpu.ko (no GPU: attach and error
# paths run, hardware tests skip with the reason).
if want kfd && [ -n "${KFD_SRC:-}" ]; then
	note "building kfd kselftests"
	vmk=$BUILD/vm-kfd
	rm -rf "$vmk"
	kfdlib=0
	if [ -f "$top/libxsched/Makefile" ]; then
		if make -s -C "$top/libxsched" vmtests-kfd TOP="$top" OUT="$vmk/libxsched_kfd" \
			KSFT_DIR="$ksft" > "$logs/libxsched-kfd-build.log" 2>&1; then
			kfdlib=1
		else
			cat "$logs/libxsched-kfd-build.log"
			broken libxsched-kfd-vm "build failed"
		fi
	fi
	if make -s -C "$top/tests/kselftest/xsched_kfd" TOP="$top" KREL="$KREL" \
		KSFT_DIR="$ksft" OUT="$vmk/xsched_kfd" \
		> "$logs/kfd-build.log" 2>&1; then
		kfdcopy=(--copy "$vmk/xsched_kfd")
		kfdcmd='(cd xsched_kfd && ./run.sh)'
		if [ "$kfdlib" = 1 ]; then
			kfdcopy+=(--copy "$vmk/libxsched_kfd")
			kfdcmd="$kfdcmd; (cd libxsched_kfd && ./run.sh)"
		fi
		note "booting $KREL in QEMU with amdgpu.ko and $module"
		# The suites' own failures are counted from their lines; the VM's
		# status is boot, load, unload and the final kernel-log scan.
		qemu --amdgpu --module "$module" "${kfdcopy[@]}" --rmmod \
			--timeout 1200 -- "$kfdcmd; exit 0" 2>&1 | tee "$logs/vm-kfd.log"
		rc=${PIPESTATUS[0]}
		result xsched-kfd-kselftest "$logs/vm-kfd.log"
		[ "$kfdlib" = 1 ] && result libxsched-kfd-vm "$logs/vm-kfd.log"
		vm_status vm-kfd-module "$rc" "$logs/vm-kfd.log"
	else
		cat "$logs/kfd-build.log"
		broken xsched-kfd-kselftest "build failed"
		[ "$kfdlib" = 1 ] && broken libxsched-kfd-vm "not run: the kfd kselftests did not build"
	fi
elif want kfd; then
	note "KFD_SRC not set: kfd backend not built, its suites not run"
fi

# Debian's real HIP runtimes (tools/fetch-rocm.sh: unpacked under
# .cache/rocm, never installed), per suite of HIP_REAL_SUITES (default sid,
# ROCm 6.4.3; `make check-hip-real`: all four): on the host the exports
# against the hook table, the runtime's self-calls, the dynamic linker's
# bindings of a hipcc-built program and of the ROCm libraries
# (tests/hip-real/host-check.sh), then the probe alone and preloaded in a VM
# of its own beside the real amdgpu.ko (/dev/kfd, no GPU): the runtime's
# libraries would slow every boot of the kfd suites' VM.  Needs no KFD_SRC.
if want hip-real; then
	if make -s -C "$top/libxsched" all hip-fake TOP="$top" BUILD="$BUILD/libxsched" \
		> "$logs/hip-real-build.log" 2>&1 &&
		make -s -C "$top/tests/hip-real" "$BUILD/hip-real/loadlibs" TOP="$top" BUILD="$BUILD" \
			>> "$logs/hip-real-build.log" 2>&1; then
		hip_real_ok=1
	else
		tail -n 30 "$logs/hip-real-build.log"
		hip_real_ok=0
	fi
	# tools/fetch-rocm.sh against a doctored package list (no network).
	note "hip-real: the fetch of the manifest's stacks"
	"$top/tests/hip-real/fetch-test.sh" > "$logs/hip-real-fetch.log" 2>&1
	cat "$logs/hip-real-fetch.log"
	result hip-real-fetch "$logs/hip-real-fetch.log"
	for s in ${HIP_REAL_SUITES:-sid}; do
		if [ "$hip_real_ok" != 1 ]; then
			broken "hip-real-host-$s" "build failed (see $logs/hip-real-build.log)"
			broken "hip-real-$s" "build failed (see $logs/hip-real-build.log)"
			continue
		fi
		note "hip-real $s: host checks"
		BUILD=$BUILD XSCHED_SO="$BUILD/libxsched/libxsched.so.0" \
			FAKE="$BUILD/libxsched/hip-test/fake/libamdhip64.so.5" \
			LOADLIBS="$BUILD/hip-real/loadlibs" \
			"$top/tests/hip-real/host-check.sh" "$s" 2>&1 | tee "$logs/hip-real-host-$s.log"
		result "hip-real-host-$s" "$logs/hip-real-host-$s.log"
		if make -s -C "$top/tests/hip-real" vm SUITE="$s" TOP="$top" BUILD="$BUILD" \
			OUT="$BUILD/hip-real/$s/vm" XSCHED_SO="$BUILD/libxsched/libxsched.so.0" \
			>> "$logs/hip-real-build.log" 2>&1; then
			note "booting $KREL in QEMU with amdgpu.ko and $s's libamdhip64"
			qemu --amdgpu --copy "$BUILD/hip-real/$s/vm" --timeout 600 -- \
				"cd vm && ./run.sh hip-real-$s; exit 0" 2>&1 | tee "$logs/vm-hip-real-$s.log"
			rc=${PIPESTATUS[0]}
			result "hip-real-$s" "$logs/vm-hip-real-$s.log"
			vm_status "vm-hip-real-$s" "$rc" "$logs/vm-hip-real-$s.log"
		else
			tail -n 30 "$logs/hip-real-build.log"
			broken "hip-real-$s" "build failed (see $logs/hip-real-build.log)"
		fi
	done
fi

# Packaging, tested as users meet it: the DKMS package built, installed and
# loaded in a VM; the kselftests built in a kernel tree with lib.mk and run by
# the kernel's run_kselftest.sh in a VM; libxsched and xschedctl installed,
# a program built from pkg-config, the man pages rendered.
if want pkg; then
	for s in dkms ksft-tree install; do
		note "packaging: $s"
		"$top/tools/check-$s.sh" > "$logs/$s.log" 2>&1
		rc=$?
		tail -n 25 "$logs/$s.log"
		result "$s" "$logs/$s.log"
		[ "$rc" = 0 ] || grep -qE "^$s: [0-9]+ passed, [1-9]" "$logs/$s.log" ||
			broken "$s" "tools/check-$s.sh exited $rc"
	done
fi

# The kernel matrix: per Debian kernel of CHECK_KERNELS, the module built
# against its headers with its in-tree amdkfd, through sparse, and the VM
# groups again on it (this script, once per kernel).  Their kernels are
# unpacked beside CACHE, not in it: what globs CACHE for the kernel (the
# libxsched Makefile's kfd_ioctl.h) must keep finding KREL's.
if want kernels; then
	kcache=${KERNELS_CACHE:-$(dirname "$CACHE")/kernels}
	for k in ${CHECK_KERNELS-7.2}; do
		kb=$BUILD/kernels/$k
		rm -rf "$kb"
		mkdir -p "$kb"
		if ! krel=$("$top/tools/fetch-kernel.sh" --series "$k" "$kcache" 2> "$kb/fetch.log"); then
			cat "$kb/fetch.log"
			broken "kernel-build@$k" "tools/fetch-kernel.sh --series $k failed"
			continue
		fi
		kroot=$(cd "$kcache" && pwd -P)/$krel
		kdir=$kroot/usr/src/linux-headers-$krel
		ksrc=$kroot/usr/src/linux-source-$k
		kfd=$ksrc
		note "kernel $k ($krel): building the module against it"
		if ko=$("$top/tools/build-module.sh" "$kb/module" "$kdir" "$kfd" 2> "$kb/build-err.log"); then
			echo "kernel-build@$k: 1 passed, 0 failed	($krel, kfd backend)" >> "$logs/summary"
		elif grep -q '#error "KFD_SRC is older than Linux 6.5' "$kb/module/build.log"; then
			# Refused by the backend's compile tests: the sim backend only.
			kfd=
			if ko=$("$top/tools/build-module.sh" "$kb/module" "$kdir" 2> "$kb/build-err.log"); then
				echo "kernel-build@$k: 1 passed, 0 failed, 1 skipped	($krel: sim backend; kfd backend refused: KFD older than 6.5)" >> "$logs/summary"
			else
				cat "$kb/build-err.log"
				broken "kernel-build@$k" "build failed without KFD_SRC too"
				continue
			fi
		else
			tail -n 30 "$kb/build-err.log"
			broken "kernel-build@$k" "build against $krel failed (see $kb/module/build.log)"
			continue
		fi
		note "kernel $k: sparse"
		if SPARSE=1 "$top/tools/build-module.sh" "$kb/sparse" "$kdir" "$kfd" > /dev/null 2>&1 &&
			grep -q '^  CHECK ' "$kb/sparse/build.log" &&
			! grep -qE 'kmod/.*: (warning|error):' "$kb/sparse/build.log"; then
			passed "kernel-sparse@$k"
		else
			grep -E 'kmod/.*: (warning|error):|sparse' "$kb/sparse/build.log" | head -n 20
			broken "kernel-sparse@$k" "sparse found warnings or did not run (see $kb/sparse/build.log)"
		fi
		kgroups="vm kfd"
		[ -n "$kfd" ] || kgroups="vm nokfd"
		note "kernel $k: the $kgroups groups in QEMU"
		KREL=$krel KSRC=$ksrc KDIR=$kdir KFD_SRC=$kfd MODULE=$ko TOOLS=$tools \
			KSFT_SRC=${ksft%/tools/testing/selftests} \
			CACHE=$kcache BUILD=$kb CHECK_SUITES=$kgroups CHECK_KERNELS='' SUITE_SUFFIX=@$k \
			"$top/tools/check.sh" > "$kb/check.log" 2>&1
		grep -E '^(check|qemu-run): ' "$kb/check.log" | tail -n 20
		if [ -s "$kb/check/summary" ]; then
			cat "$kb/check/summary" >> "$logs/summary"
			grep -q ' [1-9][0-9]* failed' "$kb/check/summary" && status=1
		else
			broken "kernel-vm@$k" "no result (see $kb/check.log)"
		fi
	done
fi

echo
echo "suites:"
sed 's/^/  /' "$logs/summary"
[ -n "${lint:-}" ] && echo "$lint	(not in the total)"
awk -F'\t' '
	{ n = split($1, w, /[ ,]+/)
	  for (i = 2; i < n; i++) {
		if (w[i + 1] == "passed") p += w[i]
		else if (w[i + 1] == "failed") f += w[i]
		else if (w[i + 1] == "skipped") s += w[i]
	} }
	END { printf "%d passed, %d failed, %d skipped\n", p, f, s; exit (f > 0) }
' "$logs/summary" > "$logs/result" || status=1
cat "$logs/result"
exit $status
