#!/usr/bin/env python3
"""The op sequences one rank of a data-parallel SGD step dispatches, for
tests/golden/data_parallel_seed_w2_seq.json.

Two ranks (processes on gloo) each build the seed's MLP (seeded by their rank; DDP broadcasts rank 0's
parameters), wrap it in DistributedDataParallel with its defaults and run one SGD step on their half of
the seed's batch, under trace_reference.py's per-phase dispatch mode. The
forward runs inside DDP's record_function("DistributedDataParallel.forward"); the backward reaches the
reducer (reducer.cpp): mul_out of each gradient into the flat bucket by 1/world_size, allreduce_ on
the bucket, and at the end an as_strided view of the bucket per parameter copied into its .grad.
record_function is patched to its 2.x form (_record_function_enter_new / _record_function_exit), as
trace_reference.py does.
Rank 0's sequences are printed, with the averaged gradients (equal on both ranks).

Run with Debian's python3-torch:  /usr/bin/python3 scripts/reference/data_parallel_reference.py
"""
import json
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

from numerics_reference import flat, make_batch, make_model
from trace_reference import Recorder  # per-phase log; importing it puts record_function in its 2.x form

SEED, SIZES, BATCH, LR, WORLD = 0, [16, 32, 4], 8, 0.1, 2


def rank_main(rank, init_file, out_file):
    dist.init_process_group("gloo", init_method="file://" + init_file, rank=rank, world_size=WORLD)
    model = make_model(rank, SIZES)
    x, y = make_batch(SEED + 1, BATCH, SIZES[0], SIZES[-1])
    share = BATCH // WORLD
    x, y = x[rank * share:(rank + 1) * share], y[rank * share:(rank + 1) * share]
    ddp = DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=LR)
    log = Recorder()
    with log:
        loss = F.cross_entropy(ddp(x), y)
        log.phase = "backward"
        loss.backward()
        log.phase = "optimizer"
        opt.step()
    if rank == 0:
        out = {"reference": "PyTorch " + torch.__version__ + " (gloo)", "world_size": WORLD}
        for phase, ops in log.seq.items():
            out[phase + "_seq"] = ops
        out["grads"] = [flat(p.grad) for p in model.parameters()]
        with open(out_file, "w") as f:
            json.dump(out, f)
    dist.destroy_process_group()


def main():
    with tempfile.TemporaryDirectory() as d:
        init_file, out_file = os.path.join(d, "init"), os.path.join(d, "out.json")
        mp.spawn(rank_main, args=(init_file, out_file), nprocs=WORLD)
        out = json.load(open(out_file))
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
