// tracer/recorder.cpp: the Recorder at work: naming values (inputs, results, captured constants),
// recording an op, a front-end call, and an op on a wrapper subclass unrolled into the ops its
// handler ran. What a recording is for, and how it ends, is trace_recorder.cpp's.
#include "tracer/recorder.h"

#include <algorithm>
#include <optional>

#include "autograd/graph.h"
#include "core/util/non_copyable.h"

namespace strata::tracer::detail {

namespace {

ViewKey view_key(const Tensor& t) {
  return {t.impl()->data(), t.dtype(), std::vector<std::int64_t>(t.sizes().begin(), t.sizes().end()),
          std::vector<std::int64_t>(t.strides().begin(), t.strides().end())};
}

// The slot of a tensor or tensor-list value, each tensor named by name_of (an undefined one is -1,
// None); nothing for any other value.
template <typename Fn>
std::optional<TraceArg> tensor_slot(const IValue& v, Fn&& name_of) {
  TraceArg a;
  if (v.is_tensor()) {
    a.kind = TraceArg::Kind::Proxy;
    a.proxy = v.to_tensor().defined() ? name_of(v.to_tensor()) : -1;
  } else if (v.is_tensor_list()) {
    a.kind = TraceArg::Kind::ProxyList;
    for (const Tensor& t : v.to_tensor_list()) a.proxies.push_back(t.defined() ? name_of(t) : -1);
  } else {
    return std::nullopt;
  }
  return a;
}

class OpenScope : NonCopyable {  // closes the symbol it opened, also when the call throws
 public:
  explicit OpenScope(std::vector<BoundSymbol*>& open) : open_(open), depth_(open.size()) {}
  ~OpenScope() { open_.resize(depth_ - 1); }

 private:
  std::vector<BoundSymbol*>& open_;
  std::size_t depth_;
};

// Calls fn(const Tensor&) on each defined tensor among the arguments, list elements included.
// Read through const slots: a mutable Tensor& would turn a borrowed argument into a reference.
template <typename Fn>
void for_each_tensor_argument(const Stack& stack, std::size_t base, Fn&& fn) {
  for (std::size_t i = base; i < stack.size(); ++i) {
    const IValue& v = stack[i];
    if (v.is_tensor() && v.to_tensor().defined()) fn(v.to_tensor());
    if (v.is_tensor_list())
      for (const Tensor& t : v.to_tensor_list())
        if (t.defined()) fn(t);
  }
}

std::vector<const TensorImpl*> argument_impls(const Stack& stack, std::size_t base) {
  std::vector<const TensorImpl*> impls;
  for_each_tensor_argument(stack, base, [&](const Tensor& t) { impls.push_back(t.impl()); });
  return impls;
}

bool has_wrapper_argument(const Stack& stack, std::size_t base) {
  bool found = false;
  for_each_tensor_argument(stack, base, [&](const Tensor& t) { found = found || t.subclass() != nullptr; });
  return found;
}

}  // namespace

std::vector<BoundSymbol>& Recorder::target() {
  if (!open_.empty()) return open_.back()->subsymbols;
  const autograd::Node* node = autograd::current_autograd_node();
  if (!node) return trace_->symbols;
  if (node != group_node_ || trace_->symbols.empty() || trace_->symbols.back().kind != BoundSymbol::Kind::Node) {
    BoundSymbol group;
    group.kind = BoundSymbol::Kind::Node;
    group.name = std::string(node->name());
    trace_->symbols.push_back(std::move(group));
    group_node_ = node;
  }
  return trace_->symbols.back().subsymbols;
}

BoundSymbol& Recorder::open(BoundSymbol sym) {
  std::vector<BoundSymbol>& list = target();
  list.push_back(std::move(sym));
  open_.push_back(&list.back());
  return list.back();
}

int Recorder::define(const Tensor& t, std::string name) {
  const int id = static_cast<int>(trace_->proxies.size());
  Proxy p;
  p.name = std::move(name);
  p.type = trace_type(t);
  p.dtype = t.dtype();
  p.sizes.assign(t.sizes().begin(), t.sizes().end());
  if (t.subclass()) p.subclass = std::string(t.subclass()->type_name());
  trace_->proxies.push_back(std::move(p));
  by_impl_[t.impl()] = {id, t.impl()->data()};
  if (t.impl()->has_data()) by_view_[view_key(t)] = id;
  held_.push_back(t);  // Note [Recording a program]: no named value's address can be reused meanwhile
  return id;
}

int Recorder::find(const Tensor& t) const {
  if (const auto it = by_impl_.find(t.impl()); it != by_impl_.end() && it->second.second == t.impl()->data())
    return it->second.first;
  if (t.impl()->has_data())
    if (const auto it = by_view_.find(view_key(t)); it != by_view_.end()) return it->second;
  return -1;
}

TraceArg Recorder::capture(const IValue& v) {
  auto proxy_of = [&](const Tensor& t) {
    int id = find(t);
    if (id < 0) {  // used, but neither an input nor made by the program: a captured constant
      id = define(t, "c" + std::to_string(trace_->constants.size()));
      trace_->constants.push_back(id);
      trace_->constant_values.push_back(t);
    }
    return id;
  };
  if (std::optional<TraceArg> slot = tensor_slot(v, proxy_of)) return std::move(*slot);
  TraceArg constant;
  constant.constant = v;
  return constant;
}

void Recorder::capture_args(BoundSymbol& sym, const OperatorHandle& op, const Stack& stack, std::size_t base) {
  const auto& schema_args = op.schema().arguments();
  for (std::size_t i = 0; i < schema_args.size(); ++i) {
    TraceArg arg = capture(stack[base + i]);
    if (schema_args[i].kwarg_only) sym.kwargs.emplace_back(schema_args[i].name, std::move(arg));
    else sym.args.push_back(std::move(arg));
  }
}

void Recorder::capture_returns(BoundSymbol& sym, const OperatorHandle& op, const Stack& stack,
                               const std::vector<const TensorImpl*>& inputs, bool keep_known) {
  const std::size_t n = op.schema().returns().size();
  const std::size_t base = stack.size() - n;
  auto output = [&](const Tensor& t) {
    const bool is_input = std::find(inputs.begin(), inputs.end(), t.impl()) != inputs.end();
    if (is_input || (keep_known && !t.subclass())) {
      const int id = find(t);
      if (id >= 0) return id;
    }
    return fresh(t);
  };
  for (std::size_t i = 0; i < n; ++i)  // a non-tensor return is not a value of the trace
    if (std::optional<TraceArg> out = tensor_slot(stack[base + i], output)) sym.outputs.push_back(std::move(*out));
}

void Recorder::dispatch(const OperatorHandle& op, Stack& stack) {
  const std::size_t base = stack.size() - op.schema().arguments().size();
  if (has_wrapper_argument(stack, base)) return record_subclass_op(op, stack, base);
  BoundSymbol sym;
  sym.kind = BoundSymbol::Kind::Op;
  sym.name = op.str();
  sym.op = op;
  capture_args(sym, op, stack, base);
  const std::vector<const TensorImpl*> inputs = argument_impls(stack, base);
  BoundSymbol& recorded = open(std::move(sym));
  const OpenScope scope(open_);
  op.call(stack);
  capture_returns(recorded, op, stack, inputs);
}

// Note [What a trace's symbols are]: flatten, the handler's ops (with the recorder re-entered, Note
// [Seeing inside a subclass's handler]), unflatten.
void Recorder::record_subclass_op(const OperatorHandle& op, Stack& stack, std::size_t base) {
  BoundSymbol sym;
  sym.kind = BoundSymbol::Kind::Subclass;
  sym.op = op;
  capture_args(sym, op, stack, base);
  const std::vector<const TensorImpl*> inputs = argument_impls(stack, base);
  std::string type;
  std::vector<Tensor> wrappers;  // the subclass arguments, each once
  for_each_tensor_argument(stack, base, [&](const Tensor& t) {
    if (!t.subclass()) return;
    if (std::any_of(wrappers.begin(), wrappers.end(), [&](const Tensor& w) { return w.impl() == t.impl(); })) return;
    if (type.empty()) type = std::string(t.subclass()->type_name());
    wrappers.push_back(t);
  });
  sym.name = type + "." + op.str();
  BoundSymbol& recorded = open(std::move(sym));
  const OpenScope scope(open_);
  for (const Tensor& w : wrappers) {
    BoundSymbol flatten;
    flatten.kind = BoundSymbol::Kind::Flatten;
    flatten.name = "flatten_tensor_subclass";
    flatten.subclass = IntrusivePtr<TensorSubclass>(w.subclass());
    flatten.args.push_back(capture(IValue(w)));
    FlattenedTensor flat = w.subclass()->flatten(w);
    flatten.inner_names = flat.names;
    for (const Tensor& inner : flat.inner)  // each flatten names what it gives
      flatten.outputs.push_back({.kind = TraceArg::Kind::Proxy, .proxy = inner.defined() ? fresh(inner) : -1});
    recorded.subsymbols.push_back(std::move(flatten));
  }
  const std::size_t first_unrolled = recorded.subsymbols.size();
  {
    const ModeGuard again(*this);
    call_subclass_handlers(op, stack);
  }
  const std::size_t unrolled = recorded.subsymbols.size() - first_unrolled;
  const std::string of = " unrolled __torch_dispatch__ of " + op.str() + render_arguments(*trace_, recorded);
  for (std::size_t k = 0; k < unrolled; ++k)
    recorded.subsymbols[first_unrolled + k].header =
        "[" + std::to_string(k + 1) + "/" + std::to_string(unrolled) + "]" + of;
  capture_returns(recorded, op, stack, inputs, /*keep_known=*/true);
  // Each subclass result is rebuilt from its inner tensors, which the handler's ops made.
  const std::size_t n = op.schema().returns().size();
  for (std::size_t i = stack.size() - n; i < stack.size(); ++i) {
    auto unflatten = [&](const Tensor& t) {
      if (!t.defined() || !t.subclass()) return;
      BoundSymbol sym;
      sym.kind = BoundSymbol::Kind::Unflatten;
      sym.name = "unflatten_tensor_subclass";
      sym.subclass = IntrusivePtr<TensorSubclass>(t.subclass());
      FlattenedTensor flat = t.subclass()->flatten(t);
      sym.inner_names = flat.names;
      sym.context = flat.context;
      for (const Tensor& inner : flat.inner) sym.args.push_back(capture(IValue(inner)));
      sym.outer_sizes.assign(t.sizes().begin(), t.sizes().end());
      sym.outer_strides.assign(t.strides().begin(), t.strides().end());
      sym.outputs.push_back({.kind = TraceArg::Kind::Proxy, .proxy = find(t)});
      recorded.subsymbols.push_back(std::move(sym));
    };
    if (stack[i].is_tensor()) unflatten(stack[i].to_tensor());
    if (stack[i].is_tensor_list())
      for (const Tensor& t : stack[i].to_tensor_list()) unflatten(t);
  }
}

void Recorder::record_function(FunctionCall& call) {
  BoundSymbol sym;
  sym.kind = BoundSymbol::Kind::Function;
  sym.name = std::string(call.name());
  for (const IValue& v : call.args()) sym.args.push_back(capture(v));
  for (const auto& [name, v] : call.kwargs()) sym.kwargs.emplace_back(std::string(name), capture(v));
  BoundSymbol& recorded = open(std::move(sym));
  const OpenScope scope(open_);
  call.call_through();
  auto output = [&](const Tensor& t) {
    const int id = find(t);
    return id >= 0 ? id : fresh(t);  // made without an op (a view the function built): a new value
  };
  if (std::optional<TraceArg> out = tensor_slot(call.result(), output)) recorded.outputs.push_back(std::move(*out));
}

}  // namespace strata::tracer::detail
