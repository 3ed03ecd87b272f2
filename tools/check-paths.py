#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Every path of this repository that a document names exists
(Documentation/layout.rst, "Documents name paths that exist").

Reads the inline literals of the documents given (`x` in Markdown outside
fenced blocks, ``x`` in reStructuredText) and decides for each whether it
names a path of this repository:
  - one without whitespace that contains a '/', or (in a Markdown table cell,
    after such a path) a bare file name with an extension; a bare name of a
    document (*.rst, *.md) anywhere;
  - not a placeholder or an expression: a token with one of < > $ { } | ( ) =
    ' " or "...", a URL, an absolute path, a path with a part after the first
    written in capitals (KREL, SUITE: a placeholder) are not paths;
  - not an output: what .gitignore leaves out (build/, .cache/, run results).
A path whose first folder is an entry of the repository's top or of the
document's own folder must exist there (tests/README.md names tests/tools/
as tools/); one whose first folder is found deeper (interpose/, src/) must end
some path of the repository; any other (amd/amdkfd, drm/drm.h) belongs to
another tree and is not read.  A bare name in a table cell is read beside the
path before it in the cell (`kmod/queue.c`, `arbiter.c`).  A glob must match
a file; a path without an extension also stands for the program built from
PATH.c.  A document lists the paths of another tree that begin like one of
this repository's (amdgpu-dkms's include/kcl) on a comment line
"check-paths: not here: PATH ...".

"Of the repository" means tracked by git or new and not ignored, so a build
output on this machine does not count.  Prints one "ok"/"not ok" line per
document, a "#   FILE:LINE: PATH ..." line per missing path, and a last line
"paths: N passed, N failed".
"""
import fnmatch
import os
import re
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOT_A_PATH = re.compile(r"[<>${}|()=\"']|\.\.\.|://")
PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]*$")
BARE_FILE = re.compile(r"^[\w.+-]+\.[A-Za-z0-9]+$")
NOT_HERE = re.compile(r"check-paths: not here:(.*)")


def repo_files():
    """Every file of the repository, relative to TOP."""
    try:
        out = subprocess.run(["git", "-C", TOP, "ls-files", "-co", "--exclude-standard", "-z"],
                             capture_output=True, text=True, check=True).stdout
        return sorted(f for f in out.split("\0") if f)
    except (OSError, subprocess.CalledProcessError):
        sys.exit("paths: not a git checkout (git ls-files failed)")


def ignored(paths):
    """The paths among these that .gitignore leaves out (outputs, caches)."""
    # git will not look beyond a symbolic link (a .cache linked to another
    # checkout's): ask about the link itself, as one ignored folder.  A glob
    # is asked about as one path it stands for (results/ of
    # libxsched/bench/*/results/).
    asked = {}
    for p in paths:
        q = re.sub(r"[*?]", "x", p)
        parts = q.rstrip("/").split("/")
        for i in range(1, len(parts) + 1):
            if os.path.islink(os.path.join(TOP, *parts[:i])):
                q = "/".join(parts[:i])
                break
        asked[p] = q
    if not asked:
        return set()
    run = subprocess.run(["git", "-C", TOP, "check-ignore", "--no-index", "--stdin", "-z"],
                         input="\0".join(sorted(set(asked.values()))) + "\0",
                         capture_output=True, text=True)
    if run.returncode not in (0, 1):    # 1: none is ignored
        sys.exit("paths: git check-ignore failed: " + run.stderr.strip())
    said = {q for q in run.stdout.split("\0") if q}
    return {p for p, q in asked.items() if q in said}


def literals(rel, text):
    """(line, token, cell) for each inline literal; cell is the index of its
    Markdown table cell on that line, or None outside a table."""
    out = []
    if not rel.endswith(".md"):
        # reStructuredText: a literal may go on over a line end.
        for m in re.finditer(r"``((?:[^`]|`(?!`))+?)``", text):
            out.append((text.count("\n", 0, m.start()) + 1, m.group(1), None))
        return out
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        table = line.lstrip().startswith("|")
        cell, i = 0, 0
        while i < len(line):
            if line[i] == "|" and table:
                cell += 1
            elif line[i] == "`":
                j = line.find("`", i + 1)
                if j < 0:
                    break
                out.append((n, line[i + 1:j], cell if table else None))
                i = j
            i += 1
    return out


class Repo:
    def __init__(self):
        self.files = repo_files()
        self.exists = set(self.files)
        self.dirs = set()
        for f in self.files:
            d = os.path.dirname(f)
            while d and d not in self.dirs:
                self.dirs.add(d)
                d = os.path.dirname(d)
        self.dir_names = {os.path.basename(d) for d in self.dirs}

    def has(self, path):
        """Whether this repository-relative path (maybe a glob, a folder,
        or a program built from PATH.c) is in the repository."""
        path = path.rstrip("/")
        if "*" in path or "?" in path:
            return any(fnmatch.fnmatchcase(f, path) for f in self.files) or \
                any(fnmatch.fnmatchcase(d, path) for d in self.dirs)
        if path in self.exists or path in self.dirs:
            return True
        return "." not in os.path.basename(path) and path + ".c" in self.exists

    def ends(self, tail):
        """Whether some path of the repository ends with /TAIL."""
        tail = tail.rstrip("/")
        tails = [tail]
        if "." not in os.path.basename(tail):
            tails.append(tail + ".c")
        return any(fnmatch.fnmatchcase(f, "*/" + t)
                   for t in tails for f in self.files + sorted(self.dirs))


def check(repo, rel):
    """The missing paths of one document: [(line, path, why)]."""
    with open(os.path.join(TOP, rel), encoding="utf-8") as f:
        text = f.read()
    here = os.path.dirname(rel)
    not_here = set()
    for m in NOT_HERE.finditer(text):
        not_here.update(m.group(1).replace("-->", " ").split())
    local = {p[len(here) + 1:].split("/", 1)[0] for p in repo.files
             if here and p.startswith(here + "/")}
    top = {p.split("/", 1)[0] for p in repo.files}
    toks = literals(rel, text)
    cand = []
    last = {}       # (line, cell) -> folder of the last path read in that cell
    for n, tok, cell in toks:
        tok = tok.strip()
        if tok.startswith("./"):
            tok = tok[2:]
        if not tok or re.search(r"\s", tok) or NOT_A_PATH.search(tok) or tok.startswith("/"):
            continue
        parts = tok.rstrip("/").split("/")
        if any(PLACEHOLDER.match(p) for p in parts[1:]) or tok in not_here:
            continue
        if "/" in tok:
            cand.append((n, tok, cell, parts))
        elif BARE_FILE.match(tok) and (cell is not None or tok.endswith((".rst", ".md"))):
            cand.append((n, tok, cell, parts))
    outputs = ignored(sorted({c[1] for c in cand}))
    missing = []
    for n, tok, cell, parts in cand:
        if tok in outputs:
            continue
        bases = [""] + ([here] if here else [])
        if "/" not in tok:
            key = (n, cell)
            if cell is not None and key in last:
                bases = [last[key]]
            elif not tok.endswith((".rst", ".md")):
                continue
            paths = [os.path.join(b, tok) for b in bases]
            if not any(repo.has(p) for p in paths):
                missing.append((n, tok, "not in " + " or ".join((b or ".") + "/" for b in bases)))
            continue
        first = parts[0]
        if first in top or first in local:
            found = [b for b in bases if repo.has(os.path.join(b, tok))]
            if cell is not None:
                # A name after this path is read beside it, found or not.
                path = os.path.join((found or bases)[0], tok)
                last[(n, cell)] = path.rstrip("/") if tok.endswith("/") else os.path.dirname(path)
            if not found:
                missing.append((n, tok, "not in " + " or ".join((b or ".") + "/" for b in bases)))
        elif first in repo.dir_names:
            if not repo.ends(tok):
                missing.append((n, tok, f"no folder {first}/ of the repository holds it"))
    return missing


def main(argv):
    repo = Repo()
    passed = failed = 0
    for rel in argv:
        rel = os.path.relpath(os.path.abspath(rel), TOP)
        missing = check(repo, rel)
        if missing:
            print(f"not ok paths {rel} ({len(missing)} missing)")
            for n, tok, why in missing:
                print(f"#   {rel}:{n}: {tok} does not exist ({why})")
            failed += 1
        else:
            print(f"ok paths {rel}")
            passed += 1
    print(f"paths: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
