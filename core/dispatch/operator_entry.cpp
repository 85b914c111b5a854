// core/dispatch/operator_entry.cpp: building an operator's row from its schema.
#include "core/dispatch/operator_entry.h"

#include <optional>

#include "core/util/error.h"
#include "core/tensor.h"

namespace strata {

OperatorEntry::OperatorEntry(std::string ns, FunctionSchema schema, std::uint32_t index)
    : name_{std::move(ns), schema.name(), schema.overload()},
      str_(name_.str()),
      schema_(std::move(schema)),
      index_(index),
      num_args_(schema_.arguments().size()) {
  STRATA_INTERNAL_ASSERT(num_args_ <= 255, "too many arguments in ", schema_.text());
  for (std::size_t i = 0; i < num_args_; ++i) {
    const SchemaArgument& arg = schema_.arguments()[i];
    if (arg.type.is_tensor_like()) tensor_args_.push_back(static_cast<std::uint8_t>(i));
    if (arg.type.is_tensor_like() && !arg.type.optional && !arg.type.list) {
      STRATA_INTERNAL_ASSERT(i < 64, "a required Tensor argument past position 63 in ", schema_.text());
      required_tensors_ |= std::uint64_t{1} << i;
    }
    if (arg.type.kind == SchemaType::Kind::Device && arg.name == "device") backend_device_arg_ = static_cast<int>(i);
    if (arg.type.kind == SchemaType::Kind::Device) device_args_.push_back(static_cast<std::uint8_t>(i));
    if (arg.type.is_tensor_like() && arg.type.is_write()) written_tensor_args_.push_back(static_cast<std::uint8_t>(i));
  }
  STRATA_INTERNAL_ASSERT(schema_.returns().size() <= 255, "too many returns in ", schema_.text());
  for (std::size_t i = 0; i < schema_.returns().size(); ++i) {
    const SchemaType& type = schema_.returns()[i].type;
    if (type.is_tensor_like() && !type.list) tensor_returns_.push_back(static_cast<std::uint8_t>(i));
  }
}

// Note [Boxed calls are checked where keys are read]
// A boxed call is only as safe as its stack: too few values, or None where the schema wants a
// Tensor, would send a kernel reading past the stack or through a null tensor. The dispatcher reads
// every tensor argument anyway to compute the call's keys, so that loop is where these are checked:
// the checks sit on branches the well-formed call never takes. Devices are checked where a backend
// kernel is about to run (Note [Devices are checked at the backend], core/dispatch/dispatcher.h).
namespace {
[[noreturn]] void throw_for(const OperatorName& op, std::string message) {
  Error e(std::move(message));
  e.set_op(op.qualified());
  throw e;
}
}  // namespace

void OperatorEntry::throw_short_stack(std::size_t stack_size) const {
  throw_for(name_, detail::str_cat("expected ", num_args_, " arguments (", schema_.text(), ") but the stack holds ",
                                   stack_size, " values"));
}

void OperatorEntry::throw_missing_tensor(std::size_t position) const {
  throw_for(name_, detail::str_cat("Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument #",
                                   position, " '", schema_.arguments()[position].name, "'"));
}

void OperatorEntry::check_same_device(const IValue* args) const {
  if (mixed_devices_ok_.load(std::memory_order_relaxed)) return;
  std::optional<Device> common;
  auto visit = [&](const Tensor& t) {
    if (!t.defined() || (t.device() == Device::CPU && t.dim() == 0)) return;
    if (!common) common = t.device();
    if (*common != t.device())
      throw_for(name_, detail::str_cat("Expected all tensors to be on the same device, but found at least two devices, ",
                                       *common, " and ", t.device(), "!"));
  };
  for (std::uint8_t i : tensor_args_) {
    if (args[i].is_tensor()) visit(args[i].to_tensor());
    else if (args[i].is_tensor_list())
      for (const Tensor& t : args[i].to_tensor_list()) visit(t);
  }
}

DispatchKeySet OperatorEntry::list_keys(const IValue& list) {
  DispatchKeySet keys;
  for (const Tensor& t : list.to_tensor_list())
    if (t.defined()) keys = keys | t.key_set();
  return keys;
}

DispatchKeySet OperatorEntry::default_backend(const IValue* args) const {
  if (backend_device_arg_ >= 0 && !args[backend_device_arg_].is_none())
    return DispatchKeySet(backend_key(args[backend_device_arg_].to_device()));
  return DispatchKeySet(DispatchKey::CPU);
}

}  // namespace strata
