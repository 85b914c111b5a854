// core/util/small_vector.h: a vector that keeps its first N elements inline (no heap allocation).
// Used for sizes/strides (DimVector) and for the boxed argument stack, where a heap allocation per op
// would dominate a tiny op's cost. Not a general container: no insert/erase in the middle.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <new>

#include "array_ref.h"
#include <type_traits>
#include <utility>

namespace strata {

template <typename T, std::size_t N>
class SmallVector {
 public:
  using value_type = T;
  using size_type = std::size_t;
  using reference = T&;
  using const_reference = const T&;
  using iterator = T*;
  using const_iterator = const T*;

  // User-provided, so that value-initialisation (`{}`, `T()`) does not zero the inline bytes first.
  SmallVector() noexcept {}
  SmallVector(std::initializer_list<T> values) { assign(values.begin(), values.end()); }
  explicit SmallVector(ArrayRef<T> values) { assign(values.begin(), values.end()); }
  SmallVector(std::size_t count, const T& value) {
    reserve(count);
    for (std::size_t i = 0; i < count; ++i) new (data_ + i) T(value);
    size_ = count;
  }
  SmallVector(const SmallVector& other) {
    if constexpr (std::is_trivially_copyable_v<T>) {
      if (other.size_ <= N) {  // one fixed-size copy; a heap buffer holds at least 2N elements
        copy_inline_bytes(other.data_);
        size_ = other.size_;
        return;
      }
    }
    assign(other.begin(), other.end());
  }
  SmallVector(SmallVector&& other) noexcept { take(std::move(other)); }
  SmallVector& operator=(const SmallVector& other) {
    if (this != &other) {
      clear();
      assign(other.begin(), other.end());
    }
    return *this;
  }
  SmallVector& operator=(SmallVector&& other) noexcept {
    if (this != &other) {
      destroy();
      take(std::move(other));
    }
    return *this;
  }
  ~SmallVector() {
    // As clear(), without storing a size nobody will read.
    if constexpr (!std::is_trivially_destructible_v<T>)
      for (T* p = data_ + size_; p != data_;) (--p)->~T();  // last first, as pop_back would
    release();
  }

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  T* begin() noexcept { return data_; }
  T* end() noexcept { return data_ + size_; }
  const T* begin() const noexcept { return data_; }
  const T* end() const noexcept { return data_ + size_; }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  T& front() noexcept { return data_[0]; }
  const T& front() const noexcept { return data_[0]; }
  T& back() noexcept { return data_[size_ - 1]; }
  const T& back() const noexcept { return data_[size_ - 1]; }
  operator ArrayRef<T>() const noexcept { return {data_, size_}; }

  template <typename... Args>
  T& emplace_back(Args&&... args) {
    if (size_ == capacity_) grow(capacity_ * 2);
    T* slot = new (data_ + size_) T(std::forward<Args>(args)...);
    ++size_;
    return *slot;
  }
  void push_back(const T& value) { emplace_back(value); }
  void push_back(T&& value) { emplace_back(std::move(value)); }
  void pop_back() noexcept { data_[--size_].~T(); }
  void clear() noexcept { truncate(0); }
  // Drops elements from the end until `count` remain.
  void truncate(std::size_t count) noexcept {
    if constexpr (std::is_trivially_destructible_v<T>) {
      if (size_ > count) size_ = count;
    } else {
      if (size_ <= count) return;
      for (T* p = data_ + size_; p != data_ + count;) (--p)->~T();  // last first, as pop_back would
      size_ = count;
    }
  }
  // Growing by resize doubles the capacity at least, as push_back does, so a loop that grows a vector
  // one element at a time stays linear (an exact reserve per step made a 300k-node backward pass
  // quadratic once). reserve is exact, as std::vector's is.
  void resize(std::size_t count, const T& value = T()) {
    truncate(count);
    reserve_amortized(count);
    while (size_ < count) emplace_back(value);
  }
  // Sets the size to `count` leaving new elements uninitialised; for trivial element types only.
  void resize_for_overwrite(std::size_t count) {
    static_assert(std::is_trivially_default_constructible_v<T> && std::is_trivially_destructible_v<T>);
    reserve_amortized(count);
    size_ = count;
  }
  void reserve(std::size_t count) {
    if (count > capacity_) grow(count);
  }
  std::size_t capacity() const noexcept { return capacity_; }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  bool is_inline() const noexcept { return data_ == inline_data(); }
  T* inline_data() noexcept { return std::launder(reinterpret_cast<T*>(inline_)); }
  const T* inline_data() const noexcept { return std::launder(reinterpret_cast<const T*>(inline_)); }

  void reserve_amortized(std::size_t count) {
    if (count > capacity_) grow(std::max(count, 2 * capacity_));
  }
  template <typename It>
  void assign(It first, It last) {
    const auto n = static_cast<std::size_t>(last - first);
    reserve(size_ + n);
    if constexpr (std::is_trivially_copyable_v<T> && std::is_pointer_v<It>) {
      for (std::size_t i = 0; i < n; ++i) data_[size_ + i] = first[i];  // inline: sizes are short
      size_ += n;
    } else {
      for (; first != last; ++first) emplace_back(*first);
    }
  }
  void grow(std::size_t count) {
    count = std::max<std::size_t>(count, 2 * N);
    T* fresh = static_cast<T*>(::operator new(count * sizeof(T), std::align_val_t{alignof(T)}));
    relocate(data_, data_ + size_, fresh);
    release();
    data_ = fresh;
    capacity_ = count;
  }
  // Note [Relocation is not a write]
  // Growing, or moving a vector whose elements are inline, moves every element to new memory and
  // destroys the old one: the same values in a new place. An element type that keeps state a move
  // must not carry (IValue's handler-argument mark) says how to relocate it with a member
  // `relocate_to(void* to) noexcept`, which constructs the element at `to` and destroys itself.
  static void relocate(T* first, T* last, T* to) noexcept {
    if constexpr (requires(T& v, void* p) { v.relocate_to(p); }) {
      for (; first != last; ++first, ++to) first->relocate_to(to);
    } else {
      std::uninitialized_move(first, last, to);
      std::destroy(first, last);
    }
  }
  void release() noexcept {
    if (!is_inline()) ::operator delete(data_, std::align_val_t{alignof(T)});
  }
  void destroy() noexcept {
    clear();
    release();
    data_ = inline_data();
    capacity_ = N;
  }
  // Fills the inline buffer from N elements' worth of bytes at `source`, for a trivially copyable T:
  // fixed size, no loop or branch. Bytes past the source's size are copied but never read: copying
  // indeterminate bytes as unsigned char is defined behaviour.
  void copy_inline_bytes(const void* source) noexcept {
#pragma GCC diagnostic push
#ifndef __clang__  // a gcc-only warning
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
    std::memcpy(inline_, source, sizeof(inline_));
#pragma GCC diagnostic pop
  }
  void take(SmallVector&& other) noexcept {
    if (other.is_inline()) {
      data_ = inline_data();
      capacity_ = N;
      if constexpr (std::is_trivially_copyable_v<T>) {
        copy_inline_bytes(other.inline_);
        size_ = other.size_;
        other.clear();
      } else {
        relocate(other.begin(), other.end(), data_);
        size_ = other.size_;
        other.size_ = 0;
      }
    } else {
      data_ = other.data_;
      size_ = other.size_;
      capacity_ = other.capacity_;
      other.data_ = other.inline_data();
      other.size_ = 0;
      other.capacity_ = N;
    }
  }

  alignas(T) unsigned char inline_[N * sizeof(T)];
  T* data_ = inline_data();
  std::size_t size_ = 0;
  std::size_t capacity_ = N;
};

}  // namespace strata
