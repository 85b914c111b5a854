#!/usr/bin/env python3
"""tests/distributed/mpi_trace_check.py: strata-trace under `mpirun -np 2` runs its traced step with one
rank per process (Note [strata-trace under mpirun]): the report matches the one-process step, and
rank 0's sequences equal the thread backend's (tests/golden/data_parallel_seed_w2_seq.json).

usage: mpi_trace_check.py MPIRUN STRATA_TRACE GOLDEN"""
import json
import os
import subprocess
import sys

mpirun, exe, golden = sys.argv[1:4]
env = dict(os.environ, OMPI_MCA_btl="self,vader")
run = subprocess.run([mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2", exe, "--sequences"],
                     capture_output=True, text=True, env=env, timeout=240)
if run.returncode != 0:
    sys.exit(f"strata-trace under mpirun failed ({run.returncode}): {run.stderr}")
report = json.loads(run.stdout)
expected = json.load(open(golden))
problems = [key for key in ("forward_seq", "backward_seq", "optimizer_seq") if report[key] != expected[key]]
if report["traced_step_matches"] is not True:
    problems.append("traced_step_matches")
if problems:
    sys.exit("differs from the thread backend: " + ", ".join(problems))
print("strata-trace under mpirun -np 2: the thread backend's report")
