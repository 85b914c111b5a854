// distributed/placement.cpp: placements' accessors, hashes and printed forms.
#include "distributed/placement.h"

#include <ostream>

#include "core/util/error.h"

namespace strata::distributed {

std::int64_t Placement::dim() const {
  STRATA_CHECK(is_shard(), "Placement::dim: ", repr(*this), " is not a Shard placement");
  return dim_;
}

ReduceOp Placement::reduce_op() const {
  STRATA_CHECK(is_partial(), "Placement::reduce_op: ", repr(*this), " is not a Partial placement");
  return reduce_op_;
}

std::size_t Placement::hash() const {
  std::size_t h = hash_mix(0, static_cast<std::size_t>(kind_));
  h = hash_mix(h, static_cast<std::size_t>(dim_));
  return hash_mix(h, static_cast<std::size_t>(reduce_op_));
}

std::size_t hash_placements(const Placements& ps) {
  std::size_t h = hash_mix(0, ps.size());
  for (const Placement& p : ps) h = hash_mix(h, p.hash());
  return h;
}

std::string to_string(const Placement& p, PartialStyle style) {
  switch (p.kind()) {
    case Placement::Kind::Shard: return "S(" + std::to_string(p.dim()) + ")";
    case Placement::Kind::Replicate: return "R";
    case Placement::Kind::Partial:
      return style == PartialStyle::Bare ? std::string("P") : "P(" + std::string(reduce_op_name(p.reduce_op())) + ")";
  }
  return "?";
}

std::string repr(const Placement& p) {
  switch (p.kind()) {
    case Placement::Kind::Shard: return "Shard(dim=" + std::to_string(p.dim()) + ")";
    case Placement::Kind::Replicate: return "Replicate()";
    case Placement::Kind::Partial: return "Partial(" + std::string(reduce_op_name(p.reduce_op())) + ")";
  }
  return "?";
}

std::string to_string(const Placements& ps, PartialStyle style) {
  std::string out = "[";
  for (std::size_t i = 0; i < ps.size(); ++i) {
    if (i > 0) out += ", ";
    out += to_string(ps[i], style);
  }
  return out + "]";
}

std::ostream& operator<<(std::ostream& os, const Placement& p) { return os << to_string(p); }

}  // namespace strata::distributed
