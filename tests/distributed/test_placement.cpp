// tests/distributed/test_placement.cpp: Shard, Replicate and Partial as values: their printed forms
// (upstream's __str__ and __repr__, DebugMode's lists), equality, hashes, accessors and their errors.
#include <doctest/doctest.h>

#include <sstream>
#include <unordered_set>

#include "core/util/error.h"
#include "distributed/placement.h"

namespace test_placement {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::distributed;

TEST_CASE("placements print as upstream's __str__, __repr__ and DebugMode's lists") {
  CHECK(to_string(Shard{0}) == "S(0)");
  CHECK(to_string(Shard{2}) == "S(2)");
  CHECK(to_string(Replicate{}) == "R");
  CHECK(to_string(Partial{}) == "P");  // PyTorch 2.8's __str__, the seed's DebugMode lines
  CHECK(to_string(Partial{ReduceOp::Avg}) == "P");
  CHECK(to_string(Partial{}, PartialStyle::WithReduceOp) == "P(sum)");  // later releases
  CHECK(to_string(Partial{ReduceOp::Avg}, PartialStyle::WithReduceOp) == "P(avg)");
  CHECK(to_string(Partial{ReduceOp::Max}, PartialStyle::WithReduceOp) == "P(max)");
  CHECK(to_string(Partial{ReduceOp::Min}, PartialStyle::WithReduceOp) == "P(min)");
  CHECK(to_string(Shard{1}, PartialStyle::WithReduceOp) == "S(1)");

  CHECK(repr(Shard{1}) == "Shard(dim=1)");
  CHECK(repr(Replicate{}) == "Replicate()");
  CHECK(repr(Partial{}) == "Partial(sum)");
  CHECK(repr(Partial{ReduceOp::Min}) == "Partial(min)");

  // The seed: "dt: f32[8, 8][S(0)]", "redistribute_input(0, [P, R], [S(2), S(2)])".
  CHECK(to_string(Placements{Shard{0}}) == "[S(0)]");
  CHECK(to_string(Placements{Partial{}, Replicate{}}) == "[P, R]");
  CHECK(to_string(Placements{Shard{2}, Shard{2}}) == "[S(2), S(2)]");
  CHECK(to_string(Placements{Partial{}, Shard{0}}, PartialStyle::WithReduceOp) == "[P(sum), S(0)]");
  CHECK(to_string(Placements{}) == "[]");
  std::ostringstream os;
  os << Placement(Shard{3}) << " " << Placement(Partial{ReduceOp::Avg});
  CHECK(os.str() == "S(3) P");
}

TEST_CASE("placements compare and hash by value") {
  CHECK(Placement(Shard{0}) == Placement(Shard{0}));
  CHECK(Placement(Shard{0}) != Placement(Shard{1}));
  CHECK(Placement(Replicate{}) == Placement(Replicate{}));
  CHECK(Placement(Partial{}) == Placement(Partial{ReduceOp::Sum}));
  CHECK(Placement(Partial{ReduceOp::Sum}) != Placement(Partial{ReduceOp::Avg}));
  CHECK(Placement(Replicate{}) != Placement(Partial{}));
  CHECK(Placement(Shard{0}) != Placement(Replicate{}));

  const std::hash<Placement> h;
  CHECK(h(Shard{1}) == h(Shard{1}));
  CHECK(h(Partial{ReduceOp::Max}) == h(Partial{ReduceOp::Max}));
  const std::unordered_set<Placement> set{Shard{0}, Shard{1}, Shard{0}, Replicate{}, Partial{}, Partial{ReduceOp::Avg},
                                          Replicate{}};
  CHECK(set.size() == 5);
  CHECK(set.count(Shard{1}) == 1);
  CHECK(set.count(Shard{2}) == 0);

  // A cache key: equal lists hash alike; these differ in order or content and hash apart.
  CHECK(hash_placements({Shard{0}, Replicate{}}) == hash_placements({Shard{0}, Replicate{}}));
  CHECK(hash_placements({Shard{0}, Replicate{}}) != hash_placements({Replicate{}, Shard{0}}));
  CHECK(hash_placements({Shard{0}}) != hash_placements({Shard{0}, Shard{0}}));
  CHECK(hash_placements({Partial{}}) != hash_placements({Partial{ReduceOp::Avg}}));
}

TEST_CASE("a placement's kind, dim and reduce op; asking a placement for what it lacks is an error") {
  const Placement s = Shard{2};
  CHECK(s.is_shard());
  CHECK(s.is_shard(2));
  CHECK_FALSE(s.is_shard(1));
  CHECK(s.dim() == 2);
  CHECK(s.kind() == Placement::Kind::Shard);
  const Placement p = Partial{ReduceOp::Avg};
  CHECK(p.is_partial());
  CHECK_FALSE(p.is_shard(0));
  CHECK(p.reduce_op() == ReduceOp::Avg);
  CHECK(Placement(Replicate{}).is_replicate());
  CHECK_THROWS_WITH_AS(Placement(Replicate{}).dim(), "Placement::dim: Replicate() is not a Shard placement", Error);
  CHECK_THROWS_WITH_AS(s.reduce_op(), "Placement::reduce_op: Shard(dim=2) is not a Partial placement", Error);
}

}  // namespace test_placement
