// distributed/dtensor_autograd.h: what DTensor's autograd functions share (not installed): a spec
// kept in an autograd context.
#pragma once

#include "../core/dispatch/ivalue.h"
#include "dtensor_spec.h"

namespace strata::distributed {

// A DTensorSpec in an autograd context's saved_data (which holds IValues).
struct SpecObject final : CustomObject {
  explicit SpecObject(DTensorSpec s) : spec(std::move(s)) {}
  std::string_view type_name() const override { return "DTensorSpec"; }
  static const DTensorSpec& of(const IValue& v);  // the spec in `v`
  DTensorSpec spec;
};

}  // namespace strata::distributed
