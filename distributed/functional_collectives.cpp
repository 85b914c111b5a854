// distributed/functional_collectives.cpp: the _c10d_functional ops: meta functions (the output's
// shape, also under FakeTensorMode), CPU kernels that start the collective on the named group and
// leave its Work pending on the output, and wait_tensor, which completes it.
#include "distributed/functional_collectives.h"

#include <memory>
#include <numeric>
#include <unordered_map>
#include <vector>

#include "core/util/checked_math.h"
#include "distributed/process_group.h"
#include "distributed/reducer_ops.h"
#include "ops/boxing.h"
#include "ops/op_table.h"
#include "ops/typed_operator.h"

namespace strata::distributed {

using ops::TensorSpec;

namespace {

// Note [A collective's output waits on its Work]
// A kernel returns the output tensor at once and keeps the collective's Work, keyed by the output's
// storage, in this thread's table (upstream's c10d::register_work keys by storage too); wait_tensor
// looks its argument's storage up, waits for every collective pending on it and forgets them, so
// waiting on a view of the output (the narrow that unpads an uneven all_gather) waits for the
// collective, and in-place collectives on two views of one buffer are both waited for. A tensor without a storage (a
// fake or meta one) is keyed by itself. The table holds the output too, so its storage cannot be
// reused by another tensor before the wait; a tensor that is not in the table (waited for already,
// or not a collective's output) has nothing to wait for.
struct Pending {
  Tensor output;
  std::shared_ptr<Work> work;
};
using PendingTable = std::unordered_map<const void*, std::vector<Pending>>;
PendingTable& pending() {
  thread_local PendingTable table;
  return table;
}

const void* pending_key(const Tensor& t) {
  const TensorImpl* impl = t.impl();
  if (const Storage& storage = impl->storage()) return storage.get();
  return impl;
}

void keep_pending(const Tensor& output, std::shared_ptr<Work> work) {
  pending()[pending_key(output)].push_back({output, std::move(work)});
}

void check_dtype(const Tensor& input) {
  const ScalarType t = input.dtype();
  STRATA_CHECK(t == ScalarType::Float32 || t == ScalarType::Float64 || t == ScalarType::Int64,
               "tensors of dtype ", t, " are not supported (float32, float64 and int64 are)");
}

// The reduction named `reduce_op`, refused when it cannot apply to the input's dtype.
ReduceOp reduce_op_for(const Tensor& input, std::string_view reduce_op) {
  const ReduceOp op = parse_reduce_op(reduce_op);
  STRATA_CHECK(op != ReduceOp::Avg || is_floating_point(input.dtype()), "reduce_op avg needs a floating point tensor, got ",
               input.dtype());
  return op;
}

ProcessGroup& group_of(std::string_view group_name, std::int64_t group_size = -1) {
  ProcessGroup& group = resolve_process_group(group_name);
  STRATA_CHECK(group_size < 0 || group_size == group.size(), "group_size ", group_size,
               " does not match the size of group '", group_name, "', ", group.size());
  return group;
}

// ---- all_reduce ----
TensorSpec all_reduce_meta(const Tensor& input, std::string_view reduce_op, std::string_view group_name) {
  (void)parse_reduce_op(reduce_op);
  (void)group_name;
  return TensorSpec{{}, input.dtype(), {}, &input};
}
void all_reduce_cpu(const Tensor& out, const Tensor& input, std::string_view reduce_op, std::string_view group_name) {
  check_dtype(input);
  const ReduceOp op = reduce_op_for(input, reduce_op);
  keep_pending(out, group_of(group_name).all_reduce(input, out, op));
}

// ---- all_reduce_: in place, for buffers reused across steps (the output is the input) ----
void all_reduce__check(const Tensor& self, std::string_view reduce_op, std::string_view group_name) {
  (void)parse_reduce_op(reduce_op);
  (void)group_name;
  STRATA_CHECK(self.is_contiguous(), "the tensor must be contiguous to be reduced in place");
}
void all_reduce__cpu(const Tensor& self, std::string_view reduce_op, std::string_view group_name) {
  all_reduce_cpu(self, self, reduce_op, group_name);
}

// ---- all_gather_into_tensor ----
TensorSpec all_gather_meta(const Tensor& input, std::int64_t group_size, std::string_view group_name) {
  (void)group_name;
  STRATA_CHECK(input.dim() > 0, "the input must have at least one dimension, got a 0-d tensor");
  STRATA_CHECK(group_size > 0, "group_size must be positive, got ", group_size);
  DimVector sizes(input.sizes());
  STRATA_CHECK(!mul_overflows(sizes[0], group_size, &sizes[0]), "the input's first dimension (", input.size(0),
               ") times group_size (", group_size, ") overflows int64");
  return TensorSpec{std::move(sizes), input.dtype(), {}};
}
void all_gather_cpu(const Tensor& out, const Tensor& input, std::int64_t group_size, std::string_view group_name) {
  check_dtype(input);
  keep_pending(out, group_of(group_name, group_size).all_gather_into_tensor(input, out));
}

// ---- reduce_scatter_tensor ----
TensorSpec reduce_scatter_meta(const Tensor& input, std::string_view reduce_op, std::int64_t group_size,
                               std::string_view group_name) {
  (void)parse_reduce_op(reduce_op);
  (void)group_name;
  STRATA_CHECK(input.dim() > 0, "the input must have at least one dimension, got a 0-d tensor");
  STRATA_CHECK(group_size > 0 && input.size(0) % group_size == 0, "the input's first "
               "dimension (", input.size(0), ") must be divisible by group_size (", group_size, ")");
  DimVector sizes(input.sizes());
  sizes[0] /= group_size;
  return TensorSpec{std::move(sizes), input.dtype(), {}};
}
void reduce_scatter_cpu(const Tensor& out, const Tensor& input, std::string_view reduce_op, std::int64_t group_size,
                        std::string_view group_name) {
  check_dtype(input);
  const ReduceOp op = reduce_op_for(input, reduce_op);
  keep_pending(out, group_of(group_name, group_size).reduce_scatter_tensor(input, out, op));
}

// ---- all_to_all_single ----
std::int64_t split_sum(IntArrayRef splits, const char* which) {
  std::int64_t total = 0;
  for (std::int64_t s : splits) {
    STRATA_CHECK(s >= 0, "", which, " must not be negative, got ", shape_str(splits));
    STRATA_CHECK(!add_overflows(total, s, &total), "", which, " ", shape_str(splits), " add up to more than an int64 holds");
  }
  return total;
}
TensorSpec all_to_all_meta(const Tensor& input, IntArrayRef output_split_sizes, IntArrayRef input_split_sizes,
                           std::string_view group_name) {
  (void)group_name;
  STRATA_CHECK(input.dim() > 0, "the input must have at least one dimension, got a 0-d tensor");
  if (!input_split_sizes.empty())
    STRATA_CHECK(split_sum(input_split_sizes, "input_split_sizes") == input.size(0), ""
                 "input_split_sizes ", shape_str(input_split_sizes), " do not add up to the input's first dimension, ",
                 input.size(0));
  DimVector sizes(input.sizes());
  if (!output_split_sizes.empty()) sizes[0] = split_sum(output_split_sizes, "output_split_sizes");
  return TensorSpec{std::move(sizes), input.dtype(), {}};
}
void all_to_all_cpu(const Tensor& out, const Tensor& input, IntArrayRef output_split_sizes, IntArrayRef input_split_sizes,
                    std::string_view group_name) {
  check_dtype(input);
  ProcessGroup& group = group_of(group_name);
  const auto outs = splits_or_equal(output_split_sizes, out.size(0), group.size(), "output_split_sizes");
  const auto ins = splits_or_equal(input_split_sizes, input.size(0), group.size(), "input_split_sizes");
  keep_pending(out, group.all_to_all_single(input, out, outs, ins));
}

// ---- broadcast ----
TensorSpec broadcast_meta(const Tensor& input, std::int64_t src, std::string_view group_name) {
  (void)src;
  (void)group_name;
  return TensorSpec{{}, input.dtype(), {}, &input};
}
void broadcast_cpu(const Tensor& out, const Tensor& input, std::int64_t src, std::string_view group_name) {
  check_dtype(input);
  ProcessGroup& group = group_of(group_name);
  STRATA_CHECK(src >= 0 && src < group.size(), "src ", src, " is not a rank of group '", group_name,
               "' (it has ", group.size(), " ranks)");
  keep_pending(out, group.broadcast(input, out, static_cast<int>(src)));
}

// ---- wait_tensor: returns its argument, after waiting for it on CPU ----
template <bool Waits>
void wait_tensor_kernel(const OperatorHandle&, DispatchKeySet, Stack& stack) {
  Tensor t = std::as_const(stack.back()).to_tensor();
  stack.pop_back();
  if constexpr (Waits) {
    if (t.defined()) {
      const auto it = pending().find(pending_key(t));
      if (it != pending().end()) {
        const std::vector<Pending> works = std::move(it->second);
        pending().erase(it);
        for (const Pending& p : works) p.work->wait();
      }
    }
  }
  stack.emplace_back(std::move(t));
}

// wait_tensor at the Autograd key: its result is its argument itself, so the argument's history is
// the result's; nothing is recorded (upstream's wait_tensor has no derivative and returns its input).
void wait_tensor_autograd(const OperatorHandle& op, DispatchKeySet keys, Stack& stack) {
  op.redispatch(keys.after(DispatchKey::Autograd), stack);
}

OperatorHandle collective(std::string_view name) {
  register_collective_ops();
  return Dispatcher::singleton().find_or_throw(std::string("_c10d_functional::") + std::string(name));
}

}  // namespace

void register_collective_ops() {
  [[maybe_unused]] static const bool registered = [] {
    using namespace ops;
    ops::register_ops();  // strata's ops first: the op table's indices must not depend on when this runs
    register_reducer_ops();
    Dispatcher& d = Dispatcher::singleton();
    const char* ns = "_c10d_functional";
    // Their front ends are written by hand below (a collective resolves its group first).
    def_functional<all_reduce_meta, all_reduce_cpu>(
        d, ns, "all_reduce(Tensor input, str reduce_op, str group_name) -> Tensor");
    def_inplace<all_reduce__check, all_reduce__cpu>(
        d, ns, "all_reduce_(Tensor(a!) input, str reduce_op, str group_name) -> Tensor(a!)");
    def_functional<all_gather_meta, all_gather_cpu>(
        d, ns, "all_gather_into_tensor(Tensor input, int group_size, str group_name) -> Tensor");
    def_functional<reduce_scatter_meta, reduce_scatter_cpu>(
        d, ns, "reduce_scatter_tensor(Tensor input, str reduce_op, int group_size, str group_name) -> Tensor");
    def_functional<all_to_all_meta, all_to_all_cpu>(
        d, ns,
        "all_to_all_single(Tensor input, SymInt[] output_split_sizes, SymInt[] input_split_sizes, str group_name) -> Tensor");
    def_functional<broadcast_meta, broadcast_cpu>(
        d, ns, "broadcast(Tensor input, int src, str group_name) -> Tensor");
    const OperatorHandle wait = d.def(ns, "wait_tensor(Tensor tensor) -> Tensor", KernelFunction{&wait_tensor_kernel<true>, "wait_tensor"},
                                      KernelFunction{&wait_tensor_kernel<false>, "meta (wait_tensor)"});
    d.register_kernel(wait, DispatchKey::Autograd, KernelFunction{&wait_tensor_autograd, "wait_tensor (Autograd)"});
    return true;
  }();
}

Tensor all_reduce(const Tensor& input, std::string_view reduce_op, std::string_view group_name) {
  static const OperatorHandle op = collective("all_reduce");
  return strata::detail::call_op(op, input, reduce_op, group_name);
}
const Tensor& all_reduce_(const Tensor& input, std::string_view reduce_op, std::string_view group_name) {
  static const OperatorHandle op = collective("all_reduce_");
  Stack stack;
  stack.emplace_back(input);
  stack.emplace_back(reduce_op);
  stack.emplace_back(group_name);
  op.call(stack);
  return input;
}
Tensor all_gather_into_tensor(const Tensor& input, std::int64_t group_size, std::string_view group_name) {
  static const OperatorHandle op = collective("all_gather_into_tensor");
  return strata::detail::call_op(op, input, group_size, group_name);
}
Tensor reduce_scatter_tensor(const Tensor& input, std::string_view reduce_op, std::int64_t group_size,
                             std::string_view group_name) {
  static const OperatorHandle op = collective("reduce_scatter_tensor");
  return strata::detail::call_op(op, input, reduce_op, group_size, group_name);
}
Tensor all_to_all_single(const Tensor& input, IntArrayRef output_split_sizes, IntArrayRef input_split_sizes,
                         std::string_view group_name) {
  static const OperatorHandle op = collective("all_to_all_single");
  return strata::detail::call_op(op, input, output_split_sizes, input_split_sizes, group_name);
}
Tensor broadcast(const Tensor& input, std::int64_t src, std::string_view group_name) {
  static const OperatorHandle op = collective("broadcast");
  return strata::detail::call_op(op, input, src, group_name);
}
Tensor wait_tensor(const Tensor& tensor) {
  static const OperatorHandle op = collective("wait_tensor");
  return strata::detail::call_op(op, tensor);
}

}  // namespace strata::distributed
