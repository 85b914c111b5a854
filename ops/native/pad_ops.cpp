// ops/native/pad_ops.cpp: constant_pad_nd, PyTorch 2.8's constant_pad_nd (aten/src/ATen/native/PadNd.cpp):
// its checks and output shape, and a kernel that fills the output with the value and copies the part of
// the input the pads keep (negative pads crop) into the part of the output they leave.
#include "core/util/small_vector.h"
#include "ops/boxing.h"
#include "ops/native/elementwise.h"
#include "ops/op_table.h"

namespace strata::ops {

namespace {

// Where the input's kept part starts, in the input and in the output, and how long it is, for each
// padded dimension (PyTorch's two rounds of narrow, on the input and on the output).
struct PaddedDim {
  std::size_t dim;
  std::int64_t in_start, out_start, length, out_size;
};

DimVector padded_dims(const Tensor& self, IntArrayRef pad, SmallVector<PaddedDim, 4>* dims) {
  STRATA_CHECK(pad.size() % 2 == 0, "Length of pad must be even but instead it equals ", pad.size());
  const std::int64_t l_inp = self.dim();
  const auto l_pad = static_cast<std::int64_t>(pad.size() / 2);
  // PyTorch's words, without spaces around the numbers.
  STRATA_CHECK(l_inp >= l_pad, "Length of pad should be no more than twice the number of dimensions of the input. Pad length is ",
               pad.size(), "while the input has ", l_inp, "dimensions.");
  DimVector sizes(self.sizes());
  for (std::int64_t i = l_inp - l_pad; i < l_inp; ++i) {
    const auto d = static_cast<std::size_t>(i);
    const auto k = static_cast<std::size_t>(2 * (l_inp - i - 1));
    const std::int64_t before = pad[k], after = pad[k + 1];
    // The input is narrowed by each negative pad in turn, as PyTorch's narrow calls do, with narrow's check.
    std::int64_t kept = sizes[d];
    STRATA_CHECK(before >= 0 || kept + before >= 0, "narrow(): length must be non-negative.");
    if (before < 0) kept += before;
    STRATA_CHECK(after >= 0 || kept + after >= 0, "narrow(): length must be non-negative.");
    if (after < 0) kept += after;
    const std::int64_t out_size = sizes[d] + before + after;
    STRATA_CHECK(out_size >= 0, "The input size ", sizes[d], ", plus negative padding ", before, " and ", after,
                 " resulted in a negative output size, which is invalid. Check dimension ", i, " of your input.");
    if (dims) dims->push_back({d, before < 0 ? -before : 0, before > 0 ? before : 0, kept, out_size});
    sizes[d] = out_size;
  }
  return sizes;
}

TensorSpec constant_pad_nd_meta(const Tensor& self, IntArrayRef pad, Scalar) {
  return {padded_dims(self, pad, nullptr), self.dtype(), {}};
}

void constant_pad_nd_cpu(const Tensor& out, const Tensor& self, IntArrayRef pad, Scalar value) {
  SmallVector<PaddedDim, 4> dims;
  padded_dims(self, pad, &dims);
  if (out.numel() == 0) return;
  fill_scalar(out, value);
  DimVector sizes(self.sizes());
  std::int64_t in_offset = self.storage_offset(), out_offset = out.storage_offset();
  for (const PaddedDim& p : dims) {
    if (p.length == 0) return;  // nothing of the input is kept
    sizes[p.dim] = p.length;
    in_offset += p.in_start * self.strides()[p.dim];
    out_offset += p.out_start * out.strides()[p.dim];
  }
  copy_elements(strata::detail::make_view(out, sizes, out.strides(), out_offset),
                strata::detail::make_view(self, sizes, self.strides(), in_offset));
}

}  // namespace

// register_pad_ops(): the rows of pad_ops.yaml, which scripts/gen-ops writes as C++ at build time.
#include "ops/generated/pad_ops_rows.inc"

}  // namespace strata::ops
