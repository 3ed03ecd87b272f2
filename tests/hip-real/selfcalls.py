#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A HIP runtime's calls of its own hooked exports, found statically.

A libamdhip64 that calls one of its exported functions through its PLT (a
JUMP_SLOT relocation naming a symbol it defines itself, or a GLOB_DAT one
when its address is taken too and the PLT entry goes through that GOT
slot) reaches the
preloaded hook of that function again, from inside the outer call, on the
caller's thread.  For every such call of a function in the hook table
(libxsched/src/interpose/hip/table.h) this finds the call sites (objdump -d) and
the exported entry points that reach them: the function around the call
site names its API in a string it logs (CLR's entry macros), else the
functions that call it directly are followed up to an export.  Function
starts in a stripped library: exports, endbr64, direct call targets, and
16-aligned code after a return and padding that no jump targets.

    selfcalls.py --table hip/table.h --tests test_hip.c --fake FAKE.so LIB...

Prints each path "entry -> callee (class)" of each LIB and fails unless
every path whose entry is exported is in test_hip.c's SELF_CALLS list and
made by FAKE.so too (the same analysis on the fake), and every call site
reached from no export is reported (not required).  Exit 0 when all agree.
"""
import argparse
import bisect
import os
import re
import subprocess
import sys


def run(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def table_classes(path):
    """{name: class} of hip/table.h's lists, C++ names mapped to their entry."""
    text = open(path).read()
    lists = {"HIP_SCHEDULED": "scheduled", "HIP_SCHEDULED_MULTI": "scheduled",
             "HIP_SCHEDULED_OWN": "scheduled", "HIP_ORDERED": "ordered",
             "HIP_ORDERED_OWN": "ordered", "HIP_HARMLESS": "harmless"}
    cls = {}
    for m in re.finditer(r"^#define (HIP_[A-Z_]+)\(X\) \\\n((?:.*\\\n)*.*\n)", text, re.M):
        body = re.sub(r"\\\n\s*", " ", m.group(2))
        if m.group(1) == "HIP_CXX_NAMES":
            for e in re.finditer(r"X\((\w+),\s*\"(\w+)\"", body):
                cls.setdefault(("cxx", e.group(2)), e.group(1))
        elif m.group(1) in lists:
            for e in re.finditer(r"X\((\w+),", body):
                cls[e.group(1)] = lists[m.group(1)]
    for key in [k for k in cls if isinstance(k, tuple)]:
        cls[key[1]] = cls.pop(key)	# C++ name -> C name of its entry
    return cls


def c_name(sym, cls):
    """An export's entry name: a C++ name of HIP_CXX_NAMES is its C name."""
    v = cls.get(sym)
    return v if v and v not in ("scheduled", "ordered", "harmless") else sym


def self_calls(lib):
    """[(callee, call-site function address, {exported entries reaching it})]"""
    dyn = {}
    for line in run("objdump", "-T", lib).splitlines():
        f = line.split()
        if len(f) >= 6 and "*UND*" not in line and " DF " in line:
            dyn[int(f[0], 16)] = f[-1]
    names = set(dyn.values())
    own = set()
    for line in run("readelf", "-rW", lib).splitlines():
        m = re.search(r"R_X86_64_(?:JUMP_SLOT|GLOB_DAT)\s+[0-9a-f]+\s+(\S+)@@", line)
        if m and m.group(1) in names:
            own.add(m.group(1))
    secs = []
    for line in run("readelf", "-SW", lib).splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+\S+\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if m:
            secs.append(tuple(int(g, 16) for g in m.groups()))
    data = open(lib, "rb").read()

    def cstr(va):
        for a, off, size in secs:
            if a and a <= va < a + size:
                o = off + va - a
                e = data.find(b"\0", o, o + 256)
                return data[o:e].decode("latin1") if e > 0 else None
        return None

    ins = []
    for line in run("objdump", "-d", "--no-show-raw-insn", "-j", ".text", lib).splitlines():
        m = re.match(r"\s+([0-9a-f]+):\s+(\S+)\s*(.*)", line)
        if m:
            ins.append((int(m.group(1), 16), m.group(2), m.group(3)))
    jumps = set()
    for a, mn, op in ins:
        m = re.match(r"([0-9a-f]+) <", op)
        if m and mn.startswith("j"):
            jumps.add(int(m.group(1), 16))
    starts = set(dyn)
    pad = ("nop", "xchg", "int3", "data16", "cs")
    prev = None
    for a, mn, op in ins:
        if mn == "endbr64":
            starts.add(a)
        m = re.match(r"([0-9a-f]+) <", op)
        if m and mn.startswith("call"):
            starts.add(int(m.group(1), 16))
        if prev in ("ret", "jmp", "pad") and not mn.startswith(pad) and a % 16 == 0 \
                and a not in jumps:
            starts.add(a)
        if mn.startswith(pad) and prev in ("ret", "jmp", "pad"):
            prev = "pad"
        else:
            prev = "ret" if mn.startswith("ret") else "jmp" if mn == "jmp" else mn
    starts = sorted(starts)

    def fn_of(a):
        return starts[bisect.bisect_right(starts, a) - 1]

    callers, refs, sites = {}, {}, []
    for a, mn, op in ins:
        f = fn_of(a)
        m = re.search(r"# ([0-9a-f]+) <", op)
        if m:
            s = cstr(int(m.group(1), 16))
            if s in names:
                refs.setdefault(f, set()).add(s)
        m = re.match(r"([0-9a-f]+) <(.*)>", op)
        if mn.startswith("call") and m:
            t = m.group(2)
            if t.endswith("@plt") and t[:-4] in own:
                sites.append((t[:-4], f))
            elif not t.endswith("@plt"):
                callers.setdefault(int(m.group(1), 16), set()).add(f)

    def entries(f, depth, seen):
        if f in seen or depth > 4:
            return set()
        seen.add(f)
        if f in dyn:
            return {dyn[f]} | refs.get(f, set())
        if refs.get(f):
            return set(refs[f])
        r = set()
        for c in callers.get(f, ()):
            r |= entries(c, depth + 1, seen)
        return r

    return [(callee, f, entries(f, 0, set())) for callee, f in sites]


def paths(lib, cls):
    """{(entry, callee)} of @lib's self-calls of hooked functions, and the
    unreached call sites [(callee, address)]."""
    found, unreached = set(), []
    for callee, f, ents in self_calls(lib):
        if callee not in cls:
            continue	# not hooked: no hook is entered again
        if not ents:
            unreached.append((callee, f))
        for e in ents:
            found.add((c_name(e, cls), callee))
    return found, unreached


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--table", required=True)
    ap.add_argument("--tests", required=True, help="test_hip.c (SELF_CALLS)")
    ap.add_argument("--fake", required=True, help="the test fake libamdhip64.so.N")
    ap.add_argument("libs", nargs="+")
    a = ap.parse_args()
    cls = table_classes(a.table)
    m = re.search(r"^#define SELF_CALLS\(X\) \\\n((?:.*\\\n)*.*\n)", open(a.tests).read(), re.M)
    tested = set(re.findall(r"X\((\w+), (\w+)\)", m.group(1))) if m else set()
    if not tested:
        print("selfcalls: %s has no SELF_CALLS list" % a.tests)
        return 1
    fake, _ = paths(a.fake, cls)
    bad = 0
    for lib in a.libs:
        found, unreached = paths(lib, cls)
        name = os.path.basename(os.path.realpath(lib))
        for entry, callee in sorted(found):
            what = "%s: %s -> %s (%s)" % (name, entry, callee, cls[callee])
            miss = []
            if (entry, callee) not in tested:
                miss.append("no SELF_CALLS test")
            if (entry, callee) not in fake:
                miss.append("the fake does not make this call")
            print("selfcalls: %s%s" % (what, ": " + ", ".join(miss) if miss else ""))
            bad += len(miss) > 0
        for callee, f in unreached:
            print("selfcalls: %s: a call of %s at 0x%x is reached from no export (not tested)"
                  % (name, callee, f))
        print("selfcalls: %s: %d paths into hooked functions, %d unreached call sites"
              % (name, len(found), len(unreached)))
    print("selfcalls: %s" % ("FAILED" if bad else "every path is made by the fake and tested"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
