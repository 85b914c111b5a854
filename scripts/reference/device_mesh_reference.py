#!/usr/bin/env python3
"""Device mesh group names and shard sizes by upstream's rules, for tests/distributed/test_device_mesh.cpp
and tests/distributed/test_shard_layout.cpp.

Group names: PyTorch 2.8's DeviceMesh._init_process_groups calls new_group once per row of
mesh.swapdims(-1, dim).reshape(-1, mesh.size(dim)), dimension by dimension, and new_group names each
group by the world's counter (_process_group_name: "1", "2", ... after the world's "0"); a 1-D mesh of
the whole world uses the world group. This prints, for each mesh, each rank's group name and member
list per dimension. torch.distributed is not initialised: the rows come from the same tensor ops.

Shard sizes: torch.chunk's pieces (padded by _split_tensor to ceil(n / k)) for sizes 0..13 over 1..6
chunks.

Run with Debian's python3-torch:  /usr/bin/python3 scripts/reference/device_mesh_reference.py
"""
import torch


def mesh_groups(shape, world_size):
    mesh = torch.arange(torch.Size(shape).numel()).view(shape)
    count = 1  # "0" is the world
    names = {}  # rank -> [(name, members)] per dim
    if mesh.ndim == 1 and mesh.numel() == world_size:
        for r in range(world_size):
            names[r] = [("0", list(range(world_size)))]
        return names
    for dim in range(mesh.ndim):
        rows = mesh.swapdims(-1, dim).reshape(-1, mesh.size(dim))
        for row in rows:
            members = row.tolist()
            name = str(count)
            count += 1
            for r in members:
                names.setdefault(r, []).append((name, members))
    return names


for shape, world in [((8,), 8), ((4,), 8), ((4, 2), 8), ((2, 2, 2), 8), ((2, 3, 2), 12)]:
    print(f"mesh {shape} over {world}:")
    groups = mesh_groups(shape, world)
    for r in sorted(groups):
        print(f"  rank {r}: " + "; ".join(f"{n} {m}" for n, m in groups[r]))

print("chunk pieces (size, chunks): sizes")
for n in range(0, 14):
    for k in range(1, 7):
        pieces = [c.size(0) for c in torch.arange(n).chunk(k)] if n else [0] * k
        pieces += [0] * (k - len(pieces))
        print(f"  ({n}, {k}): {pieces}")
