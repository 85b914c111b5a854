// core/small_object_pool.cpp: thread-local free lists by size class.
#include "core/small_object_pool.h"

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

struct FreeBlock {
  FreeBlock* next;
};

struct ThreadCache {
  FreeBlock* head[kClasses] = {};
  std::size_t count[kClasses] = {};
  ~ThreadCache() {
    for (std::size_t c = 0; c < kClasses; ++c) {
      while (FreeBlock* b = head[c]) {
        head[c] = b->next;
        ::operator delete(b);
      }
    }
  }
};

thread_local ThreadCache cache;

std::size_t class_of(std::size_t bytes) { return (bytes + kClassBytes - 1) / kClassBytes - 1; }

}  // namespace

void* allocate(std::size_t bytes) {
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
