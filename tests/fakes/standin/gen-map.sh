#!/bin/sh
# SPDX-License-Identifier: MIT
# gen-map.sh REAL_LIB OBJ... > MAP: a linker version script that gives each
# symbol the OBJs define with default visibility (EXPORT; what the files of
# one stand-in share among themselves is hidden) the version node the real
# library exports it at, so programs linked against the real library bind to
# the stand-in.  A symbol the real library does not export is an error: the
# stand-in must not offer what the runtime it stands in for does not have.
set -eu
real=$1
shift
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
objdump -T "$real" | awk '$4 != "*UND*" && NF >= 7 { print $(NF), $(NF-1) }' |
	sed 's/[()]//g' | sort -u > "$tmp"
nodes=$(awk '{ print $2 }' "$tmp" | sort -u -V | grep -v -e '^Base$' -e '^GLIBC')
missing=0
syms=$(readelf -sW "$@" | awk '$5 == "GLOBAL" && $6 == "DEFAULT" && $7 != "UND" &&
	($4 == "FUNC" || $4 == "OBJECT") { print $8 }' | sort -u)
for s in $syms; do
	if ! awk -v s="$s" '$1 == s { f = 1 } END { exit !f }' "$tmp"; then
		echo "gen-map.sh: $s is not exported by $real" >&2
		missing=1
	fi
done
[ "$missing" = 0 ] || exit 1
prev=
for n in $nodes; do
	list=$(for s in $syms; do awk -v s="$s" -v n="$n" '$1 == s && $2 == n { print "\t\t" s ";" }' "$tmp"; done)
	printf '%s {\n' "$n"
	[ -n "$list" ] && printf '\tglobal:\n%s\n' "$list"
	[ -z "$prev" ] && printf '\tlocal: *;\n'
	printf '}%s;\n' "${prev:+ $prev}"
	prev=$n
done
