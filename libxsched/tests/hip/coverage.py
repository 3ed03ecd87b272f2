#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The HIP interposer's coverage against binaries no one here wrote.

Reads the table of libxsched/src/interpose/hip.c (its X-macro lists), checks
that libxsched.so exports every hooked entry under its version node, then
lists the HIP symbols that Debian 12's HIP-using libraries (downloaded with
apt-get download into the cache, unpacked with dpkg -x, never installed) and
a hipcc-built program import (objdump -T, UND), classifies each by the
table, prints the counts, and fails when a launch, copy, memset,
synchronization, stream or event call is imported and not in the table.
"""
import argparse
import atexit
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

PACKAGES = ["librocsparse0", "libhipsparse0", "librocrand1", "libhiprand1"]
# What must be covered: work on a stream, waits, streams and events.
CRITICAL = re.compile(r"Launch|Memcpy|Memset|Synchroni[sz]e|Stream|Event|Graph(Launch|Upload)"
                      r"|Wait|Signal|Callback|HostFunc|Prefetch|Async")
MANGLED = {
    "hipHccModuleLaunchKernel":
        "_Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_",
    "hipLaunchKernelGGLImpl": "_ZN8hip_impl22hipLaunchKernelGGLImplEmRK4dim3S2_jP12ihipStream_tPPv",
}
EXTRA_MANGLED = {
    "_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j":
        "hipExtModuleLaunchKernel",
}
LISTS = {
    "HIP_SCHEDULED": "scheduled", "HIP_SCHEDULED_CXX": "scheduled",
    "HIP_SCHEDULED_MULTI": "scheduled", "HIP_SCHEDULED_OWN": "scheduled",
    "HIP_ORDERED": "ordered", "HIP_ORDERED_OWN": "ordered",
    "HIP_HARMLESS": "harmless", "HIP_UNHOOKED": "unhooked",
}


def read_table(path):
    """{name: (class, node or reason)} from the #define HIP_*(X) lists."""
    table = {}
    text = open(path).read()
    for m in re.finditer(r"^#define (HIP_[A-Z_]+)\(X\) \\\n((?:.*\\\n)*.*\n)", text, re.M):
        cls = LISTS.get(m.group(1))
        if not cls:
            continue
        for e in re.finditer(r"X\((\w+), \"([^\"]+)\"", m.group(2)):
            table[e.group(1)] = (cls, e.group(2))
    return table


def dynsyms(path, undefined):
    out = subprocess.run(["objdump", "-T", path], capture_output=True, text=True,
                         check=True).stdout
    syms = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) < 4 or ("*UND*" in line) != undefined:
            continue
        m = re.search(r"\s(\(?)(hip_[0-9.]+|Base|[A-Z_]+[0-9._]*)\)?\s+(\S+)$", line)
        if m:
            syms[m.group(3)] = m.group(2)
    return syms


def stream_functions(header):
    """Names of the functions @header declares with a hipStream_t parameter."""
    text = open(header).read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    names = set()
    for m in re.finditer(r"\b(?:hipError_t|void|int)\s*\*?\s+(\w+)\s*\(([^;{]*?)\)\s*"
                         r"(?:__attribute__\s*\(\(.*?\)\))?\s*;", text, re.S):
        if re.search(r"\bhipStream_t\b", m.group(2)):
            names.add(m.group(1))
    return names


def runtime_path():
    """The libamdhip64.so.5 the dynamic linker would load (ldconfig's cache)."""
    out = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.strip().startswith("libamdhip64.so.5 ") and "=>" in line:
            return line.split("=>")[1].strip()
    return None


def fetch(cache):
    """Unpacked library files of PACKAGES (downloaded once into @cache)."""
    os.makedirs(cache, exist_ok=True)
    debs = glob.glob(os.path.join(cache, "*.deb"))
    if len(debs) < len(PACKAGES):
        subprocess.run(["apt-get", "download"] + PACKAGES, cwd=cache,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        debs = glob.glob(os.path.join(cache, "*.deb"))
    # Unpacked into a folder of this run's own: the cache is shared by
    # worktrees, and another run's dpkg -x rewrites the files it reads.
    root = tempfile.mkdtemp(prefix="hip-coverage-")
    atexit.register(shutil.rmtree, root, True)
    for d in debs:
        subprocess.run(["dpkg", "-x", d, root], check=True)
    return sorted(p for p in glob.glob(os.path.join(root, "usr/lib/*/*.so.*"))
                  if not os.path.islink(p))


def hipcc_program(cache, src):
    hipcc = shutil.which("hipcc")
    if not hipcc:
        return None
    out = os.path.join(cache, "coverage_prog")
    if not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(src):
        r = subprocess.run([hipcc, "--offload-arch=gfx90a", "-o", out, src],
                           capture_output=True, text=True)
        if r.returncode:
            print("coverage: hipcc failed:\n" + r.stderr)
            return None
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--table", required=True)
    ap.add_argument("--lib", required=True, help="libxsched.so")
    ap.add_argument("--cache", required=True)
    ap.add_argument("--header", help="hip/hip_runtime_api.h")
    ap.add_argument("--runtime", help="the real libamdhip64.so.5 (default: ldconfig's)")
    a = ap.parse_args()
    table = read_table(a.table)
    bad = 0

    # The table and the library agree: every hook is exported at its node.
    exported = dynsyms(a.lib, False)
    for name, (cls, node) in sorted(table.items()):
        if cls == "unhooked":
            continue
        sym = MANGLED.get(name, name)
        if exported.get(sym) != node:
            print("coverage: %s (%s) is not exported at %s by %s (got %s)"
                  % (sym, cls, node, a.lib, exported.get(sym)))
            bad += 1
    hooked = sum(1 for c, _ in table.values() if c != "unhooked")
    print("coverage: table of %s: %d hooked (%d scheduled, %d ordered, %d harmless), %d not hooked"
          % (os.path.basename(a.table), hooked,
             sum(1 for c, _ in table.values() if c == "scheduled"),
             sum(1 for c, _ in table.values() if c == "ordered"),
             sum(1 for c, _ in table.values() if c == "harmless"),
             sum(1 for c, _ in table.values() if c == "unhooked")))

    # Every function of the real runtime that takes a stream is classified:
    # the table may not lose one that no library here happens to import.
    rt = a.runtime or runtime_path()
    if a.header and rt:
        rt_syms = dynsyms(rt, False)
        takes = sorted(n for n in stream_functions(a.header) if n in rt_syms)
        for n in takes:
            if n not in table:
                print("coverage: %s exports %s, which takes a stream, and the table lacks it"
                      % (os.path.basename(rt), n))
                bad += 1
        print("coverage: %d functions of %s take a stream (%s); %d in the table"
              % (len(takes), os.path.basename(rt), os.path.basename(a.header),
                 sum(1 for n in takes if n in table)))
    else:
        print("coverage: NOT CHECKED: the runtime's stream functions (header %s, runtime %s)"
              % (a.header, rt))
        bad += 1

    bins = fetch(a.cache)
    prog = hipcc_program(a.cache, os.path.join(os.path.dirname(a.table),
                                               "../../tests/hip/coverage_prog.hip"))
    if prog:
        bins.append(prog)
    if not bins:
        print("coverage: no HIP libraries could be downloaded (%s) and no hipcc: nothing to check"
              % " ".join(PACKAGES))
        return 1 if bad else 0
    cols = ("scheduled", "ordered", "harmless", "unhooked", "other", "UNCOVERED")
    print("%-28s %5s " % ("binary", "HIP") + " ".join("%9s" % c for c in cols))
    for b in bins:
        imps = {n: v for n, v in dynsyms(b, True).items()
                if v.startswith("hip_") or n.startswith(("hip", "__hip"))}
        count = dict.fromkeys(cols, 0)
        for n in sorted(imps):
            n2 = EXTRA_MANGLED.get(n, n)
            cls = table.get(n2, (None,))[0]
            if cls:
                count[cls] += 1
            elif CRITICAL.search(n2):
                count["UNCOVERED"] += 1
                print("coverage: %s imports %s, a stream/event/launch/copy call the table lacks"
                      % (os.path.basename(b), n))
                bad += 1
            else:
                count["other"] += 1	# allocation, device and error queries
        print("%-28s %5d " % (os.path.basename(b), len(imps))
              + " ".join("%9d" % count[c] for c in cols))
    print("coverage: %s" % ("FAILED" if bad else "every imported launch, copy, memset, "
                            "synchronization, stream and event call is in the table"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
