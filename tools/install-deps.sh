#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what building, booting and testing xsched needs on Debian 12 (as root).
# Installs nothing that is already present; never installs a kernel.
set -euo pipefail

pkgs=(
	build-essential
	bc bison flex
	libelf-dev
	dwarves
	kmod cpio
	qemu-system-x86
	busybox-static
	sparse
	perl python3
	python3-docutils
	pkg-config
	gnuplot-nox
	dkms
	rsync
	libhsa-runtime-dev
	libamdhip64-dev
	hipcc
)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing packages: ${missing[*]}; run as root or install them" >&2
	exit 1
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
