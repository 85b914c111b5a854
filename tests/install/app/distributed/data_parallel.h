// tests/install/app/distributed/data_parallel.h: the app's own distributed/data_parallel.h, named like strata's.
#pragma once
namespace app {
inline const char* distributed_name() { return "app-distributed"; }
}  // namespace app
