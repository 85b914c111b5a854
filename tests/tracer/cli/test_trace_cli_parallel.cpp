// tests/tracer/cli/test_trace_cli_parallel.cpp: strata-trace --fake --world-size N [--rank R] (one
// fake rank of a world far larger than the machine: Note [One fake rank of a large world]); --tp T
// and --mesh D,T (Note [The tensor-parallel step]) on thread ranks and on one fake rank; memory and
// time on a 10^10-parameter model; and what each refuses.
#include <sys/resource.h>
#include <sys/wait.h>

#include <chrono>

#include "tests/tracer/cli/cli_test_helpers.h"
#include "tests/tracer/cli/subprocess.h"

namespace test_trace_cli_parallel {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::tracer;

namespace {
using Run = testing::CliRun;
Run run(const std::vector<std::string>& args) { return testing::run_cli(args); }
nlohmann::json report(const std::vector<std::string>& args) {
  const Run r = run(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(r.out);
}
}  // namespace

TEST_CASE("--fake --world-size counts one fake rank's data-parallel step: the real rank's ops, null comparisons" *
          doctest::test_suite("threads")) {
  const nlohmann::json real = report({"--world-size", "2", "--sequences"});
  const nlohmann::json fake = report({"--fake", "--world-size", "2", "--sequences"});
  for (const char* key : {"forward_ops", "backward_ops", "optimizer_ops", "total_ops", "mm_like_forward",
                          "mm_like_backward", "forward_seq", "backward_seq", "optimizer_seq", "subclass_log"}) {
    INFO(key);
    CHECK(fake[key] == real[key]);
  }
  CHECK(fake["backward_ops"]["c10d.allreduce_.default"] == 1);
  for (const char* key : {"traced_step_matches", "subclass_output_matches", "subclass_grad_matches"}) CHECK(fake[key].is_null());
  CHECK(fake["fake_rank"] == nlohmann::json{{"rank", 0}, {"world_size", 2}});
  CHECK(real.find("fake_rank") == real.end());
  // Any rank of a world past the threads' cap, its ops the same (every rank runs the same program).
  const nlohmann::json last = report({"--fake", "--world-size", "256", "--batch", "256", "--rank", "255", "--sequences"});
  CHECK(last["fake_rank"] == nlohmann::json{{"rank", 255}, {"world_size", 256}});
  CHECK(last["backward_seq"] == real["backward_seq"]);
}

TEST_CASE("--fake --world-size and --rank: what is refused") {
  testing::check_refused({
      {{"--fake", "--world-size", "1048577"},
       "--world-size: at most 1048576 ranks (2^20, with --fake; 64 threads without), got 1048577"},
      {{"--world-size", "65"}, "--world-size: at most 64 ranks (threads of this process; up to 2^20 with --fake), got 65"},
      {{"--fake", "--world-size", "3"}, "--world-size: the batch (8) must be divisible by the world size (3)"},
      {{"--fake", "--world-size", "2", "--rank", "2"}, "--rank: expected a rank below --world-size (2), got 2"},
      {{"--fake", "--rank", "1"}, "--rank: only with --world-size (the rank of the world whose log is printed)"},
      {{"--world-size", "2", "--rank", "1"},
       "--rank: only with --debug, --trace or --fake (the report is rank 0's, but under --fake any rank's)"},
      {{"--debug", "--fake", "--world-size", "2"},
       "--world-size: not with --fake --debug (the report's traced step, --debug and --trace run on several ranks)"},
      {{"--fake", "--flops", "--world-size", "2"},
       "--world-size: not with --flops (the report's traced step, --debug and --trace run on several ranks)"},
  });
  // One rank's copy of the model counts under --fake, not the world's: 2^38 parameters on 2^20 ranks.
  CHECK_NOTHROW(parse_trace_args({"--fake", "--world-size", "1048576", "--batch", "1048576", "--sizes", "524287,524288"}));
}

TEST_CASE("--tp and --mesh: the step tensor-parallel on a (dp, tp) mesh equals the single-process step" *
          doctest::test_suite("threads")) {
  const std::vector<std::vector<std::string>> cases = {
      {"--world-size", "2", "--tp", "2"},                               // 1-D: tensor parallel only
      {"--world-size", "4", "--tp", "2"},                               // 2-D: 2 x 2
      {"--world-size", "4", "--tp", "4", "--sizes", "16,32,32,8"},      // odd depth: the last Linear Colwise
      {"--world-size", "4", "--mesh", "2,2", "--sizes", "6,8,4,8,3"},   // 2-D, two Colwise/Rowwise pairs
      {"--world-size", "4", "--tp", "4", "--batch", "2"},               // only dp = 1 must divide the batch
  };
  for (const std::vector<std::string>& args : cases) {
    INFO(args[1], " ", args[2], " ", args[3]);
    const nlohmann::json j = report(args);
    CHECK(j["traced_step_matches"] == true);
    // The Rowwise layer's partial sums are all-reduced in the forward (DTensor redistribution).
    CHECK(j["forward_ops"].value("_c10d_functional.all_reduce.default", 0) >= 1);
  }
  // --mesh 2,2 is --tp 2 on 4 ranks; the data-parallel average is one more all-reduce per parameter.
  const nlohmann::json tp = report({"--world-size", "4", "--tp", "2", "--sequences"});
  const nlohmann::json mesh = report({"--world-size", "4", "--mesh", "2,2", "--sequences"});
  const nlohmann::json one_d = report({"--world-size", "2", "--tp", "2", "--sequences"});
  for (const char* key : {"forward_seq", "backward_seq", "optimizer_seq"}) CHECK(tp[key] == mesh[key]);
  CHECK(tp["forward_ops"] == one_d["forward_ops"]);
  CHECK(tp["backward_ops"]["_c10d_functional.all_reduce.default"].get<int>() ==
        one_d["backward_ops"].value("_c10d_functional.all_reduce.default", 0) + 4);
  // --fake: rank 3's step of the same mesh, the same ops as the thread rank 0's, no values.
  const nlohmann::json fake = report({"--fake", "--world-size", "4", "--tp", "2", "--rank", "3", "--sequences"});
  for (const char* key : {"forward_ops", "backward_ops", "optimizer_ops", "forward_seq", "backward_seq"}) CHECK(fake[key] == tp[key]);
  CHECK(fake["traced_step_matches"].is_null());
  CHECK(fake["fake_rank"] == nlohmann::json{{"rank", 3}, {"world_size", 4}, {"mesh", {2, 2}}});
}

TEST_CASE("the usage text names --tp, --mesh and --fake's ranks") {
  const std::string help = trace_usage();
  for (const char* text : {"[--tp T | --mesh D,T]", "  --tp T ", "  --mesh D,T ", "(N/T, T) mesh", "[--fake [--rank R]]",
                           "with --fake: the rank whose step is counted", "with --world-size N\n                       (up to 2^20)"}) {
    INFO(text);
    CHECK(help.find(text) != std::string::npos);
  }
}

TEST_CASE("--tp and --mesh: what is refused") {
  testing::check_refused({
      {{"--tp", "2"}, "--tp: only with --world-size (the ranks the mesh lays out)"},
      {{"--mesh", "1,2"}, "--mesh: only with --world-size (the ranks the mesh lays out)"},
      {{"--world-size", "3", "--tp", "2"}, "--tp: the tensor-parallel size (2) must divide --world-size (3)"},
      {{"--world-size", "4", "--tp", "8"}, "--tp: the tensor-parallel size (8) must divide --world-size (4)"},
      {{"--world-size", "4", "--tp", "0"}, "--tp: expected an integer >= 1, got 0"},
      {{"--world-size", "4", "--mesh", "2,3"}, "--mesh: 2 x 3 = 6 ranks, but --world-size is 4"},
      {{"--world-size", "4", "--mesh", "2"}, "--mesh: expected D,T (the data-parallel and tensor-parallel sizes, e.g. 2,2), got '2'"},
      {{"--world-size", "4", "--mesh", "2,x"}, "--mesh: expected an integer, got 'x'"},
      {{"--world-size", "4", "--mesh", "2,2", "--tp", "4"}, "--tp: 4 is not the tensor-parallel size of --mesh 2,2"},
      {{"--world-size", "6", "--tp", "2"}, "--tp: the batch (8) must be divisible by the data-parallel size (6 / 2 = 3)"},
      {{"--world-size", "4", "--tp", "4", "--sizes", "16,30,4"},
       "--tp: the tensor-parallel size (4) must divide the width 30 (--sizes entry 1, the output features of layer 0, "
       "which ColwiseParallel shards)"},
      {{"--world-size", "4", "--tp", "4", "--sizes", "16,32,32,6"},
       "--tp: the tensor-parallel size (4) must divide the width 6 (--sizes entry 3, the output features of layer 2, "
       "which ColwiseParallel shards; with an odd number of layers the last is Colwise)"},
      {{"--debug", "--world-size", "2", "--tp", "2"}, "--tp: not with --debug (the tensor-parallel step runs in the report and --html only)"},
      {{"--trace", "--world-size", "2", "--mesh", "1,2"},
       "--mesh: not with --trace (the tensor-parallel step runs in the report and --html only)"},
  });
}

#ifdef STRATA_TRACE_EXE
TEST_CASE("--fake traces rank 1000 of 1024 on a 1.3x10^10-parameter model in a second, under 200 MB") {
  const std::filesystem::path dir = testing::scratch_dir();
  // 65536 -> 65536 -> 65536 -> 65536: 3 x (2^32 + 2^16) = 12,885,098,496 parameters (48 GB of float32).
  for (const char* mesh : {"", "32,32"}) {
  INFO("--mesh ", std::string(mesh));
  std::vector<std::string> argv{STRATA_TRACE_EXE, "--fake", "--world-size", "1024", "--rank", "1000", "--batch", "1024",
                                "--sizes", "65536,65536,65536,65536"};
  if (*mesh) argv.insert(argv.end(), {"--mesh", mesh});
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = testing::spawn_child(argv, (dir / "out").string(), (dir / "err").string());
  REQUIRE(pid > 0);
  int status = 0;
  rusage usage{};
  REQUIRE(wait4(pid, &status, 0, &usage) == pid);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(testing::read_text((dir / "err").string()).empty());
  const nlohmann::json j = nlohmann::json::parse(testing::read_text((dir / "out").string()));
  CHECK(j["fake_rank"]["rank"] == 1000);
  CHECK(j["mm_like_forward"] == 3);
  if (*mesh) {  // the data-parallel average (six parameters) and the Rowwise layer's partial sums
    CHECK(j["fake_rank"]["mesh"] == nlohmann::json{32, 32});
    CHECK(j["backward_ops"]["_c10d_functional.all_reduce.default"].get<int>() >= 6);
  } else {
    CHECK(j["backward_ops"]["c10d.allreduce_.default"] == 6);  // each weight and bias a bucket (over 25 MB)
  }
  CHECK(j["traced_step_matches"].is_null());
  MESSAGE("peak RSS: ", usage.ru_maxrss, " KB, ", seconds, " s");
  CHECK(usage.ru_maxrss < 200 * 1024);  // kilobytes on Linux
  CHECK(seconds < 10);
  }
  std::filesystem::remove_all(dir);
}
#endif

}  // namespace test_trace_cli_parallel
