# SPDX-License-Identifier: MIT
#
# Sourced by tools/fetch-kernel.sh (the same approach as tools/fetch-rocm.sh's,
# which was being rewritten beside this work and is left to adopt it):
# an apt configuration of our own, so that packages of any Debian suite can be
# resolved and downloaded without reading or changing the system's sources,
# lists or dpkg database.
#
#   apt_private STATE_DIR SOURCE_LINE...
#
# makes STATE_DIR/{etc,lists,cache} and an empty dpkg status, writes the
# SOURCE_LINEs ("deb [signed-by=...] URI SUITE main") as its sources list,
# sets the array apt_opts for apt-get/apt-cache, and runs `apt-get update`
# when the lists are missing, a day old (the archive drops superseded
# versions: old lists name files that are gone) or of another sources list.

apt_private() {
	local st=$1
	shift
	mkdir -p "$st/etc/sources.list.d" "$st/etc/preferences.d" "$st/lists/partial" \
		 "$st/cache/archives/partial"
	[ -e "$st/status" ] || : > "$st/status"
	printf '%s\n' "$@" > "$st/etc/sources.list.new"
	if ! cmp -s "$st/etc/sources.list.new" "$st/etc/sources.list"; then
		mv "$st/etc/sources.list.new" "$st/etc/sources.list"
		rm -f "$st/.updated"
	fi
	rm -f "$st/etc/sources.list.new"
	apt_opts=(-o "Dir::Etc=$st/etc" -o "Dir::Etc::sourcelist=$st/etc/sources.list"
		  -o "Dir::Etc::sourceparts=$st/etc/sources.list.d"
		  -o "Dir::Etc::preferencesparts=$st/etc/preferences.d"
		  -o "Dir::State::Lists=$st/lists" -o "Dir::State::status=$st/status"
		  -o "Dir::Cache=$st/cache" -o "APT::Architecture=amd64"
		  -o "APT::Architectures::=amd64" -o "Acquire::Languages=none"
		  -o "APT::Install-Recommends=false")
	if [ -n "$(find "$st/.updated" -mmin +1440 2>/dev/null)" ]; then
		rm -f "$st/.updated"
	fi
	if [ ! -e "$st/.updated" ]; then
		echo "apt-private: apt-get update (own lists in $st)" >&2
		apt-get "${apt_opts[@]}" update -qq >&2 || return 1
		touch "$st/.updated"
	fi
}

# apt_private_unpack ROOT DEBS_DIR PKG[=VERSION]...: resolve the packages'
# dependency closure against the empty status (what a bare system would
# install), download it into DEBS_DIR and unpack every package into ROOT with
# `dpkg -x` (no maintainer scripts run).  Fails with apt's own reason when the
# closure cannot be resolved.  Prints the closure, PKG=VERSION per line.
apt_private_unpack() {
	local root=$1 debs=$2 sim pv p v d deb
	local -a closure
	shift 2
	if ! sim=$(apt-get "${apt_opts[@]}" install --simulate "$@" 2>&1); then
		echo "apt-private: apt cannot resolve $*:" >&2
		echo "$sim" | grep -E '^(E:| )' | sed 's/^/apt-private:   /' >&2
		return 1
	fi
	mapfile -t closure < <(sed -n 's/^Inst \([^ ]*\) (\([^ ]*\) .*/\1=\2/p' <<< "$sim")
	[ ${#closure[@]} -gt 0 ] || { echo "apt-private: apt resolved nothing for $*" >&2; return 1; }
	mkdir -p "$debs" "$root"
	(cd "$debs" && apt-get "${apt_opts[@]}" download -q "${closure[@]}" >&2) || return 1
	for pv in "${closure[@]}"; do
		p=${pv%%=*} v=${pv#*=}
		deb=
		for d in "$debs/${p}_${v//:/%3a}_"*.deb; do [ -e "$d" ] && deb=$d; done
		[ -n "$deb" ] || { echo "apt-private: $p $v was not downloaded" >&2; return 1; }
		dpkg -x "$deb" "$root" || return 1
	done
	printf '%s\n' "${closure[@]}"
}
