// autograd/grad_mode.cpp: the thread-local grad mode flag (on by default, as in PyTorch).
#include "autograd/grad_mode.h"

namespace strata::autograd::detail {
constinit thread_local bool tls_grad_enabled = true;
}
