// distributed/placement.h: how a DTensor lies on one dimension of a device mesh (upstream's
// torch/distributed/tensor/placement_types.py): Shard(d) (split along tensor dimension d),
// Replicate() (a whole copy on every rank) or Partial(op) (every rank holds a term; the tensor is
// their reduction by op). Small value types: compared, hashed (sharding caches key on them) and
// printed as upstream prints them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "reduce_op.h"

namespace strata::distributed {

struct Shard {
  std::int64_t dim = 0;
};
struct Replicate {};
struct Partial {
  ReduceOp reduce_op = ReduceOp::Sum;
};

// Note [Placements are one value type]
// Upstream's placements are classes of one hierarchy compared by value. Here a Placement is one
// small value (a kind, a dim, a reduce op) that Shard, Replicate and Partial convert to, so that a
// list of them is a plain vector, compares with ==, and hashes without virtual calls. Fields that do
// not apply to a kind hold fixed values (dim -1, reduce op Sum), so equality is field-wise.
class Placement {
 public:
  enum class Kind : std::uint8_t { Shard, Replicate, Partial };

  Placement(Shard s) : kind_(Kind::Shard), dim_(s.dim) {}  // NOLINT: implicit, as upstream's subclasses
  Placement(Replicate) : kind_(Kind::Replicate) {}          // NOLINT
  Placement(Partial p) : kind_(Kind::Partial), reduce_op_(p.reduce_op) {}  // NOLINT

  Kind kind() const { return kind_; }
  bool is_shard() const { return kind_ == Kind::Shard; }
  bool is_shard(std::int64_t dim) const { return kind_ == Kind::Shard && dim_ == dim; }  // upstream's is_shard(dim)
  bool is_replicate() const { return kind_ == Kind::Replicate; }
  bool is_partial() const { return kind_ == Kind::Partial; }
  // The sharded tensor dimension: an error unless is_shard().
  std::int64_t dim() const;
  // The reduction: an error unless is_partial().
  ReduceOp reduce_op() const;

  friend bool operator==(const Placement& a, const Placement& b) {
    return a.kind_ == b.kind_ && a.dim_ == b.dim_ && a.reduce_op_ == b.reduce_op_;
  }
  friend bool operator!=(const Placement& a, const Placement& b) { return !(a == b); }
  std::size_t hash() const;

 private:
  Kind kind_;
  std::int64_t dim_ = -1;
  ReduceOp reduce_op_ = ReduceOp::Sum;
};

using Placements = std::vector<Placement>;

// How a Partial prints in the short form: PyTorch 2.8's __str__ (and the DTensor DebugMode of its
// time) prints "P"; later releases print the reduction, "P(sum)".
enum class PartialStyle { Bare, WithReduceOp };

// Upstream's __str__: "S(0)", "R", "P" (or "P(sum)").
std::string to_string(const Placement& p, PartialStyle style = PartialStyle::Bare);
// Upstream's __repr__: "Shard(dim=0)", "Replicate()", "Partial(sum)".
std::string repr(const Placement& p);
// DebugMode's list: "[S(0), R]".
std::string to_string(const Placements& ps, PartialStyle style = PartialStyle::Bare);
std::size_t hash_placements(const Placements& ps);
// Folds `value` into `seed` (boost's hash_combine): how placements and meshes hash their fields.
inline std::size_t hash_mix(std::size_t seed, std::size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}
std::ostream& operator<<(std::ostream& os, const Placement& p);  // to_string(p)

}  // namespace strata::distributed

template <>
struct std::hash<strata::distributed::Placement> {
  std::size_t operator()(const strata::distributed::Placement& p) const noexcept { return p.hash(); }
};
