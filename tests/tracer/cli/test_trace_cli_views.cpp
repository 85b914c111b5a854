// tests/tracer/cli/test_trace_cli_views.cpp: strata-trace --fake and --flops [--json]: what they print,
// how they combine with --sizes, --batch and --seed, the limits under --fake, and the combinations
// refused with one line and exit code 2 (Note [Views of strata-trace]); --world-size with the report,
// --debug and --trace (Note [One rank's view of the data-parallel step]).
#include "tests/tracer/cli/cli_test_helpers.h"
#include "modes/flop_counter.h"
#include "tracer/cli/trace_cli.h"

#include <sstream>

namespace test_trace_cli_views {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::tracer;

namespace {
using Run = testing::CliRun;
Run run(const std::vector<std::string>& args) { return testing::run_cli(args); }

// The lines of `text` that are not DistributedDataParallel's own ops: the gradients divided into the
// bucket, its all-reduce, and the reduced gradients copied back.
std::string without_ddp_lines(const std::string& text) {
  std::istringstream in(text);
  std::string line, kept;
  while (std::getline(in, line)) {
    bool ddp = false;
    for (const char* op : {"aten::mul.out(", "c10d::allreduce_(", "aten::as_strided(", "aten::copy_("})
      ddp = ddp || line.find(op) != std::string::npos;
    if (!ddp) kept += line + "\n";
  }
  return kept;
}
}  // namespace

TEST_CASE("--fake prints the plain run's JSON, with null for the fields that compare values") {
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{}, {"--sizes", "10,20,30,4", "--batch", "6", "--seed", "3", "--sequences"}}) {
    std::vector<std::string> fake_args = extra;
    fake_args.push_back("--fake");
    const Run plain = run(extra), fake = run(fake_args);
    REQUIRE(plain.code == 0);
    REQUIRE(fake.code == 0);
    CHECK(fake.err.empty());
    nlohmann::json expected = nlohmann::json::parse(plain.out);
    for (const char* key : {"traced_step_matches", "subclass_output_matches", "subclass_grad_matches"}) {
      CHECK(expected[key] == true);
      expected[key] = nullptr;
    }
    CHECK(nlohmann::json::parse(fake.out) == expected);
  }
}

TEST_CASE("--flops prints upstream's table with modules and the per-phase table; --json the totals") {
  const Run table = run({"--flops"});
  REQUIRE(table.code == 0);
  const std::string module_table = testing::read_golden_json("flop_tables_torch.json")["seed"];
  // The phase table's layout is checked in test_flop_counter.cpp; here, that the view prints both.
  FlopCounterMode flops;
  run_step(MlpConfig{}, PhasedMode::of(flops));
  CHECK(table.out == module_table + "\n\n" + flops.get_phase_table() + "\n");
  CHECK(flops.get_phase_table().starts_with("Phase "));
  CHECK(run({"--flops", "--fake"}).out == table.out);

  // 10,20,30,4, batch 6: forward 11040, backward 19680 (worked out in test_flop_counter.cpp).
  for (const char* fake : {"", "--fake"}) {
    std::vector<std::string> args{"--flops", "--json", "--sizes", "10,20,30,4", "--batch", "6", "--seed", "9"};
    if (*fake) args.push_back(fake);
    const Run r = run(args);
    REQUIRE(r.code == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    CHECK(j["total_flops"] == 30720);
    CHECK(j["phases"]["forward"] == nlohmann::json::parse(R"({"total": 11040, "ops": {"aten.addmm": 11040}})"));
    CHECK(j["phases"]["backward"] == nlohmann::json::parse(R"({"total": 19680, "ops": {"aten.mm": 19680}})"));
    CHECK(j["phases"]["optimizer"]["total"] == 0);
    CHECK(j["modules"]["Global"]["total"] == 30720);
    // Per module (layers 0, 2, 4 are the Linears): the forward addmm of each, and in the backward its
    // weight's mm plus, past the first layer, its input's mm of the same size (test_flop_counter.cpp).
    const auto phases = [&](const char* module) { return j["modules"][module]["phases"]; };
    CHECK(phases("Sequential") == nlohmann::json::parse(R"({"forward": 11040, "backward": 19680, "optimizer": 0})"));
    CHECK(phases("Sequential.0") == nlohmann::json::parse(R"({"forward": 2400, "backward": 2400, "optimizer": 0})"));
    CHECK(phases("Sequential.2") == nlohmann::json::parse(R"({"forward": 7200, "backward": 14400, "optimizer": 0})"));
    CHECK(phases("Sequential.4") == nlohmann::json::parse(R"({"forward": 1440, "backward": 2880, "optimizer": 0})"));
    CHECK(j["modules"].size() == 5);  // Global, Sequential and the three Linears: ReLUs count nothing
  }
}

TEST_CASE("--fake lifts the parameter and activation limits to 2^40: a 10^9-parameter step runs") {
  const std::vector<std::string> big{"--sizes", "32768,16384,16384,16384"};
  CHECK_THROWS_WITH_AS(parse_trace_args(big),
                       "--sizes: 1073790976 parameters, over strata-trace's limit of 67108864 (2^26) in total", Error);
  std::vector<std::string> args = big;
  args.insert(args.end(), {"--fake", "--flops", "--json"});
  const Run r = run(args);
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["phases"]["forward"]["total"] == 16LL * 1073741824);
  CHECK_THROWS_WITH_AS(parse_trace_args({"--fake", "--sizes", "2000000,1000000"}),
                       "--sizes: 2000001000000 parameters, over strata-trace's limit of 1099511627776 (2^40) in total",
                       Error);
  CHECK_THROWS_WITH_AS(parse_trace_args({"--fake", "--batch", "100000000000"}),
                       "--batch: 100000000000 x 52 (the sum of --sizes) = 5200000000000 activations, over "
                       "strata-trace's limit of 1099511627776 (2^40)",
                       Error);
}

TEST_CASE("combinations that make no sense give one line on stderr and exit code 2") {
  testing::check_refused({
      {{"--json"}, "--json: only with --flops, --debug or --trace (the report is JSON already)"},
      {{"--fake", "--json"}, "--json: only with --flops, --debug or --trace (the report is JSON already)"},
      {{"--flops", "--sequences"},
       "--sequences: not with --flops (the FLOP table has no op sequences)"},
      {{"--flops", "--json-out", "x.json"},
       "--json-out: with --flops, only with --json (the table is not JSON)"},
      {{"--fake", "--dump-tensors", "t.json"},
       "--dump-tensors: not with --fake (fake tensors have no values to dump)"},
  });
  const TraceOptions o = parse_trace_args({"--fake", "--flops", "--json", "--sizes", "5,7,2", "--batch", "3"});
  CHECK((o.fake && o.flops && o.json));
  CHECK(trace_usage().find("--fake") != std::string::npos);
  CHECK(trace_usage().find("--flops [--json]") != std::string::npos);
}

TEST_CASE("--explain prints the plain step's dispatch trace under its module and function calls") {
  const Run r = run({"--explain", "--sizes", "3,2", "--batch", "2"});
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  const std::string& out = r.out;
  const std::size_t backward = out.find("# backward\n"), optimizer = out.find("# optimizer\n");
  REQUIRE(backward != std::string::npos);
  REQUIRE(optimizer != std::string::npos);
  CHECK(backward < optimizer);
  // The forward: modules hold the calls the program made, which hold their ops' dispatch steps.
  CHECK(out.starts_with("# forward\n"
                        "[module] Sequential\n"
                        "  [module] Sequential.0\n"
                        "    torch.nn.functional.linear(f32[2, 3], f32[2, 3], f32[2])\n"
                        "      aten.t.default(f32[2, 3]) [Autograd, CPU] -> Autograd: fallback autograd\n"
                        "        aten.t.default(f32[2, 3]) [CPU] -> CPU: kernel t\n"
                        "        autograd: recorded TBackward0\n"));
  CHECK(out.find("\ntorch.nn.functional.cross_entropy(f32[2, 2], i64[2])\n") < backward);
  // The backward is one call; the engine's ops run under it, without grad mode and without function modes.
  CHECK(out.substr(backward).starts_with("# backward\ntorch.Tensor.backward(f32[])\n  aten.ones_like.default(f32[])"));
  CHECK(out.find("    autograd: not recorded (grad mode is off)\n", backward) < optimizer);
  CHECK(out.find("torch.", out.find("torch.Tensor.backward", backward) + 1) > optimizer);
  // The optimizer: the record-function scope's ops and one add_ call per parameter.
  CHECK(out.substr(optimizer).starts_with("# optimizer\nprofiler._record_function_enter_new.default() [CPU]"));
  CHECK(out.find("torch.Tensor.add_(f32[2, 3], f32[2, 3])\n  aten.add_.Tensor(f32[2, 3], f32[2, 3]) [Autograd, CPU]",
                 optimizer) != std::string::npos);
  // Nothing after the step (the report's clones and detaches) is traced.
  CHECK(out.substr(out.rfind('\n', out.size() - 2) + 1) ==
        "profiler._record_function_exit._RecordFunction() [CPU] -> CPU: kernel record_function_exit\n");
}

TEST_CASE("--explain is a view of its own: other views' flags are refused") {
  testing::check_refused({
      {{"--explain", "--flops"}, "--flops: not with --explain (it prints the dispatch trace of the plain step)"},
      {{"--explain", "--fake"}, "--fake: not with --explain (it prints the dispatch trace of the plain step)"},
      {{"--explain", "--sequences"}, "--sequences: not with --explain (it prints the dispatch trace of the plain step)"},
      {{"--explain", "--json-out", "x.json"}, "--json-out: not with --explain (it prints the dispatch trace of the plain step)"},
      {{"--explain", "--json"}, "--json: only with --flops, --debug or --trace (the report is JSON already)"},
  });
}

TEST_CASE("--trace prints the seed loss's forward and backward traces; --json and --logging shape them") {
  const Run plain = run({"--trace"});
  REQUIRE(plain.code == 0);
  CHECK(plain.err.empty());
  CHECK(plain.out == testing::read_text(testing::golden_path("program_trace_seed.txt")));
  const Run logging = run({"--trace", "--logging"});
  REQUIRE(logging.code == 0);
  CHECK(logging.out == testing::read_text(testing::golden_path("program_trace_seed_logging.txt")));
  const Run scaled = run({"--trace", "--scaled"});
  REQUIRE(scaled.code == 0);
  CHECK(scaled.out == testing::read_text(testing::golden_path("program_trace_seed_scaled.txt")));
  const Run json = run({"--trace", "--json", "--sizes", "8,16,16,3", "--batch", "5"});
  REQUIRE(json.code == 0);
  const nlohmann::json j = nlohmann::json::parse(json.out);
  CHECK(j["header"]["seed"] == 0);
  CHECK(j["forward"]["format"] == "strata.trace");
  CHECK(j["forward"]["types"]["x"] == "cpu f32[5, 8]");
  CHECK(j["backward"]["function"] == "backward_fn");
  CHECK(j["backward"]["outputs"].size() == 8);  // x, target, and three layers' weights and biases
}

TEST_CASE("--trace is a view of its own: other views' flags are refused") {
  testing::check_refused({
      {{"--trace", "--fake"}, "--fake: not with --trace (it prints the program traces instead of the report)"},
      {{"--trace", "--debug"}, "--debug: not with --trace (it prints the program traces instead of the report)"},
      {{"--trace", "--sequences"}, "--sequences: not with --trace (it prints the program traces instead of the report)"},
      {{"--trace", "--profile", "p.json"}, "--profile: not with --trace (it prints the program traces instead of the report)"},
      {{"--logging"}, "--logging: only with --trace"},
      {{"--scaled"}, "--scaled: only with --trace"},
      {{"--trace", "--scaled", "--logging"}, "--scaled: not with --logging (one subclass at a time)"},
  });
}

TEST_CASE("--world-size runs the traced step data-parallel: its collectives are counted, its result is the one-process step's") {
  for (const char* world : {"2", "4"}) {
    const Run r = run({"--world-size", world, "--sequences"});
    REQUIRE(r.code == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    CHECK(j["traced_step_matches"] == true);
    CHECK(j["backward_ops"]["c10d.allreduce_.default"] == 1);  // the seed's parameters fit one bucket
    CHECK(j["backward_ops"]["aten.mul.out"] == 4);              // each gradient into the bucket
    // The one-process forward, inside DDP's record_function scope.
    nlohmann::json forward = nlohmann::json::parse(run({}).out)["forward_ops"];
    forward["profiler._record_function_enter_new.default"] = 1;
    forward["profiler._record_function_exit._RecordFunction"] = 1;
    CHECK(j["forward_ops"] == forward);
    if (std::string(world) == "2") {
      // Rank 0's sequences are PyTorch's DDP's (tests/golden/data_parallel_seed_w2_seq.json): the
      // single-process backward with a mul.out after each AccumulateGrad, the bucket's allreduce_,
      // and each gradient copied back from an as_strided view of the bucket.
      const nlohmann::json golden = testing::read_golden_json("data_parallel_seed_w2_seq.json");
      for (const char* key : {"forward_seq", "backward_seq", "optimizer_seq"}) CHECK(j[key] == golden[key]);
    }
  }
  testing::check_refused({
      {{"--world-size", "3"}, "--world-size: the batch (8) must be divisible by the world size (3)"},
      {{"--world-size", "0"}, "--world-size: expected an integer >= 1, got 0"},
      {{"--world-size", "65"}, "--world-size: at most 64 ranks (threads of this process; up to 2^20 with --fake), got 65"},
      // Every rank holds a model: the parameter limit counts all of them, up front, in one line.
      {{"--world-size", "64", "--batch", "64", "--sizes", "1024,1024"},
       "--world-size: 64 ranks x 1049600 parameters = 67174400 (each rank holds its own copy of the model), over "
       "strata-trace's limit of 67108864 (2^26) in total"},
      {{"--world-size", "2", "--fake", "--debug"},
       "--world-size: not with --fake --debug (the report's traced step, --debug and --trace run on several ranks)"},
  });
}

TEST_CASE("--debug and --trace with --world-size print one rank's log, its collectives included") {
  // Rank 1 of 2 runs the single-process step's ops on its 4 rows of the batch, plus DDP's own.
  const Run rank1 = run({"--debug", "--world-size", "2", "--rank", "1"});
  REQUIRE(rank1.code == 0);
  CHECK(rank1.err.empty());
  CHECK(rank1.out.find("    c10d::allreduce_(['t: f32[676]'], ") != std::string::npos);  // one bucket of 676 gradients
  CHECK(rank1.out.find("    aten::mul.out(t: f32[32, 16], t: f64[], out=t: f32[32, 16])\n") != std::string::npos);
  const Run single = run({"--debug", "--batch", "4"});
  REQUIRE(single.code == 0);
  CHECK(without_ddp_lines(rank1.out) == single.out);
  // Which rank: the ranks' own rows hash differently; after the wait the gradients, and so SGD's
  // updated parameters, are the same on both. (allreduce_'s bucket is hashed as the op returns,
  // before its wait, while the other rank may already have completed it: its hash is either.)
  const Run hashed0 = run({"--debug", "--hashes", "--world-size", "2"});
  const Run hashed1 = run({"--debug", "--hashes", "--world-size", "2", "--rank", "1"});
  REQUIRE(hashed0.code == 0);
  REQUIRE(hashed1.code == 0);
  auto line_of = [](const std::string& text, const std::string& op) {
    const std::size_t at = text.rfind(op);
    return at == std::string::npos ? std::string() : text.substr(at, text.find('\n', at) - at);
  };
  CHECK(!line_of(hashed0.out, "c10d::allreduce_(").empty());
  CHECK(!line_of(hashed0.out, "aten::addmm(").empty());
  CHECK(line_of(hashed0.out, "aten::addmm(") != line_of(hashed1.out, "aten::addmm("));
  CHECK(!line_of(hashed0.out, "aten::add_.Tensor(").empty());
  CHECK(line_of(hashed0.out, "aten::add_.Tensor(") == line_of(hashed1.out, "aten::add_.Tensor("));
  // --trace: the step as one program trace of that rank, DDP's collective in its backward.
  const Run trace = run({"--trace", "--world-size", "2", "--rank", "1"});
  REQUIRE(trace.code == 0);
  CHECK(trace.out.rfind("# Constructed by strata's trace recorder: the seed MLP's data-parallel step on rank 1 of 2\n", 0) == 0);
  CHECK(trace.out.find("  # c0: \"cpu f32[4, 16]\"  (captured)\n") != std::string::npos);  // the rank's rows
  CHECK(trace.out.find("    # [c14] = c10d.allreduce_.default([c14], ") != std::string::npos);
  const Run json = run({"--trace", "--json", "--world-size", "4", "--rank", "3"});
  REQUIRE(json.code == 0);
  CHECK(nlohmann::json::parse(json.out)["step"]["format"] == "strata.trace");
  testing::check_refused({
      {{"--debug", "--rank", "1"}, "--rank: only with --world-size (the rank of the world whose log is printed)"},
      {{"--debug", "--world-size", "2", "--rank", "2"}, "--rank: expected a rank below --world-size (2), got 2"},
      {{"--trace", "--world-size", "2", "--rank", "-1"}, "--rank: expected an integer >= 0, got -1"},
      {{"--world-size", "2", "--rank", "1"},
       "--rank: only with --debug, --trace or --fake (the report is rank 0's, but under --fake any rank's)"},
      {{"--trace", "--logging", "--world-size", "2"},
       "--world-size: not with --logging (the report's traced step, --debug and --trace run on several ranks)"},
  });
}

}  // namespace test_trace_cli_views
