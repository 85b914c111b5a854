// ops/library.cpp: defining user ops and checking their kernels against the schema.
#include "ops/library.h"

#include <deque>
#include <mutex>
#include <set>
#include <utility>

#include "ops/op_table.h"

namespace strata {

namespace {
// What a SchemaType is called in a message: "float", "int[]", "Tensor?".
std::string schema_type_name(SchemaType::Kind kind, bool optional, bool list) {
  static constexpr const char* names[] = {"Tensor", "Scalar", "int", "float", "bool", "str",
                                          "ScalarType", "Layout", "Device", "MemoryFormat", "Generator", "Custom"};
  return detail::str_cat(names[static_cast<int>(kind)], list ? "[]" : "", optional ? "?" : "");
}

// Whether a kernel type spells a schema type. A `const Tensor&` also takes a `Tensor?` (None arrives
// as an undefined tensor, as in strata's own kernels).
bool matches(const library_detail::KernelType& k, const SchemaType& s) {
  if (k.kind != s.kind || k.list != s.list) return false;
  return k.optional == s.optional || (s.kind == SchemaType::Kind::Tensor && !s.list && s.optional && !k.optional);
}

void check_types(const OperatorHandle& op, DispatchKey key, std::span<const library_detail::KernelType> kernel,
                 const std::vector<SchemaArgument>& schema, std::string_view what) {
  STRATA_CHECK(kernel.size() == schema.size(), "Inferred operator schema for a C++ kernel function differs from the schema in the "
               "operator definition: the ", key_name(key), " kernel of ", op.name().qualified(), " has ", kernel.size(), " ", what,
               "s but the schema (", op.schema().text(), ") has ", schema.size());
  for (std::size_t i = 0; i < schema.size(); ++i) {
    const SchemaType& s = schema[i].type;
    STRATA_CHECK(matches(kernel[i], s), "Inferred operator schema for a C++ kernel function differs from the schema in the operator "
                 "definition: the ", key_name(key), " kernel of ", op.name().qualified(), " takes ", kernel[i].cpp, " as ", what,
                 " #", i, schema[i].name.empty() ? "" : " '", schema[i].name, schema[i].name.empty() ? "" : "'",
                 " where the schema (", op.schema().text(), ") has ", schema_type_name(s.kind, s.optional, s.list));
  }
}

// What Library registered, for the process: the kernel names (the trace and dump_table print them, so
// they outlive every dispatch) and which (op, key) pairs have a kernel.
struct Registered {
  std::mutex mutex;
  std::deque<std::string> names;
  std::set<std::pair<std::uint32_t, DispatchKey>> kernels;
};
Registered& registered() {
  static auto* r = new Registered();  // never destroyed: dispatches may outlive static teardown
  return *r;
}
}  // namespace

void library_detail::check_signature(const OperatorHandle& op, DispatchKey key, std::span<const KernelType> params,
                                     std::span<const KernelType> returns) {
  check_types(op, key, params, op.schema().arguments(), "argument");
  check_types(op, key, returns, op.schema().returns(), "return");
}

Library::Library(std::string_view ns) : ns_(ns) {
  STRATA_CHECK(!ns_.empty() && ns_.find(':') == std::string::npos && ns_.find('.') == std::string::npos,
               "Library: the namespace must be a plain name like \"myops\", got \"", ns_, "\"");
  STRATA_CHECK(ns_ != "aten", "Library: the namespace aten is strata's own; define your ops in a namespace of your own");
  ops::register_ops();  // strata's ops first, so the op table's indices do not depend on when a library loads
}

OperatorHandle Library::def(std::string_view schema) {
  std::string_view text = schema;
  if (text.starts_with(ns_) && text.substr(ns_.size()).starts_with("::")) text.remove_prefix(ns_.size() + 2);
  const FunctionSchema parsed = FunctionSchema::parse(text);
  STRATA_CHECK(parsed.name().find("::") == std::string::npos, "Library(\"", ns_, "\").def: the schema ", schema,
               " names another namespace");
  if (std::optional<OperatorHandle> old = Dispatcher::singleton().find(ns_ + "::" + parsed.name(), parsed.overload())) {
    STRATA_CHECK(false, "Tried to register an operator (", ns_, "::", parsed.text(), ") with the same name and overload name "
                 "multiple times. Each overload's schema should only be registered with a single call to def(). Duplicate "
                 "registration: ", ns_, "::", parsed.text(), ". Original registration: ", ns_, "::", old->schema().text());
  }
  return Dispatcher::singleton().def(ns_, text, KernelFunction{}, KernelFunction{});
}

OperatorHandle Library::find(std::string_view name) const {
  const std::size_t dot = name.find('.');
  const std::string_view base = name.substr(0, dot);
  const std::string_view overload = dot == std::string_view::npos ? std::string_view() : name.substr(dot + 1);
  const std::optional<OperatorHandle> op = Dispatcher::singleton().find(ns_ + "::" + std::string(base), overload);
  STRATA_CHECK(op.has_value(), "Library(\"", ns_, "\").impl: no operator ", ns_, "::", name,
               " is defined; define its schema with def() first");
  return *op;
}

void Library::register_kernel(const OperatorHandle& op, DispatchKey key, BoxedKernelFn fn) {
  STRATA_CHECK(key != DispatchKey::Python, "Library(\"", ns_, "\").impl: ", op.name().qualified(),
               " cannot have a kernel at the Python key: it is the interposer's, where dispatch modes and tensor "
               "subclasses see every op");
  // Note [A user kernel is registered once]: PyTorch warns and overrides; here a front end may already
  // hold the first CPU kernel unboxed (TypedOperator resolves it once), so a second one is refused.
  Registered& r = registered();
  const std::lock_guard<std::mutex> lock(r.mutex);
  STRATA_CHECK(r.kernels.emplace(op.index(), key).second, "Library(\"", ns_, "\").impl: ", op.name().qualified(),
               " already has a ", key_name(key), " kernel; a kernel is registered once per key");
  const std::string_view name = r.names.emplace_back(detail::str_cat(op.name().qualified(), " (", key_name(key), ")"));
  Dispatcher::singleton().register_kernel(op, key, KernelFunction{fn, name});
}

Library& Library::impl_boxed(std::string_view name, DispatchKey key, BoxedKernelFn fn) {
  STRATA_CHECK(fn != nullptr, "Library(\"", ns_, "\").impl_boxed: a null kernel for ", name);
  register_kernel(find(name), key, fn);
  return *this;
}

}  // namespace strata
