// core/interpose/function_mode.cpp: the thread-local function-mode stack, signatures and the handler call.
#include "core/interpose/function_mode.h"

#include <algorithm>
#include <charconv>

#include "core/util/error.h"
#include "core/util/non_copyable.h"

namespace strata {

namespace detail {
constinit thread_local bool tls_function_modes_enabled = false;
constinit thread_local bool tls_subclass_functions_enabled = true;
constinit std::atomic<std::uint32_t> function_layer_users{0};
}

namespace {

struct FunctionModeState {
  std::vector<FunctionMode*> stack;
  int disabled = 0;           // live DisableFunctionModes guards
  int subclass_disabled = 0;  // live DisableSubclassFunctions guards
};

FunctionModeState& state() {
  thread_local FunctionModeState s;
  return s;
}

// The live DisableFunctions guards of one kind on this thread.
int& disabled_count(FunctionHooks off) { return off == FunctionHooks::All ? state().disabled : state().subclass_disabled; }

// Note [One test per call]: the flags follow the stack and the guards.
void sync_enabled() {
  const FunctionModeState& s = state();
  detail::tls_function_modes_enabled = !s.stack.empty() && s.disabled == 0;
  detail::tls_subclass_functions_enabled = s.disabled == 0 && s.subclass_disabled == 0;
}

// Pops the innermost mode while its handler runs; pushes it back afterwards, also after a throw.
class TemporaryFunctionModePop : NonCopyable {
 public:
  TemporaryFunctionModePop() : mode_(state().stack.back()) {
    state().stack.pop_back();
    sync_enabled();
  }
  ~TemporaryFunctionModePop() {
    state().stack.push_back(mode_);
    sync_enabled();
  }
  FunctionMode* mode() const { return mode_; }

 private:
  FunctionMode* mode_;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// A constant of a signature, in Python's spelling.
IValue parse_constant(std::string_view text, std::string_view function) {
  if (text == "None") return IValue();
  if (text == "True") return IValue(true);
  if (text == "False") return IValue(false);
  if (text.size() >= 2 && text.front() == '\'' && text.back() == '\'')
    return IValue(std::string_view(text.substr(1, text.size() - 2)));
  const char* end = text.data() + text.size();
  if (text.find_first_of(".e") == std::string_view::npos) {
    std::int64_t i = 0;
    auto [ptr, ec] = std::from_chars(text.data(), end, i);
    if (ec == std::errc() && ptr == end) return IValue(i);
  } else {
    double d = 0;
    auto [ptr, ec] = std::from_chars(text.data(), end, d);
    if (ec == std::errc() && ptr == end) return IValue(d);
  }
  STRATA_INTERNAL_ASSERT(false, "the signature of ", function, " has a constant it cannot read: ", text);
  return IValue();
}

// How upstream DebugMode names a function (FunctionSignature::repr_name): Tensor methods are C
// method descriptors, except those written in Python in torch._tensor (backward, and the reflected
// operators __rsub__ and __rtruediv__, which is __rdiv__ under another name); F.linear is bound from C.
std::string repr_name_of(std::string_view name) {
  constexpr std::string_view method_prefix = "torch.Tensor.";
  if (name == "torch.Tensor.backward") return "torch._tensor.backward";
  if (name == "torch.Tensor.__rsub__") return "torch._tensor.__rsub__";
  if (name == "torch.Tensor.__rtruediv__") return "torch._tensor.__rdiv__";
  if (name == "torch.nn.functional.linear") return "torch._C._nn.linear";
  if (name.substr(0, method_prefix.size()) == method_prefix)
    return "<method '" + std::string(name.substr(method_prefix.size())) + "' of 'torch._C.TensorBase' objects>";
  return std::string(name);
}

}  // namespace

FunctionSignature::FunctionSignature(std::string_view function_name, std::string_view text)
    : name(function_name), repr_name(repr_name_of(function_name)) {
  bool keyword = false;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (item == "*") {
      keyword = true;
      continue;
    }
    Param p;
    p.keyword = keyword;
    std::string_view body = item;
    if (body.size() > 1 && body.front() == '*') {
      p.variadic = true;
      body.remove_prefix(1);
    }
    const bool bracketed = body.size() >= 2 && body.front() == '[' && body.back() == ']';
    if (bracketed) body = trim(body.substr(1, body.size() - 2));
    const std::size_t eq = body.find('=');
    p.name = std::string(trim(body.substr(0, eq)));
    if (eq != std::string_view::npos) p.value = parse_constant(trim(body.substr(eq + 1)), name);
    if (bracketed) p.has_default = true;
    else p.constant = eq != std::string_view::npos;
    if (!p.constant) ++num_boxed;
    params.push_back(std::move(p));
  }
}

FunctionCall::FunctionCall(const FunctionSignature& signature, std::vector<IValue> boxed) : signature_(&signature) {
  STRATA_INTERNAL_ASSERT(boxed.size() == signature.num_boxed, signature.name, " boxed ", boxed.size(),
                         " arguments for a signature that takes ", signature.num_boxed);
  std::size_t next = 0;
  for (const auto& p : signature.params) {
    IValue v = p.constant ? p.value : std::move(boxed[next++]);
    if (p.variadic) {
      STRATA_INTERNAL_ASSERT(v.is_tensor_list(), signature.name, "'s *", p.name, " is not a tensor list");
      for (const Tensor& t : v.to_tensor_list()) {
        args_.emplace_back(t);
        arg_params_.push_back(&p);
      }
      continue;
    }
    if (p.has_default && p.keyword && is_default(v, p.value)) continue;  // Note [Arguments at their default are not passed]
    if (p.keyword) {
      kwargs_.emplace_back(p.name, std::move(v));
    } else {
      args_.push_back(std::move(v));
      arg_params_.push_back(&p);
    }
  }
  // Trailing positionals at their default are left out; the first one passed keeps those before it.
  while (!args_.empty() && arg_params_.back()->has_default && is_default(args_.back(), arg_params_.back()->value)) {
    args_.pop_back();
    arg_params_.pop_back();
  }
}

bool FunctionCall::is_default(const IValue& v, const IValue& default_value) {
  if (default_value.is_none()) return v.is_none();
  if (default_value.is_bool()) return v.is_bool() && v.to_bool() == default_value.to_bool();
  if (default_value.is_int() || default_value.is_double()) {
    const double d = default_value.is_int() ? static_cast<double>(default_value.to_int()) : default_value.to_double();
    return (v.is_int() && static_cast<double>(v.to_int()) == d) || (v.is_double() && v.to_double() == d);
  }
  return v.tag() == IValue::Tag::String && default_value.tag() == IValue::Tag::String &&
         v.to_string_view() == default_value.to_string_view();
}

const IValue* FunctionCall::find(std::string_view name) const {
  for (std::size_t i = 0; i < args_.size(); ++i)
    if (arg_params_[i]->name == name) return &args_[i];
  for (const auto& [k, v] : kwargs_)
    if (k == name) return &v;
  return nullptr;
}

void FunctionCall::call_through() {
  STRATA_INTERNAL_ASSERT(through_, "FunctionCall::call_through outside a function mode's handler");
  through_(context_, *this);
}

FunctionModeGuard::FunctionModeGuard(FunctionMode& mode) : mode_(&mode) {
  state().stack.push_back(mode_);
  detail::add_function_layer_user();
  sync_enabled();
}

FunctionModeGuard::~FunctionModeGuard() {
  // Guards normally unwind innermost first; tolerate any order rather than corrupt the stack.
  auto& stack = state().stack;
  auto it = std::find(stack.rbegin(), stack.rend(), mode_);
  if (it != stack.rend()) stack.erase(std::next(it).base());
  detail::remove_function_layer_user();
  sync_enabled();
}

template <FunctionHooks Off>
DisableFunctions<Off>::DisableFunctions() {
  ++disabled_count(Off);
  sync_enabled();
}

template <FunctionHooks Off>
DisableFunctions<Off>::~DisableFunctions() {
  --disabled_count(Off);
  sync_enabled();
}

template class DisableFunctions<FunctionHooks::All>;
template class DisableFunctions<FunctionHooks::Subclasses>;

FunctionMode* current_function_mode() { return state().stack.empty() ? nullptr : state().stack.back(); }
std::size_t function_mode_stack_size() { return state().stack.size(); }

namespace detail {

void run_torch_function(FunctionCall& call) {
  if (!function_modes_enabled()) return run_subclass_functions(call);
  TemporaryFunctionModePop pop;
  call.set_handler(str_cat("the function mode ", pop.mode()->name()));
  pop.mode()->torch_function(call);
  STRATA_CHECK(call.has_result(), call.handler(), " handled ", call.name(),
               " but set no result: it must call call.call_through() (PyTorch's func(*args, **kwargs)) or "
               "call.set_result()");
}

void throw_bad_function_result(const FunctionCall& call, std::string_view expected) {
  throw Error(str_cat("the result of ", call.name(), " set by ", call.handler(), " is ", call.result().tag_name(),
                      "; expected ", expected));
}

}  // namespace detail

}  // namespace strata
