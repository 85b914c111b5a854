// ops/boxing.cpp: output allocation and view construction for the boxed adapters.
#include "ops/boxing.h"

#include "core/interpose/interposer.h"

namespace strata::ops {

namespace detail {
void throw_meta_meets_data() {
  strata::detail::throw_error("Expected all tensors to be on the same device, but found at least two devices, cpu and meta!");
}

void throw_no_cpu_data(const OperatorHandle& op, std::size_t position, const Tensor& t) {
  const std::string_view name = op.schema().arguments()[position].name;
  if (TensorSubclass* subclass = t.subclass()) {
    strata::detail::throw_error(strata::detail::str_cat(
        "Cannot access data pointer of Tensor that doesn't have storage: argument #", position, " '", name,
        "' is a wrapper tensor (", subclass->type_name(), ") that reached the CPU kernel; was the Python key excluded around it?"));
  }
  strata::detail::throw_error(strata::detail::str_cat(
      "Cannot access data pointer of Tensor that doesn't have storage: argument #", position, " '", name,
      "' is a view of a wrapper tensor taken with the Python key excluded; take views of its inner tensor instead"));
}

void check_cpu_list_input(const OperatorHandle& op, std::size_t position, const IValue& list) {
  for (const Tensor& t : list.to_tensor_list())
    if (t.defined() && !t.impl()->has_data()) throw_no_cpu_data(op, position, t);
}

void check_differentiable_view_schema(const OperatorHandle& op) {
  const FunctionSchema& schema = op.schema();
  STRATA_INTERNAL_ASSERT(schema.returns().size() == 1 && !schema.arguments().empty() &&
                             !schema.arguments()[0].type.alias.empty() && !schema.arguments()[0].type.is_write() &&
                             schema.returns()[0].type.alias == schema.arguments()[0].type.alias,
                         "a differentiable view op returns an alias of self: ", op.str());
}

Tensor make_view_of(const Tensor& base, const ViewSpec& spec) {
  return Tensor(TensorImpl::make_view(*base.impl(), spec.storage_offset, spec.sizes, spec.strides));
}
}  // namespace detail

}  // namespace strata::ops
