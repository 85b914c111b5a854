// distributed/debug_mode_hooks.h: what a sharded tensor tells DebugMode, declared below it so that
// distributed/ code can speak to the mode without seeing modes/: DebugModeSubclass (how a wrapper
// subclass's tensors are named and which placements follow their shape) and the redistribution
// records (upstream's DebugMode.record_redistribute_calls, `redistribute_input(...)` lines with the
// collectives and local ops of the redistribution nested below them). modes/debug_mode.h implements
// them; docs/debug-mode.md shows the lines.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>
#include <vector>

#include "../core/tensor.h"
#include "../core/util/non_copyable.h"
#include "placement.h"

namespace strata::distributed {

// Note [DebugMode's hooks live below it]
// DTensor lives in distributed/, and modes/ sits above distributed/ in the layer chain
// (docs/architecture.md): nothing below modes/ may include a mode. So the two things a sharded tensor
// hands DebugMode are interfaces here, and DebugMode implements them: a subclass describes its
// tensors (a prefix and placements, which DebugMode writes in the format its options choose), and a
// redistribution opens a record through RecordRedistribute, which reaches the DebugMode that
// registered itself on this thread, if any. Without one, a record costs one test of an empty
// thread-local list.

// A wrapper subclass that DebugMode records as upstream records DTensor's ops (Note [How DebugMode
// names a tensor], modes/debug_mode.h).
class DebugModeSubclass {
 public:
  virtual ~DebugModeSubclass() = default;
  virtual std::string_view debug_prefix() const = 0;  // "dt"
  // The tensor's placements, one per mesh dimension, written after its shape: `[S(0), R]` or
  // `| S(0)R` (DebugModeOptions::placement_format); none for a subclass that has no placements.
  virtual Placements debug_placements(const Tensor&) const { return {}; }
};

// What receives the redistribution records: DebugMode. Each enter is matched by one exit.
class RedistributeListener {
 public:
  virtual ~RedistributeListener() = default;
  // An op handler redistributing its input `arg_index` from `src` to `dst` (upstream's
  // record_redistribute_calls(i, arg_spec, reshard_arg_spec) in DTensor's dispatch).
  virtual void enter_redistribute_input(std::int64_t arg_index, const Placements& src, const Placements& dst) = 0;
  // A local tensor redistributed along `path`: the source placements, each intermediate step, the
  // target (upstream's record_redistribute_calls(local_tensor, ..., transform_info_str) in
  // redistribute_local_tensor).
  virtual void enter_redistribute_tensor(const Tensor& local, const std::vector<Placements>& path) = 0;
  virtual void exit_redistribute() = 0;
};

// The listeners registered on this thread, outermost first (DebugMode::Guard registers its mode).
void add_redistribute_listener(RedistributeListener* listener);
void remove_redistribute_listener(RedistributeListener* listener);
namespace detail {
// Listeners registered on any thread: with none, a record tests this one counter and returns, as
// upstream's _ACTIVE_DEBUG_MODE_COUNT lets get_active_debug_mode() return at once.
extern std::atomic<int> redistribute_listeners_alive;
RedistributeListener* thread_redistribute_listener();
}  // namespace detail
// The one that records, as upstream's get_active_debug_mode() finds the outermost DebugMode; null
// when none is registered on this thread.
inline RedistributeListener* active_redistribute_listener() {
  if (detail::redistribute_listeners_alive.load(std::memory_order_relaxed) == 0) return nullptr;
  return detail::thread_redistribute_listener();
}
// `listener`'s exit_redistribute(), if it is still registered on this thread.
void close_redistribute(RedistributeListener* listener);

// The record of one redistribution while it runs: the collectives and local ops run meanwhile nest
// below it. Inert when no listener is active.
class RecordRedistribute : NonCopyable {
 public:
  RecordRedistribute(std::int64_t arg_index, const Placements& src, const Placements& dst)
      : listener_(active_redistribute_listener()) {
    if (listener_) listener_->enter_redistribute_input(arg_index, src, dst);
  }
  RecordRedistribute(const Tensor& local, const std::vector<Placements>& path)
      : listener_(active_redistribute_listener()) {
    if (listener_) listener_->enter_redistribute_tensor(local, path);
  }
  // Closes the record, unless its listener has left meanwhile (a DebugMode's Guard that ended inside
  // the redistribution closed it then).
  ~RecordRedistribute() {
    if (listener_) close_redistribute(listener_);
  }

 private:
  RedistributeListener* listener_;
};

}  // namespace strata::distributed
