// core/dispatch/dispatcher.cpp: registration, lookup, the table dump, and the slow dispatch path (tracing and
// the missing-kernel error).
#include "core/dispatch/dispatcher.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "core/dispatch/dispatch_observer.h"
#include "core/dispatch/dispatch_trace.h"
#include "core/shape.h"
#include "core/util/non_copyable.h"
#include "core/util/small_vector.h"


namespace strata {

namespace {
// The tensor arguments of the call on `stack`, as a trace line shows them; the op's schema says
// which Nones stand for tensors.
std::span<const IValue> arguments_of(const OperatorHandle& op, const Stack& stack) {
  const std::size_t n = std::min(op.schema().arguments().size(), stack.size());
  return {stack.data() + stack.size() - n, n};
}
std::string tensor_arguments(const OperatorHandle& op, const Stack& stack) {
  return describe_tensor_arguments(arguments_of(op, stack),
                                   [&](std::size_t i) { return op.schema().arguments()[i].type.is_tensor_like(); });
}

// The steps of the slow path this thread is inside (Note [Observing dispatch]).
struct Step {
  const OperatorEntry* entry;
  DispatchKey key;
};
thread_local SmallVector<Step, 16> slow_steps;

// Tells the observer about a call for the step's lifetime, unless the step is a redispatch of the
// step around it (or a profiler-namespace op, or no observer is installed).
class ObservedStep : NonCopyable {
 public:
  ObservedStep(const OperatorHandle& op, DispatchKey key, const Stack& stack) {
    DispatchObserver* observer = dispatch_observer();
    const bool redispatch = !slow_steps.empty() && slow_steps.back().entry == &op.entry() &&
                            static_cast<int>(key) > static_cast<int>(slow_steps.back().key);  // keys run in enum order
    slow_steps.push_back(Step{&op.entry(), key});
    if (observer && !redispatch && op.name().ns != "profiler") {
      observer->on_op_enter(op, arguments_of(op, stack));
      observer_ = observer;
    }
  }
  ~ObservedStep() {
    slow_steps.pop_back();
    if (observer_) observer_->on_op_exit();
  }

 private:
  DispatchObserver* observer_ = nullptr;
};
}  // namespace

Dispatcher& Dispatcher::singleton() {
  static Dispatcher* dispatcher = new Dispatcher();  // never destroyed: handles outlive static teardown
  return *dispatcher;
}

Dispatcher::Dispatcher() = default;

OperatorHandle Dispatcher::def(std::string_view ns, std::string_view schema, KernelFunction cpu,
                               KernelFunction meta) {
  FunctionSchema parsed = FunctionSchema::parse(schema);
  std::lock_guard<std::mutex> lock(mutex_);
  for (const OperatorEntry& e : entries_) {
    STRATA_CHECK(!(e.name().ns == ns && e.name().name == parsed.name() && e.name().overload == parsed.overload()),
                 "operator ", e.str(), " is already registered");
  }
  OperatorEntry& entry = entries_.emplace_back(std::string(ns), std::move(parsed),
                                               static_cast<std::uint32_t>(entries_.size()));
  // A kernel registered without a display name shows the op's name (Note [A row holds its op's
  // facts], ops/boxing.h); the entry's name lives as long as the entry, which is never removed.
  if (cpu.fn && cpu.name.empty()) cpu.name = entry.name().name;
  if (meta.fn && meta.name.empty()) meta.name = entry.name().name;
  entry.kernels_[static_cast<int>(DispatchKey::CPU)] = cpu;
  entry.kernels_[static_cast<int>(DispatchKey::Meta)] = meta;
  resolve(entry);
  return OperatorHandle(&entry);
}

void Dispatcher::allow_mixed_devices(const OperatorHandle& op) {
  std::lock_guard<std::mutex> lock(mutex_);
  const_cast<OperatorEntry&>(op.entry()).mixed_devices_ok_.store(true, std::memory_order_relaxed);
}

void Dispatcher::register_kernel(const OperatorHandle& op, DispatchKey key, KernelFunction kernel) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& entry = const_cast<OperatorEntry&>(op.entry());
  entry.kernels_[static_cast<int>(key)] = kernel;
  resolve(entry);
}

void Dispatcher::set_unboxed_cpu(const OperatorHandle& op, ErasedFn fn, const std::type_info& signature) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& entry = const_cast<OperatorEntry&>(op.entry());
  entry.unboxed_cpu_ = fn;
  entry.unboxed_signature_ = &signature;
}

Dispatcher::ErasedFn Dispatcher::unboxed_cpu(const OperatorHandle& op, const std::type_info& signature) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const OperatorEntry& entry = op.entry();
  return entry.unboxed_cpu_ && *entry.unboxed_signature_ == signature ? entry.unboxed_cpu_ : nullptr;
}

bool Dispatcher::has_unboxed_cpu(const OperatorHandle& op) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return op.entry().unboxed_cpu_ != nullptr;
}

void Dispatcher::register_fallback(DispatchKey key, KernelFunction kernel) {
  std::lock_guard<std::mutex> lock(mutex_);
  fallbacks_[static_cast<int>(key)] = kernel;
  for (OperatorEntry& entry : entries_) resolve(entry);
}

void Dispatcher::resolve(OperatorEntry& entry) {
  for (int k = 0; k < kNumDispatchKeys; ++k)
    entry.table_[k].store(entry.kernels_[k] ? entry.kernels_[k].fn : fallbacks_[k].fn, std::memory_order_release);
}

std::optional<OperatorHandle> Dispatcher::find(std::string_view qualified_name, std::string_view overload) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const OperatorEntry& e : entries_)
    if (e.name().qualified() == qualified_name && e.name().overload == overload) return OperatorHandle(&e);
  return std::nullopt;
}

OperatorHandle Dispatcher::find_or_throw(std::string_view qualified_name, std::string_view overload) const {
  std::optional<OperatorHandle> op = find(qualified_name, overload);
  STRATA_CHECK(op.has_value(), "no operator named ", qualified_name, overload.empty() ? "" : ".", overload,
               " is registered");
  return *op;
}

std::vector<OperatorHandle> Dispatcher::ops() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<OperatorHandle> out;
  for (const OperatorEntry& e : entries_) out.emplace_back(&e);
  return out;
}

std::string Dispatcher::describe(const OperatorHandle& op, DispatchKey key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const KernelFunction& kernel = op.entry().kernels_[static_cast<int>(key)];
  if (kernel) return detail::str_cat("kernel ", kernel.name);
  const KernelFunction& fallback = fallbacks_[static_cast<int>(key)];
  return fallback ? detail::str_cat("fallback ", fallback.name) : std::string("(none)");
}

std::string Dispatcher::dump_table(const OperatorHandle& op) const {
  std::ostringstream out;
  out << op.str() << ": " << op.schema().text() << "\n";
  for (int k = 0; k < kNumDispatchKeys; ++k) {
    const auto key = static_cast<DispatchKey>(k);
    out << "  " << std::left << std::setw(9) << key_name(key) << describe(op, key) << "\n";
  }
  return out.str();
}

void Dispatcher::name_op(Error& e, const OperatorHandle& op) {
  if (e.op().empty()) e.set_op(op.name().qualified());
}

void Dispatcher::run_below_autograd(const OperatorHandle& op, DispatchKeySet keys, Stack& stack) {
  // Outside a handler that runs below Autograd, the call takes the Autograd key's handler after all,
  // which redispatches below itself; that is where aten::detach's wrapping lives (Note [Detach and the
  // interposer], ops/detach.h).
  if (!local_dispatch_keys().excluded.has(DispatchKey::Autograd) && op.entry().resolved(DispatchKey::Autograd)) {
    run(op, keys.add(DispatchKey::Autograd), stack);
    return;
  }
  const ExcludeKeyGuard below_autograd(DispatchKey::Autograd);
  run(op, keys, stack);
}

void Dispatcher::run_slow(const OperatorHandle& op, DispatchKeySet keys, Stack& stack) {
  if (keys.empty()) {
    Error e("no dispatch key is left to run (every key of the call is excluded on this thread)");
    name_op(e, op);
    throw e;
  }
  const DispatchKey key = keys.highest_priority();
  const BoxedKernelFn kernel = op.entry().resolved(key);
  if (!kernel) {
    Error e(detail::str_cat("Could not run '", op.name().qualified(), "' with arguments from the '",
                            key_name(key), "' backend: no kernel or fallback is registered at ", key_name(key),
                            " (keys ", keys.str(), ")"));
    name_op(e, op);
    throw e;
  }
  check_devices(op, keys, key, stack);
  if (std::ostream* out = dispatch_trace_stream()) {
    // One write per line, so lines from threads sharing the default stream (stderr) stay whole.
    const std::string line = detail::str_cat(std::string(static_cast<std::size_t>(2 * detail::dispatch_trace_depth()), ' '),
                                             op.str(), tensor_arguments(op, stack), " ", keys.str(), " -> ", key_name(key), ": ", singleton().describe(op, key), "\n");
    out->write(line.data(), static_cast<std::streamsize>(line.size()));
  }
  struct DepthGuard {
    DepthGuard() { ++detail::dispatch_trace_depth(); }
    ~DepthGuard() { --detail::dispatch_trace_depth(); }
  } depth;
  const ObservedStep observed(op, key, stack);
  try {
    kernel(op, keys, stack);
  } catch (Error& e) {
    name_op(e, op);
    throw;
  }
}

}  // namespace strata
