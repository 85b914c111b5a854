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
  auto impl = IntrusivePtr<TensorImpl>::make(Storage(), storage_offset, DimVector(sizes), DimVector(strides),
                                             dtype, device);
  impl->set_subclass(std::move(subclass));
  return Tensor(std::move(impl));
}

bool interposer_sees(const Tensor& t) {
  if (local_dispatch_keys().excluded.has(DispatchKey::Python)) return false;
  return !mode_stack().empty() || t.subclass() != nullptr;
}

// PyTorch's pythonFallback: the innermost mode first; else the first wrapper argument's subclass.
void interposer_fallback(const OperatorHandle& op, DispatchKeySet keys, Stack& stack) {
  if (!mode_stack().empty()) {
    TemporaryModePop pop;
    pop.mode()->dispatch(op, stack);
    return;
  }
  if (TensorSubclass* subclass = first_subclass_argument(op, stack)) {
    IntrusivePtr<TensorSubclass> keep_alive(subclass);
    subclass->dispatch(op, stack);
    return;
  }
  Dispatcher::redispatch(op, keys.after(DispatchKey::Python), stack);
}

}  // namespace strata
