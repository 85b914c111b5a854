// core/inference_mode.h: InferenceMode, LibTorch's c10::InferenceMode: a guard under which ops record
// no autograd history and the tensors they make are inference tensors, which count no versions.
// Storages read the flag when they are made (core/storage.h); autograd refuses to save inference
// tensors (autograd/saved_variable.cpp).
#pragma once

#include "dispatch/local_dispatch_keys.h"
#include "util/non_copyable.h"

namespace strata {

namespace detail {
extern constinit thread_local bool tls_inference_mode;
}

// torch.is_inference_mode_enabled().
inline bool is_inference_mode_enabled() { return detail::tls_inference_mode; }

// Note [Inference tensors]
// Under InferenceMode grad mode is off, and every storage made on the thread is an inference storage:
// the tensors over it (the fresh outputs of ops, their views, factories' results) are inference
// tensors, as PyTorch's are, and a view of a normal tensor stays normal, since it shares a normal
// storage. An inference storage never bumps its version, so an in-place op on an inference tensor
// costs no atomic add; in exchange such a tensor must never meet autograd: an in-place write to one
// outside InferenceMode, saving one for backward, and requires_grad_ on one outside InferenceMode are
// errors, in PyTorch's words. In-place ops on normal tensors still bump their versions under the guard,
// as PyTorch's do, so autograd's "modified by an inplace operation" check stays sound for graphs made
// outside it. The flag lives on the storage because a version counter does (Note [Version counters
// live in the storage]): a tensor and its views share both. InferenceMode(false) inside the guard
// turns both flags back (grad mode on) for its scope.
class InferenceMode : NonCopyable {
 public:
  explicit InferenceMode(bool enabled = true)
      : was_enabled_(detail::tls_inference_mode), grad_mode_(DispatchKey::Autograd, enabled) {
    detail::tls_inference_mode = enabled;
  }
  ~InferenceMode() { detail::tls_inference_mode = was_enabled_; }

 private:
  bool was_enabled_;
  SetTransparentKeyGuard grad_mode_;  // Autograd transparent: grad mode off (Note [Transparent keys])
};

}  // namespace strata
