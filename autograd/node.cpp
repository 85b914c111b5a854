// autograd/node.cpp: sequence numbers and input metadata.
#include "autograd/node.h"

namespace strata::autograd {

std::uint64_t next_sequence_nr() {
  thread_local std::uint64_t counter = 0;
  return counter++;
}

std::uint32_t Node::add_input_metadata(const Tensor& t) {
  input_metadata_.push_back(InputMetadata{DimVector(t.sizes()), t.dtype(), t.device(), t.subclass() != nullptr});
  return static_cast<std::uint32_t>(input_metadata_.size() - 1);
}

}  // namespace strata::autograd
