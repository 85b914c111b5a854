// core/small_object_pool.h: a per-thread cache of freed small blocks (TensorImpls, fresh tensors'
// storage blocks, boxed int lists), by 64-byte size class up to 1 KiB. A tiny op allocates and frees
// a few such blocks; taking them from a thread-local list instead of malloc/free saves about 80
// instructions a pair. Large blocks (128 KiB to 64 MiB, e.g. activations) are kept too, a few per
// thread, so that a training loop does not fault in fresh pages every step (Note [Large blocks are
// recycled]). Blocks freed on another thread go to that thread's cache. Under
// AddressSanitizer the pool is off, so use-after-free is still caught.
#pragma once

#include <cstddef>

namespace strata::pool {

// Memory for `bytes` bytes, 16-byte aligned (like operator new).
void* allocate(std::size_t bytes);
// Returns memory from allocate(bytes), with the same `bytes`.
void deallocate(void* p, std::size_t bytes) noexcept;

// A standard allocator over the pool, for std::allocate_shared of small objects (autograd nodes).
template <typename T>
struct Allocator {
  using value_type = T;
  Allocator() = default;
  template <typename U>
  Allocator(const Allocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(pool::allocate(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { pool::deallocate(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const Allocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace strata::pool
