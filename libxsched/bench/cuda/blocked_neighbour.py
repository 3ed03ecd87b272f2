# SPDX-License-Identifier: MIT
"""An urgent PyTorch thread beside a lower thread that blocks in the driver.

The urgent thread runs ResNet-18 b4 inference on the highest-priority stream
at --rate requests/s; the lower thread trains ResNet-50 b16 on a priority-0
stream and calls loss.item() every step (a copy to pageable memory: the
calling thread waits in the driver until the step's kernels end).  Run it
natively and with libxsched-cuda.so preloaded: an interposer that holds a
lock across a driver call makes the urgent request wait for the lower
thread's step.  Prints one JSON line: urgent P50/P99/max (ms, forward +
synchronize, timed on the host) and the lower thread's steps/s.

  blocked_neighbour.py [--requests N] [--rate R] [--tag T]
"""
import argparse
import json
import os
import threading
import time

import torch
import torch.nn.functional as F
import torchvision


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p / 100.0 * (len(v) - 1) + 0.5))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--rate", type=float, default=20.0)
    ap.add_argument("--tag", default=os.environ.get("XBENCH_XSCHED", "native"))
    a = ap.parse_args()
    hi = torch.cuda.Stream(priority=-5)	# clamped to the highest
    lo = torch.cuda.Stream(priority=0)
    urgent = torchvision.models.resnet18(weights=None).cuda().eval()
    batch = torchvision.models.resnet50(weights=None).cuda()
    opt = torch.optim.SGD(batch.parameters(), lr=0.01)
    xu = torch.randn(4, 3, 224, 224, device="cuda")
    xb = torch.randn(16, 3, 224, 224, device="cuda")
    yb = torch.randint(0, 1000, (16,), device="cuda")
    with torch.no_grad(), torch.cuda.stream(hi):
        for _ in range(10):
            urgent(xu)
    torch.cuda.synchronize()
    stop = threading.Event()
    steps = [0]

    def lower():
        with torch.cuda.stream(lo):
            while not stop.is_set():
                opt.zero_grad(set_to_none=True)
                loss = F.cross_entropy(batch(xb), yb)
                loss.backward()
                opt.step()
                loss.item()
                steps[0] += 1

    t = threading.Thread(target=lower)
    t.start()
    time.sleep(2.0)
    lat = []
    period = 1.0 / a.rate
    s0, t0 = steps[0], time.perf_counter()
    nxt = time.perf_counter()
    with torch.no_grad(), torch.cuda.stream(hi):
        for _ in range(a.requests):
            nxt += period
            r0 = time.perf_counter()
            urgent(xu)
            hi.synchronize()
            lat.append((time.perf_counter() - r0) * 1e3)
            d = nxt - time.perf_counter()
            if d > 0:
                time.sleep(d)
    sps = (steps[0] - s0) / (time.perf_counter() - t0)
    stop.set()
    t.join()
    print(json.dumps({"case": "blocked_neighbour", "with": a.tag, "requests": a.requests,
                      "p50_ms": round(pct(lat, 50), 3), "p99_ms": round(pct(lat, 99), 3),
                      "max_ms": round(max(lat), 3), "lower_steps_per_s": round(sps, 2)}))


if __name__ == "__main__":
    main()
