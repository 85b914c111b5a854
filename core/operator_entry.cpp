// core/operator_entry.cpp: building an operator's row from its schema.
#include "core/operator_entry.h"

#include "core/error.h"

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
    if (arg.type.kind == SchemaType::Kind::Device && arg.name == "device") device_arg_ = static_cast<int>(i);
  }
}

DispatchKeySet OperatorEntry::list_keys(const IValue& list) {
  DispatchKeySet keys;
  for (const Tensor& t : list.to_tensor_list())
    if (t.defined()) keys = keys | t.key_set();
  return keys;
}

DispatchKeySet OperatorEntry::default_backend(const IValue* args) const {
  if (device_arg_ >= 0 && !args[device_arg_].is_none())
    return DispatchKeySet(backend_key(args[device_arg_].to_device()));
  return DispatchKeySet(DispatchKey::CPU);
}

}  // namespace strata
