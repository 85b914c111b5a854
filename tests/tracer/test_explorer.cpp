// tests/tracer/test_explorer.cpp: the explorer's record of the MLP step (its ops equal PyTorch's, in
// order, per phase; each op's dispatch path, node and backward ops), and its page: self-contained, under
// 300 KB, and escaped so that hostile names cannot end the data's element. The page in a browser:
// tests/browser/.
#include <regex>
#include <set>

#include "tests/test_helpers.h"
#include "tests/tracer/explorer_fixtures.h"
#include "tracer/cli/html_step.h"
#include "tracer/cli/trace_cli.h"
#include "tracer/explorer_data.h"

namespace test_explorer {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::tracer;
using json = nlohmann::ordered_json;

namespace {

// The JSON inside the page's data element, its records decoded (Note [The page's compact data]).
json page_data(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"explorer-data\">\n";
  const std::size_t from = page.find(open);
  REQUIRE(from != std::string::npos);
  const std::size_t to = page.find("\n</script>", from);
  REQUIRE(to != std::string::npos);
  const json data = json::parse(page.substr(from + open.size(), to - from - open.size()));
  CHECK(data["schema"] == "strata.explorer");
  CHECK(data["version"] == 2);
  return {{"title", data["title"]}, {"ranks", tracer::detail::decode_page_data(data)}};
}

// A record as JSON whose objects' key order does not count.
nlohmann::json unordered(const json& record) {
  return nlohmann::json::parse(record.dump(-1, ' ', false, json::error_handler_t::replace));
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A step is [op, args, keys, key, handler, parent, notes?].
constexpr std::size_t kOp = 0, kKey = 3, kParent = 5, kNotes = 6;

// The keys of one call of an op, from its step down its redispatches (what the page's path shows).
std::vector<std::string> path_keys(const json& rank, std::size_t step) {
  const json& steps = rank["steps"];
  const std::string op = steps[step][kOp];
  std::size_t top = step;
  while (!steps[top][kParent].is_null() && steps[steps[top][kParent].get<std::size_t>()][kOp] == op)
    top = steps[top][kParent].get<std::size_t>();
  std::vector<std::string> keys{steps[top][kKey].get<std::string>()};
  for (std::size_t cur = top, i = top + 1; i < steps.size(); ++i) {
    if (steps[i][kParent].is_null() || steps[i][kParent].get<std::size_t>() != cur || steps[i][kOp] != op) continue;
    keys.push_back(steps[i][kKey]);
    cur = i;
  }
  return keys;
}

}  // namespace

TEST_CASE("the explorer records the MLP step's ops as PyTorch runs them, with their paths and nodes") {
  const std::string page = html_step(MlpConfig{}, /*fake=*/false);
  CHECK(page.size() < 300 * 1024);
  const json data = page_data(page);
  REQUIRE(data["ranks"].size() == 1);
  const json& rank = data["ranks"][0];
  CHECK(rank["phases"] == json({"forward", "backward", "optimizer"}));

  const nlohmann::json ref = testing::read_golden_json("trace_torch28_seed0_16-32-4_b8.json");
  std::map<std::string, std::vector<std::string>> seq;  // per phase, the ops as the trace names them
  std::size_t addmm = 0, n_addmm = 0;
  for (std::size_t i = 0; i < rank["calls"].size(); ++i) {
    const json& c = rank["calls"][i];
    if (c["kind"] != "op") continue;
    REQUIRE(c.contains("step"));
    seq[rank["phases"][c["phase"].get<std::size_t>()]].push_back(rank["steps"][c["step"].get<std::size_t>()][kOp]);
    if (c["name"] == "aten::addmm" && n_addmm++ == 0) addmm = i;
  }
  CHECK(nlohmann::json(seq["forward"]) == ref["forward_seq"]);
  CHECK(nlohmann::json(seq["backward"]) == ref["backward_seq"]);
  CHECK(nlohmann::json(seq["optimizer"]) == ref["optimizer_seq"]);

  // addmm: Autograd recorded AddmmBackward0, the interposer handed it to the recorder's DebugMode, the
  // CPU kernel ran; its node saved mat1 and later ran the backward's mm, t and sum ops.
  const json& call = rank["calls"][addmm];
  CHECK(path_keys(rank, call["step"]) == std::vector<std::string>{"Autograd", "Python", "CPU"});
  CHECK(call["flops"] == 2 * 8 * 16 * 32);
  const json& node = rank["nodes"][call["node"].get<std::size_t>()];
  CHECK(node["name"] == "AddmmBackward0");
  CHECK(node["forward"] == addmm);
  CHECK(node["saved"] == json::array({json::array({"mat1", {8, 16}})}));
  std::vector<std::string> ran;
  for (const json& c : rank["calls"])
    if (c.contains("ran_by") && c["ran_by"] == call["node"]) ran.push_back(c["name"]);
  CHECK(std::find(ran.begin(), ran.end(), "aten::mm") != ran.end());
  std::string autograd_notes;
  for (const json& s : rank["steps"])
    if (s.size() > kNotes) autograd_notes += s[kNotes].dump();
  CHECK(autograd_notes.find("autograd: recorded AddmmBackward0") != std::string::npos);
  CHECK(autograd_notes.find("interposer: handed to the dispatch mode DebugMode") != std::string::npos);

  // The graph the engine ran: every node it evaluated (the profiler's count) was found and hooked.
  CHECK(rank["nodes"].size() == 11);
  CHECK(rank["engine_nodes"] == 11);
  for (const json& n : rank["nodes"]) CHECK(n.contains("ran"));
}

TEST_CASE("the explorer's page loads nothing and no name can end its data") {
  const std::string page = explorer_html({explorer_fixtures::hostile_record()}, explorer_fixtures::kHostile);
  for (const char* outside : {"src=", "href=", "@import", "url(", "http:", "https:", "data:", "<link", "<iframe"}) {
    INFO(outside);
    CHECK(page.find(outside) == std::string::npos);
  }
  CHECK(count_of(page, "<script") == 3);  // the data, the page's script, the rest of its tree
  CHECK(count_of(page, "</script") == 3);
  CHECK(page.find("<!--") == std::string::npos);
  CHECK(page.find('\xff') == std::string::npos);  // written as U+FFFD
  CHECK(page.find("window.pwned") != std::string::npos);  // the name is there, as data

  const json data = page_data(page);
  const std::string replaced = "</script><script>window.pwned=1</script><!-- \"'&<b>\xEF\xBF\xBD\xEF\xBF\xBD";
  CHECK(data["title"] == replaced);
  const json& rank = data["ranks"][0];
  bool module_seen = false, subclass_seen = false;
  // DebugMode writes a byte that is not UTF-8 as \xHH (Note [Logged text is always valid UTF-8]).
  const std::string logged = "</script><script>window.pwned=1</script><!-- \"'&<b>\\xff\\xfe";
  for (const json& c : rank["calls"]) module_seen |= c["kind"] == "module" && c["name"] == logged;
  for (const json& s : rank["steps"])
    if (s.size() > kNotes)
      for (const json& n : s[kNotes]) subclass_seen |= n.get<std::string>().find(replaced + ".__torch_dispatch__") != std::string::npos;
  CHECK(module_seen);
  CHECK(subclass_seen);
}

TEST_CASE("the page's compact data gives back every record, every fact of it") {
  const json hostile = explorer_fixtures::hostile_record();
  const json mlp = page_data(html_step(MlpConfig{}, /*fake=*/false))["ranks"][0];
  const json long_step = explorer_fixtures::long_record(200);
  CHECK(long_step["timeline"].size() > 200);
  for (const json* record : {&hostile, &mlp, &long_step}) {
    const json data = tracer::detail::encode_page_data({*record, *record}, "t");
    const std::vector<json> back = tracer::detail::decode_page_data(data);
    REQUIRE(back.size() == 2);
    CHECK(unordered(back[0]) == unordered(*record));
    CHECK(unordered(back[1]) == unordered(*record));
    // Each string once, in one table, for both ranks.
    std::set<std::string> seen;
    for (const json& s : data["strings"]) CHECK(seen.insert(s.get<std::string>()).second);
  }
  // The long step's steps: a handful of kinds, each step an index and a distance back.
  const json data = tracer::detail::encode_page_data({long_step}, "t");
  CHECK(data["ranks"][0]["steps"]["kinds"].size() < 40);
  CHECK(data["ranks"][0]["steps"]["kind"].size() == long_step["steps"].size());
  CHECK_THROWS_WITH_AS(explorer_html({json::object()}), doctest::Contains("record 0: expected a record of ExplorerRecorder::finish"), Error);
  json broken = hostile;
  broken["calls"][0].erase("name");
  CHECK_THROWS_WITH_AS(explorer_html({hostile, broken}), doctest::Contains("record 1 is not as ExplorerRecorder::finish wrote it"), Error);
  broken = hostile;
  broken["steps"] = json::object();
  CHECK_THROWS_WITH_AS(explorer_html({broken}), doctest::Contains("record 0 is not as ExplorerRecorder::finish wrote it"), Error);
}

TEST_CASE("strata-trace --html: the fake step runs Meta kernels; with ranks, a record per rank") {
  const json fake = page_data(html_step(MlpConfig{}, /*fake=*/true))["ranks"][0];
  std::size_t addmm = 0;
  while (fake["calls"][addmm]["name"] != "aten::addmm") ++addmm;
  CHECK(path_keys(fake, fake["calls"][addmm]["step"]) == std::vector<std::string>{"Autograd", "Python", "Python", "Meta"});
  CHECK(fake["calls"][addmm]["args"][0] == "ft$2: f32[32]");

  MlpConfig two;
  two.world_size = 2;
  const json ranks = page_data(html_step(two, /*fake=*/false))["ranks"];
  REQUIRE(ranks.size() == 2);
  for (std::size_t r = 0; r < 2; ++r) {
    CHECK(ranks[r]["rank"] == r);
    int reduces = 0;
    for (const json& c : ranks[r]["calls"]) reduces += c["name"] == "c10d::allreduce_";
    CHECK(reduces == 1);  // DDP's one bucket
    CHECK(ranks[r]["timeline"].empty());
  }

  for (const auto& c : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--html", "p.html", "--debug"}, "--debug: not with --html"},
           {{"--html", "p.html", "--json-out", "x"}, "--json-out: not with --html"},
           {{"--html", "p.html", "--world-size", "2", "--fake"}, "--fake --world-size: not with --html"},
           {{"--html", "p.html", "--world-size", "2", "--tp", "2", "--fake"},
            "--fake --world-size: not with --html"}}) {
    INFO(c.second);
    CHECK_THROWS_WITH_AS(parse_trace_args(c.first), doctest::Contains(c.second.c_str()), Error);
  }
}

TEST_CASE("strata-trace --html --tp: the tensor-parallel step, a record per rank, collectives alike") {
  CHECK(parse_trace_args({"--html", "p.html", "--world-size", "2", "--tp", "2"}).config.tp == 2);
  CHECK(parse_trace_args({"--html", "p.html", "--world-size", "4", "--mesh", "2,2"}).config.tp == 2);
  MlpConfig mesh;
  mesh.world_size = 4;
  mesh.tp = 2;
  const json data = page_data(html_step(mesh, /*fake=*/false));
  CHECK(data["title"].get<std::string>().find("mesh 2 x 2, tensor-parallel") != std::string::npos);
  const json& ranks = data["ranks"];
  REQUIRE(ranks.size() == 4);
  std::vector<std::vector<std::string>> collectives(4);
  for (std::size_t r = 0; r < 4; ++r) {
    CHECK(ranks[r]["rank"] == r);
    CHECK_FALSE(ranks[r]["nodes"].empty());
    for (const json& c : ranks[r]["calls"]) {
      const std::string name = c["name"];
      if (c["kind"] == "op" && name.find("c10d") != std::string::npos) collectives[r].push_back(name);
    }
  }
  CHECK_FALSE(collectives[0].empty());  // the Rowwise layer's all-reduce, the dp gradient average
  for (std::size_t r = 1; r < 4; ++r) CHECK(collectives[r] == collectives[0]);  // the page lines them up
}

TEST_CASE("an ExplorerRecorder finishes once") {
  ExplorerRecorder recorder({.profile = false});
  (void)ones({2});
  const json record = recorder.finish();
  REQUIRE(record["calls"].size() == 2);  // torch.ones and, below it, aten::ones
  CHECK(record["calls"][1]["name"] == "aten::ones");
  CHECK(record["engine_nodes"].is_null());
  CHECK_THROWS_WITH_AS(recorder.finish(), doctest::Contains("called twice"), Error);
  CHECK_THROWS_WITH_AS(recorder.set_phase("backward"), doctest::Contains("has finished"), Error);
}

}  // namespace test_explorer
