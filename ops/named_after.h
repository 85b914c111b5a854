// ops/named_after.h: named_after(op, fn), which names an error of a hand-written front end's own check
// (or of a helper it calls) after the aten op it mirrors, as a dispatched op's errors are named.
#pragma once

#include "../core/util/error.h"

namespace strata {

template <typename Fn>
decltype(auto) named_after(const char* op, Fn&& fn) {
  try {
    return fn();
  } catch (Error& e) {
    if (e.op().empty()) e.set_op(op);
    throw;
  }
}

}  // namespace strata
