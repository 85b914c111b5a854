// tests/fuzz/api_composites.cpp: one table entry per composite or front-end call. Each is rehearsed on
// meta copies of its inputs first, as an op call is (api_calls.h), so its outputs stay in budget.
#include "tests/fuzz/api_composites.h"

#include <algorithm>
#include <functional>
#include <string>

#include "nn/functional.h"
#include "ops/detach.h"
#include "ops/functions.h"
#include "tests/fuzz/api_calls.h"

namespace strata::fuzz {

namespace {

using Inputs = std::vector<Tensor>;
using Fn = std::function<Inputs(const Inputs&)>;

struct Composite {
  const char* name = "";
  std::size_t arity = 1;  // inputs read from the pool
  Fn fn;
};

// A shape for x: its own sizes, with a -1, reversed, or made up.
DimVector shape_value(ByteReader& r, const Tensor& x) {
  DimVector out;
  const std::uint8_t b = r.u8();
  if (x.defined() && b % 4 != 3) {
    out = DimVector(x.sizes());
    if (b % 4 == 1 && !out.empty()) out[r.pick(out.size())] = -1;
    if (b % 4 == 2) std::reverse(out.begin(), out.end());
    return out;
  }
  for (std::size_t n = r.pick(7); n > 0; --n) out.push_back(size_value(r));
  return out;
}

// A shape x can be summed to: its trailing sizes with some set to 1, or made up (possibly longer).
DimVector sum_to_shape(ByteReader& r, const Tensor& x) {
  const std::uint8_t b = r.u8();
  if (!x.defined() || b % 4 == 3) return shape_value(r, x);
  const std::size_t keep = x.dim() == 0 ? 0 : r.pick(static_cast<std::size_t>(x.dim()) + 1);
  DimVector out;
  for (std::size_t d = x.sizes().size() - keep; d < x.sizes().size(); ++d) out.push_back(x.sizes()[d]);
  for (auto& s : out)
    if (r.u8() & 1) s = 1;
  return out;
}

Scalar scalar_value(ByteReader& r) {
  switch (r.pick(3)) {
    case 0: return Scalar(int_value(r));
    case 1: return Scalar(double_value(r));
    default: return Scalar(static_cast<bool>(r.u8() & 1));
  }
}

std::optional<ScalarType> optional_dtype(ByteReader& r) {
  const std::uint8_t b = r.u8();
  if (b % 3 == 0) return std::nullopt;
  return dtype_value(b / 3);
}

// The arguments of a reduction over dims (mean.dim, sum.dim_IntList), read in this order.
struct DimsReduction {
  DimVector dims;
  bool keepdim = false;
  std::optional<ScalarType> dtype;
};
DimsReduction dims_reduction(ByteReader& r) {
  DimsReduction out;
  for (std::size_t n = r.pick(3); n > 0; --n) out.dims.push_back(int_value(r));
  out.keepdim = r.u8() & 1;
  out.dtype = optional_dtype(r);
  return out;
}

nn::functional::LossOptions loss_options(World& w, ByteReader& r) {
  nn::functional::LossOptions options;
  const std::uint8_t b = r.u8();
  if (b & 1) options.weight = w.slot(r.u8()).tensor;
  options.reduction = static_cast<nn::functional::Reduction>((b >> 1) % 3);
  options.ignore_index = b & 8 ? int_value(r) : -100;
  return options;
}

// The inference composites (a kind byte of 0xE0 or more): softmax, dropout, embedding, gelu and the
// front ends that return two tensors.
Composite read_inference_composite(ByteReader& r, std::uint8_t kind) {
  namespace F = nn::functional;
  switch (kind % 8) {
    case 0: {
      const std::int64_t dim = int_value(r);
      const auto dtype = optional_dtype(r);
      return {"softmax", 1, [dim, dtype](const Inputs& in) { return Inputs{F::softmax(in[0], dim, dtype)}; }};
    }
    case 1: {
      const std::uint8_t b = r.u8();
      const double p = (b % 13) / 10.0 - 0.1;  // -0.1 .. 1.1: both ends and outside
      const bool train = b & 0x80;
      return {"dropout", 1, [p, train](const Inputs& in) { return Inputs{dropout(in[0], p, train)}; }};
    }
    case 2: {
      const std::uint8_t b = r.u8();
      const std::optional<std::int64_t> padding = b & 1 ? std::optional<std::int64_t>(int_value(r)) : std::nullopt;
      return {"embedding", 2, [padding](const Inputs& in) { return Inputs{F::embedding(in[0], in[1], padding)}; }};
    }
    case 3: {
      const bool approximate = r.u8() & 1;
      return {"gelu", 1, [approximate](const Inputs& in) { return Inputs{F::gelu(in[0], approximate ? "tanh" : "none")}; }};
    }
    case 4: {
      const std::int64_t dim = int_value(r);
      const bool keepdim = r.u8() & 1;
      return {"max (dim)", 1, [dim, keepdim](const Inputs& in) {
                const auto [values, indices] = max(in[0], dim, keepdim);
                return Inputs{values, indices};
              }};
    }
    case 5: {
      const std::uint8_t b = r.u8();
      const double p = (b % 13) / 10.0 - 0.1;
      const std::optional<bool> train = b & 0x40 ? std::nullopt : std::optional<bool>(b & 0x80);
      return {"native_dropout", 1, [p, train](const Inputs& in) {
                const auto [out, mask] = native_dropout(in[0], p, train);
                return Inputs{out, mask};
              }};
    }
    case 6: {
      const DimsReduction a = dims_reduction(r);
      return {"mean (dims)", 1, [a](const Inputs& in) { return Inputs{mean(in[0], a.dims, a.keepdim, a.dtype)}; }};
    }
    default: {
      const std::uint8_t b = r.u8();
      const std::optional<std::int64_t> dim = b & 1 ? std::optional<std::int64_t>(int_value(r)) : std::nullopt;
      return {"argmax", 1, [dim, b](const Inputs& in) { return Inputs{argmax(in[0], dim, b & 2)}; }};
    }
  }
}

Composite read_composite(World& w, ByteReader& r, const Tensor& x) {
  namespace F = nn::functional;
  const std::uint8_t kind = r.u8();
  if (kind >= 0xE0) return read_inference_composite(r, kind);
  switch (kind % 32) {
    case 0: {
      const DimVector shape = shape_value(r, x);
      return {"reshape", 1, [shape](const Inputs& in) { return Inputs{reshape(in[0], shape)}; }};
    }
    case 1: return {"contiguous", 1, [](const Inputs& in) { return Inputs{contiguous(in[0])}; }};
    case 2: {
      const DimVector shape = sum_to_shape(r, x);
      return {"sum_to", 1, [shape](const Inputs& in) { return Inputs{sum_to(in[0], shape)}; }};
    }
    case 3: {
      const ScalarType dtype = dtype_value(r.u8());
      return {"to", 1, [dtype](const Inputs& in) { return Inputs{to(in[0], dtype)}; }};
    }
    case 4: {
      const bool bias = r.u8() & 1;
      return {"linear", 3, [bias](const Inputs& in) { return Inputs{F::linear(in[0], in[1], bias ? in[2] : Tensor())}; }};
    }
    case 5: return {"matmul", 2, [](const Inputs& in) { return Inputs{F::matmul(in[0], in[1])}; }};
    case 6: {
      const F::LossOptions options = loss_options(w, r);
      return {"cross_entropy", 2, [options](const Inputs& in) { return Inputs{F::cross_entropy(in[0], in[1], options)}; }};
    }
    case 7: {
      const std::int64_t dim = int_value(r);
      const auto dtype = optional_dtype(r);
      return {"log_softmax", 1, [dim, dtype](const Inputs& in) { return Inputs{F::log_softmax(in[0], dim, dtype)}; }};
    }
    case 8: {
      const F::LossOptions options = loss_options(w, r);
      return {"nll_loss", 2, [options](const Inputs& in) { return Inputs{F::nll_loss(in[0], in[1], options)}; }};
    }
    case 9: return {"functional relu", 1, [](const Inputs& in) { return Inputs{F::relu(in[0])}; }};
    case 10: return {"operator+", 2, [](const Inputs& in) { return Inputs{in[0] + in[1]}; }};
    case 11: return {"operator-", 2, [](const Inputs& in) { return Inputs{in[0] - in[1]}; }};
    case 12: return {"operator*", 2, [](const Inputs& in) { return Inputs{in[0] * in[1]}; }};
    case 13: return {"operator/", 2, [](const Inputs& in) { return Inputs{in[0] / in[1]}; }};
    case 14: return {"unary operator-", 1, [](const Inputs& in) { return Inputs{-in[0]}; }};
    case 15: return {"detach", 1, [](const Inputs& in) { return Inputs{detach(in[0])}; }};
    case 16: {
      const Scalar s = scalar_value(r);
      return {"mul (Scalar)", 1, [s](const Inputs& in) { return Inputs{mul(in[0], s)}; }};
    }
    case 17: {
      const Scalar alpha = scalar_value(r);
      return {"add", 2, [alpha](const Inputs& in) { return Inputs{add(in[0], in[1], alpha)}; }};
    }
    case 18: {
      const Scalar alpha = scalar_value(r);
      return {"add_", 2, [alpha](const Inputs& in) { return Inputs{add_(in[0], in[1], alpha)}; }};
    }
    case 19: return {"aten.mul_.Tensor", 2, [](const Inputs& in) { return Inputs{mul_(in[0], in[1])}; }};
    case 20: return {"mm", 2, [](const Inputs& in) { return Inputs{mm(in[0], in[1])}; }};
    case 21: {
      const Scalar beta = scalar_value(r), alpha = scalar_value(r);
      return {"addmm", 3, [beta, alpha](const Inputs& in) { return Inputs{addmm(in[0], in[1], in[2], beta, alpha)}; }};
    }
    case 22: {
      const DimsReduction a = dims_reduction(r);
      return {"sum (dims)", 1, [a](const Inputs& in) { return Inputs{sum(in[0], a.dims, a.keepdim, a.dtype)}; }};
    }
    case 23: {
      const std::int64_t dim = int_value(r);
      const bool half = r.u8() & 1;
      return {"_log_softmax", 1, [dim, half](const Inputs& in) { return Inputs{_log_softmax(in[0], dim, half)}; }};
    }
    case 24: return {"clone", 1, [](const Inputs& in) { return Inputs{clone(in[0])}; }};
    case 25: {
      const Scalar value = scalar_value(r);
      return {"fill_", 1, [value](const Inputs& in) { return Inputs{fill_(in[0], value)}; }};
    }
    case 26: return {"zero_", 1, [](const Inputs& in) { return Inputs{zero_(in[0])}; }};
    case 27: return {"copy_", 2, [](const Inputs& in) { return Inputs{copy_(in[0], in[1])}; }};
    case 28: return {"exp", 1, [](const Inputs& in) { return Inputs{exp(in[0])}; }};
    case 29: {
      const Scalar threshold = scalar_value(r);
      return {"threshold_backward", 2,
              [threshold](const Inputs& in) { return Inputs{threshold_backward(in[0], in[1], threshold)}; }};
    }
    case 30: {
      const auto dtype = optional_dtype(r);
      return {"ones_like", 1, [dtype](const Inputs& in) { return Inputs{ones_like(in[0], {.dtype = dtype})}; }};
    }
    default: {
      const auto dtype = optional_dtype(r);
      return {"sum", 1, [dtype](const Inputs& in) { return Inputs{sum(in[0], dtype)}; }};
    }
  }
}

}  // namespace

void call_composite(World& w, ByteReader& r) {
  const std::uint8_t dst = r.u8();
  const Slot& first = w.slot(r.u8());
  Composite c = read_composite(w, r, first.tensor);
  if (w.verbose) std::fprintf(stderr, "  composite %s\n", c.name);
  Inputs inputs{first.tensor};
  bool tainted = first.tainted;
  for (std::size_t i = 1; i < c.arity; ++i) {
    const Slot& s = w.slot(r.u8());
    inputs.push_back(s.tensor);
    tainted |= s.tainted;
  }
  for (const Tensor& t : inputs)
    if (is_huge(t)) return;
  Inputs meta;
  bool any_cpu = false;
  for (const Tensor& t : inputs) any_cpu |= t.defined() && t.device() == Device::CPU;
  if (!attempt("a meta copy", [&] {
        for (const Tensor& t : inputs) meta.push_back(meta_copy(t));
      }))
    return;  // see rehearse_call
  const auto predicted = rehearse([&] { return c.fn(meta); });
  if (predicted && any_cpu && !within_budget(*predicted)) return;
  Inputs outs;
  if (!attempt(c.name, [&] { outs = c.fn(inputs); })) return;
  if (predicted) check_prediction(c.name, *predicted, outs);
  for (std::size_t i = 0; i < outs.size(); ++i) store(w, static_cast<std::uint8_t>(dst + i), outs[i], tainted);
}

}  // namespace strata::fuzz
