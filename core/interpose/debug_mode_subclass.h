// core/interpose/debug_mode_subclass.h: how a wrapper subclass names its tensors in DebugMode's log
// (modes/debug_mode.h). The interface lives below the modes so that a subclass of a lower layer
// (the DTensor of distributed/) can implement it; DebugMode, in modes/, asks for it by dynamic_cast.
#pragma once

#include <string>
#include <string_view>

#include "../tensor.h"

namespace strata {

// A wrapper subclass that DebugMode names by its own prefix ("dt" for a DTensor) and records as
// upstream records DTensor's ops (Note [How DebugMode names a tensor] in modes/debug_mode.h).
class DebugModeSubclass {
 public:
  virtual ~DebugModeSubclass() = default;
  virtual std::string_view debug_prefix() const = 0;                   // "dt"
  virtual std::string debug_suffix(const Tensor&) const { return {}; }  // "[S(0)]", after the shape
};

}  // namespace strata
