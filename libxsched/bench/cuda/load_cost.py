# SPDX-License-Identifier: MIT
"""What loading code in the urgent context costs (Documentation/cuda.rst,
"Code loads"): an urgent stream is made first (so the urgent context exists),
then ResNet-50 b16 inference and training steps and a Triton kernel run on an
ordinary stream, each kernel loaded in the program's context at its first
launch (and, with libxsched-cuda and XSCHED_CUDA_LV3=1, in the urgent context
too).  Prints one JSON line: the first iteration's and a steady iteration's
time of each, the Triton kernel's first call, and the device memory in use
(cudaMemGetInfo: every context of the process, the urgent one included).

  load_cost.py [--out results.jsonl]
"""
import argparse
import json
import os
import time

import torch
import torchvision


def timed(fn):
    torch.cuda.synchronize()
    t = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    a = ap.parse_args()
    torch.cuda.init()
    free0, total = torch.cuda.mem_get_info()
    urgent = torch.cuda.Stream(priority=-1)
    with torch.cuda.stream(urgent):
        torch.ones(1, device="cuda").add_(1)
    urgent.synchronize()
    r = {"mode": "load-cost", "xsched": os.environ.get("XBENCH_XSCHED", "native"),
         "lv3": os.environ.get("XSCHED_CUDA_LV3", "")}
    torch.manual_seed(0)
    m = torchvision.models.resnet50(weights=None).cuda()
    x = torch.randn(16, 3, 224, 224, device="cuda")
    with torch.no_grad():
        r["infer_first_ms"] = timed(lambda: m(x))
        r["infer_next_ms"] = timed(lambda: m(x))
    opt = torch.optim.SGD(m.parameters(), lr=0.01)
    y = torch.randint(0, 1000, (16,), device="cuda")

    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(m(x), y).backward()
        opt.step()
    r["train_first_ms"] = timed(step)
    r["train_next_ms"] = timed(step)
    try:
        import triton
        import triton.language as tl

        @triton.jit
        def add(a_ptr, b_ptr, n, BLOCK: tl.constexpr):
            i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(a_ptr + i, tl.load(a_ptr + i, mask=i < n) + tl.load(b_ptr + i, mask=i < n),
                     mask=i < n)
        t = torch.ones(4096, device="cuda")
        u = torch.ones(4096, device="cuda")
        r["triton_first_ms"] = timed(lambda: add[(4,)](t, u, 4096, BLOCK=1024))
        r["triton_next_ms"] = timed(lambda: add[(4,)](t, u, 4096, BLOCK=1024))
        r["triton_ok"] = bool((t == 3).all().item())  # two calls: 1 + 1 + 1
    except Exception as e:  # noqa: BLE001
        r["triton"] = repr(e)[:200]
    free1, _ = torch.cuda.mem_get_info()
    r["device_mib_used"] = round((total - free1) / 2**20, 1)
    r["device_mib_used_at_start"] = round((total - free0) / 2**20, 1)
    print(json.dumps(r))
    if a.out:
        with open(a.out, "a") as f:
            f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
