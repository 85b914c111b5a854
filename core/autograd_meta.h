// core/autograd_meta.h: the autograd state a tensor carries once it requires grad or has a history.
// The struct lives in core so a Tensor can answer requires_grad()/grad()/is_leaf(); Node and everything
// that reads or writes graphs live in autograd/. Plain tensors have none (no allocation).
#pragma once

#include <cstdint>
#include <memory>

#include "core/tensor.h"

namespace strata {

namespace autograd {
class Node;
}

struct AutogradMeta {
  bool requires_grad = false;                 // set on leaves by requires_grad_()
  Tensor grad;                                // .grad, accumulated by AccumulateGrad
  std::shared_ptr<autograd::Node> grad_fn;    // the node that made this tensor (null on leaves)
  std::weak_ptr<autograd::Node> grad_accumulator;  // a leaf's AccumulateGrad, made on first use
  std::uint32_t output_nr = 0;                // which output of grad_fn this tensor is
};

}  // namespace strata
