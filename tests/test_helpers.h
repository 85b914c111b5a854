// tests/test_helpers.h: what several test files share: golden-file paths, JSON loading, element-wise
// comparison of tensors with host values, leaves, and small modes and subclasses.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "autograd/backward.h"
#include "autograd/variable.h"
#include "core/interpose/interposer.h"
#include "core/interpose/subclass.h"
#include "core/tensor.h"
#include "ops/functions.h"
#include "ops/library.h"
#include "ops/typed_operator.h"

namespace strata::testing {

inline std::string golden_path(const std::string& name) { return std::string(STRATA_GOLDEN_DIR) + "/" + name; }

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot open " << path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline nlohmann::json read_golden_json(const std::string& name) { return nlohmann::json::parse(read_text(golden_path(name))); }

// Largest |a - b| over all elements (shapes must match). NaN on both sides agrees; NaN on one side
// is an infinite difference (std::max would silently drop it).
inline double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    const double d = std::abs(a[i] - b[i]);
    if (!(d <= worst)) worst = std::isnan(d) ? std::numeric_limits<double>::infinity() : d;
  }
  return worst;
}

inline double max_abs_diff(const Tensor& t, const std::vector<double>& expected) {
  return max_abs_diff(t.to_vector<double>(), expected);
}

inline std::vector<double> json_doubles(const nlohmann::json& j) { return j.get<std::vector<double>>(); }

// A float leaf that requires grad; 1-D unless `sizes` is given.
inline Tensor leaf(std::initializer_list<float> values, std::vector<std::int64_t> sizes = {}) {
  Tensor t = sizes.empty() ? tensor<float>(values) : tensor<float>(values, sizes);
  requires_grad_(t);
  return t;
}

inline std::vector<std::int64_t> sizes_of(const Tensor& t) { return {t.sizes().begin(), t.sizes().end()}; }
inline std::vector<std::int64_t> strides_of(const Tensor& t) { return {t.strides().begin(), t.strides().end()}; }

// A dispatch mode that records the name of every op it sees, in order.
struct OpLog : DispatchMode {
  std::vector<std::string> ops;
  std::string_view name() const override { return "OpLog"; }
  void dispatch(const OperatorHandle& op, Stack& stack) override {
    ops.push_back(op.str());
    op.call(stack);
  }
};

// PyTorch's saved view of a written base: b = relu(a), v = t(b), m = mul(v, v), then add_(b, m). The
// write reaches v, a view of b, so the v that mul saved is out of date and backward(sum(m)) refuses
// it. Checks v's and b's versions after the write and the error's words (PyTorch's), and returns m.
inline Tensor write_base_of_saved_view(const Tensor& a, std::uint32_t view_version, std::uint32_t base_version,
                                       const std::string& error) {
  const Tensor b = relu(a);
  const Tensor v = t(b);
  const Tensor m = mul(v, v);
  add_(b, m);
  CHECK(v.impl()->version() == view_version);
  CHECK(b.impl()->version() == base_version);
  CHECK_THROWS_WITH_AS(backward(sum(m)), doctest::Contains(error.c_str()), Error);
  return m;
}

// The ops a dispatch mode sees while fn() runs, in order.
template <typename Fn>
std::vector<std::string> ops_seen(const Fn& fn) {
  OpLog log;
  {
    ModeGuard mode(log);
    fn();
  }
  return log.ops;
}

// Checks an op sequence against PyTorch's, printing both when they differ.
inline void check_same_ops(const std::vector<std::string>& strata, const std::vector<std::string>& torch) {
  CHECK_MESSAGE(strata == torch, "strata: " << nlohmann::json(strata).dump() << "\ntorch:  " << nlohmann::json(torch).dump());
}

// For each (name, case) of `cases`, check(case, entry) with the golden file's "cases" entry of that
// name, inside an INFO naming it. The golden file must have exactly these names.
template <typename Cases, typename Check>
void for_each_golden_case(const std::string& golden_file, const Cases& cases, const Check& check) {
  const nlohmann::json golden = read_golden_json(golden_file)["cases"];
  REQUIRE(cases.size() == golden.size());
  for (const auto& entry : cases) {  // not a structured binding: INFO captures it (clang 14)
    INFO(entry.first);
    REQUIRE(golden.contains(entry.first));
    check(entry.second, golden[entry.first]);
  }
}

// The user op `<ns>::<name>(Tensor x) -> Tensor` (ops/library.h), called on x. The first call defines
// it, with the CPU kernel Cpu and, when one is given, the Meta kernel Meta.
template <auto Cpu, auto Meta = nullptr>
Tensor call_user_op(std::string_view ns, std::string_view name, const Tensor& x) {
  static const TypedOperator<Tensor(const Tensor&)> op = [&] {
    Library m(ns);
    m.def(std::string(name) + "(Tensor x) -> Tensor");
    m.impl<Cpu>(name, DispatchKey::CPU);
    if constexpr (Meta != nullptr) m.impl<Meta>(name, DispatchKey::Meta);
    return TypedOperator<Tensor(const Tensor&)>(std::string(ns) + "::" + std::string(name));
  }();
  return op(x);
}

// A non-wrapper subclass (make_subclass) named `name` whose handler logs each op and runs it below the
// Python key on the tensors as they are; with `rewraps`, every plain tensor result becomes one too.
class LoggingSubclass final : public TensorSubclass {
 public:
  LoggingSubclass(std::string name, bool rewraps) : name_(std::move(name)), rewraps_(rewraps) {}
  std::shared_ptr<std::vector<std::string>> log = std::make_shared<std::vector<std::string>>();
  std::string_view type_name() const override { return name_; }
  void dispatch(const OperatorHandle& op, Stack& stack) override {
    log->push_back(op.str());
    call_below_python(op, stack);
    if (!rewraps_) return;
    for_each_return_tensor(op, stack, [&](Tensor& t) {
      if (t.defined() && !t.subclass()) t = make_subclass(IntrusivePtr<TensorSubclass>(this), t);
    });
  }
  FlattenedTensor flatten(const Tensor&) const override { return {}; }
  Tensor unflatten(const FlattenedTensor&, IntArrayRef, IntArrayRef) const override { return Tensor(); }

 private:
  std::string name_;
  bool rewraps_;
};

// A wrapper subclass with no inner tensor: its handler only redispatches. For tests of what happens
// when a tensor without data reaches a kernel, or of the geometry a wrapper may have.
struct InertSubclass final : TensorSubclass {
  std::string_view type_name() const override { return "Inert"; }
  void dispatch(const OperatorHandle& op, Stack& stack) override { op.call(stack); }
  FlattenedTensor flatten(const Tensor&) const override { return {}; }
  Tensor unflatten(const FlattenedTensor&, IntArrayRef, IntArrayRef) const override { return Tensor(); }
};
inline Tensor make_inert_wrapper(IntArrayRef sizes, IntArrayRef strides, std::int64_t storage_offset = 0) {
  return make_wrapper_tensor(IntrusivePtr<TensorSubclass>(new InertSubclass()), sizes, strides, storage_offset,
                             ScalarType::Float32, Device::CPU);
}

}  // namespace strata::testing
