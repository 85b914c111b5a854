// modes/debug_hashes.cpp: tensor hashes, the hash-logging hook, and the comparison of two runs.
#include "modes/debug_hashes.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace strata::tracer {

nlohmann::ordered_json tensor_hash(const Tensor& t, TensorHash kind) {
  if (!t.defined() || t.subclass() || !t.impl()->has_data()) return nullptr;
  const bool floating = is_floating_point(t.dtype());  // float8 too: read through float
  if (kind == TensorHash::Norm) {
    double sum = 0;
    if (floating) {
      for (double v : t.to_vector<double>()) sum += std::abs(v);
    } else {
      for (float v : t.to_vector<float>()) sum += std::abs(static_cast<double>(v));
    }
    return sum;
  }
  std::uint64_t x = 0;
  if (floating) {
    for (double v : t.to_vector<double>()) x ^= std::bit_cast<std::uint64_t>(v);
  } else {
    for (std::int64_t v : t.to_vector<std::int64_t>()) x ^= static_cast<std::uint64_t>(v);
  }
  return x;
}

namespace {
nlohmann::ordered_json value_hash(const IValue& v, TensorHash kind) {
  if (v.is_tensor()) return tensor_hash(v.to_tensor(), kind);
  if (v.is_tensor_list()) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const Tensor& t : v.to_tensor_list()) out.push_back(tensor_hash(t, kind));
    return out;
  }
  return nullptr;
}

bool all_null(const nlohmann::ordered_json& j) {
  if (j.is_null()) return true;
  if (j.is_array()) return std::all_of(j.begin(), j.end(), [](const auto& e) { return all_null(e); });
  return false;
}
}  // namespace

DebugMode::HooksGuard log_tensor_hashes(TensorHash kind, bool hash_inputs) {
  auto hook = [kind, hash_inputs](const DispatchHookCall& call) -> nlohmann::ordered_json {
    const std::string& name = call.op.str();
    if (name.find("empty") != std::string::npos || name.find("profiler") != std::string::npos) return nullptr;
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    if (call.num_returns == 1) {
      out["hash"] = value_hash(call.returns[0], kind);
    } else {
      nlohmann::ordered_json all = nlohmann::ordered_json::array();
      for (std::size_t i = 0; i < call.num_returns; ++i) all.push_back(value_hash(call.returns[i], kind));
      out["hash"] = std::move(all);
    }
    if (hash_inputs) {
      nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
      for (const IValue& a : call.args) inputs.push_back(value_hash(a, kind));
      out["input_hash"] = std::move(inputs);
    }
    const bool nothing = std::all_of(out.begin(), out.end(), [](const auto& e) { return all_null(e); });
    return nothing ? nlohmann::ordered_json() : out;
  };
  return DebugMode::HooksGuard(nullptr, std::move(hook), hash_inputs);
}

namespace {
double rel_diff(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b) {
  if (a.is_number_float() || b.is_number_float()) {
    const double x = a.get<double>(), y = b.get<double>();
    return std::abs(x - y) / std::max({std::abs(x), std::abs(y), 1e-10});
  }
  return 1.0;  // bitwise hashes: any difference is all the difference
}

bool has_key(const DebugCall& c, const char* key) { return c.log.is_object() && c.log.contains(key); }

void compare_leaves(const nlohmann::ordered_json& h1, const nlohmann::ordered_json& h2, const std::string& path,
                    const DebugCall& call, std::size_t index, bool is_input, std::vector<HashMismatch>& out) {
  if (h1.is_array() && h2.is_array() && h1.size() == h2.size()) {
    for (std::size_t i = 0; i < h1.size(); ++i)
      compare_leaves(h1[i], h2[i], path + "[" + std::to_string(i) + "]", call, index, is_input, out);
    return;
  }
  if (h1 == h2) return;
  // NaN never equals itself: two NaN hashes are the same hash.
  if (h1.is_number_float() && h2.is_number_float() && std::isnan(h1.get<double>()) && std::isnan(h2.get<double>())) return;
  HashMismatch m;
  m.index = index;
  m.call = call.name;
  m.line = call.render();
  m.pytree_path = path;
  m.hash1 = h1;
  m.hash2 = h2;
  m.rel_diff = (h1.is_number() && h2.is_number()) ? rel_diff(h1, h2) : 1.0;
  m.is_input_hash = is_input;
  out.push_back(std::move(m));
}
}  // namespace

std::vector<HashMismatch> check_hash_mismatches(const std::vector<DebugCall>& logs1, const std::vector<DebugCall>& logs2,
                                                bool compare_inputs) {
  STRATA_CHECK(logs1.size() == logs2.size(), "Log lengths don't match: ", logs1.size(), " vs ", logs2.size());
  std::vector<HashMismatch> out;
  for (std::size_t i = 0; i < logs1.size(); ++i) {
    const DebugCall& a = logs1[i];
    const DebugCall& b = logs2[i];
    STRATA_CHECK(a.kind == b.kind, "Call types don't match at index ", i, ": ", kind_name(a.kind), " vs ", kind_name(b.kind));
    const std::string_view type = kind_name(a.kind);
    STRATA_CHECK(a.name == b.name, "Operators don't match at index ", i, ": ", type, "[", a.name, "] vs ", type, "[",
                 b.name, "]");
    STRATA_CHECK(a.depth == b.depth, "Call depths for ", type, "[", a.name, "] don't match at index ", i, ": ", a.depth,
                 " vs ", b.depth);
    if (a.kind != DebugCall::Kind::Op) continue;
    const bool h1 = has_key(a, "hash"), h2 = has_key(b, "hash");
    STRATA_CHECK(h1 == h2, "Output hash presence inconsistent for ", type, "[", a.name, "] at index ", i,
                 ": log1 has hash=", h1 ? "True" : "False", ", log2 has hash=", h2 ? "True" : "False");
    if (h1) compare_leaves(a.log["hash"], b.log["hash"], "", a, i, false, out);
    if (!compare_inputs) continue;
    const bool i1 = has_key(a, "input_hash"), i2 = has_key(b, "input_hash");
    STRATA_CHECK(i1 == i2, "Input hash presence inconsistent for ", type, "[", a.name, "] at index ", i,
                 ": log1 has input_hash=", i1 ? "True" : "False", ", log2 has input_hash=", i2 ? "True" : "False");
    if (i1) compare_leaves(a.log["input_hash"], b.log["input_hash"], "", a, i, true, out);
  }
  return out;
}

std::optional<HashMismatch> first_hash_mismatch(const std::vector<DebugCall>& logs1, const std::vector<DebugCall>& logs2,
                                                bool compare_inputs) {
  std::vector<HashMismatch> all = check_hash_mismatches(logs1, logs2, compare_inputs);
  if (all.empty()) return std::nullopt;
  return std::move(all.front());
}

}  // namespace strata::tracer
