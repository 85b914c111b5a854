// distributed/op_schema.cpp: an op call in spec space (OpSchema) and a candidate sharding (OpSpec):
// their accessors, and the equality and hash the sharding cache keys on (Note [The sharding cache
// keys on the whole call]).
#include "distributed/sharding_propagation.h"

#include <algorithm>
#include <bit>

#include "core/util/error.h"

namespace strata::distributed {

namespace {

std::size_t hash_value(const IValue& v) {
  std::size_t h = static_cast<std::size_t>(v.tag());
  switch (v.tag()) {
    case IValue::Tag::None:
    case IValue::Tag::Layout: return h;
    case IValue::Tag::Double: return hash_mix(h, std::bit_cast<std::uint64_t>(v.to_double()));
    case IValue::Tag::Int: return hash_mix(h, static_cast<std::size_t>(v.to_int()));
    case IValue::Tag::Bool: return hash_mix(h, v.to_bool() ? 1 : 0);
    case IValue::Tag::ScalarType: return hash_mix(h, static_cast<std::size_t>(v.to_scalar_type()));
    case IValue::Tag::Device: return hash_mix(h, static_cast<std::size_t>(v.to_device()));
    case IValue::Tag::MemoryFormat: return hash_mix(h, static_cast<std::size_t>(v.to_memory_format()));
    case IValue::Tag::IntList:
      for (std::int64_t x : v.to_int_list()) h = hash_mix(h, static_cast<std::size_t>(x));
      return h;
    case IValue::Tag::String: return hash_mix(h, std::hash<std::string_view>{}(v.to_string_view()));
    default:
      STRATA_CHECK(false, "sharding propagation: a ", v.tag_name(),
                   " argument cannot be part of an OpSchema (tensors must be DTensor specs)");
  }
  return h;
}

bool same_value(const IValue& a, const IValue& b) {
  if (a.tag() != b.tag()) return false;
  switch (a.tag()) {
    case IValue::Tag::None:
    case IValue::Tag::Layout: return true;
    case IValue::Tag::Double: return std::bit_cast<std::uint64_t>(a.to_double()) == std::bit_cast<std::uint64_t>(b.to_double());
    case IValue::Tag::Int: return a.to_int() == b.to_int();
    case IValue::Tag::Bool: return a.to_bool() == b.to_bool();
    case IValue::Tag::ScalarType: return a.to_scalar_type() == b.to_scalar_type();
    case IValue::Tag::Device: return a.to_device() == b.to_device();
    case IValue::Tag::MemoryFormat: return a.to_memory_format() == b.to_memory_format();
    case IValue::Tag::IntList: {
      const IntArrayRef x = a.to_int_list(), y = b.to_int_list();
      return std::equal(x.begin(), x.end(), y.begin(), y.end());
    }
    case IValue::Tag::String: return a.to_string_view() == b.to_string_view();
    default: return false;
  }
}

}  // namespace

// A spec's hash without walking the mesh's ranks (DTensorSpec::hash does, which on a mesh of 1024
// ranks would cost every cache hit a microsecond): equal specs have equal mesh shapes, so this is a
// hash of the same equality.
std::size_t spec_cache_hash(const DTensorSpec& s) {
  std::size_t h = hash_placements(s.placements);
  for (std::int64_t d : s.mesh.shape()) h = hash_mix(h, static_cast<std::size_t>(d));
  if (!s.tensor_meta) return h;
  for (std::int64_t d : s.tensor_meta->shape) h = hash_mix(h, static_cast<std::size_t>(d));
  for (std::int64_t d : s.tensor_meta->stride) h = hash_mix(h, static_cast<std::size_t>(d));
  return hash_mix(h, static_cast<std::size_t>(s.tensor_meta->dtype));
}

namespace {

// Whether a stack value stands for a DTensor spec in an op call (the rest are values).
bool is_spec_arg(const IValue& a) { return a.is_tensor() && a.to_tensor().defined(); }

bool same_arg(const OpArg& a, const OpArg& b) {
  if (a.index() != b.index()) return false;
  if (const auto* v = std::get_if<IValue>(&a)) return same_value(*v, std::get<IValue>(b));
  if (const auto* s = std::get_if<DTensorSpec>(&a)) return *s == std::get<DTensorSpec>(b);
  return std::get<std::vector<DTensorSpec>>(a) == std::get<std::vector<DTensorSpec>>(b);
}

}  // namespace

// ---- OpSchema ----

std::vector<const DTensorSpec*> OpSchema::args_spec() const {
  std::vector<const DTensorSpec*> out;
  for (const OpArg& a : args) {
    if (const auto* s = std::get_if<DTensorSpec>(&a)) out.push_back(s);
    else if (const auto* l = std::get_if<std::vector<DTensorSpec>>(&a))
      for (const DTensorSpec& s2 : *l) out.push_back(&s2);
  }
  return out;
}

const DTensorSpec& OpSchema::spec(std::size_t i) const {
  STRATA_CHECK(i < args.size() && std::holds_alternative<DTensorSpec>(args[i]), op.str(),
               ": sharding propagation expects argument ", i, " to be a DTensor");
  return std::get<DTensorSpec>(args[i]);
}
const std::vector<DTensorSpec>& OpSchema::spec_list(std::size_t i) const {
  STRATA_CHECK(i < args.size() && std::holds_alternative<std::vector<DTensorSpec>>(args[i]), op.str(),
               ": sharding propagation expects argument ", i, " to be a list of DTensors");
  return std::get<std::vector<DTensorSpec>>(args[i]);
}
const IValue& OpSchema::value(std::size_t i) const {
  STRATA_CHECK(i < args.size() && std::holds_alternative<IValue>(args[i]), op.str(),
               ": sharding propagation expects argument ", i, " to be a value, not a DTensor");
  return std::get<IValue>(args[i]);
}
bool OpSchema::has_value(std::size_t i) const {
  return i < args.size() && std::holds_alternative<IValue>(args[i]) && !std::get<IValue>(args[i]).is_none();
}

std::string OpSchema::placements_str() const {
  std::string out;
  for (const DTensorSpec* s : args_spec()) out += (out.empty() ? "" : ", ") + to_string(s->placements);
  return out;
}

std::size_t OpSchema::hash() const {
  std::size_t h = op.valid() ? op.index() : 0;
  for (const OpArg& a : args) {
    if (const auto* s = std::get_if<DTensorSpec>(&a)) {
      h = hash_mix(h, spec_cache_hash(*s));
    } else if (const auto* l = std::get_if<std::vector<DTensorSpec>>(&a)) {
      h = hash_mix(h, l->size());
      for (const DTensorSpec& s2 : *l) h = hash_mix(h, spec_cache_hash(s2));
    } else {
      h = hash_mix(h, hash_value(std::get<IValue>(a)));
    }
  }
  return h;
}

bool operator==(const OpSchema& a, const OpSchema& b) {
  if (!(a.op == b.op) || a.args.size() != b.args.size()) return false;
  for (std::size_t i = 0; i < a.args.size(); ++i)
    if (!same_arg(a.args[i], b.args[i])) return false;
  return true;
}

// ---- OpCallRef: the same key, read in place ----

OpSchema OpCallRef::to_schema() const {
  OpSchema schema{op, {}};
  schema.args.reserve(num_args);
  std::size_t k = 0;
  for (std::size_t i = 0; i < num_args; ++i) {
    const IValue& a = args[i];
    if (is_spec_arg(a)) {
      schema.args.emplace_back(*specs[k++]);
    } else if (a.is_tensor_list()) {
      std::vector<DTensorSpec> list;
      for (std::size_t j = 0; j < a.to_tensor_list().size(); ++j) list.push_back(*specs[k++]);
      schema.args.emplace_back(std::move(list));
    } else {
      schema.args.emplace_back(a);
    }
  }
  return schema;
}

std::size_t OpCallRef::hash() const {  // OpSchema::hash's sequence, argument for argument
  std::size_t h = op.valid() ? op.index() : 0;
  std::size_t k = 0;
  const auto spec_hash = [&] {
    const std::size_t sh = spec_hashes ? spec_hashes[k] : spec_cache_hash(*specs[k]);
    ++k;
    return sh;
  };
  for (std::size_t i = 0; i < num_args; ++i) {
    const IValue& a = args[i];
    if (is_spec_arg(a)) {
      h = hash_mix(h, spec_hash());
    } else if (a.is_tensor_list()) {
      h = hash_mix(h, a.to_tensor_list().size());
      for (std::size_t j = 0; j < a.to_tensor_list().size(); ++j) h = hash_mix(h, spec_hash());
    } else {
      h = hash_mix(h, hash_value(a));
    }
  }
  return h;
}

bool operator==(const OpCallRef& a, const OpSchema& b) {
  return a.matches(
      b, [](const void* ctx, std::size_t k, const DTensorSpec& s) { return *static_cast<const OpCallRef*>(ctx)->specs[k] == s; },
      &a);
}

bool OpCallRef::matches(const OpSchema& b, bool (*same_spec)(const void* ctx, std::size_t k, const DTensorSpec& s),
                        const void* ctx) const {
  const OpCallRef& a = *this;
  if (!(a.op == b.op) || a.num_args != b.args.size()) return false;
  std::size_t k = 0;
  for (std::size_t i = 0; i < a.num_args; ++i) {
    const IValue& v = a.args[i];
    const OpArg& w = b.args[i];
    if (is_spec_arg(v)) {
      const auto* s = std::get_if<DTensorSpec>(&w);
      if (!s || (same_spec && !same_spec(ctx, k, *s))) return false;
      ++k;
    } else if (v.is_tensor_list()) {
      const auto* l = std::get_if<std::vector<DTensorSpec>>(&w);
      if (!l || l->size() != v.to_tensor_list().size()) return false;
      for (const DTensorSpec& s : *l)
        if (same_spec && !same_spec(ctx, k++, s)) return false;
    } else {
      const auto* x = std::get_if<IValue>(&w);
      if (!x || !same_value(v, *x)) return false;
    }
  }
  return true;
}

// ---- OpSpec ----

const DTensorSpec& OpSpec::output_spec() const {
  STRATA_CHECK(output_specs.size() == 1, "OpSpec::output_spec: the strategy has ", output_specs.size(),
               " outputs, not one");
  return output_specs[0];
}

double OpSpec::total_cost() const {
  double sum = 0.0;
  for (const auto& per_input : redistribute_cost)
    for (double c : per_input) sum += c;
  return sum;
}

}  // namespace strata::distributed
