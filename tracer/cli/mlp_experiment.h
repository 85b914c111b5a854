// tracer/cli/mlp_experiment.h: scripts/reference/dispatch_tracer.py in C++. One SGD step of an MLP
// (Linear -> ReLU -> ... -> Linear, cross-entropy), run three ways and compared:
//   plain_step     eager, no interposer
//   traced_step    under an OpCounter whose phase is set to forward / backward / optimizer
//   subclass_step  functional forward on LoggingTensor parameters, input and target
// The JSON report has the script's keys and meanings.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../../core/tensor.h"
#include "../../nn/mod_tracker.h"
#include "../../nn/module.h"
#include "../../modes/fake_tensor.h"
#include "../../modes/op_counter.h"

namespace strata::tracer {

struct MlpConfig {
  std::uint64_t seed = 0;
  std::vector<std::int64_t> sizes = {16, 32, 4};
  std::int64_t batch = 8;
  double lr = 0.1;
  // The traced step's ranks: above 1 it runs data-parallel on that many thread ranks
  // (data_parallel_step); the plain and subclass steps stay in one process.
  int world_size = 1;
  // Above 1: of those ranks, tensor-parallel groups of `tp` on a (world_size / tp, tp) mesh
  // (tensor_parallel_step.h); the data-parallel size is world_size / tp.
  int tp = 1;
};

// What one plain step produced (for --dump-tensors and the comparisons).
struct PlainStep {
  Tensor x, y;
  std::vector<Tensor> init_params;
  Tensor logits, loss;
  std::vector<Tensor> grads, params_after;
};

struct TracedStep {
  OpCounter counter;
  PlainStep step;
};

struct SubclassStep {
  Tensor logits;
  std::vector<Tensor> grads;
  std::vector<std::string> log;
  std::string grad_type;
};

// The batch: Generator(seed + 1); x = randn(batch, sizes[0]); y = randint(0, sizes.back(), (batch,)).
std::pair<Tensor, Tensor> make_batch(const MlpConfig& config);

// A dispatch mode that counts per phase (OpCounter, FlopCounterMode), as run_step drives it.
struct PhasedMode {
  DispatchMode* mode = nullptr;
  std::function<void(const std::string&)> set_phase;
  std::function<void()> on_end;  // after the optimizer phase, while `mode` is still entered
  // Entered just before `mode` and left just after it, also when the step throws (a FlopCounterMode's
  // module tracker, as its __enter__ does).
  nn::ModTracker* tracker = nullptr;
  template <typename M>
  static PhasedMode of(M& m) {
    PhasedMode p{&m, [&m](const std::string& phase) { m.set_phase(phase); }};
    if constexpr (requires { m.mod_tracker(); }) p.tracker = &m.mod_tracker();
    return p;
  }
  void phase(const std::string& name) const {
    if (set_phase) set_phase(name);
  }
  void end() const {
    if (on_end) on_end();
  }
};

// One SGD step of the script: under `counter` (if any) from the forward on, its phase following
// the step, and under `fake` (if any) from the model's construction on, with fake parameters and batch.
PlainStep run_step(const MlpConfig& config, const PhasedMode& counter, FakeTensorMode* fake = nullptr);
// The same step twice: plainly, and under an OpCounter whose phase follows the step (under `fake`, if
// given: the counter then sees the fake step's ops).
PlainStep plain_step(const MlpConfig& config);
TracedStep traced_step(const MlpConfig& config, FakeTensorMode* fake = nullptr);
SubclassStep subclass_step(const MlpConfig& config, FakeTensorMode* fake = nullptr);
// The traced step on config.world_size thread ranks under DistributedDataParallel (rank 0's model is
// the single-process one; the others start elsewhere and receive it by broadcast), each rank on its
// slice of the batch under its own OpCounter. Gives rank 0's counter, every rank's logits in rank
// order (the whole batch's) and rank 0's parameters after the step.
TracedStep data_parallel_step(const MlpConfig& config);
// The data-parallel step's ranks, on config.world_size thread ranks or wherever the program's ranks
// are (distributed::run_spmd): each rank's model (rank 0's the single-process one, the others made
// from seed + 1000 + rank) under DistributedDataParallel, which broadcasts rank 0's parameters, and
// its slice of the batch (x, y); fn(rank, ddp, x, y) runs the step.
using DataParallelRank = std::function<void(int rank, nn::Module& ddp, const Tensor& x, const Tensor& y)>;
void run_data_parallel(const MlpConfig& config, const DataParallelRank& fn);

// torch.allclose on host values (same shapes required).
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-6);

// The script's JSON; with `sequences`, also forward_seq, backward_seq, optimizer_seq and subclass_log.
// With `fake`, the steps run under a FakeTensorMode and the value comparisons are null (Note [The fake
// report]); with several ranks, the counted step is rank `rank`'s, on the fake process group.
nlohmann::ordered_json experiment_report(const MlpConfig& config, bool sequences, bool fake = false, int rank = 0);
// x, y, init_params, logits, loss, grads, params_after as scripts/reference/numerics_reference.py writes them.
nlohmann::ordered_json tensors_report(const MlpConfig& config, const PlainStep& step);

}  // namespace strata::tracer
