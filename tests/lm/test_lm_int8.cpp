// tests/lm/test_lm_int8.cpp: strata-lm's int8 path (Note [ScaledTensor groups]): the grouped ScaledTensor's
// quantization, float value, views and runq.c's product against loops written here; the int8 logits
// against the reference's runq.c arithmetic (tests/golden/lm/*_q80_logits.json) from a version-2 `.bin`
// written here, from --int8 on a float `.bin` and on a Hugging Face folder; the distance from the float
// model; damaged version-2 files; --int8 on the command line.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <strata/core/inference_mode.h>
#include <strata/core/util/error.h>
#include <strata/modes/scaled_tensor.h>
#include <strata/ops/functions.h>

#include "../../lm/cli.h"
#include "../../lm/llama2c_q80_checkpoint.h"
#include "../../lm/mapped_file.h"
#include "../../lm/model.h"
#include "hf_folder_writer.h"
#include "lm_test_files.h"
#include "q80_writer.h"

namespace test_lm_int8 {

using nlohmann::json;
using strata::Tensor;
using strata::tracer::ScaledTensor;

// Tolerances, argued in docs/int8.md ("How close"):
// - against the goldens' runq.c arithmetic: the integer dots are exact and the float32 sums run in
//   runq.c's order, so what differs is strata's float32 rounding elsewhere (norms, rotary, softmax; the
//   float model is within 1e-6 of PyTorch). Such a difference can move one activation across a
//   rounding boundary of its quantization, changing that value by one step, s_x = max|x| / 127; the
//   logits move by s_x times a weight, far below 1e-3 here. 2e-4 covers it with room.
constexpr double kRunqTolerance = 2e-4;
// - against the float model: the goldens' own runq-vs-float distance is 0.0144 (tiny) and 0.0163
//   (tiny_gqa) for logits up to 1.9: Q8_0 rounds each weight and activation by up to half a step of
//   1/127 of its group's max. 0.03 is about twice that, and 1.6% of the largest logit.
constexpr double kFloatTolerance = 0.03;

json golden(const std::string& name) {
  std::ifstream in(std::string(STRATA_GOLDEN_DIR) + "/lm/" + name);
  REQUIRE_MESSAGE(in.is_open(), "missing golden tests/golden/lm/" << name);
  return json::parse(in);
}

const std::string kTok512 = std::string(STRATA_LM_DATA_DIR) + "/tok512.bin";

// The version-2 file of config `name`, written once (groups of 64 unless `group` says otherwise).
std::string q80_checkpoint(const std::string& name, std::int64_t group = 0) {
  const std::string path = lm_test_files::temp_path(name + "_q80_g" + std::to_string(group) + ".bin");
  if (!std::ifstream(path).good()) lm_synthetic::write_llama2c_q80_bin(path, lm_synthetic::config_named(name), group);
  return path;
}

std::string hf_folder(const std::string& name) {
  const std::string path = lm_test_files::temp_path(name + "_hf");
  if (!std::ifstream(path + "/config.json").good())
    lm_synthetic::write_hf_folder(path, lm_synthetic::config_named(name), strata::ScalarType::Float32);
  return path;
}

struct Distance {
  double worst = 0;             // the largest |strata - golden| over the golden's positions
  int argmax_mismatches = 0;    // positions (batched or stepped) whose argmax is not the golden's
};

// The model's logits, batched and token by token, against `logits_key` at the golden's positions and
// `argmax_key` at every position.
Distance distance(lm::Model& model, const json& g, const char* logits_key, const char* argmax_key) {
  const std::vector<int> tokens = g["tokens"].get<std::vector<int>>();
  const auto positions = g["positions"].get<std::vector<std::int64_t>>();
  const auto argmax = g[argmax_key].get<std::vector<std::int64_t>>();
  REQUIRE(argmax.size() == tokens.size());
  const Tensor all = model.forward(tokens, 0, lm::Logits::All).clone();
  std::vector<Tensor> steps;
  for (std::size_t i = 0; i < tokens.size(); ++i)
    steps.push_back(model.forward(std::span<const int>(tokens).subspan(i, 1), static_cast<std::int64_t>(i)).clone());
  Distance d;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    d.argmax_mismatches += all.select(0, static_cast<std::int64_t>(i)).argmax().item<std::int64_t>() != argmax[i];
    d.argmax_mismatches += steps[i].argmax().item<std::int64_t>() != argmax[i];
  }
  for (std::size_t k = 0; k < positions.size(); ++k) {
    const auto expected = g[logits_key][k].get<std::vector<double>>();
    const std::vector<float> batched = all.select(0, positions[k]).to_vector<float>();
    const std::vector<float> stepped = steps[static_cast<std::size_t>(positions[k])].to_vector<float>();
    for (std::size_t j = 0; j < expected.size(); ++j)
      d.worst = std::max({d.worst, std::abs(batched[j] - expected[j]), std::abs(stepped[j] - expected[j])});
  }
  return d;
}

// ---- the grouped ScaledTensor ----

float round_away(float v) { return std::round(v); }
float round_even(float v) { return std::nearbyint(v); }
std::vector<std::int64_t> sizes_of(const Tensor& t) { return {t.sizes().begin(), t.sizes().end()}; }

// runq.c's matmul written out: x quantized per group (C's round(), half away from zero, unless
// `round` says otherwise), int32 dots, float32 sums in group order.
std::vector<float> runq_product(const std::vector<float>& x, std::int64_t n, const lm_synthetic::Q80& w,
                                std::int64_t m, std::int64_t k, std::int64_t group, float (*round)(float) = round_away) {
  std::vector<float> out(static_cast<std::size_t>(n * m));
  for (std::int64_t t = 0; t < n; ++t) {
    std::vector<std::int8_t> xq(static_cast<std::size_t>(k));
    std::vector<float> xs(static_cast<std::size_t>(k / group));
    for (std::int64_t g = 0; g < k / group; ++g) {
      float amax = 0;
      for (std::int64_t i = 0; i < group; ++i) amax = std::max(amax, std::fabs(x[t * k + g * group + i]));
      xs[g] = amax / 127.0f;
      for (std::int64_t i = 0; i < group; ++i)
        xq[g * group + i] = static_cast<std::int8_t>(xs[g] == 0 ? 0 : round(x[t * k + g * group + i] / xs[g]));
    }
    for (std::int64_t i = 0; i < m; ++i) {
      float val = 0;
      for (std::int64_t g = 0; g < k / group; ++g) {
        std::int32_t dot = 0;
        for (std::int64_t j = g * group; j < (g + 1) * group; ++j) dot += xq[j] * w.values[i * k + j];
        val += static_cast<float>(dot) * w.scales[i * (k / group) + g] * xs[g];
      }
      out[t * m + i] = val;
    }
  }
  return out;
}

TEST_CASE("grouped ScaledTensor: export.py's quantization, float value, views and runq.c's product") {
  const strata::InferenceMode guard;
  const std::int64_t m = 5, k = 128, n = 3, group = 64;
  std::vector<float> w = lm_synthetic::matrix("test.w", m, k), x = lm_synthetic::uniform("test.x", n * k);
  // Ties: a group whose max is 127 has scale 1, so 2.5 is a tie. Weights round it to even (2),
  // activations away from zero (3). One weight group is all zeros (scale 0).
  w[0] = 127, w[1] = 2.5f, w[2] = -2.5f;
  std::fill(w.begin() + k + group, w.begin() + 2 * k, 0.0f);
  x[0] = 127, x[1] = 2.5f, x[2] = -2.5f;
  const lm_synthetic::Q80 expected = lm_synthetic::quantize_q80(w, group);
  const Tensor wt = strata::tensor(w, {m, k});
  const Tensor q = ScaledTensor::from_float_grouped(wt, group);
  const ScaledTensor* s = ScaledTensor::of(q);
  REQUIRE(s != nullptr);
  CHECK(s->grouped());
  CHECK(s->group_size() == group);
  CHECK(s->group_dim() == 1);
  CHECK(sizes_of(q) == std::vector<std::int64_t>{m, k});
  CHECK(s->data().to_vector<std::int8_t>() == expected.values);
  CHECK(s->scale().to_vector<float>() == expected.scales);
  CHECK(s->data().to_vector<std::int8_t>()[1] == 2);
  CHECK(s->scale().to_vector<float>()[3] == 0.0f);
  std::vector<float> dequantized(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) dequantized[i] = expected.values[i] * expected.scales[i / group];
  CHECK(ScaledTensor::to_float(q).to_vector<float>() == dequantized);
  // t() moves the groups to dim 0; mm against it is runq.c's product, bit for bit.
  const Tensor qt = q.t();
  REQUIRE(ScaledTensor::of(qt) != nullptr);
  CHECK(ScaledTensor::of(qt)->group_dim() == 0);
  const std::vector<float> runq = runq_product(x, n, expected, m, k, group);
  const Tensor product = strata::mm(strata::tensor(x, {n, k}), qt);
  CHECK(product.subclass() == nullptr);
  CHECK(product.to_vector<float>() == runq);
  CHECK(strata::mm(strata::tensor(x, {n, k}).narrow(0, 1, 1), qt).to_vector<float>() ==
        std::vector<float>(runq.begin() + m, runq.begin() + 2 * m));
  // Rounding the activations' ties to even would change the first output: the check sees the rule.
  CHECK(runq_product(x, n, expected, m, k, group, round_even)[0] != runq[0]);
  const Tensor bias = strata::tensor(std::vector<float>{1, 2, 3, 4, 5}, {m});
  const std::vector<float> with_bias = strata::addmm(bias, strata::tensor(x, {n, k}), qt).to_vector<float>();
  for (std::int64_t i = 0; i < n * m; ++i) CHECK(with_bias[i] == runq[i] + static_cast<float>(i % m + 1));
  // transpose back is the weight again; embedding dequantizes the rows it picks.
  CHECK(ScaledTensor::of(qt.transpose(0, 1))->group_dim() == 1);
  const Tensor rows = strata::embedding(q, strata::tensor(std::vector<std::int64_t>{4, 0, 4}, {3}));
  CHECK(sizes_of(rows) == std::vector<std::int64_t>{3, k});
  CHECK(rows.select(0, 1).to_vector<float>() == std::vector<float>(dequantized.begin(), dequantized.begin() + k));
  CHECK(rows.select(0, 2).to_vector<float>() == std::vector<float>(dequantized.begin() + 4 * k, dequantized.end()));
  // Other ops see the float value.
  CHECK(strata::sum(q).item<double>() == doctest::Approx(strata::sum(strata::tensor(dequantized, {m, k})).item<double>()));
  CHECK(s->repr(q).find("group_size=64, group_dim=1") != std::string::npos);
}

TEST_CASE("grouped ScaledTensor: bad operands are refused") {
  CHECK_THROWS_WITH_AS(ScaledTensor::from_float_grouped(strata::zeros({2, 96}), 64),
                       "ScaledTensor: grouped quantization: 96 columns are not a whole number of groups of 64",
                       strata::Error);
  CHECK_THROWS_WITH_AS(ScaledTensor::from_float_grouped(strata::full({1, 4}, INFINITY), 2),
                       "ScaledTensor: grouped quantization of a tensor holding inf at element 0 (a non-finite value has "
                       "no scale)",
                       strata::Error);
  CHECK_THROWS_WITH_AS(ScaledTensor::from_float_grouped(strata::zeros({1, 1 << 17}), 1 << 17),
                       "ScaledTensor: grouped quantization: the group size must be 1 to 65536 (a group's int32 dot must "
                       "not overflow), got 131072",
                       strata::Error);
  const Tensor data = strata::zeros({2, 8}, {strata::ScalarType::Int8, std::nullopt});
  CHECK_THROWS_WITH_AS(ScaledTensor::wrap_grouped(data, strata::zeros({2, 3}), 4),
                       "ScaledTensor: the scales of int8 [2, 8] in groups of 4 along dim 1 must be a plain float32 [2, 2] "
                       "on the data's device",
                       strata::Error);
  const Tensor q = ScaledTensor::wrap_grouped(data, strata::zeros({2, 2}), 4);
  CHECK_THROWS_WITH_AS(strata::mm(strata::zeros({1, 4}), q.t()),
                       "[aten::mm] ScaledTensor: grouped mm: expected a float32 [n, 8] left operand for a grouped [8, 2] right "
                       "operand, got float32 [1, 4]",
                       strata::Error);
}

// ---- the model ----

TEST_CASE("int8 logits equal runq.c's arithmetic: a version-2 .bin, --int8 on a float .bin and on an HF folder") {
  for (const char* name : {"tiny", "tiny_gqa"}) {
    CAPTURE(name);
    const json g = golden(std::string(name) + "_q80_logits.json");
    for (const std::string& source : {q80_checkpoint(name), lm_test_files::checkpoint(name), hf_folder(name)}) {
      CAPTURE(source);
      lm::Model model = lm::Model::load(source, /*int8=*/true);
      CHECK(model.weights().group_size == 64);
      const Distance d = distance(model, g, "logits", "argmax");
      CHECK(d.worst < kRunqTolerance);
      CHECK(d.argmax_mismatches == 0);
      MESSAGE(std::string(name), " from ", source, ": max |strata - runq golden| = ", d.worst);
    }
  }
}

TEST_CASE("int8 logits are within 0.03 of the float model's, with its argmax at every position") {
  for (const char* name : {"tiny", "tiny_gqa"}) {
    CAPTURE(name);
    lm::Model model = lm::Model::load(q80_checkpoint(name));
    const Distance d = distance(model, golden(std::string(name) + "_logits.json"), "logits", "argmax");
    CHECK(d.worst < kFloatTolerance);
    CHECK(d.worst > 1e-3);  // it is the int8 path
    CHECK(d.argmax_mismatches == 0);
    // Groups of 32 (what export.py picks for stories15M's dim 288) are read and run too. (Their
    // argmax can differ from the float model's where its top two are close: tiny_gqa, one position.)
    lm::Model g32 = lm::Model::load(q80_checkpoint(name, 32));
    CHECK(g32.weights().group_size == 32);
    const Distance d32 = distance(g32, golden(std::string(name) + "_logits.json"), "logits", "argmax");
    CHECK(d32.worst < kFloatTolerance);
    MESSAGE(std::string(name), ": max |int8 - float| = ", d.worst, " (groups of 64), ", d32.worst, " (groups of 32, ",
            d32.argmax_mismatches, " argmax differences over 48 batched and stepped positions)");
  }
}

TEST_CASE("a version-2 .bin is read in place: header fields, shared classifier, group size, values") {
  for (const char* name : {"tiny", "tiny_gqa"}) {
    CAPTURE(name);
    const lm::Config c = lm_synthetic::config_named(name);
    const lm::Weights w = lm::read_llama2c_q80_checkpoint(q80_checkpoint(name));
    CHECK(w.config.dim == c.dim);
    CHECK(w.config.hidden_dim == c.hidden_dim);
    CHECK(w.config.n_kv_heads == c.n_kv_heads);
    CHECK(w.config.vocab_size == c.vocab_size);
    CHECK(w.config.tied_output == c.tied_output);
    CHECK(w.output.is_same(w.embed) == c.tied_output);
    CHECK(w.group_size == 64);
    const ScaledTensor* w2 = ScaledTensor::of(w.layers[1].w2);
    REQUIRE(w2 != nullptr);
    const lm_synthetic::Q80 expected =
        lm_synthetic::quantize_q80(lm_synthetic::matrix(lm_synthetic::layer_name(1, "mlp.down_proj.weight"), c.dim, c.hidden_dim), 64);
    CHECK(w2->data().to_vector<std::int8_t>() == expected.values);
    CHECK(w2->scale().to_vector<float>() == expected.scales);
    CHECK(w.layers[0].attn_norm.to_vector<float>() == lm_synthetic::norm(lm_synthetic::layer_name(0, "input_layernorm.weight"), c.dim));
    // In place: the values and scales are bytes of the mapping, not copies.
    const auto* file = static_cast<const lm::MappedFile*>(w.backing.get());
    REQUIRE(file != nullptr);
    const auto* values = static_cast<const std::byte*>(w2->data().raw_data());
    const auto* scales = static_cast<const std::byte*>(w2->scale().raw_data());
    CHECK((values > file->data() && values < file->data() + file->size()));
    CHECK((scales > values && scales < file->data() + file->size()));
  }
  lm::Model tiny = lm::Model::load(q80_checkpoint("tiny"));
  const std::uint64_t float_bytes = lm::Model::load(lm_test_files::checkpoint("tiny")).weight_bytes_per_token();
  CHECK(tiny.weight_bytes_per_token() < float_bytes / 3);
}

std::string error_of(const std::string& path) {
  try {
    lm::Model::load(path);
  } catch (const strata::Error& e) {
    return e.what();
  }
  return "(no error)";
}

// A copy of the tiny version-2 file with `bytes` written at `offset`.
template <typename T>
std::string patched(const std::string& file, std::size_t offset, T value) {
  std::vector<char> bytes = lm_test_files::read_bytes(q80_checkpoint("tiny"));
  std::memcpy(bytes.data() + offset, &value, sizeof value);
  return lm_test_files::write_bytes(file, bytes);
}

TEST_CASE("damaged version-2 files are refused, naming the file and what was expected") {
  const std::string v3 = patched("v3.bin", 4, std::int32_t{3});
  CHECK(error_of(v3) == v3 + ": a llama2.c version-3 checkpoint (magic \"ak42\"); expected version 2 (int8, export.py "
                             "--version 2) or a float32 version-0 .bin (no magic)");
  const std::string magic = patched("magic.bin", 0, std::uint32_t{0x12345678});
  std::string message;
  try {
    lm::read_llama2c_q80_checkpoint(magic);
  } catch (const strata::Error& e) {
    message = e.what();
  }
  CHECK(message == magic + ": not a llama2.c version-2 checkpoint: magic 0x12345678, expected 0x616b3432 (\"ak42\")");
  for (const std::int32_t group : {0, -64, 48, 128, 1 << 17}) {
    CAPTURE(group);
    const std::string bad = patched("group.bin", 37, group);
    CHECK(error_of(bad) == bad + ": damaged version-2 header: group size " + std::to_string(group) +
                               " does not divide dim 64 and hidden_dim 192 (expected 1 to 65536, dividing both; "
                               "export.py uses 64, halved until it divides dim)");
  }
  const std::string shared = patched("shared.bin", 36, std::uint8_t{2});
  CHECK(error_of(shared) == shared + ": damaged version-2 header: shared_classifier is 2, expected 0 or 1");
  const std::string vocab = patched("vocab.bin", 8 + 4 * 5, std::int32_t{-512});
  CHECK(error_of(vocab) == vocab + ": damaged version-2 header: vocab_size is -512, expected a positive number");
  const std::string heads = patched("heads.bin", 8 + 4 * 3, std::int32_t{3});
  CHECK(error_of(heads) == heads + ": damaged header: dim 64 is not a multiple of n_heads 3");
  // A valid group size of another file: the sizes no longer match.
  const std::string g32 = patched("g32.bin", 37, std::int32_t{32});
  CHECK(error_of(g32).find(g32 + ": truncated: ") == 0);
  // Unshared flag on a tied file: the classifier is missing.
  const std::string unshared = patched("unshared.bin", 36, std::uint8_t{0});
  CHECK(error_of(unshared).find("tensor lm_head.weight (runq.c's wcls, 512x64 int8 and its scales) needs bytes") !=
        std::string::npos);
  std::vector<char> bytes = lm_test_files::read_bytes(q80_checkpoint("tiny"));
  const std::size_t full = bytes.size();
  bytes.resize(full - 100);
  const std::string truncated = lm_test_files::write_bytes("truncated.bin", bytes);
  CHECK(error_of(truncated) == truncated + ": truncated: " + std::to_string(full - 100) + " bytes, but the header (dim 64, "
                                   "hidden_dim 192, n_layers 2, n_heads 4, n_kv_heads 4, vocab_size 512 (shared classifier), "
                                   "seq_len 64, group size 64) needs " + std::to_string(full) + "; tensor "
                                   "model.layers.1.mlp.up_proj.weight (runq.c's w3 of layer 1, 192x64 int8 and its scales) "
                                   "needs bytes " + std::to_string(full - 192 * 64 - 192 * 4) + " to " + std::to_string(full));
  bytes.resize(full + 3);
  const std::string trailing = lm_test_files::write_bytes("trailing.bin", bytes);
  CHECK(error_of(trailing).find(trailing + ": 3 bytes after the last tensor") == 0);
  bytes.resize(100);
  const std::string short_file = lm_test_files::write_bytes("short.bin", bytes);
  CHECK(error_of(short_file) == short_file + ": 100 bytes, too short for a llama2.c version-2 checkpoint (a 256-byte "
                                             "header, then the weights)");
}

// ---- the command line ----

struct Run {
  int code;
  std::string out, err;
};

Run run(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = lm::run_cli(args, out, err);
  return {code, out.str(), err.str()};
}

TEST_CASE("--int8 on the command line runs the version-2 file's model") {
  for (const char* name : {"tiny", "tiny_gqa"}) {
    CAPTURE(name);
    const std::vector<std::string> flags = {"-z", kTok512, "-i", "Once upon a time", "-n", "40", "-t", "0"};
    auto with = [&](std::vector<std::string> args) {
      args.insert(args.end(), flags.begin(), flags.end());
      return run(args);
    };
    const Run v2 = with({q80_checkpoint(name)});
    const Run quantized = with({lm_test_files::checkpoint(name), "--int8"});
    const Run v2_again = with({"--int8", q80_checkpoint(name)});  // already int8: the same
    CHECK(v2.code == 0);
    CHECK(quantized.code == 0);
    CHECK(v2.out.size() > std::string("Once upon a time\n").size());
    CHECK(quantized.out == v2.out);
    CHECK(v2_again.out == v2.out);
    CHECK(quantized.err.rfind("achieved tok/s: ", 0) == 0);
  }
  const Run hf = run({hf_folder("tiny_gqa"), "--int8", "-z", kTok512, "-n", "20", "-t", "0"});
  CHECK(hf.code == 0);
  CHECK(hf.out == run({q80_checkpoint("tiny_gqa"), "-z", kTok512, "-n", "20", "-t", "0"}).out);
  const Run bad = run({patched("cli_v3.bin", 4, std::int32_t{3}), "-z", kTok512});
  CHECK(bad.code == 2);
  CHECK(bad.err.find("a llama2.c version-3 checkpoint") != std::string::npos);
  CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
}

}  // namespace test_lm_int8
