// core/small_object_pool.cpp: the pool's slow paths: a class's list is empty, full, or not yet set
// up to be returned at thread exit (Note [The pool's fast path is inline]).
#include "core/small_object_pool.h"

#include <new>

namespace strata::pool {

namespace detail {

constinit thread_local FreeLists free_lists{};

namespace {
// Returns this thread's cached blocks to the system when the thread ends.
struct Cleanup {
  Cleanup() { free_lists.cleanup_registered = true; }
  ~Cleanup() {
    for (std::size_t c = 0; c < kClasses; ++c) {
      while (FreeBlock* b = free_lists.head[c]) {
        free_lists.head[c] = b->next;
        ::operator delete(b);
      }
      free_lists.count[c] = 0;
    }
    free_lists.cleanup_registered = false;  // blocks freed later in thread exit go straight back
  }
};
}  // namespace

void* allocate_slow(std::size_t bytes) {
  // An empty list: a block of the full class size, so that any request of the class fits it later.
  if (pooled(bytes)) return ::operator new((class_of(bytes) + 1) * kClassBytes);
  return ::operator new(bytes);
}

void deallocate_slow(void* p, std::size_t bytes) noexcept {
  if (pooled(bytes) && !free_lists.cleanup_registered) {
    thread_local Cleanup cleanup;  // first use on this thread: construct and register it
    if (free_lists.cleanup_registered) return deallocate(p, bytes);
  }
  ::operator delete(p);
}

}  // namespace detail

}  // namespace strata::pool
