#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The HIP interposer's coverage against binaries no one here wrote.

Reads the table of libxsched/src/interpose/hip/table.h (its X-macro lists),
checks that libxsched.so exports every hooked entry under its version node, then
lists the HIP symbols that Debian 12's HIP-using libraries (downloaded with
apt-get download into the cache, unpacked with dpkg -x, never installed) and
a hipcc-built program import (objdump -T, UND), classifies each by the
table, prints the counts, and fails when a launch, copy, memset,
synchronization, stream or event call is imported and not in the table.

--headers-only skips the downloads and the imports (tools/check-hip-headers.sh:
offline, against any ROCm's headers); there, without a runtime, the header's
stream functions the table lacks are listed as notes.  With --runtime (a
libamdhip64.so.N) or --runtime-map (clr's hip_hcc.map.in), every hooked
symbol that runtime exports must be hooked at the node it exports it at.
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
LISTS = {
    "HIP_SCHEDULED": "scheduled",
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


def read_cxx_names(path):
    """{C name: (C++ name, node)} from HIP_CXX_NAMES: the C++ names the
    runtime exports an entry's function by."""
    text = open(path).read()
    m = re.search(r"^#define HIP_CXX_NAMES\(X\) \\\n((?:.*\\\n)*.*\n)", text, re.M)
    body = re.sub(r"\\\n\s*", " ", m.group(1)) if m else ""
    return {e.group(1): (e.group(2), e.group(3))
            for e in re.finditer(r"X\((\w+),\s*\"(\w+)\",\s*\"([^\"]+)\"\)", body)}


# Entries exported under their C++ name only (no C name exists).
CXX_ONLY = {"hipLaunchKernelGGLImpl"}


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
    """Names of the functions @header (with the per-thread header and
    hip_ext.h beside it) declares with a hipStream_t parameter, or with a
    parameter of a struct type that has a hipStream_t member (launch
    configurations, multi-device launch lists, graph instantiate params)."""
    text = ""
    here = os.path.dirname(header)
    for h in (header, os.path.join(here, "amd_detail", "amd_hip_runtime_pt_api.h"),
              os.path.join(here, "hip_ext.h")):
        if os.path.exists(h):
            text += open(h).read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    # Newer headers spell names as HIP_API_SYMBOL(Memcpy_spt) (hip_api_symbols.h).
    text = re.sub(r"\bHIP_API_SYMBOL\((\w+)\)", r"hip\1", text)
    carriers = {"hipStream_t"}
    for m in re.finditer(r"\bstruct\s+(\w*)\s*\{([^{}]*)\}\s*(\w*)\s*;", text):
        if re.search(r"\bhipStream_t\b", m.group(2)):
            carriers |= {n for n in (m.group(1), m.group(3)) if n}
    for m in re.finditer(r"typedef\s+struct\s+(\w+)\s+(\w+)\s*;", text):
        if m.group(1) in carriers:
            carriers.add(m.group(2))
    carrier = re.compile(r"\b(?:%s)\b" % "|".join(sorted(carriers)))
    names = set()
    for m in re.finditer(r"\b(?:hipError_t|void|int|char)\s*\*?\s+(\w+)\s*\(([^;{]*?)\)\s*"
                         r"(?:__attribute__\s*\(\(.*?\)\))?\s*;", text, re.S):
        if carrier.search(m.group(2)):
            names.add(m.group(1))
    return names


def header_major(header):
    """HIP_VERSION_MAJOR of the hip_version.h beside @header, or None."""
    try:
        text = open(os.path.join(os.path.dirname(header), "hip_version.h")).read()
    except OSError:
        return None
    m = re.search(r"#define\s+HIP_VERSION_MAJOR\s+(\d+)", text)
    return m.group(1) if m else None


def runtime_path(major=None):
    """The libamdhip64.so.N the dynamic linker would load (ldconfig's cache):
    N = @major when given (5 for Debian 12's ROCm 5.2.3), else the first of
    5, 6, 7 found."""
    out = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True).stdout
    for n in ([major] if major else ["5", "6", "7"]):
        for line in out.splitlines():
            if line.strip().startswith("libamdhip64.so.%s " % n) and "=>" in line:
                return line.split("=>")[1].strip()
    return None


def map_nodes(path):
    """{symbol: node} of a linker version script (clr's hip_hcc.map.in);
    wildcards and the extern "C++" block are left out."""
    nodes, node = {}, None
    for line in open(path):
        m = re.match(r"\s*(hip_[0-9.]+)\s*\{", line)
        if m:
            node = m.group(1)
            continue
        m = re.match(r"\s*([A-Za-z_]\w*)\s*;", line)
        if m and node and m.group(1) not in ("global", "local"):
            nodes.setdefault(m.group(1), node)
    return nodes


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
    ap.add_argument("--runtime", help="the real libamdhip64.so.N (default: ldconfig's, N the "
                    "header's HIP_VERSION_MAJOR)")
    ap.add_argument("--runtime-map", help="clr's hip_hcc.map.in: the nodes a runtime exports")
    ap.add_argument("--headers-only", action="store_true",
                    help="no downloads, no imported-symbol check (offline)")
    a = ap.parse_args()
    for f in (a.runtime, a.runtime_map):
        if f and not os.path.isfile(f):
            print("coverage: %s: no such file" % f)
            return 1
    table = read_table(a.table)
    cxx = read_cxx_names(a.table)
    if not cxx:
        print("coverage: %s has no HIP_CXX_NAMES list" % a.table)
        return 1
    by_cxx = {c: n for n, (c, _) in cxx.items()}
    bad = 0

    # The table and the library agree: every hook is exported at its node.
    exported = dynsyms(a.lib, False)
    for name, (cls, node) in sorted(table.items()):
        if cls == "unhooked":
            continue
        syms = ([] if name in CXX_ONLY else [name]) + ([cxx[name][0]] if name in cxx else [])
        for sym in syms:
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

    # The hooks are exported at the nodes that runtime exports the names at
    # (a hook at another node never binds a program linked against it).
    rt = a.runtime or runtime_path(header_major(a.header) if a.header else None)
    theirs = {}
    if a.runtime_map:
        theirs = map_nodes(a.runtime_map)
    elif rt and (a.runtime or not a.headers_only):
        theirs = dynsyms(rt, False)
    for name, (cls, node) in sorted(table.items()):
        for sym in [name] + ([cxx[name][0]] if name in cxx else []):
            if cls != "unhooked" and sym in theirs and theirs[sym] != node:
                print("coverage: %s exports %s at %s; the table hooks it at %s"
                      % (os.path.basename(a.runtime_map or rt), sym, theirs[sym], node))
                bad += 1
    # A C++ export that takes a stream (ihipStream_t in its mangled
    # parameters) must be one of HIP_CXX_NAMES: the hook's real function is
    # looked up under those names (ROCm 5.x has no C name for some).
    for sym in sorted(theirs):
        if sym.startswith("_Z") and "ihipStream_t" in sym and sym not in by_cxx:
            print("coverage: %s exports %s, which takes a stream, and HIP_CXX_NAMES lacks it"
                  % (os.path.basename(a.runtime_map or rt), sym))
            bad += 1

    # Every function of the real runtime that takes a stream is classified:
    # the table may not lose one that no library here happens to import.
    if a.header and theirs:
        takes = sorted(n for n in stream_functions(a.header) if n in theirs)
        for n in takes:
            if n not in table:
                print("coverage: %s exports %s, which takes a stream, and the table lacks it"
                      % (os.path.basename(a.runtime_map or rt), n))
                bad += 1
        print("coverage: %d functions of %s take a stream (%s); %d in the table"
              % (len(takes), os.path.basename(a.runtime_map or rt), os.path.basename(a.header),
                 sum(1 for n in takes if n in table)))
    elif a.header and a.headers_only:
        # No runtime to say what is exported: a declaration is not an export
        # (6.3's headers declare hipStreamBatchMemOp, exported from 6.4).
        takes = sorted(stream_functions(a.header))
        for n in takes:
            if n not in table:
                print("coverage: note: %s declares %s, which takes a stream, and the table lacks it"
                      % (a.header, n))
        print("coverage: %d functions declared by %s take a stream; %d in the table "
              "(no runtime given: not checked against exports)"
              % (len(takes), a.header, sum(1 for n in takes if n in table)))
    else:
        print("coverage: NOT CHECKED: the runtime's stream functions (header %s, runtime %s)"
              % (a.header, rt))
        bad += 1

    if a.headers_only:
        print("coverage: %s" % ("FAILED" if bad else "the table and the library agree"))
        return 1 if bad else 0
    bins = fetch(a.cache)
    prog = hipcc_program(a.cache, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                               "coverage_prog.hip"))
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
            n2 = by_cxx.get(n, n)
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
