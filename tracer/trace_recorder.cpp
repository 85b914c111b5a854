// tracer/trace_recorder.cpp: record_program and TraceRecording (Note [Recording a program]): the
// Recorder entered over a program's forward, then over its backward, and each finished trace's node
// groups bound to what they read and make. The Recorder itself is recorder.cpp's.
#include "tracer/trace_recorder.h"

#include <algorithm>
#include <optional>

#include "autograd/grad.h"
#include "ops/functions.h"
#include "tracer/recorder.h"

namespace strata::tracer {

using detail::Recorder;

namespace {

// A node group's arguments: what its ops read that was made before it; its outputs: what it made that
// is read after it or returned (Note [What a trace's symbols are]).
void bind_node_groups(Trace& trace) {
  for (std::size_t i = 0; i < trace.symbols.size(); ++i) {
    BoundSymbol& group = trace.symbols[i];
    if (group.kind != BoundSymbol::Kind::Node) continue;
    std::vector<int> made, read;
    for_each_written(group, [&](int p) { made.push_back(p); });
    for_each_read(group, [&](int p) {
      if (std::find(made.begin(), made.end(), p) == made.end() && std::find(read.begin(), read.end(), p) == read.end())
        read.push_back(p);
    });
    std::vector<int> later;
    for (std::size_t j = i + 1; j < trace.symbols.size(); ++j) for_each_read(trace.symbols[j], [&](int p) { later.push_back(p); });
    later.insert(later.end(), trace.outputs.begin(), trace.outputs.end());
    for (int p : read) group.args.push_back({.kind = TraceArg::Kind::Proxy, .proxy = p});
    std::vector<int> outputs;
    for (int p : made)
      if (std::find(later.begin(), later.end(), p) != later.end() && std::find(outputs.begin(), outputs.end(), p) == outputs.end())
        outputs.push_back(p);
    for (int p : outputs) group.outputs.push_back({.kind = TraceArg::Kind::Proxy, .proxy = p});
  }
}

std::string sanitize(std::string_view name) {
  std::string out = "p";
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return out;
}

}  // namespace

RecordedProgram record_program(const TracedProgram& program, std::vector<TraceInput> inputs, std::string_view what) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    STRATA_CHECK(inputs[i].value.defined(), "record_program: input ", i, " ('", inputs[i].name, "') is an undefined tensor");
    for (std::size_t j = 0; j < i; ++j)
      STRATA_CHECK(inputs[j].name != inputs[i].name, "record_program: two inputs are named '", inputs[i].name, "'");
  }
  RecordedProgram result;
  result.forward.constructed_by = "strata's trace recorder: the forward of " + std::string(what);
  Recorder recorder(result.forward);
  std::vector<Tensor> values;
  for (const TraceInput& in : inputs) {
    result.forward.inputs.push_back(recorder.define_named(in.value, in.name));
    values.push_back(in.value);
  }
  {
    const ModeGuard mode(recorder);
    const FunctionModeGuard functions(recorder.functions);
    result.outputs = program(values);
  }
  for (const Tensor& out : result.outputs) {
    const int id = out.defined() ? recorder.find(out) : -1;
    STRATA_CHECK(!out.defined() || id >= 0, "record_program: an output of ", what,
                 " was not made by the program nor is one of its inputs");
    result.forward.outputs.push_back(id);
  }
  result.gradients.resize(inputs.size());

  std::vector<Tensor> roots, cotangents, wrt;
  std::vector<std::size_t> wrt_index;
  for (const Tensor& out : result.outputs)
    if (out.defined() && out.requires_grad()) {
      roots.push_back(out);
      cotangents.push_back(ones_like(out));
    }
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].value.requires_grad()) {
      wrt.push_back(inputs[i].value);
      wrt_index.push_back(i);
    }
  if (roots.empty() || wrt.empty()) {
    bind_node_groups(result.forward);
    return result;
  }

  Trace& backward = result.backward.emplace();
  backward.function_name = "backward_fn";
  backward.constructed_by = "strata's trace recorder: the backward of " + std::string(what);
  const std::size_t first_backward = result.forward.proxies.size();
  recorder.switch_to(backward);
  for (std::size_t i = 0; i < cotangents.size(); ++i)
    backward.cotangents.push_back(recorder.define_named(cotangents[i], "g" + std::to_string(i)));
  std::vector<Tensor> grads;
  {
    const ModeGuard mode(recorder);
    const FunctionModeGuard functions(recorder.functions);
    grads = autograd::grad(roots, wrt, cotangents, /*retain_graph=*/false, /*create_graph=*/false, /*allow_unused=*/true);
  }
  backward.outputs.assign(inputs.size(), -1);
  for (std::size_t k = 0; k < grads.size(); ++k) {
    result.gradients[wrt_index[k]] = grads[k];
    if (grads[k].defined()) backward.outputs[wrt_index[k]] = recorder.find(grads[k]);
  }
  // saved_for_backward: the forward's values the backward reads, in the order they were made.
  std::vector<int> saved;
  for (const BoundSymbol& sym : backward.symbols)
    for_each_read(sym, [&](int p) {
      if (static_cast<std::size_t>(p) < first_backward && std::find(saved.begin(), saved.end(), p) == saved.end()) saved.push_back(p);
    });
  for (int p : backward.outputs)  // a gradient that is a forward value passed through unchanged
    if (p >= 0 && static_cast<std::size_t>(p) < first_backward && std::find(saved.begin(), saved.end(), p) == saved.end())
      saved.push_back(p);
  std::sort(saved.begin(), saved.end());
  // Constants captured by the forward stay constants of the forward; the backward's own are its own.
  // A constant the forward captured stays a constant, which the backward holds too.
  const std::vector<int>& forward_constants = result.forward.constants;
  std::erase_if(saved, [&](int p) {
    const auto it = std::find(forward_constants.begin(), forward_constants.end(), p);
    if (it == forward_constants.end()) return false;
    backward.constants.push_back(p);
    backward.constant_values.push_back(result.forward.constant_values[static_cast<std::size_t>(it - forward_constants.begin())]);
    return true;
  });
  backward.inputs = saved;
  result.forward.saved_for_backward = saved;
  result.forward.has_backward = true;
  bind_node_groups(backward);
  result.forward.proxies = backward.proxies;  // one table for both: the backward's names extend the forward's
  return result;
}

struct TraceRecording::State {
  Trace trace;
  Recorder recorder{trace};
  std::optional<ModeGuard> mode;
  std::optional<FunctionModeGuard> functions;
};

TraceRecording::TraceRecording(std::string_view what) : state_(std::make_unique<State>()) {
  state_->trace.constructed_by = "strata's trace recorder: " + std::string(what);
  state_->mode.emplace(state_->recorder);
  state_->functions.emplace(state_->recorder.functions);
}

TraceRecording::~TraceRecording() = default;  // the guards leave the modes, innermost first

Trace TraceRecording::finish() {
  STRATA_CHECK(state_->mode, "TraceRecording::finish: called twice");
  state_->functions.reset();
  state_->mode.reset();
  bind_node_groups(state_->trace);
  return std::move(state_->trace);
}

std::vector<TraceInput> parameter_inputs(const nn::Module& module) {
  std::vector<TraceInput> out;
  for (const auto& [name, p] : module.named_parameters()) out.push_back({sanitize(name), p});
  return out;
}

}  // namespace strata::tracer
