// autograd/accumulate_grad.cpp: AccumulateGrad and the layout contract.
#include "autograd/accumulate_grad.h"

#include "autograd/grad_mode.h"
#include "core/autograd_meta.h"
#include "ops/detach.h"
#include "ops/functions.h"

namespace strata::autograd {

AccumulateGrad::AccumulateGrad(const Tensor& variable) : Node(kAccumulateGradSequenceNr), variable_(variable) {
  add_input_metadata(variable_);
}

variable_list AccumulateGrad::apply(variable_list&& grads) {
  Tensor grad = std::move(grads[0]);
  if (grad.defined()) accumulate_grad(variable_, std::move(grad));
  return {};
}

bool obeys_layout_contract(const Tensor& grad, const Tensor& variable) {
  if (!variable.is_non_overlapping_and_dense()) return grad.is_contiguous();
  for (std::size_t d = 0; d < grad.sizes().size(); ++d) {
    if (grad.sizes()[d] != 1) {
      if (grad.strides()[d] != variable.strides()[d]) return false;
    } else if (grad.strides()[d] == 0) {
      return false;
    }
  }
  return true;
}

namespace {
// PyTorch's clone_obey_contract: a copy of new_grad in the leaf's layout.
Tensor clone_obey_contract(const Tensor& new_grad, const Tensor& variable) {
  if (variable.is_non_overlapping_and_dense()) {
    Tensor out = new_empty_strided(new_grad, variable.sizes(), variable.strides(), {.dtype = variable.dtype()});
    copy_(out, new_grad);
    return out;
  }
  return clone(new_grad, MemoryFormat::Contiguous);
}
}  // namespace

void accumulate_grad(const Tensor& variable, Tensor new_grad) {
  Tensor& variable_grad = variable.impl()->ensure_autograd_meta().grad;
  if (!variable_grad.defined()) {
    // Steal when this is the only reference (the engine moved it here) and its layout fits. The
    // detach() is PyTorch 2.8's: two dispatched detaches under the interposer
    // (Note [Detach and the interposer]).
    if (!is_grad_enabled() && new_grad.use_count() <= 1 && obeys_layout_contract(new_grad, variable)) {
      variable_grad = detach(new_grad);
    } else {
      variable_grad = clone_obey_contract(new_grad, variable);
    }
  } else if (!is_grad_enabled()) {
    add_(variable_grad, new_grad);  // `variable_grad += new_grad`
  } else {
    variable_grad = add(variable_grad, new_grad);
  }
}

}  // namespace strata::autograd
