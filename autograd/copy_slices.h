// autograd/copy_slices.h: CopySlices, the history an in-place op on a differentiable view gives the
// view's base (PyTorch's torch/csrc/autograd/functions/tensor.h). It runs the in-place op's node on the
// view's part of the base's gradient and passes the rest of that gradient through unchanged.
// Making it the base's history is rebase_history's job (autograd/view_history.h).
#pragma once

#include "node.h"

namespace strata::autograd {

class CopySlices final : public Node {
 public:
  // `fn` is the node the in-place op recorded on `view` (its edge 0 was the view's old history). The
  // next edges are the base's current gradient edge, then fn's edges 1..n (the op's other inputs).
  CopySlices(const Tensor& base, const Tensor& view, NodePtr fn);
  ~CopySlices() override;
  std::string_view name() const override { return "CopySlices"; }
  variable_list apply(std::span<Tensor> grads) override;
  void release_variables() override { fn_.reset(); }  // a second backward then fails, as PyTorch's

 private:
  // Geometry only, as PyTorch's at::TensorGeometry: keeping the base itself would be a cycle.
  struct Geometry {
    explicit Geometry(const Tensor& t) : sizes(t.sizes()), strides(t.strides()), storage_offset(t.storage_offset()) {}
    DimVector sizes;
    DimVector strides;
    std::int64_t storage_offset;
  };
  Geometry base_;
  Geometry view_;
  NodePtr fn_;
};

}  // namespace strata::autograd
