// autograd/view_history.cpp: view state, check_inplace, rebase_history and the lazy regeneration of
// a view's grad_fn (Note [Views share their base's history], autograd/view_history.h).
#include "autograd/view_history.h"

#include "autograd/copy_slices.h"
#include "autograd/derivative_table.h"
#include "autograd/formula_node.h"
#include "autograd/variable.h"
#include "core/interpose/interposer.h"

namespace strata::autograd {

// Note [A wrapper's view counts its base's writes]
// A view and its base are one family for version counting, as in PyTorch (DifferentiableViewMeta
// takes its base's counter), so that a tensor saved through the view sees a write to the base. A
// kernel's view shares its source's storage, and with it the counter; a wrapper subclass's handler
// returns a new wrapper with a counter of its own, so a recorded view of a wrapper base takes the
// base's counter here. (A wrapper view recorded by no autograd, with grad mode off or no input that
// requires grad, keeps its own: nothing saved it, so no backward can miss a write.)
namespace {
bool is_wrapper(const Tensor& t) { return !t.impl()->storage() && t.subclass(); }

void share_version_counter(const Tensor& view, const Tensor& base) {
  if (is_wrapper(view) && is_wrapper(base)) view.subclass()->share_version_counter(*base.subclass());
}
}  // namespace

void make_differentiable_view(const Tensor& view, Tensor&& base) {
  if (view.is_same(base)) return;  // a mode or subclass handler gave back its input: no view, and no cycle
  AutogradMeta& meta = view.impl()->ensure_autograd_meta();
  if (meta.is_view()) return;  // the view kernel tracked it (Note [Every view of a float tensor is tracked])
  share_version_counter(view, base);
  meta.view.base = std::move(base);
  meta.view.version = view.impl()->version();
}

// PyTorch's handle_view_on_rebase for a view made in no_grad mode (CreationMeta::NO_GRAD_MODE), in its words.
[[noreturn, gnu::cold]] void throw_no_grad_view(const Tensor& self) {
  const AutogradMeta* meta = self.impl()->autograd_meta();
  const std::string prefix = meta && meta->grad_fn
                                 ? strata::detail::str_cat("Output ", meta->output_nr, " of ", meta->grad_fn->name(),
                                                           " is a view of a view which was created in")
                                 : std::string("A view was created in");
  strata::detail::throw_error(strata::detail::str_cat(prefix,
               " no_grad mode and is being modified inplace with grad mode enabled. Given that this use case is "
               "ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the "
               "inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both "
               "outside (if you want the inplace to be tracked)."));
}

// PyTorch's handle_view_on_rebase for an output of an op that returns several views
// (CreationMeta::MULTI_OUTPUT_NODE; Note [The outputs of a multi-output view], ops/split_ops.cpp):
// written itself, or (indirect) used after its base or a sibling was written.
[[noreturn, gnu::cold]] void throw_multi_output_view(const Tensor& self, bool indirect) {
  const AutogradMeta* meta = self.impl()->autograd_meta();
  const char* modified = indirect ? "its base or another view of its base has been" : "is being";
  const std::string head =
      meta->grad_fn ? strata::detail::str_cat("Output ", meta->output_nr, " of ", meta->grad_fn->name(), " is a view and ",
                                              modified, " modified inplace.")
                    : strata::detail::str_cat("A view was created in no_grad mode and ", modified,
                                              " modified inplace with grad mode enabled.");
  strata::detail::throw_error(strata::detail::str_cat(
      head, " This view is the output of a function that returns multiple views. Such functions do not allow the output "
            "views to be modified inplace. You should replace the inplace operation by an out-of-place one."));
}

void check_inplace(const Tensor& self) {
  if (self.impl()->is_no_grad_view()) [[unlikely]] throw_no_grad_view(self);
  if (const ViewInfo* info = view_info(self); info && info->multi_output) [[unlikely]] throw_multi_output_view(self, false);
  // PyTorch's view requires grad through its base (DifferentiableViewMeta::requires_grad), also when it
  // was taken before its leaf base was set to require grad; strata's view answers only for itself, so
  // the base is asked too. Recording a write to such a view would give the leaf a CopySlices history
  // whose edges reach the leaf's own AccumulateGrad, which holds the leaf: a reference cycle.
  const ViewInfo* info = view_info(self);
  STRATA_CHECK(!info || !info->base.is_leaf() || !(self.requires_grad() || info->base.requires_grad()),
               "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  STRATA_CHECK(!self.requires_grad() || !self.is_leaf(), "a leaf Variable that requires grad is being used in an in-place operation.");
}

// The view's grad_fn as PyTorch regenerates it: AsStridedBackward0 over the base's current gradient
// edge, recording the base's geometry and the view's sizes, strides and offset (the derivative row of
// as_strided, called as `base.as_strided(view.sizes(), view.strides(), view.storage_offset())`).
void regenerate_view_grad_fn(const Tensor& view, AutogradMeta& meta) {
  if (!meta.grad_fn && !meta.view.base.requires_grad()) return;  // a view without history of a base without one
  if (meta.view.multi_output) [[unlikely]] throw_multi_output_view(view, true);
  static const OperatorHandle as_strided = *Dispatcher::singleton().find("aten::as_strided", "");
  const ResolvedRow* row = derivative_table().find(as_strided);  // looked up each time: rows move when added
  STRATA_INTERNAL_ASSERT(row && row->kind == Differentiability::Formula, "as_strided has a derivative formula");
  const IValue args[] = {IValue(IValue::Borrow{}, meta.view.base), IValue(view.sizes()), IValue(view.strides()),
                         IValue(view.storage_offset())};
  NodePtr node = make_node<FormulaNode>(*row, args);
  node->add_input_metadata(view);
  set_gradient_edge(view, Edge{std::move(node), 0});  // and records the current version
}

Node* view_grad_fn(const Tensor& view) {
  AutogradMeta& meta = *view.impl()->autograd_meta();
  refresh_view_grad_fn(view, meta);
  return meta.grad_fn;
}

void rebase_history(const Tensor& self, Edge e) {
  AutogradMeta* meta = self.impl()->autograd_meta();
  if (!meta || !meta->is_view()) {
    set_gradient_edge(self, std::move(e));
    return;
  }
  STRATA_INTERNAL_ASSERT(e.input_nr == 0 && e.function->num_inputs() == 1,
                         "Functions which modify views in-place must return a single Variable");
  const Tensor base = meta->view.base;
  set_gradient_edge(base, Edge{make_node<CopySlices>(base, self, std::move(e.function)), 0});
  // Regenerated whatever the version says: an op a wrapper subclass handles may bump none.
  regenerate_view_grad_fn(self, *meta);
}

}  // namespace strata::autograd
