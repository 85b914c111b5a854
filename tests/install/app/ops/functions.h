// tests/install/app/ops/functions.h: the app's own ops/functions.h, named like strata's.
#pragma once
namespace app {
inline const char* ops_name() { return "app-ops"; }
}  // namespace app
