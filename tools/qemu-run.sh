#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot Debian's real 6.12 kernel (unpacked by tools/fetch-kernel.sh) in QEMU/TCG with a
# throw-away busybox initramfs, load out-of-tree module(s), run one command in the
# guest, stream its output and exit with its status.
#
# Usage: tools/qemu-run.sh [options] -- COMMAND...
#   --krel REL        kernel release (default: output of tools/fetch-kernel.sh)
#   --cache DIR       kernel cache root (default: <repo>/.cache/kernel)
#   --module F.ko[:ARGS]
#                     insmod F.ko in the guest before COMMAND, with module parameters
#                     ARGS (e.g. kmod/sim/xsched_sim.ko:sim_cus=4); repeatable, in order
#   --amdgpu          first load Debian's amdgpu.ko and its dependencies (the order
#                     `modprobe --show-depends` gives); /dev/kfd appears with no GPU
#   --copy PATH       copy a file or directory into the guest's /xsched/ (repeatable;
#                     directories keep their basename)
#   --rmmod           after COMMAND, rmmod our --module modules in reverse order; a
#                     failing rmmod is printed and makes the exit status non-zero
#   --timeout SEC     kill QEMU after SEC seconds and exit 124 (default 1500)
#   --smp N           guest CPUs (default 2)
#   --mem MB          guest memory (default 2048)
#   --append ARGS     extra kernel command line (e.g. idle=poll for steadier timing)
#   --kernel FILE     boot this bzImage instead of the cached Debian kernel (the debug
#                     kernel of `make check-debug`; not with --amdgpu)
#
# COMMAND (its words joined by spaces, as ssh does) runs as `sh -c COMMAND` under busybox
# in /xsched with PATH=/xsched:/bin:/sbin:/usr/bin:/usr/sbin and stdin from /dev/null.
# Mounted: proc, sysfs, devtmpfs (/dev), devpts, debugfs (/sys/kernel/debug), tracefs
# (/sys/kernel/tracing), tmpfs on /tmp and /dev/shm.  If a module fails to load,
# COMMAND is not run.  Processes COMMAND leaves behind are killed (SIGKILL) before
# --rmmod.  --rmmod unloads only --module modules, never amdgpu and its dependencies.
#
# Output: the guest has two serial ports.  ttyS0 is the kernel console; it goes to a log
# file and is never interleaved with test output.  ttyS1 (raw mode) carries COMMAND's
# stdout+stderr and this tool's guest-side messages; it is streamed to our stdout.
#
# Runners run each test program under tools/vm-limit (/bin/vm-limit in the guest), so
# a hang fails that program after XSCHED_TEST_TIMEOUT seconds (default 600; read in
# the guest: set it in COMMAND, e.g. 'XSCHED_TEST_TIMEOUT=60 ./run.sh').
#
# Kernel splats fail the run: tools/vm-gate is installed as /bin/vm-gate (runners use it
# to pin a splat or a leaked object on the test or suite that caused it), and after COMMAND and --rmmod the guest
# scans everything the kernel logged since /init started.  A splat there prints
# "qemu-run: kernel splat during the run" with the lines and makes a zero status 1.
# On a kernel with kmemleak, the guest also scans for leaks after --rmmod and a
# report fails the run ("qemu-run: kmemleak report").
# The kernel boots with panic_on_oops=1 (after an oops locks may be held and the run
# can only hang) and a log buffer large enough that the scan never misses a line.
#
# If COMMAND (or a module load, or --rmmod, or the splat scan) fails, the guest prints its dmesg between
# "---- dmesg ----" and "---- end dmesg ----" lines (messages from before /init started
# are left out there; they are in the console log).  The guest ends with a marker line
# "XSCHED-VM-EXIT=<rc>:<nonce>" (nonce unique per run; the line is not echoed) and
# powers off; the kernel runs with panic=-1 and QEMU with -no-reboot, so a panic ends
# QEMU at once.  If the marker never comes, the tail of the kernel console log is
# printed to stderr.  Set QEMU_RUN_CONSOLE_LOG=FILE to keep the whole console log.
#
# Exit status: COMMAND's status; 1 if a module failed to load or an rmmod failed
# (while COMMAND itself succeeded); 124 on --timeout; 125 if the guest never reported a
# status (panic, crash); 2 for usage errors or missing host tools; 128+N when killed by
# signal N (QEMU is stopped and the temp dir removed).
set -euo pipefail

prog=qemu-run
repo=$(cd "$(dirname "$0")/.." && pwd)

die() { echo "$prog: $*" >&2; exit 2; }
usage() { sed -n '/^# Usage:/,/^#$/s/^# \{0,1\}//p' "$0" >&2; exit 2; }

krel=
cache=$repo/.cache/kernel
modules=()
copies=()
amdgpu=0
do_rmmod=0
timeout_s=1500
smp=2
mem=2048
append=
kernel=

while [ $# -gt 0 ]; do
	case "$1" in
	--krel) [ $# -ge 2 ] || usage; krel=$2; shift 2 ;;
	--cache) [ $# -ge 2 ] || usage; cache=$2; shift 2 ;;
	--module) [ $# -ge 2 ] || usage; modules+=("$2"); shift 2 ;;
	--copy) [ $# -ge 2 ] || usage; copies+=("$2"); shift 2 ;;
	--amdgpu) amdgpu=1; shift ;;
	--rmmod) do_rmmod=1; shift ;;
	--timeout) [ $# -ge 2 ] || usage; timeout_s=$2; shift 2 ;;
	--smp) [ $# -ge 2 ] || usage; smp=$2; shift 2 ;;
	--mem) [ $# -ge 2 ] || usage; mem=$2; shift 2 ;;
	--append) [ $# -ge 2 ] || usage; append=$2; shift 2 ;;
	--kernel) [ $# -ge 2 ] || usage; kernel=$2; shift 2 ;;
	--) shift; break ;;
	-h|--help) usage ;;
	*) echo "$prog: unknown option '$1'" >&2; usage ;;
	esac
done
[ $# -gt 0 ] || { echo "$prog: no COMMAND given" >&2; usage; }
for n in "$timeout_s" "$smp" "$mem"; do
	case "$n" in ''|*[!0-9]*) die "not a number: '$n'" ;; esac
done

need() { # tool package
	command -v "$1" >/dev/null 2>&1 || die "'$1' not found; install the Debian package '$2'"
}
need qemu-system-x86_64 qemu-system-x86
need cpio cpio
need timeout coreutils
busybox=
for b in /bin/busybox /usr/bin/busybox; do
	[ -x "$b" ] && { busybox=$b; break; }
done
[ -n "$busybox" ] || die "busybox not found; install the Debian package 'busybox-static'"
if command -v ldd >/dev/null 2>&1 && ldd "$busybox" >/dev/null 2>&1; then
	die "$busybox is dynamically linked; install the Debian package 'busybox-static'"
fi
if [ ${#modules[@]} -gt 0 ] || [ "$amdgpu" = 1 ]; then
	need modinfo kmod
fi
if [ "$amdgpu" = 1 ]; then
	need modprobe kmod
	need xz xz-utils
fi

if [ -n "$kernel" ]; then
	[ "$amdgpu" = 0 ] || die "--kernel and --amdgpu do not go together"
	[ -r "$kernel" ] || die "--kernel: no such file: $kernel"
	vmlinuz=$kernel
else
	mkdir -p "$cache"
	cache=$(cd "$cache" && pwd)
	if [ -z "$krel" ]; then
		krel=$("$repo/tools/fetch-kernel.sh" "$cache") || die "tools/fetch-kernel.sh failed"
	fi
	kroot=$cache/$krel
	vmlinuz=$kroot/boot/vmlinuz-$krel
	[ -r "$vmlinuz" ] || die "no kernel at $vmlinuz (run tools/fetch-kernel.sh)"
fi

start=$(date +%s.%N)
tmp=$(mktemp -d /tmp/qemu-run.XXXXXX)
qpid=
# shellcheck disable=SC2317
cleanup() {
	# Stop QEMU if we are leaving early (signal, closed output pipe).
	if [ -n "$qpid" ]; then
		kill "$qpid" 2>/dev/null || true
		wait "$qpid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 141' PIPE
trap 'exit 143' TERM

root=$tmp/root
q=$root/.qemu-run
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run,etc,xsched} \
	"$q/amd" "$q/mod"
cp "$busybox" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
cp "$repo/tools/vm-gate" "$root/bin/vm-gate"
cp "$repo/tools/vm-limit" "$root/bin/vm-limit"
printf '%s' "$*" >"$q/cmd"
nonce=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
printf '%s\n' "$nonce" >"$q/nonce"
[ "$do_rmmod" = 1 ] && touch "$q/rmmod"

# Debian's amdgpu and its dependencies, decompressed (the guest's insmod gets plain ELF).
if [ "$amdgpu" = 1 ]; then
	[ -e "$kroot/lib/modules/$krel/modules.dep.bin" ] ||
		die "no modules.dep.bin under $kroot/lib/modules/$krel (run depmod -b)"
	deps=$(modprobe -d "$kroot" -S "$krel" --show-depends amdgpu) ||
		die "modprobe --show-depends amdgpu failed"
	i=0
	while read -r verb path opts; do
		[ "$verb" = insmod ] || continue
		i=$((i + 1))
		base=$(basename "$path")
		base=${base%.xz}; base=${base%.zst}; base=${base%.gz}
		dst=$q/amd/$(printf '%02d' "$i")-$base
		case "$path" in
		*.xz) xz -dc "$path" >"$dst" ;;
		*.zst) zstd -qdc "$path" >"$dst" ;;
		*.gz) gzip -dc "$path" >"$dst" ;;
		*) cp "$path" "$dst" ;;
		esac
		printf '%s' "$opts" >"$dst.args"
	done <<<"$deps"
	[ "$i" -gt 0 ] || die "modprobe listed no modules for amdgpu"
fi

# Our modules: NN-base.ko, NN-base.args (parameters), NN-base.name (for rmmod).
i=0
for spec in "${modules[@]}"; do
	i=$((i + 1))
	file=$spec args=
	case "$spec" in
	*.ko:*) file=${spec%%.ko:*}.ko; args=${spec#*.ko:} ;;
	esac
	[ -r "$file" ] || die "module not found: $file"
	n=$(printf '%02d' "$i")-$(basename "$file" .ko)
	cp "$file" "$q/mod/$n.ko"
	printf '%s' "$args" >"$q/mod/$n.args"
	name=$(modinfo -F name "$file" 2>/dev/null || true)
	if [ -z "$name" ]; then
		name=$(basename "$file" .ko)
		name=${name//-/_}
	fi
	printf '%s' "$name" >"$q/mod/$n.name"
done

for p in "${copies[@]}"; do
	[ -e "$p" ] || die "--copy: no such file or directory: $p"
	cp -rL "$p" "$root/xsched/"
done

cat >"$root/init" <<'EOF'
#!/bin/sh
# Guest side of tools/qemu-run.sh.
export PATH=/xsched:/bin:/sbin:/usr/bin:/usr/sbin HOME=/tmp TERM=dumb
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
Q=/.qemu-run
OUT=/dev/ttyS1
stty -F "$OUT" raw -echo 2>/dev/null
# The kernel booted and /init runs: from here on a crash is the run's.
echo "XSCHED-VM-UP:$(cat "$Q/nonce")" >"$OUT"
# Kernel messages up to here are boot noise; failure reports show only what follows.
boot_lines=$(dmesg | wc -l)

print_dmesg() {
	echo "---- dmesg ----"
	echo "(first $boot_lines boot lines omitted)"
	dmesg | tail -n "+$((boot_lines + 1))"
	echo "---- end dmesg ----"
}

# A kernel with kmemleak (make check-debug): forget what boot left, so that a
# report at the end belongs to this run.
leaks=/sys/kernel/debug/kmemleak
[ -w "$leaks" ] && echo clear >"$leaks"

# Phase 1: load modules and run COMMAND.
(
	for m in "$Q"/amd/*.ko; do
		[ -e "$m" ] || continue
		# shellcheck disable=SC2046
		if ! insmod "$m" $(cat "$m.args"); then
			echo "qemu-run: insmod $(basename "$m") failed"
			touch "$Q/setup-failed"
			exit 1
		fi
	done
	for m in "$Q"/mod/*.ko; do
		[ -e "$m" ] || continue
		name=$(cat "${m%.ko}.name")
		# shellcheck disable=SC2046
		if ! insmod "$m" $(cat "${m%.ko}.args"); then
			echo "qemu-run: insmod $name failed"
			touch "$Q/setup-failed"
			exit 1
		fi
		echo "$name" >>"$Q/loaded"
	done
	cd /xsched || exit 1
	sh -c "$(cat "$Q/cmd")"
) <"/dev/null" >"$OUT" 2>&1
rc=$?

# Leftover background processes would hold module references and the serial port.
kill -KILL -1 2>/dev/null
sleep 0.1

# Phase 2: rmmod, dmesg on failure, exit marker.  Closing the last fd of ttyS1 waits
# for its output to drain, so nothing is lost at poweroff.
(
	if [ -e "$Q/rmmod" ] && [ -e "$Q/loaded" ]; then
		for name in $(tac "$Q/loaded"); do
			if ! rmmod "$name"; then
				echo "qemu-run: rmmod $name failed"
				[ "$rc" = 0 ] && rc=1
			fi
		done
	fi
	if [ -w "$leaks" ]; then
		# An object is reported once it is older than 5 s and unreferenced
		# in two scans.
		sleep 6
		echo scan >"$leaks"
		echo scan >"$leaks"
		if [ -s "$leaks" ] && grep -q . "$leaks"; then
			echo "qemu-run: kmemleak report"
			cat "$leaks"
			[ "$rc" = 0 ] && rc=1
		else
			echo "qemu-run: kmemleak: no leak"
		fi
	fi
	if ! vm-gate log "$boot_lines" "the whole run"; then
		echo "qemu-run: kernel splat during the run"
		[ "$rc" = 0 ] && rc=1
	fi
	if [ "$rc" != 0 ]; then
		print_dmesg
	fi
	echo "XSCHED-VM-EXIT=$rc:$(cat "$Q/nonce")"
) <"/dev/null" >"$OUT" 2>&1
poweroff -f
EOF
chmod +x "$root/init"

initrd=$tmp/initrd.cpio
(cd "$root" && find . -print0 | cpio --null -o -H newc -R 0:0 --quiet) >"$initrd"

nmods=${#modules[@]}
extra=
[ "$amdgpu" = 1 ] && extra=", amdgpu"
echo "$prog: booting ${kernel:-$krel} (smp $smp, ${mem} MB, $nmods module(s)$extra) ..." >&2

console=$tmp/console.log
rcfile=$tmp/rc
mkfifo "$tmp/out"
# A kernel that dies before /init ran (seen here: an int3 oops while Debian's
# kernel patches its own text during early boot under multi-threaded TCG, about
# one boot in a hundred) has not run anything of ours; such a boot is retried,
# at most twice, and said so.  A crash after /init started is never retried.
boot=0
while :; do
	boot=$((boot + 1))
	rm -f "$rcfile" "$tmp/up"
	# timeout(1) runs QEMU in its own process group; cleanup() kills it by pid.
	timeout "$timeout_s" qemu-system-x86_64 \
		-nographic -nodefaults -no-reboot \
		-accel tcg,thread=multi -cpu max -smp "$smp" -m "$mem" \
		-kernel "$vmlinuz" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 panic_on_oops=1 log_buf_len=16M rdinit=/init${append:+ $append}" \
		-monitor none \
		-serial "file:$console" \
		-serial stdio \
		</dev/null >"$tmp/out" 2>"$tmp/qemu.err" &
	qpid=$!
	while IFS= read -r line || [ -n "$line" ]; do
		case "$line" in
		*"XSCHED-VM-UP:$nonce") touch "$tmp/up" ;;
		*"XSCHED-VM-EXIT="*":$nonce")
			# The marker may follow output that did not end in a newline.
			pre=${line%XSCHED-VM-EXIT=*}
			[ -z "$pre" ] || printf '%s\n' "$pre" 2>/dev/null || exit 141
			v=${line##*XSCHED-VM-EXIT=}
			printf '%s\n' "${v%%:*}" >"$rcfile"
			;;
		*) printf '%s\n' "$line" 2>/dev/null || exit 141 ;;
		esac
	done <"$tmp/out"
	qst=0
	wait "$qpid" || qst=$?
	qpid=
	if [ -e "$tmp/up" ] || [ -s "$rcfile" ] || [ "$qst" = 124 ] || [ "$boot" -ge 3 ]; then
		break
	fi
	echo "$prog: the kernel died before /init started (boot $boot of 3; nothing of ours ran); booting again:" >&2
	grep -E 'Oops|BUG:|RIP:|Kernel panic' "$console" | head -n 5 | sed "s/^/$prog:   /" >&2
done

elapsed=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
if [ -n "${QEMU_RUN_CONSOLE_LOG:-}" ] && [ -e "$console" ]; then
	cp "$console" "$QEMU_RUN_CONSOLE_LOG"
fi
show_console() {
	if [ -s "$tmp/qemu.err" ]; then
		echo "$prog: ---- QEMU stderr ----" >&2
		cat "$tmp/qemu.err" >&2
	fi
	echo "$prog: ---- last kernel console lines ----" >&2
	tail -n 60 "$console" >&2 2>/dev/null
	echo "$prog: ---- end kernel console ----" >&2
}

if [ -s "$rcfile" ]; then
	rc=$(cat "$rcfile")
	echo "$prog: exit status $rc after ${elapsed} s" >&2
	exit "$rc"
fi
if [ "$qst" = 124 ]; then
	echo "$prog: timeout: killed QEMU after $timeout_s s (${elapsed} s total)" >&2
	show_console
	exit 124
fi
echo "$prog: guest ended without reporting an exit status (QEMU status $qst," \
	"${elapsed} s); kernel panic or crash?" >&2
show_console
exit 125
