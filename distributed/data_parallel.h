// distributed/data_parallel.h: DistributedDataParallel (torch.nn.parallel.DistributedDataParallel):
// wraps a module so that every rank of a group trains the same parameters on its own share of the
// batch. Rank 0's parameters are broadcast when it is made; during each backward, gradients are
// averaged over the ranks in flat buckets, each reduced (c10d::allreduce_) as soon as its last
// gradient is accumulated (overlapping the rest of the backward); the optimizer then steps as usual.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../core/tensor_hooks.h"
#include "../nn/module.h"

namespace strata::distributed {

struct DataParallelOptions {
  std::string group_name = "0";
  // Upstream's bucket_cap_mb=25, and its smaller first bucket (the last parameters' gradients, ready
  // first), so that a reduction starts early in the backward.
  std::int64_t bucket_cap_bytes = std::int64_t{25} << 20;
  std::int64_t first_bucket_bytes = std::int64_t{1} << 20;
};

// Note [How DistributedDataParallel reduces]
// As upstream's reducer (reducer.cpp), so a dispatch mode sees the ops PyTorch's DDP dispatches.
// Parameters are assigned to buckets in reverse registration order (the order their gradients
// become ready), each bucket at most bucket_cap_bytes of gradients (the first first_bucket_bytes),
// the same on every rank; a bucket is one flat tensor with a view per parameter. A
// post-accumulate-grad hook on each parameter writes its gradient divided by the world size into
// its view (aten::mul.out, upstream's mark_variable_ready_dense) and counts its bucket down; when a
// bucket's last gradient has arrived, c10d::allreduce_ sums it in place across the ranks while the
// backward goes on. A final callback of the backward pass (autograd::queue_callback) starts the
// buckets that did not fill (a parameter that got no gradient contributes zeros, as upstream's
// find_unused_parameters does), waits for every bucket in order, and copies an as_strided view of
// the bucket per parameter into its .grad (upstream's finalize_backward). Every rank must run the
// same backward, so buckets start in the same order everywhere (a rank that differs gets the
// collectives' disagreement error, not wrong gradients).
class DistributedDataParallel final : public nn::Module {
 public:
  explicit DistributedDataParallel(std::shared_ptr<nn::Module> module, DataParallelOptions options = {});
  ~DistributedDataParallel() override;
  DistributedDataParallel(const DistributedDataParallel&) = delete;
  DistributedDataParallel& operator=(const DistributedDataParallel&) = delete;

  Tensor forward(const Tensor& input) override;
  nn::Module& module() { return *module_; }
  std::size_t num_buckets() const;

 private:
  std::string type_name() const override { return "DistributedDataParallel"; }
  struct Reducer;
  std::shared_ptr<nn::Module> module_;
  std::shared_ptr<Reducer> reducer_;
  std::vector<RemovableHandle> hooks_;
};

}  // namespace strata::distributed
