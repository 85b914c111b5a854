// distributed/sharding_propagation.h: sharding propagation (upstream's
// torch/distributed/tensor/_sharding_prop.py and _op_schema.py): given an op and the specs of its
// DTensor arguments, the specs of its outputs and the input specs the op needs, so that the DTensor
// handler knows what to redistribute before it runs the op on the local tensors. A table keyed by op
// (the op table's handles, "aten::mm"), one strategy function per op; each lists the candidate
// shardings (OpSpec) with what redistributing the inputs to them costs, and the propagator takes the
// cheapest by upstream's cost model (redistribute_cost.h). Results are cached per call signature.
//
// How the DTensor handler uses it:
//   OpSchema schema{op, args};     // a spec per DTensor argument, the other arguments as values
//   const OutputSharding& out = sharding_propagator().propagate(schema);
//   if (out.needs_redistribute) ...redistribute DTensor argument i to out.input_specs[i], and take
//                                  the non-tensor arguments from out.redistribute_schema...
//   ...run the op on the local tensors...
//   ...wrap result j with out.output_specs[j] (tensor meta included)...
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "../core/dispatch/operator_entry.h"
#include "../core/interpose/checked_wrapper.h"
#include "dtensor_spec.h"

namespace strata::distributed {

// One argument of an op call as propagation sees it (upstream's args_schema entries): a DTensor's
// spec, a list of them (cat's tensors), or any other value (an int, a list of ints, a scalar, None).
// A plain tensor is not a value here: the handler turns it into a spec or refuses it first.
using OpArg = std::variant<DTensorSpec, std::vector<DTensorSpec>, IValue>;

// An op call in spec space (upstream's OpSchema): the op and one argument per schema argument, in
// schema order (keyword-only ones included, by position). Compared and hashed for the cache: specs
// with their tensor meta, values by tag and content.
struct OpSchema {
  OperatorHandle op;
  std::vector<OpArg> args;

  // The DTensor specs in argument order, lists flattened (upstream's args_spec).
  std::vector<const DTensorSpec*> args_spec() const;
  // The spec of argument i (an error naming the op unless it is one), a value argument.
  const DTensorSpec& spec(std::size_t i) const;
  const std::vector<DTensorSpec>& spec_list(std::size_t i) const;
  const IValue& value(std::size_t i) const;
  bool has_value(std::size_t i) const;  // argument i exists and is a value other than None
  // The placements of every DTensor argument, for messages: "[S(0)], [R]".
  std::string placements_str() const;

  std::size_t hash() const;
  friend bool operator==(const OpSchema& a, const OpSchema& b);
};

// A spec's part of the sharding cache's hash (its placements, mesh shape and tensor meta; not the
// mesh's ranks, which equal specs share anyway). A DTensor keeps its spec's, so a hit hashes nothing.
std::size_t spec_cache_hash(const DTensorSpec& spec);

// An op call borrowed from the DTensor handler's stack (Note [The DTensor hit path]): the op, its
// arguments as the stack holds them, and one spec per defined tensor (a list: per element) in
// argument order, read where it lives (in the DTensor). It hashes and compares as the OpSchema
// to_schema() would build, so the cache is searched without copying a spec.
struct OpCallRef {
  OperatorHandle op;
  const IValue* args = nullptr;
  std::size_t num_args = 0;
  const DTensorSpec* const* specs = nullptr;
  const std::size_t* spec_hashes = nullptr;  // spec_cache_hash of each spec, or null to compute them
  // The shared spec each spec is (a DTensor's), null where it is not shared (a plain tensor's), and
  // their count: the cache's identity front (Note [The sharding cache's identity front]).
  const std::shared_ptr<const DTensorSpec>* const* shared = nullptr;
  std::size_t num_specs = 0;

  OpSchema to_schema() const;  // the owning copy, made on a cache miss
  std::size_t hash() const;    // equal to to_schema().hash()
  friend bool operator==(const OpCallRef& a, const OpSchema& b);
  // Whether this call equals `b` given that its k-th spec equals b's k-th spec exactly when
  // same_spec(k) says so, or always when same_spec is null (the identity front's check: the other
  // arguments compared by value).
  bool matches(const OpSchema& b, bool (*same_spec)(const void* ctx, std::size_t k, const DTensorSpec& s),
               const void* ctx) const;
};

// One candidate sharding of an op (upstream's OpSpec, formerly PlacementStrategy): the outputs'
// specs (one per tensor output, a list return counting one per element, or a single one standing for
// every output, as split's pieces or max.dim's values and indices), the input specs it needs,
// one per DTensor argument in args_spec order (empty: every input as output_specs[0]), and for each
// input the cost of moving it there from its current spec (one entry per source spec; eager
// propagation has one).
struct OpSpec {
  std::vector<DTensorSpec> output_specs;
  std::vector<DTensorSpec> input_specs;
  std::vector<std::vector<double>> redistribute_cost;

  const DTensorSpec& output_spec() const;  // the single output's (an error for several)
  double total_cost() const;               // the sum of redistribute_cost
};

// The candidates of one op call (upstream's OpStrategy).
struct OpStrategy {
  std::vector<OpSpec> strategies;
};

// What propagation decided (upstream's OutputSharding): the output specs with their tensor meta,
// one per tensor return (a list return: one per element; a non-tensor return: none); the spec each
// DTensor argument must have (args_spec order, each with that argument's tensor meta); whether some
// argument must be redistributed or a shape argument changed (a view of a sharded tensor takes its
// local shape); and the call the local op runs with, once redistributed (upstream's
// redistribute_schema; set when needs_redistribute).
struct OutputSharding {
  std::vector<std::optional<DTensorSpec>> output_specs;
  std::vector<DTensorSpec> input_specs;
  bool needs_redistribute = false;
  std::optional<OpSchema> redistribute_schema;
  // The id of the strategy chosen among the candidates (its index), for tests and DebugMode.
  std::size_t chosen_index = 0;
};

// A cached decision, with its output specs also held shared (null where output_specs has none), so
// that the handler wraps results in them without copying a shape (Note [The DTensor hit path]).
struct CachedSharding {
  OutputSharding sharding;
  std::vector<std::shared_ptr<const DTensorSpec>> outputs;
  std::vector<std::size_t> output_hashes;  // spec_cache_hash of each output (0 where none)
  // Each output's geometry as checked for its dtype's element size (Note [A wrapper of checked
  // geometry]), an itemsize of 0 where none or where the check failed: DTensor::make's `checked`.
  std::vector<CheckedGeometry> output_checked;
};

// A strategy function: the candidates for one call. Reads the schema's input specs (with tensor
// meta) and values.
using StrategyFn = OpStrategy (*)(const OpSchema& schema);

// The propagator (upstream's ShardingPropagator): the table and the cache.
// Note [Sharding propagation picks the first cheapest strategy]
// A strategy function lists candidates in upstream's order; each candidate's cost is the sum of its
// inputs' redistribute_cost, and the first candidate of least cost wins (Python's
// costs.index(min(costs)), as PyTorch 2.8's _select_strategy), so ties resolve as upstream's do and
// the choices equal PyTorch's. A single candidate is taken without costing it.
// Note [The sharding cache keys on the whole call]
// Upstream caches propagate_op_sharding with an lru_cache on OpSchema, whose hash covers the input
// specs (tensor meta included) and the non-tensor arguments its RuntimeSchemaInfo names. Here every
// non-tensor argument is part of the key (never less precise than upstream's), so a repeated call is
// one hash and one comparison. Each thread has its own cache, as upstream's is a threading.local
// (Note [The sharding cache is per thread]).
class ShardingPropagator {
 public:
  ShardingPropagator();
  ~ShardingPropagator();
  ShardingPropagator(const ShardingPropagator&) = delete;
  ShardingPropagator& operator=(const ShardingPropagator&) = delete;

  // Registers `fn` for the op `qualified_name` ("aten::mm") and overload ("" default, "Tensor").
  // Registration happens before any propagation (the table is read without a lock).
  void register_op_strategy(std::string_view qualified_name, std::string_view overload, StrategyFn fn);
  bool has_strategy(const OperatorHandle& op) const;

  // The sharding of one call: from this thread's cache, else computed and cached. Errors: an op
  // without a strategy (upstream's "Operator aten.xxx.default does not have a sharding strategy
  // registered.", followed by the input placements), a strategy with no candidate, a meta kernel's
  // error. The reference stays valid until clear_cache() on this thread or the propagator's end.
  const OutputSharding& propagate(const OpSchema& schema);
  // The same for a borrowed call (the DTensor handler's): a hit copies nothing.
  const CachedSharding& propagate(const OpCallRef& call);
  // Computes without the cache (upstream's propagate_op_sharding_non_cached).
  OutputSharding propagate_non_cached(const OpSchema& schema) const;

  // The candidates of a call, each with its cost (for tests and explanations).
  OpStrategy strategies(const OpSchema& schema) const;

  // This thread's cache: lookups answered from it, computed, and entries held.
  struct CacheStats {
    std::size_t hits = 0, misses = 0, size = 0;
  };
  CacheStats cache_stats() const;
  void clear_cache();

  struct Cache;

 private:
  Cache& thread_cache() const;        // this thread's, emptied when its process groups were destroyed
  Cache& owned_thread_cache() const;  // this thread's as it is
  // A miss: computes the call's sharding and caches it with its output specs shared.
  const CachedSharding& compute_and_cache(Cache& cache, OpSchema schema) const;
  std::unordered_map<std::uint32_t, StrategyFn> table_;  // by op index
  std::uint64_t id_;
};

// The process's propagator with every strategy of strata registered (on first use).
ShardingPropagator& sharding_propagator();
// Registers strata's strategies (pointwise, matrix, view, math, tensor ops) into `p`.
void register_default_strategies(ShardingPropagator& p);

// The global tensor meta of the op's outputs, by running its meta kernel on meta tensors of the
// inputs' global geometry (upstream runs the op under FakeTensorMode): one per tensor return, a
// list return one per element, none for a non-tensor return.
std::vector<std::optional<TensorMeta>> propagate_tensor_meta(const OpSchema& schema);

}  // namespace strata::distributed
