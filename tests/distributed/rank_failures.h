// tests/distributed/rank_failures.h: failures seen on rank threads, collected under a lock and
// reported on the test's thread (doctest's checks are not thread-safe).
#pragma once

#include <doctest/doctest.h>

#include <mutex>
#include <string>
#include <vector>

namespace strata::testing {

class RankFailures {
 public:
  void check(bool ok, int rank, const std::string& what) {
    if (ok) return;
    const std::lock_guard<std::mutex> lock(mutex_);
    list_.push_back("rank " + std::to_string(rank) + ": " + what);
  }
  void report() const {
    CHECK(list_.empty());
    for (const std::string& f : list_) MESSAGE(f);
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> list_;
};

}  // namespace strata::testing
