#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch and unpack (never install) Debian 12's newest 6.12 kernel image, headers,
# kbuild and the matching source package into a cache folder, so the module can be
# built and booted without touching the host kernel.
#
# Usage: tools/fetch-kernel.sh [CACHE_DIR]      (default: .cache/kernel)
# Prints the unpacked kernel release (e.g. 6.12.117+deb12-amd64) on stdout.
set -euo pipefail

cache=${1:-$(dirname "$0")/../.cache/kernel}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

log() { echo "fetch-kernel: $*" >&2; }

if [ -z "${XSCHED_NO_APT_UPDATE:-}" ] && [ ! -e "$cache/.apt-updated" ]; then
	log "apt-get update"
	apt-get update -qq >&2
	touch "$cache/.apt-updated"
fi

# Newest source package version that has a matching amd64 image, e.g. 6.12.117-1~deb12u1.
srcver=$(apt-cache madison linux-source-6.12 | awk '{print $3}' | sort -V | tail -n1)
[ -n "$srcver" ] || { log "no linux-source-6.12 in apt sources"; exit 1; }
upstream=${srcver%%-*}                  # 6.12.117
abi="$upstream+deb12"                   # 6.12.117+deb12
krel="$abi-amd64"

if [ -e "$cache/$krel/.done" ]; then
	echo "$krel"
	exit 0
fi

pkgs=(
	"linux-image-$krel-unsigned"
	"linux-headers-$krel"
	"linux-headers-$abi-common"
	"linux-kbuild-$abi"
	"linux-source-6.12=$srcver"
)
dl="$cache/debs"
mkdir -p "$dl"
log "downloading ${pkgs[*]}"
(cd "$dl" && apt-get download -q "${pkgs[@]}" >&2)

root="$cache/$krel"
rm -rf "$root"
mkdir -p "$root"
for deb in "$dl"/linux-image-"$krel"-unsigned_*.deb "$dl"/linux-headers-"$krel"_*.deb \
	   "$dl"/linux-headers-"$abi"-common_*.deb "$dl"/linux-kbuild-"$abi"_*.deb \
	   "$dl"/linux-source-6.12_*.deb; do
	log "unpacking $(basename "$deb")"
	dpkg -x "$deb" "$root"
done

# The headers' Makefiles point at /usr/src/...; point them at the unpacked tree.
hdr="$root/usr/src/linux-headers-$krel"
grep -rl --include=Makefile '/usr/src/' "$hdr" "$root/usr/src/linux-headers-$abi-common" 2>/dev/null |
	while read -r f; do sed -i "s#/usr/src/#$root/usr/src/#g" "$f"; done
# kbuild scripts/tools live in linux-kbuild's /usr/lib; the headers link there by absolute path.
for l in scripts tools; do
	t="$hdr/$l"
	if [ -L "$t" ]; then
		dest=$(readlink "$t")
		case "$dest" in /*) ln -sfn "$root$dest" "$t" ;; esac
	fi
done

log "unpacking kernel source tarball"
tarball=$(ls "$root"/usr/src/linux-source-6.12.tar.* | head -n1)
tar -xf "$tarball" -C "$root/usr/src"
rm -f "$tarball"

depmod -b "$root" "$krel"
touch "$root/.done"
echo "$krel"
