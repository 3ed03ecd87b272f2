#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Fetch and unpack (never install) one of the ROCm userspace stacks Debian
# ships, with an apt configuration of our own: lists, cache and an empty dpkg
# status under the cache folder; the system's sources and dpkg database are
# neither read nor changed.  Every package's dependency closure is resolved
# against that empty status (`apt-get install --simulate`), so the C library,
# C++ runtime and loader of that suite come along, then downloaded with
# `apt-get download` and unpacked with `dpkg -x` into one root per suite.
#
#   tools/fetch-rocm.sh SUITE [SET...]     SET: runtime (default), libs, hipcc
#
#   SUITE     bookworm (ROCm 5.2.3), trixie (5.7.1), sid (6.4.3),
#             experimental (7.2.4)
#   runtime   libamdhip64 and its headers (libamdhip64-dev)
#   libs      the ROCm libraries PyTorch links that the suite has (rocBLAS,
#             hipBLASLt, MIOpen, rocRAND, rocFFT, rocSPARSE, hipSPARSE)
#   hipcc     hipcc with its clang, to build a HIP program (run in a chroot
#             of the root: the suite's clang needs the suite's C library;
#             tests/hip-real/host-check.sh)
#
# XSCHED_ROCM_CACHE (default .cache/rocm) holds SUITE/apt (apt's state),
# SUITE/debs and SUITE/root; a SET is fetched once (SUITE/root/.SET.done).
# Prints the root on stdout.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${XSCHED_ROCM_CACHE:-$top/.cache/rocm}
suite=${1:?usage: tools/fetch-rocm.sh SUITE [runtime|libs|hipcc...]}
shift
[ $# -gt 0 ] || set -- runtime

log() { echo "fetch-rocm: $suite: $*" >&2; }

case $suite in
bookworm|trixie) soname=5 ;;
sid) soname=6 ;;
experimental) soname=7 ;;
*) echo "fetch-rocm: unknown suite $suite (bookworm, trixie, sid, experimental)" >&2; exit 2 ;;
esac

mkdir -p "$cache/$suite"
base=$(cd "$cache/$suite" && pwd)
st=$base/apt
mkdir -p "$st/etc/sources.list.d" "$st/etc/preferences.d" "$st/lists/partial" \
	 "$st/cache/archives/partial" "$base/debs" "$base/root"
: > "$st/status.new"
[ -e "$st/status" ] || mv "$st/status.new" "$st/status"
rm -f "$st/status.new"
key=/usr/share/keyrings/debian-archive-keyring.gpg
{
	echo "deb [signed-by=$key] http://deb.debian.org/debian $suite main"
	[ "$suite" != experimental ] || echo "deb [signed-by=$key] http://deb.debian.org/debian sid main"
} > "$st/etc/sources.list"
apt_opts=(-o "Dir::Etc=$st/etc" -o "Dir::Etc::sourcelist=$st/etc/sources.list"
	  -o "Dir::Etc::sourceparts=$st/etc/sources.list.d"
	  -o "Dir::Etc::preferencesparts=$st/etc/preferences.d"
	  -o "Dir::State::Lists=$st/lists" -o "Dir::State::status=$st/status"
	  -o "Dir::Cache=$st/cache" -o "APT::Architecture=amd64"
	  -o "APT::Architectures::=amd64" -o "Acquire::Languages=none"
	  -o "APT::Install-Recommends=false")
[ "$suite" != experimental ] || apt_opts+=(-o "APT::Default-Release=experimental")
if [ ! -e "$st/.updated" ]; then
	log "apt-get update (own lists in $st)"
	apt-get "${apt_opts[@]}" update -qq >&2
	touch "$st/.updated"
fi

# The names of @candidates the suite has.
have() {
	local p
	for p in "$@"; do
		if apt-cache "${apt_opts[@]}" show "$p" >/dev/null 2>&1; then echo "$p"; fi
	done
}

# The first of @candidates the suite has.
first() {
	local p
	for p in "$@"; do
		if apt-cache "${apt_opts[@]}" show "$p" >/dev/null 2>&1; then echo "$p"; return; fi
	done
}

root=$base/root
for set in "$@"; do
	[ ! -e "$root/.$set.done" ] || continue
	case $set in
	runtime) pkgs=$(have "libamdhip64-$soname" libamdhip64-dev) ;;
	# One package per library, the newest soname the suite has.
	libs) pkgs=$(for g in "librocblas5 librocblas4 librocblas0" \
			      "libhipblaslt1 libhipblaslt0" "libmiopen1" "librocrand1" \
			      "librocfft0" "librocsparse1 librocsparse0" \
			      "libhipsparse4 libhipsparse1 libhipsparse0"; do
			# shellcheck disable=SC2086
			first $g
		done) ;;
	# dash: hipcc runs clang through /bin/sh; coreutils: timeout (both
	# Essential, so no package depends on them).
	hipcc) pkgs=$(have hipcc libamdhip64-dev "libamdhip64-$soname" dash coreutils) ;;
	*) echo "fetch-rocm: unknown set $set (runtime, libs, hipcc)" >&2; exit 2 ;;
	esac
	log "$set: ${pkgs//$'\n'/ }"
	# The closure against an empty system: pkg=version per line.
	# shellcheck disable=SC2086
	mapfile -t closure < <(apt-get "${apt_opts[@]}" install --simulate $pkgs 2>/dev/null |
		sed -n 's/^Inst \([^ ]*\) (\([^ ]*\) .*/\1=\2/p')
	[ ${#closure[@]} -gt 0 ] || { log "$set: nothing to fetch (apt could not resolve $pkgs)"; exit 1; }
	log "$set: ${#closure[@]} packages with their dependencies"
	(cd "$base/debs" && apt-get "${apt_opts[@]}" download -q "${closure[@]}" >&2)
	for pv in "${closure[@]}"; do
		p=${pv%%=*} v=${pv#*=}
		deb=
		for d in "$base/debs/${p}_${v//:/%3a}_"*.deb; do [ -e "$d" ] && deb=$d; done
		[ -n "$deb" ] || { log "$p $v was not downloaded"; exit 1; }
		dpkg -x "$deb" "$root"
	done
	printf '%s\n' "${closure[@]}" > "$root/.$set.done"
done
# Merged /usr (trixie on): base-files makes these links on a real system.
for d in bin lib lib64 sbin; do
	[ -e "$root/$d" ] || [ ! -d "$root/usr/$d" ] || ln -s "usr/$d" "$root/$d"
done
echo "$root"
