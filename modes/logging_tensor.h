// modes/logging_tensor.h: the dispatch-tracer experiment's LoggingTensor, a wrapper tensor subclass. It holds a plain
// `elem`; every op that reaches it is run on the unwrapped arguments, logged by name, and its tensor
// outputs are wrapped again (sharing the log). Autograd runs above the interposer, so gradients of
// LoggingTensor parameters are LoggingTensors.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "../core/interpose/interposer.h"

namespace strata::tracer {

class LoggingTensor final : public TensorSubclass {
 public:
  using Log = std::vector<std::string>;

  // PyTorch's LoggingTensor(elem, log, requires_grad): a wrapper with elem's sizes, strides and dtype.
  static Tensor wrap(const Tensor& elem, std::shared_ptr<Log> log, bool requires_grad = false);
  // The LoggingTensor behind `t`, or null when `t` is not one.
  static const LoggingTensor* of(const Tensor& t);

  const Tensor& elem() const { return elem_; }
  const std::shared_ptr<Log>& log() const { return log_; }

  std::string_view type_name() const override { return "LoggingTensor"; }
  void dispatch(const OperatorHandle& op, Stack& stack) override;
  FlattenedTensor flatten(const Tensor& self) const override;
  Tensor unflatten(const FlattenedTensor& flat, IntArrayRef outer_size, IntArrayRef outer_stride) const override;
  std::string repr(const Tensor& self) const override;  // "LoggingTensor(tensor(...))"

 private:
  LoggingTensor(Tensor elem, std::shared_ptr<Log> log) : elem_(std::move(elem)), log_(std::move(log)) {}
  Tensor elem_;
  std::shared_ptr<Log> log_;
};

}  // namespace strata::tracer
