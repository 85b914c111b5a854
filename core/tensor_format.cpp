// core/tensor_format.cpp: PyTorch's tensor repr. The structure follows torch/_tensor_str.py
// (_Formatter, _vector_str, _tensor_str_with_formatter, _add_suffixes) so outputs compare equal.
#include "core/tensor_format.h"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "core/autograd_hooks.h"
#include "core/element_conversion.h"
#include "core/interpose/interposer.h"

namespace strata {

namespace {

constexpr int kPrecision = 4;
constexpr int kLineWidth = 80;
constexpr std::int64_t kThreshold = 1000;
constexpr std::int64_t kEdgeItems = 3;


std::string printf_str(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// Python's str() of a float or int value as PyTorch's formatter prints it.
std::string python_nonfinite(double v) { return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"); }

// Note [Printing reads only the elements it shows]
// Above kThreshold elements PyTorch's repr shows the first and last kEdgeItems of each dimension
// longer than 2 * kEdgeItems, and measures column widths on those only (get_summarized_data). The
// printer reads exactly those elements, in place, through the tensor's strides: a 2^40-element
// expanded view prints as fast as a small one, where a copy of every element threw std::bad_alloc.
// What it cannot print is a summary that is itself huge (many dimensions of at most 2 * kEdgeItems,
// which the summary keeps whole): more than kMaxShown elements is an error rather than gigabytes of
// text. Integers are kept as int64 (a double would round those above 2^53) and bools are read as
// bytes (Note [Bool elements are loaded as bytes]).
constexpr std::uint64_t kMaxShown = std::uint64_t{1} << 24;

// The elements a repr shows, in row-major order, and the shape they form.
struct Shown {
  DimVector sizes;             // per dimension: how many indices are shown
  SmallVector<bool, 5> elided;  // per dimension: "..." stands between its first and last kEdgeItems
  bool floating = false;
  std::vector<double> floats;       // floating dtypes
  std::vector<std::int64_t> ints;   // int64, and bool as 0 or 1
  std::size_t count() const { return floating ? floats.size() : ints.size(); }
};

Shown gather_shown(const Tensor& t, bool summarize) {
  const std::size_t ndim = static_cast<std::size_t>(t.dim());
  Shown shown;
  shown.floating = is_floating_point(t.dtype());
  std::vector<DimVector> indices(ndim);
  std::uint64_t count = 1;
  for (std::size_t d = 0; d < ndim; ++d) {
    const std::int64_t n = t.sizes()[d];
    const bool elide = summarize && n > 2 * kEdgeItems;
    for (std::int64_t i = 0; i < n; ++i) {
      if (elide && i == kEdgeItems) i = n - kEdgeItems;
      indices[d].push_back(i);
    }
    shown.sizes.push_back(static_cast<std::int64_t>(indices[d].size()));
    shown.elided.push_back(elide);
    // A dimension shows at most 2 * kEdgeItems indices when summarising, at most kThreshold when not,
    // so the count stops growing once past kMaxShown and never overflows.
    if (count <= kMaxShown) count *= indices[d].size();
  }
  STRATA_CHECK(count <= kMaxShown, "cannot print a tensor of size ", shape_str(t.sizes()), ": its summary (the first and last ",
               kEdgeItems, " items of each dimension longer than ", 2 * kEdgeItems, ") holds more than ", kMaxShown,
               " elements");
  const void* data = t.raw_data();  // refuses a tensor without storage
  visit_all_dtypes(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* base = static_cast<const T*>(data);
    DimVector k(ndim, 0);
    for (std::uint64_t n = 0; n < count; ++n) {
      std::int64_t offset = 0;
      for (std::size_t d = 0; d < ndim; ++d) offset += indices[d][static_cast<std::size_t>(k[d])] * t.strides()[d];
      const T value = load_element(base + offset);
      if constexpr (is_float_storage_v<T>) shown.floats.push_back(static_cast<float>(value));
      else if constexpr (std::is_floating_point_v<T>) shown.floats.push_back(value);
      else shown.ints.push_back(static_cast<std::int64_t>(value));
      for (std::size_t d = ndim; d-- > 0;) {
        if (++k[d] < shown.sizes[d]) break;
        k[d] = 0;
      }
    }
  });
  return shown;
}

class Formatter {
 public:
  Formatter(const Shown& shown, ScalarType dtype) : shown_(shown), dtype_(dtype) {
    if (!shown.floating) {
      for (std::int64_t v : shown.ints) max_width_ = std::max(max_width_, format_plain(v).size());
      return;
    }
    std::vector<double> finite;
    for (double v : shown.floats)
      if (std::isfinite(v) && v != 0) finite.push_back(v);
    if (finite.empty()) return;
    double lo = std::abs(finite[0]), hi = lo;
    for (double v : finite) {
      lo = std::min(lo, std::abs(v));
      hi = std::max(hi, std::abs(v));
      if (v != std::ceil(v)) int_mode_ = false;
    }
    if (int_mode_) {
      sci_mode_ = hi / lo > 1000.0 || hi > 1.0e8;
    } else {
      sci_mode_ = hi / lo > 1000.0 || hi > 1.0e8 || lo < 1.0e-4;
    }
    for (double v : finite) {
      const std::size_t w = sci_mode_ ? sci(v).size() : int_mode_ ? printf_str("%.0f", v).size() + 1 : fixed(v).size();
      max_width_ = std::max(max_width_, w);
    }
  }

  std::size_t width() const { return max_width_; }

  // The shown element at `index`, padded to the common width.
  std::string format(std::int64_t index) const {
    const auto i = static_cast<std::size_t>(index);
    std::string s;
    if (!shown_.floating) {
      s = format_plain(shown_.ints[i]);
    } else {
      const double v = shown_.floats[i];
      if (!std::isfinite(v)) s = python_nonfinite(v);
      else if (sci_mode_) s = sci(v);
      else if (int_mode_) s = printf_str("%.0f", v) + ".";
      else s = fixed(v);
    }
    return std::string(max_width_ > s.size() ? max_width_ - s.size() : 0, ' ') + s;
  }

 private:
  std::string format_plain(std::int64_t v) const {
    if (dtype_ == ScalarType::Bool) return v != 0 ? "True" : "False";
    return std::to_string(v);
  }
  static std::string fixed(double v) { return printf_str("%.4f", v); }
  static std::string sci(double v) { return printf_str("%.4e", v); }

  const Shown& shown_;
  ScalarType dtype_;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  std::size_t max_width_ = 1;
};

std::int64_t inner_count(const DimVector& sizes, std::size_t from) {
  std::int64_t n = 1;
  for (std::size_t d = from; d < sizes.size(); ++d) n *= sizes[d];
  return n;
}

std::string vector_str(const Shown& s, std::int64_t offset, int indent, const Formatter& fmt) {
  const std::int64_t n = s.sizes.back();
  const auto element_length = static_cast<int>(fmt.width() + 2);
  // Signed, as Python's max(1, floor((linewidth - indent) / element_length)): deep tensors indent past 80.
  const auto per_line = static_cast<std::size_t>(std::max(1, (kLineWidth - indent) / element_length));
  std::vector<std::string> data;
  for (std::int64_t i = 0; i < n; ++i) {
    if (s.elided.back() && i == kEdgeItems) data.push_back(" ...");
    data.push_back(fmt.format(offset + i));
  }
  std::string out = "[";
  for (std::size_t i = 0; i < data.size(); ++i) {
    if (i > 0) out += (i % per_line == 0) ? ",\n" + std::string(static_cast<std::size_t>(indent + 1), ' ') : ", ";
    out += data[i];
  }
  return out + "]";
}

std::string tensor_str(const Shown& s, std::size_t dim, std::int64_t offset, int indent, const Formatter& fmt) {
  const std::size_t ndim = s.sizes.size();
  if (ndim == 0) return fmt.format(0);
  if (dim == ndim - 1) return vector_str(s, offset, indent, fmt);
  const std::int64_t n = s.sizes[dim];
  const std::int64_t inner = inner_count(s.sizes, dim + 1);
  std::vector<std::string> slices;
  for (std::int64_t i = 0; i < n; ++i) {
    if (s.elided[dim] && i == kEdgeItems) slices.push_back("...");
    slices.push_back(tensor_str(s, dim + 1, offset + i * inner, indent + 1, fmt));
  }
  const std::string sep = "," + std::string(ndim - dim - 1, '\n') + std::string(static_cast<std::size_t>(indent + 1), ' ');
  std::string out = "[";
  for (std::size_t i = 0; i < slices.size(); ++i) out += (i ? sep : "") + slices[i];
  return out + "]";
}

std::string size_tuple(IntArrayRef sizes) {
  std::string out = "size=(";
  for (std::size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
  return out + (sizes.size() == 1 ? ",)" : ")");
}

std::string add_suffixes(const std::string& body, const std::vector<std::string>& suffixes, int indent) {
  std::string out = body;
  const std::size_t newline = body.rfind('\n');
  std::size_t last_line = newline == std::string::npos ? body.size() + 2 : body.size() - newline + 1;
  for (const std::string& s : suffixes) {
    if (last_line + s.size() + 2 > static_cast<std::size_t>(kLineWidth)) {
      out += ",\n" + std::string(static_cast<std::size_t>(indent), ' ') + s;
      last_line = static_cast<std::size_t>(indent) + s.size();
    } else {
      out += ", " + s;
      last_line += s.size() + 2;
    }
  }
  return out + ")";
}

}  // namespace

namespace detail {
}  // namespace detail

std::string format_tensor(const Tensor& t) {
  if (!t.defined()) return "[ Tensor (undefined) ]";  // LibTorch's operator<<
  if (t.subclass()) return t.subclass()->repr(t);
  const std::string prefix = "tensor(";
  const int indent = static_cast<int>(prefix.size());
  std::vector<std::string> suffixes;
  std::string body;
  const bool default_dtype = t.dtype() == ScalarType::Float32 || t.dtype() == ScalarType::Int64 ||
                             t.dtype() == ScalarType::Bool;
  if (t.is_meta()) {
    suffixes.push_back("device='meta'");
    suffixes.push_back(size_tuple(t.sizes()));
    if (t.dtype() != ScalarType::Float32) suffixes.push_back("dtype=torch." + std::string(dtype_name(t.dtype())));
    body = "...";
  } else if (!t.impl()->has_data()) {
    // Note [A storage-less tensor prints its metadata]
    // A view of a wrapper taken below the interposer has no data (Note [A view keeps its source's
    // keys]). Printing it shows what it has, in the form of a meta tensor's repr, instead of
    // throwing: a repr is what one writes to a log or an error message while investigating exactly
    // such a tensor, and an exception from operator<< would hide it. Data accesses still refuse it.
    suffixes.push_back(size_tuple(t.sizes()));
    if (t.dtype() != ScalarType::Float32) suffixes.push_back("dtype=torch." + std::string(dtype_name(t.dtype())));
    suffixes.push_back("storage=None");
    body = "...";
  } else if (t.numel() == 0) {
    if (t.dim() != 1) suffixes.push_back(size_tuple(t.sizes()));
    if (t.dtype() != ScalarType::Float32) suffixes.push_back("dtype=torch." + std::string(dtype_name(t.dtype())));
    body = "[]";
  } else {
    // Note [Printing reads only the elements it shows]
    const Shown shown = gather_shown(t, t.numel() > kThreshold);
    const Formatter fmt(shown, t.dtype());
    body = tensor_str(shown, 0, 0, indent, fmt);
    if (!default_dtype) suffixes.push_back("dtype=torch." + std::string(dtype_name(t.dtype())));
  }
  if (t.grad_fn() && autograd_hooks()) suffixes.push_back("grad_fn=<" + std::string(autograd_hooks()->node_name(*t.grad_fn())) + ">");
  else if (t.requires_grad()) suffixes.push_back("requires_grad=True");
  return add_suffixes(prefix + body, suffixes, indent);
}

std::string Tensor::str() const { return format_tensor(*this); }

std::ostream& operator<<(std::ostream& out, const Tensor& t) { return out << format_tensor(t); }

std::ostream& operator<<(std::ostream& out, const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Bool: return out << (s.to_bool() ? "True" : "False");
    case Scalar::Kind::Int: return out << s.to_int();
    case Scalar::Kind::Double: break;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", s.to_double());
  std::string text = buf;
  // Python's repr: shortest round-trip form, always with a '.' or exponent.
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, s.to_double());
    if (std::strtod(buf, nullptr) == s.to_double()) {
      text = buf;
      break;
    }
  }
  if (text.find_first_of(".enai") == std::string::npos) text += ".0";
  return out << text;
}

}  // namespace strata
