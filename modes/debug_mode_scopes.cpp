// modes/debug_mode_scopes.cpp: the calls DebugMode records around ops: function and module calls as
// scopes (upstream's __torch_function__ and module pre-forward hook), the call path a stack trace
// shows, and the Guard that enters the mode and lists it as active. Ops are recorded in debug_mode.cpp.
#include "modes/debug_mode.h"

#include <algorithm>

#include "io/python_repr.h"

namespace strata::tracer {

namespace {

std::vector<DebugMode*>& active_modes() {
  thread_local std::vector<DebugMode*> modes;
  return modes;
}

}  // namespace

DebugMode::~DebugMode() {
  distributed::remove_redistribute_listener(this);
  auto& modes = active_modes();
  modes.erase(std::remove(modes.begin(), modes.end(), this), modes.end());
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

DebugMode::Guard::Guard(DebugMode& mode) : mode_(mode), dispatch_((mode.reset(), mode)) {
  active_modes().push_back(&mode_);
  distributed::add_redistribute_listener(&mode_);
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
  mode_.open_redistributions_.clear();
  distributed::remove_redistribute_listener(&mode_);
  auto& modes = active_modes();
  auto it = std::find(modes.rbegin(), modes.rend(), &mode_);
  if (it != modes.rend()) modes.erase(std::next(it).base());
}

const std::vector<DebugMode*>& active_debug_modes() { return active_modes(); }

DebugMode* get_active_debug_mode() { return active_modes().empty() ? nullptr : active_modes().front(); }

}  // namespace strata::tracer
