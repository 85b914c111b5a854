// modes/profiler.cpp: the recorder behind Profiler: a dispatch observer (ops and engine scopes), a
// record-function observer (user scopes) and global module hooks, all writing one event list
// (Note [One profiler at a time]).
#include "modes/profiler.h"

#include <cxxabi.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <typeinfo>

#include "core/dispatch/dispatch_observer.h"
#include "core/dispatch/ivalue.h"
#include "core/dispatch/operator_entry.h"
#include "core/tensor.h"
#include "nn/module.h"
#include "nn/module_hooks.h"

namespace strata::profiler {

namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::int64_t os_thread_id() {
  thread_local const auto id = static_cast<std::int64_t>(::syscall(SYS_gettid));
  return id;
}

// PyTorch's names for a tensor's element type in "Input type" (its C++ type names).
std::string_view type_text(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "bool";
    case ScalarType::Int64: return "long int";
    case ScalarType::Float32: return "float";
    case ScalarType::Float64: return "double";
    case ScalarType::Int8: return "signed char";
    case ScalarType::Float8_e4m3fn: return "c10::Float8_e4m3fn";
    case ScalarType::Float16: return "c10::Half";
    case ScalarType::BFloat16: return "c10::BFloat16";
  }
  return "";
}

void record_inputs(std::span<const IValue> args, Event& e) {
  for (const IValue& v : args) {
    std::vector<std::int64_t> dims;
    std::string type;
    if (v.is_tensor()) {
      const Tensor& t = v.to_tensor();
      if (t.defined()) {
        dims.assign(t.sizes().begin(), t.sizes().end());
        type = type_text(t.dtype());
      }
    } else if (v.is_tensor_list()) {
      type = "TensorList";
    } else if (v.is_scalar()) {
      type = "Scalar";
    } else if (v.tag() == IValue::Tag::IntList) {
      type = "ScalarList";
    }
    e.input_shapes.push_back(std::move(dims));
    e.input_types.push_back(std::move(type));
  }
}

// A module's class name ("Linear"), as its repr starts; from the type's demangled name when that is
// a plain class name, since a repr formats every child (the profiled call would pay for it).
std::string module_type(const nn::Module& m) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(typeid(m).name(), nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : "";
  std::free(demangled);
  if (!name.empty() && name.find_first_of("<>() ") == std::string::npos) return name.substr(name.rfind(':') + 1);
  const std::string repr = m.repr();
  return repr.substr(0, repr.find('('));
}

class Recorder final : public DispatchObserver, public ops::RecordFunctionObserver {
 public:
  void start(const ProfilerOptions& options) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++generation_;
    active_ = true;
    options_ = options;
    events_.clear();
    module_names_.clear();
    module_counts_.clear();
  }
  std::vector<Event> stop() {
    const std::int64_t t = now_ns();
    std::lock_guard<std::mutex> lock(mutex_);
    active_ = false;
    for (Event& e : events_)
      if (e.end_ns == 0) e.end_ns = t;  // still open on some thread
    return std::move(events_);
  }
  bool record_modules() {
    std::lock_guard<std::mutex> lock(mutex_);
    return options_.record_modules;
  }

  void on_op_enter(const OperatorHandle& op, std::span<const IValue> args) override {
    Event e;
    e.name = op.name().qualified();
    bool shapes = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      shapes = options_.record_shapes;
    }
    if (shapes) record_inputs(args, e);
    open(std::move(e), nullptr);
  }
  void on_op_exit() override { close(nullptr); }
  void on_scope_enter(std::string_view name) override { open(Event{std::string(name), EventKind::Autograd}, nullptr); }
  void on_scope_exit() override { close(nullptr); }
  void on_enter(const ops::RecordFunction& r) override { open(Event{std::string(r.name()), EventKind::UserScope}, &r); }
  void on_exit(const ops::RecordFunction& r) override { close(&r); }

  void module_enter(nn::Module& m) {
    std::string name;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = module_names_.find(&m);
      if (it == module_names_.end()) {
        // PyTorch's "nn.Module: Linear_0": the type, and how many modules of that type came before.
        const std::string type = module_type(m);
        it = module_names_.emplace(&m, "nn.Module: " + type + "_" + std::to_string(module_counts_[type]++)).first;
      }
      name = it->second;
    }
    open(Event{std::move(name), EventKind::Module}, &m);
  }
  void module_exit(nn::Module& m) { close(&m); }

 private:
  // This thread's open events: the index of each, and what closes it (null: the next close without
  // a key; else the scope or module that opened it).
  struct Open {
    std::size_t index;
    const void* key;
  };
  struct ThreadState {
    std::uint64_t generation = 0;
    std::vector<Open> open;
  };
  static ThreadState& thread_state() {
    thread_local ThreadState state;
    return state;
  }

  void open(Event e, const void* key) {
    ThreadState& tls = thread_state();
    e.thread = os_thread_id();
    std::lock_guard<std::mutex> lock(mutex_);
    if (!active_) return;
    if (tls.generation != generation_) tls = ThreadState{generation_, {}};
    e.parent = tls.open.empty() ? -1 : static_cast<std::int64_t>(tls.open.back().index);
    tls.open.push_back(Open{events_.size(), key});
    events_.push_back(std::move(e));
    events_.back().start_ns = now_ns();
  }
  void close(const void* key) {
    const std::int64_t t = now_ns();
    ThreadState& tls = thread_state();
    std::lock_guard<std::mutex> lock(mutex_);
    if (!active_ || tls.generation != generation_) return;
    // The innermost event this closes; events opened inside it and left open end with it.
    for (std::size_t i = tls.open.size(); i-- > 0;) {
      if (tls.open[i].key != key) continue;
      for (std::size_t j = i; j < tls.open.size(); ++j) events_[tls.open[j].index].end_ns = t;
      tls.open.resize(i);
      return;
    }
  }

  std::mutex mutex_;
  bool active_ = false;
  std::uint64_t generation_ = 0;
  ProfilerOptions options_;
  std::vector<Event> events_;
  std::map<const nn::Module*, std::string> module_names_;
  std::map<std::string, int> module_counts_;
};

std::atomic<bool> profiling{false};  // a Profiler is running (Note [One profiler at a time])

Recorder& recorder() {
  static Recorder* r = new Recorder();  // never destroyed: a late thread may still close an event
  return *r;
}

void compute_self_times(std::vector<Event>& events) {
  for (Event& e : events) e.self_ns = e.duration_ns();
  for (const Event& e : events)
    if (e.parent >= 0) events[static_cast<std::size_t>(e.parent)].self_ns -= e.duration_ns();
}

}  // namespace

std::string_view category_name(EventKind kind) {
  switch (kind) {
    case EventKind::Op: return "cpu_op";
    case EventKind::UserScope: return "user_annotation";
    case EventKind::Module: return "python_function";
    case EventKind::Autograd: return "cpu_op";
  }
  return "";
}

Profiler::Profiler(ProfilerOptions options) {
  STRATA_CHECK(!profiling.exchange(true), "a profiler is already running (one at a time, process-wide)");
  Recorder& r = recorder();
  try {
    set_dispatch_observer(&r);  // throws while another observer is installed
  } catch (...) {
    profiling.store(false);
    throw;
  }
  r.start(options);
  ops::add_record_function_observer(&r);
  if (options.record_modules) {
    module_pre_hook_ = nn::register_module_forward_pre_hook([](nn::Module& m, const Tensor&) -> std::optional<Tensor> {
                         recorder().module_enter(m);
                         return std::nullopt;
                       }).id();
    module_hook_ = nn::register_module_forward_hook(
                       [](nn::Module& m, const Tensor&, const Tensor&) -> std::optional<Tensor> {
                         recorder().module_exit(m);
                         return std::nullopt;
                       },
                       /*always_call=*/true)
                       .id();
  }
}

Profiler::~Profiler() { stop(); }

void Profiler::stop() {
  if (!running_) return;
  running_ = false;
  if (module_pre_hook_) nn::RemovableHandle(module_pre_hook_).remove();
  if (module_hook_) nn::RemovableHandle(module_hook_).remove();
  Recorder& r = recorder();
  ops::remove_record_function_observer(&r);
  events_ = r.stop();
  set_dispatch_observer(nullptr);
  profiling.store(false);
  compute_self_times(events_);
}

const std::vector<Event>& Profiler::events() {
  stop();
  return events_;
}

}  // namespace strata::profiler
