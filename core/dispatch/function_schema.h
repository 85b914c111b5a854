// core/dispatch/function_schema.h: PyTorch operator schemas, parsed once at registration.
// "addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor" becomes
// a name, an overload, typed arguments with defaults and kwarg-only marks, and typed returns, so logs
// can name arguments and tests can compare strata's ops with native_functions.yaml.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ivalue.h"

namespace strata {

struct SchemaType {
  enum class Kind { Tensor, Scalar, Int, Float, Bool, Str, ScalarType, Layout, Device, MemoryFormat, Generator, Custom };
  Kind kind = Kind::Tensor;
  bool optional = false;   // T?
  bool list = false;       // T[] or T[N]
  int list_size = -1;      // N in T[N]
  std::string custom;      // the class name of a Custom type (__torch__.torch.classes...)
  std::string alias;       // "a" in Tensor(a), "a!" in Tensor(a!)

  bool is_tensor_like() const { return kind == Kind::Tensor; }
  bool is_write() const { return !alias.empty() && alias.back() == '!'; }
  std::string str() const;  // as written in the schema: "Tensor(a!)", "int[1]?"
};

struct SchemaArgument {
  std::string name;
  SchemaType type;
  std::optional<std::string> default_text;  // as written: "1", "None", "[]", "long"
  bool kwarg_only = false;
};

class FunctionSchema {
 public:
  // Throws strata::Error naming the position of the first thing it cannot read.
  static FunctionSchema parse(std::string_view text);

  const std::string& name() const { return name_; }          // "addmm"
  const std::string& overload() const { return overload_; }  // "" for the default overload
  const std::vector<SchemaArgument>& arguments() const { return arguments_; }
  const std::vector<SchemaArgument>& returns() const { return returns_; }
  const std::string& text() const { return text_; }          // the schema as registered

  // Index of the argument called `name`, or -1.
  int argument_index(std::string_view name) const;
  // True when some argument is written to (Tensor(a!)): an in-place or out= op.
  bool is_mutable() const;
  // The default of argument `index` as a boxed value; throws if it has none.
  IValue default_value(std::size_t index) const;

 private:
  std::string text_;
  std::string name_;
  std::string overload_;
  std::vector<SchemaArgument> arguments_;
  std::vector<SchemaArgument> returns_;
};

}  // namespace strata
