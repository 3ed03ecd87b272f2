# SPDX-License-Identifier: MIT
"""Transparency: the same PyTorch program with and without libxsched preloaded.

Prints one JSON line of results that must be identical between the two runs
where PyTorch is deterministic (deterministic algorithms on, cuDNN benchmark
off): ResNet-50 training losses (bitwise, as float.hex) and a hash of the
trained weights, an inference output hash, a CUDA graph replay, a side stream
joined through an event, a Triton kernel, pinned non-blocking copies; and the
throughput of ResNet-50 b16 inference and training alone (not compared).

  transparency.py [--steps N] [--seconds S] [--urgent]

--urgent runs it all on streams of CUDA priority -1 (the current stream and
the side streams): under libxsched-cuda their work runs in the urgent
context (Documentation/cuda.rst, "Lv3: the urgent context").
"""
import argparse
import hashlib
import json
import os
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402


def h(t):
    return hashlib.sha256(t.detach().float().cpu().contiguous().numpy().tobytes()).hexdigest()[:16]


def train(steps):
    import torchvision
    torch.manual_seed(0)
    m = torchvision.models.resnet50(weights=None).cuda()
    opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(16, 3, 224, 224, device="cuda", generator=g)
    y = torch.randint(0, 1000, (16,), device="cuda", generator=g)
    losses = []
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(m(x), y)
        loss.backward()
        opt.step()
        losses.append(float(loss.item()).hex())
    w = torch.cat([p.detach().flatten() for p in m.parameters()])
    return losses, h(w)


def infer():
    import torchvision
    torch.manual_seed(2)
    m = torchvision.models.resnet50(weights=None).cuda().eval()
    x = torch.randn(8, 3, 224, 224, device="cuda")
    with torch.no_grad():
        return h(m(x))


PRIO = 0  # the side streams' CUDA priority (--urgent: -1)


def graph_replay():
    torch.manual_seed(3)
    lin = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
    x = torch.randn(64, 512, device="cuda")
    s = torch.cuda.Stream(priority=PRIO)
    with torch.no_grad():
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                lin(x)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            y = lin(x)
        eager = lin(x).clone()
        x.add_(1.0)
        g.replay()
        eager2 = lin(x)
        return bool(torch.equal(y, eager2)), h(eager), h(y)


def side_stream():
    torch.manual_seed(4)
    a = torch.randn(2048, 2048, device="cuda")
    side = torch.cuda.Stream(priority=PRIO)
    ev = torch.cuda.Event()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        b = a @ a
        for _ in range(20):
            b = torch.tanh(b @ a) * 0.01
        ev.record(side)
    torch.cuda.current_stream().wait_event(ev)
    c = b.sum(dim=0)
    return h(c)


def triton_kernel():
    try:
        import triton
        import triton.language as tl
    except Exception as e:  # pragma: no cover
        return "no triton: %r" % e

    @triton.jit
    def axpy(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = i < n
        x = tl.load(x_ptr + i, mask=mask)
        y = tl.load(y_ptr + i, mask=mask)
        tl.store(out_ptr + i, 2.0 * x + y, mask=mask)

    torch.manual_seed(5)
    n = 1 << 20
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    axpy[(n // 1024,)](x, y, out, n, BLOCK=1024)
    return bool(torch.equal(out, 2.0 * x + y))


def pinned_copies():
    torch.manual_seed(6)
    src = torch.randn(1 << 22).pin_memory()
    d = src.to("cuda", non_blocking=True)
    d.mul_(3.0)
    back = torch.empty_like(src).pin_memory()
    back.copy_(d, non_blocking=True)
    torch.cuda.current_stream().synchronize()
    return bool(torch.equal(back, src * 3.0))


def throughput(seconds):
    import torchvision
    m = torchvision.models.resnet50(weights=None).cuda()
    x = torch.randn(16, 3, 224, 224, device="cuda")
    y = torch.randint(0, 1000, (16,), device="cuda")
    out = {}
    m.eval()
    with torch.no_grad():
        for _ in range(5):
            m(x)
        torch.cuda.current_stream().synchronize()
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            m(x)
            torch.cuda.current_stream().synchronize()
            n += 1
        out["infer_r50b16_its"] = n / (time.perf_counter() - t0)
    m.train()
    opt = torch.optim.SGD(m.parameters(), lr=0.001)
    for _ in range(3):
        F.cross_entropy(m(x), y).backward()
        opt.step()
    torch.cuda.current_stream().synchronize()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(m(x), y)
        loss.backward()
        opt.step()
        loss.item()
        n += 1
    out["train_r50b16_its"] = n / (time.perf_counter() - t0)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--out")
    ap.add_argument("--throughput-only", action="store_true")
    ap.add_argument("--urgent", action="store_true")
    args = ap.parse_args()
    if args.urgent:
        global PRIO
        PRIO = -1
        with torch.cuda.stream(torch.cuda.Stream(priority=-1)):
            return run(args)
    return run(args)


def run(args):
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    torch.use_deterministic_algorithms(True)
    t = time.time()
    if args.throughput_only:
        r = {"mode": "throughput", "xsched": os.environ.get("XBENCH_XSCHED", "native")}
        r.update(throughput(args.seconds))
        line = json.dumps(r)
        print(line, flush=True)
        if args.out:
            with open(args.out, "a") as f:
                f.write(line + "\n")
        return
    r = {"mode": "transparency", "xsched": os.environ.get("XBENCH_XSCHED", "native"),
         "urgent": bool(args.urgent)}
    r["randn"] = h(torch.randn(1000, device="cuda", generator=torch.Generator(device="cuda").manual_seed(7)))
    r["train_losses"], r["train_weights"] = train(args.steps)
    r["infer"] = infer()
    r["graph_ok"], r["graph_eager"], r["graph_out"] = graph_replay()
    r["side_stream"] = side_stream()
    r["triton_ok"] = triton_kernel()
    r["pinned_ok"] = pinned_copies()
    r.update(throughput(args.seconds))
    r["wall_s"] = time.time() - t
    line = json.dumps(r)
    print(line, flush=True)
    if args.out:
        with open(args.out, "a") as f:
            f.write(line + "\n")


if __name__ == "__main__":
    main()
