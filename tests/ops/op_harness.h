// tests/ops/op_harness.h: checking an op against a plain reference loop over host values (after
// ggml's test-backend-ops), for the kernels' own paths that the op records (tests/ops/op_records.h,
// Note [One record per op]) do not reach: SIMD widths, block sizes, every operand layout. A case
// builds its inputs on a device, runs the op, and gives the reference; the harness checks the CPU
// result against it, then runs the case on meta tensors and checks that the meta function agrees
// with the CPU kernel on sizes, strides and dtype.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/generator.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"

namespace strata::testing {

// Row-major host copy of a tensor.
struct Host {
  std::vector<double> v;
  std::vector<std::int64_t> shape;
  std::int64_t numel() const { return static_cast<std::int64_t>(v.size()); }
};

inline Host host(const Tensor& t) { return {t.to_vector<double>(), sizes_of(t)}; }

// Every multi-index of `shape` in row-major order.
inline std::vector<std::vector<std::int64_t>> all_indices(const std::vector<std::int64_t>& shape) {
  std::vector<std::vector<std::int64_t>> out;
  std::vector<std::int64_t> idx(shape.size(), 0);
  const std::int64_t n = numel_of(shape);
  for (std::int64_t k = 0; k < n; ++k) {
    out.push_back(idx);
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

// h's element at `idx` of a broadcast shape of rank idx.size().
inline double bcast_at(const Host& h, const std::vector<std::int64_t>& idx) {
  std::int64_t flat = 0;
  const std::size_t offset = idx.size() - h.shape.size();
  for (std::size_t d = 0; d < h.shape.size(); ++d) flat = flat * h.shape[d] + (h.shape[d] == 1 ? 0 : idx[offset + d]);
  return h.v[static_cast<std::size_t>(flat)];
}

inline std::vector<std::int64_t> bcast_shape(const Host& a, const Host& b) {
  const DimVector s = broadcast_shapes(a.shape, b.shape);
  return {s.begin(), s.end()};
}

using Inputs = std::vector<Tensor>;
using Builder = std::function<Inputs(Device)>;
using Runner = std::function<Tensor(const Inputs&)>;
using Reference = std::function<Host(const std::vector<Host>&)>;

inline void check_op(const std::string& name, const Builder& build, const Runner& run, const Reference& reference,
                     double tol = 1e-5) {
  INFO(name);
  manual_seed(1234);
  const Inputs cpu = build(Device::CPU);
  const Tensor out = run(cpu);
  std::vector<Host> hosts;
  for (const Tensor& t : cpu) hosts.push_back(t.defined() ? host(t) : Host{});
  const Host expected = reference(hosts);
  REQUIRE(sizes_of(out) == expected.shape);
  CHECK(max_abs_diff(out.to_vector<double>(), expected.v) <= tol);

  const Inputs meta = build(Device::Meta);
  const Tensor meta_out = run(meta);
  CHECK(meta_out.is_meta());
  CHECK(sizes_of(meta_out) == sizes_of(out));
  CHECK(std::vector<std::int64_t>(meta_out.strides().begin(), meta_out.strides().end()) ==
        std::vector<std::int64_t>(out.strides().begin(), out.strides().end()));
  CHECK(meta_out.dtype() == out.dtype());
}

// The input layouts every pointwise op is tried on, for a logical [rows, cols] operand.
enum class Layout2 { Contiguous, Transposed, Broadcast, Row };
inline const char* layout_name(Layout2 l) {
  switch (l) {
    case Layout2::Contiguous: return "contiguous";
    case Layout2::Transposed: return "transposed";
    case Layout2::Broadcast: return "broadcast";
    case Layout2::Row: return "row";
  }
  return "?";
}

inline Tensor make_operand(Layout2 layout, std::int64_t rows, std::int64_t cols, Device d,
                           ScalarType dtype = ScalarType::Float32) {
  const TensorOptions o{.dtype = dtype, .device = d};
  switch (layout) {
    case Layout2::Contiguous: return randn({rows, cols}, o);
    case Layout2::Transposed: return t(randn({cols, rows}, o));
    case Layout2::Broadcast: return expand(randn({1, cols}, o), {rows, cols});
    case Layout2::Row: return randn({cols}, o);
  }
  return Tensor();
}

// Sizes around the AVX2 float width (8) and double width (4).
inline const std::vector<std::int64_t>& simd_sizes() {
  static const std::vector<std::int64_t> sizes{1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33};
  return sizes;
}

}  // namespace strata::testing
