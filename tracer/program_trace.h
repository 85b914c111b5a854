// tracer/program_trace.h: program traces in the manner of Lightning Thunder. A C++ callable over
// tensors is recorded (tracer/trace_recorder.h) into a forward trace and, from the autograd graph it
// built, a backward trace: named values (proxies `t0`, `t1`, ...) and bound symbols, each a call with
// its arguments and outputs, holding the calls it ran as sub-symbols. This file is the data, its
// Python-like printing, its JSON (docs/traces.md) and the interpreter that replays a trace.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../core/interpose/interposer.h"

namespace strata::tracer {

// A named value of a trace: an input, a captured tensor, or the result of a symbol.
struct Proxy {
  std::string name;  // "x", "p0_weight", "t3", "g0"
  std::string type;  // "cpu f32[8, 16]", "LoggingTensor[cpu f32[8, 16]]"
  ScalarType dtype = ScalarType::Float32;
  std::vector<std::int64_t> sizes;
  std::string subclass;  // the wrapper subclass's type name, or empty for a plain tensor
};

// One argument or output slot of a symbol: a proxy, a list of proxies (-1: None), or a constant.
struct TraceArg {
  enum class Kind { Proxy, ProxyList, Constant };
  Kind kind = Kind::Constant;
  int proxy = -1;
  std::vector<int> proxies;
  IValue constant;
};

// Note [What a trace's symbols are]
// Every symbol is a call that ran, with the symbols it ran inside it, as Thunder's BoundSymbol holds
// its subsymbols. A trace's symbols are, outermost first:
//  - Function: a front-end call as the user wrote it (torch.nn.functional.linear), seen by a function
//    mode; its sub-symbols are the aten ops it dispatched.
//  - Node: in a backward trace, one autograd node (AddmmBackward0) with the ops the engine ran for it
//    (its formula, validate_outputs' sum_to, the accumulation of its gradients).
//  - Subclass: an aten op on a wrapper subclass (LoggingTensor.aten.addmm): sub-symbols flatten each
//    subclass argument, then the ops its __torch_dispatch__ ran on the inner tensors (each headed
//    "[k/N] unrolled __torch_dispatch__ of ..."), then unflatten each subclass result.
//  - Op: an aten op on plain tensors, the leaves; replaying a trace runs exactly these.
//  - Flatten / Unflatten: a subclass's __tensor_flatten__ / __tensor_unflatten__.
// Arguments are what the call received; a Node's are the values its ops read that were made outside
// it, and its outputs the values it made that are read after it (or returned).
struct BoundSymbol {
  enum class Kind { Function, Node, Subclass, Op, Flatten, Unflatten };
  Kind kind = Kind::Op;
  std::string name;    // "torch.nn.functional.linear", "AddmmBackward0", "aten.add.Tensor"
  std::string header;  // a comment line printed above the symbol, or empty
  std::vector<TraceArg> args;
  std::vector<std::pair<std::string, TraceArg>> kwargs;
  std::vector<TraceArg> outputs;  // one per tensor-like return (a list for a Tensor[] return)
  std::vector<BoundSymbol> subsymbols;
  OperatorHandle op;  // Op and Subclass: the op that ran
  // Flatten / Unflatten: the subclass, its inner tensors' names and context, and (Unflatten) the
  // wrapper's outer sizes and strides, which __tensor_unflatten__ takes.
  IntrusivePtr<TensorSubclass> subclass;
  std::vector<std::string> inner_names;
  std::shared_ptr<const void> context;
  std::vector<std::int64_t> outer_sizes, outer_strides;
};

std::string_view kind_name(BoundSymbol::Kind kind);  // "function", "node", "subclass", "op", ...

// A recorded program, printed as a Python function (to_python): its inputs in order, its symbols,
// and its outputs (-1: None).
struct Trace {
  std::string function_name = "computation";  // "computation", "backward_fn"
  std::string constructed_by;                 // the header comment: what made the trace
  std::vector<Proxy> proxies;                 // every value of the trace, indexed by TraceArg::proxy
  std::vector<int> inputs;                    // program inputs (forward) or saved tensors (backward)
  std::vector<int> cotangents;                // backward: the output gradients it starts from
  std::vector<int> constants;                 // tensors the program used without taking them as inputs
  std::vector<Tensor> constant_values;        // their values, held for replay
  std::vector<BoundSymbol> symbols;
  std::vector<int> outputs;         // forward: the program's outputs; backward: one gradient per input
  std::vector<int> saved_for_backward;  // forward only: what its backward trace reads
  bool has_backward = false;            // forward only: a backward trace was recorded from it
};

// The trace as Thunder prints one: a header comment, imports, `def computation(x, ...)`, a comment
// per input with its type, a line per top-level symbol with its outputs' types, sub-symbols as
// indented comments, and a return.
std::string to_python(const Trace& trace);
// The trace as JSON (docs/traces.md, format "strata.trace", version 1).
nlohmann::ordered_json to_json(const Trace& trace);

// Runs the trace's ops on `inputs` (for a backward trace: the saved tensors, then the cotangents),
// with grad mode off, and returns its outputs (an undefined Tensor for None): for a forward trace the
// outputs then the saved tensors, for a backward trace the gradients. Each input must have the type
// it had when recorded; an error names the trace, the input and both types.
std::vector<Tensor> run_trace(const Trace& trace, std::span<const Tensor> inputs);

// A symbol's arguments as printed, with the parentheses: "(t2, x, t1, beta=1, alpha=1)".
std::string render_arguments(const Trace& trace, const BoundSymbol& sym);
// A proxy's name: "t3", or "None" for -1.
const std::string& proxy_name(const Trace& trace, int p);

// Calls fn(proxy) for each value the symbol reads (its arguments) or writes (its outputs), its
// sub-symbols' included, in order; None is skipped, and a value is visited as often as it appears.
void for_each_read(const BoundSymbol& sym, const std::function<void(int)>& fn);
void for_each_written(const BoundSymbol& sym, const std::function<void(int)>& fn);

// Thunder's type string: "cpu f32[8, 16]", a wrapper subclass's as "LoggingTensor[cpu f32[8, 16]]".
std::string trace_type(const Tensor& t);

}  // namespace strata::tracer
