// tracer/recorder.h: the mode that records what reaches it into a Trace (Note [Recording a
// program], trace_recorder.h): each op and front-end call a symbol, each tensor it meets a named value.
// Internal to the tracer: record_program and TraceRecording (trace_recorder.cpp) drive it.
#pragma once

#include <compare>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../core/interpose/function_mode.h"
#include "program_trace.h"

namespace strata::autograd {
class Node;
}  // namespace strata::autograd

namespace strata::tracer::detail {

// A storage-backed tensor's value: its data and geometry. A saved output unpacked in the backward is
// a new TensorImpl over the same data with the same geometry, and is the same value.
struct ViewKey {
  const void* data;
  ScalarType dtype;
  std::vector<std::int64_t> sizes, strides;
  auto operator<=>(const ViewKey&) const = default;
};

class Recorder final : public DispatchMode {
 public:
  explicit Recorder(Trace& trace) : trace_(&trace) {}
  std::string_view name() const override { return "TraceRecorder"; }
  void dispatch(const OperatorHandle& op, Stack& stack) override;
  void record_function(FunctionCall& call);

  // Records into `trace` from now on (the backward, after the forward), keeping every value's name.
  void switch_to(Trace& trace) {
    trace.proxies = std::move(trace_->proxies);
    trace_ = &trace;
    group_node_ = nullptr;
  }
  // A value named by the caller (an input, a cotangent).
  int define_named(const Tensor& t, std::string name) { return define(t, std::move(name)); }
  int find(const Tensor& t) const;
  Trace& trace() { return *trace_; }

 private:
  // The function-level half: front-end calls, each a Function symbol around what it dispatched.
  class Functions final : public FunctionMode {
   public:
    explicit Functions(Recorder& r) : recorder_(r) {}
    std::string_view name() const override { return "TraceRecorder"; }
    void torch_function(FunctionCall& call) override { recorder_.record_function(call); }

   private:
    Recorder& recorder_;
  };

 public:
  Functions functions{*this};

 private:
  // The symbol list new symbols go to: the innermost open symbol's, else the trace's (in a backward,
  // the current node's group).
  std::vector<BoundSymbol>& target();
  // Appends `sym` where target() says and opens it; the returned index path stays valid while open.
  BoundSymbol& open(BoundSymbol sym);
  void close() { open_.pop_back(); }

  int define(const Tensor& t, std::string name);
  int fresh(const Tensor& t) { return define(t, "t" + std::to_string(next_t_++)); }
  TraceArg capture(const IValue& v);
  void capture_args(BoundSymbol& sym, const OperatorHandle& op, const Stack& stack, std::size_t base);
  // The returns on the stack as outputs: each tensor a new value unless it is one of `inputs`, or
  // (`keep_known`: a subclass op, whose plain results its handler's ops made) a value already named.
  void capture_returns(BoundSymbol& sym, const OperatorHandle& op, const Stack& stack,
                       const std::vector<const TensorImpl*>& inputs, bool keep_known = false);
  void record_subclass_op(const OperatorHandle& op, Stack& stack, std::size_t base);

  Trace* trace_;
  std::vector<BoundSymbol*> open_;  // the open symbols, outermost first
  std::unordered_map<const TensorImpl*, std::pair<int, const void*>> by_impl_;  // proxy, data pointer
  std::map<ViewKey, int> by_view_;
  int next_t_ = 0;
  const autograd::Node* group_node_ = nullptr;  // the node whose group the trace's last symbol is
  std::vector<Tensor> held_;  // every named value, alive until the recording ends
};

}  // namespace strata::tracer::detail
