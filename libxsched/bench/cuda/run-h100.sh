#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The NVIDIA benchmark of libxsched: builds the launch-overhead program and the
# CUDA interposer (libxsched-cuda.so), runs the steps of a plan, writes
# results.jsonl, log.txt and versions.txt under $OUT (default ./h100-out) and
# prints the tables.  Run logs stay out of git; Documentation/cuda.rst,
# "Measurements on an H100", says which plan measures what.  Needs one NVIDIA
# GPU, nvcc, python3 with torch, torchvision and triton.
#
#   run-h100.sh PLAN [PLAN...]
#
# Plans (each fits one 10-minute slot on an H100; `all` runs them in turn):
#   native    versions, per-launch overhead (native), harness noise, batch jobs
#             alone, urgent alone, urgent beside the GEMM, ResNet-50 b16 and
#             b256 in one process with the urgent stream at high CUDA priority
#   xsched    the interposer: smoke test with XSCHED_LOG=debug, per-launch
#             overhead (native and preloaded), transparency (with and
#             without), then urgent alone and beside ResNet-50 b16 and b256
#             in one process, high priority, each natively and preloaded
#   final     per-launch overhead and ResNet-50 b16 throughput alone, each
#             natively and preloaded in alternating processes; urgent alone
#             and beside ResNet-50 b16 and the GEMM in one process (high
#             priority), and two processes beside ResNet-50 b16, each
#             natively and preloaded
#   more      ResNet-50 b16 alone beside an idle high-priority stream; urgent
#             alone, beside ResNet-50 b256 and SDPA in one process (high
#             priority) and beside ResNet-50 b16 on an equal-priority stream,
#             each natively and preloaded; libxsched at threshold 64 beside
#             ResNet-50 b16; the urgent loop waiting on the whole device
#             beside the GEMM
#   core-smoke
#             the interposer on the interposition core (the shipped code):
#             smoke test, per-launch overhead, transparency, urgent alone
#             natively and preloaded with REQ_MAIN requests each
#   gemm-high
#             urgent beside the GEMM in one process (high priority),
#             natively and preloaded, REQ_MAIN requests each
#   r50b16-high-procs
#             urgent beside ResNet-50 b16 in one process (high priority) and
#             in two processes (equal), natively and preloaded, REQ_MAIN each
#   green
#             the SM partition (XSCHED_CUDA_SM_SPLIT, preloaded): urgent
#             beside the GEMM in one process (high priority) on 16 SMs with
#             Lv1 holds on and off (XSCHED_CUDA_HOLD=0), urgent alone on 16
#             SMs, the GEMM alone natively and on the other 116 SMs, then
#             urgent beside the GEMM on 32 SMs and the GEMM alone on 100;
#             REQ_MAIN requests per urgent case
#   capfix
#             after the in-flight cap's fix: per-launch overhead, ResNet-50
#             b16 alone beside an idle high-priority stream and urgent beside
#             it in one process (high priority), natively and preloaded
#   r50b16-equal-sdpa
#             urgent beside ResNet-50 b16 on an equal-priority stream (REQ_MAIN
#             requests) and beside SDPA on the high-priority stream (REQ),
#             natively and preloaded
#   sdpa-high-split
#             urgent alone (native), beside SDPA on the high-priority stream
#             natively and preloaded, and beside the GEMM with SM split 16,
#             REQ_MAIN requests each
# The plans from sdpa-high-xsched on are one or two cases each, to be combined on one
# command line (versions and build once) and cut by BUDGET_S:
#   sdpa-high-xsched
#             urgent beside SDPA on the high-priority stream, preloaded only
#             (its native twin at 2000 requests is sdpa-high-split's), REQ_MAIN
#   r50b256-high
#             urgent beside ResNet-50 b256 on the high-priority stream,
#             natively and preloaded, REQ_MAIN each
#   alone
#             urgent alone natively (the reference of the run), REQ_MAIN
#   split16-gemm
#             urgent on 16 SMs (XSCHED_CUDA_SM_SPLIT=16, preloaded) alone and
#             beside the GEMM (high priority), REQ_MAIN each
#   split16-r50b16-sdpa
#             16 SMs beside ResNet-50 b16 and beside SDPA (high priority,
#             preloaded), REQ_MAIN each; then both batch jobs alone natively
#             and on the other 116 SMs, 10 s each
#   gemm-procs
#             urgent and the GEMM as two processes (equal priority), natively
#             and preloaded, REQ_MAIN each
#   tail
#             the urgent tail: hiccup.py (host stalls, hiccup.jsonl) beside
#             urgent alone natively (REQ_MAIN), the same with each request
#             one CUDA graph (REQ_MAIN) and the one-tiny-kernel request
#             (REQ); then the GEMM and SDPA alone natively and on 116 SMs
#   r50b256-procs
#             urgent and ResNet-50 b256 as two processes (equal priority),
#             natively and preloaded, REQ_MAIN each
#   r50b256-equal
#             urgent beside ResNet-50 b256 on an equal-priority stream,
#             natively and preloaded, REQ_MAIN each (the GEMM is gemm-equal:
#             2000 requests beside it outlast 220 s)
#   sdpa-procs-equal
#             urgent and SDPA as two processes and on an equal-priority
#             stream, natively and preloaded, REQ_MAIN each (about 4 minutes
#             a case on the stream, where each request waits a whole SDPA
#             kernel: one pair per device call; MODES="proc stream" picks)
#   gemm-equal
#             urgent beside the GEMM on an equal-priority stream, where
#             each request waits a whole GEMM kernel (about 6 minutes for
#             REQ_MAIN): one side per device call, SIDE=native or xsched
#   split32-gemm
#             the SM splits plan green measures, at REQ_MAIN:
#             urgent on 32 SMs beside the GEMM (high priority) and the GEMM
#             alone on 100, then 16 SMs beside it with Lv1 holds off
#   lv1-batch-cost
#             the lever on Lv1's batch cost: urgent beside ResNet-50 b16 on
#             the high-priority stream at threshold 64 (batch 32), natively
#             and at the default threshold, REQ_MAIN each (cases gated one
#             by one)
#
#   lv3
#             the urgent context (XSCHED_CUDA_LV3=1, its mode chosen per
#             stream: XSCHED_CUDA_LV3_MODE, default auto): smoke test, the GEMM
#             and SDPA alone, urgent alone, then urgent beside the GEMM and
#             beside SDPA with the urgent context on, REQ_MAIN each
#   lv3-r50
#             urgent alone natively, then beside ResNet-50 b16 and b256 with
#             the urgent context on and with Lv1 only, REQ_MAIN each
#             (R50="r50b256" picks one)
#   lv3-auto
#             the batch jobs alone, urgent alone, then urgent beside the GEMM,
#             SDPA, ResNet-50 b16 and b256 (LV3_BATCH picks) with the urgent
#             context on (mode auto), REQ_MAIN each, cut by BUDGET_S
#   lv3-llm
#             issue 24's LLM decode loop (a Llama-shaped model, 32 tokens,
#             eager and under CUDA graphs): a smoke test of each, then alone
#             and beside VGG-16 training natively and with the urgent context
#             on, LLM_REQ requests (default 300) at LLM_RATE per second
#             (default 5) each
#   lv3-probe
#             the LLM decode loop beside VGG-16 training, PROBE_REQ requests
#             in each mode of PROBE_MODES, the first at XSCHED_LOG=debug
#             (debug-tail.log), the stacks of a case that hangs logged
#   lv3-transparency
#             transparency.py --urgent natively, then with the urgent
#             context on in mode auto and in mode gather
#   lv3-correctness
#             lv3_correctness.cu (a producer and a consumer on two priority
#             -1 streams, a library unloaded and its function's address
#             reused, a stream the host polls) natively, then with the
#             urgent context on in mode auto and in mode ctx
#   lv3-tail
#             is auto's urgent tail within 1.2x of the best forced mode's,
#             on a program it was not tuned on (issue 33)?  The GEMM and
#             SDPA alone, xbench's encoder alone natively, then beside each
#             on the high-priority stream natively and with the urgent
#             context on in each mode of TAIL_MODES (default: native gather
#             ctx lv1 auto), TAIL_REQ requests each (default 300), one
#             process per case, cut by BUDGET_S (TAIL_BATCH: default gemm sdpa)
#   default-holds
#             the library's default with the urgent context off (each urgent
#             stream's Lv1 holds chosen per burst, issue 33) against native
#             priority and against holds on every burst (XSCHED_CUDA_HOLD=1,
#             the default before): for each urgent:batch pair of DEF_PAIRS
#             (default "llama32:vgg16train r18b4:r50b16 encoder:gemm") one
#             process per case on the high-priority stream, DEF_REQ requests
#             (default 300; the LLM decode loop half of it at 5 per second),
#             cut by BUDGET_S (DEF_SIDES: the cases, default "native auto
#             hold1")
#   corpus
#             issue 33's corpus, the choice judged on it: for each
#             urgent:batch pair of CORPUS_PAIRS (default "encoder:gemm
#             encoder:sdpa r18b4:r50b16 llama32:vgg16train smallk:r50b256
#             llama32g:r50train"; llama32g: the decode loop under CUDA
#             graphs) one process per side of CORPUS_SIDES (default "native
#             gather ctx lv1 auto default": native priority, the urgent
#             context on in each mode forced and in mode auto, the library's
#             default without it), the urgent job on the high-priority
#             stream, CORPUS_REQ requests (default 200) at 20 per second (the
#             LLM decode loop half of it at 5), each urgent job alone natively
#             before its first pair; cut by BUDGET_S case by case (about one
#             pair fits a 10-minute call: CORPUS_PAIRS picks); corpus.py
#             scores issue 33's bars into corpus.md.  CORPUS_ROUNDS
#             (default 1) runs each pair's alone case and sides that many
#             times in turn (rounds 2 on tagged -r2, ...): corpus.py scores
#             each round and prints each side's spread over the rounds, the
#             run-to-run noise the bars are read against.  Unscored sides,
#             what the library costs where it holds nothing: lv3native, the
#             urgent context on, mode native forced (with
#             XSCHED_CUDA_BURST_LOG=1 in the environment every preloaded
#             case logs its bursts, and this side records native's); nocap,
#             the default with the batch streams' cap out of reach
#             (XSCHED_THRESHOLD=4096); hold0, the library with no call held
#             (XSCHED_CUDA_HOLD=0: the hooks only)
#   lv3-native
#             lv3's native twins (urgent beside the GEMM and SDPA on the
#             high-priority stream) and transparency.py --urgent natively
#             and with the urgent context on
#
# REQ (default 800) and REQ_MAIN (default 2000) set requests per case.
# BUDGET_S (default: none) is the time the whole command may take: a case
# (from sdpa-high-xsched on: a pair of cases) starts only when its estimate still fits,
# and no case runs past it, so what finished comes back before a device
# call's limit.  Every urgent case also appends its per-request host and GPU
# latencies to raw.jsonl.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
LIBDIR=$(cd "$HERE/../.." && pwd)
OUT=${OUT:-$PWD/h100-out}
BUILD=${BUILD:-/tmp/xsched-h100}
REQ=${REQ:-800}
REQ_MAIN=${REQ_MAIN:-2000}
RES=$OUT/results.jsonl
RAW=$OUT/raw.jsonl
LOG=$OUT/log.txt
START=$(date +%s)
END=${BUDGET_S:+$((START + BUDGET_S))}
XLIB=$BUILD/libxsched/libxsched-cuda.so
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
mkdir -p "$OUT" "$BUILD"

say() { echo "== $(date +%T) $*" | tee -a "$LOG"; }

info() {
	{
		date -u
		nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.sm --format=csv
		nvidia-smi | head -4
		nvcc --version | tail -2
		uname -r
		$PY -c 'import torch, torchvision, sys; print("python", sys.version.split()[0]); print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version()); print("torchvision", torchvision.__version__); p = torch.cuda.get_device_properties(0); print(p.name, p.multi_processor_count, "SMs"); print("stream priority range", torch.cuda.Stream.priority_range() if hasattr(torch.cuda.Stream, "priority_range") else "")'
		$PY -c 'import triton; print("triton", triton.__version__)'
		nproc
	} >"$OUT/versions.txt" 2>&1
	cat "$OUT/versions.txt"
}

build() {
	say build
	nvcc -arch=sm_90 -O2 -o "$BUILD/launch_overhead" "$HERE/launch_overhead.cu" >>"$LOG" 2>&1 ||
		{ say "nvcc failed"; return 1; }
	if make -C "$LIBDIR" cuda BUILD="$BUILD/libxsched" >>"$LOG" 2>&1; then
		say "built $XLIB"
	else
		say "libxsched-cuda.so did not build (see log); the libxsched steps are skipped"
		XLIB=
	fi
}

# room SECONDS WHAT: whether SECONDS still fit in BUDGET_S (always without it)
room() {
	[ -n "$END" ] || return 0
	local left=$((END - $(date +%s)))
	[ "$1" -le "$left" ] && return 0
	say "skip ($1 s needed, $left s left): $2"
	return 1
}

# stacks_later T: after T s, the Python (faulthandler, SIGUSR1) and native
# (cuda-gdb) stacks of a case still running go to the log; $STACKS is the
# watcher, killed when the case ends
stacks_later() {
	(
		sleep "$1"
		for p in $(pgrep -f "$HERE/xbench.py"); do
			case "$(cat /proc/"$p"/comm 2>/dev/null)" in python*) ;; *) continue ;; esac
			say "still running after $1 s: the stacks of process $p"
			kill -USR1 "$p"
			command -v cuda-gdb >/dev/null &&
				timeout 90 cuda-gdb -q -batch -p "$p" -ex "thread apply all bt 30" >>"$LOG" 2>&1
		done
	) &
	STACKS=$!
}

# run_py LABEL TIMEOUT ARGS...: one python case, natively or preloaded; the
# timeout is cut to what is left of BUDGET_S; a case still running 20 s
# before its own timeout (60 s or more, not cut by the budget: only such a
# case is overdue) has its stacks logged.  (cuda-gdb stops the process it
# attaches to: on a case cut to 42 s it fired at 22 s, during a healthy
# exit, and the case then timed out.)
run_py() {
	local label=$1 t=$2 cut=
	shift 2
	if [ -n "$END" ] && [ $((END - $(date +%s))) -lt "$t" ]; then
		t=$((END - $(date +%s)))
		cut=1
		[ "$t" -gt 0 ] || { say "skip (budget spent): $label $*"; return 0; }
	fi
	[ "$label" != xsched ] || [ -n "$XLIB" ] || { say "skip (no interposer): $*"; return 0; }
	STACKS=
	[ -n "$cut" ] || [ "$t" -lt 60 ] || stacks_later $((t - 20))
	if [ "$label" = xsched ]; then
		XSCHED_LOG=${XSCHED_LOG:-info} XBENCH_XSCHED=xsched LD_PRELOAD=$XLIB \
			timeout "$t" $PY "$HERE/xbench.py" "$@" --out "$RES" --raw "$RAW" >>"$LOG" 2>&1
	else
		XBENCH_XSCHED=native timeout "$t" $PY "$HERE/xbench.py" "$@" --out "$RES" --raw "$RAW" >>"$LOG" 2>&1
	fi
	local rc=$?
	[ -z "$STACKS" ] || kill "$STACKS" 2>/dev/null
	[ $rc = 0 ] || say "FAILED rc=$rc: $label $*"
	tail -n 1 "$RES"
	return $rc
}

overhead() {	# labels...: one process per label in turn, per setup and kernel
	local setup kns label pre
	say "launch overhead: $*"
	for setup in one low high; do
		for kns in 0 5000 20000; do
			for label in "$@"; do
				pre=
				if [ "$label" = xsched ]; then
					[ -n "$XLIB" ] || continue
					pre=$XLIB
				fi
				XBENCH_XSCHED=$label LD_PRELOAD=$pre timeout 120 "$BUILD/launch_overhead" $kns 10000 $setup \
					>>"$RES" 2>>"$LOG" || say "launch_overhead $label $setup $kns failed"
			done
		done
	done
}

throughput_pairs() {	# ResNet-50 b16 inference and training alone, alternating
	local i
	say "throughput alone, native and libxsched alternating"
	for i in 1 2; do
		XBENCH_XSCHED=native timeout 120 $PY "$HERE/transparency.py" --throughput-only --out "$RES" >>"$LOG" 2>&1
		XBENCH_XSCHED=xsched LD_PRELOAD=$XLIB timeout 120 $PY "$HERE/transparency.py" --throughput-only --out "$RES" >>"$LOG" 2>&1
	done
}

batch_alone() {
	for b in r50b16 r50b256 gemm sdpa; do
		say "batch alone $b $1"
		run_py "$1" 120 batch-alone --batch $b --seconds 10 --tag "alone-$b"
	done
}

cases_inproc() {	# label prio batch-jobs...: the first with REQ_MAIN requests
	local label=$1 prio=$2 n=$REQ_MAIN b
	shift 2
	for b in "$@"; do
		say "stream $label $prio $b"
		run_py "$label" $((n / 20 + 180)) stream --batch "$b" --prio "$prio" --requests "$n" --tag "stream-$prio-$b"
		n=$REQ
	done
}

plan_native() {
	info
	build
	overhead native
	say "harness noise: one tiny kernel per request"
	run_py native 200 alone --urgent noop --requests 600 --tag noise-noop
	batch_alone native
	say "urgent alone"
	run_py native 300 alone --requests "$REQ_MAIN" --tag alone
	cases_inproc native high gemm r50b16 r50b256
}

# pair_n N SLACK MODE PRIO BATCH...: each case natively and then preloaded,
# back to back, N requests each, a timeout of N/20 + SLACK seconds
pair_n() {
	local n=$1 t=$(($1 / 20 + $2)) mode=$3 prio=$4 b
	shift 4
	for b in "$@"; do
		say "$mode $prio $b ($n requests): native, then libxsched"
		run_py native "$t" "$mode" --batch "$b" --prio "$prio" --requests "$n" --tag "$mode-$prio-$b"
		run_py xsched "$t" "$mode" --batch "$b" --prio "$prio" --requests "$n" --tag "$mode-$prio-$b"
	done
}

pair() { pair_n "$REQ" 180 "$@"; }
pair_main() { pair_n "$REQ_MAIN" 200 "$@"; }

# alone_pair [N TIMEOUT]: urgent alone, natively then preloaded (REQ, 300 s)
alone_pair() {
	local n=${1:-$REQ} t=${2:-300}
	say "urgent alone ($n requests), native and libxsched"
	run_py native "$t" alone --requests "$n" --tag alone
	run_py xsched "$t" alone --requests "$n" --tag alone-xsched
}

compare_transparency() {
	$PY - "$RES" <<'EOF2' | tee -a "$LOG"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if '"transparency"' in l]
nat = [r for r in rows if r["xsched"] == "native"][-1:]
xs = [r for r in rows if r["xsched"] == "xsched"][-1:]
if nat and xs:
    skip = {"xsched", "wall_s", "infer_r50b16_its", "train_r50b16_its"}
    diff = [k for k in nat[0] if k not in skip and nat[0][k] != xs[0].get(k)]
    print("TRANSPARENCY", "identical" if not diff else "DIFFERENT: %s" % diff)
    for k in ("infer_r50b16_its", "train_r50b16_its"):
        print("throughput %s native %.2f xsched %.2f ratio %.3f" % (k, nat[0][k], xs[0][k], xs[0][k] / nat[0][k]))
EOF2
}

# transparency TIMEOUT: ResNet-50 training and inference natively, then
# preloaded, and whether they gave the same losses and outputs
transparency() {
	say "transparency"
	XBENCH_XSCHED=native timeout "$1" $PY "$HERE/transparency.py" --out "$RES" >>"$LOG" 2>&1 || say "transparency native failed"
	XBENCH_XSCHED=xsched LD_PRELOAD=$XLIB timeout "$1" $PY "$HERE/transparency.py" --out "$RES" >>"$LOG" 2>&1 || say "transparency xsched failed"
	compare_transparency
}

plan_xsched() {
	info
	build
	[ -n "$XLIB" ] || return 1
	smoke
	overhead native xsched
	transparency 200
	alone_pair
	pair stream high r50b16 r50b256
}

plan_final() {
	info
	build
	[ -n "$XLIB" ] || return 1
	overhead native xsched native xsched
	throughput_pairs
	alone_pair
	pair stream high r50b16 gemm
	pair proc equal r50b16
}

plan_more() {
	local i
	info
	build
	[ -n "$XLIB" ] || return 1
	say "ResNet-50 b16 alone beside an idle high-priority stream, alternating"
	for i in 1 2; do
		run_py native 120 batch-alone --batch r50b16 --seconds 8 --idle-high --tag alone-r50b16-idlehigh
		run_py xsched 120 batch-alone --batch r50b16 --seconds 8 --idle-high --tag alone-r50b16-idlehigh
	done
	alone_pair
	pair stream high r50b256 sdpa
	pair stream equal r50b16
	say "libxsched with threshold 64, batch 32 beside ResNet-50 b16"
	XSCHED_THRESHOLD=64 XSCHED_BATCH=32 run_py xsched $((REQ / 20 + 180)) stream --batch r50b16 --prio high --requests "$REQ" --tag stream-high-r50b16-t64
	say "the urgent loop waiting with torch.cuda.synchronize() (device-wide) beside the GEMM"
	run_py native 200 stream --batch gemm --prio high --sync device --requests 60 --warmup 5 --tag stream-devsync-gemm
}

# lv3_count: what the urgent context carried and what it could not, so far
lv3_count() {
	say "urgent context (all cases so far): $(grep -c " urgent bursts: " "$LOG") urgent streams summed up at exit, $(grep -c "cannot run in the urgent context" "$LOG") functions not carried, $(grep -c "burst was started by the watchdog" "$LOG") gathered bursts started by the watchdog"
	grep "urgent bursts run" "$LOG" | tail -n 3 | cut -c1-220 | tee -a "$LOG"
	grep "cannot run in the urgent context" "$LOG" | sed 's/.*function //' | cut -c1-160 | sort | uniq -c | sort -rn | head -10 | tee -a "$LOG"
}

# lv3_beside BATCH N TIMEOUT: urgent ResNet-18 beside BATCH on the
# high-priority stream with the urgent context on, N requests; what it did
lv3_beside() {
	XSCHED_CUDA_LV3=1 run_py xsched "$3" stream --batch "$1" --prio high --requests "$2" \
		--tag "stream-high-$1-lv3"
	lv3_count
}

lv3_smoke() {
	say "smoke: a high-priority stream's ResNet-18 in the urgent context, XSCHED_LOG=debug"
	XSCHED_CUDA_LV3=1 XSCHED_LOG=debug LD_PRELOAD=$XLIB timeout 120 $PY -c '
import torch, torchvision
x = torch.randn(4, 3, 224, 224, device="cuda")
m = torchvision.models.resnet18(weights=None).cuda().eval()
hi = torch.cuda.Stream(priority=-1)
with torch.no_grad():
    a = m(x)
    with torch.cuda.stream(hi):
        b = m(x)
        c = (b * 2).sum()
    hi.synchronize()
print("smoke ok", torch.equal(a, b), float(a.sum()), float(c))
' >"$OUT/smoke-lv3.log" 2>&1
	say "smoke rc=$?: $(tail -n 1 "$OUT/smoke-lv3.log")"
	say "$(grep -c "now runs in the urgent context" "$OUT/smoke-lv3.log") moves to the urgent context, $(grep -c "cannot run in the urgent context" "$OUT/smoke-lv3.log") functions not carried, $(grep -c "runs in the urgent context as" "$OUT/smoke-lv3.log") carried"
	grep -E "urgent|cannot" "$OUT/smoke-lv3.log" | cut -c1-200 | sort | uniq -c | sort -rn | head -20 | tee -a "$LOG"
}

# Does the urgent context (Lv3) keep urgent ResNet-18 within 1.5x (P50) and
# 3x (P99) of alone beside the GEMM and SDPA, the batch job at 0.9 or more?
# (the native twins of the two cases: plan lv3-native)
plan_lv3() {
	local n=$REQ_MAIN t=$((REQ_MAIN / 20 + 150))
	info
	build
	[ -n "$XLIB" ] || return 1
	lv3_smoke
	run_py native 90 batch-alone --batch gemm --seconds 10 --tag alone-gemm
	run_py native 90 batch-alone --batch sdpa --seconds 10 --tag alone-sdpa
	say "urgent alone ($n requests)"
	run_py native "$t" alone --requests "$n" --tag alone
	say "urgent beside the GEMM and SDPA, urgent context on ($n requests each)"
	lv3_beside gemm "$n" "$t"
	lv3_beside sdpa "$n" "$t"
}

# Beside ResNet-50 b16 and b256 (issue 24: no worse than Lv1): urgent alone
# natively, then beside each with the urgent context on (mode auto) and
# with Lv1 alone (the library without it), REQ_MAIN each
plan_lv3_r50() {
	local n=$REQ_MAIN t=$((REQ_MAIN / 20 + 150)) b
	info
	build
	[ -n "$XLIB" ] || return 1
	say "urgent alone ($n requests)"
	run_py native "$t" alone --requests "$n" --tag alone
	for b in ${R50:-r50b16 r50b256}; do
		say "urgent beside $b: urgent context on, then Lv1 only ($n requests each)"
		lv3_beside "$b" "$n" "$t"
		run_py xsched "$t" stream --batch $b --prio high --requests "$n" --tag stream-high-$b
	done
}

# The urgent context's mode chosen per stream (auto) beside each batch job:
# the batch jobs alone (10 s), urgent alone natively, then beside the GEMM,
# SDPA, ResNet-50 b16 and b256 with XSCHED_CUDA_LV3=1, REQ_MAIN each (the
# last cut by BUDGET_S on a 10-minute call)
plan_lv3_auto() {
	local n=$REQ_MAIN t=$((REQ_MAIN / 20 + 150)) b
	info
	build
	[ -n "$XLIB" ] || return 1
	for b in ${LV3_BATCH:-gemm sdpa r50b16}; do
		[ "$b" = r50b256 ] || run_py native 90 batch-alone --batch $b --seconds 10 --tag alone-$b
	done
	say "urgent alone ($n requests)"
	run_py native "$t" alone --requests "$n" --tag alone
	for b in ${LV3_BATCH:-gemm sdpa r50b16 r50b256}; do
		room 120 "urgent beside $b, urgent context on" || break
		say "urgent beside $b, urgent context on, mode auto ($n requests)"
		lv3_beside "$b" "$n" "$t"
	done
}

# Issue 24's LLM case: VGG-16 training alone (10 s); a smoke test of the
# decode loop (xbench.py's llama32), eager and under CUDA graphs, natively and
# with the urgent context on (the plan stops if one fails); then for eager and
# for graphs: the decode loop alone natively, then beside VGG-16 training on
# the high-priority stream natively and with the urgent context on (mode
# auto), LLM_REQ requests each at LLM_RATE per second, cut by BUDGET_S
# (LLM_SMOKE, LLM_VARIANTS: the variants smoke-tested and measured, default
# "eager graph")
plan_lv3_llm() {
	local n=${LLM_REQ:-300} r=${LLM_RATE:-5} t g tag side
	t=$((n / r * 2 + 90))
	info
	build
	[ -n "$XLIB" ] || return 1
	say "LLM smoke: 3 requests each, ${LLM_SMOKE-eager graph}, native and urgent context"
	for g in ${LLM_SMOKE-eager graph}; do
		[ "$g" = graph ] && g=--graph || g=
		run_py native 150 alone --urgent llama32 --prio high $g --requests 3 --warmup 1 --tag smoke-llama32 || return 1
		XSCHED_CUDA_LV3=1 run_py xsched 150 alone --urgent llama32 --prio high $g --requests 3 --warmup 1 --tag smoke-llama32 || return 1
	done
	run_py native 120 batch-alone --batch vgg16train --seconds 10 --tag alone-vgg16train
	for g in ${LLM_VARIANTS-eager graph}; do
		[ "$g" = graph ] && g=--graph || g=
		tag=llama32${g:+-graph}
		room $((t / 2)) "LLM decode $tag alone" || break
		say "LLM decode $tag alone ($n requests at $r/s)"
		run_py native "$t" alone --urgent llama32 --prio high $g --rate "$r" --warmup 10 \
			--requests "$n" --tag "alone-$tag"
		for side in native xsched; do
			room $((t / 2)) "LLM decode $tag beside VGG-16 training, $side" || break 2
			say "LLM decode $tag beside VGG-16 training, $side ($n requests at $r/s)"
			if [ $side = xsched ]; then
				XSCHED_CUDA_LV3=1 run_py xsched "$t" stream --urgent llama32 --batch vgg16train \
					--prio high $g --rate "$r" --warmup 10 --requests "$n" \
					--tag "stream-high-vgg16train-$tag-lv3"
				lv3_count
			else
				run_py native "$t" stream --urgent llama32 --batch vgg16train \
					--prio high $g --rate "$r" --warmup 10 --requests "$n" \
					--tag "stream-high-vgg16train-$tag"
			fi
		done
	done
	# the machine can drift within a run: the batch job alone again
	room 30 "VGG-16 training alone, again" &&
		run_py native 60 batch-alone --batch vgg16train --seconds 10 --tag alone-vgg16train-end
}

# Issue 33: auto against every mode forced, on an urgent job it was not
# tuned on (the transformer encoder), beside the long-kernel batch jobs
plan_lv3_tail() {
	local n=${TAIL_REQ:-300} t b m
	t=$((n / 20 + 90))
	info
	build
	[ -n "$XLIB" ] || return 1
	for b in ${TAIL_BATCH:-gemm sdpa}; do
		run_py native 60 batch-alone --batch $b --seconds 10 --tag alone-$b
	done
	say "encoder alone ($n requests)"
	run_py native "$t" alone --urgent encoder --prio high --requests "$n" --tag alone-encoder
	for b in ${TAIL_BATCH:-gemm sdpa}; do
		room "$t" "encoder beside $b, native" || break
		say "encoder beside $b, native ($n requests)"
		run_py native "$t" stream --urgent encoder --batch $b --prio high --requests "$n" \
			--tag stream-high-$b-encoder
		for m in ${TAIL_MODES:-native gather ctx lv1 auto}; do
			room "$t" "encoder beside $b, mode $m" || break 2
			say "encoder beside $b, urgent context on, mode $m ($n requests)"
			XSCHED_CUDA_LV3=1 XSCHED_CUDA_LV3_MODE=$m run_py xsched "$t" stream --urgent encoder \
				--batch $b --prio high --requests "$n" --tag stream-high-$b-encoder-lv3-$m
		done
		lv3_count
	done
}

# Issue 33: the default (holds chosen) against native and holds always
plan_default_holds() {
	local n p u b r t k side
	info
	build
	[ -n "$XLIB" ] || return 1
	for p in ${DEF_PAIRS:-llama32:vgg16train r18b4:r50b16 encoder:gemm}; do
		u=${p%%:*} b=${p#*:} n=${DEF_REQ:-300} r=20
		[ "$u" = llama32 ] && n=$((n / 2)) r=5
		t=$((n / r * 2 + 90))
		for side in ${DEF_SIDES:-native auto hold1}; do
			room $((t / 2)) "$u beside $b, $side" || return 0
			say "$u beside $b, $side ($n requests at $r/s)"
			k=(stream --urgent "$u" --batch "$b" --prio high --rate "$r" --warmup 10 --requests "$n")
			case $side in
			native) run_py native "$t" "${k[@]}" --tag "stream-high-$b-$u" ;;
			auto) XSCHED_CUDA_HOLD= run_py xsched "$t" "${k[@]}" --tag "stream-high-$b-$u-default" ;;
			hold1) XSCHED_CUDA_HOLD=1 run_py xsched "$t" "${k[@]}" --tag "stream-high-$b-$u-hold1" ;;
			esac
		done
		say "$u beside $b, the default's choice: $(grep "cuda: stream .* urgent bursts: " "$LOG" | tail -n 1 | cut -c1-200)"
	done
}

# corpus_need N W MS SIDE BATCH: seconds a corpus case takes: N requests
# and W of warmup at MS ms each (their pace, or longer), or a whole batch
# kernel each where the side may wait for one (every side but those of the
# urgent context, beside the GEMM or SDPA: need_gemm, need_sdpa), and 25 s
# to start
corpus_need() {
	local ms=$3
	case $4 in
	gather | ctx | auto) ;;
	*)
		case $5 in
		gemm) [ "$ms" -ge 175 ] || ms=175 ;;
		sdpa) [ "$ms" -ge 122 ] || ms=122 ;;
		esac ;;
	esac
	echo $((($1 + $2) * ms / 1000 + 25))
}

# Issue 33's corpus: each urgent:batch pair natively, with the urgent
# context on in each mode forced and in mode auto, and with the library's
# default (XSCHED_CUDA_LV3 and XSCHED_CUDA_HOLD empty: Lv1 holds chosen per
# burst), one process per case, tagged corpus-URGENT-BATCH-SIDE; the urgent
# job alone natively once a round (corpus-URGENT-alone) for the ratios
# against alone; rounds after the first add -rN to the tags; a case that
# does not fit BUDGET_S ends the plan, and corpus.py scores what ran
plan_corpus() {
	local p u x g b n r w pm nd side k l0 lines rd t stop= seen=" "
	local rounds=${CORPUS_ROUNDS:-1}
	case $rounds in
	[1-9] | [1-9][0-9]) ;;
	*) say "CORPUS_ROUNDS=$rounds: a number of rounds, 1 to 99"; return 1 ;;
	esac
	info
	build
	[ -n "$XLIB" ] || return 1
	for p in ${CORPUS_PAIRS:-encoder:gemm encoder:sdpa r18b4:r50b16 llama32:vgg16train smallk:r50b256 llama32g:r50train}; do
		# a warmup of 50 requests holds auto's first tries of each
		# mode (5 bursts each); a decoded token is a burst
		u=${p%%:*} b=${p#*:} n=${CORPUS_REQ:-200} r=20 w=50
		x=$u g=
		case $u in
		llama32) n=$((n / 2)) r=5 w=10 ;;
		llama32g) n=$((n / 2)) r=5 w=10 x=llama32 g=--graph ;;
		esac
		# ms a request: its pace; an eager decode takes ~0.4 s (lv3-llm)
		pm=$((1000 / r))
		[ "$u" != llama32 ] || pm=450
		l0=$(wc -l <"$LOG")
		for rd in $(seq 1 "$rounds"); do
			# round 1 untagged, as one round always was
			t=
			[ "$rd" = 1 ] || t=-r$rd
			if [ "${seen#* "$u$t" }" = "$seen" ]; then
				nd=$(corpus_need "$n" "$w" "$pm" alone none)
				room "$nd" "$u alone${t:+, round $rd}" || { stop=1; break; }
				say "$u alone${t:+, round $rd} ($n requests at $r/s)"
				run_py native $((nd * 2)) alone --urgent "$x" --prio high $g --rate "$r" --warmup "$w" \
					--requests "$n" --tag "corpus-$u-alone$t"
				seen="$seen$u$t "
			fi
			for side in ${CORPUS_SIDES:-native gather ctx lv1 auto default}; do
				case $side in
				native | gather | ctx | lv1 | auto | default | lv3native | nocap | hold0) ;;
				*) say "unknown corpus side $side (native gather ctx lv1 auto default lv3native nocap hold0)"; continue ;;
				esac
				nd=$(corpus_need "$n" "$w" "$pm" "$side" "$b")
				room "$nd" "$u beside $b, $side${t:+, round $rd}" || { stop=1; break; }
				say "$u beside $b, $side${t:+, round $rd} ($n requests at $r/s)"
				k=(stream --urgent "$x" --batch "$b" --prio high ${g:+"$g"} --rate "$r" --warmup "$w"
					--requests "$n" --tag "corpus-$u-$b-$side$t")
				case $side in
				native) run_py native $((nd * 2)) "${k[@]}" ;;
				default) XSCHED_CUDA_LV3= XSCHED_CUDA_HOLD= run_py xsched $((nd * 2)) "${k[@]}" ;;
				lv3native) XSCHED_CUDA_LV3=1 XSCHED_CUDA_LV3_MODE=native run_py xsched $((nd * 2)) "${k[@]}" ;;
				nocap) XSCHED_CUDA_LV3= XSCHED_CUDA_HOLD= XSCHED_THRESHOLD=4096 run_py xsched $((nd * 2)) "${k[@]}" ;;
				hold0) XSCHED_CUDA_LV3= XSCHED_CUDA_HOLD=0 run_py xsched $((nd * 2)) "${k[@]}" ;;
				*) XSCHED_CUDA_LV3=1 XSCHED_CUDA_LV3_MODE=$side run_py xsched $((nd * 2)) "${k[@]}" ;;
				esac
			done
			[ -z "$stop" ] || break
		done
		# what the interposer chose: each case's exit lines after its own
		# line, and the cases that failed
		lv3_count
		lines=$(tail -n +$((l0 + 1)) "$LOG" |
			grep -E "^== .* $u beside $b, |FAILED rc=.* corpus-$u-$b-|cuda: stream .* urgent bursts: " | cut -c1-220)
		[ -z "$lines" ] || echo "$lines" | tee -a "$LOG"
		[ -z "$stop" ] || break
	done
	say "corpus: issue 33's bars (corpus.md)"
	$PY "$HERE/corpus.py" "$RES" | tee "$OUT/corpus.md"
}

# A case that hung, probed: the LLM decode loop beside VGG-16 training with
# the urgent context on, PROBE_REQ requests (default 30) per mode of
# PROBE_MODES (default "auto gather ctx lv1"), 90 s each (a hang has its
# stacks logged); the first mode's calls at XSCHED_LOG=debug, whose last 3 MB
# go to debug-tail.log
plan_lv3_probe() {
	local m n=${PROBE_REQ:-30} first=1
	info
	build
	[ -n "$XLIB" ] || return 1
	for m in ${PROBE_MODES-auto gather ctx lv1}; do
		say "probe: LLM decode beside VGG-16 training, mode $m ($n requests)"
		if [ $first = 1 ]; then
			stacks_later 70
			XSCHED_CUDA_LV3=1 XSCHED_CUDA_LV3_MODE=$m XSCHED_LOG=debug XBENCH_XSCHED=xsched \
				LD_PRELOAD=$XLIB timeout 90 $PY "$HERE/xbench.py" stream --urgent llama32 \
				--batch vgg16train --prio high --rate 2 --warmup 5 --requests "$n" \
				--tag "probe-$m" --out "$RES" 2>&1 | tail -c 3000000 >"$OUT/debug-tail.log"
			kill "$STACKS" 2>/dev/null
			say "probe $m: $(grep -c . "$OUT/debug-tail.log") lines kept; last: $(tail -n 1 "$OUT/debug-tail.log" | cut -c1-200)"
			first=0
		else
			XSCHED_CUDA_LV3=1 XSCHED_CUDA_LV3_MODE=$m run_py xsched 90 stream --urgent llama32 \
				--batch vgg16train --prio high --rate 2 --warmup 5 --requests "$n" --tag "probe-$m"
		fi
	done
}

# The transparency suite on priority -1 streams natively, then with the
# urgent context on in mode auto (its first bursts try every mode, so the
# stream's work moves between the contexts) and in mode gather
plan_lv3_transparency() {
	local m
	info
	build
	[ -n "$XLIB" ] || return 1
	XBENCH_XSCHED=native timeout 200 $PY "$HERE/transparency.py" --urgent --out "$RES" >>"$LOG" 2>&1 || say "transparency native failed"
	for m in auto gather; do
		room 150 "transparency, mode $m" || break
		say "transparency on priority -1 streams, urgent context on, mode $m"
		XSCHED_CUDA_LV3=1 XSCHED_CUDA_LV3_MODE=$m XBENCH_XSCHED=xsched LD_PRELOAD=$XLIB timeout 200 $PY "$HERE/transparency.py" --urgent --out "$RES" >>"$LOG" 2>&1 || say "transparency xsched ($m) failed"
		compare_transparency
		lv3_count
		grep "urgent bursts:" "$LOG" | tail -n 4 | cut -c1-220 | tee -a "$LOG"
	done
}

# Issue 32: lv3_correctness.cu natively, then with the urgent context on in
# mode auto and in mode ctx (a hang is killed at 120 s; the program itself
# prints HANG after 20 s without progress)
plan_lv3_correctness() {
	local m
	info
	build
	[ -n "$XLIB" ] || return 1
	nvcc -arch=sm_90 -O2 -o "$BUILD/lv3_correctness" "$HERE/lv3_correctness.cu" -lcuda >>"$LOG" 2>&1 ||
		{ say "nvcc lv3_correctness failed"; return 1; }
	say "lv3_correctness natively"
	timeout 120 "$BUILD/lv3_correctness" 2>&1 | tee -a "$LOG"
	for m in auto ctx; do
		say "lv3_correctness, urgent context on, mode $m"
		XSCHED_LOG=info XSCHED_CUDA_LV3=1 XSCHED_CUDA_LV3_MODE=$m LD_PRELOAD=$XLIB \
			timeout 120 "$BUILD/lv3_correctness" >"$OUT/lv3c-$m.txt" 2>&1
		say "rc $?"
		grep -E "^result|urgent bursts|cannot run|watchdog" "$OUT/lv3c-$m.txt" | cut -c1-240 | tee -a "$LOG"
	done
	say "what loading code in the urgent context costs: load_cost.py natively, then mode auto"
	XBENCH_XSCHED=native timeout 200 $PY "$HERE/load_cost.py" --out "$RES" 2>>"$LOG" | tee -a "$LOG"
	XSCHED_LOG=info XSCHED_CUDA_LV3=1 XBENCH_XSCHED=xsched LD_PRELOAD=$XLIB timeout 200 \
		$PY "$HERE/load_cost.py" --out "$RES" 2>&1 | grep -E "^\{|loaded in the urgent" | tee -a "$LOG"
}

# The native twins of plan lv3, and the transparency suite on priority -1
# streams with the urgent context on.
plan_lv3_native() {
	local n=$REQ_MAIN
	info
	build
	say "urgent beside the GEMM and SDPA natively ($n requests each)"
	run_py native $((n / 20 + 150)) stream --batch gemm --prio high --requests "$n" --tag stream-high-gemm
	run_py native $((n * 3 / 20 + 150)) stream --batch sdpa --prio high --requests "$n" --tag stream-high-sdpa
	[ -n "$XLIB" ] || return 1
	say "transparency on priority -1 streams (their work in the urgent context)"
	XBENCH_XSCHED=native timeout 200 $PY "$HERE/transparency.py" --urgent --out "$RES" >>"$LOG" 2>&1 || say "transparency native failed"
	XSCHED_CUDA_LV3=1 XBENCH_XSCHED=xsched LD_PRELOAD=$XLIB timeout 200 $PY "$HERE/transparency.py" --urgent --out "$RES" >>"$LOG" 2>&1 || say "transparency xsched failed"
	compare_transparency
	lv3_count
}

smoke() {
	say "smoke: PyTorch under the interposer, XSCHED_LOG=debug"
	XSCHED_LOG=debug LD_PRELOAD=$XLIB timeout 120 $PY -c '
import torch, torchvision
x = torch.randn(4, 3, 224, 224, device="cuda")
m = torchvision.models.resnet18(weights=None).cuda().eval()
hi = torch.cuda.Stream(priority=-1)
with torch.no_grad():
    a = m(x)
    with torch.cuda.stream(hi):
        b = m(x)
    hi.synchronize()
print("smoke ok", torch.equal(a, b), float(a.sum()))
' >"$OUT/smoke.log" 2>&1
	say "smoke rc=$?: $(grep -c . "$OUT/smoke.log") lines; $(tail -n 1 "$OUT/smoke.log")"
	grep -o 'debug: cuda: [A-Za-z_0-9]* stream [^:]*: [a-z-]*' "$OUT/smoke.log" |
		sed 's/stream [^:]*:/stream:/' | sort | uniq -c | sort -rn | head -30 | tee -a "$LOG"
}

plan_core_smoke() {
	info
	build
	[ -n "$XLIB" ] || return 1
	smoke
	overhead native xsched
	transparency 150
	alone_pair "$REQ_MAIN" $((REQ_MAIN / 20 + 100))
}

plan_gemm_high() {
	info
	build
	[ -n "$XLIB" ] || return 1
	pair_main stream high gemm
}

plan_r50b16_high_procs() {
	info
	build
	[ -n "$XLIB" ] || return 1
	pair_main stream high r50b16
	pair_main proc equal r50b16
}

# placement: what the interposer's log says the partition did (last case)
placement() {
	say "placement: $(grep -c "urgent partition" "$LOG") urgent, $(grep -c "batch partition" "$LOG") batch stream lines so far; $(grep "SM partition:" "$LOG" | tail -n 1 | sed 's/.*SM partition: //' | cut -c1-80)"
}

plan_green() {
	local n=$REQ_MAIN t=$((REQ_MAIN / 20 + 150))
	info
	build
	[ -n "$XLIB" ] || return 1
	say "urgent beside the GEMM, one process, high priority, SM split 16 ($n requests)"
	XSCHED_CUDA_SM_SPLIT=16 run_py xsched $t stream --batch gemm --prio high --requests "$n" --tag stream-high-gemm-split16
	placement
	say "the same, Lv1 holds off"
	XSCHED_CUDA_SM_SPLIT=16 XSCHED_CUDA_HOLD=0 run_py xsched $t stream --batch gemm --prio high --requests "$n" --tag stream-high-gemm-split16-nohold
	say "urgent alone, SM split 16"
	XSCHED_CUDA_SM_SPLIT=16 run_py xsched $t alone --prio high --requests "$n" --tag alone-split16
	say "the GEMM alone: native, split 16"
	run_py native 90 batch-alone --batch gemm --seconds 10 --tag alone-gemm
	XSCHED_CUDA_SM_SPLIT=16 run_py xsched 90 batch-alone --batch gemm --seconds 10 --tag alone-gemm-split16
	say "urgent beside the GEMM, SM split 32 ($n requests)"
	XSCHED_CUDA_SM_SPLIT=32 run_py xsched $t stream --batch gemm --prio high --requests "$n" --tag stream-high-gemm-split32
	placement
	XSCHED_CUDA_SM_SPLIT=32 run_py xsched 90 batch-alone --batch gemm --seconds 10 --tag alone-gemm-split32
}

plan_capfix() {
	local i
	info
	build
	[ -n "$XLIB" ] || return 1
	overhead native xsched
	say "ResNet-50 b16 alone beside an idle high-priority stream, alternating"
	for i in 1 2; do
		run_py native 120 batch-alone --batch r50b16 --seconds 8 --idle-high --tag alone-r50b16-idlehigh
		run_py xsched 120 batch-alone --batch r50b16 --seconds 8 --idle-high --tag alone-r50b16-idlehigh
	done
	pair_main stream high r50b16
}

plan_r50b16_equal_sdpa() {
	info
	build
	[ -n "$XLIB" ] || return 1
	pair_main stream equal r50b16
	pair stream high sdpa
}

plan_sdpa_high_split() {
	local n=$REQ_MAIN
	info
	build
	[ -n "$XLIB" ] || return 1
	say "urgent alone ($n requests)"
	run_py native $((n / 20 + 100)) alone --requests "$n" --tag alone
	pair_main stream high sdpa
	say "urgent beside the GEMM, one process, high priority, SM split 16 ($n requests)"
	XSCHED_CUDA_SM_SPLIT=16 run_py xsched $((n / 20 + 150)) stream --batch gemm --prio high --requests "$n" --tag stream-high-gemm-split16
}

# From sdpa-high-xsched on: versions and build once per command line.
READY=
setup() {
	if [ -z "$READY" ]; then
		info
		build
		READY=1
	fi
	[ -n "$XLIB" ]
}

# NEED: seconds a case of N requests takes at 20 requests/s, with the start
# of the process and the batch job; an SDPA case runs at one request per
# ~121 ms kernel, a GEMM case beside the serialised stream at one request
# per ~165 ms kernel
need() { echo $(($1 / 20 + 25)); }
need_sdpa() { echo $(($1 * 122 / 1000 + 25)); }
need_gemm() { echo $(($1 * 175 / 1000 + 25)); }

# gated_pair N NEED TIMEOUT MODE PRIO BATCH: native then preloaded, both or none
gated_pair() {
	local n=$1 nd=$2 t=$3 mode=$4 prio=$5 b=$6
	room $((2 * nd)) "$mode $prio $b pair" || return 0
	say "$mode $prio $b ($n requests): native, then libxsched"
	run_py native "$t" "$mode" --batch "$b" --prio "$prio" --requests "$n" --tag "$mode-$prio-$b"
	run_py xsched "$t" "$mode" --batch "$b" --prio "$prio" --requests "$n" --tag "$mode-$prio-$b"
}

# gated_case NEED WHAT SIDE TIMEOUT ARGS...: one case (run_py SIDE TIMEOUT
# ARGS...) when NEED seconds still fit, said as WHAT
gated_case() {
	local nd=$1 what=$2
	shift 2
	room "$nd" "$what" || return 0
	say "$what"
	run_py "$@"
}

# split_case TAG NEED TIMEOUT ARGS...: preloaded with the urgent streams on
# SPLIT SMs (default 16)
split_case() {
	local tag=$1 nd=$2 t=$3 k=${SPLIT:-16}
	shift 3
	room "$nd" "$tag" || return 0
	say "SM split $k: $tag"
	XSCHED_CUDA_SM_SPLIT=$k run_py xsched "$t" "$@" --tag "$tag"
	placement
}

# split_alone BATCH...: each batch job alone natively, then on the other 116 SMs
split_alone() {
	local b
	for b in "$@"; do
		room 80 "$b alone, native and on 116 SMs" || continue
		say "$b alone: native, then on 116 SMs"
		run_py native 60 batch-alone --batch $b --seconds 10 --tag "alone-$b"
		XSCHED_CUDA_SM_SPLIT=16 run_py xsched 60 batch-alone --batch $b --seconds 10 --tag "alone-$b-split16"
	done
}

plan_sdpa_high_xsched() {
	local n=$REQ_MAIN
	setup || return 1
	gated_case "$(need_sdpa $n)" "stream high sdpa ($n requests): libxsched" \
		xsched $(($(need_sdpa $n) + 60)) stream --batch sdpa --prio high --requests "$n" \
		--tag stream-high-sdpa
}

plan_r50b256_high() {
	setup || return 1
	gated_pair "$REQ_MAIN" "$(need "$REQ_MAIN")" $((REQ_MAIN / 20 + 120)) stream high r50b256
}

plan_alone() {
	local n=$REQ_MAIN
	setup || return 1
	gated_case "$(need $n)" "urgent alone ($n requests)" \
		native $((n / 20 + 100)) alone --requests "$n" --tag alone
}

plan_split16_gemm() {
	local n=$REQ_MAIN
	setup || return 1
	split_case alone-split16 "$(need $n)" $((n / 20 + 100)) alone --prio high --requests "$n"
	split_case stream-high-gemm-split16 "$(need $n)" $((n / 20 + 120)) \
		stream --batch gemm --prio high --requests "$n"
}

plan_split16_r50b16_sdpa() {
	local n=$REQ_MAIN
	setup || return 1
	split_case stream-high-r50b16-split16 "$(need $n)" $((n / 20 + 120)) \
		stream --batch r50b16 --prio high --requests "$n"
	split_case stream-high-sdpa-split16 "$(need $n)" $((n / 20 + 120)) \
		stream --batch sdpa --prio high --requests "$n"
	split_alone r50b16 sdpa
}

plan_tail() {
	local n=$REQ_MAIN hp= left=3600
	setup || return 1
	[ -z "$END" ] || left=$((END - $(date +%s) - 15))
	say "host stalls (hiccup.py) for ${left} s beside what follows"
	$PY "$HERE/hiccup.py" --seconds "$left" --out "$OUT/hiccup.jsonl" >>"$LOG" 2>&1 &
	hp=$!
	gated_case "$(need $n)" "urgent alone ($n requests)" \
		native $((n / 20 + 100)) alone --requests "$n" --tag alone
	gated_case "$(need $n)" "urgent alone, each request one CUDA graph ($n requests)" \
		native $((n / 20 + 100)) alone --graph --requests "$n" --tag alone-graph
	gated_case "$(need "$REQ")" "harness noise: one tiny kernel per request ($REQ requests)" \
		native $((REQ / 20 + 100)) alone --urgent noop --requests "$REQ" --tag noise-noop
	split_alone gemm sdpa
	kill -TERM "$hp"
	wait "$hp"
}

plan_gemm_procs() {
	setup || return 1
	gated_pair "$REQ_MAIN" "$(need "$REQ_MAIN")" $((REQ_MAIN / 20 + 120)) proc equal gemm
}

plan_r50b256_procs() {
	setup || return 1
	gated_pair "$REQ_MAIN" "$(need "$REQ_MAIN")" $((REQ_MAIN / 20 + 120)) proc equal r50b256
}

plan_r50b256_equal() {
	setup || return 1
	gated_pair "$REQ_MAIN" "$(need "$REQ_MAIN")" $((REQ_MAIN / 20 + 120)) stream equal r50b256
}

plan_sdpa_procs_equal() {
	local n=$REQ_MAIN m
	setup || return 1
	for m in ${MODES:-proc stream}; do
		if [ "$m" = proc ]; then	# time-sliced: near alone, 20 requests/s
			gated_pair "$n" "$(need "$n")" $((n / 20 + 120)) proc equal sdpa
		else			# serialised: each request waits a whole kernel
			gated_pair "$n" "$(need_sdpa "$n")" $(($(need_sdpa "$n") + 60)) stream equal sdpa
		fi
	done
}

plan_gemm_equal() {
	local n=$REQ_MAIN side=${SIDE:-native} nd
	nd=$(need_gemm "$n")
	setup || return 1
	gated_case "$nd" "stream equal gemm ($n requests): $side" \
		"$side" $((nd + 60)) stream --batch gemm --prio equal --requests "$n" \
		--tag stream-equal-gemm
}

plan_split32_gemm() {
	local n=$REQ_MAIN
	setup || return 1
	SPLIT=32 split_case stream-high-gemm-split32 "$(need $n)" $((n / 20 + 120)) \
		stream --batch gemm --prio high --requests "$n"
	XSCHED_CUDA_SM_SPLIT=32 gated_case 40 "gemm alone on 100 SMs" \
		xsched 40 batch-alone --batch gemm --seconds 10 --tag alone-gemm-split32
	XSCHED_CUDA_HOLD=0 split_case stream-high-gemm-split16-nohold "$(need $n)" \
		$((n / 20 + 120)) stream --batch gemm --prio high --requests "$n"
}

plan_lv1_batch_cost() {
	local n=$REQ_MAIN t=$((REQ_MAIN / 20 + 120))
	setup || return 1
	XSCHED_THRESHOLD=64 XSCHED_BATCH=32 gated_case "$(need $n)" \
		"urgent beside ResNet-50 b16, high priority, threshold 64 ($n requests)" \
		xsched $t stream --batch r50b16 --prio high --requests "$n" --tag stream-high-r50b16-t64
	gated_case "$(need $n)" "the same natively" \
		native $t stream --batch r50b16 --prio high --requests "$n" --tag stream-high-r50b16
	gated_case "$(need $n)" "the same at the default threshold" \
		xsched $t stream --batch r50b16 --prio high --requests "$n" --tag stream-high-r50b16
}

for p in "$@"; do
	case $p in
	native) plan_native ;;
	xsched) plan_xsched ;;
	final) plan_final ;;
	more) plan_more ;;
	core-smoke) plan_core_smoke ;;
	gemm-high) plan_gemm_high ;;
	r50b16-high-procs) plan_r50b16_high_procs ;;
	capfix) plan_capfix ;;
	r50b16-equal-sdpa) plan_r50b16_equal_sdpa ;;
	sdpa-high-split) plan_sdpa_high_split ;;
	green) plan_green ;;
	sdpa-high-xsched) plan_sdpa_high_xsched ;;
	r50b256-high) plan_r50b256_high ;;
	alone) plan_alone ;;
	split16-gemm) plan_split16_gemm ;;
	split16-r50b16-sdpa) plan_split16_r50b16_sdpa ;;
	gemm-procs) plan_gemm_procs ;;
	tail) plan_tail ;;
	r50b256-procs) plan_r50b256_procs ;;
	r50b256-equal) plan_r50b256_equal ;;
	sdpa-procs-equal) plan_sdpa_procs_equal ;;
	gemm-equal) plan_gemm_equal ;;
	split32-gemm) plan_split32_gemm ;;
	lv1-batch-cost) plan_lv1_batch_cost ;;
	lv3) plan_lv3 ;;
	lv3-r50) plan_lv3_r50 ;;
	lv3-auto) plan_lv3_auto ;;
	lv3-transparency) plan_lv3_transparency ;;
	lv3-correctness) plan_lv3_correctness ;;
	lv3-llm) plan_lv3_llm ;;
	lv3-probe) plan_lv3_probe ;;
	lv3-tail) plan_lv3_tail ;;
	default-holds) plan_default_holds ;;
	corpus) plan_corpus ;;
	lv3-native) plan_lv3_native ;;
	all) plan_native; plan_xsched; plan_final; plan_more ;;
	*) echo "unknown plan $p" >&2; exit 2 ;;
	esac
done
say done
$PY "$HERE/table.py" "$RES" | tee "$OUT/table.md"
