// autograd/grad_mode.h: whether ops record backward nodes on this thread (torch.is_grad_enabled),
// and the guards that change it. The autograd handler reads it on every op whose input requires grad.
#pragma once

namespace strata::autograd {

namespace detail {
extern constinit thread_local bool tls_grad_enabled;
}

inline bool is_grad_enabled() { return detail::tls_grad_enabled; }

// Sets grad mode for the guard's lifetime (torch.set_grad_enabled / enable_grad).
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled) : saved_(detail::tls_grad_enabled) { detail::tls_grad_enabled = enabled; }
  ~GradModeGuard() { detail::tls_grad_enabled = saved_; }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool saved_;
};

// torch.no_grad().
class NoGradGuard : public GradModeGuard {
 public:
  NoGradGuard() : GradModeGuard(false) {}
};

}  // namespace strata::autograd
