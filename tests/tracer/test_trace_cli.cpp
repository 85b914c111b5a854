// tests/tracer/test_trace_cli.cpp: strata-trace's flags: output, help, and every bad input gets one
// line on stderr, exit code 2, and no file (not even a partial one).
#include <filesystem>
#include <sstream>

#include "tests/test_helpers.h"
#include "tracer/trace_cli.h"

using namespace strata;
using namespace strata::tracer;
namespace fs = std::filesystem;

namespace {
struct Run {
  int code;
  std::string out, err;
};
Run run(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = run_trace_cli(args, out, err);
  return {code, out.str(), err.str()};
}
fs::path scratch_dir() {
  const fs::path dir = fs::temp_directory_path() / ("strata-cli-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}
}  // namespace

TEST_CASE("bad flags and values give one line on stderr and exit code 2") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--sizes", "16,abc"}, "strata-trace: error: --sizes: expected an integer, got 'abc'\n"},
      {{"--sizes", "5"}, "strata-trace: error: --sizes: expected at least two sizes (input and output, e.g. 16,32,4), got '5'\n"},
      {{"--sizes", "16,0,4"}, "strata-trace: error: --sizes: expected an integer >= 1, got 0\n"},
      {{"--sizes", "16,,4"}, "strata-trace: error: --sizes: expected an integer, got ''\n"},
      {{"--batch", "0"}, "strata-trace: error: --batch: expected an integer >= 1, got 0\n"},
      {{"--batch", "8x"}, "strata-trace: error: --batch: expected an integer, got '8x'\n"},
      {{"--seed", "-1"}, "strata-trace: error: --seed: expected a non-negative integer, got '-1'\n"},
      {{"--lr", "nan"}, "strata-trace: error: --lr: expected a finite number >= 0, got 'nan'\n"},
      {{"--lr", "-0.1"}, "strata-trace: error: --lr: expected a finite number >= 0, got '-0.1'\n"},
      {{"--frobnicate"}, "strata-trace: error: unknown argument '--frobnicate' (see --help)\n"},
      {{"--seed"}, "strata-trace: error: --seed: missing value\n"},
      {{"--sizes", "100000,100000"},
       "strata-trace: error: --sizes: a 100000x100000 layer exceeds strata-trace's limit of 134217728 elements per tensor\n"},
      {{"--json-out", "/nonexistent-dir/out.json"},
       "strata-trace: error: cannot write '/nonexistent-dir/out.json': No such file or directory\n"},
  };
  for (const auto& [args, message] : cases) {
    INFO(args[0]);
    const Run r = run(args);
    CHECK(r.code == 2);
    CHECK(r.err == message);
    CHECK(r.out.empty());
  }
}

TEST_CASE("an unwritable output leaves no file behind, and a good run writes complete JSON files") {
  const fs::path dir = scratch_dir();
  const Run bad = run({"--dump-tensors", (dir / "t.json").string(), "--json-out", (dir / "missing" / "o.json").string()});
  CHECK(bad.code == 2);
  CHECK(fs::is_empty(dir));

  const Run good = run({"--json-out", (dir / "o.json").string(), "--dump-tensors", (dir / "t.json").string(), "--sequences"});
  CHECK(good.code == 0);
  CHECK(good.err.empty());
  const nlohmann::json written = nlohmann::json::parse(testing::read_text((dir / "o.json").string()));
  CHECK(written == nlohmann::json::parse(good.out));
  CHECK(written["backward_seq"].size() == 28);
  const nlohmann::json tensors = nlohmann::json::parse(testing::read_text((dir / "t.json").string()));
  CHECK(tensors["grads"].size() == 4);
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 2);  // no temporaries left
  fs::remove_all(dir);
}

TEST_CASE("--help prints usage and exits 0") {
  const Run r = run({"--help"});
  CHECK(r.code == 0);
  CHECK(r.out == trace_usage());
  CHECK(r.out.find("--dump-tensors FILE") != std::string::npos);
}

TEST_CASE("flags set the configuration") {
  const TraceOptions o = parse_trace_args({"--seed", "3", "--sizes", "5,7,2", "--batch", "4", "--lr", "0.05", "--sequences"});
  CHECK(o.config.seed == 3);
  CHECK(o.config.sizes == std::vector<std::int64_t>{5, 7, 2});
  CHECK(o.config.batch == 4);
  CHECK(o.config.lr == 0.05);
  CHECK(o.sequences);
  const Run r = run({"--sizes", "3,2", "--batch", "2"});
  CHECK(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["total_ops"] == 23);  // 5 forward, 14 backward, 4 optimizer
}
