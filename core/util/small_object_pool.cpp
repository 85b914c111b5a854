// core/util/small_object_pool.cpp: the pool's slow paths (a class's list is empty, full, or not yet set up
// to be returned at thread exit; Note [The pool's fast path is inline]) and the recycled large blocks.
#include "core/util/small_object_pool.h"

#include <algorithm>
#include <new>

namespace strata::pool {

namespace detail {

constinit thread_local FreeLists free_lists{};

namespace {

// Note [Large blocks are recycled]
// glibc gives the top of its heap back to the kernel once a few MiB are free there (M_TRIM_THRESHOLD)
// and maps blocks above its mmap threshold afresh, so a training step that frees and reallocates the
// same activations and gradients every iteration takes a page fault and a page clear for each 4 KiB
// it writes: about 1400 a step for a 784-512-512-10 MLP at batch 256, a sixth of the step. Each thread
// therefore keeps a few freed blocks over 128 KiB (glibc's initial mmap threshold), rounded up to
// whole pages, and hands one out again only for a request of the same rounded size; when the cache is
// full, the oldest block is released. Smaller blocks are the size classes' (core/util/small_object_pool.h),
// and blocks over 256 MiB (more than the whole cache) come from malloc directly. The cap is that large
// so that a 64 MiB tensor, a collective's output or an activation of a wide layer, is recycled too:
// faulting in a fresh one costs several times what filling it does. What the cache keeps is what the
// thread freed and may need again; an app that is done with large tensors gives it back with
// release_cached_blocks().
constexpr std::size_t kPageBytes = 4096;
constexpr std::size_t kLargeBlocks = 16;  // large blocks kept per thread, kLargeBytes in all

struct LargeBlock {
  void* p;
  std::size_t bytes;
};

// What a thread must give back when it ends: its small free lists and its large blocks. Created by
// the first block the thread caches.
struct ThreadCache {
  LargeBlock large[kLargeBlocks] = {};  // oldest first
  std::size_t large_count = 0;
  std::size_t large_bytes = 0;

  ThreadCache() { free_lists.cleanup_registered = true; }
  ~ThreadCache() {
    free_lists.cleanup_registered = false;  // blocks freed later during thread exit go straight back
    release_all();
  }

  void release_all() noexcept {
    for (std::size_t c = 0; c < kClasses; ++c) {
      while (FreeBlock* b = free_lists.head[c]) {
        free_lists.head[c] = b->next;
        ::operator delete(b);
      }
      free_lists.count[c] = 0;
    }
    while (large_count > 0) ::operator delete(take_large(0));
  }

  // Takes out large[i], keeping the order of the rest.
  void* take_large(std::size_t i) {
    void* p = large[i].p;
    large_bytes -= large[i].bytes;
    std::copy(large + i + 1, large + large_count, large + i);
    --large_count;
    return p;
  }
};

// Set as this thread's ThreadCache starts to be destroyed (the Holder's destructor body runs before
// its member's): frees from then on, including those of later thread-exit destructors, go straight
// back to the system instead of reviving a destroyed cache.
thread_local bool thread_exited = false;

// This thread's cache, created on first use; null once the thread is exiting.
ThreadCache* thread_cache() {
  if (thread_exited) return nullptr;
  thread_local struct Holder {
    ThreadCache cache;
    ~Holder() { thread_exited = true; }
  } holder;
  return &holder.cache;
}

bool is_large(std::size_t bytes) { return kPoolEnabled && bytes > kPooledBytes && bytes <= kLargeBytes; }

std::size_t whole_pages(std::size_t bytes) { return (bytes + kPageBytes - 1) / kPageBytes * kPageBytes; }

}  // namespace

void* allocate_slow(std::size_t bytes) {
  // An empty list: a block of the full class size, so that any request of the class fits it later.
  if (pooled(bytes)) return ::operator new(class_bytes(class_of(bytes)));
  if (!is_large(bytes)) return ::operator new(bytes);
  const std::size_t rounded = whole_pages(bytes);
  if (ThreadCache* tc = thread_cache()) {
    for (std::size_t i = tc->large_count; i-- > 0;)
      if (tc->large[i].bytes == rounded) return tc->take_large(i);
  }
  return ::operator new(rounded);
}

void deallocate_slow(void* p, std::size_t bytes) noexcept {
  ThreadCache* tc = (pooled(bytes) || is_large(bytes)) ? thread_cache() : nullptr;
  if (tc && pooled(bytes) && free_lists.count[class_of(bytes)] < kKept[class_of(bytes)]) return deallocate(p, bytes);
  if (tc && is_large(bytes)) {
    const std::size_t rounded = whole_pages(bytes);
    while (tc->large_count == kLargeBlocks || tc->large_bytes + rounded > kLargeBytes)
      ::operator delete(tc->take_large(0));
    tc->large[tc->large_count++] = {p, rounded};
    tc->large_bytes += rounded;
    return;
  }
  ::operator delete(p);
}

}  // namespace detail

void release_cached_blocks() noexcept {
  if (!detail::free_lists.cleanup_registered) return;  // nothing cached on this thread
  if (detail::ThreadCache* tc = detail::thread_cache()) tc->release_all();
}

}  // namespace strata::pool
