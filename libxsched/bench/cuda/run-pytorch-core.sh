#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The interposition core with unmodified PyTorch, natively and preloaded:
# transparency.py (training losses and weights, inference, graphs, Triton,
# pinned copies: must be identical) and blocked_neighbour.py (an urgent
# thread beside a lower thread that blocks in loss.item()).  From the
# repository root on the GPU machine, after run-interpose.sh built the
# library:  libxsched/bench/cuda/run-pytorch-core.sh [OUT]
set -u
OUT=${1:-${OUT:-build/bench-interpose}}
HERE=libxsched/bench/cuda
SO=$PWD/build/libxsched/libxsched-cuda.so
RES=$OUT/pytorch.jsonl
mkdir -p "$OUT"
[ -f "$SO" ] || make -C libxsched cuda > "$OUT/build.log" 2>&1
python3 -c 'import torch, torchvision, triton; print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version(), "torchvision", torchvision.__version__, "triton", triton.__version__)'
for w in native xsched; do
	pre=
	[ $w = xsched ] && pre=$SO
	XBENCH_XSCHED=$w LD_PRELOAD=$pre timeout "${T_TIMEOUT:-200}" python3 $HERE/transparency.py --out "$RES" \
		> "$OUT/transparency-$w.log" 2>&1 || echo "transparency $w failed: $(tail -n 3 "$OUT/transparency-$w.log")"
done
python3 - "$RES" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if '"transparency"' in l]
nat = [r for r in rows if r["xsched"] == "native"][-1:]
xs = [r for r in rows if r["xsched"] == "xsched"][-1:]
if nat and xs:
    skip = {"xsched", "wall_s", "infer_r50b16_its", "train_r50b16_its"}
    diff = [k for k in nat[0] if k not in skip and nat[0][k] != xs[0].get(k)]
    print("TRANSPARENCY", "identical" if not diff else "DIFFERENT: %s" % diff)
else:
    print("TRANSPARENCY: a run is missing")
PY
for round in 1 2; do
	for w in native xsched; do
		pre=
		[ $w = xsched ] && pre=$SO
		LD_PRELOAD=$pre timeout 120 python3 $HERE/blocked_neighbour.py --tag $w \
			--requests "${REQUESTS:-300}" 2>> "$OUT/blocked.log" | tee -a "$RES"
	done
done
