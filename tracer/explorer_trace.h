// tracer/explorer_trace.h: the dispatch trace (core/dispatch/dispatch_trace.h) read back as steps: a
// stream buffer the recorder traces into, which parses each line as it is written into a tree of
// dispatch steps ("aten.addmm.default(...) [Autograd, Python, CPU] -> Autograd: fallback autograd")
// and the notes written inside them ("autograd: recorded AddmmBackward0", "interposer: handed to the
// dispatch mode DebugMode"). Internal to the explorer (explorer_record.cpp).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <streambuf>
#include <string>
#include <vector>

namespace strata::tracer::detail {

// One dispatch step: an op at one key. `parent` is the step it ran inside (a redispatch of the same
// op at a lower key, or an op a kernel or handler called).
struct TraceStep {
  std::string op;       // "aten.addmm.default"
  std::string args;     // "(f32[32], f32[8, 16], f32[16, 32])"
  std::string keys;     // "[Autograd, Python, CPU]"
  std::string key;      // "Autograd"
  std::string handler;  // "fallback autograd", "kernel addmm"
  std::optional<std::size_t> parent;
  std::vector<std::string> notes;
};

// Collects the steps of the lines written to it. `on_note(step, text)` runs for each note as it is
// parsed (while the op it is about still runs), with the index of the step it belongs to.
class TraceSteps final : public std::streambuf {
 public:
  using NoteFn = std::function<void(std::size_t step, const std::string& text)>;
  explicit TraceSteps(NoteFn on_note) : on_note_(std::move(on_note)) {}
  const std::vector<TraceStep>& steps() const { return steps_; }

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;

 private:
  void line(const std::string& text);
  NoteFn on_note_;
  std::string pending_;
  std::vector<TraceStep> steps_;
  std::vector<std::size_t> open_;  // the latest step at each depth
};

}  // namespace strata::tracer::detail
