// core/util/array_ref.h: ArrayRef, a non-owning view of contiguous elements (like c10::ArrayRef).
// Unlike std::span in C++20 it binds to a braced list, so view(x, {4, 8}) reads as in PyTorch; the
// list lives until the end of the full expression, which covers any call it is passed to.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <initializer_list>
#include <type_traits>
#include <utility>
#include <vector>

namespace strata {

template <typename T>
class ArrayRef {
 public:
  constexpr ArrayRef() = default;
  constexpr ArrayRef(const T* data, std::size_t size) : data_(data), size_(size) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"  // intended: see the file comment
#endif
  constexpr ArrayRef(std::initializer_list<T> list) : data_(list.begin()), size_(list.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  ArrayRef(const std::vector<T>& v) : data_(v.data()), size_(v.size()) {}
  template <std::size_t N>
  constexpr ArrayRef(const std::array<T, N>& a) : data_(a.data()), size_(N) {}
  // Any other contiguous container of T with data() and size() (SmallVector, std::span). Only a
  // container of T converts: a looser test lets overload resolution consider, say, a vector of
  // strings for an ArrayRef<int64_t> parameter and fail inside this body instead of declining.
  template <typename C, typename = std::enable_if_t<
                            std::is_convertible_v<decltype(std::declval<const C&>().data()), const T*> &&
                            !std::is_same_v<C, ArrayRef> && !std::is_same_v<C, std::vector<T>>>>
  constexpr ArrayRef(const C& c) : data_(c.data()), size_(c.size()) {}

  constexpr const T* data() const { return data_; }
  constexpr std::size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const T* begin() const { return data_; }
  constexpr const T* end() const { return data_ + size_; }
  constexpr const T& operator[](std::size_t i) const { return data_[i]; }
  constexpr const T& front() const { return data_[0]; }
  constexpr const T& back() const { return data_[size_ - 1]; }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }

  friend bool operator==(ArrayRef a, ArrayRef b) {
    if (a.size_ != b.size_) return false;
    for (std::size_t i = 0; i < a.size_; ++i)
      if (!(a.data_[i] == b.data_[i])) return false;
    return true;
  }

 private:
  const T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace strata
