// tracer/python_repr.cpp: Python's float repr ('r' format) and repr() of JSON-shaped values.
#include "tracer/python_repr.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace strata::tracer {

void append_python_float(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "nan";
    return;
  }
  if (std::isinf(v)) {
    out += v < 0 ? "-inf" : "inf";
    return;
  }
  // The shortest round-trip digits, d.ddde±X, then laid out as Python's float_repr_style 'short' does:
  // positional when the exponent is in [-5, 16), else d.ddde±XX.
  char buf[40];
  const auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const std::string_view text(buf, static_cast<std::size_t>(res.ptr - buf));
  const std::size_t e_at = text.find('e');
  std::string_view mantissa = text.substr(0, e_at);
  const int exponent = std::atoi(std::string(text.substr(e_at + 1)).c_str());
  if (!mantissa.empty() && mantissa[0] == '-') {
    out += '-';
    mantissa.remove_prefix(1);
  }
  std::string digits;
  for (char c : mantissa)
    if (c != '.') digits += c;
  if (exponent < -4 || exponent >= 16) {
    out += digits[0];
    if (digits.size() > 1) {
      out += '.';
      out.append(digits, 1);
    }
    out += exponent < 0 ? "e-" : "e+";
    const int a = std::abs(exponent);
    if (a < 10) out += '0';
    out += std::to_string(a);
    return;
  }
  const int point = exponent + 1;  // digits before the decimal point
  if (point <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-point), '0');
    out += digits;
  } else if (static_cast<std::size_t>(point) >= digits.size()) {
    out += digits;
    out.append(static_cast<std::size_t>(point) - digits.size(), '0');
    out += ".0";
  } else {
    out.append(digits, 0, static_cast<std::size_t>(point));
    out += '.';
    out.append(digits, static_cast<std::size_t>(point));
  }
}

std::string python_float_repr(double v) {
  std::string out;
  append_python_float(out, v);
  return out;
}

void append_python_str_repr(std::string& out, std::string_view s) {
  const char quote = s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos ? '"' : '\'';
  out += quote;
  for (char c : s) {
    if (c == '\\' || c == quote) out += '\\';
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else out += c;
  }
  out += quote;
}

namespace {
void append_repr(std::string& out, const nlohmann::ordered_json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null: out += "None"; break;
    case nlohmann::json::value_t::boolean: out += v.get<bool>() ? "True" : "False"; break;
    case nlohmann::json::value_t::number_integer: out += std::to_string(v.get<std::int64_t>()); break;
    case nlohmann::json::value_t::number_unsigned: out += std::to_string(v.get<std::uint64_t>()); break;
    case nlohmann::json::value_t::number_float: append_python_float(out, v.get<double>()); break;
    case nlohmann::json::value_t::string: append_python_str_repr(out, v.get_ref<const std::string&>()); break;
    case nlohmann::json::value_t::array: {
      out += '(';
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (i) out += ", ";
        append_repr(out, v[i]);
      }
      out += v.size() == 1 ? ",)" : ")";
      break;
    }
    case nlohmann::json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, value] : v.items()) {
        if (!first) out += ", ";
        first = false;
        append_python_str_repr(out, key);
        out += ": ";
        append_repr(out, value);
      }
      out += '}';
      break;
    }
    default: out += "<binary>"; break;
  }
}
}  // namespace

std::string python_repr(const nlohmann::ordered_json& v) {
  std::string out;
  append_repr(out, v);
  return out;
}

}  // namespace strata::tracer
