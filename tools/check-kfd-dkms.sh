#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the kfd backend against ROCm's amdgpu-dkms, configured as DKMS
# configures it, offline (Documentation/kfd-backend.rst, "amdgpu-dkms").
#
#   tools/check-kfd-dkms.sh --headers DIR --krel KREL TREE
#   tools/check-kfd-dkms.sh --headers DIR --krel KREL --synthetic KSRC
#
#   TREE         an amdgpu-dkms source as the amdgpu-dkms package installs it
#                (/usr/src/amdgpu-VERSION: dkms.conf, its PRE_BUILD script,
#                amd/, include/, ...), never changed: it is copied first
#   --headers    the kernel headers to build against (a kernel that driver
#                supports; the folder /lib/modules/KREL/build points at)
#   --krel       that kernel's release
#   --synthetic KSRC  no amdgpu-dkms tree: lay the in-tree amdgpu of kernel
#                source KSRC out as an amdgpu-dkms source (amd/, include/kcl,
#                dkms.conf, a PRE_BUILD that writes config.h, rename_symbol.h
#                and amd/dkms/Makefile) and go through the same steps; proves
#                the steps and the DKMS path of kmod/Kbuild, not a ROCm release
#   --out DIR    work folder (default build/kfd-dkms)
#
# What DKMS does before its make, done here: the tree is copied to a build
# folder ($dkms_tree/amdgpu/VERSION/build); dkms.conf's PRE_BUILD runs there
# with DKMS's variables (kernelver, dkms_tree, module, module_version,
# source_tree, kernel_source_dir); it renames the tree's CONFIG_ options
# and exported symbols and runs amd/dkms/configure, which finds the kernel
# through /lib/modules/KREL/build: that link is made in a private mount
# namespace (a tmpfs over /lib/modules, or an overlay over the folder /lib is
# when there is none), so the host's /lib is not touched (root only).  amdgpu itself is not built: the backend needs the
# configured headers (config.h, rename_symbol.h, the renamed options), not
# amdgpu's objects.  Then xsched_kfd.ko is built with KFD_SRC=the build
# folder (tools/build-module.sh) and the features kmod/kfd_conftest.sh found
# are printed.  Exit status 0 when the module built.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
headers='' krel='' synthetic='' out=$top/build/kfd-dkms
usage() {
	sed -n '/^#   tools/,/^# What DKMS/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case $1 in
	--headers) headers=$2; shift 2 ;;
	--krel) krel=$2; shift 2 ;;
	--synthetic) synthetic=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h|--help) usage ;;
	-*) echo "check-kfd-dkms: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
done
if [ -z "$headers" ] || [ -z "$krel" ]; then usage; fi
[ -n "$synthetic" ] || [ $# = 1 ] || usage
headers=$(cd "$headers" && pwd)
log() { echo "check-kfd-dkms: $*" >&2; }

rm -rf "$out"
mkdir -p "$out"
build=$out/dkms/amdgpu/build

if [ -n "$synthetic" ]; then
	# The in-tree amdgpu laid out as an amdgpu-dkms source, with a
	# dkms.conf and a PRE_BUILD of its own that does what the check relies
	# on (finds the kernel through /lib/modules/KREL/build, writes an empty
	# config.h and rename_symbol.h and the flags lines of amd/dkms/Makefile):
	# every option is already the kernel's own, so nothing is renamed.
	synthetic=$(cd "$synthetic" && pwd)
	amd=$synthetic/drivers/gpu/drm/amd
	[ -f "$amd/amdkfd/kfd_priv.h" ] || { log "$synthetic has no drivers/gpu/drm/amd/amdkfd"; exit 2; }
	src=$out/synthetic-src
	mkdir -p "$src/amd" "$src/include/kcl"
	for d in "$amd"/*/; do ln -s "$d" "$src/amd/$(basename "$d")"; done
	: > "$src/include/kcl/kcl_version.h"
	printf 'PACKAGE_NAME="amdgpu"\nPACKAGE_VERSION="synthetic"\nPRE_BUILD="pre-build.sh $kernelver"\n' \
		> "$src/dkms.conf"
	cat > "$src/pre-build.sh" <<-'END'
	#!/bin/sh
	set -e
	test -e "/lib/modules/$1/build/Makefile"
	mkdir -p amd/dkms/config
	: > amd/dkms/config/config.h
	: > include/rename_symbol.h
	printf 'subdir-ccflags-y += -DCONFIG_HSA_AMD\nsubdir-ccflags-y += -DBUILD_AS_DKMS\n' > amd/dkms/Makefile
	END
	chmod +x "$src/pre-build.sh"
	set -- "$src"
fi

tree=$(cd "$1" && pwd)
[ -f "$tree/dkms.conf" ] || { log "$tree has no dkms.conf: not an amdgpu-dkms source tree"; exit 2; }
[ -d "$tree/amd/amdkfd" ] || { log "$tree has no amd/amdkfd"; exit 2; }
version=$(sed -n 's/^PACKAGE_VERSION="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$tree/dkms.conf")
log "amdgpu-dkms $version from $tree"
mkdir -p "$(dirname "$build")"
cp -a "$tree" "$build"
# dkms.conf's PRE_BUILD with DKMS's variables, in a private mount namespace
# where /lib/modules/KREL/build is the given headers.
# shellcheck disable=SC2016
pre=$(cd "$build" && kernelver=$krel dkms_tree=$out/dkms module=amdgpu \
	module_version=$version source_tree=$(dirname "$tree") \
	kernel_source_dir=$headers bash -c 'set +u; . ./dkms.conf >/dev/null 2>&1; echo "$PRE_BUILD"')
[ -n "$pre" ] || { log "dkms.conf has no PRE_BUILD"; exit 1; }
log "PRE_BUILD: $pre (log: $out/pre-build.log)"
# shellcheck disable=SC2016
if ! XS_BUILD=$build XS_KREL=$krel XS_HDR=$headers XS_PRE=$pre \
	XS_TMP=$out/ns unshare -m --propagation private sh -c '
	if [ -d /lib/modules ]; then
		mount -t tmpfs tmpfs /lib/modules
	else
		# No /lib/modules on this host: an overlay over the folder
		# /lib is in, whose upper half is ours.
		lib=$(readlink -f /lib) &&
		mkdir -p "$XS_TMP/up" "$XS_TMP/work" &&
		mount -t overlay overlay -o "lowerdir=$lib,upperdir=$XS_TMP/up,workdir=$XS_TMP/work" "$lib"
	fi &&
	mkdir -p "/lib/modules/$XS_KREL" &&
	ln -s "$XS_HDR" "/lib/modules/$XS_KREL/build" &&
	cd "$XS_BUILD" && eval "bash ./$XS_PRE"' > "$out/pre-build.log" 2>&1; then
	tail -n 30 "$out/pre-build.log" >&2
	log "PRE_BUILD failed: amd/dkms/configure could not configure $version for $krel"
	exit 1
fi
[ -f "$build/amd/dkms/config/config.h" ] || { log "PRE_BUILD wrote no amd/dkms/config/config.h"; exit 1; }
log "configured: $(grep -c '^#define HAVE_' "$build/amd/dkms/config/config.h") HAVE_ features in config.h"

log "building xsched_kfd.ko against $headers with KFD_SRC=$build"
if ko=$("$top/tools/build-module.sh" "$out/module" "$headers" "$build"); then
	log "built $ko"
	echo "kfd-dkms $version, kernel $krel: built; compile tests:"
	sed -n 's/^#define \(XKFD_HAVE_[A-Z_]*\) 1/  \1/p; s|^/\* \(XKFD_HAVE_[A-Z_]*\): not found \*/|  \1 not found|p' \
		"$out/module/kmod/.kfd-conftest.h"
else
	echo "kfd-dkms $version, kernel $krel: BUILD FAILED (log: $out/module/build.log)"
	exit 1
fi
