// tests/tracer/cli/test_profile_cli.cpp: strata-trace --profile and --graph (files written, table on
// stdout, bad paths and combinations as one line and exit code 2), and the header every JSON output
// carries.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/tracer/cli/cli_test_helpers.h"
#include "tracer/cli/trace_cli.h"

namespace test_profile_cli {  // Note [Test files in unity builds]

using namespace strata;
namespace fs = std::filesystem;

namespace {
std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
void check_header(const nlohmann::ordered_json& doc, std::uint64_t seed) {
  REQUIRE(doc.is_object());
  REQUIRE(doc.begin().key() == "header");
  const auto& h = doc["header"];
  CHECK(h["strata_version"] == "0.1.0");
  CHECK(h["build_type"].is_string());
  CHECK(h["optimization"].is_string());
  CHECK(h["ndebug"].is_boolean());
  CHECK(h["march_native"].is_boolean());
  CHECK(h["sanitizers"].is_string());
  CHECK(h["compiler"].is_string());
  CHECK(h["num_threads"].get<int>() >= 1);
  CHECK(h["seed"] == seed);
#ifdef NDEBUG
  CHECK(h["ndebug"] == true);
#else
  CHECK(h["ndebug"] == false);
#endif
}
}  // namespace

TEST_CASE("--profile writes the Chrome trace and prints the table; --graph writes the DOT") {
  const fs::path dir = testing::scratch_dir();
  const auto r = testing::run_cli({"--profile", (dir / "trace.json").string(), "--graph", (dir / "g.dot").string(),
                                   "--seed", "3"});
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("Name    Self CPU %      Self CPU") != std::string::npos);
  CHECK(r.out.find("aten::addmm") != std::string::npos);
  CHECK(r.out.find("autograd::engine::evaluate_function: AddmmBackward0") != std::string::npos);
  const auto trace = nlohmann::ordered_json::parse(read_text(dir / "trace.json"));
  check_header(trace, 3);
  REQUIRE(trace["traceEvents"].is_array());
  CHECK(trace["traceEvents"].size() > 50);
  bool dims = false;
  for (const auto& e : trace["traceEvents"]) {
    for (const char* key : {"name", "ph", "ts", "dur", "pid", "tid", "args"}) CHECK(e.contains(key));
    if (e["name"] == "aten::addmm")
      dims = dims || nlohmann::json(e["args"]["Input Dims"]) == nlohmann::json::parse("[[32], [8, 16], [16, 32], [], []]");
  }
  CHECK(dims);
  const std::string dot = read_text(dir / "g.dot");
  CHECK(dot.rfind("digraph {", 0) == 0);
  CHECK(dot.find("[label=AddmmBackward0]") == std::string::npos);  // labels are quoted
  CHECK(dot.find("[label=\"AddmmBackward0\"]") != std::string::npos);
  CHECK(testing::entries(dir) == 2);

  const auto g = testing::run_cli({"--graph", (dir / "only.dot").string()});
  CHECK(g.code == 0);
  CHECK(g.out.empty());
  CHECK(read_text(dir / "only.dot") == dot);  // the graph holds sizes, not values: the seed does not matter
  fs::remove_all(dir);
}

TEST_CASE("--profile and --graph: bad paths and combinations are one line and exit code 2, no file") {
  const fs::path dir = testing::scratch_dir();
  const std::string trace = (dir / "t.json").string();
  testing::check_refused({
      {{"--profile"}, "--profile: missing value"},
      {{"--graph"}, "--graph: missing value"},
      {{"--profile", trace, "--debug"}, "--debug: not with --profile (it writes its own file instead of the report)"},
      {{"--graph", trace, "--flops"}, "--flops: not with --graph (it writes its own file instead of the report)"},
      {{"--profile", trace, "--json-out", (dir / "x.json").string()},
       "--json-out: not with --profile (it writes its own file instead of the report)"},
      {{"--profile", trace, "--graph", trace}, "--graph: '" + trace + "' is the same file as --profile"},
  });
  for (const char* flag : {"--profile", "--graph"}) {
    const auto r = testing::run_cli({flag, (dir / "missing" / "f").string()});
    CHECK(r.code == 2);
    CHECK(r.err.rfind(std::string("strata-trace: error: ") + flag + ": ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    const auto d = testing::run_cli({flag, dir.string()});  // a directory
    CHECK(d.code == 2);
    CHECK(std::count(d.err.begin(), d.err.end(), '\n') == 1);
  }
  CHECK(testing::entries(dir) == 0);
  fs::remove_all(dir);
}

TEST_CASE("every JSON output strata-trace writes starts with the run header") {
  const fs::path dir = testing::scratch_dir();
  const auto report = testing::run_cli({"--seed", "5", "--json-out", (dir / "r.json").string(), "--dump-tensors",
                                        (dir / "t.json").string()});
  REQUIRE(report.code == 0);
  check_header(nlohmann::ordered_json::parse(report.out), 5);
  check_header(nlohmann::ordered_json::parse(read_text(dir / "r.json")), 5);
  check_header(nlohmann::ordered_json::parse(read_text(dir / "t.json")), 5);
  const auto flops = testing::run_cli({"--flops", "--json"});
  REQUIRE(flops.code == 0);
  check_header(nlohmann::ordered_json::parse(flops.out), 0);
  const auto debug = testing::run_cli({"--debug", "--json", "--seed", "7"});
  REQUIRE(debug.code == 0);
  check_header(nlohmann::ordered_json::parse(debug.out), 7);
  fs::remove_all(dir);
}

}  // namespace test_profile_cli
