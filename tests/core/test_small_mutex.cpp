// tests/core/test_small_mutex.cpp: SmallMutex (core/util/small_mutex.h) excludes: threads that add to a
// plain counter under it, most of them finding it taken, lose no increment; try_lock fails while it
// is held. Suite "threads": under ThreadSanitizer an unexcluded access is reported.
#include <doctest/doctest.h>

#include <mutex>
#include <thread>
#include <vector>

#include "core/util/small_mutex.h"

namespace test_small_mutex {  // Note [Test files in unity builds]

using namespace strata;

TEST_CASE("SmallMutex excludes, also when threads contend and sleep on it" * doctest::test_suite("threads")) {
  SmallMutex mutex;
  long counter = 0;  // plain: only the lock orders the threads' read-modify-writes
  constexpr int kThreads = 4;
  constexpr int kIncrements = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kIncrements; ++i) {
        const std::lock_guard<SmallMutex> lock(mutex);
        ++counter;
        if (i % 1000 == 0) std::this_thread::yield();  // holds it a while, so others find it taken and wait
      }
    });
  for (std::thread& th : threads) th.join();
  CHECK(counter == kThreads * kIncrements);
  CHECK(mutex.try_lock());
  std::thread other([&] { CHECK_FALSE(mutex.try_lock()); });
  other.join();
  mutex.unlock();
  CHECK(mutex.try_lock());
  mutex.unlock();
}

}  // namespace test_small_mutex
