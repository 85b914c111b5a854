// tracer/trace_recorder.h: records a C++ program over tensors into Thunder-style traces
// (tracer/program_trace.h): the forward as the program ran it, and the backward the autograd engine
// ran for it, with wrapper subclasses' __torch_dispatch__ unrolled into the ops their handlers ran.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../core/util/non_copyable.h"
#include "../nn/module.h"
#include "program_trace.h"

namespace strata::tracer {

// A program input and the name it has in the traces (a Python identifier).
struct TraceInput {
  std::string name;
  Tensor value;
};

// What record_program gives back: the traces, and what the eager run computed.
struct RecordedProgram {
  Trace forward;
  std::optional<Trace> backward;  // when an output requires grad
  std::vector<Tensor> outputs;
  std::vector<Tensor> gradients;  // one per input: its gradient, undefined where it has none
};

using TracedProgram = std::function<std::vector<Tensor>(std::span<const Tensor> inputs)>;

// Note [Recording a program]
// record_program runs `program` once on the inputs under a dispatch mode and a function mode that
// record what reaches them, then, if an output requires grad, runs autograd::grad from the outputs
// (each seeded with ones, the trace's cotangents) to the inputs that require grad under the same
// modes, so the backward trace holds the ops the engine ran, in its order, grouped by the node it was
// evaluating (autograd::current_autograd_node). Nothing accumulates into any .grad.
//  - A value is known by its TensorImpl, or by its data and geometry (a saved output comes back to
//    the backward as a shallow copy of itself). The recorder holds every value it names until it
//    ends, so no address is reused by another value meanwhile (a tensor made outside any op, such as
//    a subclass's scale computed on the host, would otherwise take a dead value's name). Under a
//    dispatch mode every tensor already counts as subclass-like (gradients accumulate out of place),
//    so these references change no op that record_program runs; in a TraceRecording around a
//    backward(), AccumulateGrad may copy a gradient it would otherwise have taken over.
//  - Every tensor an op returns is a new value (`t7`), except an argument returned as itself (an
//    in-place op's self keeps its name). A tensor the program used but neither took as an input nor
//    made is a captured constant (`c0`), held by the trace for replay.
//  - An op on a wrapper subclass is recorded as a Subclass symbol: the recorder re-enters itself and
//    hands the op to the subclass (Note [Seeing inside a subclass's handler]), so the ops the handler
//    runs on the inner tensors are its sub-symbols, between flatten and unflatten symbols. Autograd
//    sits above the interposer, so this unrolling happens after the forward/backward split, in both
//    traces: a handler may call ops with no derivative (a scaled matmul) and the program still trains.
//  - The backward trace's inputs are the forward values it reads (saved_for_backward, in the order
//    they were made) and the cotangents; its outputs one gradient per program input (None where the
//    input does not require grad). The forward trace returns the outputs and saved_for_backward.
// The program must not start another thread that runs ops, nor run a backward of its own.
RecordedProgram record_program(const TracedProgram& program, std::vector<TraceInput> inputs, std::string_view what);

// Records, while it lives, every op and front-end call this thread makes into one trace, as
// record_program does but without inputs: every tensor used that the recorded calls did not make is
// a captured constant, and an autograd pass run meanwhile shows as node groups. finish() leaves the
// modes and gives the trace (to print or export; it has no outputs). Guards entered after it must
// be left before it.
class TraceRecording : NonCopyable {
 public:
  explicit TraceRecording(std::string_view what);
  ~TraceRecording();
  Trace finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The parameters of `module` as trace inputs, named as Python identifiers: "0.weight" -> "p0_weight".
std::vector<TraceInput> parameter_inputs(const nn::Module& module);

}  // namespace strata::tracer
