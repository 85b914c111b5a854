// ops/native/operand.h: a kernel's read-only operand in the form the kernel reads: the caller's tensor,
// borrowed, when it already is in that form, or a copy made (and owned) only when it is not.
// Note [Operands are read where they are].
#pragma once

#include "../../core/tensor.h"

namespace strata::ops {

// Note [Operands are read where they are]
// A kernel that reads its inputs as flat arrays needs a contiguous operand, and `const Tensor x =
// contiguous(t)` would copy the handle even when t already is contiguous: two atomic reference-count
// updates per operand. The same holds for a kernel that computes in a promoted dtype and a tensor
// already of that dtype. An Operand
// points at the caller's tensor and makes (and owns) a contiguous copy only when the kernel needs
// one: Operand::contiguous(t) for a tensor that is not contiguous, Operand::in_dtype(t, dtype) for
// one of another dtype. The check is inline; the copy is out of line. An Operand refers to itself,
// so it is neither copied nor moved: the named constructors return it as a prvalue, which C++17
// constructs in place. Use it as a local or as a temporary argument:
// `binary_loop<T>(out, Operand::in_dtype(a, dt), Operand::in_dtype(b, dt), fn)`.
class Operand {
 public:
  // t, or a contiguous copy of it when it is not contiguous. An undefined t stays undefined.
  static Operand contiguous(const Tensor& t) { return Operand(t, t.defined() && !t.is_contiguous()); }
  // t, or a contiguous copy of it converted to `dtype` when its dtype differs.
  static Operand in_dtype(const Tensor& t, ScalarType dtype) { return Operand(t, dtype); }

  Operand(const Operand&) = delete;
  Operand& operator=(const Operand&) = delete;

  const Tensor& operator*() const { return *tensor_; }
  const Tensor* operator->() const { return tensor_; }
  operator const Tensor&() const { return *tensor_; }  // NOLINT: passed where a kernel takes a Tensor

 protected:
  Operand(const Tensor& t, ScalarType dtype) : tensor_(&t) {
    if (t.dtype() != dtype) copy_as(dtype);
  }

 private:
  Operand(const Tensor& t, bool copy) : tensor_(&t) {
    if (copy) copy_as(t.dtype());
  }
  // Points the operand at a fresh contiguous copy of the tensor in `dtype` (ops/native/elementwise.cpp).
  void copy_as(ScalarType dtype);

  Tensor copy_;  // undefined unless the operand is a copy
  const Tensor* tensor_;
};

}  // namespace strata::ops
