// tracer/explorer_record.cpp: ExplorerRecorder (Note [What the explorer records], explorer.h): the
// modes, trace and hooks it holds while recording, and the record they give.
#include "tracer/explorer.h"

#include <algorithm>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>
#include <unordered_map>

#include "autograd/accumulate_grad.h"
#include "autograd/formula_node.h"
#include "autograd/hooks.h"
#include "core/dispatch/dispatch_trace.h"
#include "core/dispatch/local_dispatch_keys.h"
#include "modes/debug_mode.h"
#include "modes/flop_counter.h"
#include "modes/profiler.h"
#include "tracer/explorer_trace.h"

namespace strata::tracer {

namespace {
constexpr std::string_view kHandedToDebugMode = "interposer: handed to the dispatch mode DebugMode";
constexpr std::string_view kDeclinedByDebugMode = "interposer: declined by the dispatch mode DebugMode";

DebugModeOptions debug_options() {
  DebugModeOptions o;
  o.record_torchfunction = true;
  o.record_nn_module = true;
  o.record_faketensor = true;
  o.record_ids = true;
  return o;
}

// An op the DebugMode was handed, at the moment it was: where in the call tree it goes.
struct Handoff {
  std::size_t step;
  std::size_t calls_before;  // DebugMode's calls recorded by then
  int depth;                 // DebugMode's depth then
  std::size_t phase;
  int ran_by;
  bool claimed = false;   // DebugMode recorded it
  bool declined = false;  // DebugMode declined it (a DebugModeSubclass's op, recorded without a step)
};

struct OpFacts {  // per DebugMode call
  std::optional<std::size_t> step;
  std::optional<std::int64_t> flops;
  int ran_by = -1;
};

struct NodeFacts {
  std::string name;
  std::uint64_t seq = 0;
  std::vector<std::size_t> next;
  nlohmann::ordered_json saved = nlohmann::ordered_json::array();
  nlohmann::ordered_json leaf;  // an AccumulateGrad's variable: [dtype, sizes]
  std::optional<std::size_t> forward;
  std::optional<int> ran;  // its place in the engine's order
};
}  // namespace

struct ExplorerRecorder::Impl {
  explicit Impl(const ExplorerOptions& o)
      : options(o), mode(with_before_op(debug_options())), steps([this](std::size_t s, const std::string& t) { note(s, t); }) {
    phases.push_back(o.phase);
    if (o.profile) profiler.emplace();
    trace_guard.emplace(trace_stream);
    guard.emplace(mode);
    hooks.emplace(
        [this](const DispatchHookCall& c) {
          after_op(c);
          return nlohmann::ordered_json();
        },
        DispatchHook(), /*reads_args=*/false);
  }
  DebugModeOptions with_before_op(DebugModeOptions o) {
    o.before_op = [this](const OperatorHandle& op, std::span<const IValue> args, std::size_t call) { before_op(op, args, call); };
    return o;
  }

  void note(std::size_t step, const std::string& text) {
    if (text == kHandedToDebugMode) {
      handoffs.push_back({step, mode.logs().size(), mode.call_depth(), phase, running.empty() ? -1 : running.back()});
      handoff_of_step[step] = handoffs.size() - 1;
    } else if (text == kDeclinedByDebugMode) {
      if (auto it = handoff_of_step.find(step); it != handoff_of_step.end()) handoffs[it->second].declined = true;
    }
  }

  void before_op(const OperatorHandle& op, std::span<const IValue> args, std::size_t call) {
    if (facts.size() <= call) facts.resize(call + 1);
    OpFacts& f = facts[call];
    if (!handoffs.empty() && !handoffs.back().claimed) {
      handoffs.back().claimed = true;
      f.step = handoffs.back().step;
    }
    f.flops = registered_flops(op, args.data());
    f.ran_by = running.empty() ? -1 : running.back();
    open_calls.emplace_back(call, op.index());
    auto& names = arg_names[mode.logs()[call].name];
    if (names.empty())
      for (const auto& a : op.schema().arguments()) names.push_back(a.name);
    for (const IValue& v : args) {
      if (v.is_tensor()) discover_from(v.to_tensor());
      else if (v.is_tensor_list())
        for (const Tensor& t : v.to_tensor_list()) discover_from(t);
    }
  }
  void after_op(const DispatchHookCall& c) {
    while (!open_calls.empty() && open_calls.back().second != c.op.index()) open_calls.pop_back();
    if (open_calls.empty()) return;
    const std::size_t call = open_calls.back().first;
    open_calls.pop_back();
    for (std::size_t i = 0; i < c.num_returns; ++i)
      if (c.returns[i].is_tensor() && c.returns[i].to_tensor().defined()) produced_by[c.returns[i].to_tensor().impl()] = call;
  }

  void discover_from(const Tensor& t) {
    if (!t.defined()) return;
    autograd::Node* fn = t.grad_fn();
    if (!fn || node_index.count(fn)) return;
    const std::size_t root = discover(fn);
    if (auto it = produced_by.find(t.impl()); it != produced_by.end()) nodes[root].forward = it->second;
  }
  // Numbers `fn` and every node it leads to that is new, and hooks each of them.
  std::size_t discover(autograd::Node* fn) {
    std::vector<autograd::Node*> fresh{fn};
    node_index.emplace(fn, nodes.size());
    nodes.emplace_back();
    for (std::size_t i = 0; i < fresh.size(); ++i)
      for (const autograd::Edge& e : fresh[i]->next_edges())
        if (e.valid() && node_index.emplace(e.function.get(), nodes.size()).second) {
          nodes.emplace_back();
          fresh.push_back(e.function.get());
        }
    const std::size_t first_held = held.size();
    for (autograd::Node* n : fresh) {
      const std::size_t idx = node_index.at(n);
      NodeFacts& facts_of = nodes[idx];
      facts_of.name = std::string(n->name());
      facts_of.seq = n->sequence_nr();
      for (const autograd::Edge& e : n->next_edges())
        if (e.valid()) facts_of.next.push_back(node_index.at(e.function.get()));
      held.emplace_back(n);
      if (const auto* acc = dynamic_cast<const autograd::AccumulateGrad*>(n); acc && acc->variable().defined())
        facts_of.leaf = {std::string(dtype_shorthand(acc->variable().dtype())), acc->variable().sizes().vec()};
      const int i = static_cast<int>(idx);
      handles.push_back(n->register_prehook([this, i](const std::vector<Tensor>&) -> std::optional<std::vector<Tensor>> {
        nodes[static_cast<std::size_t>(i)].ran = next_ran++;
        running.push_back(i);
        return std::nullopt;
      }));
      handles.push_back(n->register_hook([this](const std::vector<Tensor>&, const std::vector<Tensor>&) -> std::optional<std::vector<Tensor>> {
        if (!running.empty()) running.pop_back();
        return std::nullopt;
      }));
    }
    read_saved(first_held);
    return node_index.at(fn);
  }

  // What each node saved, read while the nodes still hold it (before the backward releases it): a
  // node is found while its op runs, before its saved outputs are stored.
  // Unpacking a saved output runs a detach: below the Python key and traced into nothing, so that
  // neither the record nor the program's ops see it.
  void read_saved(std::size_t from = 0) {
    std::ostringstream unseen;
    const DispatchTraceGuard quiet(unseen);
    const ExcludeKeyGuard below_python(DispatchKey::Python);
    for (std::size_t i = from; i < held.size(); ++i) {
      const auto* f = dynamic_cast<const autograd::FormulaNode*>(held[i].get());
      if (!f) continue;
      const auto saved = f->saved_sizes();
      if (saved.empty()) continue;
      NodeFacts& n = nodes[node_index.at(held[i].get())];
      n.saved = nlohmann::ordered_json::array();
      for (const auto& [name, sizes] : saved) n.saved.push_back({name, sizes});
    }
  }
  void stop() {
    read_saved();
    hooks.reset();
    guard.reset();
    trace_guard.reset();
    for (RemovableHandle& h : handles) h.remove();
    if (profiler) events = profiler->events();
    profiler.reset();
    held.clear();
  }
  nlohmann::ordered_json record() const;

  ExplorerOptions options;
  DebugMode mode;
  detail::TraceSteps steps;
  std::ostream trace_stream{&steps};
  std::optional<profiler::Profiler> profiler;
  std::optional<DispatchTraceGuard> trace_guard;
  std::optional<DebugMode::Guard> guard;
  std::optional<DebugMode::HooksGuard> hooks;
  std::vector<std::string> phases;
  std::size_t phase = 0;
  std::vector<std::pair<std::size_t, std::size_t>> phase_starts{{0, 0}};  // (first DebugMode call, phase)
  std::vector<Handoff> handoffs;
  std::unordered_map<std::size_t, std::size_t> handoff_of_step;
  std::vector<OpFacts> facts;
  std::vector<std::pair<std::size_t, std::size_t>> open_calls;  // (call, op index) between before and after
  std::map<std::string, std::vector<std::string>> arg_names;
  std::unordered_map<const TensorImpl*, std::size_t> produced_by;
  std::unordered_map<const autograd::Node*, std::size_t> node_index;
  std::vector<NodeFacts> nodes;
  std::vector<RemovableHandle> handles;
  std::vector<autograd::NodePtr> held;  // every node found, alive until the record is made
  std::vector<int> running;
  int next_ran = 0;
  std::vector<profiler::Event> events;
  bool finished = false;
};

// The record (docs/explorer.md): DebugMode's calls with the ops it was handed but did not record put
// where they ran, each op's facts, the trace's steps, the nodes and the profiler's events. Steps and
// events are arrays, not objects: a step of 10,000 ops has 30,000 steps, and the keys would double them.
nlohmann::ordered_json ExplorerRecorder::Impl::record() const {
  using json = nlohmann::ordered_json;
  const std::vector<DebugCall>& logs = mode.logs();
  std::vector<std::size_t> new_index(logs.size());
  json calls = json::array();
  std::vector<int> depths;  // of each call written
  auto phase_of = [&](std::size_t call) {
    std::size_t p = 0;
    for (const auto& [first, ph] : phase_starts)
      if (first <= call) p = ph;
    return p;
  };
  auto parent_at = [&](int depth) -> json {
    for (std::size_t i = depths.size(); i-- > 0;)
      if (depths[i] < depth) return i;
    return nullptr;
  };
  auto write_unrecorded = [&](const Handoff& h) {
    const detail::TraceStep& s = steps.steps()[h.step];
    std::string name = s.op;  // "aten.addmm.default" as DebugMode names it: "aten::addmm"
    if (const std::size_t dot = name.find('.'); dot != std::string::npos) name.replace(dot, 1, "::");
    if (name.size() > 8 && name.ends_with(".default")) name.resize(name.size() - 8);
    json c = {{"kind", "op"}, {"name", name}, {"parent", parent_at(h.depth + 1)}, {"depth", h.depth + 1},
              {"args", json::array({s.args})}, {"phase", h.phase}, {"step", h.step}, {"unrecorded", true}};
    if (h.ran_by >= 0) c["ran_by"] = h.ran_by;
    calls.push_back(std::move(c));
    depths.push_back(h.depth + 1);
  };
  std::size_t next_handoff = 0;
  auto flush_handoffs = [&](std::size_t upto) {
    for (; next_handoff < handoffs.size() && handoffs[next_handoff].calls_before <= upto; ++next_handoff)
      if (!handoffs[next_handoff].claimed && !handoffs[next_handoff].declined) write_unrecorded(handoffs[next_handoff]);
  };
  for (std::size_t i = 0; i < logs.size(); ++i) {
    flush_handoffs(i);
    const DebugCall& d = logs[i];
    json c = {{"kind", kind_name(d.kind)}, {"name", d.name},
              {"parent", d.parent ? json(new_index[*d.parent]) : json(nullptr)}, {"depth", d.depth},
              {"args", d.args}, {"phase", phase_of(i)}};
    if (!d.kwargs.empty()) c["kwargs"] = d.kwargs;
    if (d.output) c["output"] = *d.output;
    if (i < facts.size()) {
      if (facts[i].step) c["step"] = *facts[i].step;
      if (facts[i].flops) c["flops"] = *facts[i].flops;
      if (facts[i].ran_by >= 0) c["ran_by"] = facts[i].ran_by;
    }
    new_index[i] = calls.size();
    calls.push_back(std::move(c));
    depths.push_back(d.depth);
  }
  flush_handoffs(logs.size());

  json node_list = json::array();
  for (const NodeFacts& n : nodes) {
    json j = {{"name", n.name}, {"seq", n.seq}, {"next", n.next}, {"saved", n.saved}};
    if (!n.leaf.is_null()) j["leaf"] = n.leaf;
    if (n.forward) {
      j["forward"] = new_index[*n.forward];
      calls[new_index[*n.forward]]["node"] = &n - nodes.data();
    }
    if (n.ran) j["ran"] = *n.ran;
    node_list.push_back(std::move(j));
  }
  json step_list = json::array();
  for (const detail::TraceStep& s : steps.steps()) {
    json j = json::array({s.op, s.args, s.keys, s.key, s.handler, s.parent ? json(*s.parent) : json(nullptr)});
    if (!s.notes.empty()) j.push_back(s.notes);
    step_list.push_back(std::move(j));
  }
  json timeline = json::array();
  std::int64_t t0 = events.empty() ? 0 : events.front().start_ns;
  for (const profiler::Event& e : events) t0 = std::min(t0, e.start_ns);
  int engine_nodes = 0;
  for (const profiler::Event& e : events) {
    if (e.name.starts_with("autograd::engine::evaluate_function: ")) ++engine_nodes;
    timeline.push_back(json::array({e.name, category_name(e.kind), static_cast<double>(e.start_ns - t0) / 1000.0,
                                    static_cast<double>(e.duration_ns()) / 1000.0, e.parent}));
  }
  json r = {{"schema", "strata.explorer.rank"}, {"version", 1}, {"rank", options.rank}, {"phases", phases},
            {"calls", std::move(calls)}, {"steps", std::move(step_list)}, {"nodes", std::move(node_list)},
            {"arg_names", arg_names}, {"timeline", std::move(timeline)}};
  r["engine_nodes"] = options.profile ? json(engine_nodes) : json(nullptr);
  return r;
}

ExplorerRecorder::ExplorerRecorder(ExplorerOptions options) : impl_(std::make_unique<Impl>(options)) {}

ExplorerRecorder::~ExplorerRecorder() {
  if (!impl_->finished) impl_->stop();
}

void ExplorerRecorder::set_phase(std::string_view phase) {
  Impl& m = *impl_;
  STRATA_CHECK(!m.finished, "ExplorerRecorder::set_phase: the recording has finished");
  std::size_t i = 0;
  while (i < m.phases.size() && m.phases[i] != phase) ++i;
  if (i == m.phases.size()) m.phases.emplace_back(phase);
  m.phase = i;
  m.read_saved();
  m.phase_starts.emplace_back(m.mode.logs().size(), i);
}

nlohmann::ordered_json ExplorerRecorder::finish() {
  Impl& m = *impl_;
  STRATA_CHECK(!m.finished, "ExplorerRecorder::finish: called twice");
  m.stop();
  m.finished = true;
  return m.record();
}

}  // namespace strata::tracer
