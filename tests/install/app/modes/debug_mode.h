// tests/install/app/modes/debug_mode.h: the app's own modes/debug_mode.h, named like strata's.
#pragma once
namespace app {
inline const char* modes_name() { return "app-modes"; }
}  // namespace app
