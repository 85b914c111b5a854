// tests/autograd/test_op_sequences.cpp: the ops a dispatch mode sees for stack, max.dim and dropout,
// forward, backward and max.dim's and layer_norm's double backward, equal PyTorch's (tests/golden/op_sequences_torch.json,
// from scripts/reference/op_sequences_reference.py): stack is one op with StackBackward0's selects,
// max.dim's backward is value_selecting_reduction_backward's unsqueeze/zeros/scatter and its double
// backward a gather, dropout on CPU is Note [dropout on CPU is bernoulli noise]; a pass that runs
// part of its graph (autograd::grad, backward with inputs) computes only the gradients it needs.
#include <functional>

#include "autograd/backward.h"
#include "autograd/grad.h"
#include "autograd/variable.h"
#include "ops/detach.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"

namespace test_op_sequences {  // Note [Test files in unity builds]

using namespace strata;

namespace {

Tensor leaf(std::vector<float> values, std::initializer_list<std::int64_t> sizes) {
  Tensor t = detach(view(tensor<float>(values), sizes));
  requires_grad_(t);
  return t;
}

Tensor a() { return leaf({1, 2, 3, 4, 5, 6}, {2, 3}); }
Tensor b() { return leaf({2, 1, 4, 3, 6, 5}, {2, 3}); }
Tensor x() { return leaf({1, 5, 3, 4, 2, 6}, {2, 3}); }
Tensor ones6() { return leaf({1, 1, 1, 1, 1, 1}, {2, 3}); }

using Inputs = std::vector<Tensor>;
using Phases = std::map<std::string, std::vector<std::string>>;

// forward(inputs) under a mode, then backward(sum(output)) under another.
Phases forward_backward(const Inputs& inputs, const std::function<Tensor(const Inputs&)>& forward) {
  Tensor y;
  Phases out;
  out["forward"] = testing::ops_seen([&] { y = forward(inputs); });
  const Tensor loss = sum(y);
  out["backward"] = testing::ops_seen([&] { backward(loss); });
  return out;
}

Phases max_dim_double_backward(bool keepdim) {
  const Tensor in = x();
  const Tensor values = std::get<0>(max(in, 1, keepdim));
  const Tensor go = ones_like(values);
  requires_grad_(go);
  const Tensor weights = view(arange(6.0), {2, 3});
  Tensor gx;
  Phases out;
  out["backward"] = testing::ops_seen([&] { gx = autograd::grad({values}, {in}, {go}, std::nullopt, /*create_graph=*/true)[0]; });
  const Tensor loss = sum(mul(gx, weights));
  out["double_backward"] = testing::ops_seen([&] { backward(loss); });
  return out;
}

// layer_norm's gradients with create_graph (of x, w and b; of x alone without a weight), then the
// backward of a weighted sum of grad_input (and grad_weight): native_layer_norm_backward's derivative,
// layer_norm_double_backward, dispatches PyTorch's pointwise ops and sums. The leaves' gradients are
// compared with PyTorch's too ("grads" in the golden case, checked by the caller).
Phases layer_norm_double_backward(bool affine, std::vector<Tensor>& leaves) {
  const Tensor in = x();
  const Tensor w = affine ? leaf({0.5f, -1, 2}, {3}) : Tensor();
  const Tensor bias = affine ? leaf({0.1f, 0.2f, 0.3f}, {3}) : Tensor();
  const Tensor y = layer_norm(in, {3}, w, bias);
  const Tensor go = view(arange(6.0), {2, 3});
  requires_grad_(go);
  const std::vector<Tensor> wrt = affine ? std::vector<Tensor>{in, w, bias} : std::vector<Tensor>{in};
  std::vector<Tensor> grads;
  Phases out;
  out["backward"] = testing::ops_seen([&] { grads = autograd::grad({y}, wrt, {go}, std::nullopt, /*create_graph=*/true); });
  Tensor loss = sum(mul(grads[0], view(arange(6.0), {2, 3})));
  if (affine) loss = add(loss, sum(mul(grads[1], tensor<float>({1, 2, 3}))));
  out["double_backward"] = testing::ops_seen([&] { backward(loss); });
  leaves = affine ? std::vector<Tensor>{in, w, go} : std::vector<Tensor>{in, go};
  return out;
}

// A pass that runs part of its graph (scripts/reference/op_sequences_reference.py's pruned): the
// gradient of sum((x * y) * x) with respect to y alone or both (autograd::grad), or backward with
// inputs {y}. Each MulBackward0 computes only the gradients that lead to the inputs.
Phases pruned(bool wrt_y, bool accumulate) {
  const Tensor in_x = a();
  const Tensor in_y = b();
  const Tensor loss = sum(mul(mul(in_x, in_y), in_x));
  const std::vector<Tensor> wrt = wrt_y ? std::vector<Tensor>{in_y} : std::vector<Tensor>{in_x, in_y};
  Phases out;
  if (accumulate) {
    out["backward"] = testing::ops_seen([&] { loss.backward(Tensor(), std::nullopt, false, wrt); });
    CHECK_FALSE(in_x.grad().defined());
    CHECK(in_y.grad().defined());
  } else {
    out["backward"] = testing::ops_seen([&] { autograd::grad({loss}, wrt); });
  }
  return out;
}

std::map<std::string, std::function<Phases()>> cases() {
  return {
      {"stack_dim0", [] { return forward_backward({a(), b()}, [](const Inputs& v) { return stack({v[0], v[1]}); }); }},
      {"stack_dim1", [] { return forward_backward({a(), b()}, [](const Inputs& v) { return stack({v[0], v[1]}, 1); }); }},
      {"stack_dim_last_three",
       [] { return forward_backward({a(), b(), a()}, [](const Inputs& v) { return stack({v[0], v[1], v[2]}, -1); }); }},
      {"max_dim", [] { return forward_backward({x()}, [](const Inputs& v) { return std::get<0>(max(v[0], 1)); }); }},
      {"max_dim_keepdim", [] { return forward_backward({x()}, [](const Inputs& v) { return std::get<0>(max(v[0], 0, true)); }); }},
      {"max_dim_double_backward", [] { return max_dim_double_backward(false); }},
      {"max_dim_keepdim_double_backward", [] { return max_dim_double_backward(true); }},
      {"layer_norm_double_backward", [] {
         std::vector<Tensor> leaves;
         return layer_norm_double_backward(true, leaves);
       }},
      {"layer_norm_double_backward_no_weight", [] {
         std::vector<Tensor> leaves;
         return layer_norm_double_backward(false, leaves);
       }},
      {"dropout_train", [] { return forward_backward({ones6()}, [](const Inputs& v) { return dropout(v[0], 0.5, true); }); }},
      {"dropout_p1", [] { return forward_backward({ones6()}, [](const Inputs& v) { return dropout(v[0], 1.0, true); }); }},
      {"dropout_eval", [] { return forward_backward({ones6()}, [](const Inputs& v) { return dropout(v[0], 0.5, false); }); }},
      {"dropout_p0", [] { return forward_backward({ones6()}, [](const Inputs& v) { return dropout(v[0], 0.0, true); }); }},
      {"grad_wrt_one_input", [] { return pruned(true, false); }},
      {"grad_wrt_both_inputs", [] { return pruned(false, false); }},
      {"backward_inputs_one", [] { return pruned(true, true); }},
  };
}

}  // namespace

TEST_CASE("stack, max.dim, layer_norm, dropout and pruned passes dispatch PyTorch's ops, forward, backward and double backward") {
  testing::for_each_golden_case("op_sequences_torch.json", cases(), [](const auto& run, const nlohmann::json& torch_phases) {
    const Phases got = run();
    REQUIRE(got.size() == torch_phases.size() - (torch_phases.contains("grads") ? 1 : 0));
    for (const auto& phase_ops : got) {
      INFO(phase_ops.first);
      REQUIRE(torch_phases.contains(phase_ops.first));
      testing::check_same_ops(phase_ops.second, torch_phases[phase_ops.first].get<std::vector<std::string>>());
    }
  });
}

TEST_CASE("layer_norm's double backward gives PyTorch's gradients, with and without a weight") {
  const nlohmann::json golden = testing::read_golden_json("op_sequences_torch.json")["cases"];
  for (const bool affine : {true, false}) {
    INFO("affine: " << affine);
    std::vector<Tensor> leaves;
    (void)layer_norm_double_backward(affine, leaves);
    const nlohmann::json& want = golden[affine ? "layer_norm_double_backward" : "layer_norm_double_backward_no_weight"]["grads"];
    REQUIRE(want.size() == leaves.size());
    for (std::size_t k = 0; k < leaves.size(); ++k) {
      REQUIRE(leaves[k].grad().defined());
      const std::vector<double> got = leaves[k].grad().to_vector<double>();
      const std::vector<double> expected = want[k].get<std::vector<double>>();
      REQUIRE(got.size() == expected.size());
      for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(expected[i]).epsilon(1e-5));
    }
  }
}

}  // namespace test_op_sequences
