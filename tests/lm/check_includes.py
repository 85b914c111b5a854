#!/usr/bin/env python3
# tests/lm/check_includes.py: the strata-lm app and its library (lm/) include only what an app built
# against the installed strata can: <strata/...> public headers (scripts/public-headers lists them),
# the C++ and system headers, nlohmann_json's (a public dependency: strata.pc requires it, Note [One
# installed library]), and lm/'s own files by a path relative to the including file. Run by
# the "lm_includes" test; exits 1 naming each offending line.
import os
import re
import subprocess
import sys

root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
public = set(subprocess.run([sys.executable, os.path.join(root, "scripts", "public-headers")], check=True,
                            capture_output=True, text=True).stdout.split())
LAYERS = ("core", "io", "ops", "autograd", "nn", "optim", "distributed", "modes", "tracer")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
problems = []
lm = os.path.join(root, "lm")
for name in sorted(os.listdir(lm)):
    if not name.endswith((".h", ".cpp")):
        continue
    path = os.path.join(lm, name)
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            kind, target = m.groups()
            where = f"lm/{name}:{number}: #include {kind}{target}{'>' if kind == '<' else kind}"
            if kind == '"':
                resolved = os.path.normpath(os.path.join(lm, target))
                if os.path.dirname(resolved) != lm or not os.path.isfile(resolved):
                    problems.append(f"{where}: a quoted include must be a file of lm/ itself")
            elif target.startswith("strata/"):
                if target[len("strata/"):] not in public:
                    problems.append(f"{where}: not a public (installed) strata header")
            elif target.split("/")[0] in LAYERS or target.startswith("Eigen"):
                problems.append(f"{where}: strata's internals or its dependencies; include <strata/...>")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
