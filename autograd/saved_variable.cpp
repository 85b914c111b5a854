// autograd/saved_variable.cpp: saving and unpacking (torch/csrc/autograd/saved_variable.cpp).
#include "autograd/saved_variable.h"

#include "autograd/variable.h"
#include "core/autograd_meta.h"
#include "ops/detach.h"

namespace strata::autograd {

SavedVariable::SavedVariable(const Tensor& t, bool is_output) {
  if (!t.defined()) return;
  saved_ = true;
  if (!is_output || t.is_leaf()) {
    saved_original_ = true;
    data_ = t;
    return;
  }
  requires_grad_ = t.requires_grad();
  output_nr_ = t.impl()->autograd_meta()->output_nr;
  data_ = shallow_copy_and_detach(t);  // PyTorch's tensor_data()
}

Tensor SavedVariable::unpack(const std::shared_ptr<Node>& saved_for) const {
  if (!saved_) return Tensor();
  STRATA_CHECK(data_.defined(),
               "Trying to backward through the graph a second time (or directly access saved tensors after they "
               "have already been freed). Saved intermediate values of the graph are freed when you call .backward() "
               "or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time "
               "or if you need to access saved tensors after calling backward.");
  if (saved_original_) return data_;
  // A saved output: rebuild a tensor whose history is the node that saved it (PyTorch's make_variable).
  Tensor var = shallow_copy_and_detach(data_);
  if (saved_for) set_gradient_edge(var, Edge{saved_for, output_nr_});
  else if (requires_grad_) set_requires_grad(var, true);
  return var;
}

}  // namespace strata::autograd
