// ops/tensor_literal.cpp: tensor(values) and aten::lift_fresh, its op (Note [A tensor from values is
// lifted], ops/tensor_literal.h).
#include "ops/tensor_literal.h"

#include <array>
#include <utility>
#include <vector>

#include "core/shape.h"
#include "core/util/error.h"
#include "ops/boxing.h"
#include "ops/op_table.h"
#include "ops/typed_operator.h"

namespace strata {

namespace detail {

Tensor lift_fresh(const Tensor& self) {
  static const TypedOperator<Tensor(const Tensor&)> op("aten::lift_fresh");
  return op(self);
}

template <typename T>
Tensor tensor_of(ArrayRef<T> values, IntArrayRef sizes) {
  const DimVector shape(sizes);
  STRATA_CHECK(numel_of(shape) == static_cast<std::int64_t>(values.size()), "tensor(): shape ",
               shape_str(shape), " needs ", numel_of(shape), " values but ", values.size(), " were given");
  Tensor out = detail::make_contiguous_tensor(shape, scalar_type_of<T>(), Device::CPU);
  T* data = out.data_ptr<T>();
  for (std::size_t i = 0; i < values.size(); ++i) data[i] = values[i];
  return lift_fresh(out);
}
template Tensor tensor_of<float>(ArrayRef<float>, IntArrayRef);
template Tensor tensor_of<double>(ArrayRef<double>, IntArrayRef);
template Tensor tensor_of<std::int64_t>(ArrayRef<std::int64_t>, IntArrayRef);
template Tensor tensor_of<bool>(ArrayRef<bool>, IntArrayRef);
template Tensor tensor_of<std::int8_t>(ArrayRef<std::int8_t>, IntArrayRef);
template Tensor tensor_of<Float16>(ArrayRef<Float16>, IntArrayRef);
template Tensor tensor_of<BFloat16>(ArrayRef<BFloat16>, IntArrayRef);

void throw_ragged_rows(std::size_t expected, std::size_t got) {
  throw_error(str_cat("tensor(): expected all rows to have ", expected, " elements, but got a row of ", got));
}

}  // namespace detail

Tensor tensor(std::initializer_list<int> values) {
  std::vector<std::int64_t> wide(values.begin(), values.end());
  return tensor(wide);
}

namespace ops {

namespace {
// PyTorch's CompositeExplicitAutograd lift_fresh: `return self;`, on any backend.
void lift_fresh_kernel(const OperatorHandle&, DispatchKeySet, Stack& stack) {
  detail::replace_arguments<1>(stack, std::array<Tensor, 1>{std::as_const(stack.back()).to_tensor()});
}
Tensor lift_fresh_cpu(const Tensor& self) { return self; }
}  // namespace

void register_lift_fresh(Dispatcher& d) {
  const KernelFunction kernel{&lift_fresh_kernel, "lift_fresh"};
  const OperatorHandle op = d.def("aten", "lift_fresh(Tensor(a) self) -> Tensor(a)", kernel, kernel);
  d.register_unboxed_cpu(op, &lift_fresh_cpu);
}

}  // namespace ops

}  // namespace strata
