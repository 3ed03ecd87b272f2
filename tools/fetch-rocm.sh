#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Fetch and unpack (never install) one of the ROCm userspace stacks Debian
# ships, exactly as tests/hip-real/manifest lists it (packages and
# versions), with an apt configuration of our own: lists, cache and an empty
# dpkg status under the cache folder; the system's sources and dpkg database
# are neither read nor changed.  The manifest's packages are asked for at
# their versions (pkg=version) and their dependency closure is resolved
# against that empty status (`apt-get install --simulate`), so the suite's C
# library, C++ runtime and loader come along at whatever versions the suite
# has; then `apt-get download` and `dpkg -x` into one root per suite and
# manifest.
#
#   tools/fetch-rocm.sh SUITE [SET...]   fetch; prints the root on stdout
#   tools/fetch-rocm.sh --root SUITE     the root the manifest's stack goes to
#   tools/fetch-rocm.sh --stack SUITE    the manifest's stack: "pkg=version ..."
#
#   SUITE     bookworm (ROCm 5.2.3), trixie (5.7.1), sid (6.4.3),
#             experimental (7.2.4)
#   SET       runtime (default): libamdhip64, its headers, ROCr
#             libs: the ROCm libraries PyTorch links that the suite has
#             hipcc: hipcc with its clang and the runtime set, to build a HIP
#             program (run in a chroot of the root: the suite's clang needs
#             the suite's C library; tests/hip-real/host-check.sh)
#
# Nothing is silent: a package of the manifest that the suite no longer has,
# or has at another version, fails the fetch with apt's own reason (exit 1);
# so does a set the manifest does not list for the suite.  apt's lists are
# refreshed when older than XSCHED_ROCM_LISTS_MAX_AGE seconds (default
# 86400), and once more when apt cannot find a manifest version or a
# download fails (a mirror that moved since the lists were fetched).
#
# Environment: XSCHED_ROCM_CACHE (default .cache/rocm) holds SUITE/apt (apt's
# state), SUITE/debs and the roots: SUITE/roots/DIGEST, DIGEST naming the
# suite's manifest lines; SUITE/root (this script's earlier layout) is used
# when every set unpacked there is at the manifest's versions.  A SET is
# fetched once (ROOT/.SET.done lists its closure, pkg=version).
# XSCHED_ROCM_MANIFEST (default tests/hip-real/manifest);
# XSCHED_ROCM_SOURCES: a sources.list used instead of Debian's (tests).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${XSCHED_ROCM_CACHE:-$top/.cache/rocm}
manifest=${XSCHED_ROCM_MANIFEST:-$top/tests/hip-real/manifest}
max_age=${XSCHED_ROCM_LISTS_MAX_AGE:-86400}
usage="usage: tools/fetch-rocm.sh SUITE [runtime|libs|hipcc...] | --root SUITE | --stack SUITE"
mode=fetch
case ${1:-} in
--root|--stack) mode=${1#--}; shift ;;
esac
suite=${1:?$usage}
shift
[ $# -gt 0 ] || set -- runtime

log() { echo "fetch-rocm: $suite: $*" >&2; }
die() { log "$*"; exit 1; }

case $suite in
bookworm|trixie|sid|experimental) ;;
*) echo "fetch-rocm: unknown suite $suite (bookworm, trixie, sid, experimental)" >&2; exit 2 ;;
esac
[ -r "$manifest" ] || die "no manifest $manifest"
# The manifest's lines of this suite: "set package version".
lines=$(awk -v s="$suite" '!/^#/ && $1 == s { print $2, $3, $4 }' "$manifest")
[ -n "$lines" ] || die "$manifest lists nothing for $suite"
# pkg=version of @set's lines.
set_pins() { echo "$lines" | awk -v t="$1" '$1 == t { print $2 "=" $3 }'; }

if [ "$mode" = stack ]; then
	{ set_pins runtime; set_pins libs; set_pins hipcc; } | paste -sd' '
	exit 0
fi

mkdir -p "$cache/$suite"
base=$(cd "$cache/$suite" && pwd)
digest=$(echo "$lines" | sha256sum | cut -c1-12)
# Does @root hold every set unpacked there at the manifest's versions (and
# the runtime set at least)?
root_matches() {
	local r=$1 t pin
	[ -e "$r/.runtime.done" ] || return 1
	for t in runtime libs hipcc; do
		[ -e "$r/.$t.done" ] || continue
		for pin in $(set_pins "$t"); do
			grep -qxF "$pin" "$r/.$t.done" || return 1
		done
	done
}
if root_matches "$base/root"; then
	root=$base/root
else
	root=$base/roots/$digest
fi
if [ "$mode" = root ]; then
	echo "$root"
	exit 0
fi

st=$base/apt
mkdir -p "$st/etc/sources.list.d" "$st/etc/preferences.d" "$st/lists/partial" \
	 "$st/cache/archives/partial" "$base/debs" "$root"
: > "$st/status.new"
[ -e "$st/status" ] || mv "$st/status.new" "$st/status"
rm -f "$st/status.new"
key=/usr/share/keyrings/debian-archive-keyring.gpg
if [ -n "${XSCHED_ROCM_SOURCES:-}" ]; then
	cp "$XSCHED_ROCM_SOURCES" "$st/etc/sources.list"
else
	{
		echo "deb [signed-by=$key] http://deb.debian.org/debian $suite main"
		[ "$suite" != experimental ] ||
			echo "deb [signed-by=$key] http://deb.debian.org/debian sid main"
	} > "$st/etc/sources.list"
fi
apt_opts=(-o "Dir::Etc=$st/etc" -o "Dir::Etc::sourcelist=$st/etc/sources.list"
	  -o "Dir::Etc::sourceparts=$st/etc/sources.list.d"
	  -o "Dir::Etc::preferencesparts=$st/etc/preferences.d"
	  -o "Dir::State::Lists=$st/lists" -o "Dir::State::status=$st/status"
	  -o "Dir::Cache=$st/cache" -o "APT::Architecture=amd64"
	  -o "APT::Architectures::=amd64" -o "Acquire::Languages=none"
	  -o "APT::Install-Recommends=false")
[ "$suite" != experimental ] || apt_opts+=(-o "APT::Default-Release=experimental")

refreshed=0
refresh() {
	local out
	log "apt-get update (own lists in $st)"
	if ! out=$(apt-get "${apt_opts[@]}" update -q 2>&1); then
		printf '%s\n' "$out" | sed 's/^/fetch-rocm:   /' >&2
		die "apt-get update failed (above)"
	fi
	# apt leaves a list it could not fetch as it was: say so.
	if echo "$out" | grep -q '^[WE]:'; then
		echo "$out" | grep '^[WE]:' | sed 's/^/fetch-rocm:   /' >&2
	fi
	touch "$st/.updated"
	refreshed=1
}
if [ ! -e "$st/.updated" ] ||
   [ $(( $(date +%s) - $(stat -c %Y "$st/.updated") )) -ge "$max_age" ]; then
	refresh
fi

for set in "$@"; do
	[ ! -e "$root/.$set.done" ] || continue
	case $set in
	runtime|libs) mapfile -t pins < <(set_pins "$set") ;;
	# dash: hipcc runs clang through /bin/sh; coreutils: timeout (both
	# Essential, so no package depends on them; not what is tested).
	hipcc) mapfile -t pins < <(set_pins hipcc; set_pins runtime; echo dash; echo coreutils) ;;
	*) echo "fetch-rocm: unknown set $set (runtime, libs, hipcc)" >&2; exit 2 ;;
	esac
	[ -n "$(set_pins "$set")" ] || die "$set: $manifest lists no package of this set for $suite"
	log "$set: ${pins[*]}"
	# The closure against an empty system (pkg=version per line), then
	# its download; apt's own words when it cannot (a package gone, a
	# version moved, a file the mirror no longer has): once more after
	# refreshing the lists, then a failure.
	for try in 1 2; do
		why=
		if ! out=$(apt-get "${apt_opts[@]}" install --simulate "${pins[@]}" 2>&1); then
			why="apt cannot resolve the stack"
		else
			mapfile -t closure < <(echo "$out" |
				sed -n 's/^Inst \([^ ]*\) (\([^ ]*\) .*/\1=\2/p')
			[ ${#closure[@]} -gt 0 ] || die "$set: apt resolved nothing for ${pins[*]}"
			if ! out=$(cd "$base/debs" &&
				   apt-get "${apt_opts[@]}" download -q "${closure[@]}" 2>&1); then
				why="a download failed"
			fi
		fi
		[ -n "$why" ] || break
		if [ $try = 1 ] && [ $refreshed = 0 ]; then
			log "$set: $why (lists older than the mirror?); refreshing them"
			refresh
			continue
		fi
		echo "$out" | grep -E '^(E|W):' | sed 's/^/fetch-rocm:   /' >&2
		die "$set: $why: the stack of $manifest is not what Debian has (apt's reason above); if Debian moved it, change the manifest deliberately"
	done
	for pin in $(set_pins "$set"); do
		printf '%s\n' "${closure[@]}" | grep -qxF "$pin" ||
			die "$set: apt resolved ${pin%%=*} to another version than the manifest's ${pin#*=}"
	done
	log "$set: ${#closure[@]} packages with their dependencies"
	for pv in "${closure[@]}"; do
		p=${pv%%=*} v=${pv#*=}
		deb=
		for d in "$base/debs/${p}_${v//:/%3a}_"*.deb; do [ -e "$d" ] && deb=$d; done
		[ -n "$deb" ] || die "$p $v was not downloaded"
		dpkg -x "$deb" "$root"
	done
	printf '%s\n' "${closure[@]}" > "$root/.$set.done"
done
# Merged /usr (trixie on): base-files makes these links on a real system.
for d in bin lib lib64 sbin; do
	[ -e "$root/$d" ] || [ ! -d "$root/usr/$d" ] || ln -s "usr/$d" "$root/$d"
done
echo "$root"
