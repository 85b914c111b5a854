// core/interpose/subclass_function.cpp: the subclass half of the function layer, PyTorch's handle_torch_function
// over the overloaded arguments (Note [A subclass takes function calls]): which subclasses answer a
// front-end call, in which order, and the error when none does.
#include <sstream>

#include "core/interpose/function_mode.h"
#include "core/interpose/interposer.h"

namespace strata::detail {

namespace {

void add_if_hooked(Subclasses& out, const Tensor& t) {
  if (t.defined() && t.subclass() && t.subclass()->takes_function_calls()) add_overloaded_subclass(out, t.subclass());
}

void add_hooked(Subclasses& out, const IValue& v) {
  if (v.is_tensor()) add_if_hooked(out, v.to_tensor());
  else if (v.is_tensor_list())
    for (const Tensor& t : v.to_tensor_list()) add_if_hooked(out, t);
}

// PyTorch's _get_overloaded_args over the positional, then the keyword arguments.
Subclasses hooked_subclasses(const FunctionCall& call) {
  Subclasses out;
  for (const IValue& v : call.args()) add_hooked(out, v);
  for (const auto& kv : call.kwargs()) add_hooked(out, kv.second);
  return out;
}

[[noreturn, gnu::cold]] void throw_no_implementation(const FunctionCall& call, const Subclasses& subclasses) {
  std::ostringstream out;
  out << "no implementation found for '" << call.name() << "' on types that implement __torch_function__: [";
  for (std::size_t i = 0; i < subclasses.size(); ++i) out << (i ? ", " : "") << subclasses[i]->type_name();
  out << "]";
  throw Error(out.str());
}

}  // namespace

void run_subclass_functions(FunctionCall& call) {
  const Subclasses subclasses = hooked_subclasses(call);
  STRATA_INTERNAL_ASSERT(!subclasses.empty(), call.name(), " was announced with no mode and no subclass to take it");
  for (const auto& subclass : subclasses) {
    call.set_handler(str_cat(subclass->type_name(), ".__torch_function__"));
    reset_not_implemented();
    {
      DisableSubclassFunctions disable;
      subclass->torch_function(call);
    }
    if (take_not_implemented()) {
      call.clear_result();  // upstream's NotImplemented is the handler's return value: nothing else counts
      continue;
    }
    STRATA_CHECK(call.has_result(), call.handler(), " handled ", call.name(),
                 " but set no result: it must call call.call_through(), call.set_result() or "
                 "return_not_implemented()");
    return;
  }
  throw_no_implementation(call, subclasses);
}

}  // namespace strata::detail
