// ops/indexing.h: LibTorch's tensor indexing (at::indexing): `a[0]`, `a.index({Slice(1, 3), 0})`,
// `a.index_put_({0}, 5.0)`. Basic indexing only: integers, slices, None and Ellipsis, applied as the
// select / slice / unsqueeze views PyTorch's indexing dispatches, in PyTorch's order.
//
// Note [Indexing is its views]
// PyTorch's `a[1:3, 0]` is not an op: its indexing code walks the indices and dispatches
// aten::slice.Tensor(a, 0, 1, 3), then aten::select.int(..., 1, 0), so a dispatch mode sees the
// views and autograd records them (the result is a view of `a`). strata's index() is the same walk
// over the same ops. index_put_ takes the view and writes it, as PyTorch's set_item does: copy_ of
// a value of the view's shape (broadcasting otherwise), fill_ of a number. Advanced indexing (tensor
// or bool indices: aten::index.Tensor, which gathers into a new tensor) is not in strata; it is
// refused with an error naming it, never silently read as something else.
#pragma once

#include <cstdint>
#include <optional>

#include "../core/tensor.h"

namespace strata::indexing {

// A Python slice `start:stop:step`; the defaults are `:` (PyTorch's Slice()).
class Slice {
 public:
  Slice(std::optional<std::int64_t> start = std::nullopt, std::optional<std::int64_t> stop = std::nullopt,
        std::optional<std::int64_t> step = std::nullopt);
  std::int64_t start() const { return start_; }
  std::int64_t stop() const { return stop_; }
  std::int64_t step() const { return step_; }

 private:
  std::int64_t start_, stop_, step_;
};

struct EllipsisIndexType {};
struct NoneIndexType {};
inline constexpr EllipsisIndexType Ellipsis{};
inline constexpr NoneIndexType None{};

// One index of a[...]: an integer (select), a Slice (slice), None (unsqueeze), Ellipsis (the
// dimensions the other indices do not name), or a tensor / bool (advanced indexing, refused).
class TensorIndex {
 public:
  enum class Kind { Integer, Slice, None, Ellipsis, Boolean, Tensor };
  TensorIndex(std::int64_t integer) : kind_(Kind::Integer), integer_(integer) {}
  TensorIndex(int integer) : TensorIndex(static_cast<std::int64_t>(integer)) {}
  TensorIndex(Slice slice) : kind_(Kind::Slice), slice_(slice) {}
  TensorIndex(NoneIndexType) : kind_(Kind::None) {}
  TensorIndex(EllipsisIndexType) : kind_(Kind::Ellipsis) {}
  TensorIndex(bool boolean) : kind_(Kind::Boolean), integer_(boolean) {}
  TensorIndex(Tensor tensor) : kind_(Kind::Tensor), tensor_(std::move(tensor)) {}

  Kind kind() const { return kind_; }
  std::int64_t integer() const { return integer_; }
  const Slice& slice() const { return slice_; }

 private:
  Kind kind_;
  std::int64_t integer_ = 0;
  Slice slice_;
  Tensor tensor_;
};

}  // namespace strata::indexing

namespace strata {

// `self` indexed by `indices` (a view of it), and `self` with that view overwritten by `value`.
Tensor index(const Tensor& self, ArrayRef<indexing::TensorIndex> indices);
const Tensor& index_put_(const Tensor& self, ArrayRef<indexing::TensorIndex> indices, const Tensor& value);
const Tensor& index_put_(const Tensor& self, ArrayRef<indexing::TensorIndex> indices, const Scalar& value);

}  // namespace strata
