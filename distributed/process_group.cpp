// distributed/process_group.cpp: reduce-op names and the per-thread group table.
#include "distributed/process_group.h"

#include <map>

#include "core/error.h"

namespace strata::distributed {

ReduceOp parse_reduce_op(std::string_view name) {
  if (name == "sum") return ReduceOp::Sum;
  if (name == "avg") return ReduceOp::Avg;
  if (name == "product") return ReduceOp::Product;
  if (name == "min") return ReduceOp::Min;
  if (name == "max") return ReduceOp::Max;
  STRATA_CHECK(false, "Unrecognized reduce_op: ", name, " (expected sum, avg, product, min or max)");
  return ReduceOp::Sum;
}

std::string_view reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Avg: return "avg";
    case ReduceOp::Product: return "product";
    case ReduceOp::Min: return "min";
    case ReduceOp::Max: return "max";
  }
  return "?";
}

namespace {
// Note [Group names are per thread]
std::map<std::string, std::shared_ptr<ProcessGroup>, std::less<>>& groups() {
  thread_local std::map<std::string, std::shared_ptr<ProcessGroup>, std::less<>> table;
  return table;
}
}  // namespace

void register_process_group(std::shared_ptr<ProcessGroup> group) {
  STRATA_CHECK(group, "register_process_group: the group is null");
  const std::string name = group->name();
  STRATA_CHECK(groups().emplace(name, std::move(group)).second, "register_process_group: a process group is already "
               "registered under the name ", name);
}

void unregister_process_group(std::string_view name) {
  if (const auto it = groups().find(name); it != groups().end()) groups().erase(it);
}

ProcessGroup& resolve_process_group(std::string_view name) {
  const auto it = groups().find(name);
  STRATA_CHECK(it != groups().end(), "Could not resolve the process group registered under the name ", name);
  return *it->second;
}

}  // namespace strata::distributed
