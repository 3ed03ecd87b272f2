#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs inside the VM beside Debian's real amdgpu.ko (/dev/kfd, no GPU): the
# probe on one of Debian's real runtimes (libamdhip64.so.N, named in the file
# runtime; in lib/ with what it loads and that suite's loader) alone and with
# LD_PRELOAD=libxsched.so, then one line "hip-real-SUITE: N passed, N failed"
# (SUITE the first argument; default "hip-real").
#   probe_alone, probe_preloaded   exit status 0 and the last line printed
#   same_output                    the two outputs are the same lines once
#                                  libxsched's own lines are taken out
#   no_device_notice               libxsched said exactly one line, that there
#                                  is no usable device
#   bindings_preloaded             the dynamic linker's own report
#                                  (LD_DEBUG=bindings, everything bound at start):
#                                  the probe's hooked references (the C++-named
#                                  module launches too), all at node hip_4.2,
#                                  bind to libxsched.so.0 and the rest to
#                                  the runtime; and libxsched.so defines each
#                                  hooked one at hip_4.2 (libxsched.nodes), not
#                                  unversioned: glibc binds a versioned reference
#                                  to an unversioned definition too, and its report
#                                  names the reference's node only
#   bindings_alone                 the same report without the preload: all to
#                                  the runtime
#   stream_crash_alike             a real hipStreamCreate (segfaults in the
#                                  runtime with no GPU), reached after all the
#                                  above: the same status and lines alone and
#                                  preloaded
# Each program runs under the time limit and is checked for kernel splats
# (the runner library, vm-runner.sh, installed beside).
cd "$(dirname "$0")" || exit 1
# shellcheck source=tests/harness/vm-runner.sh
. ./vm-runner.sh
here=$(pwd)
suite=${1:-hip-real}
runtime=$(cat runtime)
vr_begin "$suite"
# The busybox guest has no glibc loader of its own: the suite's is in lib/.
if [ ! -e /lib64/ld-linux-x86-64.so.2 ]; then
	mkdir -p /lib64
	ln -sf "$here/lib/ld-linux-x86-64.so.2" /lib64/ld-linux-x86-64.so.2
fi
export LD_LIBRARY_PATH="$here/lib"
unset XSCHED_LOG XSCHED_PRIORITY XSCHED_LEVEL
show() { echo "$2" | sed "s/^/#   $1: /"; }
# $1 = what, rest = the command; sets out and rc.
probe() {
	what=$1
	shift
	vr_mark
	vr_capture "$@"
	out=$vr_out
	rc=$vr_rc
	if ! vr_splat "$what"; then
		vr_bad "${what}_no_splat" "the kernel logged a splat"
	fi
}

probe alone ./hip-probe
alone=$out
arc=$rc
show alone "$alone"
probe preloaded env LD_PRELOAD=libxsched.so.0 ./hip-probe
pre=$out
prc=$rc
show preloaded "$pre"
# $1 = which run, $2 = its status, $3 = its output
finished() {
	if [ "$2" = 0 ] && [ "$(echo "$3" | tail -n 1)" = "hip-probe: done" ]; then
		vr_ok "probe_$1"
	else
		vr_bad "probe_$1" "exit $2, last line '$(echo "$3" | tail -n 1)'"
	fi
}
finished alone "$arc" "$alone"
finished preloaded "$prc" "$pre"

# libxsched's lines start with "xsched[": everything else is the probe's
# or the runtime's own, line for line.
mine=$(echo "$pre" | grep '^xsched\[')
rest=$(echo "$pre" | grep -v '^xsched\[')
if [ "$rest" = "$alone" ]; then
	vr_ok same_output
else
	echo "$alone" > /tmp/hip-real.alone
	echo "$rest" > /tmp/hip-real.preloaded
	diff /tmp/hip-real.alone /tmp/hip-real.preloaded | sed 's/^/#   diff: /'
	vr_bad same_output "the preloaded run printed other lines"
fi
if [ "$(echo "$mine" | grep -c .)" = 1 ] && echo "$mine" | grep -q 'no usable HIP device'; then
	vr_ok no_device_notice
else
	show libxsched "$mine"
	vr_bad no_device_notice "expected one libxsched line saying there is no usable HIP device"
fi

# "binding file ./hip-probe [0] to DIR/LIB [0]: normal symbol `SYM' [NODE]"
# -> "SYM LIB NODE", for the probe's own hip* references.
bindings() {
	LD_BIND_NOW=1 LD_DEBUG=bindings "$@" 2>&1 >/dev/null |
		sed -n "s|.*binding file \./hip-probe \[0\] to .*/\([^/ ]*\) \[0\]: normal symbol \`\(hip[A-Za-z_]*\|_Z24hip[A-Za-z0-9_]*\)' \[\([^]]*\)\]|\2 \1 \3|p" |
		sort -u
}
# The probe's references libxsched hooks (the module launches by their C++
# names too); the others (queries, error strings) go to the runtime
# untouched.
ext=_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j
hcc=_Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_
hooked=" hipDeviceSynchronize hipLaunchKernel hipStreamCreate hipStreamCreateWithFlags hipStreamCreateWithPriority hipStreamDestroy $ext $hcc "
# $1 = test name, $2 = the library hooked symbols must bind to, $3 = report
check_bindings() {
	why=$(echo "$3" | awk -v hooked="$hooked" -v lib="$2" -v rt="$runtime" '
		NF == 3 {
			n++; seen[$1] = 1
			want = index(hooked, " " $1 " ") ? lib : rt
			if ($2 != want || $3 != "hip_4.2")
				bad = bad " " $1 "->" $2 "@" $3 " (want " want "@hip_4.2);"
		}
		END {
			split(hooked, h, " ")
			for (i in h) if (!(h[i] in seen)) bad = bad " no binding of " h[i] ";"
			if (!seen["hipGetDeviceCount"]) bad = bad " no binding of hipGetDeviceCount;"
			print bad
		}')
	if [ "$2" = libxsched.so.0 ]; then
		for sym in $hooked; do
			node=$(awk -v s="$sym" '$1 == s { print $2 }' libxsched.nodes)
			[ "$node" = hip_4.2 ] || why="$why libxsched.so defines $sym at '$node';"
		done
	fi
	if [ -z "$why" ]; then
		vr_ok "$1"
	else
		show "$1" "$3"
		vr_bad "$1" "$why"
	fi
}
check_bindings bindings_preloaded libxsched.so.0 "$(bindings env LD_PRELOAD=libxsched.so.0 ./hip-probe)"
check_bindings bindings_alone "$runtime" "$(bindings ./hip-probe)"

probe stream_alone ./hip-probe --stream
salone=$out
src=$rc
probe stream_preloaded env LD_PRELOAD=libxsched.so.0 ./hip-probe --stream
spre=$(echo "$out" | grep -v '^xsched\[')
sprc=$rc
echo "# $suite: hipStreamCreate with no GPU: exit $src alone, $sprc preloaded"
# It must have got as far as the stream: a probe that never ran fails alike too.
if ! echo "$salone" | grep -q '^hipStreamDestroy(NULL): '; then
	show alone "$salone"
	vr_bad stream_crash_alike "the probe did not get as far as hipStreamCreate"
elif [ "$src" = "$sprc" ] && [ "$salone" = "$spre" ]; then
	vr_ok stream_crash_alike
else
	show alone "$salone"
	show preloaded "$spre"
	vr_bad stream_crash_alike "exit $src alone, $sprc preloaded, or other lines"
fi

# The closing line names the stack it ran (tests/hip-real/manifest).
[ ! -e stack ] || VR_NOTE="(stack: $(cat stack))"
vr_end
