// tests/lm/test_hf_checkpoint.cpp: Hugging Face folders (config.json, model.safetensors in float32,
// float16 and bfloat16, Hugging Face's rotary layout) give PyTorch's logits, and damaged folders give
// errors naming the file, the tensor and what was expected; tokenizer.model encodes and decodes as
// SentencePiece does.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>

#include <nlohmann/json.hpp>

#include "../../lm/cli.h"
#include "../../lm/hf_checkpoint.h"
#include "../../lm/model.h"
#include "../../lm/sentencepiece_tokenizer.h"
#include "hf_folder_writer.h"
#include "lm_test_files.h"

namespace test_hf_checkpoint {

namespace fs = std::filesystem;

// A folder of its own under the process's temporary folder, removed when done.
struct TempFolder {
  fs::path path = lm_test_files::temp_path("hf-" + std::to_string(counter()++));
  ~TempFolder() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  static int& counter() {
    static int n = 0;
    return n;
  }
};

nlohmann::json read_golden_json(const std::string& name) {
  std::ifstream in(std::string(STRATA_GOLDEN_DIR) + "/" + name);
  REQUIRE_MESSAGE(in.is_open(), "missing golden tests/golden/" << name);
  return nlohmann::json::parse(in);
}

std::string tokenizer_model() { return std::string(STRATA_LM_DATA_DIR) + "/tok512.model"; }

double max_abs_diff(const strata::Tensor& t, const std::vector<double>& expected) {
  const strata::Tensor c = t.contiguous();
  REQUIRE(c.numel() == static_cast<std::int64_t>(expected.size()));
  double worst = 0;
  for (std::size_t i = 0; i < expected.size(); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(c.data_ptr<float>()[i]) - expected[i]));
  return worst;
}

// The golden's logits at its positions, and its argmax everywhere, from one batched pass and from a
// token-at-a-time decode.
void check_against_golden(lm::Model& model, const nlohmann::json& golden) {
  const std::vector<int> tokens = golden["tokens"].get<std::vector<int>>();
  const strata::Tensor all = model.forward(tokens, 0, lm::Logits::All).clone();
  const auto positions = golden["positions"].get<std::vector<std::int64_t>>();
  for (std::size_t k = 0; k < positions.size(); ++k) {
    const auto expected = golden["logits"][k].get<std::vector<double>>();
    const strata::Tensor row = all.select(0, positions[k]).narrow(0, 0, static_cast<std::int64_t>(expected.size()));
    CHECK(max_abs_diff(row, expected) <= 1e-4);
  }
  const auto argmax = golden["argmax"].get<std::vector<std::int64_t>>();
  for (std::size_t p = 0; p < tokens.size(); ++p) {
    CHECK(all.select(0, static_cast<std::int64_t>(p)).argmax().item<std::int64_t>() == argmax[p]);
  }
  for (std::size_t p = 0; p < tokens.size(); ++p) {
    const strata::Tensor last = model.forward(std::span<const int>(&tokens[p], 1), static_cast<std::int64_t>(p));
    CHECK(last.argmax().item<std::int64_t>() == argmax[p]);
    for (std::size_t k = 0; k < positions.size(); ++k) {
      if (positions[k] != static_cast<std::int64_t>(p)) continue;
      const auto expected = golden["logits"][k].get<std::vector<double>>();
      CHECK(max_abs_diff(last.narrow(0, 0, static_cast<std::int64_t>(expected.size())), expected) <= 1e-4);
    }
  }
}

TEST_CASE("a Hugging Face folder gives PyTorch's logits in float32, float16 and bfloat16") {
  const std::pair<const char*, strata::ScalarType> dtypes[] = {
      {"", strata::kFloat32}, {"_float16", strata::kFloat16}, {"_bfloat16", strata::kBFloat16}};
  for (const char* name : {"tiny", "tiny_gqa"}) {
    for (const auto& dtype : dtypes) {
      CAPTURE(name);
      CAPTURE(dtype.first);
      TempFolder folder;
      lm_synthetic::write_hf_folder(folder.path, lm_synthetic::config_named(name), dtype.second);
      REQUIRE(lm::is_hf_folder(folder.path.string()));
      lm::Weights weights = lm::read_hf_checkpoint(folder.path.string());
      CHECK(weights.rotary_layout == lm::RotaryLayout::HalfSplit);
      CHECK(weights.layers[0].wq.dtype() == strata::kFloat32);
      lm::Model model(std::move(weights));
      check_against_golden(model, read_golden_json(std::string("lm/") + name + dtype.first + "_logits.json"));
    }
  }
}

std::string error_of(const fs::path& folder) {
  try {
    lm::read_hf_checkpoint(folder.string());
  } catch (const strata::Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_CASE("damaged Hugging Face folders are refused, naming the file, the tensor and what was expected") {
  const lm::Config c = lm_synthetic::tiny_gqa();
  TempFolder folder;
  fs::create_directories(folder.path);
  const fs::path weights = folder.path / "model.safetensors";
  lm_synthetic::write_text(folder.path / "config.json", lm_synthetic::hf_config_json(c, strata::kFloat32).dump());
  auto rewrite = [&](const std::function<void(strata::TensorDict&)>& damage) {
    strata::TensorDict tensors = lm_synthetic::hf_tensors(c, strata::kFloat32);
    damage(tensors);
    strata::save_safetensors(weights.string(), tensors);
    return error_of(folder.path);
  };
  CHECK(error_of(folder.path).find("has neither model.safetensors") != std::string::npos);
  std::string e = rewrite([](strata::TensorDict& t) { t.erase("model.layers.1.mlp.up_proj.weight"); });
  CHECK(e.find("has no tensor model.layers.1.mlp.up_proj.weight") != std::string::npos);
  e = rewrite([](strata::TensorDict& t) {
    t["model.layers.0.self_attn.k_proj.weight"] = strata::zeros({32, 64});
  });
  CHECK(e.find("model.layers.0.self_attn.k_proj.weight has shape [32, 64], expected [16, 64]") != std::string::npos);
  e = rewrite([](strata::TensorDict& t) { t["model.norm.weight"] = strata::zeros({64}, {strata::kInt64, std::nullopt}); });
  CHECK(e.find("model.norm.weight is int64, expected float32, float16 or bfloat16") != std::string::npos);
  e = rewrite([](strata::TensorDict& t) { t["model.layers.2.mlp.up_proj.weight"] = strata::zeros({1}); });
  CHECK(e.find("holds model.layers.2.mlp.up_proj.weight, which a Llama model of this config.json does not have") !=
        std::string::npos);
  e = rewrite([](strata::TensorDict& t) { t["model.layers.0.self_attn.rotary_emb.inv_freq"] = strata::zeros({4}); });
  CHECK(e == "(no error)");
}

TEST_CASE("config.json: what strata-lm cannot run is named") {
  const nlohmann::json good = lm_synthetic::hf_config_json(lm_synthetic::tiny_gqa(), strata::kFloat32);
  const lm::Config c = lm::parse_hf_config(good.dump(), "cfg");
  CHECK(c.dim == 64);
  CHECK(c.n_kv_heads == 2);
  CHECK(!c.tied_output);
  auto error_with = [&](const char* key, const nlohmann::json& value) {
    nlohmann::json changed = good;
    if (value.is_discarded()) changed.erase(key);
    else changed[key] = value;
    try {
      lm::parse_hf_config(changed.dump(), "cfg");
    } catch (const strata::Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(error_with("model_type", "gpt2").find("\"model_type\" is \"gpt2\"") != std::string::npos);
  CHECK(error_with("rope_scaling", {{"type", "linear"}}).find("unscaled rotary") != std::string::npos);
  CHECK(error_with("hidden_size", nlohmann::json::value_t::discarded).find("has no \"hidden_size\"") != std::string::npos);
  CHECK(error_with("num_key_value_heads", 3).find("multiple of num_key_value_heads 3") != std::string::npos);
  CHECK(error_with("vocab_size", -5).find("\"vocab_size\" must be a positive integer, got -5") != std::string::npos);
  CHECK(error_with("attention_bias", true).find("no biases") != std::string::npos);
  CHECK(error_with("head_dim", 16).find("\"head_dim\" is 16") != std::string::npos);
  CHECK(error_with("num_key_value_heads", nullptr) == "(no error)");
  CHECK_THROWS_WITH_AS(lm::parse_hf_config("{\"hidden_size\": ", "cfg"), doctest::Contains("cfg"), strata::Error);
}

TEST_CASE("tokenizer.model encodes and decodes as SentencePiece does") {
  const nlohmann::json golden = read_golden_json("lm/tokenizer.json");
  const lm::SentencePieceTokenizer tokenizer = lm::SentencePieceTokenizer::load(tokenizer_model(), 512);
  for (const auto& entry : golden["cases"]) {
    const std::string text = entry["text"].get<std::string>();
    CAPTURE(text);
    const std::vector<int> ids = entry["sentencepiece_ids"].get<std::vector<int>>();
    CHECK(tokenizer.encode(text, false, false) == ids);
    std::vector<int> with_bos = tokenizer.encode(text, true, true);
    CHECK(with_bos.front() == 1);
    CHECK(with_bos.back() == 2);
    std::string streamed;
    int prev = tokenizer.bos_id();
    for (const int id : ids) {
      streamed += tokenizer.decode(prev, id);
      prev = id;
    }
    CHECK(streamed == entry["sentencepiece_decoded"].get<std::string>());
  }
  CHECK_THROWS_WITH_AS(lm::SentencePieceTokenizer::load(tokenizer_model(), 32000),
                       doctest::Contains("has 512 pieces, but the model's vocabulary has 32000"), strata::Error);
  CHECK_THROWS_WITH_AS(lm::SentencePieceTokenizer::load(std::string(STRATA_GOLDEN_DIR) + "/lm/tokenizer.json", 512),
                       doctest::Contains("cannot read the SentencePiece model"), strata::Error);
}

// strata-lm MODEL with a folder: the model is read from it, and its tokenizer.model is the default.
// The folder holds tiny_gqa's weights, so with tok512.bin (tok512.model's pieces in run.c's format)
// the text is run.c's on the .bin, byte for byte. With the folder's tokenizer.model the tokens are
// the same, but SentencePiece prints the byte pieces (lone bytes of two-byte characters, a control
// byte) that run.c's safe_printf drops: without its bytes that are not printable ASCII (or
// whitespace) the text is run.c's again.
TEST_CASE("strata-lm runs a Hugging Face folder as run.c runs the same weights") {
  TempFolder folder;
  lm_synthetic::write_hf_folder(folder.path, lm_synthetic::config_named("tiny_gqa"), strata::kFloat32, tokenizer_model());
  std::ifstream golden_in(std::string(STRATA_GOLDEN_DIR) + "/lm/runc_tiny_gqa_greedy.txt", std::ios::binary);
  const std::string runc((std::istreambuf_iterator<char>(golden_in)), std::istreambuf_iterator<char>());
  REQUIRE(!runc.empty());
  auto run = [&](std::vector<std::string> tokenizer_args) {
    std::vector<std::string> args{folder.path.string(), "-i", "Once upon a time", "-n", "40", "-t", "0"};
    args.insert(args.end(), tokenizer_args.begin(), tokenizer_args.end());
    std::ostringstream out, err;
    CHECK(lm::run_cli(args, out, err) == 0);
    return out.str();
  };
  CHECK(run({"-z", std::string(STRATA_LM_DATA_DIR) + "/tok512.bin"}) == runc);
  const std::string sentencepiece = run({});
  std::string ascii;
  std::copy_if(sentencepiece.begin(), sentencepiece.end(), std::back_inserter(ascii), [](char ch) {
    const auto byte = static_cast<unsigned char>(ch);
    return byte < 0x80 && (std::isprint(byte) || std::isspace(byte));
  });
  CHECK(sentencepiece != runc);  // the byte pieces are printed
  CHECK(ascii == runc);
  std::ostringstream out, err;
  fs::remove(folder.path / "tokenizer.model");
  const std::vector<std::string> no_tokenizer{folder.path.string(), "-n", "4", "-t", "0"};
  CHECK(lm::run_cli(no_tokenizer, out, err) == 2);
  CHECK(err.str().find("tokenizer.model") != std::string::npos);
}

}  // namespace test_hf_checkpoint
