# SPDX-License-Identifier: MIT
"""A quick look at one urgent-context mode (Documentation/cuda.rst, "When
each mechanism is worth it"): urgent ResNet-18 b4 on a priority -1 stream,
alone and then beside a 16384^3 fp32 GEMM on a priority 0 stream of the
same process; prints P50 / P90 / max of each and the GEMM's iterations/s.
Run it natively and preloaded with each XSCHED_CUDA_LV3_MODE:

    python3 lv3_modes.py
    XSCHED_CUDA_LV3=1 XSCHED_CUDA_LV3_MODE=ctx LD_PRELOAD=.../libxsched-cuda.so python3 lv3_modes.py

A few hundred requests: for the 2000-request cases use run-h100.sh."""
import argparse
import threading
import time

import torch
import torchvision

ap = argparse.ArgumentParser()
ap.add_argument("--requests", type=int, default=150)
args = ap.parse_args()

dev = torch.device("cuda")
hi = torch.cuda.Stream(priority=-1)
lo = torch.cuda.Stream(priority=0)
with torch.cuda.stream(hi):
    model = torchvision.models.resnet18(weights=None).to(dev).eval()
    x = torch.randn(4, 3, 224, 224, device=dev)
with torch.cuda.stream(lo):
    n = 16384
    a = torch.randn(n, n, device=dev)
    b = torch.randn(n, n, device=dev)
    c = torch.empty(n, n, device=dev)
lo.synchronize()
stop = False
its = [0]


def batch():
    with torch.cuda.stream(lo):
        while not stop:
            torch.matmul(a, b, out=c)
            lo.synchronize()
            its[0] += 1


def requests(k):
    lat = []
    with torch.no_grad():
        for _ in range(k):
            t0 = time.perf_counter()
            s = torch.cuda.Event(enable_timing=True)
            e = torch.cuda.Event(enable_timing=True)
            s.record(hi)
            with torch.cuda.stream(hi):
                model(x)
            e.record(hi)
            hi.synchronize()
            lat.append((time.perf_counter() - t0) * 1e3)
            time.sleep(0.03)
    return lat


def q(v):
    v = sorted(v)
    return "P50 %.2f P90 %.2f max %.2f ms" % (v[len(v) // 2], v[len(v) * 9 // 10], v[-1])


requests(10)
alone = requests(max(20, args.requests // 3))
t = threading.Thread(target=batch)
t.start()
time.sleep(0.5)
t0, i0 = time.time(), its[0]
beside = requests(args.requests)
rate = (its[0] - i0) / (time.time() - t0)
stop = True
t.join()
print("alone", q(alone))
print("gemm ", q(beside), "batch %.2f it/s" % rate)
