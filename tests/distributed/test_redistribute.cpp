// tests/distributed/test_redistribute.cpp: redistribute_local_tensor between every pair of
// placements (Shard(0), Shard(1), Replicate, Partial sum, and some Partial avg and max) on a (2, 2)
// mesh and a 1-D mesh of 4 thread ranks, for even and uneven global shapes (empty shards included):
// each rank's local tensor is cut from a known global tensor (Partial: split into terms that reduce
// to it), redistributed, and compared with the target's shard of the global tensor; a Partial target
// is checked through its full tensor (redistributed to Replicate). One spawn runs every pair.
#include <doctest/doctest.h>

#include <mutex>
#include <string>
#include <vector>

#include "core/util/error.h"
#include "distributed/async_collective_tensor.h"
#include "distributed/device_mesh.h"
#include "distributed/redistribute.h"
#include "distributed/shard_layout.h"
#include "distributed/thread_backend.h"
#include "ops/functions.h"

namespace test_redistribute {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::distributed;

namespace {
using Sizes = std::vector<std::int64_t>;

Tensor global_tensor(const Sizes& shape) {
  std::int64_t numel = 1;
  for (std::int64_t s : shape) numel *= s;
  return arange(numel, {ScalarType::Float32}).reshape(shape) * 0.5 + 1.0;
}

DTensorSpec spec_of(const DeviceMesh& mesh, const Placements& ps, const Sizes& shape) {
  Sizes stride(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) stride[i - 1] = stride[i] * shape[i];
  return DTensorSpec{mesh, ps, TensorMeta{shape, stride, ScalarType::Float32}};
}

// This rank's shard of `global` under `ps`, each Partial mesh dimension splitting the value into
// terms that its reduction gives back (sum: value / n plus offsets that add up to 0; avg: offsets
// that average to 0; max: value minus the rank's coordinate).
Tensor local_of(const Tensor& global, const DeviceMesh& mesh, const Placements& ps) {
  const Sizes shape(global.sizes().begin(), global.sizes().end());
  const LocalShape ls = compute_local_shape_and_global_offset(shape, mesh.shape(), mesh.get_coordinate(), ps);
  Tensor t = global;
  for (std::size_t d = 0; d < shape.size(); ++d)
    t = t.narrow(static_cast<std::int64_t>(d), ls.shape[d] == 0 ? 0 : ls.global_offset[d], ls.shape[d]);
  for (int m = 0; m < mesh.ndim(); ++m) {
    const Placement& p = ps[static_cast<std::size_t>(m)];
    if (!p.is_partial()) continue;
    const auto n = static_cast<double>(mesh.size(m));
    const auto c = static_cast<double>((*mesh.get_coordinate())[static_cast<std::size_t>(m)]);
    const double offset = (c - (n - 1) / 2) * 0.25;
    if (p.reduce_op() == ReduceOp::Sum) t = t / n + offset;
    else if (p.reduce_op() == ReduceOp::Avg) t = t + offset;
    else t = t - c;  // Max
  }
  return t.contiguous().clone();
}

Placements all_replicate(const DeviceMesh& mesh) { return Placements(static_cast<std::size_t>(mesh.ndim()), Replicate{}); }

bool has_partial(const Placements& ps) {
  for (const Placement& p : ps)
    if (p.is_partial()) return true;
  return false;
}

// Pairs upstream does not redistribute: Shard -> Partial on a mesh dimension (an error outside
// backward), and Partial(a) -> Partial(b) of different reductions (upstream leaves the terms).
bool supported(const Placements& src, const Placements& dst) {
  for (std::size_t i = 0; i < src.size(); ++i) {
    if (src[i].is_shard() && dst[i].is_partial()) return false;
    if (src[i].is_partial() && dst[i].is_partial() && src[i] != dst[i]) return false;
  }
  return true;
}

const Placement kS0 = Shard{0};
const Placement kS1 = Shard{1};
const Placement kR = Replicate{};
const Placement kP = Partial{};
const Placement kAvg = Partial{ReduceOp::Avg};
const Placement kMax = Partial{ReduceOp::Max};

std::vector<Placements> mesh_2d_lists() {
  std::vector<Placements> lists;
  for (const Placement& a : {kS0, kS1, kR, kP})
    for (const Placement& b : {kS0, kS1, kR, kP}) lists.push_back({a, b});
  for (const Placements& ps : std::vector<Placements>{
           {kAvg, kS1}, {kS0, kAvg}, {kAvg, kAvg}, {kMax, kR}, {kR, kMax}, {kS1, kMax}})
    lists.push_back(ps);
  return lists;
}

std::vector<Placements> mesh_1d_lists() { return {{kS0}, {kS1}, {kR}, {kP}, {kAvg}, {kMax}}; }

struct Runner {
  int rank;
  std::mutex& mutex;
  std::vector<std::string>& failures;
  int count = 0;

  void fail(const std::string& what) {
    const std::lock_guard<std::mutex> lock(mutex);
    failures.push_back("rank " + std::to_string(rank) + ": " + what);
  }

  // Every supported pair of `lists` on `mesh` for a global tensor of `shape`.
  void all_pairs(const DeviceMesh& mesh, const std::vector<Placements>& lists, const Sizes& shape) {
    const Tensor global = global_tensor(shape);
    for (const Placements& src : lists) {
      for (const Placements& dst : lists) {
        if (!supported(src, dst)) continue;
        ++count;
        const std::string label = mesh.short_str() + " " + to_string(src, PartialStyle::WithReduceOp) + " -> " +
                                  to_string(dst, PartialStyle::WithReduceOp) + " of " + shape_str(shape);
        try {
          check_pair(mesh, global, shape, src, dst, label);
        } catch (const Error& e) {
          fail(label + ": " + e.what());
        }
      }
    }
  }

  void check_pair(const DeviceMesh& mesh, const Tensor& global, const Sizes& shape, const Placements& src,
                  const Placements& dst, const std::string& label) {
    const DTensorSpec from = spec_of(mesh, src, shape);
    const DTensorSpec to = spec_of(mesh, dst, shape);
    const Tensor out = redistribute_local_tensor(local_of(global, mesh, src), from, to);
    if (AsyncCollectiveTensor::of(out) != nullptr) fail(label + ": the result is still an AsyncCollectiveTensor");
    const LocalShape ls = compute_local_shape_and_global_offset(shape, mesh.shape(), mesh.get_coordinate(), dst);
    if (out.sizes() != IntArrayRef(ls.shape)) {
      fail(label + ": local shape " + shape_str(out.sizes()) + ", expected " + shape_str(ls.shape));
      return;
    }
    if (!has_partial(dst)) {
      if (!out.allclose(local_of(global, mesh, dst))) fail(label + ": values " + out.str() + ", expected " + local_of(global, mesh, dst).str());
      return;
    }
    const Tensor full = redistribute_local_tensor(out, to, spec_of(mesh, all_replicate(mesh), shape));
    if (!full.allclose(global)) fail(label + ": full tensor");
  }
};
}  // namespace

TEST_CASE("every pair of placements on a (2, 2) mesh and a 1-D mesh of 4, even and uneven shapes" *
          doctest::test_suite("threads")) {
  std::mutex mutex;
  std::vector<std::string> failures;
  std::vector<int> counts(4, 0);
  spawn(4, [&](int rank) {
    const DeviceMesh square = init_device_mesh({2, 2});
    const DeviceMesh line = init_device_mesh({4});
    Runner run{rank, mutex, failures};
    for (const Sizes& shape : {Sizes{4, 6}, Sizes{5, 3}, Sizes{3, 5}}) run.all_pairs(square, mesh_2d_lists(), shape);
    for (const Sizes& shape : {Sizes{8, 4}, Sizes{5, 7}}) run.all_pairs(line, mesh_1d_lists(), shape);
    counts[static_cast<std::size_t>(rank)] = run.count;
  });
  // The supported pairs of 22 lists on the square for 3 shapes and of 6 on the line for 2: on every rank.
  CHECK(counts == std::vector<int>(4, 924));
  CHECK(failures.empty());
  for (std::size_t i = 0; i < failures.size() && i < 40; ++i) MESSAGE(failures[i]);
}

}  // namespace test_redistribute
