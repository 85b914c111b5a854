// core/dispatch/dispatch_key.h: dispatch keys in the order they run, and key sets as a 64-bit bitset.
// An op runs the highest-priority key in its effective key set; a key's handler removes itself (and
// every key above it) and redispatches to the rest. See Note [Dispatch keys].
#pragma once

#include <bit>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "../device.h"

namespace strata {

// Note [Dispatch keys]
// The keys are declared in the order they run, like PyTorch's functionality keys seen from the top:
//   Autograd  records a backward node when an input requires grad (autograd/autograd_fallback.cpp)
//   Python    the interposer: dispatch modes and wrapper tensor subclasses (core/interpose/interposer.h)
//   Meta, CPU backends: shape-only meta functions, or Eigen kernels
// Meta outranks CPU, as in PyTorch, so a meta tensor mixed with a CPU 0-d tensor (a wrapped number)
// runs the meta function and a CPU kernel only ever sees tensors with data.
// `Python` keeps PyTorch's name so traces read the same as PyTorch's; no Python is involved. It is where
// PyTorch calls TorchDispatchMode.__torch_dispatch__ and a subclass's __torch_dispatch__, and strata
// calls a C++ DispatchMode or TensorSubclass at the same point.
// Unlike PyTorch, a tensor carries the Autograd key only while it requires grad: a plain tensor skips
// the autograd hop entirely, which keeps the no-grad path of a tiny op short (see README "Choices").
enum class DispatchKey : std::uint8_t { Autograd, Python, Meta, CPU };
inline constexpr int kNumDispatchKeys = 4;

std::string_view key_name(DispatchKey key);
inline std::ostream& operator<<(std::ostream& out, DispatchKey key) { return out << key_name(key); }

class DispatchKeySet {
 public:
  constexpr DispatchKeySet() = default;
  constexpr explicit DispatchKeySet(DispatchKey key) : bits_(bit(key)) {}
  constexpr DispatchKeySet(std::initializer_list<DispatchKey> keys) {
    for (DispatchKey k : keys) bits_ |= bit(k);
  }
  static constexpr DispatchKeySet from_raw(std::uint64_t bits) {
    DispatchKeySet ks;
    ks.bits_ = bits;
    return ks;
  }

  constexpr std::uint64_t raw() const { return bits_; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr bool has(DispatchKey key) const { return (bits_ & bit(key)) != 0; }
  constexpr bool has_any(DispatchKeySet other) const { return (bits_ & other.bits_) != 0; }
  constexpr DispatchKeySet add(DispatchKey key) const { return from_raw(bits_ | bit(key)); }
  constexpr DispatchKeySet remove(DispatchKey key) const { return from_raw(bits_ & ~bit(key)); }
  constexpr DispatchKeySet operator|(DispatchKeySet o) const { return from_raw(bits_ | o.bits_); }
  constexpr DispatchKeySet operator&(DispatchKeySet o) const { return from_raw(bits_ & o.bits_); }
  constexpr DispatchKeySet operator-(DispatchKeySet o) const { return from_raw(bits_ & ~o.bits_); }
  constexpr bool operator==(const DispatchKeySet&) const = default;

  // The key that runs first. Precondition: not empty.
  constexpr DispatchKey highest_priority() const {
    return static_cast<DispatchKey>(std::countr_zero(bits_));
  }
  // The keys that run after `key` (what a handler at `key` redispatches to).
  constexpr DispatchKeySet after(DispatchKey key) const {
    return from_raw(bits_ & ~((bit(key) << 1) - 1));
  }

  std::string str() const;  // "[Autograd, CPU]"

 private:
  static constexpr std::uint64_t bit(DispatchKey key) { return std::uint64_t{1} << static_cast<int>(key); }
  std::uint64_t bits_ = 0;
};

inline std::ostream& operator<<(std::ostream& out, DispatchKeySet ks) { return out << ks.str(); }

inline constexpr DispatchKeySet kBackendKeys{DispatchKey::CPU, DispatchKey::Meta};
inline constexpr DispatchKey backend_key(Device d) {
  return d == Device::CPU ? DispatchKey::CPU : DispatchKey::Meta;
}

}  // namespace strata
