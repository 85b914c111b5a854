// tests/ops/test_op_records.cpp: every op, driven by its record (Note [One record per op],
// tests/ops/op_records.h): its values against PyTorch's, its Meta kernel against its CPU kernel,
// gradcheck and gradgradcheck, its errors in PyTorch's words, and the ops a dispatch mode and a
// wrapper subclass see for the call and its backward, against what PyTorch's see.
#include <cmath>
#include <map>
#include <set>

#include "autograd/derivative_table.h"
#include "autograd/grad.h"
#include "autograd/gradcheck.h"
#include "autograd/registration.h"
#include "autograd/variable.h"
#include "modes/logging_tensor.h"
#include "ops/functions.h"
#include "ops/op_table.h"
#include "tests/ops/op_records.h"
#include "tests/test_helpers.h"

namespace test_op_records {  // Note [Test files in unity builds]

using namespace strata;
using testing::OpRecord;
using testing::RecordSample;
using testing::call;
using testing::differentiable;
using testing::is_floating;
using testing::repeats_memory;
using testing::substituted;
using testing::writes_first;

namespace {

double golden_value(const nlohmann::json& v) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "nan") return std::nan("");
    return s == "inf" ? INFINITY : -INFINITY;
  }
  return v.get<double>();
}

void check_against(const Tensor& t, const nlohmann::json& expected, const OpRecord& r, bool values) {
  CHECK(testing::sizes_of(t) == expected.at("shape").get<std::vector<std::int64_t>>());
  CHECK(std::string(dtype_name(t.dtype())) == expected.at("dtype").get<std::string>());
  if (expected.contains("strides"))  // the record's "strides"
    CHECK(testing::strides_of(t) == expected.at("strides").get<std::vector<std::int64_t>>());
  if (!values || testing::sizes_of(t) != expected.at("shape").get<std::vector<std::int64_t>>()) return;
  const std::vector<double> got = t.to_vector<double>();
  const double scale = t.dtype() == ScalarType::Float64 ? 1e-6 : 1.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double want = golden_value(expected.at("values")[i]);
    if (std::isnan(want) && std::isnan(got[i])) continue;
    if (got[i] == want) continue;
    const bool close = std::abs(got[i] - want) <= scale * (r.atol + r.rtol * std::abs(want));
    CHECK_MESSAGE(close, "element ", i, ": ", got[i], ", PyTorch ", want);
    if (!close) return;
  }
}

std::string describe(const OpRecord& r, const RecordSample& s, const std::string& dtype) {
  return r.op + " " + s.args.dump() + " " + dtype + (s.note.empty() ? "" : " (" + s.note + ")");
}

// The ops a mode (wrapped == false) or LoggingTensor arguments (wrapped == true) see for the call
// and for the backward of its floating outputs, and the inputs' gradients, as the reference script
// records them.
struct Seen {
  std::vector<std::string> forward, backward;
  std::vector<Tensor> grads;
  bool has_backward = false;
};
Seen run_logged(const OpRecord& r, const RecordSample& s, ScalarType dtype, bool wrapped) {
  testing::BuiltCall built = testing::build_call(r, s.args, dtype, Device::CPU);
  std::vector<Tensor> leaves;
  if (differentiable(r) && s.grad)
    for (std::size_t i = 0; i < built.tensors.size(); ++i)
      if (is_floating(built.tensors[i]) && !built.nograd[i]) leaves.push_back(requires_grad_(built.tensors[i]));
  auto log = std::make_shared<tracer::LoggingTensor::Log>();
  Stack stack = built.stack;
  if (wrapped) {
    std::vector<Tensor> wrapped_tensors;
    std::vector<Tensor> wrapped_leaves;
    for (const Tensor& t : built.tensors) {
      const bool leaf = std::any_of(leaves.begin(), leaves.end(), [&](const Tensor& l) { return l.is_same(t); });
      wrapped_tensors.push_back(tracer::LoggingTensor::wrap(detach(t), log, leaf));
      if (leaf) wrapped_leaves.push_back(wrapped_tensors.back());
    }
    stack = substituted(stack, wrapped_tensors);
    leaves = wrapped_leaves;
  }
  if (writes_first(r)) stack[0] = IValue(clone(stack[0].to_tensor()));
  Seen seen;
  manual_seed(0);
  testing::OpLog mode;
  std::size_t start = log->size();
  {
    std::optional<ModeGuard> guard;
    if (!wrapped) guard.emplace(mode);
    r.handle.call(stack);
  }
  seen.forward = wrapped ? std::vector<std::string>(log->begin() + start, log->end()) : mode.ops;
  std::vector<Tensor> outs;
  for (const Tensor& t : testing::tensors_of(stack))
    if (t.requires_grad()) outs.push_back(t);
  if (outs.empty() || leaves.empty()) return seen;
  std::vector<Tensor> ones_like_outs;
  for (const Tensor& t : outs) ones_like_outs.push_back(ones(t.sizes(), {.dtype = t.dtype()}));
  testing::OpLog backward_mode;
  start = log->size();
  {
    std::optional<ModeGuard> guard;
    if (!wrapped) guard.emplace(backward_mode);
    seen.grads = autograd::grad(outs, leaves, ones_like_outs, std::nullopt, false, /*allow_unused=*/true);
  }
  seen.backward = wrapped ? std::vector<std::string>(log->begin() + start, log->end()) : backward_mode.ops;
  seen.has_backward = true;
  return seen;
}

std::vector<std::string> strings_of(const nlohmann::json& j) {
  return j.is_null() ? std::vector<std::string>{} : j.get<std::vector<std::string>>();
}

std::string joined(const std::vector<std::string>& ops) { return nlohmann::json(ops).dump(); }

void check_sequence(const char* what, const std::vector<std::string>& seen, const nlohmann::json& expected) {
  CHECK_MESSAGE(seen == strings_of(expected), std::string(what), ": strata ", joined(seen), ", PyTorch ", expected.dump());
}

}  // namespace

TEST_CASE("every op of the op table has exactly one record, and every record names an op") {
  ops::register_ops();
  std::map<std::string, int> records;
  for (const OpRecord& r : testing::op_records()) ++records[r.op];
  std::set<std::string> table;
  for (const OperatorHandle& op : Dispatcher::singleton().ops())
    if (op.name().ns == "aten" || op.name().ns == "profiler")
      table.insert(op.name().qualified() + (op.name().overload.empty() ? "" : "." + op.name().overload));
  for (const std::string& op : table) {
    INFO(op);
    CHECK_MESSAGE(records[op] == 1, "add its record to tests/ops/records/<family>.json (tests/ops/op_records.h)");
  }
  for (const auto& entry : records) CHECK_MESSAGE(table.count(entry.first) == 1, entry.first, " is not an op of the op table");
}

TEST_CASE("every op's outputs are PyTorch's, and its Meta kernel agrees with its CPU kernel") {
  for (const OpRecord& r : testing::op_records()) {
    REQUIRE_MESSAGE(r.golden.at("samples").size() == r.samples.size(),
                    r.op, ": the golden answers are stale; run scripts/reference/op_records_reference.py ", r.family);
    for (std::size_t k = 0; k < r.samples.size(); ++k) {
      const RecordSample& s = r.samples[k];
      for (const std::string& dtype_text : s.dtypes) {
        INFO(describe(r, s, dtype_text));
        const nlohmann::json& expected = r.golden.at("samples")[k].at(dtype_text).at("outputs");
        const ScalarType dtype = testing::dtype_named(dtype_text);
        manual_seed(0);
        const std::vector<Tensor> cpu = call(r, testing::build_call(r, s.args, dtype, Device::CPU).stack);
        const std::string& values = testing::values_of(r, s);
        // null: PyTorch 1.13 cannot answer (the record's "pytorch"); "none": the op returns no tensor
        if (!expected.is_null() && values != "none") {
          REQUIRE(cpu.size() == expected.size());
          for (std::size_t i = 0; i < cpu.size(); ++i) check_against(cpu[i], expected[i], r, values == "exact");
        }
        const std::vector<Tensor> meta = call(r, testing::build_call(r, s.args, dtype, Device::Meta).stack);
        REQUIRE(meta.size() == cpu.size());
        for (std::size_t i = 0; i < cpu.size(); ++i) {
          CHECK(meta[i].is_meta());
          CHECK(testing::sizes_of(meta[i]) == testing::sizes_of(cpu[i]));
          CHECK(testing::strides_of(meta[i]) == testing::strides_of(cpu[i]));
          CHECK(meta[i].dtype() == cpu[i].dtype());
        }
      }
    }
  }
}

constexpr std::int64_t kGradcheckElements = 300;

TEST_CASE("every differentiable op passes gradcheck and gradgradcheck on its float64 samples") {
  for (const OpRecord& r : testing::op_records()) {
    if (!differentiable(r)) continue;
    for (const RecordSample& s : r.samples) {
      if (!s.grad || std::find(s.dtypes.begin(), s.dtypes.end(), "float64") == s.dtypes.end()) continue;
      INFO(describe(r, s, "float64"));
      const testing::BuiltCall built = testing::build_call(r, s.args, ScalarType::Float64, Device::CPU);
      // An input whose elements share memory (":expand") cannot be perturbed one element at a time:
      // PyTorch's gradcheck refuses it too. Its gradients are still PyTorch's (the sequence test).
      if (std::any_of(built.tensors.begin(), built.tensors.end(), [](const Tensor& t) { return is_floating(t) && repeats_memory(t); }))
        continue;
      // A sample past kGradcheckElements exists for its kernel's path (small_gemm at Linear's sizes,
      // Eigen's GEMM past it, a long column sum), whose outputs and gradients the records compare
      // with PyTorch's; its derivative formula is the one the op's small samples check. Perturbing
      // hundreds of elements one at a time, twice over for gradgradcheck, is slow under the
      // sanitizers: mm, addmm and mv's four samples of 408-672 elements took 24 of this case's 57 s.
      std::int64_t elements = 0;
      for (const Tensor& t : built.tensors) elements += t.numel();
      if (elements > kGradcheckElements) continue;
      for (std::size_t i = 0; i < built.tensors.size(); ++i)
        if (is_floating(built.tensors[i]) && !built.nograd[i]) requires_grad_(built.tensors[i]);
      const auto fn = [&](const std::vector<Tensor>& xs) {
        manual_seed(0);  // a random op draws the same numbers at every evaluation
        for (const Tensor& out : call(r, substituted(built.stack, xs)))
          if (is_floating(out)) return out;
        FAIL("no floating output");
        return Tensor();
      };
      const autograd::GradcheckResult first = autograd::gradcheck(fn, built.tensors);
      CHECK_MESSAGE(first.ok, first.message);
      if (r.no_gradgrad) continue;  // the record says why
      const autograd::GradcheckResult second = autograd::gradgradcheck(fn, built.tensors);
      CHECK_MESSAGE(second.ok, "gradgradcheck: ", second.message);
    }
  }
}

TEST_CASE("every op's errors are PyTorch's") {
  for (const OpRecord& r : testing::op_records()) {
    REQUIRE(r.golden.at("errors").size() == r.errors.size());
    for (std::size_t k = 0; k < r.errors.size(); ++k) {
      const testing::RecordError& e = r.errors[k];
      INFO(r.op << " " << e.args.dump());
      if (!e.strata_only && r.pytorch_answers) {
        const nlohmann::json& torch = r.golden.at("errors")[k];
        REQUIRE_MESSAGE(torch.is_string(), "PyTorch accepts this call");
        // PyTorch's own words where strata's differ by a documented choice (the error's "differs")
        const std::string& words = e.pytorch_message ? *e.pytorch_message : e.message;
        CHECK_MESSAGE(torch.get<std::string>().find(words) != std::string::npos, "PyTorch says: ", torch.get<std::string>());
      }
      const std::string expected = "[" + r.handle.name().qualified() + "] " + e.message;
      CHECK_THROWS_WITH_AS(call(r, testing::build_call(r, e.args, testing::dtype_named(e.dtype), Device::CPU).stack),
                           expected.c_str(), Error);
    }
  }
}

TEST_CASE("a dispatch mode and a wrapper subclass see PyTorch's ops for every op and its backward") {
  for (const OpRecord& r : testing::op_records()) {
    for (std::size_t k = 0; k < r.samples.size(); ++k) {
      const RecordSample& s = r.samples[k];
      if (s.sequence_differs) continue;
      const nlohmann::json& expected = r.golden.at("samples")[k].at(s.dtypes.front());
      if (!expected.contains("forward")) continue;  // PyTorch 1.13 cannot answer, or "sequence": false
      INFO(describe(r, s, s.dtypes.front()));
      const ScalarType dtype = testing::dtype_named(s.dtypes.front());
      const Seen mode = run_logged(r, s, dtype, /*wrapped=*/false);
      check_sequence("the mode's forward", mode.forward, expected.at("forward"));
      check_sequence("the mode's backward", mode.backward, expected.at("backward"));
      if (mode.has_backward) {
        REQUIRE(mode.grads.size() == expected.at("grads").size());
        for (std::size_t i = 0; i < mode.grads.size(); ++i) {
          CHECK(mode.grads[i].defined() == !expected.at("grads")[i].is_null());
          if (mode.grads[i].defined()) check_against(mode.grads[i], expected.at("grads")[i], r, testing::values_of(r, s) == "exact");
        }
      }
      if (expected.at("wrapper_forward").is_null()) continue;  // no tensor argument to wrap
      const Seen wrapper = run_logged(r, s, dtype, /*wrapped=*/true);
      check_sequence("the wrapper's forward", wrapper.forward, expected.at("wrapper_forward"));
      check_sequence("the wrapper's backward", wrapper.backward, expected.at("wrapper_backward"));
    }
  }
}

}  // namespace test_op_records
