// core/interpose/interposer.cpp: the thread-local mode stack and the Python-key fallback.
#include "core/interpose/interposer.h"

#include "core/dispatch/dispatch_trace.h"
#include "core/interpose/checked_wrapper.h"

#include <algorithm>
#include <optional>
#include <sstream>
#include <typeinfo>
#include <utility>

namespace strata {

namespace {

std::vector<DispatchMode*>& mode_stack() {
  thread_local std::vector<DispatchMode*> stack;
  return stack;
}

// See Note [The mode stack owns the Python key]. `modes` is this thread's mode_stack().
void sync_python_key(const std::vector<DispatchMode*>& modes) {
  DispatchKeySet& included = detail::tls_local_dispatch_keys.included;
  included = modes.empty() ? included.remove(DispatchKey::Python) : included.add(DispatchKey::Python);
}
void sync_python_key() { sync_python_key(mode_stack()); }

// Pops the innermost mode of `modes` (this thread's mode_stack(), which is not empty) while its
// handler runs and pushes it back afterwards, also after a throw.
class TemporaryModePop : NonCopyable {
 public:
  explicit TemporaryModePop(std::vector<DispatchMode*>& modes) : modes_(modes), mode_(modes.back()) {
    modes_.pop_back();
    sync_python_key(modes_);
  }
  ~TemporaryModePop() {
    modes_.push_back(mode_);
    sync_python_key(modes_);
  }
  DispatchMode* mode() const { return mode_; }

 private:
  std::vector<DispatchMode*>& modes_;
  DispatchMode* mode_;
};

// The wrapper subclasses among the op's arguments, in the order their handlers run (Note [Who
// handles an op]): one per type, a subclass before the types it derives from.
using detail::Subclasses;
using detail::add_overloaded_subclass;
Subclasses overloaded_subclasses(const OperatorHandle& op, const Stack& stack) {
  Subclasses out;
  const std::size_t base = stack.size() - op.entry().num_arguments();
  for (std::uint8_t i : op.entry().tensor_arguments()) {
    const IValue& v = stack[base + i];
    if (v.is_tensor()) {
      // An undefined tensor's sentinel has no subclass.
      if (TensorSubclass* s = v.to_tensor().subclass()) add_overloaded_subclass(out, s, v.is_borrowed());
    } else if (v.is_tensor_list()) {
      for (const Tensor& t : v.to_tensor_list())
        if (t.defined() && t.subclass()) add_overloaded_subclass(out, t.subclass());
    }
  }
  return out;
}

// Note [A call of one borrowed subclass type]
// Most calls that reach the interposer with no mode on hold wrappers of one type, each in a
// borrowed slot: a front end's call on DTensors, or on LoggingTensors. Their handler list is that
// type's first payload alone, and its entry needs no reference (Note [A call's subclasses are
// borrowed where their tensors are]), so the interposer finds that payload in one pass and runs its
// handler without building the list. Any other call (a list argument, an owned slot, a second type)
// returns null here and takes overloaded_subclasses, whose list for these calls would be the same.
TensorSubclass* sole_borrowed_subclass(const OperatorHandle& op, const Stack& stack) {
  const std::size_t base = stack.size() - op.entry().num_arguments();
  TensorSubclass* first = nullptr;
  for (std::uint8_t i : op.entry().tensor_arguments()) {
    const IValue& v = stack[base + i];
    if (v.is_tensor_list()) return nullptr;
    TensorSubclass* s = v.is_tensor() ? v.to_tensor().subclass() : nullptr;
    if (!s) continue;
    if (!v.is_borrowed()) return nullptr;
    if (!first) {
      first = s;
      continue;
    }
    const TensorSubclass& seen = *first;  // typeid of plain references: no call in their operands
    if (typeid(seen) != typeid(*s)) return nullptr;
  }
  return first;
}

}  // namespace

void detail::add_overloaded_subclass(Subclasses& out, TensorSubclass* s, bool borrowed) {
  for (const auto& seen : out)
    if (typeid(*seen.payload) == typeid(*s)) return;
  std::size_t at = 0;
  while (at < out.size() && !out[at]->type_includes(*s)) ++at;
  out.emplace_back(s, borrowed);
  std::rotate(out.begin() + at, out.end() - 1, out.end());
}

ModeGuard::ModeGuard(DispatchMode& mode) : mode_(&mode) {
  register_interposer();
  mode_stack().push_back(mode_);
  sync_python_key();
}

ModeGuard::~ModeGuard() {
  // Guards normally unwind innermost first; tolerate any order rather than corrupt the stack.
  auto& stack = mode_stack();
  auto it = std::find(stack.rbegin(), stack.rend(), mode_);
  if (it != stack.rend()) stack.erase(std::next(it).base());
  sync_python_key();
}

DispatchMode* current_mode() { return mode_stack().empty() ? nullptr : mode_stack().back(); }
std::size_t mode_stack_size() { return mode_stack().size(); }

std::string TensorSubclass::repr(const Tensor& self) const {
  std::ostringstream out;
  out << type_name() << "(size=" << shape_str(self.sizes()) << ", dtype=" << self.dtype() << ")";
  return out.str();
}

bool TensorSubclass::type_includes(const TensorSubclass& other) const { return typeid(*this) == typeid(other); }

// Note [A subclass takes function calls]: a payload with the tag counts as a user of the function
// layer for as long as it lives.
TensorSubclass::TensorSubclass(TakesFunctionCalls) : TensorSubclass() {
  takes_function_calls_ = true;
  detail::add_function_layer_user();
}

TensorSubclass::TensorSubclass(const TensorSubclass& other)
    : RefCounted<TensorSubclass>(other), takes_function_calls_(other.takes_function_calls_) {
  share_version_counter(other);
  if (takes_function_calls_) detail::add_function_layer_user();
}

TensorSubclass::~TensorSubclass() {
  IntrusivePtr<VersionCounter>::reclaim(version_.load(std::memory_order_relaxed));  // drops its reference
  if (takes_function_calls_) detail::remove_function_layer_user();
}

// Note [A wrapper's version counter is made on first use]
TensorSubclass::VersionCounter& TensorSubclass::counter() const {
  if (VersionCounter* c = version_.load(std::memory_order_acquire)) return *c;
  VersionCounter* fresh = IntrusivePtr<VersionCounter>::make().release();
  VersionCounter* published = nullptr;
  if (version_.compare_exchange_strong(published, fresh, std::memory_order_acq_rel, std::memory_order_acquire))
    return *fresh;
  IntrusivePtr<VersionCounter>::reclaim(fresh);  // another thread made one first: drop this one
  return *published;
}

void TensorSubclass::share_version_counter(const TensorSubclass& source) {
  IntrusivePtr<VersionCounter> shared(&source.counter());
  IntrusivePtr<VersionCounter>::reclaim(version_.exchange(shared.release(), std::memory_order_acq_rel));
}

void TensorSubclass::torch_function(FunctionCall& call) {
  STRATA_INTERNAL_ASSERT(false, type_name(), " was asked to handle ", call.name(),
                         " but was not constructed with TakesFunctionCalls");
}

namespace {
void check_geometry(IntArrayRef sizes, IntArrayRef strides, std::size_t itemsize, std::int64_t storage_offset) {
  STRATA_CHECK(sizes.size() == strides.size(), "make_wrapper_tensor: sizes ", shape_str(sizes), " and strides ",
               shape_str(strides), " differ in length");
  // A wrapper has no storage, but its geometry must be one a real tensor could have (as PyTorch's
  // _make_wrapper_subclass checks through its meta storage).
  check_size_nonnegative(sizes);
  STRATA_CHECK(storage_offset >= 0, "Tensor: invalid storage offset ", storage_offset);
  storage_nbytes(sizes, strides, itemsize, storage_offset);
}
}  // namespace

CheckedGeometry check_wrapper_geometry(IntArrayRef sizes, IntArrayRef strides, std::size_t itemsize) {
  check_geometry(sizes, strides, itemsize, 0);
  return CheckedGeometry{itemsize, numel_of(sizes), is_contiguous_layout(sizes, strides)};
}

Tensor make_checked_wrapper_tensor(IntrusivePtr<TensorSubclass> subclass, IntArrayRef sizes, IntArrayRef strides,
                                   const CheckedGeometry& checked, ScalarType dtype,
                                   Device device) {  // Note [A wrapper of checked geometry]
  STRATA_CHECK(subclass, "make_wrapper_tensor needs a subclass payload");
  register_interposer();
  auto impl = IntrusivePtr<TensorImpl>::make(sizes, strides, TensorImpl::KnownLayout{checked.numel, checked.contiguous},
                                             dtype, device);
  impl->set_subclass(std::move(subclass));
  return Tensor(std::move(impl));
}

Tensor make_wrapper_tensor(IntrusivePtr<TensorSubclass> subclass, IntArrayRef sizes, IntArrayRef strides,
                           std::int64_t storage_offset, ScalarType dtype, Device device) {
  STRATA_CHECK(subclass, "make_wrapper_tensor needs a subclass payload");
  register_interposer();
  check_geometry(sizes, strides, element_size(dtype), storage_offset);
  auto impl = IntrusivePtr<TensorImpl>::make(Storage(), storage_offset, sizes, strides, dtype, device);
  impl->set_subclass(std::move(subclass));
  return Tensor(std::move(impl));
}

namespace {
// PyTorch's dispatch_mode_enabled(): a mode is on and the Python key is not excluded.
bool dispatch_mode_enabled() {
  return !mode_stack().empty() && !local_dispatch_keys().excluded.has(DispatchKey::Python);
}
}  // namespace

bool is_tensor_subclass_like(const Tensor& t) { return dispatch_mode_enabled() || t.subclass() != nullptr; }

bool interposer_sees(const Tensor& t) {
  return dispatch_mode_enabled() || (t.subclass() != nullptr && !local_dispatch_keys().excluded.has(DispatchKey::Python));
}

// A mode or subclass handler is user code: what it leaves on the stack is checked against the
// schema's returns before anything reads it (Note [The handler protocol]).
namespace {

thread_local bool tls_not_implemented = false;

// Who handled an op, for error messages only ("the dispatch mode OpCounter",
// "LoggingTensor.__torch_dispatch__"): the name is asked for when a message is written.
struct Handler {
  const DispatchMode* mode = nullptr;
  const TensorSubclass* subclass = nullptr;
};
std::ostream& operator<<(std::ostream& out, const Handler& h) {
  if (h.mode) return out << "the dispatch mode " << h.mode->name();
  return out << h.subclass->type_name() << ".__torch_dispatch__";
}

void mark_arguments(Stack& stack, std::size_t base) {
  for (std::size_t i = base; i < stack.size(); ++i) stack[i].mark_handler_argument();
}

void check_handler_returns(const OperatorHandle& op, Stack& stack, std::size_t base, const Handler& who) {
  const std::size_t want = op.schema().returns().size();
  const std::size_t num_args = op.schema().arguments().size();
  const bool left_arguments = stack.size() == base + num_args &&
                              std::any_of(stack.begin() + static_cast<std::ptrdiff_t>(base), stack.end(),
                                          [](const IValue& v) { return v.is_handler_argument(); });
  STRATA_CHECK(!left_arguments, who, " handled ", op.str(),
               " but left its arguments on the stack: it must replace them with the op's returns (op.call(stack) "
               "runs the op) or call return_not_implemented()");
  STRATA_CHECK(stack.size() == base + want, who, " handled ", op.str(), " but left ",
               static_cast<std::int64_t>(stack.size()) - static_cast<std::int64_t>(base), " values on the stack; expected ",
               want, " (the op's returns, in place of its arguments)");
  for (std::uint8_t i : op.entry().tensor_returns()) {
    IValue& v = stack[base + i];
    if (v.is_none()) v = IValue(Tensor());  // a handler's None is the caller's undefined Tensor
    STRATA_CHECK(v.is_tensor(), who, " handled ", op.str(), " but return #", static_cast<int>(i), " is ", v.tag_name(),
                 "; expected a Tensor");
  }
}

// Runs one handler; false when it returned NotImplemented (the arguments are then as it found them).
// Note [The trace names the handler]
// While this thread traces (dispatch_trace.h), the Python key's step says whom the interposer handed
// the op to, as a line "interposer: handed to the dispatch mode DebugMode" (or
// "LoggingTensor.__torch_dispatch__") before the handler's own steps, and "interposer: ... returned
// NotImplemented" when it declined: the HTML explorer (tracer/explorer_trace.cpp) reads these lines.
// Untraced, this costs the one relaxed load dispatch_trace_in_use() makes, and only on the Python
// key's path, never on a plain op's.
void trace_handler(const Handler& who, std::string_view what) {
  std::ostringstream line;
  line << "interposer: " << what << who;
  dispatch_trace_note(line.str());
}

template <typename Fn>
bool run_handler(const OperatorHandle& op, Stack& stack, std::size_t base, const Handler& who, Fn&& handler) {
  mark_arguments(stack, base);
  tls_not_implemented = false;
  if (dispatch_trace_in_use()) [[unlikely]] trace_handler(who, "handed to ");
  handler();
  if (std::exchange(tls_not_implemented, false)) {
    STRATA_CHECK(stack.size() == base + op.schema().arguments().size(), who, " returned NotImplemented for ", op.str(),
                 " but did not leave its arguments on the stack as it found them");
    if (dispatch_trace_in_use()) [[unlikely]] trace_handler(who, "declined by ");
    return false;
  }
  check_handler_returns(op, stack, base, who);
  return true;
}

// The wrappers among the arguments `op` writes in place (Tensor(a!)), with their versions on entry.
// Note [A written wrapper is bumped once per op]: PyTorch bumps a tensor's version above the Python
// key (ADInplaceOrView), once per op, whoever answers it below: a mode (one that runs the op on the
// wrapper's inner tensors and never reaches the subclass) or a subclass. strata's kernels bump what
// they write, which for a wrapper is its inner tensor, so the interposer bumps a written wrapper
// after a handler answered, unless an inner level already did (a mode that called through to the
// subclass). A subclass tensor with a storage (a fake, a make_subclass tensor) is counted there, by
// the kernel that writes it, so it is not a wrapper here.
class WrittenWrappers {
 public:
  WrittenWrappers(const OperatorHandle& op, const Stack& stack, std::size_t base) {
    for (std::uint8_t i : op.entry().written_tensor_arguments()) {
      if (!stack[base + i].is_tensor()) continue;
      const Tensor& t = stack[base + i].to_tensor();
      if (!t.defined() || !t.subclass() || t.impl()->storage()) continue;
      wrappers_.push_back(IntrusivePtr<TensorSubclass>(t.subclass()));
      versions_.push_back(t.subclass()->version());
    }
  }
  void bump_unbumped() const {
    for (std::size_t i = 0; i < wrappers_.size(); ++i)
      if (wrappers_[i]->version() == versions_[i]) wrappers_[i]->bump_version();
  }

 private:
  SmallVector<IntrusivePtr<TensorSubclass>, 4> wrappers_;
  SmallVector<std::uint32_t, 4> versions_;
};

[[noreturn]] void throw_all_not_implemented(const OperatorHandle& op, std::string_view mode, const Subclasses& subclasses) {
  std::ostringstream out;
  out << "Multiple dispatch failed for '" << op.str() << "'; all __torch_dispatch__ handlers returned NotImplemented:\n\n";
  if (!mode.empty()) out << "  - mode object " << mode << "\n";
  for (const auto& s : subclasses) out << "  - tensor subclass " << s->type_name() << "\n";
  throw Error(out.str());
}

// The subclasses' half of Note [Who handles an op]: true when one of them answered.
bool run_subclass_handlers(const OperatorHandle& op, Stack& stack, std::size_t base, const Subclasses& subclasses) {
  for (const auto& subclass : subclasses)
    if (run_handler(op, stack, base, Handler{.subclass = subclass.payload}, [&] { subclass->dispatch(op, stack); }))
      return true;
  return false;
}

// PyTorch's pythonFallback (Note [Who handles an op]).
void interposer_fallback(const OperatorHandle& op, DispatchKeySet keys, Stack& stack) {
  const std::size_t num_args = op.schema().arguments().size();
  STRATA_INTERNAL_ASSERT(stack.size() >= num_args, "the interposer was given a short stack");
  const std::size_t base = stack.size() - num_args;
  std::string_view declining_mode;
  std::optional<WrittenWrappers> written;
  if (!op.entry().written_tensor_arguments().empty()) [[unlikely]] written.emplace(op, stack, base);
  if (std::vector<DispatchMode*>& modes = mode_stack(); !modes.empty()) {
    TemporaryModePop pop(modes);
    DispatchMode* mode = pop.mode();
    if (run_handler(op, stack, base, Handler{.mode = mode}, [&] { mode->dispatch(op, stack); })) {
      if (written) written->bump_unbumped();
      return;
    }
    declining_mode = mode->name();
  }
  if (TensorSubclass* only = sole_borrowed_subclass(op, stack)) [[likely]] {
    if (run_handler(op, stack, base, Handler{.subclass = only}, [&] { only->dispatch(op, stack); })) {
      if (written) written->bump_unbumped();
      return;
    }
    Subclasses declined;
    declined.emplace_back(only, true);
    throw_all_not_implemented(op, declining_mode, declined);
  }
  const Subclasses subclasses = overloaded_subclasses(op, stack);
  if (run_subclass_handlers(op, stack, base, subclasses)) {
    if (written) written->bump_unbumped();
    return;
  }
  if (!declining_mode.empty() || !subclasses.empty()) throw_all_not_implemented(op, declining_mode, subclasses);
  Dispatcher::redispatch(op, keys.after(DispatchKey::Python), stack);
}

}  // namespace

void call_subclass_handlers(const OperatorHandle& op, Stack& stack) {
  const std::size_t num_args = op.schema().arguments().size();
  STRATA_CHECK(stack.size() >= num_args, "call_subclass_handlers: ", op.str(), " takes ", num_args,
               " arguments but the stack holds ", stack.size());
  const std::size_t base = stack.size() - num_args;
  const Subclasses subclasses = overloaded_subclasses(op, stack);
  STRATA_CHECK(!subclasses.empty(), "call_subclass_handlers: no argument of ", op.str(), " is a wrapper subclass");
  if (!run_subclass_handlers(op, stack, base, subclasses)) throw_all_not_implemented(op, {}, subclasses);
}

void return_not_implemented() { tls_not_implemented = true; }
bool detail::take_not_implemented() { return std::exchange(tls_not_implemented, false); }
void detail::reset_not_implemented() { tls_not_implemented = false; }

void register_interposer() {
  static const bool registered = [] {
    Dispatcher::singleton().register_fallback(DispatchKey::Python, KernelFunction{&interposer_fallback, "interposer"});
    return true;
  }();
  (void)registered;
}

}  // namespace strata
