// core/local_dispatch_keys.cpp: the thread-local key sets (the guards are inline in the header).
#include "core/local_dispatch_keys.h"

namespace strata::detail {
constinit thread_local LocalDispatchKeys tls_local_dispatch_keys{};
}
