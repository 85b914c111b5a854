// io/python_repr.cpp: Python's float repr ('r' format) and repr() of JSON-shaped values.
#include "io/python_repr.h"

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

namespace {

// Length of the well-formed UTF-8 sequence at the start of `s`, or 0 when its first byte does not
// begin one (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, or cut short).
std::size_t utf8_sequence_length(std::string_view s) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b0 = byte(0);
  if (b0 < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) n = 2;
  else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (s.size() < n || byte(1) < lo || byte(1) > hi) return 0;
  for (std::size_t i = 2; i < n; ++i)
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  return n;
}

void append_hex_escape(std::string& out, unsigned char c) {
  static constexpr char kDigits[] = "0123456789abcdef";
  out += "\\x";
  out += kDigits[c >> 4];
  out += kDigits[c & 0xF];
}

// Note [Logged text is always valid UTF-8]
// Strings reach a log from C++ callers (an op's `reduce=`, a module's name, a fuzzed program) and need
// not be UTF-8, yet every log line ends up in JSON, which nlohmann refuses to dump with invalid UTF-8
// (a type_error, not a strata::Error). So str() and repr() here write every byte that does not start a
// well-formed UTF-8 sequence as \xNN, which is what Python shows for such a byte in a bytes object.
// Well-formed non-ASCII text stays as it is, as Python prints printable characters. repr() also
// escapes what Python's repr escapes: the quote, backslash, \n \r \t, other control characters.
void append_utf8_escaped(std::string& out, std::string_view s, char quote) {
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const std::size_t n = utf8_sequence_length(s.substr(i));
    if (n > 1) {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    ++i;
    const bool repr = quote != 0;
    if (n == 0) append_hex_escape(out, c);
    else if (!repr) out += static_cast<char>(c);
    else if (c == '\\' || c == static_cast<unsigned char>(quote)) (out += '\\') += static_cast<char>(c);
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7F) append_hex_escape(out, c);
    else out += static_cast<char>(c);
  }
}

}  // namespace

void append_python_str(std::string& out, std::string_view s) { append_utf8_escaped(out, s, 0); }

void append_python_str_repr(std::string& out, std::string_view s) {
  const char quote = s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos ? '"' : '\'';
  out += quote;
  append_utf8_escaped(out, s, quote);
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
