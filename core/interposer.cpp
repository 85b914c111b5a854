// core/interposer.cpp: the thread-local mode stack and the Python-key fallback.
#include "core/interposer.h"

#include <algorithm>
#include <sstream>

namespace strata {

namespace {

std::vector<DispatchMode*>& mode_stack() {
  thread_local std::vector<DispatchMode*> stack;
  return stack;
}

// See Note [The mode stack owns the Python key].
void sync_python_key() {
  DispatchKeySet& included = detail::tls_local_dispatch_keys.included;
  included = mode_stack().empty() ? included.remove(DispatchKey::Python) : included.add(DispatchKey::Python);
}

// Pops the innermost mode while its handler runs and pushes it back afterwards, also after a throw.
class TemporaryModePop {
 public:
  TemporaryModePop() : mode_(mode_stack().back()) {
    mode_stack().pop_back();
    sync_python_key();
  }
  ~TemporaryModePop() {
    mode_stack().push_back(mode_);
    sync_python_key();
  }
  TemporaryModePop(const TemporaryModePop&) = delete;
  TemporaryModePop& operator=(const TemporaryModePop&) = delete;
  DispatchMode* mode() const { return mode_; }

 private:
  DispatchMode* mode_;
};

TensorSubclass* first_subclass_argument(const OperatorHandle& op, const Stack& stack) {
  const std::size_t n = op.schema().arguments().size();
  for (std::size_t i = stack.size() - n; i < stack.size(); ++i) {
    const IValue& v = stack[i];
    if (v.is_tensor() && v.to_tensor().defined() && v.to_tensor().subclass()) return v.to_tensor().subclass();
    if (v.is_tensor_list()) {
      for (const Tensor& t : v.to_tensor_list())
        if (t.defined() && t.subclass()) return t.subclass();
    }
  }
  return nullptr;
}

}  // namespace

ModeGuard::ModeGuard(DispatchMode& mode) : mode_(&mode) {
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

Tensor make_wrapper_tensor(IntrusivePtr<TensorSubclass> subclass, IntArrayRef sizes, IntArrayRef strides,
                           std::int64_t storage_offset, ScalarType dtype, Device device) {
  STRATA_CHECK(subclass, "make_wrapper_tensor needs a subclass payload");
  STRATA_CHECK(sizes.size() == strides.size(), "make_wrapper_tensor: sizes ", shape_str(sizes), " and strides ",
               shape_str(strides), " differ in length");
  // A wrapper has no storage, but its geometry must be one a real tensor could have (as PyTorch's
  // _make_wrapper_subclass checks through its meta storage).
  check_size_nonnegative(sizes);
  STRATA_CHECK(storage_offset >= 0, "Tensor: invalid storage offset ", storage_offset);
  storage_nbytes(sizes, strides, element_size(dtype), storage_offset);
  auto impl = IntrusivePtr<TensorImpl>::make(Storage(), storage_offset, DimVector(sizes), DimVector(strides),
                                             dtype, device);
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

// PyTorch's pythonFallback: the innermost mode first; else the first wrapper argument's subclass.
// A mode or subclass handler is user code: what it leaves on the stack is checked against the
// schema's returns before anything reads it, so a handler that forgets to run the op (or pushes
// something else) is a clear error instead of a read past the stack.
struct Handler {
  std::string_view prefix, name, suffix;  // "the dispatch mode OpCounter", "LoggingTensor.__torch_dispatch__"
};
std::ostream& operator<<(std::ostream& out, const Handler& h) { return out << h.prefix << h.name << h.suffix; }

void check_handler_returns(const OperatorHandle& op, const Stack& stack, std::size_t base, const Handler& who) {
  const std::size_t want = op.schema().returns().size();
  STRATA_CHECK(stack.size() == base + want, who, " handled ", op.str(), " but left ",
               static_cast<std::int64_t>(stack.size()) - static_cast<std::int64_t>(base), " values on the stack; expected ",
               want, " (the op's returns, in place of its arguments)");
  for (std::size_t i = 0; i < want; ++i) {
    const SchemaType& type = op.schema().returns()[i].type;
    if (!type.is_tensor_like() || type.list) continue;
    const IValue& v = stack[base + i];
    STRATA_CHECK((v.is_tensor() && v.to_tensor().defined()) || (type.optional && v.is_none()), who, " handled ", op.str(),
                 " but return #", i, " is ", v.is_tensor() ? "an undefined Tensor" : v.tag_name(), "; expected a Tensor");
  }
}

void interposer_fallback(const OperatorHandle& op, DispatchKeySet keys, Stack& stack) {
  const std::size_t num_args = op.schema().arguments().size();
  STRATA_INTERNAL_ASSERT(stack.size() >= num_args, "the interposer was given a short stack");
  if (!mode_stack().empty()) {
    const std::size_t base = stack.size() - num_args;
    TemporaryModePop pop;
    const std::string_view name = pop.mode()->name();
    pop.mode()->dispatch(op, stack);
    check_handler_returns(op, stack, base, {"the dispatch mode ", name, ""});
    return;
  }
  if (TensorSubclass* subclass = first_subclass_argument(op, stack)) {
    IntrusivePtr<TensorSubclass> keep_alive(subclass);
    const std::size_t base = stack.size() - num_args;
    subclass->dispatch(op, stack);
    check_handler_returns(op, stack, base, {"", subclass->type_name(), ".__torch_dispatch__"});
    return;
  }
  Dispatcher::redispatch(op, keys.after(DispatchKey::Python), stack);
}

}  // namespace strata
