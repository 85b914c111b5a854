// tests/distributed/test_fake_process_group.cpp: the fake process group: one process as rank r of N,
// collectives shaped as real ones and filled as upstream's fake backend fills them, without
// communicating; its splits; fake and meta tensors never read; the world's registration and release.
#include <doctest/doctest.h>

#include "core/interpose/interposer.h"
#include "core/util/error.h"
#include "distributed/fake_process_group.h"
#include "distributed/functional_collectives.h"
#include "distributed/process_group.h"
#include "modes/fake_tensor.h"
#include "ops/functions.h"

namespace test_fake_process_group {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::distributed;

namespace {
using Sizes = std::vector<std::int64_t>;

std::vector<float> repeated(const std::vector<float>& v, int times) {
  std::vector<float> out;
  for (int i = 0; i < times; ++i) out.insert(out.end(), v.begin(), v.end());
  return out;
}
}  // namespace

TEST_CASE("a fake world of 32 as rank 5: collectives return at once, shaped and filled as upstream's fake backend") {
  FakeWorld world(5, 32);
  ProcessGroup& g = resolve_process_group("0");
  CHECK(g.rank() == 5);
  CHECK(g.size() == 32);
  const Tensor x = arange(6, {.dtype = ScalarType::Float32}).reshape({2, 3});
  const std::vector<float> xs = x.to_vector<float>();

  // all_gather: every rank is taken to hold this rank's input.
  Tensor gathered = wait_tensor(all_gather_into_tensor(x, 32, "0"));
  CHECK(gathered.sizes() == IntArrayRef(Sizes{64, 3}));
  CHECK(gathered.to_vector<float>() == repeated(xs, 32));
  // A non-contiguous input is gathered in its logical (row-major) order.
  gathered = wait_tensor(all_gather_into_tensor(t(x), 32, "0"));
  CHECK(gathered.sizes() == IntArrayRef(Sizes{96, 2}));
  CHECK(gathered.to_vector<float>() == repeated(t(x).contiguous().to_vector<float>(), 32));
  // all_reduce and broadcast: this rank's input, whatever the reduction or the source.
  CHECK(wait_tensor(all_reduce(x, "sum", "0")).to_vector<float>() == xs);
  CHECK(wait_tensor(all_reduce(x, "max", "0")).to_vector<float>() == xs);
  CHECK(wait_tensor(broadcast(x, 7, "0")).to_vector<float>() == xs);
  const Tensor y = x.clone();
  wait_tensor(all_reduce_(y, "sum", "0"));
  CHECK(y.to_vector<float>() == xs);
  // reduce_scatter and all_to_all_single: the output's shape, its elements left as allocated.
  const Tensor big = ones({64, 3});
  CHECK(wait_tensor(reduce_scatter_tensor(big, "sum", 32, "0")).sizes() == IntArrayRef(Sizes{2, 3}));
  Sizes splits(32, 2);
  splits[5] = 0;
  CHECK(wait_tensor(all_to_all_single(ones({62, 3}), splits, splits, "0")).sizes() == IntArrayRef(Sizes{62, 3}));
  CHECK_THROWS_WITH_AS(all_gather_into_tensor(x, 8, "0"),
                       doctest::Contains("group_size 8 does not match the size of group '0', 32"), Error);
}

TEST_CASE("the fake group refuses an output that cannot hold the result, and a source outside the group") {
  FakeWorld world(0, 4);
  ProcessGroup& g = resolve_process_group("0");
  CHECK_THROWS_WITH_AS(g.all_gather_into_tensor(ones({2, 3}), empty({7, 3})),
                       "fake process group: all_gather_into_tensor: the output (float32[7, 3]) does not hold 4 "
                       "copies of the input (float32[2, 3])", Error);
  CHECK_THROWS_WITH_AS(g.all_reduce(ones({2}), empty({2}, {.dtype = ScalarType::Float64}), ReduceOp::Sum),
                       doctest::Contains("the output (float64[2]) does not hold 1 copies"), Error);
  CHECK_THROWS_WITH_AS(g.broadcast(ones({2}), empty({2}), 4),
                       "fake process group: broadcast: src 4 is not a rank of group '0' (it has 4 ranks)", Error);
  CHECK_THROWS_WITH_AS(FakeWorld(4, 4), "fake process group: rank 4 is not in a world of 4 ranks", Error);
  CHECK_THROWS_WITH_AS(FakeWorld(0, 0), "fake process group: the world size must be positive, got 0", Error);
}

TEST_CASE("tensors without data are never read or written: meta tensors and FakeTensorMode") {
  FakeWorld world(5, 32);
  ProcessGroup& g = resolve_process_group("0");
  const Tensor in = empty({1024, 1024}, {.device = Device::Meta});
  const Tensor out = empty({32 * 1024, 1024}, {.device = Device::Meta});
  g.all_gather_into_tensor(in, out)->wait();
  g.all_reduce(in, in, ReduceOp::Sum)->wait();
  CHECK_FALSE(out.impl()->has_data());

  tracer::FakeTensorMode mode;
  ModeGuard guard(mode);
  const Tensor w = empty({4096, 4096});  // a fake: 64 MB it never allocates
  REQUIRE(tracer::FakeTensor::is_fake(w));
  const Tensor full = wait_tensor(all_gather_into_tensor(w, 32, "0"));
  CHECK(tracer::FakeTensor::is_fake(full));
  CHECK(full.sizes() == IntArrayRef(Sizes{32 * 4096, 4096}));
  CHECK(wait_tensor(reduce_scatter_tensor(w, "avg", 32, "0")).sizes() == IntArrayRef(Sizes{128, 4096}));
}

TEST_CASE("splitting the fake world: the caller's group, named by the shared counter") {
  FakeWorld world(20, 32);
  std::vector<int> low(16), high(16);
  for (int i = 0; i < 16; ++i) {
    low[static_cast<std::size_t>(i)] = i;
    high[static_cast<std::size_t>(i)] = 16 + i;
  }
  CHECK(split_group({low, high}) == "2");  // "1" is the first list's
  ProcessGroup& g = resolve_process_group("2");
  CHECK(g.rank() == 4);
  CHECK(g.size() == 16);
  CHECK(split_group({{0, 1}}) == "");  // not a member: no group, the counter still moves
  CHECK(split_group({{20, 3}}) == "4");
  CHECK(resolve_process_group("4").rank() == 0);
  CHECK(resolve_process_group("4").size() == 2);
  CHECK(wait_tensor(all_gather_into_tensor(ones({1, 2}), 2, "4")).sizes() == IntArrayRef(Sizes{2, 2}));
}

TEST_CASE("a FakeWorld replaces this thread's groups and forgets them, and the names restart") {
  {
    FakeWorld world(1, 4);
    CHECK(split_group({{0, 1}, {2, 3}}) == "1");
    CHECK(find_process_group("1") != nullptr);
    CHECK(find_process_group("2") == nullptr);  // rank 1 is not in "2"
  }
  CHECK(find_process_group("0") == nullptr);
  CHECK(find_process_group("1") == nullptr);
  FakeWorld again(3, 4);
  CHECK(split_group({{0, 1}, {2, 3}}) == "2");  // the counter restarted at "1"
  CHECK(resolve_process_group("2").rank() == 1);
}

}  // namespace test_fake_process_group
