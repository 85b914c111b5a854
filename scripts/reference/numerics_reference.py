"""Reference numerics from real PyTorch for one SGD step of an MLP (the seed's experiment, generalised).

Usage: /usr/bin/python3 scripts/reference/numerics_reference.py --seed 0 --sizes 16,32,4 --batch 8 --lr 0.1 > ref.json
Prints the initial parameters, the batch, logits, loss, gradients and updated parameters.
"""
import argparse, json
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_model(seed, sizes):
    torch.manual_seed(seed)
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def make_batch(seed, batch, n_in, n_out):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, n_in, generator=g)
    y = torch.randint(0, n_out, (batch,), generator=g)
    return x, y


def flat(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


def parse_step_args():
    """The step's command line, shared with trace_reference.py: (args, layer sizes)."""
    p = argparse.ArgumentParser()
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sizes", type=str, default="16,32,4")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--lr", type=float, default=0.1)
    a = p.parse_args()
    torch.set_num_threads(1)
    return a, [int(s) for s in a.sizes.split(",")]


def main():
    a, sizes = parse_step_args()
    model = make_model(a.seed, sizes)
    x, y = make_batch(a.seed + 1, a.batch, sizes[0], sizes[-1])
    init = [flat(q) for q in model.parameters()]
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    grads = [flat(q.grad) for q in model.parameters()]
    torch.optim.SGD(model.parameters(), lr=a.lr).step()
    out = {
        "torch_version": torch.__version__,
        "seed": a.seed, "sizes": sizes, "batch": a.batch, "lr": a.lr,
        "x": flat(x), "y": [int(v) for v in y.tolist()],
        "init_params": init,
        "logits": flat(logits), "loss": float(loss),
        "grads": grads,
        "params_after": [flat(q) for q in model.parameters()],
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
