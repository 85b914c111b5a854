// core/dispatch/local_dispatch_keys.cpp: the thread-local key sets and the inference-mode flag (the guards are
// inline in their headers).
#include "core/dispatch/local_dispatch_keys.h"

#include "core/inference_mode.h"

namespace strata::detail {
constinit thread_local LocalDispatchKeys tls_local_dispatch_keys{};
constinit thread_local bool tls_inference_mode = false;
}
