// modes/debug_mode.cpp: what DebugMode records and where it goes in the call tree (upstream's
// __torch_dispatch__ and _OpCall): which ops are recorded, their arguments as upstream splits them,
// each call's parent, and the dispatch hooks. How a call is written is in debug_mode_text.cpp; the
// function and module calls around ops, and the Guard, are in debug_mode_scopes.cpp.
#include "modes/debug_mode.h"

#include <algorithm>

#include "core/util/non_copyable.h"
#include "modes/fake_tensor.h"

namespace strata::tracer {

namespace {

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

void DebugMode::reset() {
  calls_.clear();
  spine_.clear();
  open_.clear();
  depth_ = 0;
  ids_.clear();
  next_id_ = 0;
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
  if (options_.before_op) options_.before_op(op, std::span<const IValue>(stack.data() + base, stack.size() - base), index);

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

}  // namespace strata::tracer
