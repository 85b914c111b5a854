// tests/ops/op_records.h: the op records (tests/ops/records/<family>.json, one file per family file
// of ops/native/), which drive every op test in tests/ops/test_op_records.cpp, after PyTorch's
// OpInfo and ggml's test-backend-ops, and PyTorch's answers for them
// (tests/golden/op_records/<family>.json, made by scripts/reference/op_records_reference.py, which
// reads the same records). Note [One record per op].
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dispatch/dispatcher.h"
#include "core/tensor.h"

namespace strata::testing {

// Note [One record per op]
// A record describes how to call one op and what to check, as data both this harness and the
// reference script read:
//   {"op": "aten::add.Tensor",                 the op, with its overload
//    "dtypes": ["float32", "float64"],         what "T" stands for, each in turn (these by default)
//    "samples": [{"args": [...], "dtypes": [...], "grad": false, "note": "...", "sequence": "why not"}, ...],
//    "errors": [{"args": [...], "dtype": "int64", "message": "...", "strata_only": "why"}, ...],
//    "grad": true,        gradcheck and gradgradcheck (default: when its derivative row has formulas)
//    "values": "exact",   compare with PyTorch's values; "shape": shapes and dtypes only (outputs
//                         drawn from a generator PyTorch does not share); "none": nothing to compare
//    "sequence": true,    compare the ops a mode and a wrapper see with PyTorch's (a sample's
//                         "sequence" is the reason its ops differ from PyTorch's, and skips it)
//    "rtol": 1e-5, "atol": 1e-6,              float32's tolerances (float64's are 1e-6 times them)
//    "pytorch": "why not"}  PyTorch 1.13 cannot answer (an op or a dtype it lacks, as _scaled_mm and
//                         float8): no values, sequences or error messages to compare, only the rest
// An argument is JSON in schema order (arguments left out take their defaults): a number, bool,
// null, list of ints, string (str, or a dtype name for a ScalarType argument, "T" for the dtype under
// test), or a tensor: "T[3,4]" (the dtype under test), "f32[2]", "i64[5]{0,3}", "bool[2,2]" (also f64, i8, f8: float8_e4m3fn), with
// a layout: "T[3,4]:t" (made as [4,3], then transposed), ":expand" (its first dimension made as 1,
// then expanded), ":step2" (its last dimension made twice as long, then every other element),
// ":offset" (made as if its first dimension were one longer, then the first index dropped: a view
// with a storage offset; applied after the others). A list
// of tensor strings is a Tensor[]. Values come from one generator seeded with 0, each tensor drawn in
// argument order in float64 (randn, or rand scaled into {lo,hi}: rand * (hi - lo) + lo, so {nan,nan}
// gives NaNs) or int64 (randint in [lo, hi), default [0, 10),
// [0, 2) for bool), then converted: PyTorch draws the same numbers.
// Every op of the op table has exactly one record; an error's message is the one PyTorch gives
// (the golden file keeps PyTorch's, and the test checks that it contains the record's), unless the
// error says why it is strata's own ("strata_only").
struct RecordSample {
  nlohmann::json args;
  std::vector<std::string> dtypes;
  bool grad = true;
  std::string note;
  std::optional<std::string> sequence_differs;  // why its op sequence is not PyTorch's
};

struct RecordError {
  nlohmann::json args;
  std::string dtype;
  std::string message;
  std::optional<std::string> strata_only;
};

struct OpRecord {
  std::string family;  // "activation", from tests/ops/records/activation.json
  std::string op;      // "aten::add.Tensor"
  OperatorHandle handle;
  std::vector<RecordSample> samples;
  std::vector<RecordError> errors;
  std::optional<bool> grad;  // unset: as the derivative table says
  std::string values = "exact";
  bool sequence = true;
  double rtol = 1e-5, atol = 1e-6;
  bool pytorch_answers = true;  // false: the record's "pytorch" says why PyTorch 1.13 cannot
  nlohmann::json golden;  // PyTorch's answers: {"samples": [{dtype: {...}}], "errors": [message]}
};

// Every record, with its golden answers, in file order.
const std::vector<OpRecord>& op_records();

// The record's arguments for `args`, boxed in schema order on `device`, with `dtype` for "T"
// (defaults filled in); the tensors among them are also returned in argument order.
struct BuiltCall {
  Stack stack;
  std::vector<Tensor> tensors;
};
BuiltCall build_call(const OpRecord& record, const nlohmann::json& args, ScalarType dtype, Device device);

// "float32" -> ScalarType::Float32.
ScalarType dtype_named(const std::string& name);

// The tensors of a boxed result, in order (a Tensor[] contributes its elements).
std::vector<Tensor> tensors_of(const Stack& stack);

}  // namespace strata::testing
