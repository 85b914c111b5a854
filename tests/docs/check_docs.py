#!/usr/bin/env python3
"""tests/docs/check_docs.py: the `docs` test. Every C++ program in strata's Markdown documents is
built and run as a reader would build and run it, against an installed strata.

usage: check_docs.py --build BUILD --source SOURCE [--jobs N] [--pkg-config-path DIR] [DOC.md ...]
       (DOCs relative to SOURCE; without any, README.md and every docs/*.md)

1. Installs BUILD (already built: --no-rebuild) into a temporary prefix with `meson install
   --destdir`, and points PKG_CONFIG_PATH at its strata.pc, as tests/install/test_install.sh does.
   With --pkg-config-path DIR it installs nothing and uses the strata.pc in DIR instead.
2. Reads the fenced blocks of each document. A block's info string says what it is (the first word
   keeps GitHub's highlighting):
     ```cpp                  a whole program: its includes (<strata/...>) and an `int main()`
     ```cpp mpi              a whole program on the MPI backend: built with strata-mpi.pc and run
                             under `mpirun -np 2` (skipped, and said, where strata-mpi is not installed)
     ```cpp excerpt FILE     code quoted from the source file FILE: FILE must still contain it,
                             verbatim up to whitespace (```json excerpt FILE and the like too)
     ```text output          what the program before it prints on standard output, exactly
     ```text output not compared: REASON
                             what it prints, shown but not compared (timings); REASON says why
   A ```cpp block that is neither a program nor an excerpt is an error: a fragment (a schema line,
   a command) is not C++ to compile, so it goes in a ```text or ```sh block. An output block belongs
   to the program before it, with nothing but prose between them.
3. Compiles each program with `g++ -std=c++20 -O0 PROGRAM.cpp $(pkg-config --cflags --libs strata)`
   (plus an rpath to the installed library), N at a time, runs it in an empty directory, and checks
   that it exits 0 and, where it has an output block, that its standard output is that block. A
   compiler error names the document's line (#line). A program's first include is <strata/strata.h>
   (Note [The documents' programs share a precompiled strata.h]).

Note [The documents' programs share a precompiled strata.h]
Parsing strata.h is most of compiling a document's program at -O0 (about 3.5 of 5 s), and this test
compiles some thirty of them. It first precompiles the installed strata.h once, with the programs'
own flags, into a directory put first on their include path; GCC then takes the precompiled header
for `#include <strata/strata.h>` when that is the program's first include, and compiles the program
in under half the time. The program's text and its reader's command are otherwise unchanged, and
where GCC cannot use the precompiled header it reads strata.h as usual: the header only speeds the
test up. The MPI programs, compiled with other flags, do without it.
"""
import argparse
import concurrent.futures
import difflib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FENCE = re.compile(r"^\s*```(.*)$")


class DocError(Exception):
    pass


def fenced_blocks(text):
    """(info, first_line, code) for each fenced block; first_line is the 1-based line of its code."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        end = i + 1
        while end < len(lines) and not FENCE.match(lines[end]):
            end += 1
        if end == len(lines):
            raise DocError(f"line {i + 1}: unterminated code block")
        yield m.group(1).strip(), i + 2, "\n".join(lines[i + 1:end])
        i = end + 1


def read_doc(source, doc):
    """The programs of `doc` as dicts (line, code, output, compared) and its excerpts as (line, path, code)."""
    programs, excerpts = [], []
    last = None  # the program whose output block may come next
    for info, line, code in fenced_blocks((source / doc).read_text(encoding="utf-8")):
        words = info.split()
        lang = words[0] if words else ""
        if len(words) >= 2 and words[1] == "excerpt":  # ```cpp excerpt FILE, ```json excerpt FILE, ...
            if len(words) != 3:
                raise DocError(f"line {line - 1}: an excerpt names one source file: ```{lang} excerpt path/to/file")
            excerpts.append((line, words[2], code))
            last = None
        elif lang == "cpp":
            if len(words) == 1 or words[1:] == ["mpi"]:
                if not re.search(r"\bint\s+main\s*\(", code):
                    raise DocError(f"line {line - 1}: a ```cpp block is a whole program (with its includes and "
                                   "int main()) or an excerpt (```cpp excerpt FILE); put a fragment in ```text")
                includes = re.findall(r"^\s*#\s*include\s*(\S+)", code, re.M)
                if "<strata/strata.h>" in includes and includes[0] != "<strata/strata.h>":
                    raise DocError(f"line {line - 1}: put #include <strata/strata.h> first: the test builds the "
                                   "programs with it precompiled, which GCC takes only as a program's first include")
                last = {"line": line, "code": code, "output": None, "compared": True, "mpi": len(words) == 2}
                programs.append(last)
            else:
                raise DocError(f"line {line - 1}: unknown ```cpp block '{info}' (a program is plain ```cpp)")
        elif lang == "text" and len(words) >= 2 and words[1] == "output":
            rest = " ".join(words[2:])
            if rest and not rest.startswith("not compared:"):
                raise DocError(f"line {line - 1}: an output block is ```text output, or ```text output not "
                               "compared: REASON")
            if last is None:
                raise DocError(f"line {line - 1}: an output block follows the program whose output it is")
            if last["output"] is not None:
                raise DocError(f"line {line - 1}: a program has one output block")
            last["output"] = code + "\n"
            last["compared"] = not rest
            last = None
        else:
            last = None
    return programs, excerpts


def squeeze(text):
    return " ".join(text.split())


def install(build, tmp):
    """Installs `build` under tmp/root; returns the directory of the installed strata.pc."""
    subprocess.run(["meson", "install", "-C", str(build), "--no-rebuild", "--quiet", "--destdir", str(tmp / "root")],
                   check=True, stdout=subprocess.DEVNULL)
    found = list((tmp / "root").rglob("strata.pc"))
    if not found:
        raise SystemExit("FAIL: meson install put no strata.pc under the prefix")
    return found[0].parent


# How an MPI program runs here: as root, on one machine, as tests/meson.build runs the MPI tests.
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2"]
MPI_ENV = {"OMPI_MCA_btl": "self,vader", "OMPI_MCA_rmaps_base_oversubscribe": "1"}


def precompile_strata_h(tmp, includedir, cflags, env):
    """Note [The documents' programs share a precompiled strata.h]: the directory that holds it."""
    header = Path(includedir) / "strata" / "strata.h"
    pch = tmp / "precompiled" / "strata" / "strata.h.gch"
    pch.parent.mkdir(parents=True)
    # GCC warns of the header's `#pragma once` when it is the file compiled; that says nothing here.
    subprocess.run(["g++", "-std=c++20", "-O0", "-x", "c++-header", str(header), "-o", str(pch)] + cflags,
                   check=True, env=env, capture_output=True)
    return pch.parent.parent


def check_program(doc, program, n, work, flags, env):
    """Builds and runs one program; returns (ok, message, seconds)."""
    start = time.monotonic()
    where = f"{doc}:{program['line'] - 1}"
    if program["mpi"]:
        if flags.get("mpi") is None:
            return True, f"{where}: skipped (an MPI program, and strata-mpi is not installed)", 0
        flags, env = flags["mpi"], dict(env, **MPI_ENV)
    else:
        flags = flags["plain"]
    stem = work / f"{re.sub(r'[^A-Za-z0-9]', '_', doc)}_{n}"
    src = stem.with_suffix(".cpp")
    src.write_text(f'#line {program["line"]} "{doc}"\n' + program["code"] + "\n", encoding="utf-8")
    compile_cmd = ["g++", "-std=c++20", "-O0", str(src), "-o", str(stem)] + flags
    built = subprocess.run(compile_cmd, capture_output=True, text=True, env=env)
    if built.returncode != 0:
        return False, f"{where}: the program does not compile:\n  {shlex.join(compile_cmd)}\n{built.stderr}", 0
    run_dir = Path(str(stem) + ".run")
    run_dir.mkdir()
    try:
        ran = subprocess.run((MPIRUN if program["mpi"] else []) + [str(stem)], cwd=run_dir, capture_output=True, text=True, timeout=120,
                             stdin=subprocess.DEVNULL, env=env)
    except subprocess.TimeoutExpired:
        return False, f"{where}: the program ran for more than 120 s", 0
    seconds = time.monotonic() - start
    if ran.returncode != 0:
        return False, (f"{where}: the program exited with {ran.returncode}\n--- stdout\n{ran.stdout}"
                       f"--- stderr\n{ran.stderr}"), seconds
    if program["output"] is not None and program["compared"] and ran.stdout != program["output"]:
        diff = "".join(difflib.unified_diff(program["output"].splitlines(True), ran.stdout.splitlines(True),
                                            "the document's output block", "what the program printed"))
        return False, f"{where}: the program's output differs from its output block:\n{diff}", seconds
    what = "output checked" if program["output"] is not None and program["compared"] else (
        "output not compared" if program["output"] is not None else "no output block")
    return True, f"{where}: ok ({what}, {seconds:.1f} s)", seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", type=Path, required=True)
    parser.add_argument("--source", type=Path, required=True)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--pkg-config-path", type=Path)
    parser.add_argument("docs", nargs="*")
    args = parser.parse_args()
    source = args.source.resolve()
    if not args.docs:  # every document, so that a new page cannot escape the test
        args.docs = ["README.md"] + sorted(str(d.relative_to(source)) for d in (source / "docs").glob("*.md"))

    failures = []
    programs = []
    for doc in args.docs:
        try:
            found, excerpts = read_doc(source, doc)
        except DocError as e:
            failures.append(f"{doc}: {e}")
            continue
        programs += [(doc, p) for p in found]
        for line, path, code in excerpts:
            try:
                text = (source / path).read_text(encoding="utf-8")
            except OSError as e:
                failures.append(f"{doc}:{line - 1}: cannot read the excerpt's file {path}: {e}")
                continue
            if squeeze(code) not in squeeze(text):
                failures.append(f"{doc}:{line - 1}: the excerpt is no longer in {path}")
            else:
                print(f"{doc}:{line - 1}: ok (excerpt of {path})")

    with tempfile.TemporaryDirectory(prefix="strata-docs-") as tmp_name:
        tmp = Path(tmp_name)
        pc_dir = args.pkg_config_path.resolve() if args.pkg_config_path else install(args.build.resolve(), tmp)
        env = dict(os.environ, PKG_CONFIG_PATH=str(pc_dir))
        env.pop("LD_LIBRARY_PATH", None)  # meson test points it at the build; a reader's program finds the install
        pkg = lambda module, *a: subprocess.run(["pkg-config", *a, module], env=env, check=True, capture_output=True,
                                                text=True).stdout.split()
        rpath = ["-Wl,-rpath," + pkg("strata", "--variable=libdir")[0]]
        flags = {"plain": pkg("strata", "--cflags", "--libs") + rpath, "mpi": None}
        has_mpi = subprocess.run(["pkg-config", "--exists", "strata-mpi"], env=env).returncode == 0
        if has_mpi and shutil.which("mpirun"):
            flags["mpi"] = pkg("strata-mpi", "--cflags", "--libs") + rpath
        print(f"{len(programs)} programs, built with g++ -std=c++20 -O0 ... {' '.join(flags['plain'])}")
        flags["plain"] = ["-I", str(precompile_strata_h(
            tmp, pkg("strata", "--variable=includedir")[0], pkg("strata", "--cflags"), env))] + flags["plain"]
        work = tmp / "programs"
        work.mkdir()
        counts = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            jobs = []
            for doc, program in programs:
                counts[doc] = counts.get(doc, 0) + 1
                jobs.append(pool.submit(check_program, doc, program, counts[doc], work, flags, env))
            for job in jobs:
                ok, message, _ = job.result()
                print(message) if ok else failures.append(message)
    if failures:
        print("\n".join(f"FAIL: {f}" for f in failures), file=sys.stderr)
        sys.exit(1)
    print("docs: every program and excerpt checked")


if __name__ == "__main__":
    main()
