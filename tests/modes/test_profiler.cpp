// tests/modes/test_profiler.cpp: the profiler's events (names, nesting under module, user and
// engine scopes, shapes), its self/total arithmetic, key_averages().table() and the Chrome trace.
// No test reads a duration's value: only invariants between them.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <thread>

#include "autograd/backward.h"
#include "autograd/variable.h"
#include "nn/layers.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"
#include "modes/op_counter.h"
#include "tracer/cli/profile_step.h"
#include "modes/profiler.h"

namespace test_profiler {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::profiler;

namespace {

std::vector<std::string> names_of(const std::vector<Event>& events) {
  std::vector<std::string> out;
  for (const Event& e : events) out.push_back(e.name);
  return out;
}

// The chain of names from `i` up to the root: "aten::addmm < nn.Module: Linear_0 < my_scope".
std::vector<std::string> ancestry(const std::vector<Event>& events, std::int64_t i) {
  std::vector<std::string> out;
  for (; i >= 0; i = events[static_cast<std::size_t>(i)].parent) out.push_back(events[static_cast<std::size_t>(i)].name);
  return out;
}

std::int64_t find(const std::vector<Event>& events, const std::string& name, std::size_t from = 0) {
  for (std::size_t i = from; i < events.size(); ++i)
    if (events[i].name == name) return static_cast<std::int64_t>(i);
  return -1;
}

}  // namespace

TEST_CASE("an op inside a module inside a user scope is nested under both, with PyTorch's names") {
  manual_seed(0);
  nn::Linear linear(3, 2);
  const Tensor x = randn({4, 3});
  Profiler prof;
  {
    record_function scope("my_scope");
    (void)linear(x);
  }
  const std::vector<Event>& events = prof.events();
  const std::int64_t addmm = find(events, "aten::addmm");
  REQUIRE(addmm >= 0);
  const std::vector<std::string> chain = ancestry(events, addmm);
  REQUIRE(chain.size() >= 3);
  CHECK(chain[chain.size() - 1] == "my_scope");
  CHECK(chain[chain.size() - 2] == "nn.Module: Linear_0");
  CHECK(events[static_cast<std::size_t>(find(events, "my_scope"))].kind == EventKind::UserScope);
  CHECK(events[static_cast<std::size_t>(find(events, "nn.Module: Linear_0"))].kind == EventKind::Module);
  // The record_function ops themselves are not events (their scope is).
  for (const Event& e : events) CHECK(e.name.rfind("profiler::", 0) != 0);
}

TEST_CASE("backward nodes are engine scopes and their ops nest under them") {
  const Tensor w = requires_grad_(randn({3, 2}));
  const Tensor x = randn({4, 3});
  const Tensor loss = sum(relu(mm(x, w)));
  Profiler prof;
  backward(loss);
  const std::vector<Event>& events = prof.events();
  const std::vector<std::string> all = names_of(events);
  const std::set<std::string> names(all.begin(), all.end());
  for (const char* node : {"autograd::engine::evaluate_function: SumBackward0",
                           "autograd::engine::evaluate_function: ReluBackward0",
                           "autograd::engine::evaluate_function: MmBackward0",
                           "autograd::engine::evaluate_function: AccumulateGrad"})
    CHECK(names.count(node) == 1);
  const std::int64_t tb = find(events, "aten::threshold_backward");
  REQUIRE(tb >= 0);
  const std::vector<std::string> chain = ancestry(events, tb);
  REQUIRE(chain.size() == 3);
  CHECK(chain[1] == "ReluBackward0");
  CHECK(chain[2] == "autograd::engine::evaluate_function: ReluBackward0");
  CHECK(events[static_cast<std::size_t>(find(events, "autograd::engine::evaluate_function: MmBackward0"))].kind ==
        EventKind::Autograd);
}

TEST_CASE("self time is total minus the children's totals; children fit in their parent") {
  const std::vector<Event> events = profile_step(tracer::MlpConfig{});
  REQUIRE(!events.empty());
  std::map<std::int64_t, std::int64_t> children_total;
  for (const Event& e : events) {
    CHECK(e.start_ns <= e.end_ns);
    if (e.parent < 0) continue;
    const Event& p = events[static_cast<std::size_t>(e.parent)];
    CHECK(p.thread == e.thread);
    CHECK(p.start_ns <= e.start_ns);
    CHECK(e.end_ns <= p.end_ns);
    children_total[e.parent] += e.duration_ns();
  }
  for (std::size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    CHECK(e.self_ns == e.duration_ns() - children_total[static_cast<std::int64_t>(i)]);
    CHECK(e.self_ns >= 0);
    CHECK(e.self_ns <= e.duration_ns());
  }
  std::int64_t self_sum = 0, event_self_sum = 0, total_sum = 0;
  for (const Event& e : events) event_self_sum += e.self_ns;
  for (const EventAverage& row : key_averages(events)) {
    CHECK(row.self_cpu_time_total_ns <= row.cpu_time_total_ns);
    self_sum += row.self_cpu_time_total_ns;
    total_sum += row.cpu_time_total_ns;
  }
  CHECK(self_sum == event_self_sum);
  // Self times add up to the top-level events' totals: nothing is counted twice or lost.
  std::int64_t top = 0;
  for (const Event& e : events)
    if (e.parent < 0) top += e.duration_ns();
  CHECK(self_sum == top);
  CHECK(total_sum >= self_sum);
}

TEST_CASE("the MLP step's op counts: each op an OpCounter counts is called as often under the profiler") {
  const tracer::TracedStep traced = tracer::traced_step(tracer::MlpConfig{});
  const std::vector<Event> events = profile_step(tracer::MlpConfig{});
  std::map<std::string, std::int64_t> profiled;
  for (const EventAverage& row : key_averages(events)) profiled[row.key] = row.count;
  // OpCounter names overloads ("aten.addmm.default"); the profiler names ops ("aten::addmm").
  std::map<std::string, std::int64_t> counted;
  for (const char* phase : {"forward", "backward", "optimizer"})
    for (const auto& [name, n] : traced.counter.counts(phase)) {
      if (name.rfind("profiler.", 0) == 0) continue;  // record_function's ops: scopes here
      const std::string op = name.substr(0, name.find('.')) + "::" +
                             name.substr(name.find('.') + 1, name.rfind('.') - name.find('.') - 1);
      counted[op] += n;
    }
  REQUIRE(counted.size() >= 8);
  for (const auto& entry : counted) {
    const auto& [op, n] = entry;
    INFO(entry.first);  // INFO's lambda may not capture a structured binding (clang 14)
    // The detaches a mode sees come from the interposer's emulation of PyTorch's Python dispatch
    // (Note [Detach and the interposer]); without a mode only AccumulateGrad's detach of a new
    // gradient runs, once per parameter, as in PyTorch's own profiles.
    if (op == "aten::detach") CHECK(profiled[op] == 4);
    else CHECK(profiled[op] == n);
  }
  CHECK(profiled["forward"] == 1);
  CHECK(profiled["backward"] == 1);
  CHECK(profiled["optimizer"] == 1);
  CHECK(profiled["Optimizer.step#SGD.step"] == 1);
  CHECK(profiled["autograd::engine::evaluate_function: AddmmBackward0"] == 2);
  CHECK(profiled["AddmmBackward0"] == 2);
  CHECK(profiled["autograd::engine::evaluate_function: AccumulateGrad"] == 4);
}

TEST_CASE("record_shapes records each op's input sizes and types as PyTorch names them") {
  const Tensor a = randn({4, 3});
  const Tensor b = randn({3, 2});
  std::vector<Event> events;
  {
    Profiler prof({.record_shapes = true});
    (void)mm(a, b);
    (void)add(a, 2.0);
    events = prof.events();
  }
  const Event& mm_event = events[static_cast<std::size_t>(find(events, "aten::mm"))];
  CHECK(mm_event.input_shapes == std::vector<std::vector<std::int64_t>>{{4, 3}, {3, 2}});
  CHECK(mm_event.input_types == std::vector<std::string>{"float", "float"});
  const Event& add_event = events[static_cast<std::size_t>(find(events, "aten::add"))];
  CHECK(add_event.input_shapes == std::vector<std::vector<std::int64_t>>{{4, 3}, {}, {}});
  CHECK(add_event.input_types == std::vector<std::string>{"float", "Scalar", "Scalar"});
  const auto rows = key_averages(events, /*group_by_input_shape=*/true);
  CHECK(rows[0].input_shapes == "[[4, 3], [3, 2]]");
  SUBCASE("without record_shapes nothing is recorded") {
    Profiler plain;
    (void)mm(a, b);
    for (const Event& e : plain.events()) CHECK(e.input_shapes.empty());
  }
}

TEST_CASE("table() has PyTorch's columns, one row per name, sorted by the key asked for") {
  const std::vector<Event> events = profile_step(tracer::MlpConfig{});
  const std::vector<EventAverage> rows = key_averages(events);
  const std::string text = table(rows, "self_cpu_time_total", -1);
  std::istringstream in(text);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  REQUIRE(lines.size() == rows.size() + 5);  // rule, header, rule, rows, rule, total
  CHECK(lines[0] == lines[2]);
  CHECK(lines[0] == lines[lines.size() - 2]);
  CHECK(lines[1].find("Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls  ") !=
        std::string::npos);
  CHECK(lines.back().rfind("Self CPU time total: ", 0) == 0);
  // Sorted by self time, largest first.
  std::vector<EventAverage> sorted = rows;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const EventAverage& a, const EventAverage& b) { return a.self_cpu_time_total_ns > b.self_cpu_time_total_ns; });
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const std::string& key = sorted[i].key;
    const std::string shown = key.size() >= 52 ? key.substr(0, 52) + "..." : key;
    CHECK(lines[3 + i].find(shown) != std::string::npos);
  }
  CHECK(table(rows, "", 2).size() < text.size());
  CHECK_THROWS_WITH(table(rows, "cuda_time"),
                    "table: sort_by must be one of self_cpu_time_total, cpu_time_total, cpu_time, count; got 'cuda_time'");
  CHECK(table({}, "") == "");
}

TEST_CASE("the Chrome trace has one complete event per event, with PyTorch's fields") {
  const std::vector<Event> events = profile_step(tracer::MlpConfig{}, {.record_shapes = true});
  const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(chrome_trace(events).dump());
  REQUIRE(doc["traceEvents"].is_array());
  REQUIRE(doc["traceEvents"].size() == events.size());
  for (std::size_t i = 0; i < events.size(); ++i) {
    const auto& j = doc["traceEvents"][i];
    CHECK(j["ph"] == "X");
    CHECK(j["name"] == events[i].name);
    CHECK(j["tid"] == events[i].thread);
    CHECK(j["pid"].is_number_integer());
    CHECK(j["ts"].get<double>() == doctest::Approx(static_cast<double>(events[i].start_ns) / 1000.0));
    CHECK(j["dur"].get<double>() >= 0);
    CHECK(j["cat"] == std::string(category_name(events[i].kind)));
    if (events[i].kind == EventKind::Op) {
      CHECK(j["args"]["Input Dims"].size() == j["args"]["Input type"].size());
    }
  }
  const std::int64_t addmm = find(events, "aten::addmm");
  CHECK(nlohmann::json(doc["traceEvents"][static_cast<std::size_t>(addmm)]["args"]["Input Dims"]) ==
        nlohmann::json::parse("[[32], [8, 16], [16, 32], [], []]"));
}

TEST_CASE("one profiler at a time; a stopped profiler records nothing more") {
  Profiler first;
  CHECK_THROWS_WITH(Profiler(), "a profiler is already running (one at a time, process-wide)");
  first.stop();
  const std::size_t n = first.events().size();
  (void)relu(randn({2}));
  CHECK(first.events().size() == n);
  Profiler second;  // the first has stopped
  (void)relu(randn({2}));
  CHECK(find(second.events(), "aten::relu") >= 0);
}

TEST_CASE("each thread's ops are its own events, nested on their own thread" * doctest::test_suite("threads")) {
  Profiler prof;
  auto work = [] {
    record_function scope("worker");
    for (int i = 0; i < 20; ++i) (void)relu(add(randn({4}), 1.0));
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
  const std::vector<Event>& events = prof.events();
  std::set<std::int64_t> threads;
  std::int64_t relus = 0;
  for (const Event& e : events) {
    if (e.name == "worker") threads.insert(e.thread);
    if (e.name != "aten::relu") continue;
    ++relus;
    REQUIRE(e.parent >= 0);
    const Event& parent = events[static_cast<std::size_t>(e.parent)];
    CHECK(parent.name == "worker");
    CHECK(parent.thread == e.thread);
  }
  CHECK(threads.size() == 2);
  CHECK(relus == 40);
}

}  // namespace test_profiler
