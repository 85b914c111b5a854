// tracer/explorer_data.cpp: the page's compact data and back (Note [The page's compact data],
// explorer_data.h). Each table's encoder has its decoder beside it; tracer/explorer/util.js mirrors
// the decoders.
#include "tracer/explorer_data.h"

#include <cmath>
#include <string>
#include <unordered_map>

#include "core/util/error.h"

namespace strata::tracer::detail {

namespace {

using json = nlohmann::ordered_json;

// The page's strings, each written once.
class Strings {
 public:
  std::int64_t operator()(const std::string& s) {
    const auto [it, fresh] = index_.emplace(s, static_cast<std::int64_t>(table_.size()));
    if (fresh) table_.push_back(s);
    return it->second;
  }
  json ids(const json& array_of_strings) {  // every element's index
    json out = json::array();
    for (const json& s : array_of_strings) out.push_back((*this)(s.get<std::string>()));
    return out;
  }
  json table() const { return table_; }

 private:
  std::unordered_map<std::string, std::int64_t> index_;
  std::vector<std::string> table_;
};

// A link to an earlier row as the distance back to it (0: none).
json up_of(const json& parent, std::size_t i) {
  return parent.is_null() ? json(0) : json(static_cast<std::int64_t>(i) - parent.get<std::int64_t>());
}
json parent_of(const json& up, std::size_t i) {
  const std::int64_t d = up.get<std::int64_t>();
  return d == 0 ? json(nullptr) : json(static_cast<std::int64_t>(i) - d);
}
json or_minus_one(const json& row, const char* key) { return row.contains(key) ? row[key] : json(-1); }

json encode_calls(const json& calls, Strings& str) {
  json kind = json::array(), name = json::array(), up = json::array(), depth = json::array(), args = json::array(),
       output = json::array(), phase = json::array(), step = json::array(), flops = json::array(),
       ran_by = json::array(), kwargs = json::array(), unrecorded = json::array();
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const json& c = calls.at(i);
    kind.push_back(str(c.at("kind").get<std::string>()));
    name.push_back(str(c.at("name").get<std::string>()));
    up.push_back(up_of(c.at("parent"), i));
    depth.push_back(c.at("depth"));
    args.push_back(str.ids(c.at("args")));
    output.push_back(c.contains("output") ? json(str(c.at("output").get<std::string>())) : json(-1));
    phase.push_back(c.at("phase"));
    step.push_back(or_minus_one(c, "step"));
    flops.push_back(or_minus_one(c, "flops"));
    ran_by.push_back(or_minus_one(c, "ran_by"));
    if (c.contains("kwargs")) {
      json kv = json::array();
      for (const json& pair : c.at("kwargs")) kv.push_back(str.ids(pair));
      kwargs.push_back({i, kv});
    }
    if (c.contains("unrecorded")) unrecorded.push_back(i);
  }
  return {{"kind", kind}, {"name", name},     {"up", up},         {"depth", depth},   {"args", args},
          {"output", output}, {"phase", phase}, {"step", step}, {"flops", flops}, {"ran_by", ran_by},
          {"kwargs", kwargs}, {"unrecorded", unrecorded}};
}
// The calls, `node` left for the nodes' decoder to fill in.
json decode_calls(const json& t, const json& strings) {
  json calls = json::array();
  const auto s = [&](const json& index) { return strings.at(index.get<std::size_t>()); };
  for (std::size_t i = 0; i < t["kind"].size(); ++i) {
    json c = {{"kind", s(t["kind"][i])}, {"name", s(t["name"][i])}, {"parent", parent_of(t["up"][i], i)},
              {"depth", t["depth"][i]},   {"args", json::array()},   {"phase", t["phase"][i]}};
    for (const json& a : t["args"][i]) c["args"].push_back(s(a));
    if (t["output"][i] != -1) c["output"] = s(t["output"][i]);
    for (const char* key : {"step", "flops", "ran_by"})
      if (t[key][i] != -1) c[key] = t[key][i];
    calls.push_back(std::move(c));
  }
  for (const json& kv : t["kwargs"]) {
    json& c = calls.at(kv[0].get<std::size_t>());
    c["kwargs"] = json::array();
    for (const json& pair : kv[1]) c["kwargs"].push_back({s(pair[0]), s(pair[1])});
  }
  for (const json& i : t["unrecorded"]) calls.at(i.get<std::size_t>())["unrecorded"] = true;
  return calls;
}

// Steps are [op, args, keys, key, handler, parent, notes?]: a kind is the row without its parent.
json encode_steps(const json& steps, Strings& str) {
  json kinds = json::array(), kind = json::array(), up = json::array();
  std::unordered_map<std::string, std::size_t> kind_index;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const json& s = steps.at(i);
    json k = json::array();
    for (std::size_t f = 0; f < 5; ++f) k.push_back(str(s.at(f).get<std::string>()));
    k.push_back(s.size() > 6 ? str.ids(s.at(6)) : json::array());
    const auto [it, fresh] = kind_index.emplace(k.dump(), kinds.size());
    if (fresh) kinds.push_back(std::move(k));
    kind.push_back(it->second);
    up.push_back(up_of(s.at(5), i));
  }
  return {{"kinds", kinds}, {"kind", kind}, {"up", up}};
}
json decode_steps(const json& t, const json& strings) {
  json steps = json::array();
  for (std::size_t i = 0; i < t["kind"].size(); ++i) {
    const json& k = t["kinds"].at(t["kind"][i].get<std::size_t>());
    json s = json::array();
    for (std::size_t f = 0; f < 5; ++f) s.push_back(strings.at(k[f].get<std::size_t>()));
    s.push_back(parent_of(t["up"][i], i));
    if (!k[5].empty()) {
      json notes = json::array();
      for (const json& n : k[5]) notes.push_back(strings.at(n.get<std::size_t>()));
      s.push_back(std::move(notes));
    }
    steps.push_back(std::move(s));
  }
  return steps;
}

json encode_nodes(const json& nodes, Strings& str) {
  json name = json::array(), seq = json::array(), next = json::array(), saved = json::array(),
       forward = json::array(), ran = json::array(), leaf = json::array();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const json& n = nodes.at(i);
    name.push_back(str(n.at("name").get<std::string>()));
    seq.push_back(n.at("seq"));
    next.push_back(n.at("next"));
    json sv = json::array();
    for (const json& s : n.at("saved")) sv.push_back({str(s.at(0).get<std::string>()), s.at(1)});
    saved.push_back(std::move(sv));
    forward.push_back(or_minus_one(n, "forward"));
    ran.push_back(or_minus_one(n, "ran"));
    if (n.contains("leaf")) leaf.push_back({i, str(n.at("leaf").at(0).get<std::string>()), n.at("leaf").at(1)});
  }
  return {{"name", name}, {"seq", seq}, {"next", next}, {"saved", saved}, {"forward", forward}, {"ran", ran}, {"leaf", leaf}};
}
// The nodes; each node's forward call gets its `node`.
json decode_nodes(const json& t, const json& strings, json& calls) {
  json nodes = json::array();
  for (std::size_t i = 0; i < t["name"].size(); ++i) {
    json n = {{"name", strings.at(t["name"][i].get<std::size_t>())}, {"seq", t["seq"][i]}, {"next", t["next"][i]},
              {"saved", json::array()}};
    for (const json& s : t["saved"][i]) n["saved"].push_back({strings.at(s[0].get<std::size_t>()), s[1]});
    if (t["forward"][i] != -1) {
      n["forward"] = t["forward"][i];
      calls.at(t["forward"][i].get<std::size_t>())["node"] = i;
    }
    if (t["ran"][i] != -1) n["ran"] = t["ran"][i];
    nodes.push_back(std::move(n));
  }
  for (const json& l : t["leaf"]) nodes.at(l[0].get<std::size_t>())["leaf"] = {strings.at(l[1].get<std::size_t>()), l[2]};
  return nodes;
}

// Events are [name, category, start us, duration us, parent]: times in whole ns.
std::int64_t ns_of(const json& us) { return std::llround(us.get<double>() * 1000.0); }
json encode_timeline(const json& events, Strings& str) {
  json name = json::array(), category = json::array(), start = json::array(), dur = json::array(), up = json::array();
  std::int64_t previous = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const json& e = events.at(i);
    name.push_back(str(e.at(0).get<std::string>()));
    category.push_back(str(e.at(1).get<std::string>()));
    start.push_back(ns_of(e.at(2)) - previous);
    previous = ns_of(e.at(2));
    dur.push_back(ns_of(e.at(3)));
    up.push_back(e.at(4) == -1 ? json(0) : json(static_cast<std::int64_t>(i) - e.at(4).get<std::int64_t>()));
  }
  return {{"name", name}, {"category", category}, {"start_ns", start}, {"dur_ns", dur}, {"up", up}};
}
json decode_timeline(const json& t, const json& strings) {
  json events = json::array();
  std::int64_t at = 0;
  for (std::size_t i = 0; i < t["name"].size(); ++i) {
    at += t["start_ns"][i].get<std::int64_t>();
    const std::int64_t up = t["up"][i].get<std::int64_t>();
    events.push_back({strings.at(t["name"][i].get<std::size_t>()), strings.at(t["category"][i].get<std::size_t>()),
                      static_cast<double>(at) / 1000.0, static_cast<double>(t["dur_ns"][i].get<std::int64_t>()) / 1000.0,
                      up == 0 ? -1 : static_cast<std::int64_t>(i) - up});
  }
  return events;
}

}  // namespace

json encode_page_data(const std::vector<json>& ranks, const std::string& title) {
  Strings str;
  json out_ranks = json::array();
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const json& r = ranks[i];
    STRATA_CHECK(r.is_object() && r.value("schema", "") == "strata.explorer.rank", "explorer_html: record ", i,
                 ": expected a record of ExplorerRecorder::finish, got ", r.type_name());
    for (const char* table : {"calls", "steps", "nodes", "timeline"})
      STRATA_CHECK(r.contains(table) && r[table].is_array(), "explorer_html: record ", i,
                   " is not as ExplorerRecorder::finish wrote it: its ", table, " are not an array");
    try {
      out_ranks.push_back({{"rank", r.at("rank")},
                           {"phases", r.at("phases")},
                           {"calls", encode_calls(r.at("calls"), str)},
                           {"steps", encode_steps(r.at("steps"), str)},
                           {"nodes", encode_nodes(r.at("nodes"), str)},
                           {"arg_names", r.at("arg_names")},
                           {"timeline", encode_timeline(r.at("timeline"), str)},
                           {"engine_nodes", r.at("engine_nodes")}});
    } catch (const nlohmann::json::exception& e) {
      STRATA_CHECK(false, "explorer_html: record ", i, " is not as ExplorerRecorder::finish wrote it: ", e.what());
    }
  }
  return {{"schema", "strata.explorer"}, {"version", 2}, {"title", title}, {"strings", str.table()}, {"ranks", out_ranks}};
}

std::vector<json> decode_page_data(const json& data) {
  const json& strings = data["strings"];
  std::vector<json> ranks;
  for (const json& r : data["ranks"]) {
    json calls = decode_calls(r["calls"], strings);
    json nodes = decode_nodes(r["nodes"], strings, calls);
    ranks.push_back({{"schema", "strata.explorer.rank"},
                     {"version", 1},
                     {"rank", r["rank"]},
                     {"phases", r["phases"]},
                     {"calls", std::move(calls)},
                     {"steps", decode_steps(r["steps"], strings)},
                     {"nodes", std::move(nodes)},
                     {"arg_names", r["arg_names"]},
                     {"timeline", decode_timeline(r["timeline"], strings)},
                     {"engine_nodes", r["engine_nodes"]}});
  }
  return ranks;
}

}  // namespace strata::tracer::detail
