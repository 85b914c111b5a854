// tests/ops/test_scatter_ops.cpp: gather, scatter.src, scatter.value and scatter_add against a
// reference loop over host values (along each dimension, with transposed and non-contiguous
// operands and a repeated index), on meta tensors, and their errors in PyTorch 1.13's words.
#include <doctest/doctest.h>

#include "ops/functions.h"
#include "tests/ops/op_harness.h"
#include "tests/test_helpers.h"

namespace test_scatter_ops {  // Note [Test files in unity builds]

using namespace strata;
using testing::sizes_of;

namespace {

Tensor f64(std::vector<double> v, std::initializer_list<std::int64_t> sizes) { return view(tensor<double>(v), sizes); }
Tensor i64(std::vector<std::int64_t> v, std::initializer_list<std::int64_t> sizes) { return view(tensor<std::int64_t>(v), sizes); }

// The element of a 2-d host matrix (rows x cols, row-major) at (r, c).
struct Mat {
  std::vector<double> v;
  std::int64_t rows, cols;
  double& at(std::int64_t r, std::int64_t c) { return v[static_cast<std::size_t>(r * cols + c)]; }
};
Mat host(const Tensor& t) { return {contiguous(t).to_vector<double>(), t.sizes()[0], t.sizes()[1]}; }
std::vector<std::int64_t> host_index(const Tensor& t) { return contiguous(t).to_vector<std::int64_t>(); }

}  // namespace

TEST_CASE("gather and the scatters match a reference loop along each dimension") {
  // self 3x4, transposed from 4x3; index 2x3 (a repeated entry in each row and column), also transposed.
  const Tensor self = t(f64({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {4, 3}));
  const Tensor src = f64({10, 20, 30, 40, 50, 60, 70, 80}, {2, 4});
  for (const std::int64_t dim : {0, 1, -1}) {
    INFO("dim " << dim);
    const std::int64_t d = dim < 0 ? dim + 2 : dim;
    const Tensor index = d == 0 ? i64({2, 0, 2, 1, 1, 0}, {2, 3}) : t(i64({3, 0, 3, 1, 2, 1}, {3, 2}));
    const std::vector<std::int64_t> idx = host_index(index);
    Mat s = host(self), sr = host(src);
    Mat gathered{{}, 2, 3}, scattered = s, added = s, filled = s;
    for (std::int64_t r = 0; r < 2; ++r)
      for (std::int64_t c = 0; c < 3; ++c) {
        const std::int64_t k = idx[static_cast<std::size_t>(r * 3 + c)];
        gathered.v.push_back(d == 0 ? s.at(k, c) : s.at(r, k));
        (d == 0 ? scattered.at(k, c) : scattered.at(r, k)) = sr.at(r, c);  // the last write wins
        (d == 0 ? added.at(k, c) : added.at(r, k)) += sr.at(r, c);
        (d == 0 ? filled.at(k, c) : filled.at(r, k)) = -1.5;
      }
    CHECK(gather(self, dim, index).to_vector<double>() == gathered.v);
    CHECK(scatter(self, dim, index, src).to_vector<double>() == scattered.v);
    CHECK(scatter_add(self, dim, index, src).to_vector<double>() == added.v);
    CHECK(scatter(self, dim, index, Scalar(-1.5)).to_vector<double>() == filled.v);
    CHECK(self.to_vector<double>() == s.v);  // out of place
  }
  // 0-d tensors are one element of one dimension; an empty index gathers nothing and scatters nothing.
  CHECK(gather(scalar_tensor(3.0, ScalarType::Float64), 0, scalar_tensor(std::int64_t{0}, ScalarType::Int64)).item<double>() == 3.0);
  CHECK(sizes_of(gather(f64({1, 2}, {2, 1}), 1, i64({}, {2, 0}))) == std::vector<std::int64_t>{2, 0});
  CHECK(scatter(f64({1, 2}, {2}), 0, i64({}, {0}), f64({}, {0})).to_vector<double>() == std::vector<double>{1, 2});
  // Integer and bool tensors; meta tensors get the shapes and dtypes.
  CHECK(scatter_add(tensor<std::int64_t>({1, 1}), 0, i64({1, 1}, {2}), tensor<std::int64_t>({5, 7})).to_vector<std::int64_t>() ==
        std::vector<std::int64_t>{1, 13});
  CHECK(gather(tensor<bool>({true, false}), 0, i64({1, 0, 0}, {3})).to_vector<bool>() == std::vector<bool>{false, true, true});
  const Tensor meta = empty({4, 5}, {.dtype = ScalarType::Float64, .device = Device::Meta});
  const Tensor meta_index = empty({2, 5}, {.dtype = ScalarType::Int64, .device = Device::Meta});
  CHECK((gather(meta, 0, meta_index).is_meta() && sizes_of(gather(meta, 0, meta_index)) == std::vector<std::int64_t>{2, 5}));
  CHECK(sizes_of(scatter(meta, 0, meta_index, meta)) == std::vector<std::int64_t>{4, 5});
  CHECK(scatter_add(meta, 0, meta_index, meta).dtype() == ScalarType::Float64);
}

TEST_CASE("gather and the scatters give PyTorch's errors") {
  const Tensor x = f64({0, 0, 0, 0}, {2, 2});
  const Tensor index = i64({0, 0, 0, 0, 0, 0}, {2, 3});
  CHECK_THROWS_WITH_AS(gather(x, 0, index),
                       "[aten::gather] Size does not match at dimension 1 expected index [2, 3] to be smaller than self [2, 2] "
                       "apart from dimension 0",
                       Error);
  CHECK_THROWS_WITH_AS(gather(x, 0, to(index, ScalarType::Float64)), "[aten::gather] gather(): Expected dtype int64 for index", Error);
  CHECK_THROWS_WITH_AS(gather(x, 0, i64({0, 0}, {2})),
                       "[aten::gather] Index tensor must have the same number of dimensions as input tensor", Error);
  CHECK_THROWS_WITH_AS(gather(x, 1, i64({5}, {1, 1})), "[aten::gather] index 5 is out of bounds for dimension 1 with size 2", Error);
  CHECK_THROWS_WITH_AS(gather(x, 1, i64({-1}, {1, 1})), "[aten::gather] index -1 is out of bounds for dimension 1 with size 2", Error);
  CHECK_THROWS_WITH_AS(gather(x, 2, index),
                       "[aten::gather] Dimension out of range (expected to be in range of [-2, 1], but got 2)", Error);
  CHECK_THROWS_WITH_AS(scatter(x, 0, index, f64({0, 0, 0, 0, 0, 0}, {2, 3})),
                       "[aten::scatter] Expected index [2, 3] to be smaller than self [2, 2] apart from dimension 0 and to be "
                       "smaller size than src [2, 3]",
                       Error);
  const Tensor index22 = i64({0, 0, 0, 0}, {2, 2});
  CHECK_THROWS_WITH_AS(scatter(x, 0, index22, f64({0}, {1, 1})),
                       "[aten::scatter] Expected index [2, 2] to be smaller than self [2, 2] apart from dimension 0 and to be "
                       "smaller size than src [1, 1]",
                       Error);
  CHECK_THROWS_WITH_AS(scatter(x, 0, index22, to(x, ScalarType::Float32)),
                       "[aten::scatter] scatter(): Expected self.dtype to be equal to src.dtype", Error);
  CHECK_THROWS_WITH_AS(scatter(x, 0, to(index22, ScalarType::Float64), x), "[aten::scatter] scatter(): Expected dtype int64 for index",
                       Error);
  CHECK_THROWS_WITH_AS(scatter(x, 0, i64({7}, {1, 1}), Scalar(1.0)),
                       "[aten::scatter] index 7 is out of bounds for dimension 0 with size 2", Error);
  CHECK_THROWS_WITH_AS(scatter(x, 0, index, Scalar(1.0)),
                       "[aten::scatter] Expected index [2, 3] to be smaller than self [2, 2] apart from dimension 0", Error);
  CHECK_THROWS_WITH_AS(scatter_add(x, 0, index22, f64({0}, {1, 1})),
                       "[aten::scatter_add] Expected index [2, 2] to be smaller than self [2, 2] apart from dimension 0 and to "
                       "be smaller size than src [1, 1]",
                       Error);
  CHECK_THROWS_WITH_AS(scatter_add(x, 0, i64({0, 0}, {2}), x),
                       "[aten::scatter_add] Index tensor must have the same number of dimensions as self tensor", Error);
  CHECK_THROWS_WITH_AS(gather_backward(x, {2, 2}, 0, index22, true),
                       "gather_backward: strata has no sparse tensors (sparse_grad=True)", Error);
}

}  // namespace test_scatter_ops
