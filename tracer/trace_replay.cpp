// tracer/trace_replay.cpp: run_trace, the interpreter that replays a trace's Op symbols on new
// inputs, flattening and unflattening subclasses where the trace did. Printing a trace is
// program_trace.cpp's; recording one, trace_recorder.cpp's.
#include "autograd/grad_mode.h"
#include "tracer/program_trace.h"

namespace strata::tracer {

namespace {

class Interpreter {
 public:
  explicit Interpreter(const Trace& trace) : trace_(trace), values_(trace.proxies.size()) {}
  Tensor& value(int p) { return values_[static_cast<std::size_t>(p)]; }

  void run(const BoundSymbol& sym) {
    switch (sym.kind) {
      case BoundSymbol::Kind::Function:
      case BoundSymbol::Kind::Node:
      case BoundSymbol::Kind::Subclass:
        for (const BoundSymbol& sub : sym.subsymbols) run(sub);
        return;
      case BoundSymbol::Kind::Op: return run_op(sym);
      case BoundSymbol::Kind::Flatten: {
        const Tensor& wrapper = read(sym.args.at(0).proxy);
        STRATA_CHECK(wrapper.subclass() && wrapper.subclass()->type_name() == sym.subclass->type_name(), "run_trace: ",
                     trace_.function_name, " flattens ", proxy_name(trace_, sym.args[0].proxy), " as a ", sym.subclass->type_name(),
                     " but it is ", trace_type(wrapper));
        const FlattenedTensor flat = wrapper.subclass()->flatten(wrapper);
        STRATA_CHECK(flat.inner.size() == sym.outputs.size(), "run_trace: ", sym.subclass->type_name(), " flattened into ",
                     flat.inner.size(), " tensors; the trace expects ", sym.outputs.size());
        for (std::size_t i = 0; i < sym.outputs.size(); ++i)
          if (sym.outputs[i].proxy >= 0) value(sym.outputs[i].proxy) = flat.inner[i];
        return;
      }
      case BoundSymbol::Kind::Unflatten: {
        FlattenedTensor flat{sym.inner_names, {}, sym.context};
        for (const TraceArg& a : sym.args) flat.inner.push_back(a.proxy < 0 ? Tensor() : read(a.proxy));
        value(sym.outputs.at(0).proxy) = sym.subclass->unflatten(flat, sym.outer_sizes, sym.outer_strides);
        return;
      }
    }
  }

 private:
  const Tensor& read(int p) {
    const Tensor& t = value(p);
    STRATA_INTERNAL_ASSERT(t.defined(), "run_trace: ", proxy_name(trace_, p), " is read before it is made");
    return t;
  }
  IValue boxed(const TraceArg& a) {
    switch (a.kind) {
      case TraceArg::Kind::Proxy: return a.proxy < 0 ? IValue() : IValue(read(a.proxy));
      case TraceArg::Kind::ProxyList: {
        std::vector<Tensor> ts;
        for (int p : a.proxies) ts.push_back(p < 0 ? Tensor() : read(p));
        return IValue(std::move(ts));
      }
      case TraceArg::Kind::Constant: return a.constant;
    }
    return IValue();
  }
  void run_op(const BoundSymbol& sym) {
    Stack stack;
    for (const TraceArg& a : sym.args) stack.push_back(boxed(a));
    for (const auto& [name, a] : sym.kwargs) stack.push_back(boxed(a));
    sym.op.call(stack);
    const std::size_t n = sym.op.schema().returns().size();
    std::size_t k = 0;
    for (std::size_t i = stack.size() - n; i < stack.size() && k < sym.outputs.size(); ++i) {
      IValue& v = stack[i];
      const TraceArg& out = sym.outputs[k];
      if (v.is_tensor()) {
        if (out.proxy >= 0) value(out.proxy) = v.to_tensor();
        ++k;
      } else if (v.is_tensor_list()) {
        const std::vector<Tensor>& ts = v.to_tensor_list();
        STRATA_CHECK(ts.size() == out.proxies.size(), "run_trace: ", sym.name, " returned ", ts.size(),
                     " tensors; the trace expects ", out.proxies.size());
        for (std::size_t j = 0; j < ts.size(); ++j)
          if (out.proxies[j] >= 0) value(out.proxies[j]) = ts[j];
        ++k;
      }
    }
  }

  const Trace& trace_;
  std::vector<Tensor> values_;
};

}  // namespace

std::vector<Tensor> run_trace(const Trace& trace, std::span<const Tensor> inputs) {
  std::vector<int> slots = trace.inputs;
  slots.insert(slots.end(), trace.cotangents.begin(), trace.cotangents.end());
  STRATA_CHECK(inputs.size() == slots.size(), "run_trace: ", trace.function_name, " takes ", slots.size(),
               " inputs, got ", inputs.size());
  Interpreter interpreter(trace);
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const Proxy& want = trace.proxies[static_cast<std::size_t>(slots[i])];
    STRATA_CHECK(inputs[i].defined(), "run_trace: input ", i, " ('", want.name, "') of ", trace.function_name,
                 " is an undefined tensor; expected ", want.type);
    const std::string got = trace_type(inputs[i]);
    STRATA_CHECK(got == want.type, "run_trace: input ", i, " ('", want.name, "') of ", trace.function_name, " was ",
                 want.type, " when recorded, got ", got);
    interpreter.value(slots[i]) = inputs[i];
  }
  for (std::size_t i = 0; i < trace.constants.size(); ++i) interpreter.value(trace.constants[i]) = trace.constant_values[i];
  const autograd::NoGradGuard no_grad;
  for (const BoundSymbol& sym : trace.symbols) interpreter.run(sym);
  std::vector<Tensor> out;
  auto take = [&](int p) { out.push_back(p < 0 ? Tensor() : interpreter.value(p)); };
  for (int p : trace.outputs) take(p);
  for (int p : trace.saved_for_backward) take(p);
  return out;
}

}  // namespace strata::tracer
