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
#include "ops/functions.h"

namespace strata::distributed {

struct DistributedDataParallel::Reducer {
  struct Bucket {
    std::vector<std::size_t> params;  // indices into Reducer::params, in bucket order
    std::size_t pending = 0;          // gradients still to arrive in this backward
    Tensor reduced;                   // the started all_reduce's output, until it is waited for
  };
  std::string group_name;
  std::vector<Tensor> params;
  std::vector<std::size_t> bucket_of;  // per parameter
  std::vector<Bucket> buckets;
  bool armed = false;  // a backward is in progress: the final callback is queued

  void start(Bucket& bucket) {
    std::vector<Tensor> flat;
    for (std::size_t i : bucket.params) {
      const Tensor& p = params[i];
      const Tensor& g = p.grad();
      flat.push_back(reshape(g.defined() ? g : zeros_like(p), {-1}));
    }
    bucket.reduced = all_reduce(flat.size() == 1 ? flat[0] : cat(flat, 0), "avg", group_name);
  }

  // A parameter's gradient was accumulated: its bucket may be complete.
  void ready(std::size_t param) {
    if (!armed) {
      armed = true;
      for (Bucket& b : buckets) b.pending = b.params.size();
      autograd::queue_callback([this] { finish(); });
    }
    Bucket& bucket = buckets[bucket_of[param]];
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
      const Tensor averaged = wait_tensor(b.reduced);
      b.reduced = Tensor();
      std::int64_t offset = 0;
      for (std::size_t i : b.params) {
        const Tensor& p = params[i];
        const Tensor slice = view(narrow(averaged, 0, offset, p.numel()), p.sizes());
        offset += p.numel();
        if (p.grad().defined()) copy_(p.grad(), slice);
        else set_grad(p, clone(slice));
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

Tensor DistributedDataParallel::forward(const Tensor& input) { return (*module_)(input); }

std::size_t DistributedDataParallel::num_buckets() const { return reducer_->buckets.size(); }

}  // namespace strata::distributed
