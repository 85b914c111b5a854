// modes/debug_mode.h: DebugMode, PyTorch's torch.utils._debug_mode.DebugMode in C++: a dispatch mode
// that records every op as a call tree and prints it as upstream does, indented by depth:
//     aten::addmm(t$2: f32[32], t$3: f32[8, 16], t$1: f32[16, 32])  ->  t$4: f32[8, 32]
// Function calls (`torch.mm(...)`) and module entries (`[nn.Mod] Sequential.0`) are recorded through
// record_function_call / record_module_call, which the function layer and module hooks call.
// docs/debug-mode.md describes the log, the JSON export and the hash comparison.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "../core/interpose/function_mode.h"
#include "../core/interpose/interposer.h"
#include "../core/util/non_copyable.h"
#include "../distributed/debug_mode_hooks.h"
#include "../nn/mod_tracker.h"

namespace strata::tracer {

// Note [Two DTensor formats]
// Upstream has written a sharded tensor and its redistributions two ways. DebugMode's first release
// (PyTorch PR 162665) writes the placements as a list after the shape, `dt: f32[8, 8][S(0)]`, and a
// redistribution as `redistribute_input(1, [S(0)], [R])`, the ops it ran one level below. Upstream's
// main today writes `dt: f32[8, 8]| S(0)` (placements joined, `PR`; a tensor dimension sharded on
// several mesh dimensions numbers them, `S(2)[0]S(2)[1]`), the input's redistribution as
// `redistribute_input(1, S(0) -> R)`, and below it the local tensor's, with the path it took:
// `redistribute_input(t: f32[1, 32], trace: S(0)->R)`, the ops one level below that. The first is
// strata's default (its golden logs are that release's); the second is an option.
enum class PlacementFormat {
  Lists,   // `dt: f32[8, 8][S(0)]`, `redistribute_input(1, [S(0)], [R])`
  Joined,  // `dt: f32[8, 8]| S(0)`, `redistribute_input(1, S(0) -> R)` and its `trace:` line
};

// Upstream's constructor options, by their names.
struct DebugModeOptions {
  bool record_torchfunction = false;  // record_function_call records (`torch.mm(...)` lines)
  bool record_faketensor = false;     // ops on fake tensors, or under a fake mode
  bool record_realtensor = true;      // ops on plain tensors
  bool record_nn_module = false;      // record_module_call records (`[nn.Mod] Sequential.0` lines)
  bool record_output = true;          // `  ->  t: f32[8, 32]` after each call
  bool record_ids = false;            // `t$0`: one id per tensor
  // Tensor attributes written after each tensor's shape, `t: f32[8, 16]{requires_grad=True}`, in this
  // order, each one a tensor has (Note [DebugMode's tensor attributes]): the built-in ones, those its
  // subclass sets (TensorSubclass::attribute), those `tensor_attribute` finds.
  std::vector<std::string> record_tensor_attributes;
  // The attributes a user sets on tensors (Python's `x.a1 = "x1"`): the value of `name` on `t` as
  // str() writes it, or nullopt when `t` has none. Asked after the built-in and subclass attributes.
  std::function<std::optional<std::string>(const Tensor& t, std::string_view name)> tensor_attribute;
  // Keep each call's argument values (DebugCall::original_args) and write them only when the log is
  // printed, with the attributes they have then and without ids, as upstream renders stored args.
  // The log then holds references to the tensors, which changes use counts (Note [Tensor ids without
  // references]), so the ops a step runs may differ (AccumulateGrad's steal).
  bool store_original_args = false;
  // Each call's user-level call path (Note [DebugMode's stack trace]), printed by debug_string as
  // upstream's `# File: ...` comment above each group of calls that share it.
  bool record_stack_trace = false;
  // How placements and redistributions are written (Note [Two DTensor formats]).
  PlacementFormat placement_format = PlacementFormat::Lists;
  // strata's own: called for each recorded op just before it runs, with its arguments (still on the
  // stack, so reading them holds no reference, unlike a hook's: Note [Hooks that read arguments]) and
  // the index of its call in logs(). The HTML explorer counts FLOPs here (tracer/explorer_record.h).
  std::function<void(const OperatorHandle& op, std::span<const IValue> args, std::size_t call)> before_op;
};

// One recorded call. The calls of a run form a tree, kept in pre-order: a call's children follow it,
// one level deeper; `parent` is the index of the enclosing call (none for a root).
struct DebugCall {
  enum class Kind { Op, Function, Module, Redistribute };
  Kind kind = Kind::Op;
  int depth = 0;
  std::optional<std::size_t> parent;
  std::string name;                                        // "aten::addmm", "torch.mm", "Sequential.0"
  std::vector<std::string> args;                           // each as upstream's _arg_to_str writes it
  std::vector<std::pair<std::string, std::string>> kwargs;  // kwarg-only arguments not at their default
  std::optional<std::string> output;                       // "t$4: f32[8, 32]" (record_output)
  nlohmann::ordered_json record;                           // record hooks' results (not printed); null if none
  nlohmann::ordered_json log;                              // log hooks' results (printed "  # {...}"); null if none
  std::string stack_trace;  // "Sequential.0 > torch.nn.functional.linear" (record_stack_trace), or empty
  // The argument values, kept with store_original_args (then `args` and `kwargs` stay empty until
  // DebugMode renders them); empty otherwise.
  std::vector<IValue> original_args;
  std::vector<std::pair<std::string, IValue>> original_kwargs;
  // A redistribution's facts (Kind::Redistribute): the input's position for an op handler's
  // redistribution, else the local tensor as written; the placements of each step, source first,
  // target last, each as upstream's str() writes it ("S(0)", "R", "P").
  struct Redistribution {
    std::optional<std::int64_t> arg_index;
    std::string tensor;
    std::vector<std::vector<std::string>> path;
  };
  std::optional<Redistribution> redistribution;

  // The call's line without its indentation: "aten::t(t: f32[32, 16])  ->  t: f32[16, 32]".
  std::string render() const;
};
std::string_view kind_name(DebugCall::Kind kind);  // "op", "function", "module", "redistribute"

// What a record or log hook sees: the op, its arguments (when a hook installed reads them) and its
// returns, as upstream's hooks get (func, types, args, kwargs, result). A hook returns a JSON object
// whose keys are merged into the call's record or log, or null.
struct DispatchHookCall {
  const OperatorHandle& op;
  const std::vector<IValue>& args;
  const IValue* returns;  // op.schema().returns().size() values
  std::size_t num_returns;
};
using DispatchHook = std::function<nlohmann::ordered_json(const DispatchHookCall&)>;

// Note [How DebugMode names a tensor]
// `t` for a plain tensor, `ft` for a fake one, and a wrapper subclass that derives from
// DebugModeSubclass (distributed/debug_mode_hooks.h, below modes/ so that DTensor can derive from it)
// names itself (`dt` for the sharded tensor) and gives the placements written after its shape. Such
// a subclass's ops are recorded as upstream records DTensor's: at the enclosing depth, then DebugMode
// declines (return_not_implemented) so the subclass handles the op, and the ops it runs on its inner
// tensors come back to DebugMode one level deeper. Other wrapper subclasses' ops are not recorded
// (upstream records only ops whose `types` are empty, FakeTensor or DTensor), except fake tensors'
// (modes/fake_tensor.h), and a call is a fake one when it has a fake argument or a FakeTensorMode
// is the next mode out (a factory under the mode).
using distributed::DebugModeSubclass;

class DebugMode final : public DispatchMode, distributed::RedistributeListener, NonCopyable {
 public:
  explicit DebugMode(DebugModeOptions options = {});
  ~DebugMode() override;

  std::string_view name() const override { return "DebugMode"; }
  void dispatch(const OperatorHandle& op, Stack& stack) override;

  const DebugModeOptions& options() const { return options_; }
  // Forgets the calls, the ids and the depth (entering a Guard does this, as upstream's __enter__).
  void reset();

  // A recorded function or module call, open while the scope lives: the calls made meanwhile nest
  // below it. Inert (records nothing) when the option that governs its kind is off.
  class CallScope {
   public:
    CallScope() = default;
    CallScope(CallScope&& other) noexcept;
    CallScope& operator=(CallScope&&) = delete;
    ~CallScope();
    bool active() const { return mode_ != nullptr && recorded_; }
    // The call's result, written after it as `  ->  ...` (record_output).
    void set_output(const IValue& result);

   private:
    friend class DebugMode;
    CallScope(DebugMode* mode, std::size_t index, int depth_before, bool recorded, bool in_path)
        : mode_(mode), index_(index), depth_before_(depth_before), recorded_(recorded), in_path_(in_path) {}
    DebugMode* mode_ = nullptr;
    std::size_t index_ = 0;
    int depth_before_ = 0;
    bool recorded_ = false;  // a call was added (else the scope only extends the call path)
    bool in_path_ = false;
  };
  // Enters the mode for its lifetime (`with DebugMode() as m:`): resets it, pushes it on the dispatch
  // mode stack and on the list active_debug_modes() returns; with record_torchfunction also on the
  // function-mode stack, and with record_nn_module it tracks module calls (a ModTracker), as
  // upstream's __enter__ does.
  class Guard : NonCopyable {
   public:
    explicit Guard(DebugMode& mode);
    ~Guard();

   private:
    // The mode's function-level half (upstream's DebugMode.__torch_function__): records each call
    // with record_function_call and the result it returns.
    class Functions final : public FunctionMode {
     public:
      explicit Functions(DebugMode& mode) : mode_(mode) {}
      std::string_view name() const override { return "DebugMode"; }
      void torch_function(FunctionCall& call) override;

     private:
      DebugMode& mode_;
    };
    DebugMode& mode_;
    ModeGuard dispatch_;
    Functions functions_{mode_};
    std::optional<FunctionModeGuard> function_guard_;
    nn::ModTracker modules_;
    std::vector<CallScope> open_modules_;  // the module calls now running, innermost last
  };

  // Upstream's __torch_function__: `torch.mm(t: f32[8, 8], t: f32[8, 32])` at the current depth; the
  // calls made until the scope ends are one level deeper (record_torchfunction).
  // `path_name` is the name the call path shows (torch.nn.functional.linear), by default `name`.
  CallScope record_function_call(std::string_view name, const std::vector<IValue>& args,
                                 const std::vector<std::pair<std::string, IValue>>& kwargs = {},
                                 std::string_view path_name = {});
  // Upstream's module pre-forward hook: `[nn.Mod] Sequential.0` one level below the current depth, and
  // the calls until the scope ends below it (record_nn_module).
  CallScope record_module_call(std::string_view fully_qualified_name);
  // Upstream's record_redistribute_calls, what distributed::RecordRedistribute reaches: a
  // redistribution one level below the current depth, and the calls until the scope ends below it.
  // An op handler's input `arg_index` going from `src` to `dst`:
  // `redistribute_input(1, [S(0)], [R])`, or `redistribute_input(1, S(0) -> R)` (Joined).
  CallScope record_redistribute_input(std::int64_t arg_index, const distributed::Placements& src,
                                      const distributed::Placements& dst);
  // A local tensor going along `path` (source, steps, target): `redistribute_input(t: f32[1, 32],
  // trace: S(0)->R)` with PlacementFormat::Joined; inert with Lists, whose release had no such line.
  CallScope record_redistribute_tensor(const Tensor& local, const std::vector<distributed::Placements>& path);
  // The placements as the tensor suffix writes them: `[S(0), R]`, or `S(0)R` (Joined).
  std::string placements_string(const distributed::Placements& placements) const;

  const std::vector<DebugCall>& logs() const { return calls_; }
  int call_depth() const { return depth_; }
  // Upstream's debug_string(): each call on a line, indented "  " + "  " * depth; with
  // show_stack_trace (by default record_stack_trace) a `# <call path>` line, after a blank line,
  // above each group of calls with the same path.
  std::string debug_string(std::optional<bool> show_stack_trace = std::nullopt) const;
  // The call with its stored arguments written out now (store_original_args), else the call itself.
  DebugCall rendered(const DebugCall& call) const;
  // The calls as JSON (docs/debug-mode.md, schema "strata.debug_mode" version 1).
  nlohmann::ordered_json to_json() const;

  // Installs hooks run after every recorded op, on this thread, until the guard ends (upstream's
  // DebugMode.dispatch_hooks). Hooks nest; the innermost runs last, so its keys win.
  class HooksGuard {
   public:
    // `reads_args`: the hooks read DispatchHookCall::args (else it is empty; Note [Hooks that read
    // arguments] in debug_mode.cpp).
    HooksGuard(DispatchHook record_hook, DispatchHook log_hook, bool reads_args = true);
    ~HooksGuard();
    HooksGuard(HooksGuard&& other) noexcept
        : record_(std::exchange(other.record_, false)),
          log_(std::exchange(other.log_, false)),
          reads_args_(std::exchange(other.reads_args_, false)) {}

   private:
    bool record_, log_, reads_args_;
  };
  static HooksGuard dispatch_hooks(DispatchHook record_hook, DispatchHook log_hook, bool reads_args = true) {
    return HooksGuard(std::move(record_hook), std::move(log_hook), reads_args);
  }

 private:
  struct IdEntry {
    std::int64_t id;
    const void* data;
  };
  // Per-op facts, computed once (Note [DebugMode's arguments are upstream's], debug_mode.cpp).
  struct OpInfo {
    std::string name;  // "aten::add_.Tensor" (OpOverload.__qualname__)
    std::vector<std::optional<IValue>> defaults;
    std::size_t kwarg_only_start = 0;
    bool hidden = false;  // profiler::_record_function_*
  };
  const OpInfo& op_info(const OperatorHandle& op);
  // distributed::RedistributeListener: the scopes RecordRedistribute opens, innermost last.
  void enter_redistribute_input(std::int64_t arg_index, const distributed::Placements& src,
                                const distributed::Placements& dst) override;
  void enter_redistribute_tensor(const Tensor& local, const std::vector<distributed::Placements>& path) override;
  void exit_redistribute() override;
  CallScope open_redistribution(DebugCall call);
  std::vector<CallScope> open_redistributions_;
  // With ids, `fresh_id` says an output that is not an input gets a new id; without, the ids stay
  // untouched (a stored argument rendered later, as upstream's render passes no tensor memo).
  void append_tensor(std::string& out, const Tensor& t, bool fresh_id, bool with_ids) const;
  void append_value(std::string& out, const IValue& v, bool fresh_ids, bool with_ids) const;
  std::string returns_string(const IValue* returns, std::size_t n, bool fresh_ids) const;
  std::int64_t tensor_id(const Tensor& t, bool fresh) const;
  void set_args(DebugCall& call, const IValue* args, std::size_t n,
                const std::vector<std::pair<std::string, const IValue*>>& kwargs);
  void enter_path(std::string name) { call_path_.push_back(std::move(name)); }
  void leave_path() {
    if (!call_path_.empty()) call_path_.pop_back();
  }
  std::string path_string() const;
  std::size_t add_call(DebugCall call);
  void record_subclass_op(const OperatorHandle& op, Stack& stack);
  DebugCall op_call(const OperatorHandle& op, const Stack& stack, int depth);  // the op's call, not yet added

  DebugModeOptions options_;
  std::vector<DebugCall> calls_;
  std::vector<std::size_t> spine_;  // the latest call at each depth up to the last call's (pre-order parents)
  std::vector<std::size_t> open_;   // the function and module calls whose scopes are open
  int depth_ = 0;
  // The id memo (upstream's TensorIdTracker): filled while naming tensors, so mutable.
  mutable std::unordered_map<const TensorImpl*, IdEntry> ids_;
  mutable std::int64_t next_id_ = 0;
  std::vector<std::string> call_path_;  // the open module and function calls (record_stack_trace)
  std::vector<const TensorImpl*> inputs_;  // the op's input tensors, while its outputs are named
  std::vector<std::unique_ptr<OpInfo>> op_infos_;  // by op index
};

// The DebugModes entered with DebugMode::Guard on this thread, outermost first (upstream's
// get_active_debug_mode() returns the first).
const std::vector<DebugMode*>& active_debug_modes();
DebugMode* get_active_debug_mode();

}  // namespace strata::tracer
