#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tools/fetch-rocm.sh against a doctored package list: a local apt
# repository (file:, no network) of small packages made here with
# dpkg-deb, and a manifest of its own (XSCHED_ROCM_MANIFEST,
# XSCHED_ROCM_SOURCES, XSCHED_ROCM_CACHE in a temporary folder).  The
# manifest's stack is fetched at its versions; a package gone from the list,
# a version moved, a file gone from the mirror fail loudly with apt's
# reason; stale lists are refreshed; and tests/hip-real/host-check.sh fails
# (not passes with fewer tests) when its fetch fails.
# Ends with "hip-real-fetch: N passed, N failed".
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
fetch=$top/tools/fetch-rocm.sh
name=hip-real-fetch
passed=0
failed=0
ok() { echo "ok $1"; passed=$((passed + 1)); }
bad() { echo "not ok $1: $2"; failed=$((failed + 1)); }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
repo=$tmp/repo
mkdir -p "$repo/pool"

# deb NAME VERSION [DEPENDS]: a package holding /usr/share/NAME/version.
deb() {
	local d=$tmp/build/$1-$2
	mkdir -p "$d/DEBIAN" "$d/usr/share/$1"
	echo "$2" > "$d/usr/share/$1/version"
	printf 'Package: %s\nVersion: %s\nArchitecture: amd64\nMaintainer: xsched tests <none@invalid>\nDescription: fetch-rocm.sh test package\n%s' \
		"$1" "$2" "${3:+Depends: $3
}" > "$d/DEBIAN/control"
	dpkg-deb -b "$d" "$repo/pool/${1}_${2}_amd64.deb" > /dev/null
}
# The repository's Packages list, from the .debs in the pool.
index() {
	local f
	for f in "$repo"/pool/*.deb; do
		[ -e "$f" ] || continue
		dpkg-deb -f "$f" Package Version Architecture Maintainer Depends Description
		echo "Filename: pool/${f##*/}"
		echo "Size: $(stat -c %s "$f")"
		echo "SHA256: $(sha256sum "$f" | cut -d' ' -f1)"
		echo
	done > "$repo/Packages"
}
echo "deb [trusted=yes] file:$repo ./" > "$tmp/sources.list"
export XSCHED_ROCM_SOURCES=$tmp/sources.list XSCHED_ROCM_MANIFEST=$tmp/manifest
# manifest LINE...: the test's manifest (suite sid).
manifest() { printf 'sid %s\n' "$@" > "$tmp/manifest"; }
# run NAME SET...: fetch-rocm.sh sid SET... with a cache of NAME's own;
# stdout in $out, stderr in $err, the status in $rc.
run() {
	local c=$tmp/cache-$1
	shift
	out=$(XSCHED_ROCM_CACHE=$c "$fetch" sid "$@" 2> "$tmp/err")
	rc=$?
	err=$(cat "$tmp/err")
}
show() { echo "$err" | sed 's/^/#   /'; }

deb fakedep 9.0-1
deb fakehip 1.0-1 fakedep
deb fakelib 2.0-1
index
manifest "runtime fakehip 1.0-1" "libs fakelib 2.0-1"

# The manifest's packages at their versions, their dependency along.
run a runtime libs
if [ $rc = 0 ] && [ -f "$out/usr/share/fakehip/version" ] &&
   [ "$(cat "$out/usr/share/fakelib/version")" = 2.0-1 ] &&
   grep -qx 'fakehip=1.0-1' "$out/.runtime.done" && grep -qx 'fakedep=9.0-1' "$out/.runtime.done"; then
	ok fetch_unpacks_the_manifests_stack
else
	show; bad fetch_unpacks_the_manifests_stack "rc $rc, root '$out'"
fi
stack=$(XSCHED_ROCM_CACHE=$tmp/cache-a "$fetch" --stack sid)
root=$(XSCHED_ROCM_CACHE=$tmp/cache-a "$fetch" --root sid)
if [ "$stack" = "fakehip=1.0-1 fakelib=2.0-1" ] && [ "$root" = "$out" ]; then
	ok stack_and_root_are_the_manifests
else
	bad stack_and_root_are_the_manifests "stack '$stack', root '$root' (fetched into '$out')"
fi
# A second fetch reuses the root: nothing resolved or downloaded again.
run a runtime libs
if [ $rc = 0 ] && [ "$out" = "$root" ] && ! echo "$err" | grep -q 'packages with their dependencies'; then
	ok a_fetched_stack_is_reused
else
	show; bad a_fetched_stack_is_reused "rc $rc"
fi

# A package of the manifest gone from the suite: apt's reason, loudly.
rm "$repo/pool/fakelib_2.0-1_amd64.deb"
index
run b runtime libs
if [ $rc != 0 ] && echo "$err" | grep -q "Unable to locate package fakelib" &&
   echo "$err" | grep -q 'change the manifest deliberately'; then
	ok a_package_gone_fails_with_apts_reason
else
	show; bad a_package_gone_fails_with_apts_reason "rc $rc"
fi

# Its version moved: the same, naming the version.
deb fakelib 2.0-2
index
run b runtime libs
if [ $rc != 0 ] && echo "$err" | grep -q "Version '2.0-1' for 'fakelib' was not found"; then
	ok a_moved_version_fails_with_apts_reason
else
	show; bad a_moved_version_fails_with_apts_reason "rc $rc"
fi

# The manifest changed deliberately: a root of its own, the old one kept.
manifest "runtime fakehip 1.0-1" "libs fakelib 2.0-2"
run a runtime libs
if [ $rc = 0 ] && [ "$out" != "$root" ] && [ "$(cat "$out/usr/share/fakelib/version")" = 2.0-2 ] &&
   [ "$(cat "$root/usr/share/fakelib/version")" = 2.0-1 ]; then
	ok a_changed_manifest_gets_a_root_of_its_own
else
	show; bad a_changed_manifest_gets_a_root_of_its_own "rc $rc, '$out' beside '$root'"
fi

# Lists older than the mirror: the mirror moved fakehip to 1.0-2 after the
# lists were fetched.  A manifest that says 1.0-2 refreshes them and
# fetches; one that still says 1.0-1 (the file is gone: 404) refreshes them
# and then fails with apt's reason instead of failing on the stale file.
rm "$repo/pool/fakehip_1.0-1_amd64.deb"
deb fakehip 1.0-2 fakedep
index
manifest "runtime fakehip 1.0-2" "libs fakelib 2.0-2"
run a runtime
if [ $rc = 0 ] && echo "$err" | grep -q 'refreshing them' && grep -qx 'fakehip=1.0-2' "$out/.runtime.done"; then
	ok stale_lists_are_refreshed_for_a_new_version
else
	show; bad stale_lists_are_refreshed_for_a_new_version "rc $rc"
fi
manifest "runtime fakehip 1.0-1" "libs fakelib 2.0-1"
deb fakehip 1.0-1 fakedep
index
run c runtime	# lists with 1.0-1 and 1.0-2
rm "$repo/pool/fakehip_1.0-1_amd64.deb"
index
rm -rf "$tmp/cache-c/sid/roots" "$tmp/cache-c/sid/debs"
run c runtime
if [ $rc != 0 ] && echo "$err" | grep -q 'refreshing them' &&
   echo "$err" | grep -q "Version '1.0-1' for 'fakehip' was not found"; then
	ok a_file_gone_from_the_mirror_refreshes_and_names_the_reason
else
	show; bad a_file_gone_from_the_mirror_refreshes_and_names_the_reason "rc $rc"
fi
# Lists older than XSCHED_ROCM_LISTS_MAX_AGE are refreshed first.
manifest "runtime fakehip 1.0-2"
out=$(XSCHED_ROCM_CACHE=$tmp/cache-c XSCHED_ROCM_LISTS_MAX_AGE=0 "$fetch" sid runtime 2> "$tmp/err")
rc=$?
err=$(cat "$tmp/err")
if [ $rc = 0 ] && echo "$err" | grep -q 'apt-get update' && ! echo "$err" | grep -q 'refreshing them'; then
	ok old_lists_are_refreshed_first
else
	show; bad old_lists_are_refreshed_first "rc $rc"
fi

# A set the manifest does not list for the suite is an error, not nothing.
run c hipcc
if [ $rc != 0 ] && echo "$err" | grep -q 'lists no package of this set'; then
	ok a_set_the_manifest_lacks_fails
else
	show; bad a_set_the_manifest_lacks_fails "rc $rc"
fi

# The suite itself fails when its stack cannot be fetched (a package gone:
# not a pass with fewer tests).
manifest "runtime fakehip 1.0-2" "libs fakegone 1.0-1" "hipcc fakecc 1.0-1"
hc=$(XSCHED_ROCM_CACHE=$tmp/cache-d XSCHED_SO=/bin/true FAKE=/bin/true LOADLIBS=/bin/true \
	"$top/tests/hip-real/host-check.sh" sid 2>&1)
hrc=$?
if [ $hrc != 0 ] && echo "$hc" | grep -qE '^hip-real-host-sid: 0 passed, [1-9][0-9]* failed' &&
   echo "$hc" | grep -q 'Unable to locate package fakegone'; then
	ok host_suite_fails_when_a_package_is_gone
else
	echo "$hc" | sed 's/^/#   /'
	bad host_suite_fails_when_a_package_is_gone "host-check.sh exited $hrc"
fi

echo "$name: $passed passed, $failed failed"
[ "$failed" = 0 ]
