// lm/fake_model.cpp: the model of a config under FakeTensorMode, and its report.
#include "fake_model.h"

#include <cstdio>
#include <set>
#include <vector>

#include <strata/core/interpose/interposer.h>
#include <strata/core/util/error.h>
#include <strata/modes/fake_tensor.h>
#include <strata/ops/functions.h>

#include "model.h"

namespace lm {

namespace {

// Weights of `config`'s shapes, made under the active FakeTensorMode: fakes, no data.
Weights fake_weights(const Config& c) {
  const strata::TensorOptions f32{strata::ScalarType::Float32, std::nullopt};
  const auto make = [&](std::vector<std::int64_t> shape) { return strata::empty(shape, f32); };
  const std::int64_t hs = c.head_size();
  Weights w;
  w.config = c;
  w.rotary_layout = RotaryLayout::HalfSplit;
  w.source = "FakeTensorMode";
  w.embed = make({c.vocab_size, c.dim});
  for (std::int64_t l = 0; l < c.n_layers; ++l) {
    LayerWeights layer;
    layer.attn_norm = make({c.dim});
    layer.wq = make({c.n_heads * hs, c.dim});
    layer.wk = make({c.n_kv_heads * hs, c.dim});
    layer.wv = make({c.n_kv_heads * hs, c.dim});
    layer.wo = make({c.dim, c.n_heads * hs});
    layer.ffn_norm = make({c.dim});
    layer.w1 = make({c.hidden_dim, c.dim});
    layer.w2 = make({c.dim, c.hidden_dim});
    layer.w3 = make({c.hidden_dim, c.dim});
    w.layers.push_back(std::move(layer));
  }
  w.final_norm = make({c.dim});
  w.output = c.tied_output ? w.embed : make({c.vocab_size, c.dim});
  return w;
}

std::string with_units(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t u = 0;
  while (bytes >= 1024 && u + 1 < std::size(units)) bytes /= 1024, ++u;
  char text[32];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.2f %s", bytes, units[u]);
  return text;
}

}  // namespace

std::int64_t parameter_count(const Weights& weights) {
  std::set<const void*> seen;  // by TensorImpl: a tied head is the embedding itself
  std::int64_t total = 0;
  const auto add = [&](const strata::Tensor& t) {
    if (t.defined() && seen.insert(t.impl()).second) total += t.numel();
  };
  add(weights.embed);
  for (const LayerWeights& l : weights.layers)
    for (const strata::Tensor* t : {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.ffn_norm, &l.w1, &l.w2, &l.w3}) add(*t);
  add(weights.final_norm);
  add(weights.output);
  return total;
}

FakeModelReport inspect_fake_model(const Config& config, std::int64_t context) {
  STRATA_CHECK(context >= 1 && context <= config.seq_len, "strata-lm: --fake counts a decode step attending to 1 to ",
               config.seq_len, " positions (max_position_embeddings), got ", context);
  strata::tracer::FakeTensorMode fake;
  const strata::ModeGuard guard(fake);
  Model model(fake_weights(config));
  FakeModelReport r;
  r.config = config;
  r.parameters = parameter_count(model.weights());
  r.kv_bytes_per_token = model.kv_cache_bytes_per_token();
  r.weight_bytes_per_token = model.weight_bytes_per_token();
  const int token = config.vocab_size > 1 ? 1 : 0;
  r.decode = count_forward_flops([&] { model.forward(std::span<const int>(&token, 1), context - 1); }, 1, context - 1);
  return r;
}

std::string fake_model_text(const FakeModelReport& r, const std::string& label) {
  const Config& c = r.config;
  char line[512];
  std::string out = "model: " + label + " under FakeTensorMode (shapes only: no weights, no data)\n";
  std::snprintf(line, sizeof line,
                "config: dim %lld, hidden %lld, %lld layers, %lld heads (%lld KV heads, head size %lld), vocab %lld, "
                "seq_len %lld, %s head\n",
                static_cast<long long>(c.dim), static_cast<long long>(c.hidden_dim), static_cast<long long>(c.n_layers),
                static_cast<long long>(c.n_heads), static_cast<long long>(c.n_kv_heads),
                static_cast<long long>(c.head_size()), static_cast<long long>(c.vocab_size),
                static_cast<long long>(c.seq_len), c.tied_output ? "tied" : "untied");
  out += line;
  std::snprintf(line, sizeof line, "parameters: %lld (%s as float32)\n", static_cast<long long>(r.parameters),
                with_units(4.0 * static_cast<double>(r.parameters)).c_str());
  out += line;
  std::snprintf(line, sizeof line, "KV cache: %llu bytes per token (float32 keys and values), %s for %lld positions\n",
                static_cast<unsigned long long>(r.kv_bytes_per_token),
                with_units(static_cast<double>(r.kv_bytes_per_token) * static_cast<double>(c.seq_len)).c_str(),
                static_cast<long long>(c.seq_len));
  out += line;
  std::snprintf(line, sizeof line, "weights read per decoded token: %s\n\n",
                with_units(static_cast<double>(r.weight_bytes_per_token)).c_str());
  out += line;
  return out + flops_table(r.decode);
}

}  // namespace lm
