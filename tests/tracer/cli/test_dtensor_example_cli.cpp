// tests/tracer/cli/test_dtensor_example_cli.cpp: strata-trace --debug --dtensor-example mm|einsum
// (Note [The DTensor examples]): PR 162665's logs from a real run, in both placement formats, one
// rank of the fake world chosen by --rank, as JSON with --json, and the flags refused with one line
// and exit code 2; the built binary, too.
#include "tests/tracer/cli/cli_test_helpers.h"
#include "tests/tracer/cli/subprocess.h"

#include <filesystem>

namespace test_dtensor_example_cli {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::testing;
namespace fs = std::filesystem;

namespace {
// The PR's mm log as DebugMode indents it (rank 1; the seed's text is unindented).
const std::string kMmSeed =
    "  torch.mm(dt: f32[8, 8][S(0)], dt: f32[8, 32][S(0)])\n"
    "    aten::mm(dt: f32[8, 8][S(0)], dt: f32[8, 32][S(0)])\n"
    "      redistribute_input(1, [S(0)], [R])\n"
    "        _c10d_functional::all_gather_into_tensor(t: f32[1, 32], 8, 0)\n"
    "        _c10d_functional::wait_tensor(t: f32[8, 32])\n"
    "      aten::mm(t: f32[1, 8], t: f32[8, 32])\n";
}  // namespace

TEST_CASE("--dtensor-example mm prints the PR's log, as rank 1 of the fake world of 8") {
  const CliRun r = run_cli({"--debug", "--dtensor-example", "mm"});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(r.out == kMmSeed);
}

TEST_CASE("--dtensor-example einsum: the seed's reduce_scatters on rank 1's groups; --rank picks another") {
  const CliRun seed = run_cli({"--debug", "--dtensor-example", "einsum"});
  REQUIRE(seed.code == 0);
  CHECK(std::count(seed.out.begin(), seed.out.end(), '\n') == 41);
  CHECK(seed.out.find("        _c10d_functional::reduce_scatter_tensor(t: f32[4, 96, 2], sum, 4, 2)\n") != std::string::npos);
  CHECK(seed.out.find("        _c10d_functional::reduce_scatter_tensor(t: f32[2, 1, 16], sum, 2, 3)\n") != std::string::npos);
  // rank 3 is at (1, 1) of the (4, 2) mesh: its columns' group is "2", its row's "4"
  const CliRun rank3 = run_cli({"--debug", "--dtensor-example", "einsum", "--rank", "3"});
  REQUIRE(rank3.code == 0);
  CHECK(rank3.out.find("reduce_scatter_tensor(t: f32[4, 96, 2], sum, 4, 2)") != std::string::npos);
  CHECK(rank3.out.find("reduce_scatter_tensor(t: f32[2, 1, 16], sum, 2, 4)") != std::string::npos);
}

TEST_CASE("--placement-format joined prints upstream's test_debug_mode_einsum log (rank 0, as its test)") {
  const CliRun r = run_cli({"--debug", "--dtensor-example", "einsum", "--placement-format", "joined", "--rank", "0"});
  CHECK(r.code == 0);
  CHECK(r.out == read_text(golden_path("debug_mode_dtensor_einsum_upstream.txt")));
  const CliRun lists = run_cli({"--debug", "--dtensor-example", "mm", "--placement-format", "lists"});
  CHECK(lists.out == kMmSeed);
}

TEST_CASE("--dtensor-example with --json: the DebugMode document, its redistribution a call of its own") {
  const CliRun r = run_cli({"--debug", "--dtensor-example", "mm", "--json", "--record-output"});
  REQUIRE(r.code == 0);
  const auto doc = nlohmann::json::parse(r.out);
  CHECK(doc["schema"] == "strata.debug_mode");
  const auto& calls = doc["calls"];
  REQUIRE(calls.size() == 6);
  CHECK(calls[2]["kind"] == "redistribute");
  CHECK(calls[2]["redistribution"]["path"].dump() == "[[\"S(0)\"],[\"R\"]]");
  CHECK(calls[5]["output"] == "t: f32[1, 32]");
}

TEST_CASE("--dtensor-example's bad input: one line on stderr, exit code 2") {
  check_refused({
      {{"--debug", "--dtensor-example", "bmm"}, "--dtensor-example: expected mm or einsum, got 'bmm'"},
      {{"--dtensor-example", "mm"}, "--dtensor-example: only with --debug"},
      {{"--debug", "--dtensor-example", "mm", "--rank", "8"},
       "--rank: expected a rank below 8 (the world of --dtensor-example), got 8"},
      {{"--debug", "--placement-format", "joined"}, "--placement-format: only with --dtensor-example"},
      {{"--debug", "--dtensor-example", "mm", "--placement-format", "Joined"},
       "--placement-format: expected lists or joined, got 'Joined'"},
      {{"--debug", "--dtensor-example", "mm", "--world-size", "2"},
       "--world-size: not with --dtensor-example (it runs on a fake world of 8)"},
      {{"--debug", "--dtensor-example", "mm", "--fake"}, "--fake: not with --dtensor-example (it runs on a fake world of 8)"},
      {{"--debug", "--dtensor-example"}, "--dtensor-example: missing value"},
  });
  const std::string help = tracer::trace_usage();
  CHECK(help.find("strata-trace --debug --dtensor-example mm|einsum [--rank R] [--placement-format lists|joined]") !=
        std::string::npos);
}

#ifdef STRATA_TRACE_EXE
TEST_CASE("the built strata-trace prints the mm log with exit code 0, and refuses a bad example with 2") {
  const fs::path dir = scratch_dir();
  const auto run_exe = [&](const std::vector<std::string>& args) {
    std::vector<std::string> argv{STRATA_TRACE_EXE};
    argv.insert(argv.end(), args.begin(), args.end());
    const pid_t pid = spawn_child(argv, (dir / "out").string(), (dir / "err").string());
    REQUIRE(pid > 0);
    const ChildExit e = wait_child(pid);
    REQUIRE(!e.signaled);
    return CliRun{e.code, read_text((dir / "out").string()), read_text((dir / "err").string())};
  };
  const CliRun ok = run_exe({"--debug", "--dtensor-example", "mm"});
  CHECK(ok.code == 0);
  CHECK(ok.out == kMmSeed);
  CHECK(ok.err.empty());
  const CliRun bad = run_exe({"--debug", "--dtensor-example", "mm", "--rank", "9"});
  CHECK(bad.code == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err == "strata-trace: error: --rank: expected a rank below 8 (the world of --dtensor-example), got 9\n");
  fs::remove_all(dir);
}
#endif

}  // namespace test_dtensor_example_cli
