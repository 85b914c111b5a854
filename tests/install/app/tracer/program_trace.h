// tests/install/app/tracer/program_trace.h: the app's own tracer/program_trace.h, named like strata's.
#pragma once
namespace app {
inline const char* tracer_name() { return "app-tracer"; }
}  // namespace app
