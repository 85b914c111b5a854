// lm/int8_weights.cpp: quantize_to_int8, --int8's conversion of float weights at load.
#include "int8_weights.h"

#include <strata/core/util/error.h>
#include <strata/modes/scaled_tensor.h>
#include <strata/ops/functions.h>

namespace lm {

std::int64_t int8_group_size(const Config& c, const std::string& source) {
  std::int64_t group = 64;
  while (c.dim % group != 0) group /= 2;
  STRATA_CHECK(c.hidden_dim % group == 0, source, ": --int8: hidden_dim ", c.hidden_dim,
               " is not a multiple of the group size ", group, " (64, halved until it divides dim ", c.dim,
               "), so w2's rows cannot be split into groups");
  return group;
}

Weights quantize_to_int8(Weights w) {
  if (w.group_size > 0) return w;
  const std::int64_t group = int8_group_size(w.config, w.source);
  auto quantize = [&](strata::Tensor& t) { t = strata::tracer::ScaledTensor::from_float_grouped(t, group); };
  auto copy = [](strata::Tensor& t) { t = t.to(strata::ScalarType::Float32).clone(); };
  quantize(w.embed);
  for (LayerWeights& l : w.layers) {
    for (strata::Tensor* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w1, &l.w2, &l.w3}) quantize(*m);
    copy(l.attn_norm);
    copy(l.ffn_norm);
  }
  copy(w.final_norm);
  if (w.config.tied_output) w.output = w.embed;
  else quantize(w.output);
  w.group_size = group;
  w.backing.reset();  // nothing refers to the float weights' memory any more
  return w;
}

}  // namespace lm
