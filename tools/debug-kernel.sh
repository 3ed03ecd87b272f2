#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (once, then cached) the debug guest kernel of `make check-debug` from the
# Debian 6.12 source that tools/fetch-kernel.sh unpacked: allnoconfig plus
# tools/debug-kernel/config (KASAN, lockdep, kmemleak, debugobjects, UBSAN, KFENCE,
# ...).  Prints the build folder on stdout: it holds arch/x86/boot/bzImage and is the
# KDIR to build the module against.  Progress goes to stderr, the full build log to
# <build>/build.log.
#
# Usage: tools/debug-kernel.sh KSRC OUT_DIR
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 KSRC OUT_DIR" >&2; exit 2; }
ksrc=$1
out=$2
frag=$(cd "$(dirname "$0")" && pwd)/debug-kernel/config
log() { echo "debug-kernel: $*" >&2; }

[ -f "$ksrc/Makefile" ] || { log "no kernel source at $ksrc (run make kernel)"; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
# The cached build is reused while the fragment it was configured from is unchanged.
stamp=$(sha256sum "$frag" | cut -c1-16)
if [ -f "$out/.done" ] && [ "$(cat "$out/.done")" = "$stamp" ]; then
	echo "$out"
	exit 0
fi
rm -f "$out/.done"

kmake() { make -C "$ksrc" O="$out" LOCALVERSION=-xsched-debug "$@"; }

log "configuring in $out (allnoconfig + $(grep -c '^CONFIG_' "$frag") options)"
kmake allnoconfig > "$out/build.log" 2>&1
"$ksrc/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$frag" >> "$out/build.log" 2>&1
kmake olddefconfig >> "$out/build.log" 2>&1
# A dependency left unmet drops an option silently: refuse to build a kernel that
# lacks a checker we claim to run.
lost=0
while read -r line; do
	case "$line" in
	CONFIG_*=*) want=$line ;;
	"# CONFIG_"*" is not set") want=$line ;;
	*) continue ;;
	esac
	grep -qxF "$want" "$out/.config" || { log "not in the resulting .config: $want"; lost=1; }
done < "$frag"
[ "$lost" = 0 ] || { log "the config fragment did not apply; see $out/build.log"; exit 1; }

jobs=$(nproc)
start=$(date +%s)
log "building (make -j$jobs; about 8 minutes on 2 cores; log: $out/build.log)"
kmake -j"$jobs" all >> "$out/build.log" 2>&1 || {
	tail -n 40 "$out/build.log" >&2
	log "build failed"
	exit 1
}
log "built in $(( $(date +%s) - start )) s"
echo "$stamp" > "$out/.done"
echo "$out"
