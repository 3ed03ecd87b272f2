#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch and unpack (never install) one of the Debian kernels the module is
# built and tested against: its image, modules, headers, kbuild and the
# matching source package, into a cache folder, so that the module can be
# built against it (the kfd backend against its in-tree amdkfd) and the VM can
# boot it without touching the host kernel.  The packages are resolved with an
# apt configuration of our own (tools/apt-private.sh): the system's sources
# are neither read nor changed.
#
# Usage: tools/fetch-kernel.sh [--series SERIES] [CACHE_DIR]   (default: .cache/kernel)
#
#   SERIES   6.12 (default: bookworm-security, the kernel of `make check`),
#            6.1 (bookworm), 7.2 (sid), 7.3 (experimental)
#
# The newest version of linux-source-SERIES in that suite is taken, with the
# image and headers of that very version.  Prints the unpacked kernel release
# (e.g. 6.12.118+deb12-amd64) on stdout; the kernel tree is
# CACHE_DIR/KREL/usr/src/linux-source-SERIES.
set -euo pipefail

series=6.12
if [ "${1:-}" = --series ]; then
	series=${2:?usage: tools/fetch-kernel.sh [--series SERIES] [CACHE_DIR]}
	shift 2
fi
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${1:-$top/.cache/kernel}
mkdir -p "$cache"
# The physical path: the headers' Makefiles keep it.
cache=$(cd "$cache" && pwd -P)

log() { echo "fetch-kernel: $series: $*" >&2; }

key=/usr/share/keyrings/debian-archive-keyring.gpg
deb="deb [signed-by=$key] http://deb.debian.org/debian"
case $series in
6.1|6.12)
	suite=bookworm
	sources=("$deb bookworm main"
		 "deb [signed-by=$key] http://deb.debian.org/debian-security bookworm-security main") ;;
7.2) suite=sid; sources=("$deb sid main") ;;
# The build tools of experimental's kernel come from sid.
7.3) suite=experimental; sources=("$deb experimental main" "$deb sid main") ;;
*) echo "fetch-kernel: unknown series $series (6.1, 6.12, 7.2, 7.3)" >&2; exit 2 ;;
esac

# shellcheck source=tools/apt-private.sh
. "$top/tools/apt-private.sh"
apt_private "$cache/apt/$suite" "${sources[@]}"
acache() { apt-cache "${apt_opts[@]}" "$@"; }
exists() { acache show "$1" >/dev/null 2>&1; }

# Newest source package of the series, e.g. 6.12.118-1~deb12u1, 7.3~rc7-1~exp1.
srcver=$(acache madison "linux-source-$series" | awk '{print $3}' | sort -V | tail -n1)
[ -n "$srcver" ] || { log "no linux-source-$series in $suite"; exit 1; }

# The kernel release is the name of the generic amd64 headers package of that
# version: 6.1.0-44-amd64, 6.12.118+deb12-amd64, 7.2.13+deb14-amd64, 7.3-amd64.
krel=
while read -r p; do
	case $p in *-cloud-amd64|*-rt-amd64) continue ;; esac
	if acache madison "$p" | awk '{print $3}' | grep -qxF "$srcver"; then
		krel=${p#linux-headers-}
	fi
done < <(acache pkgnames "linux-headers-$series" | grep -E -- '-amd64$' | sort -V)
[ -n "$krel" ] || { log "no amd64 headers of linux-source-$series $srcver"; exit 1; }
abi=${krel%-amd64}


unpack_kernel() {
	# The image is one package up to 6.12 (linux-image-KREL-unsigned); from 7.x
	# on it is split into the kernel (linux-binary-unsigned-KREL), its modules
	# and its base files.  kbuild is per ABI, except 6.1's (linux-kbuild-6.1).
	if exists "linux-image-$krel-unsigned"; then
		pkgs=("linux-image-$krel-unsigned")
	else
		pkgs=("linux-binary-unsigned-$krel" "linux-modules-$krel" "linux-base-$krel")
	fi
	pkgs+=("linux-headers-$krel" "linux-headers-$abi-common" "linux-source-$series")
	if exists "linux-kbuild-$abi"; then
		pkgs+=("linux-kbuild-$abi")
	else
		pkgs+=("linux-kbuild-$series")
	fi
	for p in "${pkgs[@]}"; do
		exists "$p" || { log "$p is not in $suite"; exit 1; }
	done

	dl="$cache/debs"
	mkdir -p "$dl"
	log "downloading ${pkgs[*]} ($srcver)"
	(cd "$dl" && apt-get "${apt_opts[@]}" download -q "${pkgs[@]/%/=$srcver}" >&2)

	rm -rf "$root"
	mkdir -p "$root"
	for p in "${pkgs[@]}"; do
		f=("$dl/${p}_${srcver//:/%3a}_"*.deb)
		[ -e "${f[0]}" ] || { log "$p $srcver was not downloaded"; exit 1; }
		log "unpacking $(basename "${f[0]}")"
		dpkg -x "${f[0]}" "$root"
	done
	# Merged /usr (7.x): the modules and the kernel are under usr/lib;
	# depmod -b and qemu-run.sh look under lib and boot.
	[ -e "$root/lib" ] || ln -s usr/lib "$root/lib"
	if [ -e "$root/usr/lib/modules/$krel/vmlinuz.unsigned" ]; then
		mkdir -p "$root/boot"
		ln -sfn "../usr/lib/modules/$krel/vmlinuz.unsigned" "$root/boot/vmlinuz-$krel"
	fi

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
	tarball=$(ls "$root/usr/src/linux-source-$series.tar."* | head -n1)
	tar -xf "$tarball" -C "$root/usr/src"
	rm -f "$tarball"

	depmod -b "$root" "$krel"
	touch "$root/.done"
}

# The compiler the kernel was built with (its headers' .kernelvariables): a
# module must be built with it, as its flags follow from that compiler
# (gcc 12 rejects the -fmin-function-alignment of a kernel built by gcc 16).
# When the host has not got it (sid and experimental kernels on Debian 12),
# that suite's build tools and their dependency closure are unpacked into the
# kernel's root, and builds run in a chroot of it (tools/kernel-root.sh):
# make, the compiler (through the headers' own dependencies), pahole for the
# BTF of modules, sparse for `make lint`.  The root holds its own path as a
# link to itself, so that the host's paths stay valid inside the chroot.
toolchain() {
	local cc
	cc=$(sed -n 's/^CC = .*)\(gcc-[0-9]*\)$/x86_64-linux-gnu-\1/p' \
		"$root/usr/src/linux-headers-$krel/.kernelvariables")
	[ -n "$cc" ] || { log "no CC in the headers' .kernelvariables"; exit 1; }
	if command -v "$cc" > /dev/null || [ -e "$root/.toolchain" ]; then
		return
	fi
	log "$cc is not on this host: unpacking $suite's build tools into $root"
	apt_private_unpack "$root" "$cache/debs" "linux-headers-$krel=$srcver" \
		make dwarves sparse coreutils dash bash sed grep gawk findutils diffutils \
		> "$root/.toolchain.new" || exit 1
	# dpkg -x does not run the alternatives: sh, awk.
	ln -sfn dash "$root/usr/bin/sh"
	ln -sfn gawk "$root/usr/bin/awk"
	for d in bin lib64 sbin; do
		[ -e "$root/$d" ] || ln -s "usr/$d" "$root/$d"
	done
	mkdir -p "$root$(dirname "$root")" "$root/tmp" "$root/proc" "$root/dev"
	chmod 1777 "$root/tmp"
	ln -sfn / "$root$root"
	mv "$root/.toolchain.new" "$root/.toolchain"
}

root="$cache/$krel"
if [ ! -e "$root/.done" ]; then
	unpack_kernel
fi
# C=2 runs scripts/checker-valid.sh first (7.x), which the headers lack: without
# it sparse is skipped with a mere notice.  Taken from the kernel's own source.
common="$root/usr/src/linux-headers-$abi-common"
if grep -q checker-valid.sh "$common/Makefile" && [ ! -e "$common/scripts/checker-valid.sh" ]; then
	cp "$root/usr/src/linux-source-$series/scripts/checker-valid.sh" "$common/scripts/"
fi
toolchain
echo "$krel"
