// autograd/grad_mode.h: whether ops record backward nodes on this thread (torch.is_grad_enabled),
// and the guards that change it. The autograd handler reads it on every op whose input requires grad.
#pragma once

#include "../core/dispatch/local_dispatch_keys.h"

namespace strata::autograd {

// Grad mode is off exactly while the Autograd key is transparent (Note [Transparent keys]).
inline bool is_grad_enabled() { return !local_dispatch_keys().transparent.has(DispatchKey::Autograd); }

// Sets grad mode for the guard's lifetime (torch.set_grad_enabled / enable_grad).
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled) : transparent_(DispatchKey::Autograd, !enabled) {}

 private:
  SetTransparentKeyGuard transparent_;
};

// torch.no_grad().
class NoGradGuard : public GradModeGuard {
 public:
  NoGradGuard() : GradModeGuard(false) {}
};

}  // namespace strata::autograd

namespace strata {
// LibTorch's spelling: torch::NoGradGuard is at the top level.
using autograd::NoGradGuard;
}  // namespace strata
