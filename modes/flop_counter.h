// modes/flop_counter.h: PyTorch's FlopCounterMode (torch/utils/flop_counter.py): a dispatch mode that
// counts the floating-point operations of the ops it has a formula for, per op, per module (upstream's
// hierarchy: Global, Sequential, Sequential.0, ...) and, beyond upstream, per phase (forward,
// backward, optimizer, as OpCounter names them). get_table() prints upstream's table.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "../core/interpose/interposer.h"
#include "../core/util/non_copyable.h"
#include "../nn/mod_tracker.h"

namespace strata::tracer {

// Note [FLOP formulas]
// A formula reads the shapes of an op's arguments (the last schema().arguments().size() values of the
// stack, before the op runs) and returns its FLOPs, as upstream's registered formulas do: mm (m, k) @
// (k, n) is 2*m*k*n (a multiply and an add per term), addmm counts only its product (the bias add is
// not counted), bmm and baddbmm are b times that. Formulas are keyed by the op without its overload
// (upstream keys them by OpOverloadPacket), so "aten::mm" covers every overload. Backward ops count
// only if they have a formula: an MLP's backward is mm and t, so its FLOPs are the mms'. Arguments
// the op itself would refuse (wrong ranks) count 0; the op's own error follows. bmm and baddbmm are
// registered for when strata has them.
using FlopFormula = std::function<std::int64_t(const IValue* args)>;

// Upstream's register_flop_formula: adds or replaces the formula for `qualified_name` ("myops::scale")
// for every FlopCounterMode (those already counting included).
void register_flop_formula(const std::string& qualified_name, FlopFormula formula);

// The FLOPs of `op` on `args` (its arguments, before it runs) by the registered formula, or nullopt
// when none is registered for it: what a FlopCounterMode without custom_mapping counts.
std::optional<std::int64_t> registered_flops(const OperatorHandle& op, const IValue* args);

// Formulas by op ("aten::add"), as FlopCounterMode's custom_mapping takes them.
using FlopFormulas = std::map<std::string, FlopFormula, std::less<>>;

class FlopCounterMode final : public DispatchMode {
 public:
  // `depth`: how deep get_table() shows the module hierarchy by default (upstream's depth=2).
  // `custom_mapping`: upstream's FlopCounterMode(custom_mapping={op: formula}): formulas for this
  // mode only, keyed by the op without its overload ("aten::add"), in place of the registered ones
  // for the same op. Upstream's formula gets the arguments' shapes (or, marked _get_raw, the values)
  // and the output; a strata formula reads the argument values and no output (Note [FLOP formulas]).
  explicit FlopCounterMode(int depth = 2, std::string phase = "forward", FlopFormulas custom_mapping = {});

  std::string_view name() const override { return "FlopCounterMode"; }
  void dispatch(const OperatorHandle& op, Stack& stack) override;

  void set_phase(const std::string& phase);

  // Note [Where module counts come from]
  // Upstream attributes each count to "Global" and to every module its module tracker has entered and
  // not left (a set: a module entered twice counts once), in the forward and in the backward (Note [A
  // module's backward]: a Linear's backward mms count for it and its parents). The mode's tracker,
  // mod_tracker(), is entered with the mode by Guard (upstream's __enter__) or by run_step; counts go
  // to the union of its parents() and the modules opened by hand with enter_module/exit_module.
  void enter_module(const std::string& fqn);
  void exit_module(const std::string& fqn);
  nn::ModTracker& mod_tracker() { return *mod_tracker_; }

  // `with FlopCounterMode() as m:`: clears the counts, enters the tracker, then the mode; leaves them
  // in the reverse order (upstream's __enter__ and __exit__).
  class Guard : NonCopyable {
   public:
    explicit Guard(FlopCounterMode& mode);
    ~Guard();

   private:
    FlopCounterMode& mode_;
    std::optional<ModeGuard> dispatch_;
  };
  // Forgets every count (the phases and the depth stay).
  void reset();

  std::int64_t get_total_flops() const;
  // module -> [(op, flops)] in the order the ops were first counted (upstream's get_flop_counts);
  // modules sorted by name, "Global" among them.
  using OpCounts = std::vector<std::pair<std::string, std::int64_t>>;
  std::vector<std::pair<std::string, OpCounts>> get_flop_counts() const;
  // phase -> [(op, flops)], phases in the order they were first set.
  std::vector<std::pair<std::string, OpCounts>> get_phase_counts() const;

  // Upstream's get_table(depth): rows per module (indented by depth) and op, FLOPs with one suffix
  // for the table (K, M, B, T), % of the total; tabulate's "simple" format.
  std::string get_table(std::optional<int> depth = std::nullopt) const;
  // The same table by phase ("Phase", "FLOP", "% Total"), beyond upstream.
  std::string get_phase_table() const;
  // {"total_flops", "phases": {phase: {"total", "ops": {op: n}}},
  //  "modules": {module: {"total", "ops": {op: n}, "phases": {phase: n}}}}, modules as get_flop_counts
  //  orders them after Global, every phase in each module's "phases".
  nlohmann::ordered_json to_json() const;

 private:
  struct Counts {
    std::string name;
    OpCounts ops;
    std::vector<std::int64_t> phase_totals;  // modules only: by index into phases_
  };
  static Counts& add(std::vector<Counts>& table, const std::string& name, const std::string& op, std::int64_t flops);
  void add_to_module(const std::string& name, const std::string& op, std::int64_t flops);

  int depth_;
  FlopFormulas custom_mapping_;
  std::unique_ptr<nn::ModTracker> mod_tracker_ = std::make_unique<nn::ModTracker>();  // not movable itself
  std::vector<Counts> modules_;  // "Global" first
  std::vector<Counts> phases_;
  std::size_t phase_ = 0;
  std::vector<std::string> parents_;  // open modules, innermost last
};

}  // namespace strata::tracer
