// ops/composite_op.cpp: registration of the composite ops (Note [A composite op decomposes at
// Autograd], composite_op.h) and the list that says which ops they are.
#include "ops/composite_op.h"

#include <algorithm>
#include <mutex>
#include <vector>

namespace strata::ops {

namespace {
struct Composites {
  std::mutex mutex;
  std::vector<std::uint32_t> indices;  // op indices, registered once each
};
Composites& composites() {
  static Composites c;
  return c;
}
}  // namespace

OperatorHandle def_composite(Dispatcher& d, std::string_view ns, std::string_view schema, KernelFunction decomposition) {
  const OperatorHandle op = d.def(ns, schema, decomposition, decomposition);
  d.register_kernel(op, DispatchKey::Autograd, decomposition);
  Composites& c = composites();
  const std::lock_guard<std::mutex> lock(c.mutex);
  c.indices.push_back(op.index());
  return op;
}

bool is_composite(const OperatorHandle& op) {
  Composites& c = composites();
  const std::lock_guard<std::mutex> lock(c.mutex);
  return std::find(c.indices.begin(), c.indices.end(), op.index()) != c.indices.end();
}

}  // namespace strata::ops
