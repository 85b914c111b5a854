// ops/native/memory_overlap.cpp: internal and partial overlap of in-place outputs.
#include "ops/native/memory_overlap.h"

namespace strata::ops {

void assert_no_internal_overlap(const Tensor& self) {
  // Every element of a contiguous tensor has its own address; PyTorch's has_internal_overlap answers
  // No for any non-overlapping-and-dense tensor, empty ones (contiguous whatever their strides) included.
  if (self.is_contiguous()) return;
  bool repeats = false;
  for (std::int64_t d = 0; d < self.dim(); ++d) repeats = repeats || (self.strides()[d] == 0 && self.sizes()[d] > 1);
  STRATA_CHECK(!repeats,
               "unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
               "Please clone() the tensor before performing the operation.");
}

void assert_no_partial_overlap(const Tensor& self, const Tensor& input) {
  if (self.impl() == input.impl() || self.numel() == 0 || input.numel() == 0) return;
  if (!self.impl()->has_data() || !input.impl()->has_data() || self.impl()->storage() != input.impl()->storage())
    return;
  if (!self.is_non_overlapping_and_dense() || !input.is_non_overlapping_and_dense()) return;  // too hard to tell
  const char* a = static_cast<const char*>(self.raw_data());
  const char* b = static_cast<const char*>(input.raw_data());
  const char* a_end = a + self.numel() * element_size(self.dtype());
  const char* b_end = b + input.numel() * element_size(input.dtype());
  const bool same_span = a == b && a_end == b_end;
  const bool partial = same_span ? !(self.strides() == input.strides()) : (a < b_end && b < a_end);
  STRATA_CHECK(!partial,
               "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory "
               "location. Please clone() the tensor before performing the operation.");
}

}  // namespace strata::ops
