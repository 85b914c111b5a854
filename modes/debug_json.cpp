// modes/debug_json.cpp: DebugMode's calls as JSON and back (the schema is docs/debug-mode.md's).
#include "modes/debug_hashes.h"

#include <algorithm>

namespace strata::tracer {

namespace {
constexpr const char* kSchema = "strata.debug_mode";
constexpr int kVersion = 1;
}  // namespace

nlohmann::ordered_json DebugMode::to_json() const {
  nlohmann::ordered_json out;
  out["schema"] = kSchema;
  out["version"] = kVersion;
  out["options"] = {{"record_torchfunction", options_.record_torchfunction},
                    {"record_faketensor", options_.record_faketensor},
                    {"record_realtensor", options_.record_realtensor},
                    {"record_nn_module", options_.record_nn_module},
                    {"record_output", options_.record_output},
                    {"record_ids", options_.record_ids}};
  // Options added after version 1 first shipped appear only when set, so older documents still match.
  if (!options_.record_tensor_attributes.empty())
    out["options"]["record_tensor_attributes"] = options_.record_tensor_attributes;
  if (options_.store_original_args) out["options"]["store_original_args"] = true;
  if (options_.record_stack_trace) out["options"]["record_stack_trace"] = true;
  if (options_.placement_format == PlacementFormat::Joined) out["options"]["placement_format"] = "joined";
  nlohmann::ordered_json calls = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < calls_.size(); ++i) {
    const DebugCall c = rendered(calls_[i]);
    nlohmann::ordered_json j;
    j["index"] = i;
    j["kind"] = kind_name(c.kind);
    j["depth"] = c.depth;
    j["parent"] = c.parent ? nlohmann::ordered_json(*c.parent) : nlohmann::ordered_json();
    j["name"] = c.name;
    j["args"] = c.args;
    nlohmann::ordered_json kwargs = nlohmann::ordered_json::object();
    for (const auto& [k, v] : c.kwargs) kwargs[k] = v;
    j["kwargs"] = std::move(kwargs);
    j["output"] = c.output ? nlohmann::ordered_json(*c.output) : nlohmann::ordered_json();
    j["log"] = c.log;
    j["record"] = c.record;
    j["line"] = c.render();
    if (!c.stack_trace.empty()) j["stack_trace"] = c.stack_trace;
    if (c.redistribution) {
      nlohmann::ordered_json r;
      if (c.redistribution->arg_index) r["arg_index"] = *c.redistribution->arg_index;
      else r["tensor"] = c.redistribution->tensor;
      r["path"] = c.redistribution->path;
      j["redistribution"] = std::move(r);
    }
    calls.push_back(std::move(j));
  }
  out["calls"] = std::move(calls);
  return out;
}

std::vector<DebugCall> calls_from_json(const nlohmann::ordered_json& document) {
  STRATA_CHECK(document.is_object() && document.value("schema", "") == kSchema,
               "calls_from_json: expected a document with \"schema\": \"", kSchema, "\"");
  STRATA_CHECK(document.value("version", 0) == kVersion, "calls_from_json: this strata reads ", kSchema, " version ",
               kVersion, ", got version ", document.value("version", 0));
  std::vector<DebugCall> out;
  try {
    for (const auto& j : document.at("calls")) {
      DebugCall c;
      const std::string kind = j.at("kind").get<std::string>();
      constexpr DebugCall::Kind kKinds[] = {DebugCall::Kind::Op, DebugCall::Kind::Function, DebugCall::Kind::Module,
                                            DebugCall::Kind::Redistribute};
      const auto* found = std::find_if(std::begin(kKinds), std::end(kKinds), [&](DebugCall::Kind k) { return kind_name(k) == kind; });
      STRATA_CHECK(found != std::end(kKinds), "calls_from_json: unknown call kind '", kind, "'");
      c.kind = *found;
      c.depth = j.at("depth").get<int>();
      if (!j.at("parent").is_null()) c.parent = j.at("parent").get<std::size_t>();
      c.name = j.at("name").get<std::string>();
      c.args = j.at("args").get<std::vector<std::string>>();
      for (const auto& [k, v] : j.at("kwargs").items()) c.kwargs.emplace_back(k, v.get<std::string>());
      c.stack_trace = j.value("stack_trace", "");
      if (!j.at("output").is_null()) c.output = j.at("output").get<std::string>();
      c.log = j.at("log");
      c.record = j.at("record");
      if (j.contains("redistribution")) {
        const auto& r = j.at("redistribution");
        DebugCall::Redistribution info;
        if (r.contains("arg_index")) info.arg_index = r.at("arg_index").get<std::int64_t>();
        else info.tensor = r.at("tensor").get<std::string>();
        info.path = r.at("path").get<std::vector<std::vector<std::string>>>();
        c.redistribution = std::move(info);
      }
      out.push_back(std::move(c));
    }
  } catch (const nlohmann::json::exception& e) {
    STRATA_CHECK(false, "calls_from_json: malformed document: ", e.what());
  }
  return out;
}

}  // namespace strata::tracer
