#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The interposition core's costs on an NVIDIA GPU (interpose_cost.cu), natively
# and with libxsched-cuda.so preloaded, in one run, alternating, and prints the
# table Documentation/cuda.rst carries.  Run from the repository root on the
# GPU machine:
#
#   libxsched/bench/cuda/run-interpose.sh [OUT]
#
# OLD_SO=path: also run with that build of libxsched-cuda.so (an earlier
# commit's, for a before/after figure).  Logs and raw lines go to OUT
# (default build/bench-interpose); nothing is written into the tree.
set -u
OUT=${1:-${OUT:-build/bench-interpose}}
mkdir -p "$OUT"
LOG=$OUT/log.txt
: > "$LOG"
say() { echo "$*" | tee -a "$LOG"; }

say "== versions"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -n 2;
  uname -r; } 2>&1 | tee -a "$LOG"
make -C libxsched cuda >> "$LOG" 2>&1 || { say "libxsched-cuda.so did not build"; exit 1; }
SO=$PWD/build/libxsched/libxsched-cuda.so
BIN=$OUT/interpose_cost
nvcc -O2 -arch=${ARCH:-sm_90} -o "$BIN" libxsched/bench/cuda/interpose_cost.cu >> "$LOG" 2>&1 ||
	{ say "interpose_cost did not build"; exit 1; }

RAW=$OUT/raw.jsonl
: > "$RAW"
run() {	# label so args...
	local label=$1 so=$2
	shift 2
	if [ -n "$so" ]; then
		LD_PRELOAD=$so "$BIN" "$@"
	else
		"$BIN" "$@"
	fi | sed "s/^{/{\"with\": \"$label\", /" | tee -a "$RAW"
}
SOS="native: libxsched:$SO"
[ -n "${OLD_SO:-}" ] && SOS="$SOS before:$OLD_SO"
for round in 1 2; do
	for pair in $SOS; do
		label=${pair%%:*} so=${pair#*:}
		run "$label" "$so" inversion "${REQUESTS:-400}"
		for k in app legacy pt; do
			run "$label" "$so" launch "$k" "${LAUNCHES:-20000}"
		done
	done
done
python3 - "$RAW" <<'PY' | tee -a "$LOG"
import json, sys, statistics
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
def med(with_, case, key, stream=None):
    v = [r[key] for r in rows if r['with'] == with_ and r['case'] == case
         and (stream is None or r.get('stream') == stream)]
    return statistics.median(v) if v else float('nan')
withs = [w for w in ('native', 'libxsched', 'before') if any(r['with'] == w for r in rows)]
print('urgent launch call beside a lower thread blocked in a pageable copy (us; median of the rounds)')
print('%-10s %10s %10s %10s' % ('with', 'P50', 'P99', 'max'))
for w in withs:
    print('%-10s %10.1f %10.1f %10.1f' % (w, med(w, 'inversion', 'call_p50_ns') / 1e3,
          med(w, 'inversion', 'call_p99_ns') / 1e3, med(w, 'inversion', 'call_max_ns') / 1e3))
print()
print('per launch (ns): launch call alone / launch + synchronize, and added over native')
print('%-8s %-10s %10s %10s %12s %12s' % ('stream', 'with', 'call', 'pair', 'call added', 'pair added'))
for k in ('app', 'legacy', 'pt'):
    nc, npair = med('native', 'launch', 'call_ns', k), med('native', 'launch', 'launch_sync_ns', k)
    for w in withs:
        c, p = med(w, 'launch', 'call_ns', k), med(w, 'launch', 'launch_sync_ns', k)
        print('%-8s %-10s %10.0f %10.0f %12.0f %12.0f' % (k, w, c, p, c - nc, p - npair))
PY
