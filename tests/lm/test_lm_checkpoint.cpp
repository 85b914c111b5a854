// tests/lm/test_lm_checkpoint.cpp: llama2.c's float32 .bin: the weights read are the generator's, in
// place in the mapping, and damaged, truncated or mismatched files are refused naming the file, the
// tensor and what was expected.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include <strata/core/inference_mode.h>
#include <strata/core/util/error.h>
#include <strata/ops/functions.h>

#include "../../lm/llama2c_checkpoint.h"
#include "../../lm/model.h"
#include "lm_test_files.h"
#include "synthetic_weights.h"

namespace test_lm_checkpoint {

using lm_test_files::checkpoint;

// Whether tensor t holds exactly `expected`, row-major.
bool holds(const strata::Tensor& t, const std::vector<float>& expected) {
  return t.to_vector<float>() == expected;
}

std::string error_of(const std::string& path) {
  try {
    lm::read_llama2c_checkpoint(path);
  } catch (const strata::Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_CASE("a llama2.c checkpoint's weights are the generator's, read in place") {
  for (const char* name : {"tiny", "tiny_gqa"}) {
    CAPTURE(name);
    const lm::Config expected = lm_synthetic::config_named(name);
    const lm::Weights w = lm::read_llama2c_checkpoint(checkpoint(name));
    const lm::Config& c = w.config;
    CHECK(c.dim == expected.dim);
    CHECK(c.hidden_dim == expected.hidden_dim);
    CHECK(c.n_layers == expected.n_layers);
    CHECK(c.n_heads == expected.n_heads);
    CHECK(c.n_kv_heads == expected.n_kv_heads);
    CHECK(c.vocab_size == expected.vocab_size);
    CHECK(c.seq_len == expected.seq_len);
    CHECK(c.tied_output == expected.tied_output);
    CHECK(w.rotary_layout == lm::RotaryLayout::Interleaved);
    CHECK(holds(w.embed, lm_synthetic::matrix("model.embed_tokens.weight", c.vocab_size, c.dim)));
    const std::int64_t last = c.n_layers - 1;
    const lm::LayerWeights& l = w.layers[static_cast<std::size_t>(last)];
    CHECK(holds(l.attn_norm, lm_synthetic::norm(lm_synthetic::layer_name(last, "input_layernorm.weight"), c.dim)));
    CHECK(holds(l.wk, lm_synthetic::matrix(lm_synthetic::layer_name(last, "self_attn.k_proj.weight"), c.kv_dim(), c.dim)));
    CHECK(holds(l.wo, lm_synthetic::matrix(lm_synthetic::layer_name(last, "self_attn.o_proj.weight"), c.dim, c.dim)));
    CHECK(holds(l.w2, lm_synthetic::matrix(lm_synthetic::layer_name(last, "mlp.down_proj.weight"), c.dim, c.hidden_dim)));
    CHECK(holds(l.w3, lm_synthetic::matrix(lm_synthetic::layer_name(last, "mlp.up_proj.weight"), c.hidden_dim, c.dim)));
    CHECK(holds(w.final_norm, lm_synthetic::norm("model.norm.weight", c.dim)));
    if (c.tied_output) {
      CHECK(w.output.is_same(w.embed));
    } else {
      CHECK(holds(w.output, lm_synthetic::matrix("lm_head.weight", c.vocab_size, c.dim)));
    }
    // In place: the seven header ints sit right before the embedding's first float, as in the file.
    const auto* first = reinterpret_cast<const char*>(w.embed.data_ptr<float>());
    std::int32_t header[7];
    std::memcpy(header, first - sizeof header, sizeof header);
    CHECK(header[0] == c.dim);
    CHECK(header[5] == (c.tied_output ? c.vocab_size : -c.vocab_size));
    CHECK(l.w3.data_ptr<float>() - w.embed.data_ptr<float>() ==
          c.vocab_size * c.dim + c.n_layers * (2 * c.dim + 2 * c.dim * c.dim + 2 * c.kv_dim() * c.dim + 2 * c.hidden_dim * c.dim) +
              last * c.hidden_dim * c.dim);
  }
}

TEST_CASE("a write into a mapped weight stays in the process, never in the file") {
  const std::string path = lm_test_files::write_bytes("writable.bin", lm_test_files::read_bytes(checkpoint("tiny")));
  {
    const lm::Weights w = lm::read_llama2c_checkpoint(path);
    const strata::InferenceMode guard(false);
    w.final_norm.fill_(7.0f);
    CHECK(w.final_norm.to_vector<float>()[0] == 7.0f);
  }
  CHECK(lm_test_files::read_bytes(path) == lm_test_files::read_bytes(checkpoint("tiny")));
}

TEST_CASE("a truncated checkpoint names the first tensor that does not fit") {
  const lm::Config c = lm_synthetic::tiny();
  const std::vector<char> bytes = lm_test_files::read_bytes(checkpoint("tiny"));
  REQUIRE(bytes.size() == lm::llama2c_file_size(c));
  struct Case {
    std::size_t size;
    const char* tensor;
  };
  const std::size_t embed_end = 28 + 4 * static_cast<std::size_t>(c.vocab_size * c.dim);
  const Case cases[] = {
      {100, "model.embed_tokens.weight (run.c's token_embedding_table)"},
      {embed_end + 4 * 64 + 8, "model.layers.1.input_layernorm.weight (run.c's rms_att_weight of layer 1)"},
      {bytes.size() - 1, "(legacy rotary table) (run.c's freq_cis_imag)"},
  };
  for (const Case& k : cases) {
    CAPTURE(k.size);
    const std::string path = lm_test_files::write_bytes("truncated.bin", std::vector<char>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(k.size)));
    const std::string message = error_of(path);
    CHECK(message.find(path + ": truncated: " + std::to_string(k.size) + " bytes, but the header (dim 64, hidden_dim 192, "
                       "n_layers 2, n_heads 4, n_kv_heads 4, vocab_size 512 (shared classifier), seq_len 64) needs " +
                       std::to_string(bytes.size())) == 0);
    CHECK(message.find("; tensor " + std::string(k.tensor) + " of ") != std::string::npos);
  }
}

TEST_CASE("a separate classifier missing from the file, or one too many, is refused") {
  // tiny_gqa's header with a positive vocab_size says the classifier is shared: its lm_head is extra.
  const std::string shared = lm_test_files::with_header_field("tiny_gqa", 5, 512, "gqa_shared.bin");
  CHECK(error_of(shared).find(shared + ": 131072 bytes after the last tensor: the header (dim 64") == 0);
  // tiny's with a negative one asks for an lm_head the file does not have.
  const std::string separate = lm_test_files::with_header_field("tiny", 5, -512, "tiny_separate.bin");
  CHECK(error_of(separate).find("; tensor lm_head.weight (run.c's wcls) of 512x64 float32 needs bytes") != std::string::npos);
}

TEST_CASE("a damaged header is refused, naming the field") {
  const std::string zero_heads = lm_test_files::with_header_field("tiny", 3, 0, "zero_heads.bin");
  CHECK(error_of(zero_heads) == zero_heads + ": not a llama2.c checkpoint: header field n_heads is 0, expected a positive "
                                             "number (vocab_size negative for a separate classifier)");
  const std::string odd = lm_test_files::with_header_field("tiny", 3, 3, "three_heads.bin");
  CHECK(error_of(odd) == odd + ": damaged header: dim 64 is not a multiple of n_heads 3");
  const std::string kv = lm_test_files::with_header_field("tiny", 4, 3, "three_kv.bin");
  CHECK(error_of(kv) == kv + ": damaged header: n_heads 4 is not a multiple of n_kv_heads 3");
  const std::string odd_head = lm_test_files::with_header_field("tiny", 3, 64, "odd_head.bin");  // head size 1
  CHECK(error_of(odd_head).find("the head size dim / n_heads = 1 is odd") != std::string::npos);
  // A header asking for more than 2^64 bytes is a truncated file, not an overflow.
  const std::string huge = lm_test_files::with_header_field("tiny", 1, 2147483647, "huge.bin");
  CHECK(error_of(huge).find(huge + ": truncated: ") == 0);
  const std::string magic = lm_test_files::with_header_field("tiny", 0, 0x616b3432, "v2.bin");
  CHECK(error_of(magic).find("a llama2.c version-192 checkpoint (magic \"ak42\")") != std::string::npos);
}

TEST_CASE("missing, empty and short files are refused") {
  const std::string missing = lm_test_files::temp_path("no-such.bin");
  CHECK(error_of(missing) == missing + ": cannot open: No such file or directory");
  const std::string empty = lm_test_files::write_bytes("empty.bin", {});
  CHECK(error_of(empty) == empty + ": 0 bytes, too short for a llama2.c checkpoint (a 28-byte header of seven int32, then "
                                   "float32 weights)");
  CHECK(error_of(lm_test_files::temp_dir().string()) == lm_test_files::temp_dir().string() + ": not a regular file");
}

}  // namespace test_lm_checkpoint
