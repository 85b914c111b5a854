// lm/int8_weights.h: --int8: a float checkpoint's weights quantized at load into llama2.c's Q8_0, the
// weights export.py --version 2 would write from them, so that the model runs a version-2 .bin's int8
// path on them (the same logits as that file gives).
#pragma once

#include <cstdint>

#include "config.h"
#include "weights.h"

namespace lm {

// export.py's group size: 64, halved until it divides dim. It must divide hidden_dim too (w2's
// reduction dimension): an error naming `source` otherwise.
std::int64_t int8_group_size(const Config& config, const std::string& source);

// Every matrix (the embedding, the seven projections of each layer, the output head unless it is the
// embedding) as a grouped ScaledTensor (export.py's quantize_q80, in float32); the norms copied. The
// float weights and what backs them (the file's mapping, widened half-precision copies) are
// released. Weights already int8 are returned as they are.
Weights quantize_to_int8(Weights weights);

}  // namespace lm
