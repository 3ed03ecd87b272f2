#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run a command with the build tools of a kernel unpacked by
# tools/fetch-kernel.sh: on the host when the host has the kernel's compiler,
# else in a chroot of the kernel's root, which then holds its suite's tools
# (KROOT/.toolchain).  Host paths under KROOT stay valid inside (the root
# links its own path to itself); paths outside KROOT do not exist there, so
# a build's files must be under KROOT (tools/build-module.sh copies them).
#
# Usage: tools/kernel-root.sh KROOT COMMAND [ARG...]     (root only for the chroot)
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 KROOT COMMAND [ARG...]" >&2; exit 2; }
kroot=$1
shift
[ -e "$kroot/.done" ] || { echo "kernel-root: $kroot is not a kernel unpacked by tools/fetch-kernel.sh" >&2; exit 2; }
if [ ! -e "$kroot/.toolchain" ]; then
	exec "$@"
fi
case $PWD/ in
"$kroot"/*) ;;
*) echo "kernel-root: $PWD is outside $kroot: not visible in its chroot" >&2; exit 2 ;;
esac
# A private mount namespace: /proc and /dev for the tools, gone at exit.
# shellcheck disable=SC2016
exec unshare -m --propagation private env XS_ROOT="$kroot" XS_PWD="$PWD" sh -c '
	mount -t proc proc "$XS_ROOT/proc" && mount --bind /dev "$XS_ROOT/dev" &&
	exec chroot "$XS_ROOT" /usr/bin/env -C "$XS_PWD" PATH=/usr/sbin:/usr/bin "$@"' sh "$@"
