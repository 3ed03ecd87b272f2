#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The dynamic linker's own bindings of HIP references, checked.

Reads the output of LD_DEBUG=bindings (with LD_BIND_NOW, libxsched.so
preloaded) of a program and of the libraries it loaded, and checks, for
each file named with --file (a path suffix: a library or the program):

  - every reference to a function of the hook table (hip/table.h; a C++ name of
    HIP_CXX_NAMES counts as its entry) binds to libxsched.so, at the node the
    table has;
  - every other HIP reference (bound to libamdhip64) that takes a stream
    (the runtime's headers: coverage.py's stream_functions; a C++ name with
    ihipStream_t) is listed in HIP_UNHOOKED;
  - the file made at least one HIP reference (else the check proved nothing).

    bindings.py --table hip/table.h --header hip_runtime_api.h --report LOG
                --file librocblas.so.4 [--file ...]

Prints one "ok"/"not ok" line per file, "bindings_<file>", and the counts.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "../libxsched/hip"))
import coverage  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--table", required=True)
    ap.add_argument("--header", required=True)
    ap.add_argument("--report", required=True, help="LD_DEBUG=bindings output")
    ap.add_argument("--file", action="append", required=True)
    a = ap.parse_args()
    table = coverage.read_table(a.table)
    cxx = {c: n for n, (c, _) in coverage.read_cxx_names(a.table).items()}
    takes = coverage.stream_functions(a.header)
    # binding file F [0] to L [0]: normal symbol `S' [N]
    pat = re.compile(r"binding file (\S+) \[\d+\] to (\S+) \[\d+\]: normal symbol `([^']+)'"
                     r"(?: \[([^]]+)\])?")
    refs = {f: {} for f in a.file}
    for line in open(a.report, errors="replace"):
        m = pat.search(line)
        if not m:
            continue
        src, dst, sym, node = m.groups()
        # References the HIP runtime (or we, in its place) define.
        if not os.path.basename(dst).startswith(("libamdhip64.so", "libxsched.so")):
            continue
        for f in a.file:
            if src.endswith("/" + f) or src == f:
                refs[f][sym] = (os.path.basename(dst), node)
    bad = 0
    for f in a.file:
        why, hooked, stream = [], 0, 0
        for sym, (dst, node) in sorted(refs[f].items()):
            name = cxx.get(sym, sym)
            cls, info = table.get(name, (None, None))
            is_stream = name in takes or (sym.startswith("_Z") and "ihipStream_t" in sym)
            stream += is_stream
            if cls and cls != "unhooked":
                hooked += 1
                if not dst.startswith("libxsched"):
                    why.append("%s bound to %s" % (sym, dst))
                elif node and node != info:
                    why.append("%s bound at %s, the table has %s" % (sym, node, info))
            elif is_stream and cls != "unhooked":
                why.append("%s takes a stream and is not in the table (bound to %s)" % (sym, dst))
            elif dst.startswith("libxsched"):
                why.append("%s, not hooked, bound to %s" % (sym, dst))
        if not refs[f]:
            why.append("no HIP reference of %s in the report" % f)
        test = "bindings_" + re.sub(r"\W", "_", f)
        if why:
            print("not ok %s: %s" % (test, "; ".join(why)))
            bad += 1
        else:
            print("ok %s" % test)
        print("#   %s: %d HIP references, %d take a stream, %d hooked"
              % (f, len(refs[f]), stream, hooked))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
