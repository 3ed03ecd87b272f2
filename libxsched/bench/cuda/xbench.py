# SPDX-License-Identifier: MIT
"""Urgent/batch benchmark on one NVIDIA GPU with unmodified PyTorch.

The urgent job is ResNet-18, batch 4, 20 requests/s, timed around forward +
synchronize of its own stream (never the whole device); --urgent picks
another (llama32: an LLM decode loop; encoder: a transformer encoder;
smallk: a launch-bound job of many tiny kernels).  A batch job runs
continuously beside it: ResNet-50 inference at batch 16 or 256, one large
fp32 GEMM, one long fused attention kernel, or VGG-16 or ResNet-50
training steps (vgg16train, r50train).  Cases:

  alone   the urgent job alone (or a batch job alone: `batch-alone`)
  proc    urgent and batch as two processes (the batch in a child process)
  stream  urgent and batch as two threads of one process, each on its own
          stream; --prio equal (both priority 0) or high (the urgent stream
          has CUDA priority -1)

Program shape (it matters; Documentation/cuda.rst, "Measurements on an H100",
names this one): the batch thread is started first and
builds its model inside itself; the urgent thread builds its model inside
itself too.  Nothing calls torch.cuda.synchronize() (device-wide): each job
synchronizes its own stream.  Each request and each batch iteration records
two timing events on its stream, so the GPU-side latency of a request and the
overlap of the two streams can be read afterwards.

Every case appends one JSON line to --out.  libxsched is not imported: it is
LD_PRELOADed (or not) by run-h100.sh; the case only records what it was told.
"""
import argparse
import faulthandler
import gc
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time

import torch
import torch.nn.functional as F


def now_ns():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def pct(xs, p):
    if not xs:
        return float("nan")
    s = sorted(xs)
    k = min(len(s) - 1, max(0, int(round(p / 100.0 * (len(s) - 1)))))
    return s[k]


# ---------------------------------------------------------------- jobs ----

class Job:
    """One unit of work on a stream: a request or a batch iteration."""

    def __init__(self, name, stream):
        self.name = name
        self.stream = stream
        self.unit = None
        dev = torch.device("cuda")
        torch.manual_seed(1234)
        with torch.cuda.stream(stream):
            if name == "noop":
                # One tiny kernel: what the harness itself costs per request.
                self.y = torch.zeros(1, device=dev)
                self.unit = lambda: self.y.add_(1.0)
            elif name == "r18b4":
                import torchvision
                self.model = torchvision.models.resnet18(weights=None).to(dev).eval()
                self.x = torch.randn(4, 3, 224, 224, device=dev)
                self.unit = lambda: self.model(self.x)
            elif name in ("r50b16", "r50b256"):
                import torchvision
                bs = 16 if name == "r50b16" else 256
                self.model = torchvision.models.resnet50(weights=None).to(dev).eval()
                self.x = torch.randn(bs, 3, 224, 224, device=dev)
                self.unit = lambda: self.model(self.x)
            elif name == "llama32":
                # A Llama-shaped decoder from a transformers config (random
                # weights, fp16): greedy decode of 32 tokens after a
                # 16-token prompt, each token read on the host (a serving
                # loop's stop check).  Eager; with --graph each token is one
                # CUDA graph replay over a static KV cache (capture()).
                from transformers import LlamaConfig, LlamaForCausalLM
                self.cfg = cfg = LlamaConfig(hidden_size=1024, intermediate_size=2816,
                                  num_hidden_layers=8, num_attention_heads=16,
                                  num_key_value_heads=16, vocab_size=32000,
                                  max_position_embeddings=512)
                self.model = LlamaForCausalLM(cfg).to(dev, dtype=torch.float16).eval()
                self.prompt = torch.randint(0, cfg.vocab_size, (1, 16), device=dev)
                self.unit = self.decode
            elif name == "encoder":
                # A transformer encoder's inference (BERT-base-shaped:
                # 6 layers, d_model 768, 12 heads), batch 1, sequence 128,
                # fp16: an urgent job of many mid-sized kernels that the
                # choice was not tuned on (issue 33).
                layer = torch.nn.TransformerEncoderLayer(768, 12, 3072, batch_first=True)
                self.model = torch.nn.TransformerEncoder(layer, 6, enable_nested_tensor=False)
                self.model = self.model.to(dev, dtype=torch.float16).eval()
                self.x = torch.randn(1, 128, 768, device=dev, dtype=torch.float16)
                self.unit = lambda: self.model(self.x)
            elif name == "smallk":
                # A small MLP at batch 1 (64 layers of width 256, fp16):
                # some 130-200 kernels of a few microseconds each per
                # request, so the host's launches, not the GPU, set its
                # latency (issue 33's launch-bound urgent job).
                layers = []
                for _ in range(64):
                    layers += [torch.nn.Linear(256, 256), torch.nn.ReLU()]
                self.model = torch.nn.Sequential(*layers).to(dev, dtype=torch.float16).eval()
                self.x = torch.randn(1, 256, device=dev, dtype=torch.float16)
                self.unit = lambda: self.model(self.x)
            elif name in ("vgg16train", "r50train"):
                # Training steps, batch 32 (SGD): VGG-16 is the batch job
                # beside the LLM decode loop, ResNet-50 (many mid-sized
                # kernels) one of issue 33's corpus.
                import torchvision
                arch = torchvision.models.vgg16 if name == "vgg16train" else torchvision.models.resnet50
                self.model = arch(weights=None).to(dev).train()
                self.opt = torch.optim.SGD(self.model.parameters(), lr=1e-3)
                self.x = torch.randn(32, 3, 224, 224, device=dev)
                self.y = torch.randint(0, 1000, (32,), device=dev)
                self.unit = self.train_step
            elif name == "gemm":
                n = 16384
                self.a = torch.randn(n, n, device=dev)
                self.b = torch.randn(n, n, device=dev)
                self.c = torch.empty(n, n, device=dev)
                self.unit = lambda: torch.matmul(self.a, self.b, out=self.c)
            elif name == "sdpa":
                s = 65536
                shape = (1, 32, s, 128)
                self.q = torch.randn(shape, device=dev, dtype=torch.float16)
                self.k = torch.randn(shape, device=dev, dtype=torch.float16)
                self.v = torch.randn(shape, device=dev, dtype=torch.float16)
                self.unit = lambda: F.scaled_dot_product_attention(self.q, self.k, self.v)
            else:
                raise SystemExit("unknown job " + name)
        self.graph = None

    def decode(self):
        out = self.model(input_ids=self.prompt, use_cache=True)
        tok = out.logits[:, -1:].argmax(-1)
        for _ in range(31):
            if tok.item() < 0:  # never: the host reads each token
                break
            out = self.model(input_ids=tok, past_key_values=out.past_key_values,
                             use_cache=True)
            tok = out.logits[:, -1:].argmax(-1)
        return tok

    def static_decoder(self):
        """A static KV cache and the static inputs of one decode step, so a
        step can be captured once and replayed per token."""
        from transformers import StaticCache
        dev = self.prompt.device
        try:        # transformers 5: sized lazily on first use
            self.cache = StaticCache(config=self.cfg, max_cache_len=64)
        except TypeError:
            self.cache = StaticCache(config=self.cfg, max_batch_size=1, max_cache_len=64,
                                     device=dev, dtype=torch.float16)
        n = self.prompt.shape[1]
        self.pre_pos = torch.arange(n, device=dev)
        self.tok_in = torch.zeros(1, 1, dtype=torch.long, device=dev)
        self.pos_in = torch.zeros(1, 1, dtype=torch.long, device=dev)
        self.cpos_in = torch.zeros(1, dtype=torch.long, device=dev)

    def rewind(self):
        """Start the static cache over.  transformers 5 counts the cached
        tokens in a device tensor that each update advances in place (graph
        replays too), so it is zeroed in place, never replaced."""
        for layer in getattr(self.cache, "layers", []):
            c = getattr(layer, "cumulative_length", None)
            if torch.is_tensor(c):
                c.zero_()
            elif c is not None:
                layer.cumulative_length = 0

    def prefill(self):
        n = self.prompt.shape[1]
        self.rewind()
        out = self.model(input_ids=self.prompt, position_ids=self.pre_pos.unsqueeze(0),
                         cache_position=self.pre_pos, past_key_values=self.cache,
                         use_cache=True)
        self.tok_in.copy_(out.logits[:, -1:].argmax(-1))
        self.pos_in.fill_(n)
        self.cpos_in.fill_(n)

    def step(self):
        """One token; its inputs for the next step are updated on the GPU,
        so a replay needs no host work but the token's read."""
        out = self.model(input_ids=self.tok_in, position_ids=self.pos_in,
                         cache_position=self.cpos_in, past_key_values=self.cache,
                         use_cache=True)
        self.tok_out = out.logits[:, -1:].argmax(-1)
        self.tok_in.copy_(self.tok_out)
        self.pos_in.add_(1)
        self.cpos_in.add_(1)

    def decode_graph(self):
        self.prefill()
        for _ in range(31):
            self.step_graph.replay()
            if self.tok_out.item() < 0:  # never: the host reads each token
                break
        return self.tok_out

    def capture_decode(self):
        with torch.no_grad(), torch.cuda.stream(self.stream):
            self.static_decoder()
            for _ in range(3):
                self.prefill()
                for _ in range(3):
                    self.step()
            self.prefill()
        self.stream.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.no_grad():
            with torch.cuda.graph(g, stream=self.stream, capture_error_mode="thread_local"):
                self.step()
        self.step_graph = g
        self.unit = self.decode_graph

    def train_step(self):
        with torch.enable_grad():
            self.opt.zero_grad(set_to_none=True)
            F.cross_entropy(self.model(self.x), self.y).backward()
            self.opt.step()

    def capture(self):
        """Replay the unit as one CUDA graph (harness-noise reference); the
        decode loop replays one graph per token instead."""
        if self.name == "llama32":
            self.capture_decode()
            return
        with torch.no_grad():
            with torch.cuda.stream(self.stream):
                for _ in range(3):
                    self.unit()
            self.stream.synchronize()
            g = torch.cuda.CUDAGraph()
            # thread_local: the batch thread's calls go on during the capture
            with torch.cuda.graph(g, stream=self.stream, capture_error_mode="thread_local"):
                self.unit()
        self.graph = g

    def run(self):
        with torch.no_grad(), torch.cuda.stream(self.stream):
            if self.graph is not None:
                self.graph.replay()
            else:
                self.unit()


def make_stream(prio):
    return torch.cuda.Stream(priority=prio)


# ------------------------------------------------------------ the loops ----

class BatchRunner:
    """The batch job: iterate until told to stop; keep iteration end times."""

    def __init__(self, name, prio=0, events=True):
        self.name = name
        self.prio = prio
        self.events = events
        self.ready = threading.Event()
        self.stop = threading.Event()
        self.ends = []          # CLOCK_MONOTONIC ns of each iteration's end
        self.ev = []            # (start, end) events per iteration
        self.error = None
        self.stream = None

    def body(self):
        try:
            self.stream = make_stream(self.prio)
            job = Job(self.name, self.stream)
            for _ in range(3):
                job.run()
            self.stream.synchronize()
            self.ready.set()
            while not self.stop.is_set():
                if self.events:
                    s = torch.cuda.Event(enable_timing=True)
                    e = torch.cuda.Event(enable_timing=True)
                    s.record(self.stream)
                job.run()
                if self.events:
                    e.record(self.stream)
                self.stream.synchronize()
                self.ends.append(now_ns())
                if self.events:
                    self.ev.append((s, e))
        except BaseException as exc:  # reported by the case
            self.error = repr(exc)
            self.ready.set()


def urgent_loop(job, n, rate, warmup, device_sync=False):
    """Paced requests; returns per-request host latency (ms), GPU latency (ms),
    start lateness (ms), the window [t0, t1] in ns and the events; each
    measured request's start (CLOCK_MONOTONIC ns) is left in job.starts.
    device_sync: wait with torch.cuda.synchronize() (the whole device, so
    also every other stream of the process) instead of the own stream."""
    period = 1.0 / rate
    lat, late, evs = [], [], []
    job.starts = []
    t_next = time.perf_counter()
    t_first = None
    gc.collect()
    gc.disable()
    try:
        for i in range(warmup + n):
            now = time.perf_counter()
            if now < t_next:
                time.sleep(t_next - now)
            t0 = time.perf_counter()
            t0_ns = now_ns()
            s = torch.cuda.Event(enable_timing=True)
            e = torch.cuda.Event(enable_timing=True)
            s.record(job.stream)
            job.run()
            e.record(job.stream)
            if device_sync:
                torch.cuda.synchronize()
            else:
                job.stream.synchronize()
            t1 = time.perf_counter()
            if i == warmup:
                t_first = now_ns()
            if i >= warmup:
                lat.append((t1 - t0) * 1e3)
                late.append(max(0.0, t0 - t_next) * 1e3)
                job.starts.append(t0_ns)
                evs.append((s, e))
            t_next += period
            if t_next < t1:
                t_next = t1
    finally:
        gc.enable()
    t_last = now_ns()
    gpu = [s.elapsed_time(e) for s, e in evs]
    return lat, gpu, late, (t_first, t_last), evs


def overlap_fraction(ref, uevs, bevs):
    """Fraction of urgent requests whose GPU interval intersects a batch
    iteration's GPU interval (events of one context, so comparable)."""
    if not uevs or not bevs or ref is None:
        return None
    b = sorted((ref.elapsed_time(s), ref.elapsed_time(e)) for s, e in bevs)
    hit = 0
    j = 0
    for s, e in uevs:
        us, ue = ref.elapsed_time(s), ref.elapsed_time(e)
        while j < len(b) and b[j][1] < us:
            j += 1
        if j < len(b) and b[j][0] < ue:
            hit += 1
    return hit / len(uevs)


def its_in(ends, win):
    t0, t1 = win
    k = sum(1 for t in ends if t0 <= t <= t1)
    return k / ((t1 - t0) / 1e9)


def summary(args, lat, gpu, late, extra):
    r = {
        "case": args.tag, "urgent": args.urgent, "batch": args.batch,
        "mode": args.mode, "prio": args.prio,
        "xsched": os.environ.get("XBENCH_XSCHED", "native"),
        "n": len(lat), "rate": args.rate,
        "p50": pct(lat, 50), "p90": pct(lat, 90), "p99": pct(lat, 99),
        "max": max(lat) if lat else None, "mean": statistics.fmean(lat) if lat else None,
        "gpu_p50": pct(gpu, 50), "gpu_p99": pct(gpu, 99),
        "late_p99": pct(late, 99),
    }
    r.update(extra)
    return r


def write(args, rec):
    line = json.dumps(rec)
    print(line, flush=True)
    with open(args.out, "a") as f:
        f.write(line + "\n")


def write_raw(args, lat, gpu, starts):
    """Every request's host and GPU latency in request order (--raw), to
    look at a tail afterwards: when it comes, and whether the GPU took it.
    t_ms: each request's start after the first one's (t0_ns, CLOCK_MONOTONIC,
    comparable with hiccup.py's)."""
    if not args.raw:
        return
    rec = {"case": args.tag, "xsched": os.environ.get("XBENCH_XSCHED", "native"),
           "batch": args.batch, "mode": args.mode, "prio": args.prio,
           "graph": args.graph, "urgent": args.urgent,
           "lat": [round(x, 3) for x in lat], "gpu": [round(x, 3) for x in gpu],
           "t0_ns": starts[0] if starts else None,
           "t_ms": [round((t - starts[0]) / 1e6, 1) for t in starts]}
    with open(args.raw, "a") as f:
        f.write(json.dumps(rec) + "\n")


# --------------------------------------------------------------- cases ----

def case_alone(args):
    torch.backends.cudnn.benchmark = False
    st = make_stream(-1 if args.prio == "high" else 0)
    job = Job(args.urgent, st)
    if args.graph:
        job.capture()
    lat, gpu, late, win, _ = urgent_loop(job, args.requests, args.rate, args.warmup)
    write(args, summary(args, lat, gpu, late, {"graph": args.graph}))
    write_raw(args, lat, gpu, job.starts)


def case_stream(args):
    br = BatchRunner(args.batch, 0)
    th = threading.Thread(target=br.body, daemon=True)
    res = {}
    captured = threading.Event()

    def urgent():
        st = make_stream(-1 if args.prio == "high" else 0)
        try:
            job = Job(args.urgent, st)
            if args.graph:
                # Before the batch starts: a capture sets the process's
                # RNG state aside, and a training step beside it (dropout)
                # then fails ("Offset increment outside graph capture").
                job.capture()
        except BaseException as exc:
            res["error"] = repr(exc)
            return
        finally:
            captured.set()
        br.ready.wait()
        ref = torch.cuda.Event(enable_timing=True)
        ref.record(st)
        res["out"] = urgent_loop(job, args.requests, args.rate, args.warmup,
                                 args.sync == "device")
        res["starts"] = job.starts
        res["ref"] = ref

    if args.graph:
        ut = threading.Thread(target=urgent)
        ut.start()
        captured.wait()
        if "error" in res:
            raise SystemExit("urgent job failed: " + res["error"])
        th.start()
    else:       # the batch first (the program's shape matters: see the top)
        th.start()
        br.ready.wait()
        ut = threading.Thread(target=urgent)
        ut.start()
    br.ready.wait()
    if br.error:
        br.stop.set()
        ut.join()
        raise SystemExit("batch failed: " + br.error)
    ut.join()
    br.stop.set()
    th.join()
    if br.error:
        raise SystemExit("batch failed: " + br.error)
    lat, gpu, late, win, uevs = res["out"]
    ov = overlap_fraction(res["ref"], uevs, br.ev)
    extra = {"batch_its": its_in(br.ends, win), "overlap": ov, "graph": args.graph,
             "sync": args.sync}
    write(args, summary(args, lat, gpu, late, extra))
    write_raw(args, lat, gpu, res["starts"])


def case_proc(args):
    ready = args.out + ".ready"
    stop = args.out + ".stop"
    ends = args.out + ".ends"
    for f in (ready, stop, ends):
        if os.path.exists(f):
            os.unlink(f)
    child = subprocess.Popen([sys.executable, __file__, "batch-worker", "--batch", args.batch,
                              "--ready", ready, "--stop", stop, "--ends", ends])
    t = time.time()
    while not os.path.exists(ready):
        if child.poll() is not None:
            raise SystemExit("batch worker died")
        if time.time() - t > 300:
            raise SystemExit("batch worker not ready")
        time.sleep(0.05)
    st = make_stream(-1 if args.prio == "high" else 0)
    job = Job(args.urgent, st)
    if args.graph:
        job.capture()
    lat, gpu, late, win, _ = urgent_loop(job, args.requests, args.rate, args.warmup)
    open(stop, "w").close()
    child.wait(timeout=600)
    with open(ends) as f:
        e = [int(x) for x in f.read().split()]
    extra = {"batch_its": its_in(e, win), "graph": args.graph}
    write(args, summary(args, lat, gpu, late, extra))
    write_raw(args, lat, gpu, job.starts)


def batch_worker(args):
    br = BatchRunner(args.batch, 0, events=False)
    th = threading.Thread(target=br.body, daemon=True)
    th.start()
    br.ready.wait()
    if br.error:
        print("batch failed:", br.error, file=sys.stderr)
        sys.exit(1)
    open(args.ready, "w").close()
    while not os.path.exists(args.stop):
        time.sleep(0.05)
    br.stop.set()
    th.join()
    with open(args.ends, "w") as f:
        f.write(" ".join(str(x) for x in br.ends))


def batch_alone(args):
    if args.idle_high:
        # A high-priority stream that has run once and is idle: under
        # libxsched the batch stream is then a lower queue (Lv1 in-flight
        # cap, no holds), the cost the batch job pays while nothing urgent
        # runs.
        hi = make_stream(-1)
        with torch.cuda.stream(hi):
            torch.zeros(1, device="cuda").add_(1.0)
        hi.synchronize()
    br = BatchRunner(args.batch, 0, events=False)
    th = threading.Thread(target=br.body, daemon=True)
    th.start()
    br.ready.wait()
    if br.error:
        raise SystemExit("batch failed: " + br.error)
    t0 = now_ns()
    time.sleep(args.seconds)
    t1 = now_ns()
    br.stop.set()
    th.join()
    its = its_in(br.ends, (t0, t1))
    rec = {"case": args.tag, "batch": args.batch, "mode": "batch-alone",
           "idle_high": args.idle_high,
           "xsched": os.environ.get("XBENCH_XSCHED", "native"),
           "batch_its": its, "seconds": args.seconds,
           "ms_per_it": 1e3 / its if its else None}
    write(args, rec)


def main():
    # run-h100.sh asks a case that hangs for its threads' stacks
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["alone", "stream", "proc", "batch-alone", "batch-worker"])
    ap.add_argument("--urgent", default="r18b4",
                    choices=["r18b4", "noop", "llama32", "encoder", "smallk"])
    ap.add_argument("--batch", default="none")
    ap.add_argument("--prio", default="equal", choices=["equal", "high"])
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--rate", type=float, default=20.0)
    ap.add_argument("--graph", action="store_true")
    ap.add_argument("--sync", default="stream", choices=["stream", "device"])
    ap.add_argument("--idle-high", action="store_true")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--tag", default="")
    ap.add_argument("--out", default="results.jsonl")
    ap.add_argument("--raw", help="append each request's latencies here")
    ap.add_argument("--ready")
    ap.add_argument("--stop")
    ap.add_argument("--ends")
    args = ap.parse_args()
    args.mode = args.what
    torch.cuda.init()
    if args.what == "alone":
        case_alone(args)
    elif args.what == "stream":
        case_stream(args)
    elif args.what == "proc":
        case_proc(args)
    elif args.what == "batch-alone":
        batch_alone(args)
    else:
        batch_worker(args)


if __name__ == "__main__":
    main()
