// autograd/row_slots.h: RowSlots, a fixed inline array whose length a derivative-table row fixes.
// A FormulaNode keeps one per kind of recorded value (arguments, geometry, saved tensors); the row,
// not the array, knows how many are in use (Note [A node's slots are sized by its row]).
#pragma once

#include <cstddef>
#include <new>
#include <utility>

namespace strata::autograd {

// Note [A node's slots are sized by its row]
// Every node of a row records the same number of non-tensor arguments, geometries and saved tensors,
// and the row (ResolvedRow) already holds those counts. So a FormulaNode keeps them in plain inline
// arrays and reads their lengths from its row: no size, capacity or heap pointer per array to set
// up, bump and check, and no heap fallback to test for when the node dies. The price is a fixed
// capacity per kind, checked once for every row when the derivative table resolves it
// (DerivativeTable::add): a row that needs more fails at registration, asking for a larger one.
template <typename T, std::size_t N>
class RowSlots {
 public:
  static constexpr std::size_t capacity = N;

  RowSlots() noexcept {}  // slots start unconstructed: the owner constructs and destroys them
  RowSlots(const RowSlots&) = delete;
  RowSlots& operator=(const RowSlots&) = delete;

  template <typename... Args>
  T& construct(std::size_t i, Args&&... args) {
    return *new (bytes_ + i * sizeof(T)) T(std::forward<Args>(args)...);
  }
  // Destroys slots [0, count), last first.
  void destroy(std::size_t count) noexcept {
    for (std::size_t i = count; i-- > 0;) (*this)[i].~T();
  }
  T& operator[](std::size_t i) noexcept { return *std::launder(reinterpret_cast<T*>(bytes_ + i * sizeof(T))); }
  const T& operator[](std::size_t i) const noexcept {
    return *std::launder(reinterpret_cast<const T*>(bytes_ + i * sizeof(T)));
  }

 private:
  alignas(T) unsigned char bytes_[N * sizeof(T)];
};

}  // namespace strata::autograd
