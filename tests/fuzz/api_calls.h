// tests/fuzz/api_calls.h: the API fuzzer's schema-driven op calls. An op's boxed arguments are drawn
// from its schema (pool tensors, ints, int lists, scalars, dtypes, devices, None, defaults, and on
// purpose sometimes a value of the wrong type or too few values), the call's outputs are predicted on
// meta tensors to bound what it allocates, then it runs through the dispatcher and its results are
// checked against the schema and the prediction.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "core/dispatch/dispatcher.h"
#include "tests/fuzz/api_bytes.h"
#include "tests/fuzz/api_world.h"

namespace strata::fuzz {

// Every registered op, sorted by name (so an op's index does not depend on registration order).
const std::vector<OperatorHandle>& all_ops();

// Reads the boxed arguments of `op` from `r` (fewer than the schema's when the program says so).
Stack read_arguments(World& w, ByteReader& r, const OperatorHandle& op);
// A call rehearsed on meta copies of its tensors (devices made meta): its predicted outputs (none when
// the rehearsal was refused or not needed: a view allocates nothing), and whether the real call stays
// in budget (no computing over a huge view, at most kMaxElements of new storage).
struct Rehearsal {
  bool affordable = true;
  std::optional<std::vector<Tensor>> predicted;
};
Rehearsal rehearse_call(const OperatorHandle& op, const Stack& args);
// Reads the arguments of `op` from `r` and calls it; tensor outputs go to slots dst, dst+1, ...
void call_op(World& w, ByteReader& r, const OperatorHandle& op);

// The elements of storage a tensor of this geometry spans (0 when empty); saturates at INT64_MAX.
std::int64_t storage_elements(const Tensor& t);
// A meta tensor with t's sizes, strides and dtype (undefined stays undefined).
Tensor meta_copy(const Tensor& t);
// Runs `fn` with the Python and Autograd keys excluded (a meta rehearsal no mode or subclass sees);
// nullopt when it threw a strata::Error.
std::optional<std::vector<Tensor>> rehearse(const std::function<std::vector<Tensor>()>& fn);
// Whether outputs predicted on meta stay within kMaxElements of storage in all.
bool within_budget(const std::vector<Tensor>& predicted);
// Aborts unless `real` has the predicted sizes and dtypes (CPU and meta agree by construction).
void check_prediction(const char* where, const std::vector<Tensor>& predicted, const std::vector<Tensor>& real);
// Stores `t` in slot `dst`, tainted when it is huge or came from tainted inputs.
void store(World& w, std::uint8_t dst, Tensor t, bool tainted_inputs);

}  // namespace strata::fuzz
