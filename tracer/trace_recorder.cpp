// tracer/trace_recorder.cpp: the modes that record a program's forward and backward into traces
// (Note [Recording a program]).
#include "tracer/trace_recorder.h"

#include <algorithm>
#include <compare>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

#include "autograd/grad.h"
#include "autograd/graph.h"
#include "core/interpose/function_mode.h"
#include "core/util/non_copyable.h"
#include "ops/functions.h"

namespace strata::tracer {

namespace {

// A storage-backed tensor's value: its data and geometry. A saved output unpacked in the backward is
// a new TensorImpl over the same data with the same geometry, and is the same value.
struct ViewKey {
  const void* data;
  ScalarType dtype;
  std::vector<std::int64_t> sizes, strides;
  auto operator<=>(const ViewKey&) const = default;
};
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

class Recorder final : public DispatchMode {
 public:
  explicit Recorder(Trace& trace) : trace_(&trace) {}
  std::string_view name() const override { return "TraceRecorder"; }
  void dispatch(const OperatorHandle& op, Stack& stack) override;
  void record_function(FunctionCall& call);

  // Records into `trace` from now on (the backward, after the forward), keeping every value's name.
  void switch_to(Trace& trace) {
    trace.proxies = std::move(trace_->proxies);
    trace_ = &trace;
    group_node_ = nullptr;
  }
  // A value named by the caller (an input, a cotangent).
  int define_named(const Tensor& t, std::string name) { return define(t, std::move(name)); }
  int find(const Tensor& t) const;
  Trace& trace() { return *trace_; }

 private:
  // The function-level half: front-end calls, each a Function symbol around what it dispatched.
  class Functions final : public FunctionMode {
   public:
    explicit Functions(Recorder& r) : recorder_(r) {}
    std::string_view name() const override { return "TraceRecorder"; }
    void torch_function(FunctionCall& call) override { recorder_.record_function(call); }

   private:
    Recorder& recorder_;
  };

 public:
  Functions functions{*this};

 private:
  // The symbol list new symbols go to: the innermost open symbol's, else the trace's (in a backward,
  // the current node's group).
  std::vector<BoundSymbol>& target();
  // Appends `sym` where target() says and opens it; the returned index path stays valid while open.
  BoundSymbol& open(BoundSymbol sym);
  void close() { open_.pop_back(); }

  int define(const Tensor& t, std::string name);
  int fresh(const Tensor& t) { return define(t, "t" + std::to_string(next_t_++)); }
  TraceArg capture(const IValue& v);
  void capture_args(BoundSymbol& sym, const OperatorHandle& op, const Stack& stack, std::size_t base);
  // The returns on the stack as outputs: each tensor a new value unless it is one of `inputs`, or
  // (`keep_known`: a subclass op, whose plain results its handler's ops made) a value already named.
  void capture_returns(BoundSymbol& sym, const OperatorHandle& op, const Stack& stack,
                       const std::vector<const TensorImpl*>& inputs, bool keep_known = false);
  void record_subclass_op(const OperatorHandle& op, Stack& stack, std::size_t base);

  Trace* trace_;
  std::vector<BoundSymbol*> open_;  // the open symbols, outermost first
  std::unordered_map<const TensorImpl*, std::pair<int, const void*>> by_impl_;  // proxy, data pointer
  std::map<ViewKey, int> by_view_;
  int next_t_ = 0;
  const autograd::Node* group_node_ = nullptr;  // the node whose group the trace's last symbol is
  std::vector<Tensor> held_;  // every named value, alive until the recording ends
};

class OpenScope : NonCopyable {  // closes the symbol it opened, also when the call throws
 public:
  explicit OpenScope(std::vector<BoundSymbol*>& open) : open_(open), depth_(open.size()) {}
  ~OpenScope() { open_.resize(depth_ - 1); }

 private:
  std::vector<BoundSymbol*>& open_;
  std::size_t depth_;
};

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
    for (const Tensor& inner : flat.inner) {
      TraceArg out;
      out.kind = TraceArg::Kind::Proxy;
      out.proxy = inner.defined() ? fresh(inner) : -1;  // each flatten names what it gives
      flatten.outputs.push_back(std::move(out));
    }
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
      TraceArg out;
      out.kind = TraceArg::Kind::Proxy;
      out.proxy = find(t);
      sym.outputs.push_back(std::move(out));
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

// The proxies a symbol's arguments (and, recursively, its sub-symbols' arguments) read.
void for_each_read(const BoundSymbol& sym, const std::function<void(int)>& fn) {
  auto arg = [&](const TraceArg& a) {
    if (a.kind == TraceArg::Kind::Proxy && a.proxy >= 0) fn(a.proxy);
    for (int p : a.proxies)
      if (p >= 0) fn(p);
  };
  for (const TraceArg& a : sym.args) arg(a);
  for (const auto& [name, a] : sym.kwargs) arg(a);
  for (const BoundSymbol& sub : sym.subsymbols) for_each_read(sub, fn);
}
void for_each_written(const BoundSymbol& sym, const std::function<void(int)>& fn) {
  for (const TraceArg& a : sym.outputs) {
    if (a.kind == TraceArg::Kind::Proxy && a.proxy >= 0) fn(a.proxy);
    for (int p : a.proxies)
      if (p >= 0) fn(p);
  }
  for (const BoundSymbol& sub : sym.subsymbols) for_each_written(sub, fn);
}

TraceArg proxy_arg(int id) {
  TraceArg a;
  a.kind = TraceArg::Kind::Proxy;
  a.proxy = id;
  return a;
}

// A node group's arguments: what its ops read that was made before it; its outputs: what it made that
// is read after it or returned (Note [What a trace's symbols are]).
void bind_node_groups(Trace& trace) {
  for (std::size_t i = 0; i < trace.symbols.size(); ++i) {
    BoundSymbol& group = trace.symbols[i];
    if (group.kind != BoundSymbol::Kind::Node) continue;
    std::vector<int> made, read;
    for_each_written(group, [&](int p) { made.push_back(p); });
    for_each_read(group, [&](int p) {
      if (std::find(made.begin(), made.end(), p) == made.end() && std::find(read.begin(), read.end(), p) == read.end())
        read.push_back(p);
    });
    std::vector<int> later;
    for (std::size_t j = i + 1; j < trace.symbols.size(); ++j) for_each_read(trace.symbols[j], [&](int p) { later.push_back(p); });
    later.insert(later.end(), trace.outputs.begin(), trace.outputs.end());
    for (int p : read) group.args.push_back(proxy_arg(p));
    std::vector<int> outputs;
    for (int p : made)
      if (std::find(later.begin(), later.end(), p) != later.end() && std::find(outputs.begin(), outputs.end(), p) == outputs.end())
        outputs.push_back(p);
    for (int p : outputs) group.outputs.push_back(proxy_arg(p));
  }
}

std::string sanitize(std::string_view name) {
  std::string out = "p";
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return out;
}

}  // namespace

RecordedProgram record_program(const TracedProgram& program, std::vector<TraceInput> inputs, std::string_view what) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    STRATA_CHECK(inputs[i].value.defined(), "record_program: input ", i, " ('", inputs[i].name, "') is an undefined tensor");
    for (std::size_t j = 0; j < i; ++j)
      STRATA_CHECK(inputs[j].name != inputs[i].name, "record_program: two inputs are named '", inputs[i].name, "'");
  }
  RecordedProgram result;
  result.forward.constructed_by = "strata's trace recorder: the forward of " + std::string(what);
  Recorder recorder(result.forward);
  std::vector<Tensor> values;
  for (const TraceInput& in : inputs) {
    result.forward.inputs.push_back(recorder.define_named(in.value, in.name));
    values.push_back(in.value);
  }
  {
    const ModeGuard mode(recorder);
    const FunctionModeGuard functions(recorder.functions);
    result.outputs = program(values);
  }
  for (const Tensor& out : result.outputs) {
    const int id = out.defined() ? recorder.find(out) : -1;
    STRATA_CHECK(!out.defined() || id >= 0, "record_program: an output of ", what,
                 " was not made by the program nor is one of its inputs");
    result.forward.outputs.push_back(id);
  }
  result.gradients.resize(inputs.size());

  std::vector<Tensor> roots, cotangents, wrt;
  std::vector<std::size_t> wrt_index;
  for (const Tensor& out : result.outputs)
    if (out.defined() && out.requires_grad()) {
      roots.push_back(out);
      cotangents.push_back(ones_like(out));
    }
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].value.requires_grad()) {
      wrt.push_back(inputs[i].value);
      wrt_index.push_back(i);
    }
  if (roots.empty() || wrt.empty()) {
    bind_node_groups(result.forward);
    return result;
  }

  Trace& backward = result.backward.emplace();
  backward.function_name = "backward_fn";
  backward.constructed_by = "strata's trace recorder: the backward of " + std::string(what);
  const std::size_t first_backward = result.forward.proxies.size();
  recorder.switch_to(backward);
  for (std::size_t i = 0; i < cotangents.size(); ++i)
    backward.cotangents.push_back(recorder.define_named(cotangents[i], "g" + std::to_string(i)));
  std::vector<Tensor> grads;
  {
    const ModeGuard mode(recorder);
    const FunctionModeGuard functions(recorder.functions);
    grads = autograd::grad(roots, wrt, cotangents, /*retain_graph=*/false, /*create_graph=*/false, /*allow_unused=*/true);
  }
  backward.outputs.assign(inputs.size(), -1);
  for (std::size_t k = 0; k < grads.size(); ++k) {
    result.gradients[wrt_index[k]] = grads[k];
    if (grads[k].defined()) backward.outputs[wrt_index[k]] = recorder.find(grads[k]);
  }
  // saved_for_backward: the forward's values the backward reads, in the order they were made.
  std::vector<int> saved;
  for (const BoundSymbol& sym : backward.symbols)
    for_each_read(sym, [&](int p) {
      if (static_cast<std::size_t>(p) < first_backward && std::find(saved.begin(), saved.end(), p) == saved.end()) saved.push_back(p);
    });
  for (int p : backward.outputs)  // a gradient that is a forward value passed through unchanged
    if (p >= 0 && static_cast<std::size_t>(p) < first_backward && std::find(saved.begin(), saved.end(), p) == saved.end())
      saved.push_back(p);
  std::sort(saved.begin(), saved.end());
  // Constants captured by the forward stay constants of the forward; the backward's own are its own.
  // A constant the forward captured stays a constant, which the backward holds too.
  const std::vector<int>& forward_constants = result.forward.constants;
  std::erase_if(saved, [&](int p) {
    const auto it = std::find(forward_constants.begin(), forward_constants.end(), p);
    if (it == forward_constants.end()) return false;
    backward.constants.push_back(p);
    backward.constant_values.push_back(result.forward.constant_values[static_cast<std::size_t>(it - forward_constants.begin())]);
    return true;
  });
  backward.inputs = saved;
  result.forward.saved_for_backward = saved;
  result.forward.has_backward = true;
  bind_node_groups(backward);
  result.forward.proxies = backward.proxies;  // one table for both: the backward's names extend the forward's
  return result;
}

struct TraceRecording::State {
  Trace trace;
  Recorder recorder{trace};
  std::optional<ModeGuard> mode;
  std::optional<FunctionModeGuard> functions;
};

TraceRecording::TraceRecording(std::string_view what) : state_(std::make_unique<State>()) {
  state_->trace.constructed_by = "strata's trace recorder: " + std::string(what);
  state_->mode.emplace(state_->recorder);
  state_->functions.emplace(state_->recorder.functions);
}

TraceRecording::~TraceRecording() = default;  // the guards leave the modes, innermost first

Trace TraceRecording::finish() {
  STRATA_CHECK(state_->mode, "TraceRecording::finish: called twice");
  state_->functions.reset();
  state_->mode.reset();
  bind_node_groups(state_->trace);
  return std::move(state_->trace);
}

std::vector<TraceInput> parameter_inputs(const nn::Module& module) {
  std::vector<TraceInput> out;
  for (const auto& [name, p] : module.named_parameters()) out.push_back({sanitize(name), p});
  return out;
}

}  // namespace strata::tracer
