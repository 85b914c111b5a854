// distributed/reducer_ops.cpp: aten::mul.out and c10d::allreduce_ (reducer_ops.h), registered by hand:
// strata's op rows have no out= form, and allreduce_ passes torchbind-like objects (the group, the
// reduce op and the Work, as CustomObjects) where the functional collectives pass names.
#include "distributed/reducer_ops.h"

#include "autograd/grad_mode.h"
#include "core/shape.h"
#include "core/util/wrapping_math.h"
#include "ops/boxing.h"
#include "ops/native/elementwise.h"
#include "ops/native/type_promotion.h"
#include "ops/op_table.h"

namespace strata::distributed {

namespace {

struct GroupObject final : CustomObject {
  explicit GroupObject(ProcessGroup& g) : group(&g) {}
  std::string_view type_name() const override { return "__torch__.torch.classes.c10d.ProcessGroup"; }
  ProcessGroup* group;  // registered on this thread for the whole call
};
struct ReduceOpObject final : CustomObject {
  explicit ReduceOpObject(ReduceOp o) : op(o) {}
  std::string_view type_name() const override { return "__torch__.torch.classes.c10d.ReduceOp"; }
  ReduceOp op;
};
struct WorkObject final : CustomObject {
  explicit WorkObject(std::shared_ptr<Work> w) : work(std::move(w)) {}
  std::string_view type_name() const override { return "__torch__.torch.classes.c10d.Work"; }
  std::shared_ptr<Work> work;
};

template <typename T>
T& object_as(const IValue& v, const char* what) {
  const IntrusivePtr<CustomObject> object = v.to_object();
  CustomObject& held = *object;  // typeid of a plain reference: no call inside typeid's operand
  auto* typed = typeid(held) == typeid(T) ? static_cast<T*>(&held) : nullptr;
  STRATA_CHECK(typed != nullptr, "expected a ", what, " but got ", object->type_name());
  return *typed;
}

// ---- mul.out: (self, other, out) on the stack ----
void check_mul_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  const DimVector sizes = broadcast_shapes(self.sizes(), other.sizes());
  const ScalarType dtype = ops::result_type(self, other);
  STRATA_CHECK(out.sizes() == IntArrayRef(sizes), "out has shape ", shape_str(out.sizes()), " but self ",
               shape_str(self.sizes()), " * other ", shape_str(other.sizes()), " has shape ", shape_str(sizes),
               " (an out= argument is not resized)");
  STRATA_CHECK(out.dtype() == dtype, "out has dtype ", out.dtype(), " but the result has dtype ", dtype);
}
template <bool Cpu>
void mul_out_kernel(const OperatorHandle& op, DispatchKeySet, Stack& stack) {
  const IValue* args = stack.data() + stack.size() - 3;
  if constexpr (Cpu) ops::detail::check_cpu_inputs(op, args);
  const Tensor &self = args[0].to_tensor(), &other = args[1].to_tensor(), &out = args[2].to_tensor();
  check_mul_out(self, other, out);
  if constexpr (Cpu)
    visit_dtype(out.dtype(), [&](auto zero) {
      using T = decltype(zero);
      ops::promoting_binary_loop<T>(out, self, other, [](T x, T y) { return wrapping_mul(x, y); });
    });
  out.impl()->bump_version();
  Tensor result = out;
  stack.truncate(stack.size() - 3);
  stack.emplace_back(std::move(result));
}
// Upstream's out= ops are not differentiable: with grad mode on, an input that requires grad is refused.
void mul_out_autograd(const OperatorHandle& op, DispatchKeySet keys, Stack& stack) {
  const IValue* args = stack.data() + stack.size() - 3;
  STRATA_CHECK(!args[0].to_tensor().requires_grad() && !args[1].to_tensor().requires_grad(),
               "mul(): functions with out=... arguments don't support automatic differentiation, but one of "
               "the arguments requires grad.");
  op.redispatch(keys.after(DispatchKey::Autograd), stack);
}

// ---- allreduce_: (tensors, process_group, reduce_op, sparse_indices, async_op, timeout) ----
template <bool Cpu>
void allreduce_kernel(const OperatorHandle&, DispatchKeySet, Stack& stack) {
  const IValue* args = stack.data() + stack.size() - 6;
  const std::vector<Tensor>& tensors = args[0].to_tensor_list();
  ProcessGroup& group = *object_as<GroupObject>(args[1], "c10d ProcessGroup").group;
  const ReduceOp reduce = object_as<ReduceOpObject>(args[2], "c10d ReduceOp").op;
  STRATA_CHECK(args[3].is_none(), "sparse_indices are not supported");
  STRATA_CHECK(tensors.size() == 1, "expected one tensor per process, got ", tensors.size());
  const Tensor& t = tensors[0];
  STRATA_CHECK(t.is_contiguous(), "the tensor must be contiguous to be reduced in place");
  STRATA_CHECK(Cpu || group.accepts_data_less_tensors(), "c10d::allreduce_ runs on CPU tensors only (or any on the fake "
               "process group), got a meta tensor on group '", group.name(), "'");
  IntrusivePtr<WorkObject> work = IntrusivePtr<WorkObject>::make(group.all_reduce(t, t, reduce));
  std::vector<Tensor> out = tensors;
  stack.truncate(stack.size() - 6);
  stack.emplace_back(std::move(out));
  stack.emplace_back(IntrusivePtr<CustomObject>::reclaim(work.release()));
}

OperatorHandle reducer_op(std::string_view qualified, std::string_view overload) {
  register_reducer_ops();
  return Dispatcher::singleton().find_or_throw(qualified, overload);
}

}  // namespace

void register_reducer_ops() {
  [[maybe_unused]] static const bool registered = [] {
    ops::register_ops();
    Dispatcher& d = Dispatcher::singleton();
    const OperatorHandle mul = d.def("aten", "mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
                                     KernelFunction{&mul_out_kernel<true>, "mul_out"},
                                     KernelFunction{&mul_out_kernel<false>, "meta (mul_out)"});
    d.register_kernel(mul, DispatchKey::Autograd, KernelFunction{&mul_out_autograd, "mul_out (Autograd)"});
    d.def("c10d",
          "allreduce_(Tensor[] tensors, __torch__.torch.classes.c10d.ProcessGroup process_group, "
          "__torch__.torch.classes.c10d.ReduceOp reduce_op, Tensor? sparse_indices, bool async_op=True, "
          "int timeout=-1) -> (Tensor[], __torch__.torch.classes.c10d.Work)",
          KernelFunction{&allreduce_kernel<true>, "allreduce_"}, KernelFunction{&allreduce_kernel<false>, "meta (allreduce_)"});
    return true;
  }();
}

const Tensor& mul_out(const Tensor& out, const Tensor& self, const Tensor& other) {
  static const OperatorHandle op = reducer_op("aten::mul", "out");
  Stack stack;
  stack.emplace_back(self);
  stack.emplace_back(other);
  stack.emplace_back(out);
  op.call(stack);
  return out;
}

std::shared_ptr<Work> allreduce_(const Tensor& tensor, ProcessGroup& group, ReduceOp op) {
  static const OperatorHandle handle = reducer_op("c10d::allreduce_", "");
  Stack stack;
  stack.emplace_back(std::vector<Tensor>{tensor});
  stack.emplace_back(IntrusivePtr<CustomObject>::reclaim(IntrusivePtr<GroupObject>::make(group).release()));
  stack.emplace_back(IntrusivePtr<CustomObject>::reclaim(IntrusivePtr<ReduceOpObject>::make(op).release()));
  stack.emplace_back(IValue());
  stack.emplace_back(true);
  stack.emplace_back(std::int64_t{-1});
  handle.call(stack);
  return object_as<WorkObject>(stack.back(), "c10d Work").work;
}

}  // namespace strata::distributed
