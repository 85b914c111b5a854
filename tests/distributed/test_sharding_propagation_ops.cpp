// tests/distributed/test_sharding_propagation_ops.cpp: the strategy families beyond pointwise and mm,
// in spec space on fake meshes: the seed's einsum views keep [P, R] / [R, P], view ops follow their
// dim maps (flattening, splitting, broadcasting), reductions leave Partials, softmax and nll_loss
// need the classes whole, cat and split unshard their dimension, the like-factories drop Partial.
#include <doctest/doctest.h>

#include "core/util/error.h"
#include "distributed/fake_process_group.h"
#include "distributed/sharding_propagation.h"
#include "ops/op_table.h"

namespace test_sharding_propagation_ops {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::distributed;

DTensorSpec spec(const DeviceMesh& mesh, Placements p, std::vector<std::int64_t> shape,
                 ScalarType dtype = ScalarType::Float32) {
  std::vector<std::int64_t> stride(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) stride[i - 1] = stride[i] * shape[i];
  return DTensorSpec{mesh, std::move(p), TensorMeta{std::move(shape), std::move(stride), dtype}};
}
IValue ints(std::vector<std::int64_t> v) { return IValue(IntArrayRef(v)); }

// The one output's placements and shape, "[S(0)] [8, 4]", and whether the input moved.
struct Result {
  std::string out;
  bool moved;
  std::string inputs;
};
Result run(OpSchema schema) {
  const OutputSharding r = sharding_propagator().propagate_non_cached(schema);
  std::string out, in;
  for (const auto& s : r.output_specs) {
    if (!out.empty()) out += " ";
    out += s ? to_string(s->placements) + " [" : "none";
    if (s)
      for (std::size_t i = 0; i < s->shape().size(); ++i) out += (i ? ", " : "") + std::to_string(s->shape()[i]);
    if (s) out += "]";
  }
  for (const DTensorSpec& s : r.input_specs) in += (in.empty() ? "" : " ") + to_string(s.placements);
  return {out, r.needs_redistribute, in};
}

TEST_CASE("the seed's einsum views keep [P, R] and [R, P] with the seed's shapes") {
  FakeWorld world(1, 8);
  const DeviceMesh mesh = init_device_mesh({4, 2});
  const Placements pr{Partial{}, Replicate{}}, rp{Replicate{}, Partial{}}, pp{Partial{}, Partial{}};
  const OperatorHandle unsqueeze = ops::op("aten::unsqueeze"), permute = ops::op("aten::permute"),
                       view = ops::op("aten::view");
  struct Case {
    OpSchema schema;
    std::string expected;
  };
  const Case cases[] = {
      {{unsqueeze, {spec(mesh, pr, {16, 6, 8}), IValue(3)}}, "[P, R] [16, 6, 8, 1]"},
      {{unsqueeze, {spec(mesh, pr, {16, 6, 8, 1}), IValue(4)}}, "[P, R] [16, 6, 8, 1, 1]"},
      {{permute, {spec(mesh, pr, {16, 6, 8, 1, 1}), ints({0, 1, 3, 4, 2})}}, "[P, R] [16, 6, 1, 1, 8]"},
      {{unsqueeze, {spec(mesh, rp, {8, 4, 4}), IValue(3)}}, "[R, P] [8, 4, 4, 1]"},
      {{unsqueeze, {spec(mesh, rp, {8, 4, 4, 1}), IValue(4)}}, "[R, P] [8, 4, 4, 1, 1]"},
      {{permute, {spec(mesh, rp, {8, 4, 4, 1, 1}), ints({3, 4, 1, 2, 0})}}, "[R, P] [1, 1, 4, 4, 8]"},
      {{permute, {spec(mesh, pr, {16, 6, 1, 1, 8}), ints({0, 1, 4, 2, 3})}}, "[P, R] [16, 6, 8, 1, 1]"},
      {{view, {spec(mesh, pr, {16, 6, 8, 1, 1}), ints({1, 96, 8})}}, "[P, R] [1, 96, 8]"},
      {{permute, {spec(mesh, rp, {1, 1, 4, 4, 8}), ints({4, 2, 3, 0, 1})}}, "[R, P] [8, 4, 4, 1, 1]"},
      {{view, {spec(mesh, rp, {8, 4, 4, 1, 1}), ints({1, 8, 16})}}, "[R, P] [1, 8, 16]"},
      {{view, {spec(mesh, pp, {1, 96, 16}), ints({16, 6, 1, 4, 4})}}, "[P, P] [16, 6, 1, 4, 4]"},
      {{permute, {spec(mesh, pp, {16, 6, 1, 4, 4}), ints({0, 1, 3, 4, 2})}}, "[P, P] [16, 6, 4, 4, 1]"},
      {{view, {spec(mesh, pp, {16, 6, 4, 4, 1}), ints({16, 6, 4, 4})}}, "[P, P] [16, 6, 4, 4]"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.expected);
    const Result r = run(c.schema);
    CHECK(r.out == c.expected);
    CHECK_FALSE(r.moved);
  }
}

TEST_CASE("view ops follow their dim maps: flattening, splitting, transposing, broadcasting") {
  FakeWorld world(0, 4);
  const DeviceMesh mesh = init_device_mesh({4});
  const OperatorHandle view = ops::op("aten::view");
  // A split dimension keeps its first piece's sharding: [8, 32] S(0) -> [8, 4, 8] stays S(0), and the
  // local op views the rank's [2, 32] as [2, 4, 8].
  const OutputSharding split = sharding_propagator().propagate_non_cached({view, {spec(mesh, {Shard{0}}, {8, 32}), ints({8, 4, 8})}});
  CHECK(to_string(split.output_specs[0]->placements) == "[S(0)]");
  REQUIRE(split.redistribute_schema.has_value());
  const IntArrayRef local = split.redistribute_schema->value(1).to_int_list();
  CHECK(std::vector<std::int64_t>(local.begin(), local.end()) == std::vector<std::int64_t>{2, 4, 8});
  CHECK(to_string(split.input_specs[0].placements) == "[S(0)]");
  // Flattening keeps a Shard of the first flattened dimension only, and only when it divides evenly.
  CHECK(run({view, {spec(mesh, {Shard{0}}, {8, 32}), ints({256})}}).out == "[S(0)] [256]");
  CHECK(run({view, {spec(mesh, {Shard{1}}, {8, 32}), ints({-1})}}).inputs == "[R]");
  CHECK(run({view, {spec(mesh, {Shard{0}}, {6, 4}), ints({24})}}).out == "[R] [24]");
  // Splitting keeps the Shard when the first piece divides by the mesh dimension.
  CHECK(run({view, {spec(mesh, {Shard{0}}, {32}), ints({4, 8})}}).out == "[S(0)] [4, 8]");
  CHECK(run({view, {spec(mesh, {Shard{0}}, {32}), ints({2, 16})}}).out == "[R] [2, 16]");
  CHECK(run({ops::op("aten::_unsafe_view"), {spec(mesh, {Shard{1}}, {1, 96, 16}), ints({96, 16})}}).out == "[S(0)] [96, 16]");
  CHECK(run({ops::op("aten::transpose", "int"), {spec(mesh, {Shard{0}}, {8, 32}), IValue(0), IValue(-1)}}).out ==
        "[S(1)] [32, 8]");
  CHECK(run({ops::op("aten::t"), {spec(mesh, {Shard{1}}, {8, 32})}}).out == "[S(0)] [32, 8]");
  CHECK(run({ops::op("aten::expand"), {spec(mesh, {Shard{1}}, {1, 32}), ints({8, -1}), IValue(false)}}).out ==
        "[S(1)] [8, 32]");
  CHECK(run({ops::op("aten::expand"), {spec(mesh, {Replicate{}}, {32}), ints({8, 32}), IValue(false)}}).out == "[R] [8, 32]");
  CHECK(run({ops::op("aten::squeeze", "dim"), {spec(mesh, {Shard{2}}, {8, 1, 32}), IValue(1)}}).out == "[S(1)] [8, 32]");
}

TEST_CASE("reductions of a sharded dimension leave a Partial of their reduction") {
  FakeWorld world(0, 4);
  const DeviceMesh mesh = init_device_mesh({4});
  const OperatorHandle sum_dim = ops::op("aten::sum", "dim_IntList");
  CHECK(run({sum_dim, {spec(mesh, {Shard{0}}, {8, 32}), ints({0}), IValue(true), IValue()}}).out == "[P] [1, 32]");
  CHECK(run({sum_dim, {spec(mesh, {Shard{1}}, {8, 32}), ints({0}), IValue(false), IValue()}}).out == "[S(0)] [32]");
  CHECK(run({sum_dim, {spec(mesh, {Shard{1}}, {8, 32}), ints({0}), IValue(true), IValue()}}).out == "[S(1)] [1, 32]");
  CHECK(run({ops::op("aten::sum"), {spec(mesh, {Shard{1}}, {8, 32}), IValue()}}).out == "[P] []");
  CHECK(run({ops::op("aten::sum"), {spec(mesh, {Partial{}}, {8, 32}), IValue()}}).out == "[P] []");
  const OutputSharding mean =
      sharding_propagator().propagate_non_cached({ops::op("aten::mean", "dim"), {spec(mesh, {Shard{0}}, {8, 32}), ints({-2}), IValue(false), IValue()}});
  CHECK(mean.output_specs[0]->placements == Placements{Partial{ReduceOp::Avg}});
  const OutputSharding max = sharding_propagator().propagate_non_cached({ops::op("aten::max", "dim"), {spec(mesh, {Shard{1}}, {8, 32}), IValue(1), IValue(false)}});
  REQUIRE(max.output_specs.size() == 2);  // values and indices, each with its meta
  CHECK(max.output_specs[1]->placements == Placements{Partial{ReduceOp::Max}});
  CHECK(max.output_specs[1]->dtype() == ScalarType::Int64);
}

TEST_CASE("softmax and nll_loss need the classes whole, as upstream's strategies") {
  FakeWorld world(0, 4);
  const DeviceMesh mesh = init_device_mesh({4});
  const OperatorHandle log_softmax = ops::op("aten::_log_softmax");
  CHECK(run({log_softmax, {spec(mesh, {Shard{0}}, {8, 4}), IValue(1), IValue(false)}}).out == "[S(0)] [8, 4]");
  const Result classes = run({log_softmax, {spec(mesh, {Shard{1}}, {8, 4}), IValue(-1), IValue(false)}});
  CHECK(classes.out == "[R] [8, 4]");
  CHECK(classes.moved);
  CHECK(run({log_softmax, {spec(mesh, {Partial{}}, {8, 4}), IValue(1), IValue(false)}}).inputs == "[R]");
  // Backward follows the more sharded of grad_output and output.
  const Result back = run({ops::op("aten::_log_softmax_backward_data"),
                           {spec(mesh, {Shard{0}}, {8, 4}), spec(mesh, {Replicate{}}, {8, 4}), IValue(1), IValue(ScalarType::Float32)}});
  CHECK(back.out == "[S(0)] [8, 4]");
  CHECK(back.inputs == "[S(0)] [S(0)]");

  // Mean reduction of a batch-sharded loss: a Partial(avg) loss and a Partial(sum) total weight.
  const DTensorSpec input = spec(mesh, {Shard{0}}, {8, 4}), target = spec(mesh, {Shard{0}}, {8}, ScalarType::Int64);
  const OutputSharding fwd = sharding_propagator().propagate_non_cached(
      {ops::op("aten::nll_loss_forward"), {input, target, IValue(), IValue(1), IValue(-100)}});
  REQUIRE(fwd.output_specs.size() == 2);
  CHECK(fwd.output_specs[0]->placements == Placements{Partial{ReduceOp::Avg}});
  CHECK(fwd.output_specs[1]->placements == Placements{Partial{ReduceOp::Sum}});
  CHECK(fwd.output_specs[0]->shape().empty());
  CHECK_FALSE(fwd.needs_redistribute);
  // A class-sharded input is gathered, and the target follows the input's other dimensions.
  CHECK(run({ops::op("aten::nll_loss_forward"), {spec(mesh, {Shard{1}}, {8, 4}), target, IValue(), IValue(2), IValue(-100)}}).inputs ==
        "[R] [R]");
  CHECK_THROWS_WITH_AS(sharding_propagator().propagate_non_cached({ops::op("aten::nll_loss_forward"),
                                                                   {spec(mesh, {Shard{0}}, {6, 4}), spec(mesh, {Shard{0}}, {6}, ScalarType::Int64),
                                                                    IValue(), IValue(1), IValue(-100)}}),
                       doctest::Contains("cannot be evenly sharded"), Error);
  const DTensorSpec scalar = spec(mesh, {Replicate{}}, {});
  const Result bwd = run({ops::op("aten::nll_loss_backward"), {scalar, input, target, IValue(), IValue(1), IValue(-100), scalar}});
  CHECK(bwd.out == "[S(0)] [8, 4]");
  CHECK(bwd.inputs == "[R] [S(0)] [S(0)] [R]");
  CHECK_FALSE(bwd.moved);
}

TEST_CASE("cat, stack, slice, select and split follow upstream; like-factories drop Partial") {
  FakeWorld world(0, 2);
  const DeviceMesh mesh = init_device_mesh({2});
  const DTensorSpec s0 = spec(mesh, {Shard{0}}, {4, 8}), r = spec(mesh, {Replicate{}}, {4, 8});
  const OperatorHandle cat = ops::op("aten::cat");
  const Result along1 = run({cat, {std::vector<DTensorSpec>{s0, r}, IValue(1)}});
  CHECK(along1.out == "[S(0)] [4, 16]");
  CHECK(along1.inputs == "[S(0)] [S(0)]");
  CHECK(run({cat, {std::vector<DTensorSpec>{s0, r}, IValue(0)}}).out == "[R] [8, 8]");
  CHECK(run({cat, {std::vector<DTensorSpec>{spec(mesh, {Shard{1}}, {4, 8}), s0}, IValue(0)}}).out == "[R] [8, 8]");

  // stack moves the Shards at or after its new dimension one further.
  CHECK(run({ops::op("aten::stack"), {std::vector<DTensorSpec>{spec(mesh, {Shard{1}}, {4, 8}), r}, IValue(0)}}).out ==
        "[S(2)] [2, 4, 8]");
  CHECK(run({ops::op("aten::stack"), {std::vector<DTensorSpec>{s0, s0}, IValue(1)}}).out == "[S(0)] [4, 2, 8]");
  // slice and select cut their dimension whole unless the slice takes all of it.
  const OperatorHandle slice = ops::op("aten::slice", "Tensor");
  CHECK(run({slice, {s0, IValue(0), IValue(1), IValue(3), IValue(1)}}).out == "[R] [2, 8]");
  CHECK(run({slice, {s0, IValue(1), IValue(1), IValue(3), IValue(1)}}).out == "[S(0)] [4, 2]");
  const Result whole = run({slice, {s0, IValue(0), IValue(), IValue(100), IValue(1)}});
  CHECK(whole.out == "[S(0)] [4, 8]");
  CHECK_FALSE(whole.moved);
  const OperatorHandle select = ops::op("aten::select", "int");
  CHECK(run({select, {spec(mesh, {Shard{2}}, {4, 6, 2}), IValue(0), IValue(-1)}}).out == "[S(1)] [6, 2]");
  CHECK(run({select, {s0, IValue(0), IValue(1)}}).out == "[R] [8]");

  const Result pieces = run({ops::op("aten::split", "Tensor"), {spec(mesh, {Shard{1}}, {8, 6}), IValue(3), IValue(0)}});
  CHECK(pieces.out == "[S(1)] [3, 6] [S(1)] [3, 6] [S(1)] [2, 6]");
  CHECK(run({ops::op("aten::split_with_sizes"), {spec(mesh, {Shard{1}}, {8, 6}), ints({2, 4}), IValue(1)}}).out ==
        "[R] [8, 2] [R] [8, 4]");

  const DTensorSpec partial = spec(mesh, {Partial{}}, {4, 8});
  const Result ones = run({ops::op("aten::ones_like"), {partial, IValue(), IValue(), IValue(), IValue(), IValue()}});
  CHECK(ones.out == "[R] [4, 8]");
  CHECK_FALSE(ones.moved);
  CHECK(run({ops::op("aten::zeros_like"), {s0, IValue(), IValue(), IValue(), IValue(), IValue()}}).out == "[S(0)] [4, 8]");
  CHECK(run({ops::op("aten::detach"), {partial}}).out == "[P] [4, 8]");
  CHECK(run({ops::op("aten::clone"), {s0, IValue()}}).out == "[S(0)] [4, 8]");
}

TEST_CASE("new_empty_strided follows an evenly sharded input of its shape, with the local size and stride") {
  FakeWorld world(0, 4);
  const DeviceMesh mesh = init_device_mesh({4});
  const OperatorHandle op = ops::op("aten::new_empty_strided");
  auto call = [&](const DTensorSpec& self, std::vector<std::int64_t> size, std::vector<std::int64_t> stride) {
    return OpSchema{op, {self, ints(std::move(size)), ints(std::move(stride)), IValue(), IValue(), IValue(), IValue()}};
  };
  // Two candidates, replicated (cost 0) and following the input (cost -0.1): the second wins.
  const OutputSharding same = sharding_propagator().propagate_non_cached(call(spec(mesh, {Shard{1}}, {8, 8}), {8, 8}, {8, 1}));
  CHECK(same.chosen_index == 1);
  CHECK(to_string(same.output_specs[0]->placements) == "[S(1)]");
  REQUIRE(same.redistribute_schema.has_value());
  const IntArrayRef size = same.redistribute_schema->value(1).to_int_list(), stride = same.redistribute_schema->value(2).to_int_list();
  CHECK(std::vector<std::int64_t>(size.begin(), size.end()) == std::vector<std::int64_t>{8, 2});
  CHECK(std::vector<std::int64_t>(stride.begin(), stride.end()) == std::vector<std::int64_t>{2, 1});
  CHECK(run(call(spec(mesh, {Shard{0}}, {6, 4}), {6, 4}, {4, 1})).out == "[R] [6, 4]");  // uneven
  CHECK(run(call(spec(mesh, {Shard{0}}, {8, 8}), {4, 4}, {4, 1})).out == "[R] [4, 4]");  // another shape
}

}  // namespace test_sharding_propagation_ops
