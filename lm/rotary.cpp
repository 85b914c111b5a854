// lm/rotary.cpp: the rotary tables and their application (Note [Rotary embedding as two products and
// a sum], lm/rotary.h).
#include "rotary.h"

#include <strata/ops/functions.h>

namespace lm {

Rotary::Rotary(const Config& config, RotaryLayout layout) : layout_(layout), head_size_(config.head_size()) {
  using strata::ScalarType;
  const std::int64_t half = head_size_ / 2;
  const strata::TensorOptions f32{ScalarType::Float32, std::nullopt};
  // freqs_i = 1 / theta^(2i / hs), angles[p][i] = p * freqs_i (float32, as model.py's precompute_freqs_cis)
  const strata::Tensor exponents = strata::arange(0, head_size_, 2, f32) / static_cast<double>(head_size_);
  const strata::Tensor freqs = 1.0 / strata::full({half}, config.rope_theta, f32).pow(exponents);
  const strata::Tensor positions = strata::arange(config.seq_len, f32);
  const strata::Tensor angles = positions.unsqueeze(1) * freqs.unsqueeze(0);  // [seq_len, half]
  const strata::Tensor c = angles.cos(), s = angles.sin();
  if (layout_ == RotaryLayout::Interleaved) {
    cos_ = strata::stack({c, c}, -1).view({config.seq_len, head_size_});
    sin_ = strata::stack({-s, s}, -1).view({config.seq_len, head_size_});
  } else {
    cos_ = strata::cat({c, c}, -1);
    sin_ = strata::cat({-s, s}, -1);
  }
}

strata::Tensor Rotary::apply(const strata::Tensor& x, std::int64_t pos, std::int64_t heads) const {
  const std::int64_t n = x.size(0), half = head_size_ / 2;
  strata::Tensor swapped;
  if (layout_ == RotaryLayout::Interleaved) {
    const strata::Tensor pairs = x.view({n, heads, half, 2});
    swapped = strata::stack({pairs.select(-1, 1), pairs.select(-1, 0)}, -1).view({n, heads, head_size_});
  } else {
    const strata::Tensor h = x.view({n, heads, head_size_});
    swapped = strata::cat({h.narrow(-1, half, half), h.narrow(-1, 0, half)}, -1);
  }
  const strata::Tensor c = cos_.narrow(0, pos, n).view({n, 1, head_size_});
  const strata::Tensor s = sin_.narrow(0, pos, n).view({n, 1, head_size_});
  strata::Tensor out = x.view({n, heads, head_size_}) * c;
  out += swapped * s;
  return out.view({n, heads * head_size_});
}

}  // namespace lm
