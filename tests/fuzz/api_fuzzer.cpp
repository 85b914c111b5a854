// tests/fuzz/api_fuzzer.cpp: the library API fuzzer. An input is a small program over a pool of live
// tensors: it makes tensors of any rank, size, stride, dtype and device, wraps them in subclasses,
// enters modes, no-grad and inference-mode regions, calls every op of the op table through the dispatcher with
// arguments drawn from the op's schema, calls the composites and data accessors a user calls directly,
// and runs backward passes. Any failure must be a strata::Error; everything else aborts (api_world.h).
#include <cstdlib>
#include <string>

#include "autograd/registration.h"
#include "autograd/variable.h"
#include "ops/functions.h"
#include "ops/op_table.h"
#include "tests/fuzz/api_calls.h"
#include "tests/fuzz/api_composites.h"
#include "tests/fuzz/api_interpreter.h"
#include "tests/fuzz/api_subjects.h"
#include "modes/fake_tensor.h"
#include "modes/op_counter.h"

// Note [The API fuzzer's byte code]
// libFuzzer mutates bytes; read as a program, a mutated byte changes one operand or one instruction,
// so the corpus keeps meaning what it meant. Each instruction is an opcode byte (mod 16) and operands;
// reading past the end yields zeros, and a program runs at most kMaxInstructions. Slots are a byte
// mod 8. Value classes (sizes, ints, doubles, dtypes) are in api_bytes.h: a class byte >= 0xF8 is
// followed by an exact 8-byte value.
//   0 make      dst dtype device rank size... fill [fill operands]     (fresh tensor; see make())
//   1 undefined dst                                                     (Tensor())
//   2 view      dst src kind operands          (t, transpose, expand, as_strided, view, unsqueeze...)
//   3 wrap      dst src flags                  (bit 0: AliasingWrapper, else LoggingTensor; bit 1: requires grad)
//   4 requires_grad slot flag
//   5 mode      kind                           (push OpCounter, push KeepingMode, pop, push a TraceRecording,
//                                              push a FakeTensorMode that converts real inputs)
//   6 grad_mode kind                           (push no_grad, push enable_grad, pop, push InferenceMode)
//   7 call      op-index dst arg...            (all_ops()[index mod count], arguments per api_calls.cpp)
//   8 call_named length name dst arg...        ("aten::sum.dim_IntList": what the readable seeds use)
//   9 composite dst src kind [operands] [more srcs]                    (api_composites.cpp; kind 0xE0+:
//                                                the inference composites, softmax, dropout...)
//  10 backward  root flags [gradient slot] [second root]
//  11 access    slot kind [operand]            (item, to_vector, data_ptr, printing, metadata)
//  12 grad      slot kind [operand]            (read .grad, set it to None, a tensor, zeros)
//  13 gradcheck inputs sizes... kind [op-index arg...]
//  14 trace                                    (dispatch trace on / off, into a string)
//  15 slot      kind a b                       (drop a, or copy a to b)
// An argument of a call is a class byte: below 0xE0 a value of the schema's type (its low bits pick
// how: a pool slot, a size list like the first tensor's, a dimension in range...), 0xE0-0xE7 the
// schema's default, 0xE8-0xEF a value of another type on purpose, 0xF0 + k an exactly spelled value of
// kind k (0 None, 1 slot, 2 int64, 3 double, 4 bool, 5 int list, 6 dtype, 7 device, 8 memory format,
// 9 string, 10 default, 11 tensor list, 12 generator, 13 object), 0xFE the end of the arguments.
// tests/fuzz/api_seed.py writes programs from a readable text form (tests/fuzz/api_seeds/).

namespace strata::fuzz {

namespace {
constexpr int kMaxInstructions = 64;
}  // namespace


Interpreter::~Interpreter() {
  trace_.reset();
  while (!mode_guards_.empty()) pop_mode();
  modes_.clear();
  while (!grad_guards_.empty()) grad_guards_.pop_back();
  release_unusable_graphs();
}

void Interpreter::run(ByteReader& r) {
  for (int step = 0; step < kMaxInstructions && !r.empty(); ++step) {
    if (trace_out_.tellp() > (1 << 20)) trace_out_.str("");
    const std::uint8_t opcode = r.u8() % 16;
    if (verbose_) describe(step, opcode);
    switch (opcode) {
      case 0: make(r); break;
      case 1: w_.slot(r.u8()) = Slot{}; break;
      case 2: view(r); break;
      case 3: wrap(r); break;
      case 4: {
        const Tensor t = w_.slot(r.u8()).tensor;
        const bool flag = r.u8() & 1;
        if (attempt("requires_grad_", [&] { requires_grad_(t, flag); }) && flag) keep_leaf(t);
        break;
      }
      case 5: mode(r); break;
      case 6: grad_mode(r); break;
      case 7: {
        const auto& ops = all_ops();
        call_op(w_, r, ops[r.u8() % ops.size()]);
        break;
      }
      case 8: {
        const std::string name(r.bytes(r.u8()));
        const std::size_t dot = name.find('.', name.find("::") == std::string::npos ? 0 : name.find("::"));
        const auto op = Dispatcher::singleton().find(name.substr(0, dot), dot == std::string::npos ? "" : name.substr(dot + 1));
        if (op) call_op(w_, r, *op);
        break;
      }
      case 9: call_composite(w_, r); break;
      case 10: backward(r); break;
      case 11: access(r); break;
      case 12: grad(r); break;
      case 13: gradcheck(r); break;
      case 14: trace(); break;
      default: {
        const std::uint8_t kind = r.u8(), a = r.u8(), b = r.u8();
        if (kind & 1) w_.slot(b) = w_.slot(a);
        else w_.slot(a) = Slot{};
      }
    }
  }
}

// STRATA_FUZZ_VERBOSE=1: each instruction and the pool before it, on stderr (for reading a seed).
void Interpreter::describe(int step, std::uint8_t opcode) const {
  static constexpr const char* kNames[] = {"make", "undefined", "view", "wrap", "requires_grad", "mode", "grad_mode", "call",
                                           "call_named", "composite", "backward", "access", "grad", "gradcheck", "trace", "slot"};
  std::fprintf(stderr, "step %d: %s\n", step, kNames[opcode]);
  for (std::size_t i = 0; i < kSlots; ++i) {
    const Tensor& t = w_.slots[i].tensor;
    if (!t.defined()) continue;
    std::fprintf(stderr, "  %%%zu %s %s %s%s%s%s%s\n", i, shape_str(t.sizes()).c_str(), std::string(dtype_name(t.dtype())).c_str(),
                 std::string(device_name(t.device())).c_str(), t.subclass() ? " wrapper" : "",
                 t.impl()->has_data() || t.subclass() || t.is_meta() ? "" : " NO STORAGE", t.requires_grad() ? " requires_grad" : "",
                 w_.slots[i].tainted ? " tainted" : "");
  }
}

void Interpreter::mode(ByteReader& r) {
  const std::uint8_t kind = r.u8() % 5;
  if (kind == 2) {
    if (!mode_guards_.empty()) pop_mode();  // the mode object stays until the input ends
    return;
  }
  if (mode_guards_.size() >= 4) return;
  if (kind == 3) {
    mode_guards_.push_back(ModeRegion{nullptr, std::make_unique<tracer::TraceRecording>("a fuzzed program")});
    return;
  }
  if (kind == 0) modes_.push_back(std::make_unique<tracer::OpCounter>());
  else if (kind == 1) modes_.push_back(std::make_unique<KeepingMode>());
  else modes_.push_back(std::make_unique<tracer::FakeTensorMode>(tracer::FakeTensorModeOptions{.allow_non_fake_inputs = true}));
  mode_guards_.push_back(ModeRegion{std::make_unique<ModeGuard>(*modes_.back()), nullptr});
}

// Leaves the innermost mode; a trace recording is finished, printed and exported first, which must
// work whatever the recorded calls were (refusals and all).
void Interpreter::pop_mode() {
  ModeRegion region = std::move(mode_guards_.back());
  mode_guards_.pop_back();
  if (!region.recording) return;
  const tracer::Trace trace = region.recording->finish();
  const std::string text = tracer::to_python(trace);
  const std::string json = tracer::to_json(trace).dump();
  if (text.empty() || json.empty()) fail("TraceRecording", "empty", "a trace printed as nothing");
}

void Interpreter::grad_mode(ByteReader& r) {
  const std::uint8_t kind = r.u8() % 4;
  if (kind == 2) {
    if (!grad_guards_.empty()) grad_guards_.pop_back();
  } else if (grad_guards_.size() < 4) {
    auto region = std::make_unique<GradRegion>();
    if (kind == 3) region->inference.emplace();
    else region->grad.emplace(kind == 1);
    grad_guards_.push_back(std::move(region));
  }
}

void Interpreter::trace() {
  if (trace_) trace_.reset();
  else trace_ = std::make_unique<DispatchTraceGuard>(trace_out_);
}

}  // namespace strata::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto flag = [](const char* name) {
    const char* v = std::getenv(name);
    return v && *v && *v != '0';
  };
  static const bool verbose = [&] {
    strata::ops::register_ops();
    strata::autograd::register_autograd();
    return flag("STRATA_FUZZ_VERBOSE");
  }();
  strata::manual_seed(0);
  strata::fuzz::ByteReader r(data, size);
  strata::fuzz::Interpreter(verbose).run(r);
  return 0;
}
