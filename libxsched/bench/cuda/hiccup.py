# SPDX-License-Identifier: MIT
"""Host stalls: sleep 1 ms in a loop for --seconds (or until SIGTERM) and
record every wake-up that came more than --over ms late, with its
CLOCK_MONOTONIC time, so that a periodic urgent-latency tail can be matched
against the host (a stalled thread stretches a request's GPU-side time too:
the events bracket idle gaps between its launches).  No GPU is touched.
Appends one JSON line to --out."""
import argparse
import json
import signal
import time

stop = False


def on_term(signum, frame):
    global stop
    stop = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--over", type=float, default=3.0)
    ap.add_argument("--tag", default="hiccup")
    ap.add_argument("--out", default="results.jsonl")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, on_term)
    clk = time.CLOCK_MONOTONIC
    t0 = time.clock_gettime_ns(clk)
    end = t0 + int(args.seconds * 1e9)
    stalls = []
    wakes = 0
    t = t0
    while t < end and not stop:
        time.sleep(0.001)
        u = time.clock_gettime_ns(clk)
        late = (u - t) / 1e6 - 1.0
        if late > args.over:
            stalls.append([t, round(late, 2)])
        wakes += 1
        t = u
    rec = {"case": args.tag, "mode": "hiccup", "seconds": round((t - t0) / 1e9, 1),
           "over_ms": args.over, "wakes": wakes, "t0_ns": t0, "stalls": stalls}
    with open(args.out, "a") as f:
        f.write(json.dumps(rec) + "\n")
    print(json.dumps({k: v for k, v in rec.items() if k != "stalls"}), len(stalls), "stalls")


if __name__ == "__main__":
    main()
