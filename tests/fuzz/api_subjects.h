// tests/fuzz/api_subjects.h: the interposer users the API fuzzer drives ops through, beside the
// tracer's LoggingTensor and OpCounter: a wrapper subclass whose handler excludes the Python key and
// redispatches view ops on the wrapper itself (as a subclass that lets views stay "below" it does),
// and a dispatch mode that keeps every output it sees alive until it is popped.
#pragma once

#include <vector>

#include "core/interpose/interposer.h"
#include "core/interpose/subclass.h"

namespace strata::fuzz {

class AliasingWrapper final : public TensorSubclass {
 public:
  static Tensor wrap(const Tensor& elem);
  std::string_view type_name() const override { return "AliasingWrapper"; }
  // View ops (a return that aliases an argument without writing it) run on the wrapper itself with the
  // Python key excluded; every other op runs on the unwrapped arguments and its outputs are rewrapped.
  void dispatch(const OperatorHandle& op, Stack& stack) override;
  FlattenedTensor flatten(const Tensor&) const override { return FlattenedTensor{{"elem"}, {elem_}, nullptr}; }
  Tensor unflatten(const FlattenedTensor& flat, IntArrayRef, IntArrayRef) const override;

 private:
  explicit AliasingWrapper(Tensor elem) : elem_(std::move(elem)) {}
  Tensor elem_;
};

class KeepingMode final : public DispatchMode {
 public:
  std::string_view name() const override { return "KeepingMode"; }
  void dispatch(const OperatorHandle& op, Stack& stack) override;

 private:
  std::vector<IValue> kept_;
};

// Whether `op`'s first return aliases an argument without writing it (t, view, expand, detach...).
bool is_view_op(const OperatorHandle& op);

}  // namespace strata::fuzz
