// core/util/small_object_pool.h: a per-thread cache of freed small blocks (TensorImpls, fresh tensors'
// storage blocks, boxed int lists, autograd nodes), by size class up to 128 KiB. A tiny op
// allocates and frees a few such blocks, and a thread-local list is much cheaper than malloc/free,
// which were a large share of such an op's cost. Large blocks (over 128 KiB, up to 256 MiB) are kept
// too, a few per thread, so that a training loop does not fault in fresh pages every step (Note
// [Large blocks are recycled]). Blocks freed on another thread go to that thread's cache. Under
// AddressSanitizer the pool is off, so use-after-free is still caught.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace strata::pool {

namespace detail {
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kPoolEnabled = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kPoolEnabled = false;
#else
inline constexpr bool kPoolEnabled = true;
#endif
#else
inline constexpr bool kPoolEnabled = true;
#endif

// Size classes: 64-byte steps up to 1 KiB (TensorImpls, tiny tensors, nodes), then powers of two up
// to 128 KiB (small activations and gradients); larger blocks are recycled whole (Note [Large blocks
// are recycled]). Each class keeps a bounded number of blocks per thread, under 3 MiB in all.
inline constexpr std::size_t kClassBytes = 64;
inline constexpr std::size_t kSteppedClasses = 16;  // 64 B .. 1 KiB
inline constexpr std::size_t kClasses = 23;         // then 2 KiB .. 128 KiB
inline constexpr std::size_t kPooledBytes = std::size_t{128} << 10;
// The largest block the large-block cache keeps, and the most it keeps per thread in all.
inline constexpr std::size_t kLargeBytes = std::size_t{256} << 20;
inline constexpr std::uint32_t kKept[kClasses] = {64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64,
                                                  64, 64, 64, 64, 16, 16, 16, 16, 8,  8,  8};

struct FreeBlock {
  FreeBlock* next;
};

// Note [The pool's fast path is inline]
// The free lists are a trivially destructible thread_local, so reading them needs no
// initialisation guard and no TLS wrapper call: a pop or push is a handful of instructions, inlined
// into every allocation site. What must run at thread exit (returning cached blocks to the system)
// lives in a separate object that the slow path creates the first time a thread caches a block.
struct FreeLists {
  FreeBlock* head[kClasses];
  std::uint32_t count[kClasses];
  bool cleanup_registered;  // this thread's cleanup exists and has not run yet
};
extern constinit thread_local FreeLists free_lists;

inline std::size_t class_of(std::size_t bytes) {
  if (bytes <= kSteppedClasses * kClassBytes) return (bytes - 1) / kClassBytes;
  return kSteppedClasses + static_cast<std::size_t>(std::bit_width(bytes - 1)) - 11;  // 1025..2048 -> 16
}
inline std::size_t class_bytes(std::size_t c) {
  return c < kSteppedClasses ? (c + 1) * kClassBytes : std::size_t{2048} << (c - kSteppedClasses);
}
inline bool pooled(std::size_t bytes) { return kPoolEnabled && bytes - 1 < kPooledBytes; }  // 0 wraps

void* allocate_slow(std::size_t bytes);
void deallocate_slow(void* p, std::size_t bytes) noexcept;
}  // namespace detail

// Gives the calling thread's cached blocks back to the system (an embedding application may call it
// after a burst of large tensors; each thread otherwise keeps up to ~67 MiB of freed blocks for reuse).
void release_cached_blocks() noexcept;

// A block of `bytes` from this thread's cache, or null when it has none (allocate() then asks the
// system). For callers that handle the miss out of line.
inline void* take_cached(std::size_t bytes) noexcept {
  if (detail::pooled(bytes)) {
    detail::FreeLists& lists = detail::free_lists;
    const std::size_t c = detail::class_of(bytes);
    if (detail::FreeBlock* b = lists.head[c]) [[likely]] {
      lists.head[c] = b->next;
      --lists.count[c];
      return b;
    }
  }
  return nullptr;
}

// Memory for `bytes` bytes, 16-byte aligned (like operator new).
inline void* allocate(std::size_t bytes) {
  if (void* b = take_cached(bytes)) [[likely]] return b;
  return detail::allocate_slow(bytes);
}

// Returns memory from allocate(bytes), with the same `bytes`.
inline void deallocate(void* p, std::size_t bytes) noexcept {
  if (detail::pooled(bytes)) {
    detail::FreeLists& lists = detail::free_lists;
    const std::size_t c = detail::class_of(bytes);
    if (lists.count[c] < detail::kKept[c] && lists.cleanup_registered) [[likely]] {
      auto* b = static_cast<detail::FreeBlock*>(p);
      b->next = lists.head[c];
      lists.head[c] = b;
      ++lists.count[c];
      return;
    }
  }
  detail::deallocate_slow(p, bytes);
}

}  // namespace strata::pool
