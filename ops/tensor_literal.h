// ops/tensor_literal.h: strata::tensor(values), LibTorch's torch::tensor and Python's torch.tensor(data):
// a new tensor holding a copy of C++ values, built outside dispatch and then handed to aten::lift_fresh,
// which is all a dispatch mode sees of it (Note [A tensor from values is lifted]).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <type_traits>
#include <vector>

#include "../core/tensor.h"

namespace strata {

// Note [A tensor from values is lifted]
// PyTorch 2.8's torch.tensor(data) fills a CPU tensor with every mode and subclass handler disabled
// (internal_new_from_data), then calls at::lift_fresh on it below autograd; lift_fresh(Tensor(a) self)
// -> Tensor(a) returns self. So a dispatch mode logs `$0 = aten.lift_fresh.default($0)` for each
// literal and nothing else, and a mode that owns its tensors replaces the constant with one of its
// own: FakeTensorMode returns a fake with the constant's sizes, strides and dtype (upstream's
// `lift_fns` branch, from_real_tensor), so a program that mixes literals with fakes runs as upstream's
// does. strata's tensor() is the same: tensor_of builds the data, then dispatches aten::lift_fresh;
// without a mode the call takes the unboxed fast path, which returns the tensor itself, so eager
// programs get the tensor they got before at the cost of one test. The op is internal (PyTorch has
// no torch.lift_fresh) and is called only on fresh tensors, which never require grad: the
// derivative row upstream writes (`self: grad`) would record a node on the input itself, which is
// returned, so strata's row records nothing and the result keeps the input's own history.

// The element types tensor() takes: the C++ types of strata's dtypes.
template <typename T>
inline constexpr bool is_tensor_element_v = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                            std::is_same_v<T, std::int64_t> || std::is_same_v<T, bool> ||
                                            std::is_same_v<T, std::int8_t> || std::is_same_v<T, Float16> ||
                                            std::is_same_v<T, BFloat16>;
namespace detail {
// A new contiguous CPU tensor of `values` with shape `sizes`, passed through aten::lift_fresh.
template <typename T>
Tensor tensor_of(ArrayRef<T> values, IntArrayRef sizes);  // instantiated for the element types above
[[noreturn]] void throw_ragged_rows(std::size_t expected, std::size_t got);
// aten::lift_fresh(self): self, or what a mode makes of it (FakeTensorMode: a fake).
Tensor lift_fresh(const Tensor& self);
}  // namespace detail

// A new contiguous CPU tensor holding a copy of `values` with shape `sizes` (an empty `sizes` makes
// a 0-d tensor of one value); without `sizes`, a 1-D tensor (PyTorch's torch.tensor(list)).
// Every tensor() overload checks its element type here, so tensor({std::complex<float>{}}) is a
// compile-time error naming the types it takes, never a link error.
template <typename T>
Tensor tensor(ArrayRef<T> values, IntArrayRef sizes) {
  static_assert(is_tensor_element_v<T>,
                "strata::tensor() takes float, double, std::int64_t, std::int8_t, bool, Float16 or BFloat16 elements; "
                "write integers as std::int64_t");
  return detail::tensor_of(values, sizes);
}
template <typename T>
Tensor tensor(std::initializer_list<T> values, IntArrayRef sizes) {
  return tensor(ArrayRef<T>(values), sizes);
}
template <typename T>
Tensor tensor(std::initializer_list<T> values) {
  const std::int64_t n = static_cast<std::int64_t>(values.size());
  return tensor(ArrayRef<T>(values), IntArrayRef(&n, 1));
}
// Integer literals make an int64 tensor, as LibTorch's torch::tensor({1, 2, 3}) and Python's do.
Tensor tensor(std::initializer_list<int> values);
template <typename T>
Tensor tensor(const std::vector<T>& values, IntArrayRef sizes) {
  return tensor(ArrayRef<T>(values), sizes);
}
template <typename T>
Tensor tensor(const std::vector<T>& values) {
  const std::int64_t n = static_cast<std::int64_t>(values.size());
  return tensor(ArrayRef<T>(values), IntArrayRef(&n, 1));
}
// A 2-D tensor from rows of equal length: tensor({{1.f, 2.f}, {3.f, 4.f}}).
template <typename T>
Tensor tensor(std::initializer_list<std::initializer_list<T>> rows) {
  static_assert(is_tensor_element_v<T>, "strata::tensor() takes float, double, std::int64_t or bool elements");
  const std::size_t columns = rows.size() == 0 ? 0 : rows.begin()->size();
  const auto values = std::make_unique<T[]>(rows.size() * columns);  // not std::vector: vector<bool> has no data()
  std::size_t n = 0;
  for (const auto& row : rows) {
    if (row.size() != columns) [[unlikely]] detail::throw_ragged_rows(columns, row.size());
    for (const T& v : row) values[n++] = v;
  }
  const std::int64_t shape[2] = {static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(columns)};
  return tensor(ArrayRef<T>(values.get(), n), IntArrayRef(shape, 2));
}

}  // namespace strata
