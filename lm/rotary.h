// lm/rotary.h: rotary position embedding as tables and one expression, for either pair layout
// (RotaryLayout, lm/weights.h).
#pragma once

#include <cstdint>

#include <strata/core/tensor.h>

#include "config.h"
#include "weights.h"

namespace lm {

// Note [Rotary embedding as two products and a sum]
// A rotary pair (a, b) at position p with frequency f_i = theta^(-2i / head_size) becomes
// (a cos - b sin, a sin + b cos), angle p * f_i. Written per element of a head x of width hs:
//   out = x * C[p] + swap(x) * S[p]
// where swap exchanges the two halves of each pair, C[p] holds cos(p f_i) at both halves of pair i and
// S[p] holds -sin(p f_i) at the pair's first half and +sin(p f_i) at its second. Only swap depends on
// the layout: Interleaved pairs (2i, 2i + 1) swap neighbours (stack of the odd and even elements),
// HalfSplit pairs (i, i + hs/2) swap halves (cat of the second and first halves). So the products
// are llama2.c's and Meta's complex multiply exactly (a c + b (-s) == a c - b s in IEEE arithmetic),
// and a Hugging Face checkpoint needs no permutation of its q and k rows. C and S are made once
// ([seq_len, hs]), their angles in float32 as llama2.c's model.py makes them: 1 / theta^(2i / hs),
// times the position, then cos and sin.
class Rotary {
 public:
  Rotary() = default;
  Rotary(const Config& config, RotaryLayout layout);

  // x: [n, heads * hs] for positions pos .. pos + n - 1; returns the rotated [n, heads * hs].
  strata::Tensor apply(const strata::Tensor& x, std::int64_t pos, std::int64_t heads) const;

  const strata::Tensor& cos_table() const { return cos_; }
  const strata::Tensor& signed_sin_table() const { return sin_; }

 private:
  RotaryLayout layout_ = RotaryLayout::Interleaved;
  std::int64_t head_size_ = 0;
  strata::Tensor cos_;  // [seq_len, hs]: C above
  strata::Tensor sin_;  // [seq_len, hs]: S above
};

}  // namespace lm
