// ops/native/elementwise.cpp: broadcast strides, the converting copy, and the copy an Operand makes.
#include "ops/native/elementwise.h"

#include <cstring>
#include <type_traits>

namespace strata::ops {

DimVector broadcast_strides(const Tensor& t, IntArrayRef shape) {
  // Callers broadcast t to shape, so it has no more dimensions (the difference below would wrap).
  STRATA_INTERNAL_ASSERT(shape.size() >= static_cast<std::size_t>(t.dim()), "broadcast_strides: a ", t.dim(),
                         "-d tensor does not broadcast to ", shape_str(shape));
  DimVector out(shape.size(), 0);
  const std::size_t offset = shape.size() - static_cast<std::size_t>(t.dim());
  for (std::size_t d = 0; d < static_cast<std::size_t>(t.dim()); ++d)
    out[offset + d] = t.sizes()[d] == 1 ? 0 : t.strides()[d];
  return out;
}

void copy_elements(const Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;  // Note [An empty tensor's kernel returns at once]
  visit_all_dtypes(dst.dtype(), [&](auto dz) {
    using D = decltype(dz);
    visit_all_dtypes(src.dtype(), [&](auto sz) {
      using S = decltype(sz);
      D* o = data_of<D>(dst);
      const S* x = data_of<S>(src);
      if (dst.is_contiguous() && src.is_contiguous() && dst.numel() == src.numel()) {
        parallel_for(0, dst.numel(), kElementwiseGrain, [&](std::int64_t b, std::int64_t e) {
          for (std::int64_t i = b; i < e; ++i) o[i] = convert_element<D>(load_element(x + i));
        });
        return;
      }
      // A contiguous row repeated down a contiguous destination (addmm's bias): copy row by row.
      const std::int64_t row = dst.dim() > 0 ? dst.sizes().back() : 1;
      if (dst.is_contiguous() && src.is_contiguous() && src.numel() == row && src.dim() <= dst.dim() &&
          (src.dim() == 0 || src.sizes().back() == row)) {
        const std::int64_t rows = dst.numel() / std::max<std::int64_t>(row, 1);
        for (std::int64_t r = 0; r < rows; ++r) {
          if constexpr (std::is_same_v<D, S>) std::memcpy(o + r * row, x, static_cast<std::size_t>(row) * sizeof(D));
          else for (std::int64_t j = 0; j < row; ++j) o[r * row + j] = convert_element<D>(load_element(x + j));
        }
        return;
      }
      StridedLoop<2> loop(dst.sizes(), {DimVector(dst.strides()), broadcast_strides(src, dst.sizes())});
      loop.for_each([&](const std::array<std::int64_t, 2>& off) { o[off[0]] = convert_element<D>(load_element(x + off[1])); });
    });
  });
}

void Operand::copy_as(ScalarType dtype) {
  copy_ = strata::detail::make_contiguous_tensor(tensor_->sizes(), dtype, tensor_->device());
  copy_elements(copy_, *tensor_);
  tensor_ = &copy_;
}

}  // namespace strata::ops
