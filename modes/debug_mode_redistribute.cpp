// modes/debug_mode_redistribute.cpp: DebugMode's redistribution records (upstream's
// record_redistribute_calls and _RedistributeCall) and how placements are written, in either of the
// two formats (Note [Two DTensor formats], debug_mode.h). distributed::RecordRedistribute reaches
// these through the listener the Guard registers (Note [DebugMode's hooks live below it]).
#include "modes/debug_mode.h"

namespace strata::tracer {

namespace {

std::vector<std::string> placement_names(const distributed::Placements& placements) {
  std::vector<std::string> out;
  out.reserve(placements.size());
  for (const distributed::Placement& p : placements) out.push_back(distributed::to_string(p));
  return out;
}

// Upstream's format_shard_order_str with the default shard order: each placement as str() writes
// it, joined; a tensor dimension sharded on several mesh dimensions numbers them in mesh order,
// `S(2)[0]S(2)[1]`.
std::string joined(const distributed::Placements& placements) {
  std::string out;
  for (std::size_t i = 0; i < placements.size(); ++i) {
    const distributed::Placement& p = placements[i];
    out += distributed::to_string(p);
    if (!p.is_shard()) continue;
    std::size_t sharing = 0, position = 0;
    for (std::size_t j = 0; j < placements.size(); ++j) {
      if (!placements[j].is_shard(p.dim())) continue;
      if (j < i) ++position;
      ++sharing;
    }
    if (sharing > 1) out += "[" + std::to_string(position) + "]";
  }
  return out;
}

}  // namespace

std::string DebugMode::placements_string(const distributed::Placements& placements) const {
  if (options_.placement_format == PlacementFormat::Joined) return joined(placements);
  return distributed::to_string(placements);  // "[S(0), R]"
}

DebugMode::CallScope DebugMode::open_redistribution(DebugCall call) {
  const int before = depth_;
  call.kind = DebugCall::Kind::Redistribute;
  call.depth = depth_ + 1;
  call.name = "redistribute_input";
  const std::size_t index = add_call(std::move(call));
  open_.push_back(index);
  depth_ = before + 1;
  return CallScope(this, index, before, true, false);
}

DebugMode::CallScope DebugMode::record_redistribute_input(std::int64_t arg_index, const distributed::Placements& src,
                                                          const distributed::Placements& dst) {
  DebugCall call;
  call.redistribution = DebugCall::Redistribution{arg_index, {}, {placement_names(src), placement_names(dst)}};
  if (options_.placement_format == PlacementFormat::Joined) {
    set_args(call, std::vector<IValue>{IValue(arg_index), IValue(joined(src) + " -> " + joined(dst))}.data(), 2, {});
  } else {
    const std::vector<IValue> args{IValue(arg_index), IValue(distributed::to_string(src)), IValue(distributed::to_string(dst))};
    set_args(call, args.data(), args.size(), {});
  }
  return open_redistribution(std::move(call));
}

DebugMode::CallScope DebugMode::record_redistribute_tensor(const Tensor& local,
                                                           const std::vector<distributed::Placements>& path) {
  if (options_.placement_format != PlacementFormat::Joined) return CallScope();
  std::string trace = "trace: ";
  DebugCall call;
  call.redistribution = DebugCall::Redistribution{std::nullopt, {}, {}};
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (i) trace += "->";
    trace += joined(path[i]);
    call.redistribution->path.push_back(placement_names(path[i]));
  }
  append_value(call.redistribution->tensor, IValue(local), false, false);
  const std::vector<IValue> args{IValue(local), IValue(std::move(trace))};
  set_args(call, args.data(), args.size(), {});
  return open_redistribution(std::move(call));
}

void DebugMode::enter_redistribute_input(std::int64_t arg_index, const distributed::Placements& src,
                                         const distributed::Placements& dst) {
  open_redistributions_.push_back(record_redistribute_input(arg_index, src, dst));
}

void DebugMode::enter_redistribute_tensor(const Tensor& local, const std::vector<distributed::Placements>& path) {
  open_redistributions_.push_back(record_redistribute_tensor(local, path));
}

void DebugMode::exit_redistribute() {
  if (!open_redistributions_.empty()) open_redistributions_.pop_back();
}

}  // namespace strata::tracer
