// core/dispatch/dispatch_key.cpp: key names and key-set printing.
#include "core/dispatch/dispatch_key.h"

namespace strata {

std::string_view key_name(DispatchKey key) {
  switch (key) {
    case DispatchKey::Autograd: return "Autograd";
    case DispatchKey::Python: return "Python";
    case DispatchKey::CPU: return "CPU";
    case DispatchKey::Meta: return "Meta";
  }
  return "?";
}

std::string DispatchKeySet::str() const {
  std::string out = "[";
  for (int k = 0; k < kNumDispatchKeys; ++k) {
    if (!has(static_cast<DispatchKey>(k))) continue;
    if (out.size() > 1) out += ", ";
    out += key_name(static_cast<DispatchKey>(k));
  }
  return out + "]";
}

}  // namespace strata
