// core/util/non_copyable.h: NonCopyable, the base of objects that have an identity: RAII guards (what
// a guard undoes when it ends is its own to undo, once) and objects others hold by address (a mode on
// the mode stack, a profiler). Deleting the copy also removes the move: such an object stays put.
#pragma once

namespace strata {

class NonCopyable {
 public:
  NonCopyable(const NonCopyable&) = delete;
  NonCopyable& operator=(const NonCopyable&) = delete;

 protected:
  NonCopyable() = default;
  ~NonCopyable() = default;
};

}  // namespace strata
