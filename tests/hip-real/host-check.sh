#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The HIP interposer against one of Debian's real ROCm userspace stacks, on
# the host (no GPU, no VM): Documentation/hip.rst, "Debian's real runtimes".
#
#   tests/hip-real/host-check.sh SUITE     bookworm, trixie, sid, experimental
#
# Fetches the suite's runtime, ROCm libraries and hipcc (tools/fetch-rocm.sh:
# unpacked under .cache/rocm/SUITE/root, never installed), then:
#   runtime_reads_GPU_MAX_HW_QUEUES  the runtime has the flag libxsched sets
#   exports_match_the_table  the runtime's versioned exports against the hook
#                            table (tests/libxsched/hip/coverage.py): every
#                            function that takes a stream is hooked at the
#                            runtime's node or listed unhooked; every C++
#                            export that takes a stream is in HIP_CXX_NAMES
#   self_calls_are_tested    the runtime's PLT calls of its own hooked
#                            exports (selfcalls.py): each path is made by
#                            the fake and entered by a SELF_CALLS host test
#   bindings_<file>          LD_DEBUG=bindings, everything bound at start,
#                            libxsched.so preloaded (bindings.py), for a HIP
#                            program built with the suite's hipcc and for
#                            each ROCm library PyTorch links that the suite
#                            ships, loaded with dlopen(RTLD_NOW): every hooked
#                            reference binds to libxsched.so, every other one
#                            that takes a stream is listed unhooked
# The suite's programs need its own C library: they run in a chroot of the
# unpacked root (a private mount namespace with /proc and /dev; root only).
# The stack is tests/hip-real/manifest's for SUITE (a package gone or moved
# fails the fetch, and so the suite); every ROCm library of its libs set
# must be there on the suite's runtime and give a bindings test.
# Ends with "hip-real-host-SUITE: N passed, N failed<TAB>(stack: pkg=version ...)".
#
# Environment: BUILD (default build/), XSCHED_SO (default
# $BUILD/libxsched/libxsched.so.0), FAKE (the host tests' fake runtime,
# default $BUILD/libxsched/hip-test/fake/libamdhip64.so.5), LOADLIBS (the
# built loadlibs.c, default $BUILD/hip-real/loadlibs).
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
suite=${1:?usage: tests/hip-real/host-check.sh bookworm|trixie|sid|experimental}
build=${BUILD:-$top/build}
xsched=${XSCHED_SO:-$build/libxsched/libxsched.so.0}
fake=${FAKE:-$build/libxsched/hip-test/fake/libamdhip64.so.5}
loadlibs=${LOADLIBS:-$build/hip-real/loadlibs}
table=$top/libxsched/src/interpose/hip/table.h
name=hip-real-host-$suite
passed=0
failed=0
ok() { echo "ok $1"; passed=$((passed + 1)); }
bad() { echo "not ok $1: $2"; failed=$((failed + 1)); }
stack=$("$top/tools/fetch-rocm.sh" --stack "$suite" 2>&1) || stack="no stack: $stack"
finish() {
	printf '%s: %s passed, %s failed\t(stack: %s)\n' "$name" "$passed" "$failed" "$stack"
	[ "$failed" = 0 ]
	exit $?
}

for f in "$xsched" "$fake" "$loadlibs"; do
	[ -e "$f" ] || { bad setup "no $f (make -C libxsched check-hip; make -C tests/hip-real host)"; finish; }
done
if ! root=$("$top/tools/fetch-rocm.sh" "$suite" runtime libs hipcc); then
	bad setup "tools/fetch-rocm.sh $suite failed: the stack of tests/hip-real/manifest (apt's reason above)"
	finish
fi
lib=$root/usr/lib/x86_64-linux-gnu
# The suite's runtime is the one its headers (libamdhip64-dev) link: an
# older one may be there too, for a library built against it.
soname=$(readlink "$lib/libamdhip64.so" | sed 's/\(\.so\.[0-9]*\).*/\1/')
runtime=${soname:+$lib/$soname}
header=$root/usr/include/hip/hip_runtime_api.h
if [ -z "$runtime" ] || [ ! -f "$header" ]; then
	bad setup "no libamdhip64.so.N or hip_runtime_api.h in $root"
	finish
fi
echo "# $name: $(basename "$(readlink -f "$runtime")"), HIP $(sed -n 's/^#define HIP_VERSION_\(MAJOR\|MINOR\|PATCH\) *\([0-9]*\).*/\2/p' "$root/usr/include/hip/hip_version.h" | paste -sd.)"

# The variables libxsched sets for the runtime before it initialises
# (hip/hsaq.c): GPU_MAX_HW_QUEUES must be a flag this runtime reads (CLR keeps
# its flags' names as strings); DEBUG_HIP_IGNORE_STREAM_PRIORITY (ROCm from
# mid 2026) is named either way.
if grep -qa GPU_MAX_HW_QUEUES "$runtime"; then
	ok runtime_reads_GPU_MAX_HW_QUEUES
else
	bad runtime_reads_GPU_MAX_HW_QUEUES "no GPU_MAX_HW_QUEUES in $(basename "$(readlink -f "$runtime")"): XSCHED_HW_QUEUES would do nothing"
fi
if grep -qa DEBUG_HIP_IGNORE_STREAM_PRIORITY "$runtime"; then
	echo "# $name: this runtime reads DEBUG_HIP_IGNORE_STREAM_PRIORITY: libxsched sets it to 0 (priority classes kept)"
else
	echo "# $name: no DEBUG_HIP_IGNORE_STREAM_PRIORITY in this runtime: it always keeps priority classes (libxsched's setting is inert)"
fi

out=$(python3 "$top/tests/libxsched/hip/coverage.py" --table "$table" --lib "$xsched" \
	--cache /nonexistent --header "$header" --runtime "$runtime" --headers-only 2>&1)
rc=$?
echo "$out" | sed 's/^/#   /'
if [ $rc = 0 ]; then ok exports_match_the_table; else bad exports_match_the_table "see above"; fi

out=$(python3 "$top/tests/hip-real/selfcalls.py" --table "$table" \
	--tests "$top/tests/libxsched/hip/test_hip.c" --fake "$fake" "$runtime" 2>&1)
rc=$?
echo "$out" | sed 's/^/#   /'
if [ $rc = 0 ]; then ok self_calls_are_tested; else bad self_calls_are_tested "see above"; fi

# The chroot: a folder of this run's own under the root's /tmp (the cache is
# shared by worktrees).
mkdir -p "$root/tmp" "$root/proc" "$root/dev"
work=$(mktemp -d "$root/tmp/xsched-hip-real.XXXXXX") || { bad setup "mktemp in $root/tmp"; finish; }
trap 'rm -rf "$work"' EXIT
in_root=/tmp/$(basename "$work")
cp -L "$xsched" "$work/libxsched.so.0"
cp "$loadlibs" "$work/loadlibs"
cp "$top/tests/libxsched/hip/coverage_prog.hip" "$work/prog.hip"
# $1: a /bin/sh command line run in the chroot; its output on stdout.
in_chroot() {
	# shellcheck disable=SC2016
	XS_ROOT=$root XS_CMD=$1 timeout 600 unshare -m --propagation private sh -c \
		'mount -t proc proc "$XS_ROOT/proc" && mount --bind /dev "$XS_ROOT/dev" &&
		 exec chroot "$XS_ROOT" /bin/sh -c "$XS_CMD"' 2>&1
}
if ! out=$(in_chroot "true"); then
	echo "$out" | sed 's/^/#   /'
	bad setup "cannot run in a chroot of $root (unshare -m, mount and chroot need root)"
	finish
fi
# $1: the command (in the chroot), rest: --file arguments of bindings.py.
check_bindings() {
	local cmd=$1 report=$work/report
	shift
	in_chroot "cd $in_root && LD_BIND_NOW=1 LD_DEBUG=bindings LD_PRELOAD=$in_root/libxsched.so.0 $cmd" \
		> "$report"
	python3 "$top/tests/hip-real/bindings.py" --table "$table" --header "$header" \
		--report "$report" "$@" > "$work/result" 2>&1
	while read -r line; do
		case $line in
		"ok "*) ok "${line#ok }" ;;
		"not ok "*) t=${line#not ok }; bad "${t%%:*}" "${t#*: }" ;;
		*) echo "$line" ;;
		esac
	done < "$work/result"
}

# A HIP program built with the suite's own hipcc (gfx90a: every suite's
# clang has it); run under a time limit: its first HIP call finds no GPU.
if out=$(in_chroot "cd $in_root && hipcc --offload-arch=gfx90a -o hipcc_prog prog.hip 2>&1"); then
	check_bindings "timeout 60 ./hipcc_prog >/dev/null; exit 0" --file hipcc_prog
else
	echo "$out" | tail -n 20 | sed 's/^/#   /'
	bad bindings_hipcc_prog "the suite's hipcc could not build tests/libxsched/hip/coverage_prog.hip"
fi

# The ROCm libraries PyTorch links, those the suite ships built against its
# runtime (experimental has 7.2 builds of some, and sid's 6.4 builds, on
# libamdhip64.so.6, of others: those are sid's to check).
libs=()
others=()
for l in rocblas hipblaslt MIOpen rocrand rocfft rocsparse hipsparse; do
	found=
	for p in "$lib/lib$l.so."[0-9]*; do
		f=${p##*/}
		[[ $f =~ \.so\.[0-9]+$ ]] || continue
		if readelf -d "$p" | grep -q "NEEDED.*\[$soname\]"; then
			found=$f
		else
			others+=("$f")
		fi
	done
	[ -z "$found" ] || libs+=("$found")
done
echo "# $name: ROCm libraries on $soname: ${libs[*]:-none}${others[*]:+; not on it: ${others[*]}}"
# Each library package of the manifest gives one library here (never fewer
# tests than the manifest's stack).
want=$(awk -v s="$suite" '!/^#/ && $1 == s && $2 == "libs"' "${XSCHED_ROCM_MANIFEST:-$top/tests/hip-real/manifest}" | wc -l)
if [ "${#libs[@]}" != "$want" ]; then
	bad libraries_of_the_manifest "the manifest's libs set has $want packages, $soname has ${#libs[@]} libraries of them: ${libs[*]:-none}"
fi
if [ ${#libs[@]} -gt 0 ]; then
	args=()
	for l in "${libs[@]}"; do args+=(--file "$l"); done
	check_bindings "./loadlibs ${libs[*]}" "${args[@]}"
	grep '^loadlibs: ' "$work/report" | grep -v ' loaded$' | sed 's/^/#   /'
fi
finish
