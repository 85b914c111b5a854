// tests/fuzz/api_composites.h: the API a user calls directly rather than through an op's schema: the
// composites that never reach the dispatcher (reshape, contiguous, sum_to, to, nn::functional's
// linear, matmul, log_softmax, nll_loss, cross_entropy, operators) and the typed front-end functions,
// whose unboxed fast path skips the boxed kernels the schema-driven calls reach.
#pragma once

#include "tests/fuzz/api_bytes.h"
#include "tests/fuzz/api_world.h"

namespace strata::fuzz {

// Reads a composite's kind, destination, inputs and arguments from `r` and calls it.
void call_composite(World& w, ByteReader& r);

}  // namespace strata::fuzz
