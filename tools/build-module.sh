#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build xsched_kfd.ko and xsched_sim.ko from a copy of the sources in OUT_DIR against KDIR, so that a
# second build (without the kfd backend, or for the debug kernel) never touches
# kmod/ in the tree.  KFD_SRC is passed on (empty: the sim backend only).
# Prints the path of xsched_kfd.ko (xsched_sim.ko is sim/xsched_sim.ko beside it);
# the build log goes to OUT_DIR/build.log.
#
# Usage: tools/build-module.sh OUT_DIR KDIR [KFD_SRC]
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 OUT_DIR KDIR [KFD_SRC]" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
out=$1 kdir=$2 kfd=${3:-}
rm -rf "$out"
mkdir -p "$out/kmod/sim"
cp "$top/Kbuild" "$out/"
cp -r "$top/include" "$out/"
cp "$top"/kmod/*.[ch] "$top"/kmod/Kbuild "$top"/kmod/*.sh "$out/kmod/"
cp "$top"/kmod/sim/*.[ch] "$top"/kmod/sim/Kbuild "$out/kmod/sim/"
rm -f "$out/kmod/xsched_kfd.mod.c" "$out/kmod/sim/xsched_sim.mod.c"
if ! make -C "$kdir" M="$out" KFD_SRC="$kfd" modules > "$out/build.log" 2>&1; then
	cat "$out/build.log" >&2
	echo "build-module: build against $kdir failed" >&2
	exit 1
fi
echo "$out/kmod/xsched_kfd.ko"
