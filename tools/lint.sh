#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch (from Debian's linux-source) on every kernel file, sparse on the
# module build, a reStructuredText parse of every Documentation/ file, a
# build of the GPU tests against ROCm's HSA headers, the layout
# (tools/check-layout.py), the paths the documents name
# (tools/check-paths.py), the make mutate faults and the CUDA benchmark's
# readers (--selftest).  One result per file and one for sparse; last line
# "lint: N passed, N failed".  KSRC and KDIR come from `make lint`.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
: "${KSRC:?}" "${KDIR:?}"
pass=0
fail=0

# tally NAME SCRIPT OUTPUT: count a checker's "ok ..." and "not ok ..." lines
# as lint's own and pass its "#" lines on; one that printed no last line
# "NAME: N passed, ..." gave no result, which fails.
tally() {
	local line
	if ! grep -q "^$1: [0-9]* passed" <<< "$3"; then
		echo "not ok $1 ($2 gave no result)"
		tail -n 10 <<< "$3" | sed 's/^/#   /'
		fail=$((fail + 1))
	fi
	while IFS= read -r line; do
		case "$line" in
		"ok "*) echo "$line"; pass=$((pass + 1)) ;;
		"not ok "*) echo "$line"; fail=$((fail + 1)) ;;
		"#"*) echo "$line" ;;
		esac
	done <<< "$3"
}

for f in "$top"/kmod/*.[ch] "$top"/kmod/sim/*.[ch] "$top"/include/uapi/linux/*.h; do
	rel=${f#"$top"/}
	# trace.h follows the TRACE_EVENT layout checkpatch does not know.
	ignore=SPDX_LICENSE_TAG,FILE_PATH_CHANGES
	case "$rel" in
	*.mod.c) continue ;;
	kmod/trace.h) ignore=$ignore,PARENTHESIS_ALIGNMENT,OPEN_ENDED_LINE ;;
	# BIT() does not exist for userspace.
	include/uapi/*) ignore=$ignore,BIT_MACRO ;;
	esac
	if out=$(perl "$KSRC/scripts/checkpatch.pl" --no-tree -f --strict --terse --show-types \
			--ignore "$ignore" "$f" 2>&1) &&
	   ! grep -qE '(ERROR|WARNING|CHECK):' <<< "$out"; then
		echo "ok checkpatch $rel"
		pass=$((pass + 1))
	else
		echo "not ok checkpatch $rel"
		grep -E '(ERROR|WARNING|CHECK):' <<< "$out" | sed 's/^/#   /'
		fail=$((fail + 1))
	fi
done

if ! command -v sparse > /dev/null; then
	echo "not ok sparse (not installed: apt-get install sparse)"
	fail=$((fail + 1))
else
	# C=2 checks every file whether or not it needs rebuilding.
	out=$(make -C "$KDIR" M="$top" C=2 CHECK="sparse -Wno-decl" modules 2>&1)
	rc=$?
	warnings=$(grep -E '^/.*: (warning|error):' <<< "$out" | grep -E "^$top/(kmod|include)/" || true)
	if [ $rc -eq 0 ] && [ -z "$warnings" ]; then
		echo "ok sparse kmod"
		pass=$((pass + 1))
	else
		echo "not ok sparse kmod"
		{ [ -n "$warnings" ] && echo "$warnings" || echo "$out" | tail -20; } | sed 's/^/#   /'
		fail=$((fail + 1))
	fi
fi
# Documentation must parse as reStructuredText (tables and all).  Debian's
# python3-docutils serves /usr/bin/python3; another python3 may have its own.
py=
for p in /usr/bin/python3 python3; do
	if "$p" -c 'import docutils' 2> /dev/null; then
		py=$p
		break
	fi
done
for f in "$top"/Documentation/*.rst; do
	if [ -z "$py" ]; then
		echo "not ok rst (no docutils: apt-get install python3-docutils)"
		fail=$((fail + 1))
		break
	fi
	rel=${f#"$top"/}
	if out=$("$py" - "$f" 2>&1 <<'PY'
import sys
import docutils.core
docutils.core.publish_doctree(open(sys.argv[1]).read(), source_path=sys.argv[1],
                              settings_overrides={"report_level": 2, "halt_level": 2})
PY
	); then
		echo "ok rst $rel"
		pass=$((pass + 1))
	else
		echo "not ok rst $rel"
		echo "$out" | tail -5 | sed 's/^/#   /'
		fail=$((fail + 1))
	fi
done

# The H100 table in Documentation/cuda.rst has the shape table.py --summary
# prints: its header lines are what table.py itself prints on no results, and
# every row has as many cells as the header.  The doc names the commands that
# reproduce it: a table.py --summary line, and run-h100.sh lines whose plans
# all exist in run-h100.sh.  The figures come from run logs that stay out of
# git (Documentation/layout.rst, "Results are not source"), so they are not
# compared here.
doc=Documentation/cuda.rst
bench=libxsched/bench/cuda
why=
table=$(sed -n '/^    batch alone natively:/,/^$/p' "$top/$doc" | sed '/^$/d; s/^    //')
head=$(python3 "$top/$bench/table.py" --summary /dev/null | grep '^|')
cells=$(head -n 1 <<< "$head" | tr -cd '|' | wc -c)
plans=$(sed -n 's/^\t\([a-z0-9-]*\)) .*/\1/p' "$top/$bench/run-h100.sh")
named=$(grep '^    .*run-h100\.sh ' "$top/$doc" | grep -o 'run-h100\.sh [a-z0-9 -]*' | cut -d' ' -f2- | tr ' ' '\n' | sed '/^$/d' | sort -u)
if [ -z "$table" ]; then
	why="no table.py --summary table (a literal block from 'batch alone natively:')"
elif [ -z "$head" ] || [ "$(sed -n '2,3p' <<< "$table")" != "$head" ]; then
	why="the table's header is not table.py's: $(sed -n 2p <<< "$table")"
elif [ "$(sed -n '4,$p' <<< "$table" | grep -c .)" -eq 0 ]; then
	why="the table has no rows"
elif bad=$(sed -n '4,$p' <<< "$table" | awk -v n="$cells" -F'|' 'NF - 1 != n || !/^\| .* \|$/' | head -n 1) &&
     [ -n "$bad" ]; then
	why="a row is not in table.py's shape ($((cells - 1)) cells): $bad"
elif ! grep -q '^    python3 .*table\.py --summary ' "$top/$doc"; then
	why="no table.py --summary command"
elif [ -z "$named" ]; then
	why="no run-h100.sh command"
elif unknown=$(comm -23 <(echo "$named") <(echo "$plans" | sort -u)) && [ -n "$unknown" ]; then
	why="run-h100.sh has no plan $(echo $unknown)"
fi
if [ -z "$why" ]; then
	echo "ok h100-summary $doc"
	pass=$((pass + 1))
else
	echo "not ok h100-summary $doc ($why)"
	fail=$((fail + 1))
fi

# The GPU tests (kfd_hw.c with KT_HSA, as HW=1 builds them) compiled and
# linked against ROCm's HSA runtime as Debian packages it (libhsa-runtime-dev):
# no GPU here to run them, but their code is checked on every run.
ksft=$KSRC/tools/testing/selftests
hw=tests/kselftest/xsched_kfd/kfd_hw.c
if [ ! -f /usr/include/hsa/hsa.h ]; then
	echo "not ok hsa-build $hw (no hsa/hsa.h: apt-get install libhsa-runtime-dev)"
	fail=$((fail + 1))
elif out=$(cc -std=gnu11 -Wall -Wextra -Werror -O2 -D_GNU_SOURCE -DKT_HSA \
		-isystem "$ksft" -I "$top/include/uapi" "$top/$hw" \
		-o /dev/null -pthread -lhsa-runtime64 2>&1); then
	echo "ok hsa-build $hw"
	pass=$((pass + 1))
else
	echo "not ok hsa-build $hw"
	echo "$out" | tail -20 | sed 's/^/#   /'
	fail=$((fail + 1))
fi

# The layout of Documentation/layout.rst: no file-level call circle within the
# module, the sim module, libxsched or xschedctl, and no file of theirs over
# 900 lines, no C file under tests/ over 1,200 (tools/check-layout.py; the
# module's objects are those sparse's build just made).
tally layout tools/check-layout.py "$(python3 "$top/tools/check-layout.py" 2>&1)"

# Every path of the repository that README.md, tests/README.md and
# Documentation/ name exists (tools/check-paths.py says what counts as one).
tally paths tools/check-paths.py "$(cd "$top" && python3 tools/check-paths.py \
	README.md tests/README.md Documentation/*.rst 2>&1)"

# The CUDA benchmark's readers on made-up logs and results: the corpus's
# bars (corpus.py) and the burst traces (bursts.py) run only after a device
# run, where a mistake would cost the run.
for py in corpus bursts; do
	if out=$(python3 "$top/libxsched/bench/cuda/$py.py" --selftest 2>&1) &&
	   [ "${out##*$'\n'}" = "selftest ok" ]; then
		echo "ok bench-selftest libxsched/bench/cuda/$py.py"
		pass=$((pass + 1))
	else
		echo "not ok bench-selftest libxsched/bench/cuda/$py.py"
		echo "$out" | tail -20 | sed 's/^/#   /'
		fail=$((fail + 1))
	fi
done

# Every deliberate fault of tools/mutate/faults still applies to its file
# exactly once: a fault the code moved away from tests nothing (two did, on
# 2026-12-06, found by hand).  Read from the committed tree (HEAD).
if out=$(cd "$top" && tools/mutate/mutate.sh --check 2>&1); then
	echo "ok mutate-faults ${out##*$'\n'}"
	pass=$((pass + 1))
else
	echo "not ok mutate-faults tools/mutate/faults"
	echo "$out" | tail -20 | sed 's/^/#   /'
	fail=$((fail + 1))
fi

echo "lint: $pass passed, $fail failed"
[ $fail -eq 0 ]
