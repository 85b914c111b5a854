// ops/split_ops.cpp: split.Tensor and split_with_sizes, the ops that return a list of views of self
// (PyTorch 2.8's split and split_with_sizes in aten/src/ATen/native/TensorShape.cpp: their checks in
// its words, each piece a narrow of self along dim), their boxed kernels, the composites chunk and
// split.sizes (PyTorch's CompositeImplicitAutograd ops: chunk dispatches split.Tensor, or
// split_with_sizes for an empty dimension; split.sizes dispatches split_with_sizes), so a mode sees
// what PyTorch's sees (Note [A composite op decomposes at Autograd]), and their front ends.
#include <vector>

#include "core/autograd_meta.h"
#include "ops/boxing.h"
#include "ops/composite_op.h"
#include "ops/functions.h"
#include "ops/op_table.h"

namespace strata::ops {

namespace {

// Note [The outputs of a multi-output view]
// split's and split_with_sizes' pieces are views of self, tracked as every view is (Note [Every view
// of a float tensor is tracked], core/autograd_meta.h), and marked as outputs of an op that returns
// several views: PyTorch's CreationMeta::MULTI_OUTPUT_NODE. Autograd refuses an in-place op on such a
// piece (one node gives all pieces their history, so it cannot be rebased for one of them) and a use
// of a piece after its base or a sibling was written, in PyTorch's words (autograd/view_history.cpp).
// A piece made with grad mode off is a no_grad view instead, as PyTorch's is.
std::vector<Tensor> pieces_of(const Tensor& self, std::int64_t dim, IntArrayRef lengths) {
  const auto d = static_cast<std::size_t>(wrap_dim(dim, self.dim()));
  std::vector<Tensor> out;
  out.reserve(lengths.size());
  DimVector sizes(self.sizes());
  std::int64_t offset = self.storage_offset();
  for (std::int64_t length : lengths) {
    sizes[d] = length;
    Tensor piece = strata::detail::make_view(self, sizes, self.strides(), offset);
    track_view(self, piece);
    if (AutogradMeta* meta = piece.impl()->autograd_meta(); meta && meta->is_view()) meta->view.multi_output = true;
    out.push_back(std::move(piece));
    offset += length * self.strides()[d];
  }
  return out;
}

// PyTorch's get_num_splits and split: pieces of split_size, the last one what is left (the whole
// dimension when split_size exceeds it; one empty piece for split_size 0 of an empty dimension).
DimVector split_lengths(const Tensor& self, std::int64_t split_size, std::int64_t dim) {
  STRATA_CHECK(self.dim() != 0, "split expects at least a 1-dimensional tensor");
  STRATA_CHECK(split_size >= 0, "split expects split_size be non-negative, but got split_size=", split_size);
  const std::int64_t dim_size = self.sizes()[static_cast<std::size_t>(wrap_dim(dim, self.dim()))];
  STRATA_CHECK(split_size > 0 || dim_size == 0,
               "split_size can only be 0 if dimension size is 0, but got dimension size of ", dim_size);
  const std::int64_t num_splits = split_size == 0 ? 1 : std::max<std::int64_t>((dim_size + split_size - 1) / split_size, 1);
  DimVector lengths(static_cast<std::size_t>(num_splits), split_size);
  lengths.back() = split_size - (split_size * num_splits - dim_size);
  return lengths;
}

void check_split_sizes(const Tensor& self, IntArrayRef split_sizes, std::int64_t dim) {
  STRATA_CHECK(self.dim() != 0, "split expects at least a 1-dimensional tensor");
  const std::int64_t dim_size = self.sizes()[static_cast<std::size_t>(wrap_dim(dim, self.dim()))];
  std::int64_t total = 0;
  for (std::int64_t length : split_sizes) {
    STRATA_CHECK(length >= 0, "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=",
                 shape_str(split_sizes));
    total += length;
  }
  STRATA_CHECK(total == dim_size, "split_with_sizes expects split_sizes to sum exactly to ", dim_size,
               " (input tensor's size at dimension ", dim, "), but got split_sizes=", shape_str(split_sizes));
}

// The boxed kernels (CPU and Meta alike: views touch no data). The pieces are made before the
// arguments they read leave the stack.
void split_kernel(const OperatorHandle&, DispatchKeySet, Stack& stack) {
  const IValue* args = stack.data() + stack.size() - 3;  // self, split_size, dim
  const Tensor& self = args[0].to_tensor();
  std::vector<Tensor> out = pieces_of(self, args[2].to_int(), split_lengths(self, args[1].to_int(), args[2].to_int()));
  stack.truncate(stack.size() - 3);
  stack.emplace_back(std::move(out));
}

void split_with_sizes_kernel(const OperatorHandle&, DispatchKeySet, Stack& stack) {
  const IValue* args = stack.data() + stack.size() - 3;  // self, split_sizes, dim
  const Tensor& self = args[0].to_tensor();
  const IntArrayRef sizes = args[1].to_int_list();
  check_split_sizes(self, sizes, args[2].to_int());
  std::vector<Tensor> out = pieces_of(self, args[2].to_int(), sizes);
  stack.truncate(stack.size() - 3);
  stack.emplace_back(std::move(out));
}

std::vector<Tensor> call_list_op(const OperatorHandle& op, const Tensor& self, const IValue& second, std::int64_t dim) {
  Stack stack;
  strata::detail::push_argument(stack, self);
  stack.emplace_back(second);
  stack.emplace_back(dim);
  op.call(stack);
  return std::move(stack.back().to_tensor_list());
}

// The composites' kernels: each runs on its arguments where they lie, then replaces them with the
// pieces. chunk is PyTorch 2.8's: pieces of ceil(size / chunks), so fewer than `chunks` when the last
// ones would be empty (6 in 4 chunks gives 3 of 2); an empty dimension gives `chunks` empty pieces.
void chunk_kernel(const OperatorHandle&, DispatchKeySet, Stack& stack) {
  const IValue* args = stack.data() + stack.size() - 3;  // self, chunks, dim
  const Tensor& self = args[0].to_tensor();
  const std::int64_t chunks = args[1].to_int(), dim = args[2].to_int();
  STRATA_CHECK(self.dim() > 0, "chunk expects at least a 1-dimensional tensor");
  STRATA_CHECK(chunks > 0, "chunk expects `chunks` to be greater than 0, got: ", chunks);
  const std::int64_t dim_size = self.sizes()[static_cast<std::size_t>(wrap_dim(dim, self.dim()))];
  const std::int64_t split_size = (dim_size + chunks - 1) / chunks;
  static const OperatorHandle split = op("aten::split", "Tensor");
  static const OperatorHandle split_with_sizes = op("aten::split_with_sizes");
  std::vector<Tensor> out =
      split_size == 0 && dim_size == 0
          ? call_list_op(split_with_sizes, self, IValue(DimVector(static_cast<std::size_t>(chunks), 0)), dim)
          : call_list_op(split, self, IValue(split_size), dim);
  stack.truncate(stack.size() - 3);
  stack.emplace_back(std::move(out));
}

void split_sizes_kernel(const OperatorHandle&, DispatchKeySet, Stack& stack) {
  const IValue* args = stack.data() + stack.size() - 3;  // self, split_size, dim
  static const OperatorHandle split_with_sizes = op("aten::split_with_sizes");
  std::vector<Tensor> out = call_list_op(split_with_sizes, args[0].to_tensor(), args[1], args[2].to_int());
  stack.truncate(stack.size() - 3);
  stack.emplace_back(std::move(out));
}

}  // namespace

void register_split_ops(Dispatcher& d) {
  const KernelFunction split{&split_kernel, "split (views)"};
  const KernelFunction split_with_sizes{&split_with_sizes_kernel, "split_with_sizes (views)"};
  d.def("aten", "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]", split, split);
  d.def("aten", "split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]", split_with_sizes,
        split_with_sizes);
  def_composite(d, "aten", "chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]",
                {&chunk_kernel, "chunk (decomposes into split)"});
  def_composite(d, "aten", "split.sizes(Tensor(a -> *) self, SymInt[] split_size, int dim=0) -> Tensor(a)[]",
                {&split_sizes_kernel, "split.sizes (decomposes into split_with_sizes)"});
}

}  // namespace strata::ops

namespace strata {

std::vector<Tensor> split(const Tensor& self, std::int64_t split_size, std::int64_t dim) {
  STRATA_TORCH_FUNCTION(split, "torch.functional.split", "tensor, split_size_or_sections, *, dim", self, split_size, dim);
  static const OperatorHandle op = ops::op("aten::split", "Tensor");
  return ops::call_list_op(op, self, IValue(split_size), dim);
}

std::vector<Tensor> split(const Tensor& self, IntArrayRef split_sizes, std::int64_t dim) {
  STRATA_TORCH_FUNCTION(split, "torch.functional.split", "tensor, split_size_or_sections, *, dim", self, split_sizes, dim);
  static const OperatorHandle op = ops::op("aten::split", "sizes");
  return ops::call_list_op(op, self, IValue(split_sizes), dim);
}

std::vector<Tensor> split_with_sizes(const Tensor& self, IntArrayRef split_sizes, std::int64_t dim) {
  STRATA_TORCH_FUNCTION(split_with_sizes, "torch.split_with_sizes", "input, split_sizes, [dim=0]", self, split_sizes, dim);
  static const OperatorHandle op = ops::op("aten::split_with_sizes");
  return ops::call_list_op(op, self, IValue(split_sizes), dim);
}

std::vector<Tensor> chunk(const Tensor& self, std::int64_t chunks, std::int64_t dim) {
  STRATA_TORCH_FUNCTION(chunk, "torch.chunk", "input, chunks, [dim=0]", self, chunks, dim);
  static const OperatorHandle op = ops::op("aten::chunk");
  return ops::call_list_op(op, self, IValue(chunks), dim);
}

}  // namespace strata
