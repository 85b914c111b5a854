// tests/tracer/cli/test_mlp_experiment.cpp: the MLP experiment equals PyTorch 2.8's answer, exactly: op
// counts per phase, ordered sequences, the LoggingTensor log, and the comparison flags, for the seed
// configuration and for other depths, sizes and batches (references made with
// scripts/reference/trace_reference.py on Debian's PyTorch).
#include <cmath>

#include "ops/functions.h"
#include "tests/test_helpers.h"
#include "tracer/cli/mlp_experiment.h"

namespace test_mlp_experiment {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::tracer;

namespace {
MlpConfig config_of(const nlohmann::json& ref) {
  return MlpConfig{ref["seed"].get<std::uint64_t>(), ref["sizes"].get<std::vector<std::int64_t>>(),
                    ref["batch"].get<std::int64_t>(), 0.1};
}
}  // namespace

TEST_CASE("the seed report equals PyTorch's for every reference configuration") {
  for (const char* file : {"trace_torch28_seed0_16-32-4_b8.json", "trace_torch_seed1_4-3_b3.json",
                           "trace_torch_seed2_8-16-16-3_b5.json", "trace_torch_seed3_5-7_b1.json",
                           "trace_torch_seed7_20-10-10-10-5_b2.json"}) {
    INFO(file);
    const nlohmann::json ref = testing::read_golden_json(file);
    const nlohmann::ordered_json got = experiment_report(config_of(ref), /*sequences=*/true);
    for (const char* key : {"forward_ops", "backward_ops", "optimizer_ops", "total_ops", "mm_like_forward",
                            "mm_like_backward", "subclass_grad_type", "subclass_logged_ops", "subclass_distinct_ops",
                            "forward_seq", "backward_seq", "optimizer_seq", "subclass_log"}) {
      INFO(key);
      CHECK(nlohmann::json(got[key]) == ref[key]);
    }
    CHECK(got["traced_step_matches"] == true);
    CHECK(got["subclass_output_matches"] == true);
    CHECK(got["subclass_grad_matches"] == true);
  }
}

TEST_CASE("the report has the seed script's keys in the seed script's order") {
  const nlohmann::ordered_json got = experiment_report(MlpConfig{}, false);
  std::vector<std::string> keys;
  for (const auto& item : got.items()) keys.push_back(item.key());
  CHECK(keys == std::vector<std::string>{"forward_ops", "backward_ops", "optimizer_ops", "total_ops", "mm_like_forward",
                                         "mm_like_backward", "traced_step_matches", "subclass_output_matches",
                                         "subclass_grad_matches", "subclass_grad_type", "subclass_logged_ops",
                                         "subclass_distinct_ops"});
  CHECK(got["total_ops"] == 43);
  CHECK(got["subclass_logged_ops"] == 39);
}

TEST_CASE("the tensor dump equals PyTorch's numerics") {
  const nlohmann::json ref = testing::read_golden_json("numerics_seed1_16-32-4_b8.json");
  const MlpConfig config{1, {16, 32, 4}, 8, 0.1};
  const nlohmann::ordered_json got = tensors_report(config, plain_step(config));
  CHECK(testing::max_abs_diff(got["x"].get<std::vector<double>>(), testing::json_doubles(ref["x"])) <= 1e-6);
  CHECK(nlohmann::json(got["y"]) == ref["y"]);
  CHECK(testing::max_abs_diff(got["logits"].get<std::vector<double>>(), testing::json_doubles(ref["logits"])) <= 1e-6);
  CHECK(std::abs(got["loss"].get<double>() - ref["loss"].get<double>()) <= 1e-6);
  for (const char* key : {"init_params", "grads", "params_after"})
    for (std::size_t i = 0; i < 4; ++i)
      CHECK(testing::max_abs_diff(got[key][i].get<std::vector<double>>(), testing::json_doubles(ref[key][i])) <= 1e-6);
}

TEST_CASE("allclose is torch.allclose: |a - b| <= atol + rtol * |b|, NaN never close, shapes must agree") {
  const Tensor b = tensor<double>({1.0, 100.0});
  CHECK(tracer::allclose(tensor<double>({1.0 + 1.5e-6, 100.0 + 1e-3}), b));   // within atol + rtol * |b|
  CHECK_FALSE(tracer::allclose(tensor<double>({1.0 + 2.5e-5, 100.0}), b));     // 2.5e-5 > 1e-6 + 1e-5
  CHECK_FALSE(tracer::allclose(tensor<double>({1.0, 100.0 + 2e-3}), b));       // 2e-3 > 1e-6 + 1e-3
  CHECK_FALSE(tracer::allclose(tensor<double>({std::nan(""), 100.0}), b));
  CHECK_FALSE(tracer::allclose(tensor<double>({1.0, 100.0, 0.0}), tensor<double>({1.0, 100.0, std::nan("")})));
  CHECK_FALSE(tracer::allclose(tensor<double>({1.0, 100.0}), view(tensor<double>({1.0, 100.0}), {2, 1})));
}

}  // namespace test_mlp_experiment
