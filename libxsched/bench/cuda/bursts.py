# SPDX-License-Identifier: MIT
"""Burst traces from a run-h100.sh log (XSCHED_CUDA_BURST_LOG=1): for each
case (the "== TIME URGENT beside BATCH, SIDE (" line before its lines), the
bursts of its urgent stream (the one that told most) as (burst, mode, span,
wait, idle before), us.  With --header PAIR, the C header the choice's host
tests replay (tests/libxsched/cuda/trace_*.h): the sides lv3native, gather,
ctx and lv1 of the pair URGENT:BATCH, cut to the shortest.

    bursts.py log.txt                      the cases and their bursts, a line each
    bursts.py log.txt --header r18b4:r50b16 > trace.h
    bursts.py --requests raw.jsonl --header r18b4:r50b16 > trace.h
    bursts.py --selftest                   on a made-up log (no GPU)

--requests: from a run's raw.jsonl (a run without the burst log), each
forced side's measured request latencies (native priority, gather, ctx,
lv1), us: a request of one synchronize is one burst, its latency the
burst's span and the Python around it (microseconds).
"""
import json
import re
import sys

# a case's line; rounds 2 on (CORPUS_ROUNDS) name theirs
CASE = re.compile(r"^== \S+ (\S+) beside (\S+), (\S+?)(?:, round (\d+))? \(")
BURST = re.compile(r"cuda: stream (0x[0-9a-f]+): burst (\d+): (\w+), span (\d+) us, "
                   r"wait (\d+) us, idle before (\d+) us")
SIDES = ("lv3native", "gather", "ctx", "lv1")   # in interpose/mode.h's order of modes


def read(lines):
    """{(urgent, batch, side): [(burst, mode, span, wait, idle), ...]}: of a
    case's streams, the one that told most (a case's line is repeated in
    the plan's summaries, with no bursts after it); a round after the
    first is side-rN, as its tag.  Bursts after another "== " line belong
    to no case."""
    cases, cur = {}, None
    for line in lines:
        m = CASE.match(line)
        if m or line.startswith("== "):
            cur = None
        if m:
            u, b, side, rd = m.groups()
            cur = (u, b, side + ("-r" + rd if rd and rd != "1" else ""))
            cases.setdefault(cur, {})
            continue
        m = BURST.search(line)
        if m and cur:
            s, n, mode, span, wait, idle = m.groups()
            cases[cur].setdefault(s, []).append((int(n), mode, int(span), int(wait), int(idle)))
    out = {}
    for c, streams in cases.items():
        if streams:
            out[c] = sorted(max(streams.values(), key=len))
    return out


def c_header(name, about, dims, rows, per_line):
    """A C header: @about (comment lines), NAME_N, and @name, one array per
    mode of @rows (their C values, cut to the shortest), @per_line a line."""
    n = min(len(r) for r in rows)
    w = ["/* SPDX-License-Identifier: MIT */", "/* " + about[0]] + \
        [" * " + x for x in about[1:]] + \
        [" * Say where, on what and at which commit. */",
         "#define %s_N %d" % (name.upper(), n),
         "static const uint32_t %s[XM_NMODES][%s_N]%s = {" % (name, name.upper(), dims)]
    for r in rows:
        w.append("\t{")
        w += ["\t\t" + ", ".join(r[i:min(i + per_line, n)]) + "," for i in range(0, n, per_line)]
        w.append("\t},")
    w.append("};")
    return "\n".join(w) + "\n"


def header(cases, pair, source):
    """The C header of @pair's forced sides; None if one is missing."""
    u, b = pair.split(":")
    runs = [cases.get((u, b, s)) for s in SIDES]
    if not all(runs):
        return None
    return c_header("trace_%s_%s" % (u, b),
                    ["%s beside %s, each mode forced, recorded with XSCHED_CUDA_BURST_LOG=1" % (u, b),
                     "(%s): per mode of interpose/mode.h, each burst's span, wait and the idle" % source,
                     "time before it, us."],
                    "[3]", [["{%d, %d, %d}" % (x[2], x[3], x[4]) for x in r] for r in runs], 6)


REQ_SIDES = ("native", "gather", "ctx", "lv1")


def requests_header(lines, pair, source):
    """The C header of @pair's request latencies per forced side, cut to
    the shortest; None if a side is missing."""
    u, b = pair.split(":")
    lat = {}
    for no, line in enumerate(lines, 1):
        if not line.lstrip().startswith("{"):
            continue
        try:
            d = json.loads(line)
        except ValueError as e:
            raise ValueError("%s:%d: not JSON (%s)" % (source, no, e)) from None
        if d.get("case") in lat:
            raise ValueError("%s:%d: case %s again (one run a file)" % (source, no, d["case"]))
        lat[d.get("case")] = d.get("lat") or []
    runs = [lat.get("corpus-%s-%s-%s" % (u, b, s)) for s in REQ_SIDES]
    if not all(runs):
        return None
    return c_header("trace_%s_%s_requests" % (u, b),
                    ["%s beside %s, each mode forced: the measured requests' latencies" % (u, b),
                     "(%s), us, per mode of interpose/mode.h (native: without the library)." % source],
                    "", [["%d" % round(x * 1000) for x in r] for r in runs], 10)


def selftest():
    log = """== 06:09:10 r18b4 beside r50b16, lv3native (200 requests at 20/s)
xsched[1.0] info: cuda: stream 0x7f1: burst 2: native, span 30 us, wait 30 us, idle before 5 us
xsched[1.0] info: cuda: stream 0x7f1: burst 1: native, span 10 us, wait 10 us, idle before 0 us
xsched[1.0] info: cuda: stream 0x7f2: burst 1: native, span 99 us, wait 1 us, idle before 0 us
== 06:09:31 r18b4 beside r50b16, gather (200 requests at 20/s)
xsched[2.0] info: cuda: stream 0x7f3: burst 1: gather, span 12 us, wait 12 us, idle before 0 us
xsched[2.0] info: cuda: stream 0x7f3: burst 2: gather, span 40 us, wait 20 us, idle before 7 us
== 06:09:53 r18b4 beside r50b16, ctx (200 requests at 20/s)
xsched[3.0] info: cuda: stream 0x7f4: burst 1: ctx, span 13 us, wait 13 us, idle before 0 us
xsched[3.0] info: cuda: stream 0x7f4: burst 2: ctx, span 41 us, wait 21 us, idle before 8 us
xsched[3.0] info: cuda: stream 0x7f4: burst 3: ctx, span 42 us, wait 22 us, idle before 9 us
== 06:10:15 r18b4 beside r50b16, lv1 (200 requests at 20/s)
not a burst line
xsched[4.0] info: cuda: stream 0x7f5: burst 1: lv1, span 14 us, wait 14 us, idle before 0 us
xsched[4.0] info: cuda: stream 0x7f5: burst 2: lv1, span 43 us, wait 23 us, idle before 9 us
== 06:09:10 r18b4 beside r50b16, lv3native (200 requests at 20/s)
== 06:10:36 encoder beside gemm, lv3native (200 requests at 20/s)
== 06:10:58 r18b4 beside r50b16, ctx, round 2 (200 requests at 20/s)
xsched[5.0] info: cuda: stream 0x7f6: burst 1: ctx, span 99 us, wait 99 us, idle before 0 us
== 06:11:20 urgent context (all cases so far): 1 urgent streams summed up at exit
xsched[5.0] info: cuda: stream 0x7f6: burst 2: ctx, span 98 us, wait 98 us, idle before 0 us
""".splitlines()
    c = read(log)
    bad = []
    if c[("r18b4", "r50b16", "lv3native")] != [(1, "native", 10, 10, 0), (2, "native", 30, 30, 5)]:
        bad.append("the stream that told most, in burst order")
    if ("encoder", "gemm", "lv3native") in c:
        bad.append("a case without bursts")
    if c.get(("r18b4", "r50b16", "ctx-r2")) != [(1, "ctx", 99, 99, 0)] or \
            len(c[("r18b4", "r50b16", "ctx")]) != 3:
        bad.append("a round 2 case apart from round 1, and no bursts after another line")
    h = header(c, "r18b4:r50b16", "made up")
    if not h or "#define TRACE_R18B4_R50B16_N 2" not in h or "{42, 22, 9}" in h or \
            "{43, 23, 9}" not in h:
        bad.append("the header, cut to the shortest side")
    if header(c, "encoder:gemm", "made up") is not None:
        bad.append("a header with sides missing")
    raw = [json.dumps({"case": "corpus-r18b4-r50b16-%s" % s, "lat": lat})
           for s, lat in (("native", [3.5, 22.7, 4.0]), ("gather", [4.4, 5.0]),
                          ("ctx", [3.1, 3.2, 9.1]), ("lv1", [3.4, 31.5, 3.3]),
                          ("auto", [1.0]))] + [""]
    h = requests_header(raw, "r18b4:r50b16", "made up")
    if not h or "TRACE_R18B4_R50B16_REQUESTS_N 2\n" not in h or "3500, 22700," not in h or \
            "4400, 5000," not in h or "9100" in h:
        bad.append("the requests' header, in us, cut to the shortest side")
    if requests_header(raw[:2], "r18b4:r50b16", "made up") is not None:
        bad.append("a requests' header with sides missing")
    for wrong, what in ((raw[:1] + ["{not json"], "made up:2: not JSON"),
                        (raw[:1] + raw[:1], "made up:2: case corpus-r18b4-r50b16-native again")):
        try:
            requests_header(wrong, "r18b4:r50b16", "made up")
            bad.append("a bad raw.jsonl taken: %s" % what)
        except ValueError as e:
            if not str(e).startswith(what):
                bad.append("a bad raw.jsonl told as %s, not %s" % (e, what))
    for b in bad:
        print("selftest: wrong: %s" % b, file=sys.stderr)
    print("selftest %s" % ("FAILED" if bad else "ok"))
    return 1 if bad else 0


def lines_of(path):
    """@path's lines; a clear exit when it cannot be read."""
    try:
        with open(path, errors="replace") as f:
            return f.readlines()
    except OSError as e:
        sys.exit("bursts.py: cannot read %s: %s" % (path, e.strerror))


def pair_of(pair):
    """URGENT:BATCH, or a clear exit."""
    if pair.count(":") != 1 or pair.startswith(":") or pair.endswith(":"):
        sys.exit("bursts.py: '%s' is not URGENT:BATCH (as r18b4:r50b16)" % pair)
    return pair


def main():
    a = sys.argv[1:]
    if a == ["--selftest"]:
        sys.exit(selftest())
    if len(a) == 4 and a[0] == "--requests" and a[2] == "--header":
        try:
            h = requests_header(lines_of(a[1]), pair_of(a[3]), a[1])
        except ValueError as e:
            sys.exit("bursts.py: %s" % e)
        if h is None:
            sys.exit("bursts.py: %s lacks a forced side of %s: it needs corpus-%s-{%s}" %
                     (a[1], a[3], a[3].replace(":", "-"), ",".join(REQ_SIDES)))
        sys.stdout.write(h)
        return
    if len(a) not in (1, 3) or (len(a) == 3 and a[1] != "--header"):
        sys.exit(__doc__)
    cases = read(lines_of(a[0]))
    if len(a) == 3:
        h = header(cases, pair_of(a[2]), a[0])
        if h is None:
            sys.exit("bursts.py: %s lacks a side of %s: it needs %s" % (a[0], a[2], ", ".join(SIDES)))
        sys.stdout.write(h)
        return
    for (u, b, s), bursts in cases.items():
        print("%s:%s:%s %d bursts: %s" % (u, b, s, len(bursts), " ".join(
            "%s/%d/%d/%d" % (x[1][:2], x[2], x[3], x[4]) for x in bursts)))


if __name__ == "__main__":
    main()
