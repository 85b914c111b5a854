// tests/ops/test_num_threads.cpp: set_num_threads (LibTorch's torch::set_num_threads) sets the threads
// that large kernels use: parallel_for really splits its range across that many threads, and large
// elementwise, reduction and GEMM results do not depend on the count. Not in the "threads" suite:
// ThreadSanitizer cannot see libgomp's synchronisation (scripts/tsan runs one OpenMP thread).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "core/parallel.h"
#include "ops/functions.h"

namespace test_num_threads {  // Note [Test files in unity builds]

using namespace strata;

namespace {
// Restores the thread count a test found.
struct ThreadCountRestorer {
  int saved = get_num_threads();
  ~ThreadCountRestorer() { set_num_threads(saved); }
};

struct Results {
  std::vector<float> elementwise, product;
  float total;
};

Results results_with(int threads, const Tensor& a, const Tensor& b) {
  set_num_threads(threads);
  return {add(mul(a, b), a).to_vector<float>(), mm(a, b).to_vector<float>(), sum(a).item<float>()};
}
}  // namespace

TEST_CASE("set_num_threads: parallel_for uses exactly the threads asked for, over the whole range once") {
  ThreadCountRestorer restore;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    CHECK(get_num_threads() == threads);
    constexpr std::int64_t n = 100000;
    std::vector<int> visits(n, 0);
    std::set<std::thread::id> seen;
    std::mutex mutex;
    parallel_for(0, n, 1000, [&](std::int64_t begin, std::int64_t end) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        seen.insert(std::this_thread::get_id());
      }
      for (std::int64_t i = begin; i < end; ++i) ++visits[static_cast<std::size_t>(i)];
    });
    INFO(threads << " threads");
    CHECK(seen.size() == static_cast<std::size_t>(threads));
    CHECK(std::all_of(visits.begin(), visits.end(), [](int v) { return v == 1; }));
  }
}

TEST_CASE("set_num_threads: large kernels give the same results on one thread and on two") {
  ThreadCountRestorer restore;
  Generator g;
  g.manual_seed(3);
  const Tensor a = randn({512, 512}, {}, &g);
  const Tensor b = randn({512, 512}, {}, &g);
  const Results one = results_with(1, a, b);
  const Results two = results_with(2, a, b);
  // Each element of a pointwise result is computed alone: equal bit for bit.
  CHECK(one.elementwise == two.elementwise);
  // GEMM and reductions may split their sums differently per thread count (so do PyTorch's): close.
  REQUIRE(one.product.size() == two.product.size());
  for (std::size_t i = 0; i < one.product.size(); ++i)
    if (std::abs(one.product[i] - two.product[i]) > 1e-4f * (1 + std::abs(one.product[i]))) FAIL("mm differs at ", i);
  CHECK(two.total == doctest::Approx(one.total).epsilon(1e-5));
}

// Note [Matrix-vector products split their columns over threads] (ops/native/linalg_ops.cpp).
TEST_CASE("set_num_threads: a row times w.t() splits w's rows over threads, equal bit for bit, and right") {
  ThreadCountRestorer restore;
  Generator g;
  g.manual_seed(5);
  for (const std::int64_t out : {4000, 4003}) {  // past kMatvecParallelMacs; whole 8-column blocks, a tail of 3
    CAPTURE(out);
    const Tensor x = randn({1, 288}, {}, &g);
    const Tensor w = randn({out, 288}, {}, &g);  // row-major, as a checkpoint's weight
    set_num_threads(1);
    const std::vector<float> one = mm(x, w.t()).to_vector<float>();
    set_num_threads(2);
    const std::vector<float> two = mm(x, w.t()).to_vector<float>();
    CHECK(one == two);
    const std::vector<float> xs = x.to_vector<float>(), ws = w.to_vector<float>();
    REQUIRE(one.size() == static_cast<std::size_t>(out));
    for (std::int64_t j = 0; j < out; ++j) {
      double expected = 0;
      for (std::size_t l = 0; l < 288; ++l) expected += double{xs[l]} * ws[static_cast<std::size_t>(j) * 288 + l];
      if (std::abs(one[static_cast<std::size_t>(j)] - expected) > 1e-4 * (1 + std::abs(expected))) FAIL("column ", j);
    }
  }
}

TEST_CASE("set_num_threads refuses a count below one") {
  ThreadCountRestorer restore;
  CHECK_THROWS_WITH_AS(set_num_threads(0), "set_num_threads expects a positive number of threads, but got 0", Error);
}

}  // namespace test_num_threads
