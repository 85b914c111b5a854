// autograd/registration.h: installs autograd into the dispatcher (see Note [Registration on first use]).
#pragma once

#include "../core/dispatch/dispatcher.h"

namespace strata::autograd {

// Registers the op table, the derivative table, and the Autograd-key fallback, once.
void register_autograd();

// The boxed fallback at the Autograd key (autograd/autograd_fallback.cpp).
void autograd_fallback(const OperatorHandle& op, DispatchKeySet keys, Stack& stack);

}  // namespace strata::autograd
