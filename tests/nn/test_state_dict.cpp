// tests/nn/test_state_dict.cpp: Module::state_dict / load_state_dict: PyTorch's key names, its
// messages for missing and unexpected keys and size mismatches (checked against PyTorch 1.13), and a
// round trip through a safetensors file.
#include <cstdio>
#include <filesystem>

#include "nn/layers.h"
#include "nn/safetensors.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"

namespace test_state_dict {  // Note [Test files in unity builds]

using namespace strata;

namespace {
std::vector<std::string> keys_of(const std::vector<std::pair<std::string, Tensor>>& state) {
  std::vector<std::string> keys;
  for (const auto& entry : state) keys.push_back(entry.first);
  return keys;
}
TensorDict as_dict(const std::vector<std::pair<std::string, Tensor>>& state) { return {state.begin(), state.end()}; }
}  // namespace

TEST_CASE("state_dict names parameters as PyTorch does, detached and sharing storage") {
  manual_seed(0);
  auto model = nn::make_mlp({4, 3, 2});
  const auto state = model->state_dict();
  CHECK(keys_of(state) == std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"});
  CHECK_FALSE(state[0].second.requires_grad());
  CHECK(state[0].second.raw_data() == model->parameters()[0].raw_data());
}

TEST_CASE("a shared module's parameters appear under each of its names, as in PyTorch") {
  auto shared = std::make_shared<nn::Linear>(2, 2);
  nn::Sequential model({shared, std::make_shared<nn::ReLU>(), shared});
  CHECK(keys_of(model.state_dict()) == std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"});
  CHECK(model.named_parameters().size() == 2);
}

TEST_CASE("load_state_dict copies values and round-trips through safetensors") {
  manual_seed(0);
  auto source = nn::make_mlp({4, 3, 2});
  manual_seed(1);
  auto target = nn::make_mlp({4, 3, 2});
  const std::string path = (std::filesystem::temp_directory_path() / "strata-state-dict.safetensors").string();
  save_safetensors(path, as_dict(source->state_dict()));
  const nn::IncompatibleKeys result = target->load_state_dict(load_safetensors(path).tensors);
  std::remove(path.c_str());
  CHECK(result.missing_keys.empty());
  CHECK(result.unexpected_keys.empty());
  const auto a = source->parameters(), b = target->parameters();
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i].to_vector<float>() == b[i].to_vector<float>());
  CHECK(b[0].requires_grad());
  CHECK(b[0].is_leaf());
  // float64 entries are converted, as copy_ converts them.
  TensorDict doubled = as_dict(source->state_dict());
  doubled["2.bias"] = tensor<double>({0.5, -0.25});
  target->load_state_dict(doubled);
  CHECK(target->parameters()[3].to_vector<float>() == std::vector<float>{0.5f, -0.25f});
}

TEST_CASE("load_state_dict reports missing, unexpected and mismatched keys in PyTorch's words") {
  manual_seed(0);
  auto model = nn::make_mlp({4, 3, 2});
  TensorDict state = as_dict(model->state_dict());
  const std::vector<float> before = model->parameters()[0].to_vector<float>();
  state.erase("0.bias");
  state.erase("2.weight");
  state["3.weight"] = tensor<float>({0});
  state["extra"] = tensor<float>({0});
  state["0.weight"] = strata::empty({5, 4});
  // Expected texts: scripts/reference/state_dict_reference.py (PyTorch 1.13).
  CHECK_THROWS_WITH_AS(model->load_state_dict(state),
                       "Error(s) in loading state_dict for Sequential:\n"
                       "\tMissing key(s) in state_dict: \"0.bias\", \"2.weight\". \n"
                       "\tUnexpected key(s) in state_dict: \"3.weight\", \"extra\". \n"
                       "\tsize mismatch for 0.weight: copying a param with shape torch.Size([5, 4]) from checkpoint, "
                       "the shape in current model is torch.Size([3, 4]).",
                       Error);
  CHECK_THROWS_WITH_AS(model->load_state_dict(state, /*strict=*/false),
                       "Error(s) in loading state_dict for Sequential:\n"
                       "\tsize mismatch for 0.weight: copying a param with shape torch.Size([5, 4]) from checkpoint, "
                       "the shape in current model is torch.Size([3, 4]).",
                       Error);
  CHECK(model->parameters()[0].to_vector<float>() == before);  // nothing copied

  TensorDict partial = as_dict(model->state_dict());
  partial.erase("0.bias");
  partial["0.extra.x"] = tensor<float>({0});  // under a child's prefix: unexpected there
  const nn::IncompatibleKeys skipped = model->load_state_dict(partial, false);
  CHECK(skipped.missing_keys == std::vector<std::string>{"0.bias"});
  CHECK(skipped.unexpected_keys == std::vector<std::string>{"0.extra.x"});
  CHECK_THROWS_WITH_AS(model->load_state_dict(partial),
                       "Error(s) in loading state_dict for Sequential:\n"
                       "\tMissing key(s) in state_dict: \"0.bias\". \n"
                       "\tUnexpected key(s) in state_dict: \"0.extra.x\". ",
                       Error);
}

}  // namespace test_state_dict
