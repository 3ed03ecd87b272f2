#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`: the demo in the VM, then its pictures on the host.
#
# Usage: tools/demo/run-demo.sh OUT_DIR TOOLS_DIR MODULE [DEMO_ARGS [SETTLE_S [HIP_DIR]]]
#   (CACHE and KREL in the environment, as the Makefile passes them)
#
# In the VM, after SETTLE_S seconds (the TCG guest runs slow for its first
# ~40 s): xsched-demo -S (its tables, and each case's latencies as
# "xsched-samples" lines), then `xschedctl timeline` around xsched-once (one
# urgent request preempting the batch queue), the JSON printed between marker
# lines: qemu-run streams only the guest's output.  With HIP_DIR (tests/hip-sim's
# guest folder, `make hip-vm`), then the fused-kernel case through the HIP path:
# the same hipcc-built program alone and with libxsched.so preloaded, on the
# test-only stand-in HIP runtime (Documentation/hip.rst).  On the host the sample
# lines and the JSON are taken out of what is shown and written to
#   OUT_DIR/latency-cdf.svg   the CDF of the urgent latency per case (gnuplot)
#   OUT_DIR/samples.tsv       the samples it was drawn from (case, us)
#   OUT_DIR/timeline.json     the timeline (open it in https://ui.perfetto.dev)
#   OUT_DIR/demo.log          everything the VM printed
# and their paths are printed last.  Exit status: the VM run's, else 1 if
# a picture could not be made.
set -uo pipefail

[ $# -ge 3 ] || { echo "usage: $0 OUT_DIR TOOLS_DIR MODULE [DEMO_ARGS]" >&2; exit 2; }
out=$1 tools=$2 module=$3 args=${4:-} settle=${5:-0} hip=${6:-}
top=$(cd "$(dirname "$0")/../.." && pwd)
: "${CACHE:?}" "${KREL:?}"
command -v gnuplot > /dev/null || { echo "run-demo: gnuplot not found (tools/install-deps.sh)" >&2; exit 2; }
mkdir -p "$out"
rm -f "$out"/latency-cdf.svg "$out"/samples.tsv "$out"/timeline.json "$out"/cdf-*.dat

hipcopy=() hipcmd=
if [ -n "$hip" ]; then
	hipcopy=(--copy "$hip")
	hipcmd="&& echo && cd $(basename "$hip") && ./run-bench.sh 20"
fi

# idle=poll: an idle TCG vCPU wakes slowly, which would penalise the quietest case.
"$top/tools/qemu-run.sh" --cache "$CACHE" --krel "$KREL" --append idle=poll \
	--module "$module" --module "${module%/*}/sim/xsched_sim.ko" \
	--copy "$tools/xsched-demo" --copy "$tools/xsched-once" \
	--copy "$tools/xschedctl" "${hipcopy[@]}" --rmmod -- \
	"sleep $settle; ./xsched-demo -S $args && ./xschedctl timeline -o /tmp/once.json -- ./xsched-once &&
	 echo xsched-timeline-begin && cat /tmp/once.json && echo xsched-timeline-end $hipcmd" |
	tee "$out/demo.log" |
	awk -v samples="$out/samples.tsv" -v tl="$out/timeline.json" '
		/^xsched-samples\t/ { split($0, f, "\t"); n = split(f[3], v, " ")
				      for (i = 1; i <= n; i++) print f[2] "\t" v[i] > samples
				      next }
		/^xsched-timeline-begin$/ { in_tl = 1; next }
		/^xsched-timeline-end$/ { in_tl = 0; next }
		in_tl { print > tl; next }
		{ print; fflush() }'
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || exit "$rc"

status=0
if [ -s "$out/samples.tsv" ]; then
	# One file per case: latency (ms, sorted) and the fraction at or below it.
	cases=$(cut -f1 "$out/samples.tsv" | awk '!seen[$0]++')
	plot= i=0
	while IFS= read -r c; do
		i=$((i + 1))
		awk -F'\t' -v c="$c" '$1 == c { print $2 / 1000 }' "$out/samples.tsv" |
			sort -g | awk '{ v[NR] = $1 } END { for (i = 1; i <= NR; i++) print v[i], i / NR }' \
			> "$out/cdf-$i.dat"
		plot="$plot${plot:+, }'$out/cdf-$i.dat' using 1:2 with steps lw 2 title '$c'"
	done <<< "$cases"
	gnuplot <<-EOF || status=1
		set terminal svg size 800,480 dynamic font 'sans,12' background '#ffffff'
		set output '$out/latency-cdf.svg'
		set title 'Urgent request latency beside a batch queue (sim GPU, QEMU/TCG)'
		set xlabel 'latency, ms (log scale)'
		set ylabel 'fraction of requests'
		set logscale x
		set yrange [0:1.02]
		set grid
		set key bottom right
		plot $plot
	EOF
else
	echo "run-demo: no samples in the output" >&2
	status=1
fi
[ -s "$out/timeline.json" ] || { echo "run-demo: no timeline in the output" >&2; status=1; }
echo
[ -s "$out/latency-cdf.svg" ] && echo "latency CDF plot: $out/latency-cdf.svg"
[ -s "$out/timeline.json" ] && echo "timeline of one urgent request: $out/timeline.json (open it in https://ui.perfetto.dev)"
exit $status
