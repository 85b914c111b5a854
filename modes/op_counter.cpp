// modes/op_counter.cpp: recording and reading per-phase op sequences.
#include "modes/op_counter.h"

namespace strata::tracer {

OpCounter::OpCounter(std::string phase) { phases_.push_back(Phase{std::move(phase), {}}); }

void OpCounter::dispatch(const OperatorHandle& op, Stack& stack) {
  phases_[current_].ops.push_back(op);
  op.call(stack);
}

void OpCounter::set_phase(const std::string& phase) {
  for (std::size_t i = 0; i < phases_.size(); ++i) {
    if (phases_[i].name == phase) {
      current_ = i;
      return;
    }
  }
  phases_.push_back(Phase{phase, {}});
  current_ = phases_.size() - 1;
}

const OpCounter::Phase* OpCounter::find(const std::string& phase) const {
  for (const Phase& p : phases_)
    if (p.name == phase) return &p;
  return nullptr;
}

std::map<std::string, std::int64_t> OpCounter::counts(const std::string& phase) const {
  std::map<std::string, std::int64_t> out;
  if (const Phase* p = find(phase))
    for (const OperatorHandle& op : p->ops) ++out[op.str()];
  return out;
}

std::vector<std::string> OpCounter::sequence(const std::string& phase) const {
  std::vector<std::string> out;
  if (const Phase* p = find(phase))
    for (const OperatorHandle& op : p->ops) out.push_back(op.str());
  return out;
}

std::int64_t OpCounter::total() const {
  std::int64_t n = 0;
  for (const Phase& p : phases_) n += static_cast<std::int64_t>(p.ops.size());
  return n;
}

}  // namespace strata::tracer
