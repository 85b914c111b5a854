// distributed/autograd_collectives.cpp: the differentiable collectives as Function<T>s (upstream's
// AllGatherIntoTensor, ReduceScatterTensor and AllToAllSingle in Functional.cpp).
#include "distributed/autograd_collectives.h"

#include <string>
#include <vector>

#include "autograd/custom_function.h"
#include "core/dispatch/local_dispatch_keys.h"
#include "distributed/functional_collectives.h"

namespace strata::distributed {

namespace {

using autograd::AutogradContext;
using autograd::variable_list;

std::string group_of(AutogradContext* ctx) { return std::string(ctx->saved_data.at("group_name").to_string_view()); }

struct AllGatherIntoTensor : autograd::Function<AllGatherIntoTensor> {
  static Tensor forward(AutogradContext* ctx, const Tensor& input, std::int64_t group_size, std::string_view group_name) {
    ctx->saved_data["group_size"] = group_size;
    ctx->saved_data["group_name"] = IValue(group_name);
    const ExcludeKeyGuard below_autograd(DispatchKey::Autograd);
    return all_gather_into_tensor(input, group_size, group_name);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const Tensor out = reduce_scatter_tensor(grads[0], "sum", ctx->saved_data.at("group_size").to_int(), group_of(ctx));
    return {wait_tensor(out), Tensor(), Tensor()};
  }
};

struct ReduceScatterTensor : autograd::Function<ReduceScatterTensor> {
  static Tensor forward(AutogradContext* ctx, const Tensor& input, std::string_view reduce_op, std::int64_t group_size,
                        std::string_view group_name) {
    STRATA_CHECK(reduce_op == "sum", "reduce_scatter_tensor_autograd: only reduce_op sum is differentiable, got ", reduce_op);
    ctx->saved_data["group_size"] = group_size;
    ctx->saved_data["group_name"] = IValue(group_name);
    const ExcludeKeyGuard below_autograd(DispatchKey::Autograd);
    return reduce_scatter_tensor(input, reduce_op, group_size, group_name);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const Tensor out = all_gather_into_tensor(grads[0], ctx->saved_data.at("group_size").to_int(), group_of(ctx));
    return {wait_tensor(out), Tensor(), Tensor(), Tensor()};
  }
};

struct AllToAllSingle : autograd::Function<AllToAllSingle> {
  static Tensor forward(AutogradContext* ctx, const Tensor& input, IntArrayRef output_split_sizes,
                        IntArrayRef input_split_sizes, std::string_view group_name) {
    // The backward sends back what arrived: its splits are the forward's, swapped.
    ctx->saved_data["output_split_sizes"] = IValue(input_split_sizes);
    ctx->saved_data["input_split_sizes"] = IValue(output_split_sizes);
    ctx->saved_data["group_name"] = IValue(group_name);
    const ExcludeKeyGuard below_autograd(DispatchKey::Autograd);
    return all_to_all_single(input, output_split_sizes, input_split_sizes, group_name);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const Tensor out = all_to_all_single(grads[0], ctx->saved_data.at("output_split_sizes").to_int_list(),
                                         ctx->saved_data.at("input_split_sizes").to_int_list(), group_of(ctx));
    return {wait_tensor(out), Tensor(), Tensor(), Tensor()};
  }
};

}  // namespace

Tensor all_gather_tensor_autograd(const Tensor& input, std::int64_t group_size, std::string_view group_name) {
  return AllGatherIntoTensor::apply(input, group_size, group_name);
}
Tensor reduce_scatter_tensor_autograd(const Tensor& input, std::string_view reduce_op, std::int64_t group_size,
                                      std::string_view group_name) {
  return ReduceScatterTensor::apply(input, reduce_op, group_size, group_name);
}
Tensor all_to_all_single_autograd(const Tensor& input, IntArrayRef output_split_sizes, IntArrayRef input_split_sizes,
                                  std::string_view group_name) {
  return AllToAllSingle::apply(input, output_split_sizes, input_split_sizes, group_name);
}

}  // namespace strata::distributed
