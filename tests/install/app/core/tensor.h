// tests/install/app/core/tensor.h: the app's own core/tensor.h, named like strata's.
#pragma once
namespace app {
inline const char* core_name() { return "app-core"; }
}  // namespace app
