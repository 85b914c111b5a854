// core/small_object_pool.cpp: thread-local free lists by size class, and a few recycled large blocks.
#include "core/small_object_pool.h"

#include <algorithm>
#include <new>

namespace strata::pool {

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kPoolEnabled = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kPoolEnabled = false;
#else
constexpr bool kPoolEnabled = true;
#endif
#else
constexpr bool kPoolEnabled = true;
#endif

constexpr std::size_t kClassBytes = 64;
constexpr std::size_t kClasses = 16;      // up to 1 KiB
constexpr std::size_t kPerClass = 64;     // blocks kept per class and thread

// Note [Large blocks are recycled]
// glibc gives the top of its heap back to the kernel once a few MiB are free there (M_TRIM_THRESHOLD)
// and maps blocks above its mmap threshold afresh, so a training step that frees and reallocates the
// same activations and gradients every iteration takes a page fault and a page clear for each 4 KiB
// it writes: about 1400 a step for a 784-512-512-10 MLP at batch 256, a sixth of the step. Each thread
// therefore keeps a few freed blocks of 128 KiB (glibc's initial mmap threshold) and more, rounded up to
// whole pages, and hands one out again only for a request of the same rounded size; when the cache is
// full, the oldest block is released. Blocks between 1 KiB and 128 KiB come from malloc's own free
// lists, and blocks over 64 MiB (more than the whole cache) from malloc directly.
constexpr std::size_t kPageBytes = 4096;
constexpr std::size_t kLargeMin = std::size_t{128} << 10;
constexpr std::size_t kLargeBlocks = 16;                     // large blocks kept per thread
constexpr std::size_t kLargeBytes = std::size_t{64} << 20;  // and their total size

struct FreeBlock {
  FreeBlock* next;
};

struct LargeBlock {
  void* p;
  std::size_t bytes;
};

struct ThreadCache {
  FreeBlock* head[kClasses] = {};
  std::size_t count[kClasses] = {};
  LargeBlock large[kLargeBlocks] = {};  // oldest first
  std::size_t large_count = 0;
  std::size_t large_bytes = 0;

  // Takes out large[i], keeping the order of the rest.
  void* take_large(std::size_t i) {
    void* p = large[i].p;
    large_bytes -= large[i].bytes;
    std::copy(large + i + 1, large + large_count, large + i);
    --large_count;
    return p;
  }
  ~ThreadCache() {
    for (std::size_t c = 0; c < kClasses; ++c) {
      while (FreeBlock* b = head[c]) {
        head[c] = b->next;
        ::operator delete(b);
      }
    }
    while (large_count > 0) ::operator delete(take_large(0));
  }
};

thread_local ThreadCache cache;

std::size_t class_of(std::size_t bytes) { return (bytes + kClassBytes - 1) / kClassBytes - 1; }

bool is_large(std::size_t bytes) { return kPoolEnabled && bytes >= kLargeMin && bytes <= kLargeBytes; }

std::size_t whole_pages(std::size_t bytes) { return (bytes + kPageBytes - 1) / kPageBytes * kPageBytes; }

void* allocate_large(std::size_t bytes) {
  const std::size_t rounded = whole_pages(bytes);
  ThreadCache& tc = cache;
  for (std::size_t i = tc.large_count; i-- > 0;)
    if (tc.large[i].bytes == rounded) return tc.take_large(i);
  return ::operator new(rounded);
}

void deallocate_large(void* p, std::size_t bytes) noexcept {
  const std::size_t rounded = whole_pages(bytes);
  ThreadCache& tc = cache;
  while (tc.large_count == kLargeBlocks || tc.large_bytes + rounded > kLargeBytes) ::operator delete(tc.take_large(0));
  tc.large[tc.large_count++] = {p, rounded};
  tc.large_bytes += rounded;
}

}  // namespace

void* allocate(std::size_t bytes) {
  if (is_large(bytes)) return allocate_large(bytes);
  if (!kPoolEnabled || bytes == 0 || bytes > kClasses * kClassBytes) return ::operator new(bytes);
  const std::size_t c = class_of(bytes);
  ThreadCache& tc = cache;
  if (FreeBlock* b = tc.head[c]) {
    tc.head[c] = b->next;
    --tc.count[c];
    return b;
  }
  return ::operator new((c + 1) * kClassBytes);  // the full class size, so any block of the class fits
}

void deallocate(void* p, std::size_t bytes) noexcept {
  if (is_large(bytes)) return deallocate_large(p, bytes);
  if (!kPoolEnabled || bytes == 0 || bytes > kClasses * kClassBytes) {
    ::operator delete(p);
    return;
  }
  const std::size_t c = class_of(bytes);
  ThreadCache& tc = cache;
  if (tc.count[c] >= kPerClass) {
    ::operator delete(p);
    return;
  }
  auto* b = static_cast<FreeBlock*>(p);
  b->next = tc.head[c];
  tc.head[c] = b;
  ++tc.count[c];
}

}  // namespace strata::pool
