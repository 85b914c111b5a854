#!/usr/bin/env python3
"""load_state_dict's messages from real PyTorch, for tests/nn/test_state_dict.cpp: missing and
unexpected keys (strict), a size mismatch (always an error), and what strict=False skips.

Run with Debian's python3-torch:  /usr/bin/python3 scripts/reference/state_dict_reference.py
"""
import torch


def attempt(model, state, strict=True):
    try:
        print(repr(model.load_state_dict(state, strict=strict)))
    except RuntimeError as e:
        print(repr(str(e)))


def main():
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    print(list(model.state_dict().keys()))
    state = dict(model.state_dict())
    del state["0.bias"], state["2.weight"]
    state["3.weight"] = torch.zeros(1)
    state["extra"] = torch.zeros(1)
    state["0.weight"] = torch.zeros(5, 4)
    attempt(model, state)
    attempt(model, state, strict=False)
    partial = dict(model.state_dict())
    del partial["0.bias"]
    partial["0.extra.x"] = torch.zeros(1)
    attempt(model, partial, strict=False)
    attempt(model, partial)


if __name__ == "__main__":
    main()
