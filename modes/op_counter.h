// modes/op_counter.h: the dispatch-tracer experiment's OpCounter, a dispatch mode that counts op overloads per phase
// ("forward", "backward", "optimizer", or any name) and keeps their order. Counting is by op index
// (an array increment per op); names are made only when read.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "../core/interpose/interposer.h"

namespace strata::tracer {

class OpCounter final : public DispatchMode {
 public:
  explicit OpCounter(std::string phase = "forward");

  std::string_view name() const override { return "OpCounter"; }
  void dispatch(const OperatorHandle& op, Stack& stack) override;

  void set_phase(const std::string& phase);
  const std::string& phase() const { return phases_[current_].name; }

  // op name ("aten.addmm.default") -> count, sorted by name, for one phase (empty if unknown).
  std::map<std::string, std::int64_t> counts(const std::string& phase) const;
  // The ops of one phase in the order they ran.
  std::vector<std::string> sequence(const std::string& phase) const;
  std::int64_t total() const;

 private:
  struct Phase {
    std::string name;
    std::vector<OperatorHandle> ops;
  };
  const Phase* find(const std::string& phase) const;

  std::vector<Phase> phases_;
  std::size_t current_ = 0;
};

}  // namespace strata::tracer
