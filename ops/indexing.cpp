// ops/indexing.cpp: LibTorch's basic indexing as the views PyTorch's indexing dispatches
// (Note [Indexing is its views], ops/indexing.h).
#include "ops/indexing.h"

#include <limits>

#include "ops/functions.h"

namespace strata::indexing {

Slice::Slice(std::optional<std::int64_t> start, std::optional<std::int64_t> stop, std::optional<std::int64_t> step)
    : start_(start.value_or(0)), stop_(stop.value_or(std::numeric_limits<std::int64_t>::max())),
      step_(step.value_or(1)) {}

}  // namespace strata::indexing

namespace strata {
namespace {

using indexing::TensorIndex;
using Kind = TensorIndex::Kind;

// The dimensions of `self` the indices consume: integers and slices take one each.
std::int64_t consumed_dims(ArrayRef<TensorIndex> indices) {
  std::int64_t n = 0;
  for (const TensorIndex& index : indices)
    if (index.kind() == Kind::Integer || index.kind() == Kind::Slice) ++n;
  return n;
}

// PyTorch's applySelect: its own bounds check (its wording differs from select's), then select.
Tensor select_index(const Tensor& self, std::int64_t dim, std::int64_t index) {
  STRATA_CHECK(self.dim() > 0, "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                               "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number");
  const std::int64_t size = self.sizes()[static_cast<std::size_t>(dim)];
  STRATA_CHECK(index >= -size && index < size, "index ", index, " is out of bounds for dimension ", dim,
               " with size ", size);
  return select(self, dim, index);
}

}  // namespace

Tensor index(const Tensor& self, ArrayRef<TensorIndex> indices) {
  STRATA_CHECK(self.defined(), "index(): expected a defined tensor");
  const std::int64_t specified = consumed_dims(indices);
  STRATA_CHECK(specified <= self.dim() || (self.dim() == 0 && specified == 0),
               "too many indices for tensor of dimension ", self.dim());
  Tensor result = self;
  std::int64_t dim = 0;
  bool seen_ellipsis = false;
  for (const TensorIndex& index : indices) {
    switch (index.kind()) {
      case Kind::Integer:
        result = select_index(result, dim, index.integer());  // the dimension goes away
        break;
      case Kind::Slice:
        result = slice(result, dim, index.slice().start(), index.slice().stop(), index.slice().step());
        ++dim;
        break;
      case Kind::None:
        result = unsqueeze(result, dim);
        ++dim;
        break;
      case Kind::Ellipsis:
        STRATA_CHECK(!seen_ellipsis, "an index can only have a single ellipsis ('...')");
        seen_ellipsis = true;
        dim += self.dim() - specified;  // the dimensions no other index names
        break;
      case Kind::Boolean:
      case Kind::Tensor:
        STRATA_CHECK(false, "index(): strata has no advanced indexing (aten::index.Tensor): tensor and bool indices "
                            "are not supported; index with integers, Slice, None and Ellipsis");
    }
  }
  return result;
}

// PyTorch's set_item: the indexed view, then its copy_to: copy_ when the shapes agree, fill_ for a
// 0-d value (PyTorch's fill_.Tensor; strata's fill_ takes the number, so a value that requires grad
// passes no gradient through it), copy_ broadcasting otherwise.
const Tensor& index_put_(const Tensor& self, ArrayRef<TensorIndex> indices, const Tensor& value) {
  const Tensor view = index(self, indices);
  if (value.dim() == 0 && view.dim() != 0) fill_(view, value.item());
  else copy_(view, value);
  return self;
}

// A number becomes a 0-d tensor of self's dtype first, as in PyTorch (made without dispatching).
const Tensor& index_put_(const Tensor& self, ArrayRef<TensorIndex> indices, const Scalar& value) {
  const Tensor view = index(self, indices);
  if (view.dim() != 0) fill_(view, value);
  else copy_(view, scalar_tensor(value, self.dtype()));
  return self;
}

Tensor Tensor::operator[](std::int64_t index) const { return strata::index(*this, {indexing::TensorIndex(index)}); }
Tensor Tensor::index(ArrayRef<indexing::TensorIndex> indices) const { return strata::index(*this, indices); }
const Tensor& Tensor::index_put_(ArrayRef<indexing::TensorIndex> indices, const Tensor& value) const {
  return strata::index_put_(*this, indices, value);
}
const Tensor& Tensor::index_put_(ArrayRef<indexing::TensorIndex> indices, const Scalar& value) const {
  return strata::index_put_(*this, indices, value);
}

}  // namespace strata
