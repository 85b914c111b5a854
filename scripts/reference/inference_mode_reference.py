#!/usr/bin/env python3
"""torch.inference_mode on real PyTorch: which tensors are inference tensors, which versions move, and
the errors an inference tensor meets outside the guard. tests/autograd/test_inference_mode.cpp reads
the output, tests/golden/inference_mode_torch.json.

Run with Debian's python3-torch:
  /usr/bin/python3 scripts/reference/inference_mode_reference.py > tests/golden/inference_mode_torch.json
"""
import json
import torch


def error(f):
    try:
        f()
        return None
    except RuntimeError as e:
        return str(e)


out = {}
x = torch.ones(3, requires_grad=True)
normal = torch.ones(3)
with torch.inference_mode():
    y = x * 2
    out["inside"] = {"enabled": torch.is_inference_mode_enabled(), "grad_enabled": torch.is_grad_enabled(),
                     "output_requires_grad": y.requires_grad, "output_is_inference": y.is_inference(),
                     "view_of_normal_is_inference": normal[0:2].is_inference(),
                     "view_of_inference_is_inference": y.view(3).is_inference()}
    y.add_(1)  # allowed inside the guard
    normal.add_(1)
    out["inside"]["normal_version_after_add_"] = normal._version
    with torch.inference_mode(False):
        out["nested_false"] = {"enabled": torch.is_inference_mode_enabled(), "grad_enabled": torch.is_grad_enabled(),
                               "fresh_is_inference": torch.ones(1).is_inference()}
    out["restored"] = {"enabled": torch.is_inference_mode_enabled(), "grad_enabled": torch.is_grad_enabled()}
out["after"] = {"enabled": torch.is_inference_mode_enabled(), "grad_enabled": torch.is_grad_enabled(),
                "y": y.tolist(), "clone_is_inference": y.clone().is_inference()}
w = torch.ones(3, requires_grad=True)
out["errors"] = {"inplace_outside": error(lambda: y.add_(1)),
                 "saved_for_backward": error(lambda: y * w),
                 "requires_grad_outside": error(lambda: y.requires_grad_())}
out["not_saved_is_fine"] = (y + w).requires_grad
with torch.no_grad():
    out["no_grad_fresh_is_inference"] = torch.ones(1).is_inference()
print(json.dumps(out, indent=1, sort_keys=True))
