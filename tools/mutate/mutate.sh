#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The mutation check: apply each deliberate fault of tools/mutate/faults, alone,
# to a clean copy of the tree (git archive of REV, default HEAD), run only the
# suites that should catch it (make check with CHECK_SUITES and
# CHECK_KSELFTESTS), and print a table: fault, what caught it, time.  A fault is
# caught when that run reports a failure (a non-zero failed count, or a
# non-zero exit with the suites' summary printed).  Exits 1 if any fault
# survived or could not be tried, 2 if a fault no longer applies.
#
# Usage: tools/mutate/mutate.sh [--list | --check] [FAULT...]
#   FAULT...   the faults to try (default: $FAULTS, else all of them)
#   --list     print the faults, their suites and what should catch them
#   --check    only check that every fault applies exactly once, run nothing
# Environment:
#   CACHE      kernel cache (default: <repo>/.cache/kernel), shared by every copy
#   BUILD      where the copies, their builds and logs go (default: <repo>/build);
#              logs stay in $BUILD/mutate/logs/FAULT.log
#   REV        the commit to copy (default HEAD; uncommitted changes are not in it)
#   MUTATE_FAULTS  the fault file (default: tools/mutate/faults)
#   MUTATE_LOCK  a lock file held (flock) around each fault's check run, so that
#              other VM users can run between faults on a shared machine
#   MUTATE_BASELINE=1  first run the union of the selected faults' suites on the
#              unmodified copy, which must pass (else every fault looks caught)
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
faults_file=${MUTATE_FAULTS:-$top/tools/mutate/faults}
cache=${CACHE:-$top/.cache/kernel}
build=${BUILD:-$top/build}
rev=${REV:-HEAD}
work=$build/mutate
prog=mutate

die() { echo "$prog: $*" >&2; exit 2; }

# ---- the fault file ----
names=() files=() suites=() ksfts=() catches=() needs=() olds=() news=()
parse() {
	local line n=-1 mode='' lineno=0 old='' new=''
	while IFS= read -r line || [ -n "$line" ]; do
		lineno=$((lineno + 1))
		case "$mode" in
		replace)
			if [ "$line" = with ]; then mode=with; else old+=$line$'\n'; fi
			continue ;;
		with)
			# (C and shell text never starts so: a block missing its end,
			# as a merge that kept both sides of two appended faults left)
			case "$line" in 'fault '*) die "$faults_file:$lineno: a fault begins before the last one's end" ;; esac
			if [ "$line" = end ]; then
				olds[n]=$old news[n]=$new old='' new='' mode=''
			else
				new+=$line$'\n'
			fi
			continue ;;
		esac
		case "$line" in
		''|'#'*) continue ;;
		'fault '*)
			n=$((n + 1))
			names[n]=${line#fault } files[n]='' suites[n]='' ksfts[n]=''
			catches[n]='' needs[n]='' olds[n]='' news[n]='' ;;
		'file '*) files[n]=${line#file } ;;
		'suites '*) suites[n]=${line#suites } ;;
		'kselftests '*) ksfts[n]=${line#kselftests } ;;
		'catches '*) catches[n]=${line#catches } ;;
		'needs '*) needs[n]=${line#needs } ;;
		replace) mode=replace ;;
		*) die "$faults_file:$lineno: cannot parse: $line" ;;
		esac
		[ "$n" -ge 0 ] || die "$faults_file:$lineno: '$line' before the first fault"
	done < "$faults_file"
	[ -z "$mode" ] || die "$faults_file: the last block has no end"
	for ((i = 0; i <= n; i++)); do
		[ -n "${files[i]}" ] && [ -n "${suites[i]}" ] && [ -n "${olds[i]}" ] ||
			die "fault ${names[i]}: file, suites and replace/with/end are required"
		for ((j = 0; j < i; j++)); do
			[ "${names[j]}" != "${names[i]}" ] || die "fault ${names[i]} is defined twice"
		done
	done
}

# Replace the fault's text in tree $2; exactly one occurrence, or fail naming it.
apply() { # index tree
	local i=$1 tree=$2
	[ -f "$tree/${files[i]}" ] || { echo "$prog: fault ${names[i]}: ${files[i]} does not exist" >&2; return 1; }
	MUTATE_OLD=${olds[i]} MUTATE_NEW=${news[i]} MUTATE_NAME=${names[i]} \
	MUTATE_FILE=${files[i]} perl -0777 -e '
		my $f = $ARGV[0];
		open(my $in, "<", $f) or die "$f: $!\n";
		my $s = do { local $/; <$in> };
		close($in);
		my ($old, $new) = ($ENV{MUTATE_OLD}, $ENV{MUTATE_NEW});
		my ($n, $at) = (0, -1);
		for (my $p = index($s, $old); $p >= 0; $p = index($s, $old, $p + 1)) {
			$n++;
			$at = $p;
		}
		if ($n != 1) {
			print STDERR "mutate: fault $ENV{MUTATE_NAME}: its text occurs $n times in $ENV{MUTATE_FILE} (must be once): update the fault file\n";
			exit 1;
		}
		substr($s, $at, length($old)) = $new;
		open(my $out, ">", $f) or die "$f: $!\n";
		print $out $s;
		close($out) or die "$f: $!\n";
	' "$tree/${files[i]}"
}

# A clean copy of $rev in $1.
export_tree() {
	rm -rf "$1"
	mkdir -p "$1"
	git -C "$top" archive --format=tar "$rev" | tar -x -C "$1" ||
		die "cannot export $rev into $1"
}

# make check in tree $1 with CHECK_SUITES=$2, CHECK_KSELFTESTS=$3, into log $4.
run_check() {
	# Nothing of this checkout's build may leak in: the copy builds in its own.
	local cmd=(env -u BUILD -u KDIR -u KREL -u KSRC -u KFD_SRC -u MAKEFLAGS -u MAKELEVEL
		CHECK_SUITES="$2" CHECK_KSELFTESTS="$3" make -C "$1" check CACHE="$cache")
	if [ -n "${MUTATE_LOCK:-}" ]; then
		flock "$MUTATE_LOCK" "${cmd[@]}" > "$4" 2>&1
	else
		"${cmd[@]}" > "$4" 2>&1
	fi
}

# What a failed run says failed: the failing suites, and their first failing tests.
verdict() { # tree log
	local summary=$1/build/check/summary tests suites
	suites=$(awk -F'\t' '{ n = split($1, w, /[ ,]+/); for (i = 2; i < n; i++)
		if (w[i + 1] == "failed" && w[i] > 0) { sub(/:$/, "", w[1]); print w[1]; break } }' \
		"$summary" 2>/dev/null | sort -u | paste -sd, -)
	# Failing tests, then what the runners and VM checks counted as failures.
	tests=$({ grep -E '^not ok ' "$2" | sed -E 's/^not ok ([0-9]+ )?//; s/ *#.*//'
		  sed -nE 's/^# [^ ]+: (.*); counted as one failure$/\1/p' "$2"
		  sed -nE 's/^check: [^ ]+: (kernel splat|module unload failed|the VM|the guest)/\1/p' "$2" |
			sed 's/ (see .*//'; } |
		awk '!seen[$0]++' | head -n 3 | paste -sd';' - | sed 's/;/; /g')
	# lint prints its own line, outside the total.
	if grep -qE '^lint: [0-9]+ passed, [1-9][0-9]* failed' "$2"; then
		suites=${suites:+$suites,}lint
	fi
	[ -n "$suites" ] || suites="make exit, no failing suite"
	echo "$suites${tests:+: $tests}"
}

parse
list=0 check_only=0
sel=()
for a in "$@"; do
	case "$a" in
	--list) list=1 ;;
	--check) check_only=1 ;;
	-h|--help) sed -n '/^# Usage:/,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
	-*) die "unknown option $a" ;;
	*) sel+=("$a") ;;
	esac
done
[ ${#sel[@]} -gt 0 ] || read -r -a sel <<< "${FAULTS:-}"
idx=()
if [ ${#sel[@]} -eq 0 ]; then
	for ((i = 0; i < ${#names[@]}; i++)); do idx+=("$i"); done
else
	for s in "${sel[@]//,/ }"; do
		for s1 in $s; do
			found=
			for ((i = 0; i < ${#names[@]}; i++)); do
				[ "${names[i]}" = "$s1" ] && { idx+=("$i"); found=1; }
			done
			[ -n "$found" ] || die "no fault named '$s1' in $faults_file"
		done
	done
fi

if [ "$list" = 1 ]; then
	for i in "${idx[@]}"; do
		printf '%s\n  file %s; suites %s%s\n  catches %s\n' "${names[i]}" "${files[i]}" \
			"${suites[i]}" "${ksfts[i]:+; kselftests ${ksfts[i]}}" "${catches[i]}"
		[ -z "${needs[i]}" ] || printf '  needs %s\n' "${needs[i]}"
	done
	exit 0
fi

# Every selected fault must still apply before anything runs.
mkdir -p "$work"
export_tree "$work/base"
bad=0
for i in "${idx[@]}"; do
	f=${files[i]}
	rm -rf "$work/probe"
	mkdir -p "$work/probe/$(dirname "$f")"
	cp "$work/base/$f" "$work/probe/$f" 2>/dev/null
	apply "$i" "$work/probe" || bad=1
done
rm -rf "$work/probe"
[ "$bad" = 0 ] || { rm -rf "$work/base"; exit 2; }
if [ "$check_only" = 1 ]; then
	rm -rf "$work/base"
	echo "$prog: ${#idx[@]} faults apply to $rev exactly once"
	exit 0
fi

[ -f "$cache/krel" ] || die "no kernel cache at $cache (make kernel, or CACHE=)"
cache=$(cd "$cache" && pwd -P)
# Every copy finds the kernel cache where a checkout has it, too.
mkdir -p "$work/base/.cache"
ln -sfn "$cache" "$work/base/.cache/kernel"
logs=$work/logs
rm -rf "$logs"
mkdir -p "$logs"
echo "$prog: ${#idx[@]} faults on $(git -C "$top" rev-parse --short "$rev"), logs in $logs" >&2

if [ "${MUTATE_BASELINE:-0}" = 1 ]; then
	all_suites=$(for i in "${idx[@]}"; do echo "${suites[i]}"; done | tr ' ' '\n' | sort -u | paste -sd' ' -)
	all_ksft=$(for i in "${idx[@]}"; do [ -n "${ksfts[i]}" ] || echo ALL; echo "${ksfts[i]}"; done |
		tr ' ' '\n' | sed '/^$/d' | sort -u | paste -sd' ' -)
	case " $all_ksft " in *" ALL "*) all_ksft= ;; esac
	echo "$prog: baseline: suites '$all_suites' on the unmodified tree..." >&2
	rm -rf "$work/tree"
	cp -a "$work/base" "$work/tree"
	if ! run_check "$work/tree" "$all_suites" "$all_ksft" "$logs/baseline.log"; then
		tail -n 20 "$logs/baseline.log" >&2
		die "the unmodified tree fails these suites (see $logs/baseline.log): fix that first"
	fi
fi

rows=()
survived=0 broken=0
for i in "${idx[@]}"; do
	name=${names[i]}
	log=$logs/$name.log
	echo "$prog: $name (${files[i]}; suites ${suites[i]}${ksfts[i]:+; kselftests ${ksfts[i]}})..." >&2
	rm -rf "$work/tree"
	cp -a "$work/base" "$work/tree"
	apply "$i" "$work/tree" || exit 2
	start=$(date +%s)
	run_check "$work/tree" "${suites[i]}" "${ksfts[i]}" "$log"
	rc=$?
	took=$(( $(date +%s) - start ))s
	if ! grep -q '^suites:' "$log"; then
		# make stopped before tools/check.sh summed anything: the fault did not
		# build, or the run broke; either way nothing was tested.
		what="NOT TRIED: no suite ran (make exit $rc, see $log)"
		broken=$((broken + 1))
	elif grep -qE '^check: .*build failed|^[^ :]+:[0-9]+:[0-9]+: (fatal )?error: |undefined reference to' "$log"; then
		# A fault must build: a compile error would "fail" any suite.
		what="NOT TRIED: it does not build (see $log)"
		broken=$((broken + 1))
	elif [ "$rc" != 0 ] ||
		! grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1 | grep -q ' 0 failed'; then
		what=$(verdict "$work/tree" "$log")
	else
		what="SURVIVED${needs[i]:+ (needs ${needs[i]})}"
		survived=$((survived + 1))
	fi
	rows+=("$(printf '%-38s %-7s %s' "$name" "$took" "$what")")
	echo "$prog: $name: $what ($took)" >&2
done
rm -rf "$work/tree" "$work/base"

echo
printf '%-38s %-7s %s\n' fault time "caught by (suites with failures: first failing tests)"
printf '%s\n' "${rows[@]}"
echo
echo "${#idx[@]} faults: $(( ${#idx[@]} - survived - broken )) caught, $survived survived, $broken not tried"
[ "$survived" = 0 ] && [ "$broken" = 0 ]
