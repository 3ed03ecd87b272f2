# SPDX-License-Identifier: MIT
"""The urgent tail in raw.jsonl (xbench.py --raw): per case, how many
requests took over --slow ms on the GPU, and how far apart they came
(in requests, and in seconds where the starts were recorded), to tell a
periodic stall of the machine from one that the case itself causes.
Pass hiccup.jsonl too to count the host's own stalls."""
import argparse
import json
import statistics


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--slow", type=float, default=10.0)
    args = ap.parse_args()
    print("| case | libxsched | n | GPU P50 / P90 / P99 ms | over %g ms | median gap: requests | s | gaps of 25-35 requests |" % args.slow)
    print("|---|---|---|---|---|---|---|---|")
    for path in args.files:
        for line in open(path):
            r = json.loads(line)
            if r.get("mode") == "hiccup":
                st = r["stalls"]
                print("| host stalls over %g ms in %.0f s | | %d wake-ups | | %d (max %.1f ms) | | | |" % (
                    r["over_ms"], r["seconds"], r["wakes"], len(st), max((s[1] for s in st), default=0)))
                continue
            gpu = r["gpu"]
            n = len(gpu)
            s = sorted(gpu)
            idx = [i for i, g in enumerate(gpu) if g > args.slow]
            # a stall that spans two consecutive requests counts once
            heads = [i for i in idx if i - 1 not in idx]
            gaps = [b - a for a, b in zip(heads, heads[1:])]
            tg = "-"
            if r.get("t_ms") and len(heads) > 1:
                t = r["t_ms"]
                tg = "%.2f" % (statistics.median(t[b] - t[a] for a, b in zip(heads, heads[1:])) / 1e3)
            near = sum(1 for g in gaps if 25 <= g <= 35)
            case = r["case"] + (" (graph)" if r.get("graph") and "graph" not in r["case"] else "")
            print("| %s | %s | %d | %.2f / %.2f / %.2f | %d | %s | %s | %s |" % (
                case, r["xsched"], n, s[n // 2], s[int(0.9 * (n - 1))], s[int(round(0.99 * (n - 1)))],
                len(idx), statistics.median(gaps) if gaps else "-", tg,
                "%d of %d" % (near, len(gaps)) if gaps else "-"))


if __name__ == "__main__":
    main()
