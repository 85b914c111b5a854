// autograd/saved_variable.h: a tensor a node keeps for its backward, with PyTorch's rules. An input,
// or a leaf, is kept as itself. A non-leaf output is kept as a shallow copy without history (to
// avoid a cycle through its own grad_fn) and rebuilt with that history on unpack; both copies go
// through shallow_copy_and_detach, which is where dispatch modes see `detach`
// (Note [Detach and the interposer]). The tensor's version is recorded and checked on unpack.
#pragma once

#include "node.h"

namespace strata::autograd {

// PyTorch's ERR_BACKWARD_TWICE: a node's saved state was freed by an earlier backward.
inline constexpr std::string_view kBackwardTwiceMessage =
    "Trying to backward through the graph a second time (or directly access saved tensors after they have already "
    "been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). "
    "Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved "
    "tensors after calling backward.";

class SavedVariable {
 public:
  SavedVariable() = default;
  SavedVariable(const Tensor& t, bool is_output) {
    if (is_output) save(t, true);
    else save_as_itself(t);
  }
  // Saves `t` into this empty (default-constructed) variable. A node saves its outputs this way,
  // after the call, into slots its constructor left empty: no temporary to move in and destroy.
  void save(const Tensor& t, bool is_output);
  // Saves an input of an in-place op that sees the op's write (`seen_through` is self, a tensor sharing
  // its memory, or the inner tensor through which a wrapper argument holds one) without a reference to
  // it: unpacking raises the "modified by an inplace operation" error, as PyTorch's version check does
  // for such an input. Note [An input the write reaches is saved without a reference].
  void save_written(const Tensor& seen_through);

  // The saved tensor; `saved_for` is the node doing the unpacking (the grad_fn of a saved output).
  // Throws PyTorch's "backward through the graph a second time" error after reset(), and its
  // "modified by an inplace operation" error if the tensor was written in place since it was saved
  // (Note [Version counters live in the storage]).
  // Inline: most saved tensors are inputs, kept as themselves and unchanged since.
  Tensor unpack(Node* saved_for = nullptr) const {
    if (saved_original_ && data_.defined() && data_.impl()->version() == saved_version_) [[likely]] return data_;
    return unpack_other(saved_for);
  }
  void reset() { data_ = Tensor(); }
  bool was_saved() const { return saved_; }
  // Whether unpacking would report an in-place modification: the tensor was written since it was saved
  // (or is an in-place op's input that saw the write), so no backward can use this node any more.
  bool was_modified() const {
    return saved_ && data_.defined() && (written_ || data_.impl()->version() != saved_version_);
  }

 private:
  // An input or a leaf is kept as itself. Inline: most saved tensors are inputs.
  void save_as_itself(const Tensor& t) {
    if (!t.defined()) return;
    if (t.is_inference()) [[unlikely]] throw_inference_saved();
    saved_version_ = t.impl()->version();
    data_ = t;
    saved_ = true;
    saved_original_ = true;
  }
  // PyTorch refuses to save an inference tensor (Note [Inference tensors], core/inference_mode.h): it
  // counts no versions, so a later write to it could not be detected.
  [[noreturn]] static void throw_inference_saved();
  // unpack() of anything else: None, a freed or modified tensor (errors), a saved output.
  Tensor unpack_other(Node* saved_for) const;
  [[noreturn]] void throw_modified_error(const Node* saved_for) const;

  Tensor data_;
  bool saved_ = false;           // false for an undefined tensor (e.g. an absent weight=None)
  bool saved_original_ = false;  // data_ is the tensor itself
  bool written_ = false;         // save_written: an in-place op's write reached it
  bool written_view_ = false;    // ... through a differentiable view (its history is now AsStridedBackward0)
  bool requires_grad_ = false;
  std::uint32_t output_nr_ = 0;
  std::uint32_t saved_version_ = 0;
};

}  // namespace strata::autograd
