// distributed/data_parallel.cpp: DistributedDataParallel's parameter broadcast and its bucketed
// gradient reduction (Note [How DistributedDataParallel reduces]).
#include "distributed/data_parallel.h"

#include <mutex>

#include "autograd/grad_mode.h"
#include "autograd/graph.h"
#include "autograd/hooks.h"
#include "autograd/variable.h"
#include "distributed/functional_collectives.h"
#include "distributed/process_group.h"
#include "distributed/reducer_ops.h"
#include "ops/functions.h"
#include "ops/native/type_promotion.h"
#include "ops/record_function.h"

namespace strata::distributed {

struct DistributedDataParallel::Reducer {
  struct Bucket {
    std::vector<std::size_t> params;  // indices into Reducer::params, in bucket order
    std::vector<Tensor> views;        // per entry of params: its slice of `gradients`, shaped like it
    Tensor gradients;                 // the flat bucket, reduced in place
    std::size_t pending = 0;          // gradients still to arrive in this backward
    std::shared_ptr<Work> work;       // the started allreduce_, until it is waited for
  };
  std::string group_name;
  std::vector<Tensor> params;
  std::vector<std::size_t> bucket_of;  // per parameter
  std::vector<std::size_t> slot_of;    // per parameter: its entry in its bucket
  std::vector<char> arrived;           // per parameter: its gradient reached the bucket in this backward
  std::vector<Bucket> buckets;
  bool armed = false;  // a backward is in progress: the final callback is queued

  void start(Bucket& bucket) {
    for (std::size_t j = 0; j < bucket.params.size(); ++j)
      if (!arrived[bucket.params[j]]) zero_(bucket.views[j]);
    bucket.work = allreduce_(bucket.gradients, resolve_process_group(group_name), ReduceOp::Sum);
  }

  // A parameter's gradient was accumulated: divided by the world size into its bucket, which may be complete.
  void ready(std::size_t param) {
    if (!armed) {
      armed = true;
      for (Bucket& b : buckets) b.pending = b.params.size();
      arrived.assign(params.size(), 0);
      autograd::queue_callback([this] { finish(); });
    }
    const autograd::NoGradGuard no_grad;  // a create_graph backward's gradients are copied, not recorded
    Bucket& bucket = buckets[bucket_of[param]];
    const ProcessGroup& group = resolve_process_group(group_name);
    mul_out(bucket.views[slot_of[param]], params[param].grad(), ops::wrapped_scalar_tensor(1.0 / group.size()));
    arrived[param] = 1;
    if (bucket.pending > 0 && --bucket.pending == 0) start(bucket);
  }

  void finish() {
    armed = false;
    const autograd::NoGradGuard no_grad;
    for (Bucket& b : buckets)
      if (b.pending > 0) {
        b.pending = 0;
        start(b);
      }
    for (Bucket& b : buckets) {
      const std::shared_ptr<Work> work = std::move(b.work);
      work->wait();
      std::vector<Tensor> out;
      for (const Tensor& v : b.views) out.push_back(as_strided(b.gradients, v.sizes(), v.strides(), v.storage_offset()));
      for (std::size_t j = 0; j < b.params.size(); ++j) {
        const Tensor& p = params[b.params[j]];
        if (p.grad().defined()) copy_(p.grad(), out[j]);
        else set_grad(p, clone(out[j]));
      }
    }
  }
};

DistributedDataParallel::DistributedDataParallel(std::shared_ptr<nn::Module> module, DataParallelOptions options)
    : module_(std::move(module)), reducer_(std::make_shared<Reducer>()) {
  STRATA_CHECK(module_, "DistributedDataParallel: the module is null");
  STRATA_CHECK(options.bucket_cap_bytes > 0 && options.first_bucket_bytes > 0,
               "DistributedDataParallel: bucket sizes must be positive");
  register_module("module", module_);
  Reducer& r = *reducer_;
  r.group_name = options.group_name;
  for (const Tensor& p : module_->parameters())
    if (p.requires_grad()) r.params.push_back(p);
  (void)resolve_process_group(r.group_name);  // an unknown group fails here, not in the first backward
  // Rank 0's parameters everywhere (upstream's _sync_module_states).
  {
    const autograd::NoGradGuard no_grad;
    for (const Tensor& p : r.params) copy_(p, wait_tensor(broadcast(p, 0, r.group_name)));
  }
  // Buckets in reverse registration order.
  r.bucket_of.assign(r.params.size(), 0);
  std::int64_t cap = options.first_bucket_bytes, filled = 0;
  for (std::size_t k = r.params.size(); k-- > 0;) {
    const Tensor& p = r.params[k];
    const std::int64_t bytes = p.numel() * static_cast<std::int64_t>(element_size(p.dtype()));
    const bool same_dtype = r.buckets.empty() || r.params[r.buckets.back().params.front()].dtype() == p.dtype();
    if (r.buckets.empty() || filled + bytes > cap || !same_dtype) {
      if (!r.buckets.empty()) cap = options.bucket_cap_bytes;
      r.buckets.emplace_back();
      filled = 0;
    }
    r.buckets.back().params.push_back(k);
    r.bucket_of[k] = r.buckets.size() - 1;
    filled += bytes;
  }
  // Each bucket's flat gradients, and a view of it per parameter (upstream's bucket_views_in).
  r.slot_of.assign(r.params.size(), 0);
  {
    const autograd::NoGradGuard no_grad;
    for (Reducer::Bucket& b : r.buckets) {
      std::int64_t total = 0;
      for (std::size_t k : b.params) total += r.params[k].numel();
      b.gradients = zeros({total}, TensorOptions{r.params[b.params.front()].dtype(), std::nullopt});
      std::int64_t offset = 0;
      for (std::size_t j = 0; j < b.params.size(); ++j) {
        const Tensor& p = r.params[b.params[j]];
        r.slot_of[b.params[j]] = j;
        b.views.push_back(view(narrow(b.gradients, 0, offset, p.numel()), p.sizes()));
        offset += p.numel();
      }
    }
  }
  for (std::size_t k = 0; k < r.params.size(); ++k) {
    std::weak_ptr<Reducer> weak = reducer_;
    hooks_.push_back(register_post_accumulate_grad_hook(r.params[k], [weak, k](const Tensor&) {
      if (const std::shared_ptr<Reducer> reducer = weak.lock()) reducer->ready(k);
    }));
  }
}

DistributedDataParallel::~DistributedDataParallel() {
  for (RemovableHandle& h : hooks_) h.remove();
}

// Upstream's forward runs in record_function("DistributedDataParallel.forward").
Tensor DistributedDataParallel::forward(const Tensor& input) {
  ops::RecordFunctionScope scope(std::string_view("DistributedDataParallel.forward"));
  Tensor out = (*module_)(input);
  scope.exit();
  return out;
}

std::size_t DistributedDataParallel::num_buckets() const { return reducer_->buckets.size(); }

}  // namespace strata::distributed
