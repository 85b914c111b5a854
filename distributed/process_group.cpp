// distributed/process_group.cpp: reduce-op names and the per-thread group table.
#include "distributed/process_group.h"

#include <algorithm>
#include <map>

#include "core/util/error.h"

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

namespace {
thread_local int groups_made = 1;  // the world is "0" (Note [Splitting a group])
}  // namespace

std::string split_group(const std::vector<std::vector<int>>& split_ranks, std::string_view parent) {
  ProcessGroup& group = resolve_process_group(parent);
  std::vector<bool> seen(static_cast<std::size_t>(group.size()), false);
  for (const std::vector<int>& list : split_ranks) {
    STRATA_CHECK(!list.empty(), "split_group: a list of split_ranks is empty");
    for (int r : list) {
      STRATA_CHECK(r >= 0 && r < group.size(), "split_group: rank ", r, " is not a rank of group '", parent, "' (it has ",
                   group.size(), " ranks)");
      STRATA_CHECK(!seen[static_cast<std::size_t>(r)], "split_group: rank ", r, " is in more than one list of split_ranks");
      seen[static_cast<std::size_t>(r)] = true;
    }
  }
  const int first = groups_made;
  groups_made += static_cast<int>(split_ranks.size());
  for (std::size_t i = 0; i < split_ranks.size(); ++i) {
    const std::vector<int>& list = split_ranks[i];
    if (std::find(list.begin(), list.end(), group.rank()) == list.end()) continue;
    const std::string name = std::to_string(first + static_cast<int>(i));
    register_process_group(group.make_subgroup(list, name, static_cast<int>(i)));
    return name;
  }
  (void)group.make_subgroup({}, {}, -1);  // a rank in no list still takes part (MPI_Comm_split)
  return {};
}

namespace {
thread_local std::uint64_t groups_epoch = 0;
}  // namespace

void destroy_process_groups() {
  groups().clear();
  groups_made = 1;
  ++groups_epoch;
}

std::uint64_t process_groups_epoch() { return groups_epoch; }

ProcessGroup* find_process_group(std::string_view name) {
  const auto it = groups().find(name);
  return it == groups().end() ? nullptr : it->second.get();
}

ProcessGroup& resolve_process_group(std::string_view name) {
  const auto it = groups().find(name);
  STRATA_CHECK(it != groups().end(), "Could not resolve the process group registered under the name ", name);
  return *it->second;
}

std::vector<std::int64_t> splits_or_equal(IntArrayRef splits, std::int64_t rows, int size, const char* which) {
  if (!splits.empty()) {
    STRATA_CHECK(static_cast<int>(splits.size()) == size, "", which, " has ", splits.size(),
                 " entries; the group has ", size, " ranks");
    return {splits.begin(), splits.end()};
  }
  STRATA_CHECK(rows % size == 0, "with no ", which, ", the first dimension (", rows,
               ") must be divisible by the group's size (", size, ")");
  return std::vector<std::int64_t>(static_cast<std::size_t>(size), rows / size);
}

}  // namespace strata::distributed
