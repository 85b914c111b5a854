// core/sizes_and_strides.h: a tensor's sizes and strides in one buffer (PyTorch's c10 class of the
// same name plays this role). Up to five dimensions live inline; more take one heap array holding
// both. See Note [Sizes and strides share one buffer].
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "util/array_ref.h"

namespace strata {

// Note [Sizes and strides share one buffer]
// The sizes and strides of one tensor always have the same length and change together, so one count
// and one allocation serve both: a fresh tensor initialises one header, a dead one tests one buffer
// for a heap allocation, and a copy of an inline geometry is one fixed-size copy (two DimVectors
// would each carry a pointer, a size, a capacity and five inline elements).
class SizesAndStrides {
 public:
  static constexpr std::size_t kInline = 5;

  // c10's default: one dimension of size 0 and stride 1 (the undefined tensor's geometry, Note [An
  // undefined tensor points at a sentinel]). constexpr, so the sentinel is constant-initialised.
  constexpr SizesAndStrides() : size_(1), inline_{0, 0, 0, 0, 0, 1} {}
  // `ndim` dimensions, their values not yet written (fill sizes_data() and strides_data()).
  explicit SizesAndStrides(std::size_t ndim) : size_(ndim) {
    if (ndim > kInline) [[unlikely]] allocate();
  }
  SizesAndStrides(const SizesAndStrides& other) : size_(other.size_) {
    if (other.is_inline()) [[likely]] {
#pragma GCC diagnostic push
#ifndef __clang__  // a gcc-only warning
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
      std::memcpy(inline_, other.inline_, sizeof(inline_));  // unused slots too: one fixed-size copy
#pragma GCC diagnostic pop
    } else {
      allocate();
      std::memcpy(data_, other.data_, 2 * size_ * sizeof(std::int64_t));
    }
  }
  SizesAndStrides& operator=(const SizesAndStrides&) = delete;
  ~SizesAndStrides() {
    if (!is_inline()) delete[] data_;
  }

  std::size_t size() const noexcept { return size_; }
  IntArrayRef sizes() const noexcept { return {data_, size_}; }
  IntArrayRef strides() const noexcept { return {strides_, size_}; }
  std::int64_t* sizes_data() noexcept { return data_; }
  std::int64_t* strides_data() noexcept { return strides_; }

 private:
  bool is_inline() const noexcept { return data_ == inline_; }
  void allocate() {
    data_ = new std::int64_t[2 * size_];
    strides_ = data_ + size_;
  }

  std::int64_t* data_ = inline_;              // the sizes
  std::int64_t* strides_ = inline_ + kInline;
  std::size_t size_;
  std::int64_t inline_[2 * kInline];
};

}  // namespace strata
