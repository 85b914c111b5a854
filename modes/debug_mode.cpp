// modes/debug_mode.cpp: recording calls, naming tensors, rendering lines (upstream's _DebugCall,
// _OpCall, _NNModuleCall, TensorIdTracker and __torch_dispatch__).
#include "modes/debug_mode.h"

#include <algorithm>
#include <charconv>

#include "core/dtype.h"
#include "core/util/non_copyable.h"
#include "modes/fake_tensor.h"
#include "io/python_repr.h"

namespace strata::tracer {

namespace {


std::vector<DebugMode*>& active_modes() {
  thread_local std::vector<DebugMode*> modes;
  return modes;
}

// Note [Hooks that read arguments]
// A hook runs after the op, when its arguments are off the stack, so a hook that reads them needs
// copies, and a copy is a reference held while the op runs. Only hooks installed as reading
// arguments (the default, as upstream's get them all) cost that; log_tensor_hashes without
// hash_inputs does not read them, so hashing leaves every use count, and so every op, as it was.
struct HookLists {
  std::vector<DispatchHook> record, log;
  int reading_args = 0;
};
HookLists& hook_lists() {
  thread_local HookLists lists;
  return lists;
}

void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}

bool is_record_function_op(const OperatorHandle& op) {
  // upstream's _record_call drops calls whose text starts with "profiler::_record_function"
  return op.name().ns == "profiler" && op.name().name.rfind("_record_function", 0) == 0;
}

// Two boxed values the same, as upstream's is_default compares an argument with its default; an
// int and a float of one value are the same (a Scalar default of 1 matches a 1.0 passed).
bool same_value(const IValue& a, const IValue& b) {
  if (a.is_scalar() && b.is_scalar() && !a.is_bool() && !b.is_bool()) return a.to_double() == b.to_double();
  if (a.tag() != b.tag()) return false;
  switch (a.tag()) {
    case IValue::Tag::None: return true;
    case IValue::Tag::Bool: return a.to_bool() == b.to_bool();
    case IValue::Tag::ScalarType: return a.to_scalar_type() == b.to_scalar_type();
    case IValue::Tag::Device: return a.to_device() == b.to_device();
    case IValue::Tag::MemoryFormat: return a.to_memory_format() == b.to_memory_format();
    case IValue::Tag::Layout: return true;  // one layout
    case IValue::Tag::IntList: {
      const IntArrayRef x = a.to_int_list(), y = b.to_int_list();
      return std::equal(x.begin(), x.end(), y.begin(), y.end());
    }
    case IValue::Tag::String: return a.to_string_view() == b.to_string_view();
    default: return false;
  }
}

}  // namespace

// Note [DebugMode's arguments are upstream's]
// __torch_dispatch__ receives an op's arguments as PyTorch's parseIValuesToPyArgsKwargs splits them:
// positional ones up to the last that is not at its default, then kwarg-only ones that are not at
// their default, as `name=value`. So addmm prints its three tensors and no beta or alpha, and add_
// prints `alpha=-0.1`. The split depends only on the schema and the values, computed per call from
// defaults parsed once per op.
struct DebugMode::OpInfo {
  std::string name;                          // "aten::add_.Tensor" (OpOverload.__qualname__)
  std::vector<std::optional<IValue>> defaults;
  std::size_t kwarg_only_start = 0;
  bool hidden = false;                       // profiler::_record_function_*
};

const DebugMode::OpInfo& DebugMode::op_info(const OperatorHandle& op) {
  const std::size_t index = op.index();
  if (index >= op_infos_.size()) op_infos_.resize(index + 1);
  if (!op_infos_[index]) {
    auto info = std::make_unique<OpInfo>();
    info->name = op.name().qualified();
    if (!op.name().overload.empty()) info->name += "." + op.name().overload;
    const auto& args = op.schema().arguments();
    for (std::size_t i = 0; i < args.size(); ++i)
      info->defaults.push_back(args[i].default_text ? std::optional<IValue>(op.schema().default_value(i)) : std::nullopt);
    info->kwarg_only_start = args.size();
    while (info->kwarg_only_start > 0 && args[info->kwarg_only_start - 1].kwarg_only) --info->kwarg_only_start;
    info->hidden = is_record_function_op(op);
    op_infos_[index] = std::move(info);
  }
  return *op_infos_[index];
}


std::string_view kind_name(DebugCall::Kind kind) {
  switch (kind) {
    case DebugCall::Kind::Op: return "op";
    case DebugCall::Kind::Function: return "function";
    case DebugCall::Kind::Module: return "module";
  }
  return "op";
}

std::string DebugCall::render() const {
  if (kind == Kind::Module) return "[nn.Mod] " + name;
  std::string out = name;
  out += '(';
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (i) out += ", ";
    out += args[i];
  }
  for (const auto& [key, value] : kwargs) {
    if (!out.ends_with('(')) out += ", ";
    out += key;
    out += '=';
    out += value;
  }
  out += ')';
  if (output) {
    out += "  ->  ";
    out += *output;
  }
  if (log.is_object() && !log.empty()) {
    out += "  # ";
    out += python_repr(log);
  }
  return out;
}

// Note [DebugMode's tensor attributes]
// Upstream's record_tensor_attributes writes `{name=value, ...}` after the shape for each listed
// attribute the tensor has (getattr's str()). strata reads the attributes every tensor has:
// requires_grad, is_leaf and _version (as of when the call is written: an op's output is written
// below autograd, before autograd gives it a history, as upstream's dispatch mode sees it), dtype
// (torch.float32), device (cpu), ndim and shape (torch.Size([8, 16])). A name outside these is refused
// when the mode is made rather than silently skipped, since no strata tensor could have it.
namespace {
constexpr std::string_view kTensorAttributes[] = {"requires_grad", "is_leaf", "_version", "dtype",
                                                  "device",        "ndim",    "shape"};

void append_attribute(std::string& out, const Tensor& t, std::string_view name) {
  const auto flag = [&](bool b) { out += b ? "True" : "False"; };
  out += name;
  out += '=';
  if (name == "requires_grad") flag(t.requires_grad());
  else if (name == "is_leaf") flag(t.is_leaf());
  else if (name == "_version") append_int(out, t.impl()->version());
  else if (name == "dtype") (out += "torch.") += dtype_name(t.dtype());
  else if (name == "device") out += device_name(t.device());
  else if (name == "ndim") append_int(out, t.dim());
  else if (name == "shape") (out += "torch.Size(") += shape_str(t.sizes()) + ")";
}
}  // namespace

DebugMode::DebugMode(DebugModeOptions options) : options_(std::move(options)) {
  for (const std::string& name : options_.record_tensor_attributes) {
    const bool known = std::find(std::begin(kTensorAttributes), std::end(kTensorAttributes), name) != std::end(kTensorAttributes);
    STRATA_CHECK(known, "DebugMode: record_tensor_attributes names '", name,
                 "', which a strata tensor does not have; it reads requires_grad, is_leaf, _version, dtype, device, "
                 "ndim and shape");
  }
}

DebugMode::~DebugMode() {
  auto& modes = active_modes();
  modes.erase(std::remove(modes.begin(), modes.end(), this), modes.end());
}

void DebugMode::reset() {
  calls_.clear();
  spine_.clear();
  open_.clear();
  depth_ = 0;
  ids_.clear();
  next_id_ = 0;
}

// Note [Tensor ids without references]
// Upstream keys ids by weak references to tensor objects. DebugMode keeps no reference at all (one
// would change use counts, and with them which ops run: AccumulateGrad steals a gradient only it
// holds), so it keys ids by TensorImpl address and guards against a freed impl's address being
// reused: an op's output that is not one of its inputs is a new tensor and gets a new id, and a known
// address whose data pointer changed is a new tensor too.
std::int64_t DebugMode::tensor_id(const Tensor& t, bool fresh) const {
  const TensorImpl* impl = t.impl();
  const void* data = impl->has_data() ? impl->data() : nullptr;
  if (fresh && std::find(inputs_.begin(), inputs_.end(), impl) != inputs_.end()) fresh = false;
  auto [it, inserted] = ids_.try_emplace(impl, IdEntry{next_id_, data});
  if (inserted) return next_id_++;
  if (fresh || it->second.data != data) it->second = IdEntry{next_id_++, data};
  return it->second.id;
}

void DebugMode::append_tensor(std::string& out, const Tensor& t, bool fresh_id, bool with_ids) const {
  if (!t.defined()) {
    out += "None";
    return;
  }
  const DebugModeSubclass* custom = t.subclass() ? dynamic_cast<const DebugModeSubclass*>(t.subclass()) : nullptr;
  if (custom) out += custom->debug_prefix();
  else if (FakeTensor::is_fake(t)) out += "ft";
  else out += 't';
  if (with_ids) {
    out += '$';
    append_int(out, tensor_id(t, fresh_id));
  }
  out += ": ";
  out += dtype_shorthand(t.dtype());
  out += '[';
  const IntArrayRef sizes = t.sizes();
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (i) out += ", ";
    append_int(out, sizes[i]);
  }
  out += ']';
  if (!options_.record_tensor_attributes.empty()) {
    out += '{';
    for (std::size_t i = 0; i < options_.record_tensor_attributes.size(); ++i) {
      if (i) out += ", ";
      append_attribute(out, t, options_.record_tensor_attributes[i]);
    }
    out += '}';
  }
  if (custom) out += custom->debug_suffix(t);
}

// str(value) as upstream's _arg_to_str makes it: a tensor list is a list of strings, so its elements
// are quoted.
void DebugMode::append_value(std::string& out, const IValue& v, bool fresh_ids, bool with_ids) const {
  switch (v.tag()) {
    case IValue::Tag::None: out += "None"; break;
    case IValue::Tag::Double: append_python_float(out, v.to_double()); break;
    case IValue::Tag::Int: append_int(out, v.to_int()); break;
    case IValue::Tag::Bool: out += v.to_bool() ? "True" : "False"; break;
    case IValue::Tag::ScalarType: out += "torch."; out += dtype_name(v.to_scalar_type()); break;
    case IValue::Tag::Device: out += device_name(v.to_device()); break;
    case IValue::Tag::Layout: out += "torch.strided"; break;
    case IValue::Tag::MemoryFormat:
      out += v.to_memory_format() == MemoryFormat::Contiguous ? "torch.contiguous_format" : "torch.preserve_format";
      break;
    case IValue::Tag::Tensor: append_tensor(out, v.to_tensor(), fresh_ids, with_ids); break;
    case IValue::Tag::IntList: {
      out += '[';
      const IntArrayRef xs = v.to_int_list();
      for (std::size_t i = 0; i < xs.size(); ++i) {
        if (i) out += ", ";
        append_int(out, xs[i]);
      }
      out += ']';
      break;
    }
    case IValue::Tag::TensorList: {
      out += '[';
      const auto& ts = v.to_tensor_list();
      for (std::size_t i = 0; i < ts.size(); ++i) {
        if (i) out += ", ";
        std::string item;
        append_tensor(item, ts[i], fresh_ids, with_ids);
        append_python_str_repr(out, item);
      }
      out += ']';
      break;
    }
    case IValue::Tag::String: append_python_str(out, v.to_string_view()); break;
    case IValue::Tag::Generator: out += "<torch._C.Generator object>"; break;
    case IValue::Tag::Object: out += "<"; out += v.to_object()->type_name(); out += " object>"; break;
  }
}

// The returns as upstream's stringify_output writes them: nothing when every value is None, one value
// as itself, several as the str() of a tuple of strings.
std::string DebugMode::returns_string(const IValue* returns, std::size_t n, bool fresh_ids) const {
  const bool all_none = std::all_of(returns, returns + n, [](const IValue& v) {
    return v.is_none() || (v.is_tensor() && !v.to_tensor().defined());
  });
  if (all_none) return {};
  std::string out;
  if (n == 1) {
    append_value(out, returns[0], fresh_ids, options_.record_ids);
    return out;
  }
  out += '(';
  for (std::size_t i = 0; i < n; ++i) {
    if (i) out += ", ";
    std::string item;
    append_value(item, returns[i], fresh_ids, options_.record_ids);
    if (returns[i].is_tensor() && returns[i].to_tensor().defined()) append_python_str_repr(out, item);
    else out += item;
  }
  out += ')';
  return out;
}

// Note [A call's parent]
// Depth alone does not give the tree: upstream prints a function call at the depth of the module it
// runs in (a module entry is one level below the depth it was entered at, a function call at it). A
// call's parent is the later of the last shallower call (what the indentation shows: a subclass op
// holds the ops on its inner tensors) and the innermost open function or module scope.
std::size_t DebugMode::add_call(DebugCall call) {
  if (options_.record_stack_trace) call.stack_trace = path_string();
  while (!spine_.empty() && calls_[spine_.back()].depth >= call.depth) spine_.pop_back();
  if (!spine_.empty()) call.parent = spine_.back();
  if (!open_.empty() && (!call.parent || *call.parent < open_.back())) call.parent = open_.back();
  calls_.push_back(std::move(call));
  spine_.push_back(calls_.size() - 1);
  return calls_.size() - 1;
}

namespace {
enum class ArgsKind { Real, Fake, DebugSubclass, OtherSubclass };

// Upstream's branches on `types`: DTensor first, then FakeTensor (or a fake mode), then none at all.
ArgsKind classify(const OperatorHandle& op, const Stack& stack) {
  bool debug_subclass = false, fake = false, other = false;
  auto look = [&](const Tensor& t) {
    if (!t.defined()) return;
    if (t.subclass()) {
      if (dynamic_cast<const DebugModeSubclass*>(t.subclass())) debug_subclass = true;
      else if (FakeTensor::is_fake(t)) fake = true;
      else other = true;
    } else if (FakeTensor::is_fake(t)) {
      fake = true;
    }
  };
  const std::size_t n = op.schema().arguments().size();
  for (std::size_t i = stack.size() - n; i < stack.size(); ++i) {
    if (stack[i].is_tensor()) look(stack[i].to_tensor());
    else if (stack[i].is_tensor_list())
      for (const Tensor& t : stack[i].to_tensor_list()) look(t);
  }
  if (debug_subclass) return ArgsKind::DebugSubclass;
  if (fake || dynamic_cast<const FakeTensorMode*>(current_mode()) != nullptr) return ArgsKind::Fake;
  return other ? ArgsKind::OtherSubclass : ArgsKind::Real;
}

// Restores the input list on every exit, a throwing op included.
class InputsScope : NonCopyable {
 public:
  explicit InputsScope(std::vector<const TensorImpl*>& inputs) : inputs_(inputs) {}
  ~InputsScope() { inputs_.clear(); }

 private:
  std::vector<const TensorImpl*>& inputs_;
};
}  // namespace

void DebugMode::dispatch(const OperatorHandle& op, Stack& stack) {
  const OpInfo& info = op_info(op);
  const ArgsKind kind = classify(op, stack);
  if (kind == ArgsKind::DebugSubclass) {
    record_subclass_op(op, stack);
    return;
  }
  const bool recorded = !info.hidden && (kind == ArgsKind::Real ? options_.record_realtensor
                                       : kind == ArgsKind::Fake ? options_.record_faketensor
                                                                : false);
  if (!recorded) {
    op.call(stack);
    return;
  }
  const std::size_t base = stack.size() - op.schema().arguments().size();
  const std::size_t index = add_call(op_call(op, stack, depth_ + 1));

  const HookLists& hooks = hook_lists();
  const bool any_hook = !hooks.record.empty() || !hooks.log.empty();
  std::vector<IValue> args;  // Note [Hooks that read arguments]
  if (hooks.reading_args > 0) args.assign(stack.begin() + static_cast<std::ptrdiff_t>(base), stack.end());
  InputsScope inputs_scope(inputs_);
  if (options_.record_output && options_.record_ids) {
    // read through const slots: a mutable Tensor& would turn a borrowed argument into a reference
    for (std::size_t i = base; i < stack.size(); ++i) {
      const IValue& v = stack[i];
      if (v.is_tensor()) inputs_.push_back(v.to_tensor().impl());
      else if (v.is_tensor_list())
        for (const Tensor& t : v.to_tensor_list()) inputs_.push_back(t.impl());
    }
  }

  op.call(stack);

  const std::size_t num_returns = op.schema().returns().size();
  const IValue* returns = stack.data() + (stack.size() - num_returns);
  if (options_.record_output) {
    std::string out = returns_string(returns, num_returns, true);
    if (!out.empty()) calls_[index].output = std::move(out);
  }
  if (!any_hook) return;
  const DispatchHookCall hook_call{op, args, returns, num_returns};
  auto run = [&](const std::vector<DispatchHook>& list, nlohmann::ordered_json& into) {
    for (const DispatchHook& hook : list) {
      nlohmann::ordered_json got = hook(hook_call);
      if (got.is_null()) continue;
      STRATA_CHECK(got.is_object(), "DebugMode: a dispatch hook must return a JSON object or null, got ", got.type_name(),
                   " for ", op.str());
      if (into.is_null()) into = nlohmann::ordered_json::object();
      for (auto& [key, value] : got.items()) into[key] = value;
    }
  };
  nlohmann::ordered_json record, log;  // hooks may record ops themselves: calls_ may move meanwhile
  run(hooks.record, record);
  run(hooks.log, log);
  calls_[index].record = std::move(record);
  calls_[index].log = std::move(log);
}

// A DebugModeSubclass's op (Note [How DebugMode names a tensor]): recorded at the current depth, with
// its arguments; the subclass then handles it.
void DebugMode::record_subclass_op(const OperatorHandle& op, Stack& stack) {
  add_call(op_call(op, stack, depth_));
  return_not_implemented();
}

// Note [DebugMode's arguments are upstream's]
DebugCall DebugMode::op_call(const OperatorHandle& op, const Stack& stack, int depth) {
  const OpInfo& info = op_info(op);
  const std::size_t n = op.schema().arguments().size();
  const std::size_t base = stack.size() - n;
  auto is_default = [&](std::size_t i) { return info.defaults[i] && same_value(stack[base + i], *info.defaults[i]); };
  std::size_t positional_end = info.kwarg_only_start;
  while (positional_end > 0 && is_default(positional_end - 1)) --positional_end;

  DebugCall call;
  call.kind = DebugCall::Kind::Op;
  call.depth = depth;
  call.name = info.name;
  std::vector<std::pair<std::string, const IValue*>> kwargs;
  for (std::size_t i = info.kwarg_only_start; i < n; ++i)
    if (!is_default(i)) kwargs.emplace_back(op.schema().arguments()[i].name, &stack[base + i]);
  set_args(call, stack.data() + base, positional_end, kwargs);
  return call;
}

// The call's arguments as strings now, or, with store_original_args, as values written when the log
// is printed (rendered()).
void DebugMode::set_args(DebugCall& call, const IValue* args, std::size_t n,
                         const std::vector<std::pair<std::string, const IValue*>>& kwargs) {
  if (options_.store_original_args) {
    call.original_args.assign(args, args + n);
    for (const auto& [key, value] : kwargs) call.original_kwargs.emplace_back(key, *value);
    return;
  }
  call.args.reserve(n);
  for (std::size_t i = 0; i < n; ++i) append_value(call.args.emplace_back(), args[i], false, options_.record_ids);
  for (const auto& [key, value] : kwargs) {
    std::string s;
    append_value(s, *value, false, options_.record_ids);
    call.kwargs.emplace_back(key, std::move(s));
  }
}

DebugCall DebugMode::rendered(const DebugCall& call) const {
  DebugCall out = call;
  if (call.original_args.empty() && call.original_kwargs.empty()) return out;
  out.args.clear();
  out.kwargs.clear();
  for (const IValue& v : call.original_args) append_value(out.args.emplace_back(), v, false, false);
  for (const auto& [key, value] : call.original_kwargs) {
    std::string s;
    append_value(s, value, false, false);
    out.kwargs.emplace_back(key, std::move(s));
  }
  return out;
}

// Note [DebugMode's stack trace]
// Upstream records each call's Python stack (and, for a backward op, the stack of the forward call
// that made its node) and prints the innermost user frame above each group of calls. strata has no
// Python frames, and a C++ backtrace would show the dispatcher, not the program. What a strata user
// wrote is the module calls and front-end functions: the call path records those enclosing the call,
// outermost first, `Sequential.0 > torch.nn.functional.linear` (module names as ModTracker gives
// them, functions by their public PyTorch name), so it needs no debug info and reads the same in
// every build. A backward op's path is the `torch.Tensor.backward` call that runs it; the forward
// call that made its node is not recorded.
std::string DebugMode::path_string() const {
  std::string out;
  for (std::size_t i = 0; i < call_path_.size(); ++i) {
    if (i) out += " > ";
    out += call_path_[i];
  }
  return out;
}

DebugMode::CallScope DebugMode::record_function_call(std::string_view name, const std::vector<IValue>& args,
                                                     const std::vector<std::pair<std::string, IValue>>& kwargs,
                                                     std::string_view path_name) {
  const bool in_path = options_.record_stack_trace;
  if (in_path) enter_path(std::string(path_name.empty() ? name : path_name));
  const int before = depth_;
  if (!options_.record_torchfunction) return in_path ? CallScope(this, 0, before, false, true) : CallScope();
  DebugCall call;
  call.kind = DebugCall::Kind::Function;
  call.depth = depth_;
  call.name = name;
  std::vector<std::pair<std::string, const IValue*>> kwarg_refs;
  for (const auto& [key, value] : kwargs) kwarg_refs.emplace_back(key, &value);
  set_args(call, args.data(), args.size(), kwarg_refs);
  const std::size_t index = add_call(std::move(call));
  open_.push_back(index);
  depth_ = before + 1;
  return CallScope(this, index, before, true, in_path);
}

DebugMode::CallScope DebugMode::record_module_call(std::string_view fully_qualified_name) {
  std::string name;  // a module's name is the caller's text: Note [Logged text is always valid UTF-8]
  append_python_str(name, fully_qualified_name);
  const bool in_path = options_.record_stack_trace;
  if (in_path) enter_path(name);
  if (!options_.record_nn_module) return in_path ? CallScope(this, 0, depth_, false, true) : CallScope();
  DebugCall call;
  call.kind = DebugCall::Kind::Module;
  call.depth = depth_ + 1;
  call.name = std::move(name);
  const int before = depth_;
  const std::size_t index = add_call(std::move(call));
  open_.push_back(index);
  depth_ = before + 1;
  return CallScope(this, index, before, true, in_path);
}

DebugMode::CallScope::CallScope(CallScope&& other) noexcept
    : mode_(std::exchange(other.mode_, nullptr)),
      index_(other.index_),
      depth_before_(other.depth_before_),
      recorded_(other.recorded_),
      in_path_(other.in_path_) {}

DebugMode::CallScope::~CallScope() {
  if (!mode_) return;
  if (in_path_) mode_->leave_path();
  if (!recorded_) return;
  mode_->depth_ = depth_before_;
  auto& open = mode_->open_;
  if (auto it = std::find(open.rbegin(), open.rend(), index_); it != open.rend()) open.erase(std::next(it).base());
}

void DebugMode::CallScope::set_output(const IValue& result) {
  if (!active() || !mode_->options_.record_output || index_ >= mode_->calls_.size()) return;
  std::string out = mode_->returns_string(&result, 1, false);
  if (!out.empty()) mode_->calls_[index_].output = std::move(out);
}

std::string DebugMode::debug_string(std::optional<bool> show_stack_trace) const {
  const bool show = show_stack_trace.value_or(options_.record_stack_trace);
  std::string out;
  const std::string* previous = nullptr;
  for (std::size_t i = 0; i < calls_.size(); ++i) {
    const std::size_t indent = 2 + 2 * static_cast<std::size_t>(std::max(calls_[i].depth, 0));
    if (show && !calls_[i].stack_trace.empty() && (!previous || *previous != calls_[i].stack_trace)) {
      if (i) out += "\n\n";  // upstream: a blank line before each new path, except at the top
      out.append(indent, ' ');
      out += "# ";
      out += calls_[i].stack_trace;
      previous = &calls_[i].stack_trace;
      out += '\n';
    } else if (i) {
      out += '\n';
    }
    out.append(indent, ' ');
    out += rendered(calls_[i]).render();
  }
  return out;
}

DebugMode::Guard::Guard(DebugMode& mode) : mode_(mode), dispatch_((mode.reset(), mode)) {
  active_modes().push_back(&mode_);
  const DebugModeOptions& options = mode_.options();
  if (options.record_torchfunction || options.record_stack_trace) function_guard_.emplace(functions_);
  if (options.record_nn_module || options.record_stack_trace) {
    modules_.register_user_hooks(
        [this](nn::Module& m, const Tensor&) { open_modules_.push_back(mode_.record_module_call(modules_.fqn(m))); },
        [this](nn::Module&, const Tensor&, const Tensor&) {
          if (!open_modules_.empty()) open_modules_.pop_back();
        });
    modules_.enter();
  }
}

void DebugMode::Guard::Functions::torch_function(FunctionCall& call) {
  std::vector<std::pair<std::string, IValue>> kwargs;
  for (const auto& [name, value] : call.kwargs()) kwargs.emplace_back(std::string(name), value);
  CallScope scope = mode_.record_function_call(call.repr_name(), call.args(), kwargs, call.name());
  call.call_through();
  if (scope.active() && call.has_result()) scope.set_output(call.result());
}

DebugMode::Guard::~Guard() {
  modules_.exit();
  open_modules_.clear();
  auto& modes = active_modes();
  auto it = std::find(modes.rbegin(), modes.rend(), &mode_);
  if (it != modes.rend()) modes.erase(std::next(it).base());
}

DebugMode::HooksGuard::HooksGuard(DispatchHook record_hook, DispatchHook log_hook, bool reads_args)
    : record_(static_cast<bool>(record_hook)), log_(static_cast<bool>(log_hook)), reads_args_(reads_args) {
  if (record_) hook_lists().record.push_back(std::move(record_hook));
  if (log_) hook_lists().log.push_back(std::move(log_hook));
  if (reads_args_) ++hook_lists().reading_args;
}

DebugMode::HooksGuard::~HooksGuard() {
  if (record_) hook_lists().record.pop_back();
  if (log_) hook_lists().log.pop_back();
  if (reads_args_) --hook_lists().reading_args;
}

const std::vector<DebugMode*>& active_debug_modes() { return active_modes(); }

DebugMode* get_active_debug_mode() { return active_modes().empty() ? nullptr : active_modes().front(); }

}  // namespace strata::tracer
