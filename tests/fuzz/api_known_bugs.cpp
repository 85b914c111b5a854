// tests/fuzz/api_known_bugs.cpp: the filters of the skip-known-bugs mode (see the header).
#include "tests/fuzz/api_known_bugs.h"

#include <cmath>

#include "core/interposer.h"
#include "ops/functions.h"

namespace strata::fuzz::known_bugs {

bool sum_to_longer_shape(const Tensor& self, IntArrayRef shape) {
  return self.defined() && static_cast<std::int64_t>(shape.size()) > self.dim();
}

bool storage_less_cpu_tensor(const Tensor& t) {
  return t.defined() && !t.subclass() && t.device() == Device::CPU && !t.impl()->has_storage();
}

void initialise_empty_bool(std::string_view op_name, const Tensor& out) {
  if (!out.defined() || out.dtype() != ScalarType::Bool || op_name.find("empty") == std::string_view::npos) return;
  if (out.subclass()) {  // a wrapper's handler made the inner tensors
    for (const Tensor& inner : out.subclass()->flatten().inner) initialise_empty_bool(op_name, inner);
    return;
  }
  if (!out.impl()->has_storage()) return;
  // The whole storage, gaps between strided elements included.
  const std::int64_t bytes = static_cast<std::int64_t>(out.impl()->storage()->nbytes());
  zero_(as_strided(out, {bytes}, {1}, 0));
}

namespace {
bool out_of_int64_range(const Tensor& t) {
  if (!t.defined() || !is_floating_point(t.dtype())) return false;
  if (t.subclass()) {
    for (const Tensor& inner : t.subclass()->flatten().inner)
      if (out_of_int64_range(inner)) return true;
    return false;
  }
  if (!t.impl()->has_storage() || t.numel() > kMaxElements) return false;
  for (double v : t.to_vector<double>())
    if (!(std::abs(v) <= 1099511627776.0)) return true;  // NaN fails every comparison
  return false;
}
}  // namespace

bool float_to_int64(const std::vector<Tensor>& tensors, bool int64_wanted) {
  bool wanted = int64_wanted;
  for (const Tensor& t : tensors) wanted |= t.defined() && t.dtype() == ScalarType::Int64;
  if (!wanted) return false;
  for (const Tensor& t : tensors)
    if (out_of_int64_range(t)) return true;
  return false;
}

bool print_huge(const Tensor& t) { return t.defined() && t.numel() > kMaxElements; }

bool softmax_over_empty(std::string_view op_name, const std::vector<Tensor>& tensors) {
  if (op_name.find("softmax") == std::string_view::npos && op_name.find("cross_entropy") == std::string_view::npos)
    return false;
  for (const Tensor& t : tensors) {
    if (!t.defined() || t.numel() != 0) continue;
    std::int64_t product = 1;
    for (std::int64_t s : t.sizes())
      if (s != 0 && mul_overflows(product, s, &product)) return true;
    if (product > kMaxElements) return true;
  }
  return false;
}

bool mul_inplace_cycle(std::string_view op_name, const std::vector<Tensor>& tensors) {
  if (op_name != "aten.mul_.Tensor" || tensors.empty() || !tensors[0].defined()) return false;
  const Tensor& self = tensors[0];
  if (self.requires_grad() && !self.is_leaf()) return true;
  if (!self.subclass()) return false;
  return mul_inplace_cycle(op_name, self.subclass()->flatten().inner);  // the wrapper's handler runs it on these
}

}  // namespace strata::fuzz::known_bugs
