# SPDX-License-Identifier: MIT
"""Print the tables of one or more results.jsonl files (xbench.py, launch_overhead).

table.py FILE...            every row, by run (a run is one file)
table.py --summary FILE...  one line per case at 2000+ requests, the last
                            run that measured it winning
"""
import json
import os
import re
import sys


def load(paths):
    """Rows of every file; each row knows its run (one file: run N when it is
    named runN-*, else its place on the command line), since ratios are taken
    against the references measured in the same run."""
    rows = []
    for i, p in enumerate(paths):
        # a file named runN-*.jsonl (a local results folder, not in git) is run N
        m = re.match(r"run(\d+)", os.path.basename(p))
        with open(p) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    r = json.loads(line)
                    r["run"] = int(m.group(1)) if m else i + 1
                    rows.append(r)
    return rows


def f(x, nd=2):
    return "-" if x is None else ("%.*f" % (nd, x))


def label(r):
    """The case of an urgent row in words."""
    case = r["mode"] if r["mode"] == "alone" else \
        ("2 processes" if r["mode"] == "proc" else "1 process, %s prio" % r["prio"])
    if r.get("urgent") != "r18b4":
        case += " (%s)" % r.get("urgent")
    if r.get("graph"):
        case += " graph"
    if r.get("sync") == "device":
        case += ", device-wide sync"
    if r.get("case", "").endswith("-t64"):
        case += ", threshold 64"
    for sms in ("16", "32"):
        if "split" + sms in r.get("case", ""):
            case += ", urgent on %s SMs" % sms
    if r.get("case", "").endswith("-nohold"):
        case += ", holds off"
    return case


def summary(rows, nmin):
    """One line per case: its last pair (native and libxsched in the same run)
    with at least NMIN requests, else its last such row of each side; x
    against each urgent-alone case (native) of that row's run."""
    alone = {}
    balone = {}
    for r in rows:
        if r.get("mode") == "alone" and r.get("urgent") == "r18b4" and not r.get("graph") \
                and r["xsched"] == "native":
            alone.setdefault(r["run"], []).append(r)
        if r.get("mode") == "batch-alone" and r["xsched"] == "native":
            balone.setdefault(r["batch"], r)
    last = {}
    for r in rows:
        if r.get("mode") in ("alone", "stream", "proc") and r.get("urgent") == "r18b4" \
                and r.get("n", 0) >= nmin and not r.get("graph"):
            last[(r.get("batch"), label(r), r["xsched"], r["run"])] = r
    cases = []
    for (b, c, _, _) in last:
        if (b, c) not in cases:
            cases.append((b, c))

    def cell(r):
        if r is None:
            return "-"
        # the machine drifts within a run: against each alone case of it,
        # a range where there are several
        refs = alone.get(r["run"], [])

        def rx(k):
            xs = sorted(r[k] / a[k] for a in refs)
            return f(xs[0]) + ("" if f(xs[0]) == f(xs[-1]) else "-" + f(xs[-1]))
        x = " (%sx/%sx)" % (rx("p50"), rx("p99")) if refs else ""
        bt = ""
        if r.get("batch_its"):
            ba = balone.get(r.get("batch"))
            bt = ", %s it/s" % f(r["batch_its"])
            if ba:
                bt += " (%s)" % f(r["batch_its"] / ba["batch_its"])
        return "%s / %s%s%s" % (f(r["p50"]), f(r["p99"]), x, bt)

    print("\n## every case, %d+ requests: urgent P50 / P99 ms (x: against the urgent job alone"
          " natively in the same run, a range where the run has several), batch it/s (x: against the batch job alone natively)" % nmin)
    print("batch alone natively: " + ", ".join(
        "%s %s it/s (run %d)" % (b, f(r["batch_its"]), r["run"]) for b, r in sorted(balone.items())))
    print("| batch | case | native | libxsched | run |")
    print("|---|---|---|---|---|")
    for b, c in sorted(cases, key=lambda k: (k[0] != "none", k[0], k[1])):
        runs = [k[3] for k in last if k[:2] == (b, c)]
        both = [n for n in runs if (b, c, "native", n) in last and (b, c, "xsched", n) in last]
        pick = lambda side: last.get((b, c, side, max(both))) if both else \
            max((last[k] for k in last if k[:3] == (b, c, side)), key=lambda r: r["run"], default=None)
        nat, xs = pick("native"), pick("xsched")
        rn = sorted({r["run"] for r in (nat, xs) if r})
        print("| %s | %s | %s | %s | %s |" % (b, c, cell(nat), cell(xs), ", ".join(map(str, rn))))


def main():
    if sys.argv[1:2] == ["--summary"]:
        summary(load(sys.argv[2:]), 2000)
        return
    rows = load(sys.argv[1:])
    alone = {}
    balone = {}
    for r in rows:
        if r.get("mode") == "alone" and r.get("n", 0) > 10:
            alone.setdefault((r["run"], r["xsched"], r.get("urgent"), bool(r.get("graph"))), r)
        if r.get("mode") == "batch-alone":
            balone.setdefault((r["batch"], r["xsched"]), r)

    print("\n## urgent job (ResNet-18 b4 @ 20 req/s unless named): P50 / P99 ms; x: against the same urgent job"
          " alone natively in the same run (graphs against graphs)")
    print("(batch x: against the batch job alone natively, first run that measured it)")
    print("| run | batch | case | libxsched | n | P50 | P99 | P50x | P99x | GPU P50/P99 | batch it/s | batch x | overlap |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if r.get("mode") not in ("alone", "stream", "proc"):
            continue
        case = label(r)
        ref = alone.get((r["run"], "native", r.get("urgent"), bool(r.get("graph"))))
        p50x = r["p50"] / ref["p50"] if ref else None
        p99x = r["p99"] / ref["p99"] if ref else None
        b = balone.get((r.get("batch"), "native"))
        bx = r.get("batch_its") / b["batch_its"] if b and r.get("batch_its") else None
        ov = r.get("overlap")
        print("| %d | %s | %s | %s | %d | %s | %s | %s | %s | %s/%s | %s | %s | %s |" % (
            r["run"], r.get("batch"), case, r["xsched"], r["n"], f(r["p50"]), f(r["p99"]),
            f(p50x), f(p99x), f(r.get("gpu_p50")), f(r.get("gpu_p99")),
            f(r.get("batch_its")), f(bx), "-" if ov is None else "%.0f%%" % (100 * ov)))

    bl = [r for r in rows if r.get("mode") == "batch-alone"]
    if bl:
        print("\n## batch jobs alone")
        print("| run | batch | case | libxsched | beside an idle high-priority stream | it/s | ms/it |")
        print("|---|---|---|---|---|---|---|")
        for r in bl:
            print("| %d | %s | %s | %s | %s | %s | %s |" % (r["run"], r["batch"], r.get("case"), r["xsched"],
                                                    "yes" if r.get("idle_high") else "no",
                                                    f(r["batch_its"], 3),
                                             f(r.get("ms_per_it"))))

    lo = [r for r in rows if r.get("mode") == "launch"]
    if lo:
        # processes of one configuration (alternating native/libxsched): medians
        agg = {}
        for r in lo:
            agg.setdefault((r["run"], r["setup"], r["kernel_ns"], r["xsched"]), []).append(r)
        med = lambda xs: sorted(xs)[len(xs) // 2]
        print("\n## per-launch overhead (median of 7 x launches per process; median over processes)")
        print("| run | setup | kernel ns | libxsched | processes | host ns/launch | total ns/kernel | total x native | ok |")
        print("|---|---|---|---|---|---|---|---|---|")
        for k in sorted(agg, key=lambda k: (k[0], ["one", "low", "high"].index(k[1]), k[2], k[3] != "native")):
            rs = agg[k]
            n = agg.get((k[0], k[1], k[2], "native"))
            tot = med([r["total_ns"] for r in rs])
            x = tot / med([r["total_ns"] for r in n]) if n else None
            print("| %d | %s | %d | %s | %d | %s | %s | %s | %s |" % (
                k[0], k[1], k[2], k[3], len(rs), f(med([r["host_ns"] for r in rs]), 0),
                f(tot, 0), f(x, 3), all(r.get("ok") for r in rs)))

    th = [r for r in rows if r.get("mode") == "throughput"]
    if th:
        print("\n## ResNet-50 b16 alone, it/s (alternating processes)")
        print("| run | libxsched | inference | training |")
        print("|---|---|---|---|")
        for r in th:
            print("| %d | %s | %s | %s |" % (r["run"], r["xsched"], f(r["infer_r50b16_its"]),
                                          f(r["train_r50b16_its"])))

    tr = [r for r in rows if r.get("mode") == "transparency"]
    for r in tr:
        print("\n## transparency: " + json.dumps(r))


if __name__ == "__main__":
    main()
