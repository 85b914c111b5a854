// core/dispatch/local_dispatch_keys.h: the thread-local included and excluded key sets, and the RAII guards
// that are the only way to change them, so a throwing kernel or mode leaves them as it found them.
// The guards are inline: the autograd handler enters one on every recorded op.
#pragma once

#include "../util/non_copyable.h"
#include "dispatch_key.h"

namespace strata {

// Note [Transparent keys]
// A key is transparent on a thread while its handler would do nothing but redispatch: Autograd
// while grad mode is off (torch.no_grad). The key still runs on the boxed path, as in PyTorch, so
// dispatch traces and tables are unchanged; only the unboxed fast path (Note [Unboxed fast path])
// may skip it, which makes a no-grad forward through parameters that require grad as cheap as one
// through plain tensors. The grad-mode flag is this bit, so the two cannot disagree.
struct LocalDispatchKeys {
  DispatchKeySet included;     // added to every op's keys on this thread (e.g. Python while a mode is active)
  DispatchKeySet excluded;     // removed from every op's keys (e.g. Autograd below the autograd handler)
  DispatchKeySet transparent;  // handlers that would only redispatch (Note [Transparent keys])
};

namespace detail {
extern constinit thread_local LocalDispatchKeys tls_local_dispatch_keys;

// Sets one bit of `set` for the guard's lifetime, then restores that bit (and only that bit).
template <DispatchKeySet LocalDispatchKeys::*Field>
class KeyBitGuard : NonCopyable {
 public:
  KeyBitGuard(DispatchKey key, bool on) : key_(key) {
    DispatchKeySet& set = tls_local_dispatch_keys.*Field;
    was_on_ = set.has(key);
    set = on ? set.add(key) : set.remove(key);
  }
  ~KeyBitGuard() {
    DispatchKeySet& set = tls_local_dispatch_keys.*Field;
    set = was_on_ ? set.add(key_) : set.remove(key_);
  }

 private:
  DispatchKey key_;
  bool was_on_;
};
}  // namespace detail

inline const LocalDispatchKeys& local_dispatch_keys() { return detail::tls_local_dispatch_keys; }

// Adds `key` to the thread's excluded set for the guard's lifetime.
class ExcludeKeyGuard : detail::KeyBitGuard<&LocalDispatchKeys::excluded> {
 public:
  explicit ExcludeKeyGuard(DispatchKey key) : KeyBitGuard(key, true) {}
};

// Adds `key` to the thread's included set for the guard's lifetime.
class IncludeKeyGuard : detail::KeyBitGuard<&LocalDispatchKeys::included> {
 public:
  explicit IncludeKeyGuard(DispatchKey key) : KeyBitGuard(key, true) {}
};

// Sets whether `key` is transparent for the guard's lifetime (grad mode uses it for Autograd).
class SetTransparentKeyGuard : detail::KeyBitGuard<&LocalDispatchKeys::transparent> {
 public:
  SetTransparentKeyGuard(DispatchKey key, bool transparent) : KeyBitGuard(key, transparent) {}
};

// Sets whether `key` is included for the guard's lifetime (the mode stack uses it for Python).
class SetIncludedKeyGuard : detail::KeyBitGuard<&LocalDispatchKeys::included> {
 public:
  SetIncludedKeyGuard(DispatchKey key, bool included) : KeyBitGuard(key, included) {}
};

}  // namespace strata
