#!/usr/bin/env python3
"""tests/distributed/mpi_finalize_check.py: runs mpi_finalize_check under `mpirun -np 2` (Note
[finalize_mpi completes every collective]): collectives nobody waited for complete at finalize_mpi
(also with STRATA_DISTRIBUTED_DEBUG=DETAIL), and a collective rank 1 never issued fails the job at
once with an error naming it and the rank missing, not a hang and not MPI's own abort (also with
DETAIL); under DETAIL, ranks that disagree on a collective nobody waited for fail finalize_mpi alike.

usage: mpi_finalize_check.py MPIRUN PROGRAM"""
import os
import subprocess
import sys
import time

mpirun, exe = sys.argv[1:3]
base = dict(os.environ, OMPI_MCA_btl="self,vader", OMPI_MCA_rmaps_base_oversubscribe="1")
base.pop("STRATA_DISTRIBUTED_DEBUG", None)


def run(mode, **env):
    start = time.monotonic()
    done = subprocess.run([mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2", exe, mode],
                          capture_output=True, text=True, env=dict(base, **env), timeout=120)
    return done, time.monotonic() - start


problems = []
for env in ({}, {"STRATA_DISTRIBUTED_DEBUG": "DETAIL"}):
    done, _ = run("unwaited", **env)
    lines = sorted(l for l in done.stdout.splitlines() if l.startswith("rank "))
    if done.returncode != 0 or lines != ["rank 0: every collective completed", "rank 1: every collective completed"]:
        problems.append(f"unwaited {env}: exit {done.returncode}, {done.stdout!r} {done.stderr[-2000:]!r}")

detail = {"STRATA_DISTRIBUTED_DEBUG": "DETAIL"}
for mode, env, expected in (
        ("missing", {}, ": finalize_mpi: all_reduce (collective #0 on group '0'): rank 1 never joined it"),
        # DETAIL's exchange does not block the issue either, so the same error comes from finalize_mpi.
        ("missing", detail, ": finalize_mpi: all_reduce (collective #0 on group '0'): rank 1 never joined it"),
        ("disagree", detail, ": finalize_mpi: all_reduce (collective #0): rank 0's tensor has sizes [2] but rank 1's "
                             "has [3] (on group '0', and nobody waited for it)")):
    done, seconds = run(mode, **env)
    lines = [l for l in done.stdout.splitlines() if l.startswith("rank ")]
    if done.returncode == 0 or len(lines) != 2 or any(not l.endswith(expected) for l in lines) or seconds > 60:
        problems.append(f"{mode} {env}: exit {done.returncode} after {seconds:.1f} s, {done.stdout!r} {done.stderr[-2000:]!r}")
if problems:
    sys.exit("\n".join(problems))
print("finalize_mpi completes the collectives nobody waited for, and names the one a rank never issued")
