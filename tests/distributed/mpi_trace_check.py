#!/usr/bin/env python3
"""tests/distributed/mpi_trace_check.py: strata-trace under `mpirun -np 2` runs its traced step with one
rank per process (Note [strata-trace under mpirun]): the report matches the one-process step, and
rank 0's sequences equal the thread backend's (tests/golden/data_parallel_seed_w2_seq.json); --debug
and --trace print the chosen rank's log, collectives included, as the thread ranks of
`--world-size 2` print it; --tp 2 prints the thread ranks' tensor-parallel report; --html writes
one page (rank 0 writes it) holding both ranks' records, each the one its thread rank records with
`--world-size 2` (Note [The explorer's page under mpirun]); a file that cannot be written stops
both ranks with exit status 2; and a --rank outside the world is refused with exit status 2.

usage: mpi_trace_check.py MPIRUN STRATA_TRACE GOLDEN"""
import json
import os
import re
import subprocess
import sys
import tempfile

mpirun, exe, golden = sys.argv[1:4]
env = dict(os.environ, OMPI_MCA_btl="self,vader")


def under_mpirun(*args):
    return subprocess.run([mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2", exe, *args],
                          capture_output=True, text=True, env=env, timeout=240)


run = under_mpirun("--sequences")
if run.returncode != 0:
    sys.exit(f"strata-trace under mpirun failed ({run.returncode}): {run.stderr}")
report = json.loads(run.stdout)
expected = json.load(open(golden))
problems = [key for key in ("forward_seq", "backward_seq", "optimizer_seq") if report[key] != expected[key]]
if report["traced_step_matches"] is not True:
    problems.append("traced_step_matches")
if problems:
    sys.exit("differs from the thread backend: " + ", ".join(problems))

# One rank's log: the process of that rank prints it, the same text as thread rank's.
for view, rank, collective in (("--debug", "1", "c10d::allreduce_("), ("--trace", "0", "c10d.allreduce_.default(")):
    run = under_mpirun(view, "--rank", rank)
    threads = subprocess.run([exe, view, "--world-size", "2", "--rank", rank], capture_output=True, text=True, timeout=240)
    if run.returncode != 0 or threads.returncode != 0:
        sys.exit(f"strata-trace {view} --rank {rank} failed: {run.stderr}{threads.stderr}")
    if collective not in run.stdout:
        sys.exit(f"strata-trace {view} under mpirun: no {collective} in rank {rank}'s log")
    if run.stdout != threads.stdout:
        sys.exit(f"strata-trace {view} --rank {rank} under mpirun differs from --world-size 2 on threads")
# --tp: the tensor-parallel step, one rank per process, is the thread ranks' (the same report).
run = under_mpirun("--tp", "2", "--sequences")
threads = subprocess.run([exe, "--world-size", "2", "--tp", "2", "--sequences"], capture_output=True, text=True, timeout=240)
if run.returncode != 0 or threads.returncode != 0:
    sys.exit(f"strata-trace --tp 2 failed: {run.stderr}{threads.stderr}")
report, expected = json.loads(run.stdout), json.loads(threads.stdout)
if report["traced_step_matches"] is not True or report["forward_seq"] != expected["forward_seq"] or \
        report["backward_seq"] != expected["backward_seq"]:
    sys.exit("strata-trace --tp 2 under mpirun differs from --world-size 2 --tp 2 on threads")


def page_lanes(path):
    """Each rank of the page's data (Note [The page's compact data]): its number and its calls' kinds and names."""
    text = open(path, encoding="utf-8").read()
    data = json.loads(re.search(r'<script type="application/json" id="explorer-data">\n(.*?)\n</script>', text, re.S).group(1))
    strings = data["strings"]
    return [(r["rank"], [(strings[k], strings[n]) for k, n in zip(r["calls"]["kind"], r["calls"]["name"])])
            for r in data["ranks"]]


# --html: one page, written by rank 0, with both ranks' lanes as the thread ranks record them.
for extra in ((), ("--tp", "2")):
    with tempfile.TemporaryDirectory() as d:
        run = under_mpirun("--html", os.path.join(d, "mpi.html"), *extra)
        threads = subprocess.run([exe, "--html", os.path.join(d, "threads.html"), "--world-size", "2", *extra],
                                 capture_output=True, text=True, timeout=240)
        if run.returncode != 0 or threads.returncode != 0:
            sys.exit(f"strata-trace --html {' '.join(extra)} under mpirun failed ({run.returncode}): {run.stderr}{threads.stderr}")
        if sorted(os.listdir(d)) != ["mpi.html", "threads.html"]:
            sys.exit(f"strata-trace --html under mpirun left {sorted(os.listdir(d))}")
        lanes, expected = page_lanes(os.path.join(d, "mpi.html")), page_lanes(os.path.join(d, "threads.html"))
        if [r for r, _ in lanes] != [0, 1] or any(not [c for c in calls if c[0] == "op"] for _, calls in lanes):
            sys.exit(f"strata-trace --html {' '.join(extra)} under mpirun: expected two ranks' lanes of ops, got ranks {[r for r, _ in lanes]}")
        collective = "_c10d_functional::all_reduce" if extra else "c10d::allreduce_"
        if any(not any(name.startswith(collective) for _, name in calls) for _, calls in lanes):
            sys.exit(f"strata-trace --html {' '.join(extra)} under mpirun: a lane without {collective}")
        if lanes != expected:
            sys.exit(f"strata-trace --html {' '.join(extra)} under mpirun: the lanes differ from --world-size 2 on threads")

# A file that cannot be written stops both ranks at once, with its error: had one rank gone on, its
# step's first collective would wait for the other for ever (the timeout). Written files: once.
with tempfile.TemporaryDirectory() as d:
    for option in ("--json-out", "--html"):
        run = under_mpirun(option, os.path.join(d, "missing", "out"))
        if run.returncode != 2 or "cannot write" not in run.stderr:
            sys.exit(f"{option} into a missing directory under mpirun: expected exit status 2, got {run.returncode}: {run.stderr}")
    run = under_mpirun("--json-out", os.path.join(d, "report.json"))
    if run.returncode != 0 or sorted(os.listdir(d)) != ["report.json"] or open(os.path.join(d, "report.json")).read() != run.stdout:
        sys.exit(f"--json-out under mpirun: expected report.json alone, holding the report; got {sorted(os.listdir(d))}")

run = under_mpirun("--debug", "--rank", "2")
if run.returncode != 2 or run.stdout or "--rank: expected a rank below --world-size (2), got 2" not in run.stderr:
    sys.exit(f"--rank 2 of 2 under mpirun: expected exit status 2 and the error, got {run.returncode}: {run.stderr}")
print("strata-trace under mpirun -np 2: the thread backend's report, logs and explorer page")
