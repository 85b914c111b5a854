// modes/profiler.h: PyTorch's torch.profiler in C++: a guard that records, on every thread, each op
// called through the dispatcher ("aten::addmm"), record_function scopes, module calls
// ("nn.Module: Linear_0") and autograd nodes in backward ("autograd::engine::evaluate_function:
// AddmmBackward0"), nested as they ran; key_averages() and table() summarize them as PyTorch's
// key_averages().table() does, and chrome_trace() writes them as export_chrome_trace() does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "../core/util/non_copyable.h"
#include "../ops/record_function.h"

namespace strata::profiler {

// PyTorch's `with record_function("my_scope"):` (the profiler::_record_function_* ops), open for the
// object's lifetime.
class record_function : public ops::RecordFunctionScope {
 public:
  explicit record_function(std::string_view name) : RecordFunctionScope(name) {}
};

struct ProfilerOptions {
  bool record_shapes = false;  // each op's input shapes and dtypes ("Input Dims", "Input type")
  bool record_modules = true;  // an event per nn::Module call
};

// The event categories of PyTorch's Chrome trace.
enum class EventKind { Op, UserScope, Module, Autograd };
std::string_view category_name(EventKind kind);  // "cpu_op", "user_annotation", "python_function", "cpu_op"

struct Event {
  std::string name;
  EventKind kind = EventKind::Op;
  std::int64_t start_ns = 0;  // std::chrono::steady_clock, since its epoch
  std::int64_t end_ns = 0;
  std::int64_t thread = 0;  // the OS thread id
  std::int64_t parent = -1;  // index of the event this one ran inside, on the same thread; -1: none
  std::int64_t self_ns = 0;  // end - start, minus the children's end - start
  // With record_shapes, per argument of an op: its sizes ([] for a non-tensor) and type
  // ("float", "long int", "Scalar", "ScalarList", "TensorList", "" for None), as PyTorch records them.
  std::vector<std::vector<std::int64_t>> input_shapes;
  std::vector<std::string> input_types;
  std::int64_t duration_ns() const { return end_ns - start_ns; }
};

// One row of key_averages(): the events of one name (and input shapes, when grouped by them).
struct EventAverage {
  std::string key;
  std::string input_shapes;  // "[[5, 16], [16, 32]]" when grouped by input shape, else ""
  std::int64_t count = 0;
  std::int64_t self_cpu_time_total_ns = 0;
  std::int64_t cpu_time_total_ns = 0;
  double cpu_time_avg_ns() const { return count ? static_cast<double>(cpu_time_total_ns) / static_cast<double>(count) : 0; }
};

// Rows in order of each key's first event (PyTorch's order when not sorted).
std::vector<EventAverage> key_averages(const std::vector<Event>& events, bool group_by_input_shape = false);
// PyTorch's key_averages().table(sort_by, row_limit): sort_by is empty (first-seen order),
// "self_cpu_time_total", "cpu_time_total", "cpu_time" (the average) or "count", largest first;
// row_limit < 0: every row. Throws strata::Error for another sort key.
std::string table(std::vector<EventAverage> rows, std::string_view sort_by = "", std::int64_t row_limit = 100);
// PyTorch's export_chrome_trace document: {"schemaVersion":1, "traceEvents":[{"ph":"X", "cat",
// "name", "pid", "tid", "ts" and "dur" in microseconds, "args"}...]}.
nlohmann::ordered_json chrome_trace(const std::vector<Event>& events);

// Note [One profiler at a time]
// Profiling is process-wide, as PyTorch's is: a Profiler records every thread's ops from its
// construction to stop() (or its destruction), and a second Profiler while one runs is an error. The
// recorder it feeds lives for the whole process, so a thread still inside an op when the profile
// stops finishes it harmlessly (its event ends at the stop). Events are recorded under one mutex;
// each thread keeps its own stack of open events, so an event's parent is the innermost event open
// on its thread, and self time (total minus the children's totals) never mixes threads.
class Profiler : NonCopyable {
 public:
  explicit Profiler(ProfilerOptions options = {});
  ~Profiler();

  // Ends the recording (idempotent); events() and the rest read what was recorded until then.
  void stop();
  const std::vector<Event>& events();  // stops first
  std::vector<EventAverage> key_averages(bool group_by_input_shape = false) { return profiler::key_averages(events(), group_by_input_shape); }
  nlohmann::ordered_json chrome_trace() { return profiler::chrome_trace(events()); }

 private:
  bool running_ = true;
  std::uint64_t module_pre_hook_ = 0;
  std::uint64_t module_hook_ = 0;
  std::vector<Event> events_;
};

}  // namespace strata::profiler
