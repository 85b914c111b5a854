// tests/ops/test_ops_reference.cpp: mm, addmm, sum, _log_softmax (+ backward), nll_loss (forward and
// backward), view ops and factories against reference loops, with meta functions checked alongside.
#include <cmath>

#include "ops/detach.h"
#include "ops/native/small_gemm.h"
#include "tests/ops/op_harness.h"

namespace test_ops_reference {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::testing;

namespace {

Host matmul_reference(const Host& a, const Host& b) {
  const std::int64_t n = a.shape[0], k = a.shape[1], p = b.shape[1];
  Host out{std::vector<double>(static_cast<std::size_t>(n * p), 0.0), {n, p}};
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < p; ++j)
      for (std::int64_t l = 0; l < k; ++l) out.v[static_cast<std::size_t>(i * p + j)] += a.v[static_cast<std::size_t>(i * k + l)] * b.v[static_cast<std::size_t>(l * p + j)];
  return out;
}

Tensor matrix(Layout2 layout, std::int64_t rows, std::int64_t cols, Device d, ScalarType dtype = ScalarType::Float32) {
  return make_operand(layout, rows, cols, d, dtype);
}

struct MmShape {
  std::int64_t n, k, p;
};
const MmShape kMmShapes[] = {{1, 1, 1}, {2, 3, 4}, {7, 8, 9}, {16, 17, 15}, {33, 5, 8}, {8, 16, 32}};

}  // namespace

TEST_CASE("mm matches a triple loop for row- and column-major operands") {
  for (const MmShape& s : kMmShapes)
    for (Layout2 la : {Layout2::Contiguous, Layout2::Transposed})
      for (Layout2 lb : {Layout2::Contiguous, Layout2::Transposed, Layout2::Broadcast}) {
        const std::string name = "mm " + std::to_string(s.n) + "x" + std::to_string(s.k) + "x" + std::to_string(s.p) + " " +
                                 layout_name(la) + "/" + layout_name(lb);
        check_op(
            name, [&](Device d) { return Inputs{matrix(la, s.n, s.k, d), matrix(lb, s.k, s.p, d)}; },
            [](const Inputs& in) { return mm(in[0], in[1]); },
            [](const std::vector<Host>& in) { return matmul_reference(in[0], in[1]); }, 1e-4);
      }
  check_op(
      "mm float64", [](Device d) { return Inputs{matrix(Layout2::Transposed, 5, 6, d, ScalarType::Float64), matrix(Layout2::Contiguous, 6, 3, d, ScalarType::Float64)}; },
      [](const Inputs& in) { return mm(in[0], in[1]); }, [](const std::vector<Host>& in) { return matmul_reference(in[0], in[1]); }, 1e-12);
  check_op(
      "mm int64", [](Device d) { return Inputs{randint(-5, 5, {4, 3}, {.device = d}), t(randint(-5, 5, {2, 3}, {.device = d}))}; },
      [](const Inputs& in) { return mm(in[0], in[1]); }, [](const std::vector<Host>& in) { return matmul_reference(in[0], in[1]); }, 0);
}

TEST_CASE("addmm is beta * self + alpha * mat1 @ mat2 with self broadcast") {
  struct Coeffs {
    double beta, alpha;
  };
  for (const MmShape& s : kMmShapes)
    for (Coeffs c : {Coeffs{1, 1}, Coeffs{0.5, 2}, Coeffs{0, -1}})
      for (int bias_kind = 0; bias_kind < 3; ++bias_kind) {
        const std::string name = "addmm " + std::to_string(s.n) + "x" + std::to_string(s.k) + "x" + std::to_string(s.p) +
                                 " beta=" + std::to_string(c.beta) + " bias_kind=" + std::to_string(bias_kind);
        check_op(
            name,
            [&](Device d) {
              const Tensor bias = bias_kind == 0   ? randn({s.p}, {.device = d})
                                  : bias_kind == 1 ? randn({s.n, s.p}, {.device = d})
                                                   : randn({1, s.p}, {.device = d});
              return Inputs{bias, matrix(Layout2::Contiguous, s.n, s.k, d), matrix(Layout2::Transposed, s.k, s.p, d)};
            },
            [&](const Inputs& in) { return addmm(in[0], in[1], in[2], c.beta, c.alpha); },
            [&](const std::vector<Host>& in) {
              Host out = matmul_reference(in[1], in[2]);
              const auto idx = all_indices(out.shape);
              for (std::size_t i = 0; i < idx.size(); ++i) out.v[i] = c.beta * bcast_at(in[0], idx[i]) + c.alpha * out.v[i];
              return out;
            },
            1e-4);
      }
  // beta = 0 ignores self entirely, so NaN in it does not propagate.
  const Tensor nan_bias = tensor<float>({std::nanf(""), std::nanf("")});
  const Tensor r = addmm(nan_bias, tensor<float>({1, 2}, {1, 2}), tensor<float>({1, 0, 0, 1}, {2, 2}), 0);
  CHECK(r.to_vector<float>() == std::vector<float>{1, 2});
}

namespace {

// gemm's operand layouts: row-major, column-major, and two others (which the Eigen path copies first).
enum class GemmLayout { Row, Col, Broadcast, Strided };
const GemmLayout kGemmLayouts[] = {GemmLayout::Row, GemmLayout::Col, GemmLayout::Broadcast, GemmLayout::Strided};
const char* gemm_layout_name(GemmLayout l) {
  switch (l) {
    case GemmLayout::Row: return "row";
    case GemmLayout::Col: return "col";
    case GemmLayout::Broadcast: return "broadcast";
    case GemmLayout::Strided: return "strided";
  }
  return "?";
}

Tensor gemm_operand(GemmLayout l, std::int64_t rows, std::int64_t cols, Device d, ScalarType dtype) {
  const TensorOptions o{.dtype = dtype, .device = d};
  switch (l) {
    case GemmLayout::Row: return randn({rows, cols}, o);
    case GemmLayout::Col: return t(randn({cols, rows}, o));
    case GemmLayout::Broadcast: return expand(randn({1, cols}, o), {rows, cols});
    case GemmLayout::Strided: return as_strided(randn({2 * rows, 2 * cols}, o), {rows, cols}, {4 * cols, 2});  // every other row and column
  }
  return Tensor();
}

// Shapes on both sides of small_gemm's conditions: p a multiple of its strip width (16 floats, 8
// doubles) or not, and n * k * p at kSmallGemmMaxMacs or above it; sizes around the AVX2 widths (8
// floats, 4 doubles) and the four-row blocks in every dimension; empty ones.
std::vector<MmShape> gemm_shapes() {
  const std::int64_t at = ops::kSmallGemmMaxMacs / (8 * 32);
  return {{1, 1, 1},  {3, 4, 5},  {4, 5, 3},       {5, 3, 4},       {7, 8, 9},       {9, 7, 8},   {8, 9, 7},
          {2, 16, 17}, {17, 15, 2}, {3, 9, 15},      {5, 17, 16},     {6, 7, 32},      {4, 33, 33}, {1, 3, 8},
          {2, 5, 24},  {3, 1, 16},  {7, 2, 48},      {0, 3, 16},      {3, 4, 0},       {8, at, 32}, {8, at + 1, 32},
          {at, 8, 32}, {at + 1, 8, 32},
          // small_gemm_dots (float, row-major a, column-major b, k a multiple of 8): the seed's forward
          // products, a group of 4 and single columns past blocks of 8, and n * k * p at the limit and past it.
          {8, 16, 32}, {8, 32, 4}, {3, 16, 7}, {9, 24, 12}, {5, 8, 15}, {1, 8, 1}, {8, 32, 32}, {8, 32, 33}};
}

double gemm_tolerance(ScalarType dtype) { return dtype == ScalarType::Float64 ? 1e-12 : 1e-4; }

}  // namespace

TEST_CASE("mm and addmm match a triple loop for every operand layout, on both sides of the small-product threshold") {
  struct Coeffs {
    double beta, alpha;
  };
  for (ScalarType dtype : {ScalarType::Float32, ScalarType::Float64})
    for (const MmShape& s : gemm_shapes())
      for (GemmLayout la : kGemmLayouts)
        for (GemmLayout lb : kGemmLayouts) {
          const std::string shape = std::string(dtype == ScalarType::Float64 ? "float64 " : "float32 ") +
                                    std::to_string(s.n) + "x" + std::to_string(s.k) + "x" + std::to_string(s.p) + " " +
                                    gemm_layout_name(la) + "/" + gemm_layout_name(lb);
          const auto build = [&](Device d) { return Inputs{gemm_operand(la, s.n, s.k, d, dtype), gemm_operand(lb, s.k, s.p, d, dtype)}; };
          check_op(
              "mm " + shape, build, [](const Inputs& in) { return mm(in[0], in[1]); },
              [](const std::vector<Host>& in) { return matmul_reference(in[0], in[1]); }, gemm_tolerance(dtype));
          for (Coeffs c : {Coeffs{1, 1}, Coeffs{0.5, -2}, Coeffs{0, 0.5}})
            check_op(
                "addmm beta=" + std::to_string(c.beta) + " alpha=" + std::to_string(c.alpha) + " " + shape,
                [&](Device d) {
                  Inputs in = build(d);
                  in.insert(in.begin(), randn({s.n, s.p}, {.dtype = dtype, .device = d}));
                  return in;
                },
                [&](const Inputs& in) { return addmm(in[0], in[1], in[2], c.beta, c.alpha); },
                [&](const std::vector<Host>& in) {
                  Host out = matmul_reference(in[1], in[2]);
                  for (std::size_t i = 0; i < out.v.size(); ++i) out.v[i] = c.beta * in[0].v[i] + c.alpha * out.v[i];
                  return out;
                },
                gemm_tolerance(dtype));
        }
}

TEST_CASE("a product over k == 0 is zero: mm gives zeros and addmm beta * self") {
  for (ScalarType dtype : {ScalarType::Float32, ScalarType::Float64}) {
    const TensorOptions o{.dtype = dtype};
    const Tensor a = randn({3, 0}, o), b = randn({0, 5}, o);
    CHECK(mm(a, b).to_vector<double>() == std::vector<double>(15, 0.0));
    const Tensor self = randn({3, 5}, o);
    const std::vector<double> expected = mul(self, 0.5).to_vector<double>();
    CHECK(addmm(self, a, b, 0.5, 2).to_vector<double>() == expected);
    CHECK(addmm(self, t(randn({0, 3}, o)), t(randn({5, 0}, o)), 0.5, 2).to_vector<double>() == expected);
  }
}

// Note [Rows are summed a block of columns at a time] (ops/native/reduction_ops.cpp): a contiguous tensor
// summed over its leading dims takes the column-block kernel (widths across 16-, 4- and 1-column
// blocks, one row or many); the same sums of a transposed tensor take the strided loop.
TEST_CASE("sum over leading dims matches a reference loop on the column-block and strided paths") {
  for (ScalarType dtype : {ScalarType::Float32, ScalarType::Float64})
    for (std::int64_t rows : {1, 2, 8})
      for (std::int64_t cols : simd_sizes())
        for (bool transposed : {false, true}) {
          const std::string name = "sum rows=" + std::to_string(rows) + " cols=" + std::to_string(cols) +
                                   (transposed ? " transposed" : "") + (dtype == ScalarType::Float64 ? " double" : "");
          check_op(
              name,
              [&](Device d) {
                return Inputs{make_operand(transposed ? Layout2::Transposed : Layout2::Contiguous, rows, cols, d, dtype)};
              },
              [](const Inputs& in) { return sum(in[0], {0}, true); },
              [&](const std::vector<Host>& in) {
                Host out{std::vector<double>(static_cast<std::size_t>(cols), 0.0), {1, cols}};
                for (std::int64_t r = 0; r < rows; ++r)
                  for (std::int64_t c = 0; c < cols; ++c)
                    out.v[static_cast<std::size_t>(c)] += in[0].v[static_cast<std::size_t>(r * cols + c)];
                return out;
              },
              1e-5);
        }
}

TEST_CASE("sum over dims, with and without keepdim, matches a reference loop") {
  struct SumCase {
    std::vector<std::int64_t> dims;
    bool keepdim;
  };
  // {1, 0} and {-3} are leading dims (the contiguous rows path), written out of order and negative.
  const SumCase cases[] = {{{}, false},     {{0}, false},     {{1}, true},      {{-1}, false},
                           {{0, 2}, true},  {{2, 0}, false},  {{1, 0}, false},  {{-3}, true}};
  for (bool transposed : {false, true})
    for (const SumCase& c : cases) {
      std::string name = std::string("sum dims=") + shape_str(c.dims) + (c.keepdim ? " keepdim" : "") + (transposed ? " transposed" : "");
      check_op(
          name,
          [&](Device d) {
            const Tensor base = randn({3, 4, 5}, {.device = d});
            return Inputs{transposed ? transpose(randn({5, 4, 3}, {.device = d}), 0, 2) : base};
          },
          [&](const Inputs& in) { return sum(in[0], c.dims, c.keepdim); },
          [&](const std::vector<Host>& in) {
            std::vector<bool> reduced(3, c.dims.empty());
            for (std::int64_t d : c.dims) reduced[static_cast<std::size_t>((d + 3) % 3)] = true;
            Host out;
            for (std::size_t d = 0; d < 3; ++d)
              if (!reduced[d] || c.keepdim) out.shape.push_back(reduced[d] ? 1 : in[0].shape[d]);
            std::vector<std::int64_t> kept_shape;
            for (std::size_t d = 0; d < 3; ++d)
              if (!reduced[d]) kept_shape.push_back(in[0].shape[d]);
            out.v.assign(static_cast<std::size_t>(numel_of(kept_shape)), 0.0);
            const auto idx = all_indices(in[0].shape);
            for (std::size_t i = 0; i < idx.size(); ++i) {
              std::int64_t flat = 0;
              for (std::size_t d = 0; d < 3; ++d)
                if (!reduced[d]) flat = flat * in[0].shape[d] + idx[i][d];
              out.v[static_cast<std::size_t>(flat)] += in[0].v[i];
            }
            return out;
          },
          1e-5);
    }
  check_op(
      "sum.default", [](Device d) { return Inputs{randn({7, 9}, {.device = d})}; }, [](const Inputs& in) { return sum(in[0]); },
      [](const std::vector<Host>& in) {
        double s = 0;
        for (double v : in[0].v) s += v;
        return Host{{s}, {}};
      });
  const Tensor ints = tensor<std::int64_t>({1, 2, 3, 4}, {2, 2});
  CHECK(sum(ints).dtype() == ScalarType::Int64);
  CHECK(sum(ints, {0}).to_vector<std::int64_t>() == std::vector<std::int64_t>{4, 6});
  CHECK(sum(tensor<bool>({true, true, false})).item<std::int64_t>() == 2);
  CHECK(sum(ints, {1}, false, ScalarType::Float64).dtype() == ScalarType::Float64);
}

// The last-dimension path takes exp over blocks of rows (Note [Softmax rows take exp a block at a time]):
// many rows (more than one parallel grain), a row length that is no multiple of the SIMD width, and
// -inf logits, which must come out -inf in the forward and contribute exp(-inf) = 0 in the backward.
// Rows of 4 take the fixed-width instantiation (Note [Short softmax rows have a fixed width]), rows of 7
// the general one.
// Found by the API fuzzer: strata made input_dtype the gradient's dtype and converted the float
// result into it (so int64 meant a float-to-integer cast of values like -1e30: undefined behaviour).
// PyTorch's CPU meta function keeps grad_output's dtype whatever input_dtype says (torch 1.13 checked).
TEST_CASE("_log_softmax_backward_data returns grad_output's dtype, whatever input_dtype is") {
  const Tensor out = _log_softmax(randn({2, 3}), 1);
  const Tensor grad = randn({2, 3});
  for (ScalarType input_dtype : {ScalarType::Int64, ScalarType::Bool, ScalarType::Float64, ScalarType::Float32})
    CHECK(_log_softmax_backward_data(grad, out, 1, input_dtype).dtype() == ScalarType::Float32);
  const Tensor out64 = _log_softmax(randn({2, 3}, {.dtype = ScalarType::Float64}), 1);
  CHECK(_log_softmax_backward_data(randn({2, 3}, {.dtype = ScalarType::Float64}), out64, 1, ScalarType::Int64).dtype() ==
        ScalarType::Float64);
}

TEST_CASE("_log_softmax along the last dimension handles many rows and -inf logits") {
  for (std::int64_t len : {4, 7})
    for (ScalarType dtype : {ScalarType::Float32, ScalarType::Float64}) {
      INFO(dtype, " rows of ", len);
      const auto n = static_cast<std::size_t>(len);
      manual_seed(7);
      const Tensor x = mul(randn({300, len}, {.dtype = dtype}), scalar_tensor(5.0, dtype));
      fill_(as_strided(x, {300}, {len}, 2), -INFINITY);
      const Tensor out = _log_softmax(x, -1);
      const Tensor grad = randn({300, len}, {.dtype = dtype});
      const Tensor grad_in = _log_softmax_backward_data(grad, out, 1, dtype);
      const std::vector<double> xv = x.to_vector<double>(), ov = out.to_vector<double>(), gv = grad.to_vector<double>(),
                                giv = grad_in.to_vector<double>();
      double worst = 0;
      for (std::size_t r = 0; r < 300; ++r) {
        double m = -INFINITY, s = 0, gs = 0;
        for (std::size_t i = 0; i < n; ++i) m = std::max(m, xv[r * n + i]);
        for (std::size_t i = 0; i < n; ++i) s += std::exp(xv[r * n + i] - m);
        for (std::size_t i = 0; i < n; ++i) gs += gv[r * n + i];
        for (std::size_t i = 0; i < n; ++i) {
          const std::size_t k = r * n + i;
          const double expected = xv[k] - m - std::log(s);
          if (std::isinf(expected)) CHECK(ov[k] == -INFINITY);
          else worst = std::max(worst, std::abs(ov[k] - expected));
          worst = std::max(worst, std::abs(giv[k] - (gv[k] - std::exp(ov[k]) * gs)));
        }
      }
      CHECK(worst <= 1e-5);
    }
}

TEST_CASE("_log_softmax and its backward match the formulas along any dimension") {
  for (std::int64_t dim : {0, 1, -1})
    for (bool transposed : {false, true})
      for (std::int64_t n : {1, 3, 4, 5, 9}) {
        const std::string where = "dim=" + std::to_string(dim) + (transposed ? " transposed" : "") + " n=" + std::to_string(n);
        auto build = [&](Device d) {
          return Inputs{transposed ? t(randn({n, 5}, {.device = d})) : mul(randn({5, n}, {.device = d}), scalar_tensor(10.0, ScalarType::Float32))};
        };
        auto rows = [dim](const Host& h, const std::function<void(std::vector<std::size_t>&)>& f) {
          const std::int64_t d = (dim + 2) % 2, other = 1 - d;
          for (std::int64_t o = 0; o < h.shape[static_cast<std::size_t>(other)]; ++o) {
            std::vector<std::size_t> row;
            for (std::int64_t i = 0; i < h.shape[static_cast<std::size_t>(d)]; ++i)
              row.push_back(static_cast<std::size_t>(d == 1 ? o * h.shape[1] + i : i * h.shape[1] + o));
            f(row);
          }
        };
        check_op(
            "_log_softmax " + where, build, [&](const Inputs& in) { return _log_softmax(in[0], dim); },
            [&](const std::vector<Host>& in) {
              Host out{in[0].v, in[0].shape};
              rows(in[0], [&](std::vector<std::size_t>& row) {
                double m = -INFINITY, s = 0;
                for (std::size_t k : row) m = std::max(m, in[0].v[k]);
                for (std::size_t k : row) s += std::exp(in[0].v[k] - m);
                for (std::size_t k : row) out.v[k] = in[0].v[k] - m - std::log(s);
              });
              return out;
            });
        check_op(
            "_log_softmax_backward_data " + where,
            [&](Device d) {
              const Inputs x = build(d);
              return Inputs{randn(sizes_of(x[0]), {.device = d}), _log_softmax(x[0], dim)};
            },
            [&](const Inputs& in) { return _log_softmax_backward_data(in[0], in[1], dim, ScalarType::Float32); },
            [&](const std::vector<Host>& in) {
              Host out{in[0].v, in[0].shape};
              rows(in[0], [&](std::vector<std::size_t>& row) {
                double s = 0;
                for (std::size_t k : row) s += in[0].v[k];
                for (std::size_t k : row) out.v[k] = in[0].v[k] - std::exp(in[1].v[k]) * s;
              });
              return out;
            });
      }
}

TEST_CASE("nll_loss forward and backward match the definition for every reduction, weight and ignore_index") {
  // Every other element of a fresh tensor twice as long: a strided operand, which the kernels copy
  // (Note [Operands are read where they are]); contiguous operands are read in place.
  auto every_other = [](const Tensor& x) { return as_strided(x, {x.numel() / 2}, {2}, 0); };
  for (std::int64_t reduction : {0, 1, 2})
    for (bool weighted : {false, true})
      for (std::int64_t ignore : {-100, 2})
        for (bool strided : {false, true}) {
          const std::string where = "reduction=" + std::to_string(reduction) + (weighted ? " weighted" : "") +
                                    " ignore=" + std::to_string(ignore) + (strided ? " strided" : "");
          auto build = [&](Device d) {
            if (strided)
              return Inputs{t(_log_softmax(randn({4, 6}, {.device = d}), 0)), every_other(randint(0, 4, {12}, {.device = d})),
                            weighted ? every_other(rand({8}, {.device = d})) : Tensor()};
            return Inputs{_log_softmax(randn({6, 4}, {.device = d}), 1), randint(0, 4, {6}, {.device = d}),
                          weighted ? rand({4}, {.device = d}) : Tensor()};
          };
          // loss_i = -w[t_i] x[i, t_i] (0 if ignored); mean divides by the sum of w[t_i] over kept rows.
          auto terms = [&](const std::vector<Host>& in, std::vector<double>& loss, double& total) {
            total = 0;
            for (std::int64_t i = 0; i < 6; ++i) {
              const auto t_i = static_cast<std::int64_t>(in[1].v[static_cast<std::size_t>(i)]);
              const double w = weighted ? in[2].v[static_cast<std::size_t>(t_i)] : 1.0;
              const bool kept = t_i != ignore;
              loss.push_back(kept ? -w * in[0].v[static_cast<std::size_t>(i * 4 + t_i)] : 0.0);
              total += kept ? w : 0.0;
            }
          };
          check_op(
              "nll_loss_forward " + where, build,
              [&](const Inputs& in) { return std::get<0>(nll_loss_forward(in[0], in[1], in[2], reduction, ignore)); },
              [&](const std::vector<Host>& in) {
                std::vector<double> loss;
                double total;
                terms(in, loss, total);
                if (reduction == 0) return Host{loss, {6}};
                double s = 0;
                for (double l : loss) s += l;
                return Host{{reduction == 1 ? s / total : s}, {}};
              });
          check_op(
              "nll_loss_backward " + where,
              [&](Device d) {
                Inputs in = build(d);
                const auto [out, total_weight] = nll_loss_forward(in[0], in[1], in[2], reduction, ignore);
                in.push_back(reduction != 0 ? randn({}, {.device = d})
                             : strided ? every_other(randn({12}, {.device = d})) : randn({6}, {.device = d}));
                in.push_back(total_weight);
                return in;
              },
              [&](const Inputs& in) { return nll_loss_backward(in[3], in[0], in[1], in[2], reduction, ignore, in[4]); },
              [&](const std::vector<Host>& in) {
                Host out{std::vector<double>(24, 0.0), {6, 4}};
                for (std::int64_t i = 0; i < 6; ++i) {
                  const auto t_i = static_cast<std::int64_t>(in[1].v[static_cast<std::size_t>(i)]);
                  if (t_i == ignore) continue;
                  const double w = weighted ? in[2].v[static_cast<std::size_t>(t_i)] : 1.0;
                  const double g = reduction == 0 ? in[3].v[static_cast<std::size_t>(i)] : in[3].v[0];
                  out.v[static_cast<std::size_t>(i * 4 + t_i)] = -w * g / (reduction == 1 ? in[4].v[0] : 1.0);
                }
                return out;
              });
        }
  // A 1-D input with a 0-d target.
  const Tensor logp = _log_softmax(tensor<float>({0.1f, 0.2f, 0.7f}), 0);
  const Tensor target = scalar_tensor(2, ScalarType::Int64);
  CHECK(std::get<0>(nll_loss_forward(logp, target, Tensor(), 1, -100)).item<float>() == doctest::Approx(-logp.to_vector<float>()[2]));
}

TEST_CASE("view ops alias their input's storage with PyTorch's geometry") {
  const Tensor a = tensor<float>({0, 1, 2, 3, 4, 5}, {2, 3});
  const Tensor at = t(a);
  CHECK(at.impl()->storage().get() == a.impl()->storage().get());
  CHECK(sizes_of(at) == std::vector<std::int64_t>{3, 2});
  CHECK(at.to_vector<float>() == std::vector<float>{0, 3, 1, 4, 2, 5});
  CHECK(sizes_of(t(tensor<float>({1, 2}))) == std::vector<std::int64_t>{2});
  CHECK(transpose(a, -1, 0).strides() == at.strides());
  CHECK(view(a, {3, -1}).to_vector<float>() == a.to_vector<float>());
  CHECK(sizes_of(view(a, {6})) == std::vector<std::int64_t>{6});
  CHECK(sizes_of(view(at, {3, 1, 2})) == std::vector<std::int64_t>{3, 1, 2});  // a viewable non-contiguous case
  const Tensor e = expand(tensor<float>({1, 2, 3}), {2, 3});
  CHECK(e.strides()[0] == 0);
  CHECK(e.to_vector<float>() == std::vector<float>{1, 2, 3, 1, 2, 3});
  CHECK(sizes_of(expand(tensor<float>({1, 2, 3}, {3, 1}), {-1, 4})) == std::vector<std::int64_t>{3, 4});
  const Tensor s = as_strided(a, {2, 2}, {1, 2}, 1);
  CHECK(s.to_vector<float>() == std::vector<float>{1, 3, 2, 4});
  const Tensor u = unsqueeze(a, 1);
  CHECK(sizes_of(u) == std::vector<std::int64_t>{2, 1, 3});
  CHECK(sizes_of(squeeze(u, 1)) == std::vector<std::int64_t>{2, 3});
  CHECK(sizes_of(squeeze(a, 0)) == std::vector<std::int64_t>{2, 3});
  CHECK(sizes_of(unsqueeze(a, -1)) == std::vector<std::int64_t>{2, 3, 1});
  const Tensor uv = _unsafe_view(a, {3, 2});  // view's geometry under a schema without an alias
  CHECK(uv.impl()->storage().get() == a.impl()->storage().get());
  CHECK(sizes_of(uv) == std::vector<std::int64_t>{3, 2});
  CHECK(uv.to_vector<float>() == a.to_vector<float>());
  const Tensor d = detach(a);
  CHECK(d.impl()->storage().get() == a.impl()->storage().get());
  CHECK_FALSE(d.is_same(a));
  // detach copies its input's geometry (SameGeometry): strides, offset, contiguity and data pointer.
  for (const Tensor& src : {as_strided(a, {2, 2}, {1, 2}, 1), t(a), a, as_strided(a, {0, 3}, {3, 1}, 5)}) {
    const Tensor ds = detach(src);
    CHECK(sizes_of(ds) == sizes_of(src));
    CHECK(strides_of(ds) == strides_of(src));
    CHECK(ds.storage_offset() == src.storage_offset());
    CHECK(ds.is_contiguous() == src.is_contiguous());
    CHECK(ds.numel() == src.numel());
    CHECK(ds.to_vector<float>() == src.to_vector<float>());
  }
  // t and transpose swap two dimensions of the copied geometry and recompute contiguity.
  CHECK(t(empty({3, 1})).is_contiguous());             // [1, 3] with strides [1, 1]
  CHECK_FALSE(t(a).is_contiguous());
  CHECK(transpose(t(a), 0, 1).is_contiguous());
  CHECK(transpose(a, 1, 1).is_contiguous());
  CHECK(strides_of(transpose(a, -1, -1)) == strides_of(a));
  CHECK(strides_of(transpose(empty({2, 3, 4}), 2, 0)) == std::vector<std::int64_t>{1, 4, 12});
  CHECK_FALSE(transpose(empty({2, 3, 4}), 2, 0).is_contiguous());  // Note [A transpose's contiguity]
  CHECK(transpose(empty({2, 1, 4}), 1, 0).is_contiguous());         // a size-1 dimension moves
  CHECK(t(empty({0, 3})).is_contiguous());                           // no elements
  CHECK(sizes_of(t(scalar_tensor(1.0, ScalarType::Float32))).empty());
  CHECK(t(tensor<float>({1, 2, 3})).to_vector<float>() == std::vector<float>{1, 2, 3});
  const Tensor dm = detach(t(empty({2, 3}, {.device = Device::Meta})));
  CHECK(dm.is_meta());
  CHECK(strides_of(dm) == std::vector<std::int64_t>{1, 3});
  CHECK_FALSE(dm.is_contiguous());
  // view copies its input's numel, and its contiguity when the input is contiguous (Note [A view's
  // contiguity]): both match a recomputation, for sources with odd size-1 strides, offsets, no elements.
  struct ViewCase {
    Tensor src;
    std::vector<std::int64_t> shape;
  };
  for (const ViewCase& c : {ViewCase{as_strided(a, {3, 1}, {1, 5}, 0), {3}}, ViewCase{as_strided(a, {3, 1}, {1, 5}, 0), {1, 3, 1}},
                            ViewCase{as_strided(a, {1, 3}, {7, 1}, 2), {3, 1}}, ViewCase{at, {3, 1, 2}}, ViewCase{at, {1, 3, 2}},
                            ViewCase{as_strided(a, {2, 2}, {1, 2}, 1), {2, 2}}, ViewCase{empty({0, 3}), {3, 0}},
                            ViewCase{as_strided(a, {0, 3}, {3, 1}, 5), {-1}}, ViewCase{scalar_tensor(1.0, ScalarType::Float32), {1, 1}},
                            ViewCase{a, {6, 1}}}) {
    const Tensor v = view(c.src, c.shape);
    CHECK(v.numel() == numel_of(v.sizes()));
    CHECK(v.is_contiguous() == is_contiguous_layout(v.sizes(), v.strides()));
    CHECK(v.storage_offset() == c.src.storage_offset());
    CHECK(v.to_vector<float>() == c.src.to_vector<float>());
  }
  CHECK(strides_of(view(as_strided(a, {3, 1}, {1, 5}, 0), {3, 1})) == std::vector<std::int64_t>{1, 5});  // kept, as in PyTorch
  CHECK(reshape(at, {6}).to_vector<float>() == std::vector<float>{0, 3, 1, 4, 2, 5});  // needs a copy
  CHECK(reshape(a, {3, 2}).impl()->storage().get() == a.impl()->storage().get());     // a view
  CHECK(contiguous(at).is_contiguous());
  CHECK(contiguous(a).is_same(a));
}

TEST_CASE("view ops on meta tensors give the same geometry as on CPU") {
  for (Device d : {Device::CPU, Device::Meta}) {
    const Tensor a = empty({4, 6}, {.device = d});
    CHECK(view(t(view(a, {6, 4})), {4, 6}).device() == d);
    CHECK(sizes_of(expand(unsqueeze(a, 0), {3, 4, 6})) == std::vector<std::int64_t>{3, 4, 6});
    CHECK(as_strided(a, {2, 2}, {6, 1}, 2).storage_offset() == 2);
    CHECK(transpose(a, 0, 1).strides()[0] == 1);
  }
}

TEST_CASE("factories and copies: dtypes, values, and preserved layouts") {
  const Tensor x = t(tensor<float>({1, 2, 3, 4, 5, 6}, {2, 3}));
  CHECK(ones_like(x).to_vector<float>() == std::vector<float>(6, 1.0f));
  CHECK(ones_like(x).strides() == x.strides());  // preserve_format keeps the transposed layout
  CHECK(zeros_like(x, {.dtype = ScalarType::Int64}).dtype() == ScalarType::Int64);
  CHECK(empty_like(expand(tensor<float>({1}), {4})).is_contiguous());  // not dense: becomes contiguous
  CHECK(sizes_of(empty({2, 0, 3})) == std::vector<std::int64_t>{2, 0, 3});
  CHECK(empty({2}, {.dtype = ScalarType::Float64}).dtype() == ScalarType::Float64);
  const Tensor ns = new_empty_strided(x, {2, 3}, {1, 2});
  CHECK(ns.strides() == IntArrayRef{1, 2});
  CHECK(ns.dtype() == ScalarType::Float32);
  const Tensor c = clone(x);
  CHECK(c.to_vector<float>() == x.to_vector<float>());
  CHECK(c.strides() == x.strides());
  CHECK(clone(x, MemoryFormat::Contiguous).is_contiguous());
  CHECK(to(x, ScalarType::Int64).to_vector<std::int64_t>() == std::vector<std::int64_t>{1, 4, 2, 5, 3, 6});
  CHECK(to(x, ScalarType::Float32).is_same(x));
  const Tensor f = empty({2, 3});
  fill_(f, 2.5);
  CHECK(f.to_vector<float>() == std::vector<float>(6, 2.5f));
  zero_(f);
  CHECK(f.to_vector<float>() == std::vector<float>(6, 0.0f));
  copy_(f, tensor<std::int64_t>({7, 8, 9}));  // broadcast and converted
  CHECK(f.to_vector<float>() == std::vector<float>{7, 8, 9, 7, 8, 9});
  const Tensor ft = t(empty({3, 2}));
  copy_(ft, tensor<float>({1, 2, 3, 4, 5, 6}, {2, 3}));  // into a transposed destination
  CHECK(ft.to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
  const Tensor filled_int = empty({2}, {.dtype = ScalarType::Int64});
  fill_(filled_int, 1.7);
  CHECK(filled_int.to_vector<std::int64_t>() == std::vector<std::int64_t>{1, 1});
}

}  // namespace test_ops_reference
