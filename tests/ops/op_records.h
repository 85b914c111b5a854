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
//    "samples": [{"args": [...], "dtypes": [...], "grad": false, "note": "...", "sequence": "why not",
//                 "values": "exact"}, ...],   (a sample's "values" overrides its record's)
//    "errors": [{"args": [...], "dtype": "int64", "message": "...", "strata_only": "why"}, ...],
//    "grad": true,        gradcheck and gradgradcheck (default: when its derivative row has formulas)
//    "gradgrad": "why not",  no gradgradcheck (the backward op has no derivative yet), gradcheck still
//    "values": "exact",   compare with PyTorch's values; "shape": shapes and dtypes only (outputs
//                         drawn from a generator PyTorch does not share, or never written, as
//                         empty's); "none": nothing to compare (the op returns no tensor)
//    "strides": true,     also compare the outputs' strides with PyTorch's (default false)
//    "sequence": true,    compare the ops a mode and a wrapper see with PyTorch's (a sample's
//                         "sequence" is the reason its ops differ from PyTorch's, and skips it)
//    "rtol": 1e-5, "atol": 1e-6,              float32's tolerances (float64's are 1e-6 times them)
//    "pytorch": "why not"}  PyTorch 1.13 cannot answer (an op or a dtype it lacks, as _scaled_mm and
//                         float8): no values, sequences or error messages to compare, only the rest
// An argument is JSON in schema order (arguments left out take their defaults): a number ("inf",
// "-inf" or "nan" for a float or Scalar the JSON cannot hold), bool, null, list of ints, string (str;
// a dtype name for a ScalarType argument, "T" for the dtype under test; "strided" for a Layout;
// "cpu" or "meta" for a Device; "contiguous_format" or "preserve_format" for a MemoryFormat; for a
// profiler _RecordFunction argument, the name of a scope opened with
// profiler::_record_function_enter_new before the call), or a tensor: "T[3,4]" (the dtype under
// test), "f32[2]", "i64[5]{0,3}", "bool[2,2]" (also f64, i8, f8: float8_e4m3fn), with a layout:
// "T[3,4]:t" (made as [4,3], then transposed), ":expand" (its first dimension made as 1, then
// expanded), ":step2" (its last dimension made twice as long, then every other element), ":offset"
// (made as if its first dimension were one longer, then the first index dropped: a view with a
// storage offset; applied after the others), and flags: ":nograd" (a floating tensor the call is not
// differentiated for: gradcheck and the backward leave it alone, as PyTorch refuses a gradient for
// nll_loss's weight), ":meta" (made on the meta device whatever the call's, for errors that mix
// devices). A list of tensor strings is a Tensor[].
// Values come from one generator seeded with 0, each tensor drawn in argument order in float64
// (randn, or rand scaled into {lo,hi}: rand * (hi - lo) + lo, so {nan,nan} gives NaNs) or int64
// (randint in [lo, hi), default [0, 10), [0, 2) for bool), then converted: PyTorch draws the same
// numbers.
// The Meta-vs-CPU check makes the tensors on meta and turns a Device argument left out, null or
// "cpu" into "meta", so a factory runs its meta function too. Before every call of the op (values,
// sequences, each evaluation of gradcheck) the default generator is seeded with 0, in PyTorch too:
// random ops draw the same numbers each time (PyTorch's where strata draws as PyTorch does; where
// it cannot, as bernoulli_ and native_dropout, whose PyTorch draws through MKL, "values": "shape"
// says why). Generator arguments are null: the default generator.
// gradcheck and gradgradcheck run on each float64 sample ("grad": false skips one, and its backward
// in the sequence test), except one with an ":expand" argument, whose elements share memory: PyTorch's
// gradcheck refuses those too, and the sequence test still compares their gradients with PyTorch's.
// Every op of the op table has exactly one record; an error's message is the one PyTorch gives
// (the golden file keeps PyTorch's, and the test checks that it contains the record's), unless the
// error says why it is strata's own ("strata_only"), or PyTorch 1.13 words it otherwise: strata's
// dtype names (float32, not PyTorch's Float: README "Choices"), or a check 1.13 makes elsewhere
// than 2.8 does; then "pytorch_message" is the part of 1.13's message to find instead, and
// "differs" says why (and what 2.8 says).
struct RecordSample {
  nlohmann::json args;
  std::vector<std::string> dtypes;
  bool grad = true;
  std::string note;
  std::optional<std::string> sequence_differs;  // why its op sequence is not PyTorch's
  std::optional<std::string> values;            // overrides the record's "values"
};

struct RecordError {
  nlohmann::json args;
  std::string dtype;
  std::string message;
  std::optional<std::string> strata_only;
  std::optional<std::string> pytorch_message;  // PyTorch's words where strata's differ by a choice
  std::string differs;                          // that choice
};

struct OpRecord {
  std::string family;  // "activation", from tests/ops/records/activation.json
  std::string op;      // "aten::add.Tensor"
  OperatorHandle handle;
  std::vector<RecordSample> samples;
  std::vector<RecordError> errors;
  std::optional<bool> grad;  // unset: as the derivative table says
  std::optional<std::string> no_gradgrad;  // why its float64 samples skip gradgradcheck
  std::string values = "exact";
  bool strides = false;
  bool sequence = true;
  double rtol = 1e-5, atol = 1e-6;
  bool pytorch_answers = true;  // false: the record's "pytorch" says why PyTorch 1.13 cannot
  nlohmann::json golden;  // PyTorch's answers: {"samples": [{dtype: {...}}], "errors": [message]}
};

// Every record, with its golden answers, in file order.
const std::vector<OpRecord>& op_records();

// The record's arguments for `args`, boxed in schema order on `device`, with `dtype` for "T"
// (defaults filled in); the tensors among them are also returned in argument order. On Meta, a
// Device argument left out, null or "cpu" is meta (Note [One record per op]).
struct BuiltCall {
  Stack stack;
  std::vector<Tensor> tensors;
  std::vector<bool> nograd;  // per tensor: its spec says ":nograd"
};
BuiltCall build_call(const OpRecord& record, const nlohmann::json& args, ScalarType dtype, Device device);

// The values a sample's outputs are compared by: its own "values", else its record's.
const std::string& values_of(const OpRecord& record, const RecordSample& sample);

// Running a record's op. call: on a built stack (an in-place op writes a copy of its first argument);
// substituted: the stack with its tensors replaced, in order, by `xs` (a Tensor[] takes as many as it
// holds); differentiable: the record's "grad", else whether its derivative row has formulas.
bool is_floating(const Tensor& t);
bool repeats_memory(const Tensor& t);  // some elements share memory (a stride-0 dimension of more than one)
bool writes_first(const OpRecord& r);
std::vector<Tensor> call(const OpRecord& r, Stack stack);
Stack substituted(const Stack& stack, const std::vector<Tensor>& xs);
bool differentiable(const OpRecord& r);

// "float32" -> ScalarType::Float32.
ScalarType dtype_named(const std::string& name);

// The tensors of a boxed result, in order (a Tensor[] contributes its elements).
std::vector<Tensor> tensors_of(const Stack& stack);

}  // namespace strata::testing
