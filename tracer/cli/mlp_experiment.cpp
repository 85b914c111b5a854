// tracer/cli/mlp_experiment.cpp: the three runs and their reports.
#include "tracer/cli/mlp_experiment.h"

#include <cmath>
#include <optional>
#include <set>

#include "autograd/backward.h"
#include "core/generator.h"
#include "distributed/data_parallel.h"
#include "distributed/functional_collectives.h"
#include "distributed/thread_backend.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "ops/detach.h"
#include "ops/functions.h"
#include "optim/sgd.h"
#include "modes/logging_tensor.h"
#include "tracer/cli/fake_rank_step.h"
#include "tracer/cli/tensor_parallel_step.h"

namespace strata::tracer {

namespace {

constexpr const char* kMmLike[] = {"aten.mm.default", "aten.addmm.default", "aten.bmm.default"};

std::shared_ptr<nn::Sequential> make_model(const MlpConfig& config) {
  manual_seed(config.seed);
  return nn::make_mlp(config.sizes);
}

std::vector<Tensor> detached_clones(const std::vector<Tensor>& ts) {
  std::vector<Tensor> out;
  for (const Tensor& t : ts) out.push_back(clone(detach(t)));
  return out;
}

bool all_close(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!tracer::allclose(a[i], b[i])) return false;
  return true;
}

std::int64_t mm_like(const std::map<std::string, std::int64_t>& counts) {
  std::int64_t n = 0;
  for (const char* name : kMmLike)
    if (auto it = counts.find(name); it != counts.end()) n += it->second;
  return n;
}

std::vector<double> flat(const Tensor& t) { return t.to_vector<double>(); }

}  // namespace

std::pair<Tensor, Tensor> make_batch(const MlpConfig& config) {
  Generator g;
  g.manual_seed(config.seed + 1);
  Tensor x = randn({config.batch, config.sizes.front()}, {}, &g);
  Tensor y = randint(0, config.sizes.back(), {config.batch}, {}, &g);
  return {x, y};
}

// One SGD step; under `counter` (if any) from the forward on, switching its phase as the script
// does; under `fake` (if any) from the model's construction on (Note [A fake tensor is a meta tensor
// that reports its device]). Gradients are cloned after the counter is left, so it sees exactly the step's ops.
PlainStep run_step(const MlpConfig& config, const PhasedMode& counter, FakeTensorMode* fake) {
  std::optional<ModeGuard> fake_guard;
  if (fake) fake_guard.emplace(*fake);
  PlainStep s;
  auto model = make_model(config);
  std::tie(s.x, s.y) = make_batch(config);
  s.init_params = detached_clones(model->parameters());
  optim::SGD opt(model->parameters(), {.lr = config.lr});
  Tensor logits;
  {
    if (counter.tracker) counter.tracker->enter();
    struct LeaveTracker {
      nn::ModTracker* tracker;
      ~LeaveTracker() {
        if (tracker) tracker->exit();
      }
    } leave_tracker{counter.tracker};
    std::optional<ModeGuard> mode;
    if (counter.mode) mode.emplace(*counter.mode);
    counter.phase("forward");
    logits = (*model)(s.x);
    s.loss = nn::functional::cross_entropy(logits, s.y);
    counter.phase("backward");
    backward(s.loss);
    counter.phase("optimizer");
    opt.step();
    counter.end();
  }
  for (const Tensor& p : model->parameters()) s.grads.push_back(clone(p.grad()));  // SGD leaves .grad as it was
  s.logits = detach(logits);
  s.params_after = detached_clones(model->parameters());
  return s;
}

PlainStep plain_step(const MlpConfig& config) { return run_step(config, {}, nullptr); }

TracedStep traced_step(const MlpConfig& config, FakeTensorMode* fake) {
  TracedStep t;
  t.step = run_step(config, PhasedMode::of(t.counter), fake);
  return t;
}

void run_data_parallel(const MlpConfig& config, const DataParallelRank& fn) {
  const int world = config.world_size;
  STRATA_CHECK(world >= 1 && config.batch % world == 0, "the batch (", config.batch, ") must be divisible by the world size (",
               world, ")");
  // Made on this thread: the default generator is shared by the ranks' threads.
  std::vector<std::shared_ptr<nn::Sequential>> models{make_model(config)};
  for (int r = 1; r < world; ++r) {
    MlpConfig other = config;
    other.seed = config.seed + 1000 + static_cast<std::uint64_t>(r);
    models.push_back(make_model(other));
  }
  // (Not a structured binding: clang before 16 cannot capture one in the ranks' lambda.)
  const std::pair<Tensor, Tensor> batch = make_batch(config);
  distributed::run_spmd(world, [&](int rank) {
    distributed::DistributedDataParallel ddp(models[static_cast<std::size_t>(rank)]);
    const std::int64_t share = config.batch / world;
    fn(rank, ddp, narrow(batch.first, 0, rank * share, share), narrow(batch.second, 0, rank * share, share));
  });
}

TracedStep data_parallel_step(const MlpConfig& config) {
  TracedStep t;
  std::tie(t.step.x, t.step.y) = make_batch(config);
  run_data_parallel(config, [&](int rank, nn::Module& ddp, const Tensor& xs, const Tensor& ys) {
    if (rank == 0) t.step.init_params = detached_clones(ddp.parameters());  // the broadcast's source
    optim::SGD opt(ddp.parameters(), {.lr = config.lr});
    OpCounter counter;
    Tensor out, loss;
    {
      const ModeGuard mode(counter);
      out = ddp(xs);
      loss = nn::functional::cross_entropy(out, ys);
      counter.set_phase("backward");
      backward(loss);
      counter.set_phase("optimizer");
      opt.step();
    }
    // Every rank's logits, in rank order: the whole batch's (gathered, so this works across processes).
    const Tensor all_logits =
        distributed::wait_tensor(distributed::all_gather_into_tensor(detach(out), config.world_size, "0"));
    if (rank != 0) return;
    t.step.logits = all_logits;
    t.counter = counter;
    t.step.loss = detach(loss);
    for (const Tensor& p : ddp.parameters()) t.step.grads.push_back(clone(p.grad()));
    t.step.params_after = detached_clones(ddp.parameters());
  });
  return t;
}

SubclassStep subclass_step(const MlpConfig& config, FakeTensorMode* fake) {
  std::optional<ModeGuard> fake_guard;
  if (fake) fake_guard.emplace(*fake);
  SubclassStep s;
  auto model = make_model(config);
  const auto [x, y] = make_batch(config);
  auto log = std::make_shared<LoggingTensor::Log>();
  std::vector<Tensor> params;
  for (const Tensor& p : model->parameters()) params.push_back(LoggingTensor::wrap(clone(detach(p)), log, true));
  Tensor h = LoggingTensor::wrap(x, log);
  const std::size_t layers = config.sizes.size() - 1;
  for (std::size_t i = 0; i < layers; ++i) {
    h = nn::functional::linear(h, params[2 * i], params[2 * i + 1]);
    if (i + 1 < layers) h = nn::functional::relu(h);
  }
  const Tensor loss = nn::functional::cross_entropy(h, LoggingTensor::wrap(y, log));
  backward(loss);
  for (const Tensor& p : params) s.grads.push_back(LoggingTensor::of(p.grad())->elem());
  s.grad_type = std::string(params[0].grad().subclass()->type_name());
  s.logits = LoggingTensor::of(detach(h))->elem();
  s.log = *log;
  return s;
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol) {
  if (a.sizes() != b.sizes()) return false;
  const std::vector<double> va = a.to_vector<double>(), vb = b.to_vector<double>();
  for (std::size_t i = 0; i < va.size(); ++i)
    if (!(std::abs(va[i] - vb[i]) <= atol + rtol * std::abs(vb[i]))) return false;
  return true;
}

// Note [The fake report]
// Under --fake the counted and LoggingTensor steps run on fake tensors (the LoggingTensors wrap
// fakes), so the op counts, sequences and the subclass log are the fake step's and equal the real
// one's; the three *_matches fields compare values, which fakes do not have, and are null. With
// several ranks the counted step is rank `rank`'s alone, on the fake group (Note [One fake rank of a
// large world]), and the report says which ("fake_rank": its rank and the world's size).
nlohmann::ordered_json experiment_report(const MlpConfig& config, bool sequences, bool fake, int rank) {
  std::optional<FakeTensorMode> fake_mode;
  if (fake) fake_mode.emplace();
  FakeTensorMode* mode = fake ? &*fake_mode : nullptr;
  const TracedStep tr = config.tp > 1          ? (fake ? fake_tensor_parallel_step(config, rank) : tensor_parallel_step(config))
                        : config.world_size == 1 ? traced_step(config, mode)
                        : fake                   ? fake_data_parallel_step(config, rank)
                                                 : data_parallel_step(config);
  const SubclassStep sub = subclass_step(config, mode);
  auto compared = [&](auto&& same) -> nlohmann::ordered_json {
    if (fake) return nullptr;
    return same();
  };
  std::optional<PlainStep> ref;
  if (!fake) ref = plain_step(config);

  const auto forward = tr.counter.counts("forward");
  const auto backward_counts = tr.counter.counts("backward");
  nlohmann::ordered_json out;
  out["forward_ops"] = forward;
  out["backward_ops"] = backward_counts;
  out["optimizer_ops"] = tr.counter.counts("optimizer");
  out["total_ops"] = tr.counter.total();
  out["mm_like_forward"] = mm_like(forward);
  out["mm_like_backward"] = mm_like(backward_counts);
  out["traced_step_matches"] = compared([&] {
    std::vector<Tensor> tr_all{tr.step.logits}, ref_all{ref->logits};
    tr_all.insert(tr_all.end(), tr.step.params_after.begin(), tr.step.params_after.end());
    ref_all.insert(ref_all.end(), ref->params_after.begin(), ref->params_after.end());
    return all_close(tr_all, ref_all);
  });
  out["subclass_output_matches"] = compared([&] { return tracer::allclose(sub.logits, ref->logits); });
  out["subclass_grad_matches"] = compared([&] { return all_close(sub.grads, ref->grads); });
  out["subclass_grad_type"] = sub.grad_type;
  out["subclass_logged_ops"] = sub.log.size();
  out["subclass_distinct_ops"] = std::set<std::string>(sub.log.begin(), sub.log.end()).size();
  if (sequences) {
    out["forward_seq"] = tr.counter.sequence("forward");
    out["backward_seq"] = tr.counter.sequence("backward");
    out["optimizer_seq"] = tr.counter.sequence("optimizer");
    out["subclass_log"] = sub.log;
  }
  if (fake && config.world_size > 1) {
    out["fake_rank"] = {{"rank", rank}, {"world_size", config.world_size}};
    if (config.tp > 1) out["fake_rank"]["mesh"] = {config.world_size / config.tp, config.tp};
  }
  return out;
}

nlohmann::ordered_json tensors_report(const MlpConfig& config, const PlainStep& step) {
  auto flat_all = [](const std::vector<Tensor>& ts) {
    std::vector<std::vector<double>> out;
    for (const Tensor& t : ts) out.push_back(flat(t));
    return out;
  };
  nlohmann::ordered_json out;
  out["strata_version"] = "0.1.0";
  out["seed"] = config.seed;
  out["sizes"] = config.sizes;
  out["batch"] = config.batch;
  out["lr"] = config.lr;
  out["x"] = flat(step.x);
  out["y"] = step.y.to_vector<std::int64_t>();
  out["init_params"] = flat_all(step.init_params);
  out["logits"] = flat(step.logits);
  out["loss"] = step.loss.item<double>();
  out["grads"] = flat_all(step.grads);
  out["params_after"] = flat_all(step.params_after);
  return out;
}

}  // namespace strata::tracer
