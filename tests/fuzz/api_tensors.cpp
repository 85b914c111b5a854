// tests/fuzz/api_tensors.cpp: the interpreter's tensor instructions: make (and fill), view, wrap, and
// access (what a user reads from a tensor directly: item, to_vector, data_ptr, printing, metadata).
#include <algorithm>
#include <cmath>

#include "autograd/backward.h"
#include "autograd/gradcheck.h"
#include "autograd/variable.h"
#include "ops/detach.h"
#include "ops/functions.h"
#include "tests/fuzz/api_calls.h"
#include "tests/fuzz/api_interpreter.h"
#include "tests/fuzz/api_subjects.h"
#include "modes/logging_tensor.h"

namespace strata::fuzz {

namespace {
// A tensor with elements whose data pointer is null would crash the caller who reads it.
void check_pointer(const Tensor& t, const void* data) {
  if (!data && t.numel() > 0) fail("data_ptr", "a null data pointer for a tensor with elements", shape_str(t.sizes()).c_str());
}

// Whether printing `t` reads at most kMaxElements elements: a huge view prints its summary, the first
// and last 3 items of each dimension longer than 6 (PyTorch's edgeitems), and many short dimensions
// keep that summary itself large. Printing is linear in what it shows, so a larger one is slow by
// design (up to the printer's own limit), not a loop that should not run.
bool prints_few_elements(const Tensor& t) {
  if (!t.defined() || t.numel() <= kMaxElements) return true;
  std::int64_t shown = 1;
  for (std::int64_t n : t.sizes())
    if ((shown *= std::min<std::int64_t>(n, 6)) > kMaxElements) return false;
  return true;
}

}  // namespace

// make: dst dtype device rank size... fill. Sizes that overflow or are negative must be refused;
// a CPU tensor of more than kMaxElements is made on meta instead.
void Interpreter::make(ByteReader& r) {
  const std::uint8_t dst = r.u8();
  const ScalarType dtype = dtype_value(r.u8());
  Device device = r.u8() % 8 == 7 ? Device::Meta : Device::CPU;
  DimVector sizes;
  for (std::size_t n = r.pick(7); n > 0; --n) sizes.push_back(size_value(r));
  const std::uint8_t fill_kind = r.u8();
  // PyTorch's rule: a negative size, a product of sizes that overflows uint64 at any step (so
  // [2^40, 2^40, 0] is refused and [2^62, 2, 0] is not), or more bytes than int64 counts.
  std::uint64_t numel = 1;
  bool bad = false;
  for (std::int64_t s : sizes) bad |= s < 0 || mul_overflows(numel, static_cast<std::uint64_t>(s), &numel);
  bad |= contiguous_bytes_overflow(numel, element_size(dtype));
  if (!bad && device == Device::CPU && numel > kMaxElements) device = Device::Meta;
  Tensor t;
  const bool made = attempt("empty", [&] { t = empty(sizes, {.dtype = dtype, .device = device}); });
  if (made && bad) fail("empty", "accepted sizes that overflow or are negative", shape_str(sizes).c_str());
  if (!made) return;
  if (device == Device::CPU && numel > 0) fill(r, t, fill_kind);
  store(w_, dst, t, false);
}

// Fills a fresh CPU tensor: random, zeros, one value, a pattern of values (NaN and infinities
// included), a ramp, or nothing (uninitialised, as empty() leaves it).
void Interpreter::fill(ByteReader& r, const Tensor& t, std::uint8_t kind) {
  const bool floating = is_floating_point(t.dtype());
  attempt("filling a tensor", [&] {
    switch (kind % 8) {
      case 0: floating ? normal_(t) : zero_(t); break;
      case 1: zero_(t); break;
      case 2: fill_(t, floating ? Scalar(double_value(r)) : Scalar(int_value(r))); break;
      case 3:
      case 4:
      case 7: {
        std::vector<double> pattern;
        for (std::size_t n = 1 + r.pick(8); n > 0; --n) {
          double v = kind % 8 == 3 ? double_value(r) : kind % 8 == 4 ? static_cast<double>(pattern.size()) * 0.5 - 1.0
                                                                    : static_cast<double>(int_value(r) % 7);
          pattern.push_back(v);
        }
        std::vector<double> values(static_cast<std::size_t>(t.numel()));
        for (std::size_t i = 0; i < values.size(); ++i) values[i] = pattern[i % pattern.size()];
        copy_(t, tensor<double>(values, t.sizes()));
        break;
      }
      case 5: floating ? uniform_(t, -2, 2) : fill_(t, 1); break;
      default:  // uninitialised
        break;
    }
  });
}

// view: dst src kind operands. Geometry through the front-end view functions.
void Interpreter::view(ByteReader& r) {
  const std::uint8_t dst = r.u8();
  const Slot src = w_.slot(r.u8());
  const Tensor& x = src.tensor;
  const std::uint8_t kind = r.u8();
  const std::int64_t rank = x.defined() ? x.dim() : 0;
  auto dim = [&] {
    const std::uint8_t b = r.u8();
    return b >= kExplicit ? r.i64() : static_cast<std::int64_t>(b % (2 * rank + 3)) - rank - 1;
  };
  Tensor out;
  const bool ok = attempt("a view", [&] {
    switch (kind % 10) {
      case 0: out = t(x); break;
      case 1: {
        const std::int64_t d0 = dim(), d1 = dim();
        out = transpose(x, d0, d1);
        break;
      }
      case 2: {  // size-1 dims grow, a few new leading dims, some -1s; or (mode >= 0x80) a spelled target
        DimVector target;
        const std::uint8_t mode = r.u8();
        for (std::size_t n = mode >= 0x80 ? (mode & 0x7F) % 9 : mode % 3; n > 0; --n) target.push_back(size_value(r));
        if (x.defined() && mode < 0x80)
          for (std::int64_t s : x.sizes()) {
            const std::uint8_t b = r.u8();
            target.push_back(b % 4 == 0 ? -1 : s == 1 && b % 4 == 1 ? size_value(r) : s);
          }
        out = expand(x, target);
        break;
      }
      case 3: {
        DimVector sizes, strides;
        for (std::size_t n = r.pick(5); n > 0; --n) {
          sizes.push_back(size_value(r));
          const std::uint8_t b = r.u8();
          strides.push_back(b >= kExplicit ? r.i64() : b >= kHuge ? huge_value(b) : b % 4);
        }
        const std::uint8_t b = r.u8();
        const std::optional<std::int64_t> offset = b & 1 ? std::nullopt : std::optional<std::int64_t>(int_value(r));
        out = as_strided(x, sizes, strides, offset);
        break;
      }
      case 4: {
        DimVector shape;
        if (x.defined() && r.u8() & 1) {
          shape = DimVector(x.sizes());
          std::reverse(shape.begin(), shape.end());
        } else {
          for (std::size_t n = r.pick(4); n > 0; --n) shape.push_back(r.u8() & 1 ? -1 : size_value(r));
        }
        out = strata::view(x, shape);
        break;
      }
      case 5: out = unsqueeze(x, dim()); break;
      case 6: out = squeeze(x, dim()); break;
      case 7: out = detach(x); break;
      case 8: {  // x's own geometry, one dim broadcast (stride 0)
        if (!x.defined()) return;
        DimVector sizes(x.sizes()), strides(x.strides());
        if (!sizes.empty()) {
          const std::size_t d = r.pick(sizes.size());
          sizes[d] = size_value(r);
          strides[d] = 0;
        }
        out = as_strided(x, sizes, strides, x.storage_offset());
        break;
      }
      default: {
        DimVector shape;
        for (std::size_t n = r.pick(4); n > 0; --n) shape.push_back(size_value(r));
        out = _unsafe_view(x, shape);
      }
    }
  });
  if (ok && out.defined()) store(w_, dst, out, src.tainted);
}

void Interpreter::wrap(ByteReader& r) {
  const std::uint8_t dst = r.u8();
  const Slot src = w_.slot(r.u8());
  const std::uint8_t flags = r.u8();
  Tensor out;
  if (!attempt("wrapping a tensor", [&] {
        const bool aliasing = flags & 1;
        out = aliasing ? AliasingWrapper::wrap(src.tensor)
                        : tracer::LoggingTensor::wrap(src.tensor, std::make_shared<tracer::LoggingTensor::Log>());
        if (flags & 2) requires_grad_(out);
      }))
    return;
  if (flags & 2) keep_leaf(out);
  store(w_, dst, out, src.tainted);
}

// access: slot kind. What a user reads from a tensor directly.
void Interpreter::access(ByteReader& r) {
  const Slot& s = w_.slot(r.u8());
  const Tensor t = s.tensor;
  const std::uint8_t kind = r.u8() % 12;
  const bool small = !t.defined() || t.numel() <= kMaxElements;
  attempt("reading a tensor", [&] {
    switch (kind) {
      case 0: t.item(); break;
      case 1: if (small) t.to_vector<float>(); break;
      case 2: if (small) t.to_vector<double>(); break;
      case 3:
        if (small) t.to_vector<std::int64_t>();
        break;
      case 4: if (small) t.to_vector<bool>(); break;
      case 5:
        if (!t.defined()) return;
        visit_all_dtypes(t.dtype(), [&](auto zero) { check_pointer(t, t.data_ptr<decltype(zero)>()); });
        break;
      case 6: visit_all_dtypes(dtype_value(r.u8()), [&](auto zero) { check_pointer(t, t.data_ptr<decltype(zero)>()); }); break;
      case 7: check_pointer(t, t.raw_data()); break;
      case 8:
        if (prints_few_elements(t)) t.str();
        break;
      case 9:
        if (prints_few_elements(t)) {
          std::ostringstream out;
          out << t;
        }
        break;
      case 10:
        if (const autograd::Node* node = t.grad_fn()) (void)node->name();
        (void)t.is_leaf();
        (void)t.requires_grad();
        break;
      default: {
        if (!t.defined()) return;
        const std::int64_t d = int_value(r);
        (void)t.is_contiguous();
        (void)t.is_non_overlapping_and_dense();
        (void)t.storage_offset();
        (void)t.size(d);
        (void)t.stride(d);
      }
    }
  });
}

}  // namespace strata::fuzz
