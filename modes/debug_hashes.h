// modes/debug_hashes.h: DebugMode's numerics tools. log_tensor_hashes annotates each op with a hash of
// its outputs (upstream's norm hash, or a bitwise one); check_hash_mismatches compares two runs' calls
// and names the calls whose hashes differ, first one first: where two runs start to diverge.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "debug_mode.h"

namespace strata::tracer {

enum class TensorHash {
  Norm,        // upstream's "norm": the L1 norm in float64 (integers via float32, as t.float() does)
  HashTensor,  // upstream's "hash_tensor": XOR of the elements' 64-bit patterns, as float64 or int64
};

// The hash of one tensor, as JSON (a float, or an unsigned integer); null for a tensor without data
// (a wrapper, a fake tensor) or an undefined one. Reads the elements directly: no op is dispatched.
nlohmann::ordered_json tensor_hash(const Tensor& t, TensorHash kind);

// Upstream's DebugMode.log_tensor_hashes(hash_fn, hash_inputs): until the guard ends, each recorded op
// but the empty and profiler ops logs `{'hash': h}` (a tuple for several returns) and, with
// `hash_inputs`, `'input_hash'`: the hashes of its arguments, as a tuple.
DebugMode::HooksGuard log_tensor_hashes(TensorHash kind = TensorHash::Norm, bool hash_inputs = false);

struct HashMismatch {
  std::size_t index = 0;       // position in the logs
  std::string call;            // "aten::addmm"
  std::string line;            // the call's line in the first run
  std::string pytree_path;     // "" for a single return, "[1]" for the second of several
  nlohmann::ordered_json hash1, hash2;
  double rel_diff = 0;         // |h1 - h2| / max(|h1|, |h2|, 1e-10); 1 for bitwise hashes that differ
  bool is_input_hash = false;
};

// Upstream's DebugMode.check_hash_mismatches: the logs must have the same calls (kind, name, depth)
// and the same hash keys, or a strata::Error says where they part; then every differing hash, in log
// order (with compare_inputs, input hashes too, after the output ones of the same call).
std::vector<HashMismatch> check_hash_mismatches(const std::vector<DebugCall>& logs1, const std::vector<DebugCall>& logs2,
                                                bool compare_inputs = false);
// The first mismatch, or none: the first call the difference reaches.
std::optional<HashMismatch> first_hash_mismatch(const std::vector<DebugCall>& logs1, const std::vector<DebugCall>& logs2,
                                                bool compare_inputs = false);

// DebugMode::to_json()'s "calls" read back (docs/debug-mode.md), to compare runs saved as JSON.
// Throws strata::Error for a document of another schema or version.
std::vector<DebugCall> calls_from_json(const nlohmann::ordered_json& document);

}  // namespace strata::tracer
