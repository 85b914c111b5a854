// ops/native/random_ops.cpp: random tensors from a Generator (the default one when none is given):
// randn, rand, randint (each with and without an explicit generator, as PyTorch's overloads are),
// normal_, uniform_, bernoulli_.float, exponential_ and multinomial. Elements are drawn in memory order under the generator's
// lock, using the transforms in ops/native/distributions.h, which is what makes the numbers equal PyTorch's
// (except bernoulli_'s: see its kernel).
#include <algorithm>
#include <limits>
#include <mutex>
#include <numeric>
#include <vector>
#include <optional>

#include "ops/boxing.h"
#include "ops/native/distributions.h"
#include "ops/native/elementwise.h"
#include "ops/native/memory_overlap.h"
#include "ops/op_table.h"

namespace strata::ops {

namespace {

GeneratorImpl& generator_or_default(GeneratorImpl* g) { return g ? *g : *default_generator().impl(); }

// Calls fn(element&) for each element of `t` in memory order, as PyTorch's TensorIterator visits
// them (it orders the dimensions by stride): a transposed self is filled as it lies in memory, so
// it draws the numbers a contiguous one does, where they sit.
template <typename T, typename Fn>
void for_each_element(const Tensor& t, const Fn& fn) {
  T* p = data_of<T>(t);
  if (t.is_contiguous() || t.is_non_overlapping_and_dense()) {
    for (std::int64_t i = 0; i < t.numel(); ++i) fn(p[i]);
    return;
  }
  // Outermost dimension first: strides from largest to smallest, ties in their own order.
  std::vector<std::size_t> order(static_cast<std::size_t>(t.dim()));
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return t.strides()[a] > t.strides()[b]; });
  DimVector sizes, strides;
  for (std::size_t d : order) {
    sizes.push_back(t.sizes()[d]);
    strides.push_back(t.strides()[d]);
  }
  StridedLoop<1> loop(sizes, {strides});
  loop.for_each_serial([&](const std::array<std::int64_t, 1>& off) { fn(p[off[0]]); });
}

void normal_into(const Tensor& t, double mean, double stdv, GeneratorImpl* gen) {
  GeneratorImpl& g = generator_or_default(gen);
  std::lock_guard<std::mutex> lock(g.mutex());
  visit_floating(t.dtype(), "\"normal_kernel_cpu\"", [&](auto zero) {
    using T = decltype(zero);
    if (t.numel() >= 16 && t.is_contiguous()) {
      normal_fill<T>(data_of<T>(t), t.numel(), static_cast<T>(mean), static_cast<T>(stdv), g);
    } else {
      for_each_element<T>(t, [&](T& x) { x = static_cast<T>(normal_double(g, mean, stdv)); });
    }
  });
}

void uniform_into(const Tensor& t, double from, double to, GeneratorImpl* gen) {
  GeneratorImpl& g = generator_or_default(gen);
  std::lock_guard<std::mutex> lock(g.mutex());
  visit_floating(t.dtype(), "\"check_uniform_bounds\"", [&](auto zero) {
    using T = decltype(zero);
    const T lo = static_cast<T>(from), hi = static_cast<T>(to);
    for_each_element<T>(t, [&](T& x) { x = uniform_real<T>(g, lo, hi); });
  });
}

void random_from_to_into(const Tensor& t, std::int64_t low, std::int64_t high, GeneratorImpl* gen) {
  GeneratorImpl& g = generator_or_default(gen);
  std::lock_guard<std::mutex> lock(g.mutex());
  // In uint64, as PyTorch's random_from_to does: high - low and base + offset may not fit int64
  // (randint(-2^63, 2^63 - 1)), and the offset wraps back into [low, high) (Note [Integer kernels wrap]).
  const std::uint64_t range = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
  const auto base = static_cast<std::uint64_t>(low);
  visit_dtype(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    for_each_element<T>(t, [&](T& x) {
      const std::uint64_t bits = range >= (std::uint64_t{1} << 32) ? g.random64() : g.random();
      x = static_cast<T>(static_cast<std::int64_t>(base + bits % range));
    });
  });
}

TensorSpec floating_factory_spec(IntArrayRef size, std::optional<ScalarType> dtype, const char* kernel) {
  for (std::int64_t s : size) STRATA_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", shape_str(size));
  const ScalarType t = dtype.value_or(ScalarType::Float32);
  check_floating(t, kernel);
  return {DimVector(size), t, {}};
}

// ---- randn, rand (each with and without .generator): a standard normal N(0, 1) or uniform U[0, 1) ----
// The four overloads of one distribution differ only in that and in the generator argument.
enum class Standard { Normal, Uniform };

constexpr const char* kernel_name(Standard d) {
  return d == Standard::Normal ? "\"normal_kernel_cpu\"" : "\"check_uniform_bounds\"";
}
void fill_standard(Standard d, const Tensor& out, GeneratorImpl* g) {
  if (d == Standard::Normal) normal_into(out, 0.0, 1.0, g);
  else uniform_into(out, 0.0, 1.0, g);
}

template <Standard D>
TensorSpec standard_meta(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout>, std::optional<Device>,
                         std::optional<bool>) {
  return floating_factory_spec(size, dtype, kernel_name(D));
}
template <Standard D>
void standard_cpu(const Tensor& out, IntArrayRef, std::optional<ScalarType>, std::optional<Layout>, std::optional<Device>,
                  std::optional<bool>) {
  fill_standard(D, out, nullptr);
}
template <Standard D>
TensorSpec standard_generator_meta(IntArrayRef size, GeneratorImpl*, std::optional<ScalarType> dtype,
                                   std::optional<Layout>, std::optional<Device>, std::optional<bool>) {
  return floating_factory_spec(size, dtype, kernel_name(D));
}
template <Standard D>
void standard_generator_cpu(const Tensor& out, IntArrayRef, GeneratorImpl* g, std::optional<ScalarType>,
                            std::optional<Layout>, std::optional<Device>, std::optional<bool>) {
  fill_standard(D, out, g);
}

constexpr auto randn_meta = standard_meta<Standard::Normal>;
constexpr auto randn_cpu = standard_cpu<Standard::Normal>;
constexpr auto randn_generator_meta = standard_generator_meta<Standard::Normal>;
constexpr auto randn_generator_cpu = standard_generator_cpu<Standard::Normal>;
constexpr auto rand_meta = standard_meta<Standard::Uniform>;
constexpr auto rand_cpu = standard_cpu<Standard::Uniform>;
constexpr auto rand_generator_meta = standard_generator_meta<Standard::Uniform>;
constexpr auto rand_generator_cpu = standard_generator_cpu<Standard::Uniform>;

// ---- randint.low_generator and the overloads that default low and/or the generator ----
TensorSpec randint_low_generator_meta(std::int64_t low, std::int64_t high, IntArrayRef size, GeneratorImpl*,
                                      std::optional<ScalarType> dtype, std::optional<Layout>, std::optional<Device>,
                                      std::optional<bool>) {
  STRATA_CHECK(low < high, "random_ expects 'from' to be less than 'to', but got from=", low, " >= to=", high);
  for (std::int64_t s : size) STRATA_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", shape_str(size));
  return {DimVector(size), dtype.value_or(ScalarType::Int64), {}};
}
void randint_low_generator_cpu(const Tensor& out, std::int64_t low, std::int64_t high, IntArrayRef, GeneratorImpl* g,
                               std::optional<ScalarType>, std::optional<Layout>, std::optional<Device>,
                               std::optional<bool>) {
  random_from_to_into(out, low, high, g);
}
TensorSpec randint_low_meta(std::int64_t low, std::int64_t high, IntArrayRef size, std::optional<ScalarType> dtype,
                            std::optional<Layout> l, std::optional<Device> d, std::optional<bool> p) {
  return randint_low_generator_meta(low, high, size, nullptr, dtype, l, d, p);
}
void randint_low_cpu(const Tensor& out, std::int64_t low, std::int64_t high, IntArrayRef, std::optional<ScalarType>,
                     std::optional<Layout>, std::optional<Device>, std::optional<bool>) {
  random_from_to_into(out, low, high, nullptr);
}
TensorSpec randint_meta(std::int64_t high, IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout> l,
                        std::optional<Device> d, std::optional<bool> p) {
  return randint_low_generator_meta(0, high, size, nullptr, dtype, l, d, p);
}
void randint_cpu(const Tensor& out, std::int64_t high, IntArrayRef, std::optional<ScalarType>, std::optional<Layout>,
                 std::optional<Device>, std::optional<bool>) {
  random_from_to_into(out, 0, high, nullptr);
}
TensorSpec randint_generator_meta(std::int64_t high, IntArrayRef size, GeneratorImpl*, std::optional<ScalarType> dtype,
                                  std::optional<Layout> l, std::optional<Device> d, std::optional<bool> p) {
  return randint_low_generator_meta(0, high, size, nullptr, dtype, l, d, p);
}
void randint_generator_cpu(const Tensor& out, std::int64_t high, IntArrayRef, GeneratorImpl* g,
                           std::optional<ScalarType>, std::optional<Layout>, std::optional<Device>, std::optional<bool>) {
  random_from_to_into(out, 0, high, g);
}

// ---- normal_, uniform_ ----
void normal__check(const Tensor& self, double mean, double stdv, GeneratorImpl*) {
  (void)mean;
  STRATA_CHECK(stdv >= 0.0, "normal expects std >= 0.0, but found std ", stdv);
  check_floating(self.dtype(), "\"normal_kernel_cpu\"");
}
void normal__cpu(const Tensor& self, double mean, double stdv, GeneratorImpl* g) { normal_into(self, mean, stdv, g); }

void uniform__check(const Tensor& self, double from, double to, GeneratorImpl*) {
  check_floating(self.dtype(), "\"check_uniform_bounds\"");
  // PyTorch's bounds: both ends finite in self's dtype, and a width the dtype can represent.
  const double max = self.dtype() == ScalarType::Float32 ? std::numeric_limits<float>::max() : std::numeric_limits<double>::max();
  STRATA_CHECK(from >= -max && from <= max, "from is out of bounds for ", self.dtype());
  STRATA_CHECK(to >= -max && to <= max, "to is out of bounds for ", self.dtype());
  STRATA_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to);
  STRATA_CHECK(to - from <= max, "uniform_ expects to-from <= std::numeric_limits<", self.dtype(), ">::max(), but found to=",
               to, " and from=", from, " which result in to-from to exceed the limit");
}
void uniform__cpu(const Tensor& self, double from, double to, GeneratorImpl* g) { uniform_into(self, from, to, g); }

// ---- bernoulli_.float: each element 1 with probability p, else 0 (dropout's noise) ----
// One uniform double per element, 1 when it is below p: the keep-probability is p exactly up to the
// uniform's 2^-53 grid. PyTorch draws through MKL on x86, so its masks differ for the same seed.
void bernoulli__check(const Tensor& self, double p, GeneratorImpl*) {
  STRATA_CHECK(p >= 0 && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  assert_no_internal_overlap(self);
}
void bernoulli__cpu(const Tensor& self, double p, GeneratorImpl* gen) {
  GeneratorImpl& g = generator_or_default(gen);
  std::lock_guard<std::mutex> lock(g.mutex());
  visit_dtype(self.dtype(), [&](auto zero) {
    using T = decltype(zero);
    for_each_element<T>(self, [&](T& x) { x = static_cast<T>(uniform_real<double>(g, 0.0, 1.0) < p); });
  });
}

// ---- exponential_: draws of rate lambd (Note [exponential_ draws one uniform double per element]) ----
void exponential__check(const Tensor& self, double lambd, GeneratorImpl*) {
  STRATA_CHECK(lambd > 0.0, "exponential_ expects lambda > 0.0, but found lambda=", lambd);
  STRATA_CHECK(is_floating_point(self.dtype()),
               "Exponential distribution is a continuous probability distribution. "
               "dtype must be a floating point but you specified ",
               dtype_c10_name(self.dtype()));
  assert_no_internal_overlap(self);
}
void exponential__cpu(const Tensor& self, double lambd, GeneratorImpl* gen) {
  GeneratorImpl& g = generator_or_default(gen);
  std::lock_guard<std::mutex> lock(g.mutex());
  visit_floating(self.dtype(), "\"exponential_cpu\"", [&](auto zero) {
    using T = decltype(zero);
    for_each_element<T>(self, [&](T& x) { x = static_cast<T>(exponential_double(g, lambd)); });
  });
}

// ---- multinomial: num_samples category indices per row of self (1-D: one row) ----
// Note [multinomial's two paths]
// As PyTorch 2.8's CPU multinomial. Without replacement, or for one sample, the exponential trick
// (Gumbel-max with the exp taken): q = empty_like(self).exponential_(1), drawn in q's memory order
// (self's layout when self is dense, else row-major), then the row's argmax of self / q in self's
// dtype (one sample) or its top num_samples. With replacement and several samples, PyTorch's
// cumulative path: per row, the running sum in self's dtype normalised by its total, the last entry
// set to 1, then per sample one uniform double and the first entry not below it (binary search).
// The first path checks the whole input before drawing; the second checks each row as it goes.
TensorSpec multinomial_meta(const Tensor& self, std::int64_t n_sample, bool replacement, GeneratorImpl*) {
  STRATA_CHECK(self.dim() > 0 && self.dim() <= 2, "prob_dist must be 1 or 2 dim");
  STRATA_CHECK(is_floating_point(self.dtype()), "multinomial only supports floating-point dtypes for input, got: ",
               dtype_c10_name(self.dtype()));
  STRATA_CHECK(n_sample > 0, "cannot sample n_sample <= 0 samples");
  const std::int64_t n_categories = self.sizes().back();
  STRATA_CHECK(replacement || n_sample <= n_categories,
               "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  STRATA_CHECK(n_categories <= (std::int64_t{1} << 24), "number of categories cannot exceed 2^24");
  if (self.dim() == 1) return {DimVector{n_sample}, ScalarType::Int64, {}};
  return {DimVector{self.sizes()[0], n_sample}, ScalarType::Int64, {}};
}

template <typename T>
void multinomial_exponential_trick(const Tensor& out, const Tensor& self, std::int64_t n_sample, GeneratorImpl& g) {
  const std::int64_t rows = self.dim() == 1 ? 1 : self.sizes()[0], cats = self.sizes().back();
  const std::int64_t s_row = self.dim() == 1 ? 0 : self.strides()[0], s_cat = self.strides().back();
  const T* p = data_of<T>(self);
  bool valid = true;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cats; ++c) {
      const T v = p[r * s_row + c * s_cat];
      valid = valid && v < std::numeric_limits<T>::infinity() && v >= 0;  // NaN fails both
    }
  }
  STRATA_CHECK(valid, "probability tensor contains either `inf`, `nan` or element < 0");
  for (std::int64_t r = 0; r < rows; ++r) {
    bool all_zero = true;
    for (std::int64_t c = 0; c < cats; ++c) all_zero = all_zero && p[r * s_row + c * s_cat] == 0;
    STRATA_CHECK(!all_zero, "invalid multinomial distribution (sum of probabilities <= 0)");
  }
  // q's element (r, c) sits at q_row * r + q_cat * c of its memory, which is drawn in order.
  const bool dense = self.is_non_overlapping_and_dense();
  const std::int64_t q_row = dense ? s_row : cats, q_cat = dense ? s_cat : 1;
  std::vector<T> q(static_cast<std::size_t>(rows * cats));
  for (T& x : q) x = static_cast<T>(exponential_double(g, 1.0));
  std::int64_t* o = data_of<std::int64_t>(out);
  std::vector<std::pair<T, std::int64_t>> row(static_cast<std::size_t>(cats));
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cats; ++c)
      row[static_cast<std::size_t>(c)] = {p[r * s_row + c * s_cat] / q[static_cast<std::size_t>(r * q_row + c * q_cat)], c};
    // argmax's and topk's order: larger first, NaN above everything, ties by index.
    const auto before = [](const auto& a, const auto& b) {
      if (std::isnan(a.first) != std::isnan(b.first)) return std::isnan(a.first);
      if (!std::isnan(a.first) && a.first != b.first) return a.first > b.first;
      return a.second < b.second;
    };
    std::partial_sort(row.begin(), row.begin() + n_sample, row.end(), before);
    for (std::int64_t j = 0; j < n_sample; ++j) o[r * n_sample + j] = row[static_cast<std::size_t>(j)].second;
  }
}

template <typename T>
void multinomial_cumulative(const Tensor& out, const Tensor& self, std::int64_t n_sample, GeneratorImpl& g) {
  const std::int64_t rows = self.dim() == 1 ? 1 : self.sizes()[0], cats = self.sizes().back();
  const std::int64_t s_row = self.dim() == 1 ? 0 : self.strides()[0], s_cat = self.strides().back();
  const T* p = data_of<T>(self);
  std::int64_t* o = data_of<std::int64_t>(out);
  std::vector<T> cum(static_cast<std::size_t>(std::max<std::int64_t>(cats, 1)));
  for (std::int64_t r = 0; r < rows; ++r) {
    T sum = 0;
    for (std::int64_t c = 0; c < cats; ++c) {
      const T v = p[r * s_row + c * s_cat];
      STRATA_CHECK(v >= 0, "invalid multinomial distribution (encountering probability entry < 0)");
      STRATA_CHECK(std::isfinite(v), "invalid multinomial distribution (encountering probability entry = infinity or NaN)");
      sum += v;
      cum[static_cast<std::size_t>(c)] = sum;
    }
    STRATA_CHECK(sum > 0, "invalid multinomial distribution (sum of probabilities <= 0)");
    for (std::int64_t c = 0; c < cats; ++c) cum[static_cast<std::size_t>(c)] /= sum;
    cum[static_cast<std::size_t>(cats - 1)] = 1;
    for (std::int64_t j = 0; j < n_sample; ++j) {
      const double u = uniform_real<double>(g, 0.0, 1.0);
      const auto first = std::lower_bound(cum.begin(), cum.begin() + cats, u,
                                          [](T entry, double x) { return static_cast<double>(entry) < x; });
      o[r * n_sample + j] = first - cum.begin();
    }
  }
}

void multinomial_cpu(const Tensor& out, const Tensor& self, std::int64_t n_sample, bool replacement, GeneratorImpl* gen) {
  if (out.numel() == 0) return;  // Note [An empty tensor's kernel returns at once]
  GeneratorImpl& g = generator_or_default(gen);
  std::lock_guard<std::mutex> lock(g.mutex());
  visit_floating(self.dtype(), "\"multinomial\"", [&](auto zero) {
    using T = decltype(zero);
    if (!replacement || n_sample == 1) multinomial_exponential_trick<T>(out, self, n_sample, g);
    else multinomial_cumulative<T>(out, self, n_sample, g);
  });
}

}  // namespace

// register_random_ops(): the rows of random_ops.yaml, which scripts/gen-ops writes as C++ at build time.
#include "ops/generated/random_ops_rows.inc"

}  // namespace strata::ops
