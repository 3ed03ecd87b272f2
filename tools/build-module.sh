#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build xsched_kfd.ko and xsched_sim.ko from a copy of the sources in OUT_DIR against KDIR, so that a
# second build (without the kfd backend, or for the debug kernel) never touches
# kmod/ in the tree.  KFD_SRC is passed on (empty: the sim backend only).
# Prints the path of xsched_kfd.ko (xsched_sim.ko is sim/xsched_sim.ko beside it);
# the build log goes to OUT_DIR/build.log.  A kernel of tools/fetch-kernel.sh
# whose compiler the host lacks is built for in a chroot of its root
# (tools/kernel-root.sh), from a copy under that root.  SPARSE=1: every
# file through sparse as well (its warnings are in build.log); MAKEFLAGS_EXTRA:
# more arguments of make (-k).
#
# Usage: tools/build-module.sh OUT_DIR KDIR [KFD_SRC]
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 OUT_DIR KDIR [KFD_SRC]" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
out=$1 kdir=$2 kfd=${3:-}
# Physical paths: a kernel root knows itself by its physical path only.
kdir=$(cd "$kdir" && pwd -P)
[ -z "$kfd" ] || kfd=$(cd "$kfd" && pwd -P)
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
kroot=
case $kdir in
*/usr/src/linux-headers-*) kroot=${kdir%/usr/src/linux-headers-*} ;;
esac
[ -e "$kroot/.toolchain" ] || kroot=
src=$out
if [ -n "$kroot" ]; then
	src=$(mktemp -d "$kroot/tmp/xsched-build.XXXXXX")
	trap 'rm -rf "$src"' EXIT
fi
mkdir -p "$src/kmod/sim"
cp "$top/Kbuild" "$src/"
cp -r "$top/include" "$src/"
cp "$top"/kmod/*.[ch] "$top"/kmod/Kbuild "$top"/kmod/*.sh "$src/kmod/"
cp "$top"/kmod/sim/*.[ch] "$top"/kmod/sim/Kbuild "$src/kmod/sim/"
rm -f "$src/kmod/xsched_kfd.mod.c" "$src/kmod/sim/xsched_sim.mod.c"
run=()
[ -z "$kroot" ] || run=("$top/tools/kernel-root.sh" "$kroot")
[ -z "${SPARSE:-}" ] || run+=(make C=2 "CHECK=sparse -Wno-decl")
[ -n "${SPARSE:-}" ] || run+=(make)
# shellcheck disable=SC2086
if ! (cd "$src" && "${run[@]}" -C "$kdir" M="$src" KFD_SRC="$kfd" ${MAKEFLAGS_EXTRA:-} modules) \
	> "$out/build.log" 2>&1; then
	cat "$out/build.log" >&2
	echo "build-module: build against $kdir failed" >&2
	exit 1
fi
[ "$src" = "$out" ] || cp -a "$src/." "$out/"
echo "$out/kmod/xsched_kfd.ko"
