// tests/fuzz/api_interpreter.h: the API fuzzer's interpreter: one input's program run against a
// World, one member function per instruction of Note [The API fuzzer's byte code] (api_fuzzer.cpp).
// Tensor instructions are in api_tensors.cpp, autograd ones in api_autograd.cpp.
#pragma once

#include <memory>
#include <optional>
#include <sstream>
#include <vector>

#include "autograd/grad_mode.h"
#include "core/inference_mode.h"
#include "core/dispatch/dispatch_trace.h"
#include "core/interpose/interposer.h"
#include "tests/fuzz/api_bytes.h"
#include "tests/fuzz/api_world.h"
#include "tracer/trace_recorder.h"

namespace strata::fuzz {

class Interpreter {
 public:
  explicit Interpreter(bool verbose) : verbose_(verbose) {
    w_.verbose = verbose;
  }
  ~Interpreter();
  void run(ByteReader& r);

 private:
  void make(ByteReader& r);
  void fill(ByteReader& r, const Tensor& t, std::uint8_t kind);
  void view(ByteReader& r);
  void wrap(ByteReader& r);
  void mode(ByteReader& r);
  void grad_mode(ByteReader& r);
  void backward(ByteReader& r);
  void access(ByteReader& r);
  void grad(ByteReader& r);
  void gradcheck(ByteReader& r);
  void trace();
  void keep_leaf(const Tensor& t) {
    if (t.defined()) w_.leaves.push_back(t);
  }
  void describe(int step, std::uint8_t opcode) const;
  void release_unusable_graphs();

  World w_;
  bool verbose_;
  std::vector<std::unique_ptr<DispatchMode>> modes_;
  // An entered mode: a ModeGuard over one of modes_, or a trace recording (its own modes).
  struct ModeRegion {
    std::unique_ptr<ModeGuard> guard;
    std::unique_ptr<tracer::TraceRecording> recording;
  };
  std::vector<ModeRegion> mode_guards_;
  void pop_mode();
  // A grad-mode region: GradModeGuard (no_grad, enable_grad) or InferenceMode.
  struct GradRegion {
    std::optional<autograd::GradModeGuard> grad;
    std::optional<InferenceMode> inference;
  };
  std::vector<std::unique_ptr<GradRegion>> grad_guards_;
  std::ostringstream trace_out_;
  std::unique_ptr<DispatchTraceGuard> trace_;
};

}  // namespace strata::fuzz
