// core/dispatch/function_schema.cpp: a small recursive-descent parser for PyTorch schema strings.
//   schema  := name ['.' overload] '(' [arg {',' arg}] ')' '->' returns
//   arg     := '*' | type name ['=' default]
//   type    := base ['(' alias ')'] ['[' [N] ']'] ['?']
//   returns := '()' | '(' type [name] {',' type [name]} ')' | type
#include "core/dispatch/function_schema.h"

#include <cctype>
#include <cstdlib>

#include "core/util/error.h"

namespace strata {

namespace {

class SchemaParser {
 public:
  explicit SchemaParser(std::string_view text) : text_(text) {}

  void parse_name(std::string& name, std::string& overload) {
    name = identifier();
    if (accept('.')) overload = identifier();
  }

  std::vector<SchemaArgument> parse_arguments() {
    std::vector<SchemaArgument> args;
    expect('(');
    bool kwarg_only = false;
    while (!accept(')')) {
      if (!args.empty() || kwarg_only) expect(',');
      if (accept('*')) {
        kwarg_only = true;
        continue;
      }
      SchemaArgument arg;
      arg.type = parse_type();
      arg.name = identifier();
      arg.kwarg_only = kwarg_only;
      if (accept('=')) arg.default_text = default_text();
      args.push_back(std::move(arg));
    }
    return args;
  }

  std::vector<SchemaArgument> parse_returns() {
    skip_space();
    expect('-');
    expect('>');
    std::vector<SchemaArgument> rets;
    if (accept('(')) {
      while (!accept(')')) {
        if (!rets.empty()) expect(',');
        rets.push_back(parse_return());
      }
    } else {
      rets.push_back(parse_return());
    }
    skip_space();
    STRATA_CHECK(pos_ == text_.size(), error("unexpected text after the returns"));
    return rets;
  }

 private:
  SchemaArgument parse_return() {
    SchemaArgument ret;
    ret.type = parse_type();
    skip_space();
    if (pos_ < text_.size() && is_ident_char(text_[pos_])) ret.name = identifier();
    return ret;
  }

  SchemaType parse_type() {
    SchemaType type;
    const std::string base = identifier(/*allow_dots=*/true);
    type.kind = kind_of(base, type.custom);
    if (accept('(')) {
      const std::size_t start = pos_;
      while (pos_ < text_.size() && text_[pos_] != ')') ++pos_;
      type.alias = std::string(text_.substr(start, pos_ - start));
      expect(')');
    }
    if (accept('[')) {
      type.list = true;
      skip_space();
      if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        type.list_size = std::atoi(std::string(text_.substr(pos_)).c_str());
        while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      }
      expect(']');
    }
    if (accept('?')) type.optional = true;
    return type;
  }

  static SchemaType::Kind kind_of(const std::string& base, std::string& custom) {
    using K = SchemaType::Kind;
    if (base == "Tensor") return K::Tensor;
    if (base == "Scalar") return K::Scalar;
    if (base == "int" || base == "SymInt") return K::Int;
    if (base == "float") return K::Float;
    if (base == "bool") return K::Bool;
    if (base == "str") return K::Str;
    if (base == "ScalarType") return K::ScalarType;
    if (base == "Layout") return K::Layout;
    if (base == "Device") return K::Device;
    if (base == "MemoryFormat") return K::MemoryFormat;
    if (base == "Generator") return K::Generator;
    custom = base;
    return K::Custom;
  }

  // A default value runs to the next ',' or ')' outside brackets.
  std::string default_text() {
    skip_space();
    const std::size_t start = pos_;
    int depth = 0;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '[') ++depth;
      if (c == ']') --depth;
      if (depth == 0 && (c == ',' || c == ')')) break;
      ++pos_;
    }
    STRATA_CHECK(pos_ > start, error("expected a default value"));
    return std::string(text_.substr(start, pos_ - start));
  }

  static bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

  std::string identifier(bool allow_dots = false) {
    skip_space();
    const std::size_t start = pos_;
    while (pos_ < text_.size() && (is_ident_char(text_[pos_]) || (allow_dots && text_[pos_] == '.'))) ++pos_;
    STRATA_CHECK(pos_ > start, error("expected a name"));
    return std::string(text_.substr(start, pos_ - start));
  }

  void skip_space() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) { STRATA_CHECK(accept(c), error(std::string("expected '") + c + "'")); }

  std::string error(const std::string& what) const {
    return detail::str_cat("cannot parse schema '", text_, "' at position ", pos_, ": ", what);
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

IValue parse_default(const SchemaType& type, const std::string& text) {
  using K = SchemaType::Kind;
  if (text == "None") return IValue();
  if (text == "True") return IValue(true);
  if (text == "False") return IValue(false);
  if (type.list) {
    DimVector values;
    std::string inner = text.substr(1, text.size() - 2);
    if (text.front() != '[') inner = text;  // int[2] x=1 means [1, 1]
    std::size_t start = 0;
    while (start < inner.size()) {
      std::size_t comma = inner.find(',', start);
      if (comma == std::string::npos) comma = inner.size();
      values.push_back(std::stoll(inner.substr(start, comma - start)));
      start = comma + 1;
    }
    if (text.front() != '[' && type.list_size > 1) values.resize(static_cast<std::size_t>(type.list_size), values[0]);
    return IValue(IntArrayRef(values));
  }
  if (type.kind == K::ScalarType) {
    if (text == "long") return IValue(ScalarType::Int64);
    if (text == "float") return IValue(ScalarType::Float32);
    if (text == "double") return IValue(ScalarType::Float64);
  }
  if (type.kind == K::MemoryFormat && text == "contiguous_format") return IValue(MemoryFormat::Contiguous);
  if (type.kind == K::Int && text == "Mean") return IValue(std::int64_t{1});
  if (type.kind == K::Str) return IValue(std::string_view(text).substr(1, text.size() - 2));
  const bool floating = text.find_first_of(".e") != std::string::npos || type.kind == K::Float;
  if (floating) return IValue(std::stod(text));
  return IValue(static_cast<std::int64_t>(std::stoll(text)));
}

}  // namespace

std::string SchemaType::str() const {
  static const char* names[] = {"Tensor", "Scalar", "int", "float", "bool", "str", "ScalarType",
                                "Layout", "Device", "MemoryFormat", "Generator"};
  std::string out = kind == Kind::Custom ? custom : names[static_cast<int>(kind)];
  if (!alias.empty()) out += "(" + alias + ")";
  if (list) out += list_size >= 0 ? "[" + std::to_string(list_size) + "]" : "[]";
  if (optional) out += "?";
  return out;
}

FunctionSchema FunctionSchema::parse(std::string_view text) {
  FunctionSchema schema;
  schema.text_ = std::string(text);
  SchemaParser parser(text);
  parser.parse_name(schema.name_, schema.overload_);
  schema.arguments_ = parser.parse_arguments();
  schema.returns_ = parser.parse_returns();
  return schema;
}

int FunctionSchema::argument_index(std::string_view name) const {
  // Backward formulas look arguments up by name on every call: compare length and first character
  // before the rest (argument names of one op nearly always differ there).
  if (name.empty()) return -1;
  for (std::size_t i = 0; i < arguments_.size(); ++i) {
    const std::string& candidate = arguments_[i].name;
    if (candidate.size() != name.size() || candidate[0] != name[0]) continue;
    std::size_t k = 1;
    while (k < name.size() && candidate[k] == name[k]) ++k;
    if (k == name.size()) return static_cast<int>(i);
  }
  return -1;
}

bool FunctionSchema::is_mutable() const {
  for (const SchemaArgument& a : arguments_)
    if (a.type.is_write()) return true;
  return false;
}

IValue FunctionSchema::default_value(std::size_t index) const {
  STRATA_CHECK(index < arguments_.size(), name_, "() has no argument ", index);
  const SchemaArgument& arg = arguments_[index];
  STRATA_CHECK(arg.default_text.has_value(), name_, "() missing required argument '", arg.name, "'");
  return parse_default(arg.type, *arg.default_text);
}

}  // namespace strata
