#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The layout rules of Documentation/layout.rst ("Checked by
tools/check-layout.py"), read from built objects.

For each component (the module's core, the sim module, libxsched, xschedctl):
  - no file-level call circle: file A calling a function defined in B while B,
    directly or through other files, calls one defined in A.  Calls are read
    from the objects' symbol tables (nm: defined T/D/B against undefined U), so
    calls through an ops table do not count, which is the point of one;
  - no source file over MAX_LINES lines;
  - one resolver of libcuda functions in libxsched: no file but DRIVER looks
    up a "cu..." name (dlsym, dlvsym, xsi_real_dlsym, xsi_real_dlvsym), and
    no file of the CUDA wing (interpose/cuda/) looks up anything but through
    a hook's own `handle` (the program's dlsym() answered: cuda/hooks.c);
and no C file under tests/ over MAX_TEST_LINES lines.
Prints one "ok"/"not ok" line per component and rule, and a last line
"layout: N passed, N failed".  Kernel objects come from a built tree (run after
`make module`); userspace files are compiled here, one object each.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

MAX_LINES = 900
MAX_TEST_LINES = 1200
# The CUDA wing's only resolver of the driver functions it calls.
DRIVER = "libxsched/src/interpose/cuda/driver.c"
TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# The instances of a kernel tracepoint live in the one file that defines
# CREATE_TRACE_POINTS; using trace.h from another file is not a call into it.
TRACEPOINT = ("__tracepoint_", "__SCK__tp_func_", "__SCT__tp_func_", "__traceiter_",
              "__probestub_")


def symbols(obj):
    """(defined, undefined) global symbol names of one object file."""
    out = subprocess.run(["nm", obj], capture_output=True, text=True,
                         check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[-1].startswith(TRACEPOINT):
            continue
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRVWG":
            defined.add(parts[2])
    return defined, undefined


def circles(objs):
    """Strongly connected components of more than one file in the call graph."""
    syms = {name: symbols(obj) for name, obj in objs.items()}
    owner = {}
    for name, (defined, _) in syms.items():
        for s in defined:
            owner.setdefault(s, name)
    edges = {name: sorted({owner[s] for s in undef if s in owner} - {name})
             for name, (_, undef) in syms.items()}
    # Tarjan's algorithm, iterative enough for a few dozen files.
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out, edges


LOOKUP = re.compile(r'\b(?:xsi_real_)?dlv?sym\s*\(\s*([^,()]+?)\s*,\s*("cu)?')
COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)


def libcuda_resolvers(top):
    """'path:line: call' of each lookup of a libcuda function outside DRIVER."""
    out = []
    for path in sorted(glob.glob(os.path.join(top, "libxsched", "src", "**", "*.[ch]"),
                                 recursive=True)):
        rel = os.path.relpath(path, top)
        if rel == DRIVER:
            continue
        wing = "/interpose/cuda/" in rel
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        # Comments blanked, their newlines kept (line numbers stay true).
        text = COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
        for m in LOOKUP.finditer(text):
            if m.group(2) or (wing and m.group(1) != "handle"):
                line = text.count("\n", 0, m.start()) + 1
                out.append(f"{rel}:{line}: {m.group(0).strip()}")
    return out


def compile_user(sources, cflags, tmp):
    objs = {}
    for src in sources:
        rel = os.path.relpath(src, TOP)
        obj = os.path.join(tmp, rel.replace("/", "_") + ".o")
        subprocess.run(["cc", "-std=gnu11", "-c", "-w"] + cflags +
                       [src, "-o", obj], check=True)
        objs[rel] = obj
    return objs


def kernel_objs(folder):
    """The objects of one kbuild folder that have a source file beside them."""
    objs = {}
    for src in sorted(glob.glob(os.path.join(TOP, folder, "*.c"))):
        if src.endswith(".mod.c"):
            continue
        obj = src[:-2] + ".o"
        # A file kbuild leaves out of this configuration (kfd.c or
        # kfd_none.c) has no object.
        if os.path.exists(obj):
            objs[os.path.relpath(src, TOP)] = obj
    if not objs:
        sys.exit(f"layout: no object in {folder}: run make module first")
    return objs


def main():
    passed = failed = 0

    def result(ok, what, detail=()):
        nonlocal passed, failed
        print(("ok " if ok else "not ok ") + what)
        for d in detail:
            print("#   " + d)
        if ok:
            passed += 1
        else:
            failed += 1

    lib = os.path.join(TOP, "libxsched")
    lib_src = sorted(glob.glob(os.path.join(lib, "src", "**", "*.c"), recursive=True))
    # The runtimes' headers, found as libxsched/Makefile finds them;
    # hip/nohip.c stands in for hip/hooks.c (same symbols) only where HIP's
    # headers are absent.
    gpu_inc = []
    for env, path in (("CUDA_INC", "/usr/local/cuda/include/cuda.h"),
                      ("HIP_INC", "/opt/rocm/include/hip/hip_runtime_api.h"),
                      ("HIP_INC", "/usr/include/hip/hip_runtime_api.h")):
        inc = os.environ.get(env) or (os.path.dirname(path) if os.path.exists(path) else "")
        if inc:
            gpu_inc.append("-I" + (os.path.dirname(inc) if inc.endswith("/hip") else inc))
    have_hip = any(os.path.exists(os.path.join(i[2:], "hip", "hip_runtime_api.h"))
                   for i in gpu_inc)
    lib_src = [s for s in lib_src
               if not s.endswith("/hip/nohip.c" if have_hip else "/hip/hooks.c")]
    ctl_src = sorted(glob.glob(os.path.join(TOP, "tools", "xschedctl", "*.c")))
    with tempfile.TemporaryDirectory() as tmp:
        components = [
            ("module", kernel_objs("kmod")),
            ("sim module", kernel_objs("kmod/sim")),
            ("libxsched", compile_user(
                lib_src, ["-I" + os.path.join(lib, "include"),
                          "-I" + os.path.join(lib, "src"),
                          "-I" + os.path.join(TOP, "include", "uapi"),
                          "-D_GNU_SOURCE", "-D__HIP_PLATFORM_AMD__", "-fPIC"] + gpu_inc,
                tmp)),
            ("xschedctl", compile_user(
                ctl_src, ["-I" + os.path.join(TOP, "include", "uapi"),
                          "-D_GNU_SOURCE"], tmp)),
        ]
        for name, objs in components:
            found, edges = circles(objs)
            detail = []
            for comp in found:
                detail.append("circle: " + " ".join(comp))
                for f in comp:
                    calls = [t for t in edges[f] if t in comp]
                    detail.append(f"  {f} calls {' '.join(calls)}")
            result(not found, f"no call circle in {name} ({len(objs)} files)", detail)

    long_files = []
    for pattern in ("kmod/*.[ch]", "kmod/sim/*.[ch]", "libxsched/src/**/*.[ch]",
                    "libxsched/include/*.h", "tools/xschedctl/*.[ch]"):
        for path in sorted(glob.glob(os.path.join(TOP, pattern), recursive=True)):
            if path.endswith(".mod.c"):
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                n = sum(1 for _ in f)
            if n > MAX_LINES:
                long_files.append(f"{os.path.relpath(path, TOP)}: {n} lines")
    result(not long_files, f"no file of the module, library or xschedctl over {MAX_LINES} lines",
           long_files)

    long_tests = []
    for path in sorted(glob.glob(os.path.join(TOP, "tests", "**", "*.[ch]"), recursive=True)):
        with open(path, encoding="utf-8", errors="replace") as f:
            n = sum(1 for _ in f)
        if n > MAX_TEST_LINES:
            long_tests.append(f"{os.path.relpath(path, TOP)}: {n} lines")
    result(not long_tests, f"no file under tests/ over {MAX_TEST_LINES} lines", long_tests)
    result(not (found := libcuda_resolvers(TOP)),
           f"libcuda functions resolved only by {DRIVER}", found)
    print(f"layout: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
