// ops/contiguous_operand.h: a kernel's read-only operand as a contiguous tensor. A tensor that already
// is contiguous (or undefined) is used where it is: Note [Operands are read where they are].
#pragma once

#include "core/tensor.h"
#include "ops/elementwise.h"

namespace strata::ops {

// Note [Operands are read where they are]
// Kernels that read their inputs as flat arrays used to take `const Tensor x = contiguous(t)`, which
// copies the handle even when t already is contiguous: two atomic reference-count updates per
// operand, sixteen per seed step across _log_softmax, nll_loss and their backwards. A
// ContiguousOperand points at the caller's tensor and makes (and owns) a contiguous copy only when
// it has to. It refers to itself, so it is neither copied nor moved.
class ContiguousOperand {
 public:
  explicit ContiguousOperand(const Tensor& t) : tensor_(&t) {
    if (t.defined() && !t.is_contiguous()) {
      copy_ = strata::detail::make_contiguous_tensor(t.sizes(), t.dtype(), t.device());
      copy_elements(copy_, t);
      tensor_ = &copy_;
    }
  }
  ContiguousOperand(const ContiguousOperand&) = delete;
  ContiguousOperand& operator=(const ContiguousOperand&) = delete;

  const Tensor& operator*() const { return *tensor_; }
  const Tensor* operator->() const { return tensor_; }

 private:
  Tensor copy_;  // undefined unless the operand was not contiguous
  const Tensor* tensor_;
};

}  // namespace strata::ops
