// ops/compute_in_float.cpp: widening float16 and bfloat16 tensors to float32 and rounding back (Note
// [float16 and bfloat16 compute in float], ops/compute_in_float.h).
#include "ops/compute_in_float.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "ops/native/elementwise.h"

namespace strata::ops::detail {

namespace {

// Whether t's elements fill [0, n) of its memory exactly once, in some order of dimensions, once its
// broadcast (stride 0) and size-1 dimensions are set aside; n is returned through `extent`.
bool dense_up_to_broadcast(const Tensor& t, std::int64_t& extent) {
  std::vector<std::pair<std::int64_t, std::int64_t>> dims;  // (stride, size)
  for (std::size_t d = 0; d < t.sizes().size(); ++d)
    if (t.sizes()[d] > 1 && t.strides()[d] != 0) dims.emplace_back(t.strides()[d], t.sizes()[d]);
  std::sort(dims.begin(), dims.end());
  extent = 1;
  for (const auto& [stride, size] : dims) {
    if (stride != extent) return false;
    extent *= size;
  }
  return true;
}

}  // namespace

Tensor widen_to_float(const Tensor& t) {
  std::int64_t extent = 0;
  if (t.numel() == 0 || !dense_up_to_broadcast(t, extent)) {
    Tensor out = strata::detail::make_contiguous_tensor(t.sizes(), ScalarType::Float32, Device::CPU);
    copy_elements(out, t);
    return out;
  }
  Tensor out = strata::detail::make_tensor(t.sizes(), t.strides(), ScalarType::Float32, Device::CPU);
  float* o = data_of<float>(out);
  visit_all_dtypes(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* x = data_of<T>(t);
    parallel_for(0, extent, kElementwiseGrain, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) o[i] = convert_element<float>(load_element(x + i));
    });
  });
  return out;
}

Tensor float_twin(const Tensor& out) {
  return strata::detail::make_tensor(out.sizes(), out.strides(), ScalarType::Float32, Device::CPU);
}

void round_into(const Tensor& out, const Tensor& wide) { copy_elements(out, wide); }

bool any_reduced_float(TensorList list) {
  return std::any_of(list.begin(), list.end(), [](const Tensor& t) { return is_reduced_argument(t); });
}

}  // namespace strata::ops::detail
