#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch (from Debian's linux-source) on every kernel file, sparse on the
# module build, a reStructuredText parse of every Documentation/ file, and a
# build of the GPU tests against ROCm's HSA headers.  One result per file and
# one for sparse; last line
# "lint: N passed, N failed".  KSRC and KDIR come from `make lint`.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
: "${KSRC:?}" "${KDIR:?}"
pass=0
fail=0

for f in "$top"/kmod/*.[ch] "$top"/kmod/sim/*.c "$top"/include/uapi/linux/*.h; do
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

# The H100 summary in Documentation/cuda.rst is what table.py prints from the
# results it names: a figure edited by hand, or a results file changed under
# it, fails here.
doc=Documentation/cuda.rst
cmd=$(sed -n 's/^    python3 \.\.\/table\.py --summary /--summary /p' "$top/$doc")
if [ -z "$cmd" ]; then
	echo "not ok h100-summary $doc (no table.py --summary command in it)"
	fail=$((fail + 1))
elif diff -u <(sed -n '/^    batch alone natively:/,/^$/p' "$top/$doc" | sed '/^$/d; s/^    //') \
		<(cd "$top/libxsched/bench/cuda/results" &&
		  python3 ../table.py $cmd | sed -n '/^batch alone natively:/,$p') > /dev/null; then
	echo "ok h100-summary $doc"
	pass=$((pass + 1))
else
	echo "not ok h100-summary $doc (differs from table.py $cmd)"
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

echo "lint: $pass passed, $fail failed"
[ $fail -eq 0 ]
