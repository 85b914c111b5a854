// core/local_dispatch_keys.h: the thread-local included and excluded key sets, and the RAII guards
// that are the only way to change them, so a throwing kernel or mode leaves them as it found them.
// The guards are inline: the autograd handler enters one on every recorded op.
#pragma once

#include "core/dispatch_key.h"

namespace strata {

struct LocalDispatchKeys {
  DispatchKeySet included;  // added to every op's keys on this thread (e.g. Python while a mode is active)
  DispatchKeySet excluded;  // removed from every op's keys (e.g. Autograd below the autograd handler)
};

namespace detail {
extern constinit thread_local LocalDispatchKeys tls_local_dispatch_keys;

// Sets one bit of `set` for the guard's lifetime, then restores that bit (and only that bit).
template <DispatchKeySet LocalDispatchKeys::*Field>
class KeyBitGuard {
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
  KeyBitGuard(const KeyBitGuard&) = delete;
  KeyBitGuard& operator=(const KeyBitGuard&) = delete;

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

// Sets whether `key` is included for the guard's lifetime (the mode stack uses it for Python).
class SetIncludedKeyGuard : detail::KeyBitGuard<&LocalDispatchKeys::included> {
 public:
  SetIncludedKeyGuard(DispatchKey key, bool included) : KeyBitGuard(key, included) {}
};

}  // namespace strata
