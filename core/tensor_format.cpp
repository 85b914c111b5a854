// core/tensor_format.cpp: PyTorch's tensor repr. The structure follows torch/_tensor_str.py
// (_Formatter, _vector_str, _tensor_str_with_formatter, _add_suffixes) so outputs compare equal.
#include "core/tensor_format.h"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "core/interposer.h"

namespace strata {

namespace {

constexpr int kPrecision = 4;
constexpr int kLineWidth = 80;
constexpr std::int64_t kThreshold = 1000;
constexpr std::int64_t kEdgeItems = 3;

detail::NodeNameFn node_name_fn = nullptr;

std::string printf_str(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// Python's str() of a float or int value as PyTorch's formatter prints it.
std::string python_nonfinite(double v) { return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"); }

class Formatter {
 public:
  Formatter(const std::vector<double>& values, ScalarType dtype) : floating_(is_floating_point(dtype)), dtype_(dtype) {
    if (!floating_) {
      for (double v : values) max_width_ = std::max(max_width_, format_plain(v).size());
      return;
    }
    std::vector<double> finite;
    for (double v : values)
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

  std::string format(double v) const {
    std::string s;
    if (!floating_) s = format_plain(v);
    else if (!std::isfinite(v)) s = python_nonfinite(v);
    else if (sci_mode_) s = sci(v);
    else if (int_mode_) s = printf_str("%.0f", v) + ".";
    else s = fixed(v);
    return std::string(max_width_ > s.size() ? max_width_ - s.size() : 0, ' ') + s;
  }

 private:
  std::string format_plain(double v) const {
    if (dtype_ == ScalarType::Bool) return v != 0 ? "True" : "False";
    return std::to_string(static_cast<std::int64_t>(v));
  }
  static std::string fixed(double v) { return printf_str("%.4f", v); }
  static std::string sci(double v) { return printf_str("%.4e", v); }

  bool floating_;
  ScalarType dtype_;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  std::size_t max_width_ = 1;
};

// Row-major values with their shape; sub-tensors are index ranges.
struct Flat {
  std::vector<double> values;
  DimVector sizes;
};

std::int64_t inner_count(const DimVector& sizes, std::size_t from) {
  std::int64_t n = 1;
  for (std::size_t d = from; d < sizes.size(); ++d) n *= sizes[d];
  return n;
}

std::string vector_str(const Flat& f, std::int64_t offset, int indent, bool summarize, const Formatter& fmt) {
  const std::int64_t n = f.sizes.back();
  const std::size_t element_length = fmt.width() + 2;
  const std::size_t per_line = std::max<std::size_t>(1, static_cast<std::size_t>((kLineWidth - indent) / static_cast<int>(element_length)));
  std::vector<std::string> data;
  if (summarize && n > 2 * kEdgeItems) {
    for (std::int64_t i = 0; i < kEdgeItems; ++i) data.push_back(fmt.format(f.values[static_cast<std::size_t>(offset + i)]));
    data.push_back(" ...");
    for (std::int64_t i = n - kEdgeItems; i < n; ++i) data.push_back(fmt.format(f.values[static_cast<std::size_t>(offset + i)]));
  } else {
    for (std::int64_t i = 0; i < n; ++i) data.push_back(fmt.format(f.values[static_cast<std::size_t>(offset + i)]));
  }
  std::string out = "[";
  for (std::size_t i = 0; i < data.size(); ++i) {
    if (i > 0) out += (i % per_line == 0) ? ",\n" + std::string(static_cast<std::size_t>(indent + 1), ' ') : ", ";
    out += data[i];
  }
  return out + "]";
}

std::string tensor_str(const Flat& f, std::size_t dim, std::int64_t offset, int indent, bool summarize,
                       const Formatter& fmt) {
  const std::size_t ndim = f.sizes.size();
  if (ndim == 0) return fmt.format(f.values[0]);
  if (dim == ndim - 1) return vector_str(f, offset, indent, summarize, fmt);
  const std::int64_t n = f.sizes[dim];
  const std::int64_t inner = inner_count(f.sizes, dim + 1);
  std::vector<std::string> slices;
  auto slice = [&](std::int64_t i) { return tensor_str(f, dim + 1, offset + i * inner, indent + 1, summarize, fmt); };
  if (summarize && n > 2 * kEdgeItems) {
    for (std::int64_t i = 0; i < kEdgeItems; ++i) slices.push_back(slice(i));
    slices.push_back("...");
    for (std::int64_t i = n - kEdgeItems; i < n; ++i) slices.push_back(slice(i));
  } else {
    for (std::int64_t i = 0; i < n; ++i) slices.push_back(slice(i));
  }
  const std::string sep = "," + std::string(ndim - dim - 1, '\n') + std::string(static_cast<std::size_t>(indent + 1), ' ');
  std::string out = "[";
  for (std::size_t i = 0; i < slices.size(); ++i) out += (i ? sep : "") + slices[i];
  return out + "]";
}

// The values the formatter measures: all of them, or only the edges when summarising.
std::vector<double> summarized_values(const Flat& f, bool summarize) {
  if (!summarize) return f.values;
  std::vector<double> out;
  DimVector index(f.sizes.size(), 0);
  for (std::size_t n = 0; n < f.values.size(); ++n) {
    bool edge = true;
    for (std::size_t d = 0; d < index.size(); ++d)
      if (f.sizes[d] > 2 * kEdgeItems && index[d] >= kEdgeItems && index[d] < f.sizes[d] - kEdgeItems) edge = false;
    if (edge) out.push_back(f.values[n]);
    for (std::size_t d = index.size(); d-- > 0;) {
      if (++index[d] < f.sizes[d]) break;
      index[d] = 0;
    }
  }
  return out;
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
void set_node_name_fn(NodeNameFn fn) { node_name_fn = fn; }
}  // namespace detail

std::string format_tensor(const Tensor& t) {
  if (!t.defined()) return "Tensor(undefined)";
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
  } else if (t.numel() == 0) {
    if (t.dim() != 1) suffixes.push_back(size_tuple(t.sizes()));
    if (t.dtype() != ScalarType::Float32) suffixes.push_back("dtype=torch." + std::string(dtype_name(t.dtype())));
    body = "[]";
  } else {
    Flat flat{t.to_vector<double>(), DimVector(t.sizes())};
    const bool summarize = t.numel() > kThreshold;
    const Formatter fmt(summarized_values(flat, summarize), t.dtype());
    body = tensor_str(flat, 0, 0, indent, summarize, fmt);
    if (!default_dtype) suffixes.push_back("dtype=torch." + std::string(dtype_name(t.dtype())));
  }
  if (t.grad_fn() && node_name_fn) suffixes.push_back("grad_fn=<" + std::string(node_name_fn(*t.grad_fn())) + ">");
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
