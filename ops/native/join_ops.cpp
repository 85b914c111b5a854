// ops/native/join_ops.cpp: cat, which joins tensors along an existing dimension, and stack, which joins
// equal-sized tensors along a new one. cat's meta function follows PyTorch's cat_meta (legacy empty
// inputs of shape [0] are skipped, the dtype is promoted across every input), stack's PyTorch's stack
// (check_stack_inputs, then cat's checks); the CPU functions copy each input into its part of the output.
#include "core/util/checked_math.h"
#include "ops/boxing.h"
#include "ops/native/elementwise.h"
#include "ops/op_table.h"

namespace strata::ops {

namespace {

// PyTorch keeps accepting 1-D empty tensors of any other shape in cat (legacy behaviour): they take
// no part in the shape checks and add nothing to the output.
bool skipped_in_cat(const Tensor& t) { return t.dim() == 1 && t.sizes()[0] == 0; }

TensorSpec cat_meta(TensorList tensors, std::int64_t dim) {
  STRATA_CHECK(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  for (std::size_t i = 0; i < tensors.size(); ++i)
    STRATA_CHECK(tensors[i].defined(), "Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument #0 'tensors'");
  ScalarType dtype = tensors[0].dtype();
  for (const Tensor& t : tensors) dtype = promote_types(dtype, t.dtype());
  for (std::size_t i = 0; i < tensors.size(); ++i)
    STRATA_CHECK(tensors[i].dim() > 0, "zero-dimensional tensor (at position ", i, ") cannot be concatenated");
  // The first input that is not skipped gives the shape; with none, the output is the first input's [0].
  std::size_t first = 0;
  while (first < tensors.size() && skipped_in_cat(tensors[first])) ++first;
  if (first == tensors.size()) {
    wrap_dim(dim, 1);
    return {DimVector{0}, dtype, {}};
  }
  const IntArrayRef shape = tensors[first].sizes();
  const auto d = static_cast<std::size_t>(wrap_dim(dim, static_cast<std::int64_t>(shape.size())));
  DimVector sizes(shape);
  std::int64_t total = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (skipped_in_cat(t)) continue;
    STRATA_CHECK(t.dim() == static_cast<std::int64_t>(shape.size()), "Tensors must have same number of dimensions: got ",
                 shape.size(), " and ", t.dim());
    for (std::size_t k = 0; k < shape.size(); ++k)
      STRATA_CHECK(k == d || t.sizes()[k] == shape[k], "Sizes of tensors must match except in dimension ", d,
                   ". Expected size ", shape[k], " but got size ", t.sizes()[k], " for tensor number ", i, " in the list.");
    STRATA_CHECK(!add_overflows(total, t.sizes()[d], &total), "torch.cat(): the size of dimension ", d, " overflows");
  }
  sizes[d] = total;
  numel_of(sizes);  // "numel: integer multiplication overflow" before anything is allocated
  return {std::move(sizes), dtype, {}};
}

void cat_cpu(const Tensor& out, TensorList tensors, std::int64_t dim) {
  if (out.numel() == 0) return;  // Note [An empty tensor's kernel returns at once]
  const auto d = static_cast<std::size_t>(wrap_dim(dim, out.dim()));
  const IntArrayRef strides = out.strides();
  std::int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (skipped_in_cat(t) || t.sizes()[d] == 0) continue;
    DimVector sizes(out.sizes());
    sizes[d] = t.sizes()[d];
    copy_elements(strata::detail::make_view(out, sizes, strides, offset * strides[d]), t);
    offset += t.sizes()[d];
  }
}

// ---- stack: the inputs as slices out.select(dim, i) of a new dimension ----
TensorSpec stack_meta(TensorList tensors, std::int64_t dim) {
  STRATA_CHECK(!tensors.empty(), "stack expects a non-empty TensorList");
  for (std::size_t i = 0; i < tensors.size(); ++i)
    STRATA_CHECK(tensors[i].defined(), "Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument #0 'tensors'");
  const IntArrayRef shape = tensors[0].sizes();
  const auto d = static_cast<std::size_t>(wrap_dim(dim, tensors[0].dim() + 1));
  for (std::size_t i = 1; i < tensors.size(); ++i)
    STRATA_CHECK(tensors[i].sizes() == shape, "stack expects each tensor to be equal size, but got ", shape_str(shape),
                 " at entry 0 and ", shape_str(tensors[i].sizes()), " at entry ", i);
  ScalarType dtype = tensors[0].dtype();
  for (const Tensor& t : tensors) dtype = promote_types(dtype, t.dtype());
  DimVector sizes;
  for (std::size_t k = 0; k <= shape.size(); ++k) {
    if (k == d) sizes.push_back(static_cast<std::int64_t>(tensors.size()));
    if (k < shape.size()) sizes.push_back(shape[k]);
  }
  numel_of(sizes);  // "numel: integer multiplication overflow" before anything is allocated
  return {std::move(sizes), dtype, {}};
}

void stack_cpu(const Tensor& out, TensorList tensors, std::int64_t dim) {
  if (out.numel() == 0) return;  // Note [An empty tensor's kernel returns at once]
  const auto d = static_cast<std::size_t>(wrap_dim(dim, out.dim()));
  const std::int64_t step = out.strides()[d];
  DimVector strides;  // out's strides without dimension d: those of each input's slice
  for (std::size_t k = 0; k < static_cast<std::size_t>(out.dim()); ++k)
    if (k != d) strides.push_back(out.strides()[k]);
  for (std::size_t i = 0; i < tensors.size(); ++i)
    copy_elements(strata::detail::make_view(out, tensors[i].sizes(), strides, static_cast<std::int64_t>(i) * step), tensors[i]);
}

}  // namespace

// register_join_ops(): the rows of join_ops.yaml, which scripts/gen-ops writes as C++ at build time.
#include "ops/generated/join_ops_rows.inc"

}  // namespace strata::ops
