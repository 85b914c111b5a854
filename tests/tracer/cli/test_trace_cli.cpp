// tests/tracer/cli/test_trace_cli.cpp: strata-trace's flags: output, help, and every bad input gets one
// line on stderr, exit code 2, and no file (not even a partial one). One case runs the built
// executable: a failing stdout (signals: test_trace_signals.cpp; paths: test_output_paths.cpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>

#include "tests/tracer/cli/cli_test_helpers.h"
#include "tests/tracer/cli/subprocess.h"
#include "io/atomic_file.h"
#include "io/python_json.h"
#include "tracer/cli/trace_cli.h"

namespace test_trace_cli {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::tracer;
namespace fs = std::filesystem;

namespace {
using Run = testing::CliRun;
using testing::entries;
using testing::file_mode;
using testing::scratch_dir;
Run run(const std::vector<std::string>& args) { return testing::run_cli(args); }
// The message parse_trace_args throws for `args`, or "" when it accepts them. Nothing runs.
std::string parse_error(const std::vector<std::string>& args) {
  try {
    parse_trace_args(args);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
// A stream whose every write fails, like std::cout on a full disk.
struct FailingBuf : std::streambuf {
  int overflow(int) override { return traits_type::eof(); }
  std::streamsize xsputn(const char*, std::streamsize) override { return 0; }
};
}  // namespace

TEST_CASE("bad flags and values give one line on stderr and exit code 2") {
  testing::check_refused({
      {{"--sizes", "16,abc"}, "--sizes: expected an integer, got 'abc'"},
      {{"--sizes", "5"}, "--sizes: expected at least two sizes (input and output, e.g. 16,32,4), got '5'"},
      {{"--sizes", "16,0,4"}, "--sizes: expected an integer >= 1, got 0"},
      {{"--sizes", "16,,4"}, "--sizes: expected an integer, got ''"},
      {{"--batch", "0"}, "--batch: expected an integer >= 1, got 0"},
      {{"--batch", "8x"}, "--batch: expected an integer, got '8x'"},
      {{"--batch", "99999999999999999999"},
       "--batch: '99999999999999999999' is out of range (integers up to 9223372036854775807)"},
      {{"--seed", "-1"}, "--seed: expected an integer from 0 to 18446744073709551615, got '-1'"},
      {{"--seed", "1.5"}, "--seed: expected an integer from 0 to 18446744073709551615, got '1.5'"},
      {{"--seed", "99999999999999999999"},
       "--seed: expected an integer from 0 to 18446744073709551615, got '99999999999999999999'"},
      {{"--seed", ""}, "--seed: expected an integer from 0 to 18446744073709551615, got ''"},
      {{"--lr", "nan"}, "--lr: expected a finite number >= 0, got 'nan'"},
      {{"--lr", "-0.1"}, "--lr: expected a finite number >= 0, got '-0.1'"},
      {{"--frobnicate"}, "unknown argument '--frobnicate' (see --help)"},
      {{"--seed"}, "--seed: missing value"},
      {{"--sizes", "100000,100000"},
       "--sizes: 10000100000 parameters, over strata-trace's limit of 67108864 (2^26) in total"},
      {{"--json-out", "/nonexistent-dir/out.json"},
       "--json-out: cannot write '/nonexistent-dir/out.json': No such file or directory"},
      {{"--json-out", ""}, "--json-out: expected a file name, got ''"},
  });
}

TEST_CASE("--lr and --seed are parsed strictly") {
  for (const std::string lr : {"1e400", "-1e400", "nan", "inf", "-inf", "infinity", "0.1abc", "", " 0.1", "0.1 ", "+0.1",
                               "0x1p-3", "1,5", "0.1\n"}) {
    INFO("--lr '", lr, "'");
    CHECK(parse_error({"--lr", lr}) ==
          "--lr: expected a finite number >= 0, got '" + escape_control_chars(lr) + "'");
  }
  CHECK(parse_trace_args({"--lr", "1e-400"}).config.lr == 0.0);  // underflow is 0, as Python's float() has it
  CHECK(parse_trace_args({"--lr", "0"}).config.lr == 0.0);
  CHECK(parse_trace_args({"--lr", "-0"}).config.lr == 0.0);  // PyTorch's SGD accepts -0.0 (not < 0)
  CHECK(parse_trace_args({"--lr", "2.5e-3"}).config.lr == 2.5e-3);
  CHECK(parse_trace_args({"--lr", "1e300"}).config.lr == 1e300);

  for (const std::string seed : {"-1", "1.5", "99999999999999999999", "18446744073709551616", "+1", " 1", "1e3", "0x10"}) {
    INFO("--seed '", seed, "'");
    CHECK(parse_error({"--seed", seed}) == "--seed: expected an integer from 0 to 18446744073709551615, got '" + seed + "'");
  }
  CHECK(parse_trace_args({"--seed", "18446744073709551615"}).config.seed == 18446744073709551615ULL);
  CHECK(trace_usage().find("PyTorch's seed -k is --seed 2^64-k") != std::string::npos);
}

TEST_CASE("layers, parameters and activations are capped before anything runs") {
  // 64 layers is fine, 65 is not.
  std::string sizes = "2";
  for (int i = 0; i < 64; ++i) sizes += ",2";
  CHECK(parse_error({"--sizes", sizes}).empty());
  CHECK(parse_error({"--sizes", sizes + ",2"}) == "--sizes: 66 sizes make 65 layers, over strata-trace's limit of 64 layers");
  std::string many = "1";
  for (int i = 0; i < 100000; ++i) many += ",1";
  CHECK(parse_error({"--sizes", many}) == "--sizes: 100001 sizes make 100000 layers, over strata-trace's limit of 64 layers");

  // Parameters: each layer is under the old per-tensor limit, the total is not. Activations: --batch x
  // the sum of --sizes. "" where the arguments are accepted.
  for (const auto& c : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--sizes", "10000,10000,10000"}, "--sizes: 200020000 parameters, over strata-trace's limit of 67108864 (2^26) in total"},
           {{"--sizes", "100000,100000,100000"},
            "--sizes: 20000200000 parameters, over strata-trace's limit of 67108864 (2^26) in total"},
           {{"--sizes", "9223372036854775807,9223372036854775807"},
            "--sizes: more than 2^63 parameters, over strata-trace's limit of 67108864 (2^26) in total"},
           {{"--sizes", "8191,8191"}, ""},  // 67,100,672 parameters
           {{"--batch", "1000000000"},
            "--batch: 1000000000 x 52 (the sum of --sizes) = 52000000000 activations, over strata-trace's limit of 67108864 (2^26)"},
           {{"--batch", "2000000"},
            "--batch: 2000000 x 52 (the sum of --sizes) = 104000000 activations, over strata-trace's limit of 67108864 (2^26)"},
           {{"--batch", "9223372036854775807"},
            "--batch: 9223372036854775807 x 52 (the sum of --sizes) = more than 2^63 activations, over strata-trace's limit of "
            "67108864 (2^26)"},
           {{"--batch", "1290555"}, ""},  // 67,108,860 activations
           // With --world-size every rank's model counts (before, 16 ranks of 2^26 parameters took 12.9 GB).
           {{"--world-size", "16", "--batch", "16", "--sizes", "8191,8191"},
            "--world-size: 16 ranks x 67100672 parameters = 1073610752 (each rank holds its own copy of the model), over "
            "strata-trace's limit of 67108864 (2^26) in total"},
           {{"--world-size", "64", "--batch", "64", "--sizes", "1023,1024"}, ""},  // 64 x 1,048,576: the limit exactly
       }) {
    INFO(c.first[1]);
    CHECK(parse_error(c.first) == c.second);
  }

  const std::string help = trace_usage();
  CHECK(help.find("at most 64 layers") != std::string::npos);
  CHECK(help.find("2^26 = 67108864 parameters") != std::string::npos);
  CHECK(help.find("--batch times\nthe sum of --sizes at most 2^26 activations") != std::string::npos);
  CHECK(help.find("counting every rank's copy with --world-size") != std::string::npos);
}

TEST_CASE("an echoed value with control characters stays on one line") {
  CHECK(escape_control_chars("1\n2\t3\r4\x1b[31m5\x7f") == "1\\n2\\t3\\r4\\x1b[31m5\\x7f");
  CHECK(escape_control_chars("caf\xc3\xa9 a\\b") == "caf\xc3\xa9 a\\b");  // UTF-8 and backslashes as typed
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--sizes", "1\n2"}, {"--batch", "1\n"}, {"--lr", "0.1\n"}, {"--seed", "\n"},
        {"--bogus\nflag"}, {"--json-out", "/nonexistent-dir/a\nb.json"}, {"--json-out", "/tmp/x\n/"}}) {
    INFO(escape_control_chars(args.back()));
    const Run r = run(args);
    CHECK(r.code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.back() == '\n');
  }
  CHECK(run({"--sizes", "1\n2"}).err == "strata-trace: error: --sizes: expected an integer, got '1\\n2'\n");
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
  CHECK(entries(dir) == 2);  // no temporaries left
  fs::remove_all(dir);
}

TEST_CASE("a directory as an output is refused before the run, and leaves nothing behind") {
  const fs::path dir = scratch_dir();
  const fs::path sub = dir / "sub";
  fs::create_directories(sub);
  for (const std::string flag : {"--json-out", "--dump-tensors"}) {
    for (const std::string& path : {sub.string(), sub.string() + "/", (dir / "new").string() + "/", std::string(".")}) {
      INFO(flag, " ", path);
      // The good output comes first: it must not be written either.
      const std::string other = flag == "--json-out" ? "--dump-tensors" : "--json-out";
      const Run r = run({other, (dir / "good.json").string(), flag, path});
      CHECK(r.code == 2);
      CHECK(r.err == "strata-trace: error: " + flag + ": '" + path + "' is a directory\n");
      CHECK(r.out.empty());
      CHECK(entries(dir) == 1);  // just sub/
      CHECK(fs::is_empty(sub));
    }
  }
  // It is refused before the run: this configuration would take minutes.
  const auto start = std::chrono::steady_clock::now();
  CHECK(run({"--sizes", "4096,4096,4096", "--batch", "4096", "--json-out", sub.string()}).code == 2);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  // So is the same file twice.
  const Run same = run({"--json-out", (dir / "a.json").string(), "--dump-tensors", (dir / "." / "a.json").string()});
  CHECK(same.code == 2);
  CHECK(same.err == "strata-trace: error: --dump-tensors: '" + (dir / "." / "a.json").string() +
                        "' is the same file as --json-out\n");
  CHECK(entries(dir) == 1);
  fs::remove_all(dir);
}

TEST_CASE("output files get the permissions open() would give them") {
  const fs::path dir = scratch_dir();
  const mode_t old_umask = ::umask(022);
  CHECK(run({"--sizes", "3,2", "--json-out", (dir / "a.json").string(), "--dump-tensors", (dir / "b.json").string()}).code == 0);
  CHECK(file_mode(dir / "a.json") == 0644);
  CHECK(file_mode(dir / "b.json") == 0644);
  ::umask(027);
  CHECK(run({"--sizes", "3,2", "--json-out", (dir / "c.json").string()}).code == 0);
  CHECK(file_mode(dir / "c.json") == 0640);
  // Replacing a file keeps its mode, as writing it with open() does.
  ::chmod((dir / "a.json").c_str(), 0604);
  CHECK(run({"--sizes", "3,2", "--json-out", (dir / "a.json").string()}).code == 0);
  CHECK(file_mode(dir / "a.json") == 0604);
  ::umask(old_umask);
  CHECK(entries(dir) == 3);
  fs::remove_all(dir);
}

TEST_CASE("outputs are written through a symlink, and into a FIFO in place") {
  const fs::path dir = scratch_dir();
  { std::ofstream(dir / "real.json") << "old"; }
  fs::create_symlink(dir / "real.json", dir / "link.json");
  CHECK(run({"--sizes", "3,2", "--json-out", (dir / "link.json").string()}).code == 0);
  CHECK(fs::is_symlink(dir / "link.json"));
  CHECK(nlohmann::json::parse(testing::read_text((dir / "real.json").string()))["total_ops"] == 23);

  // A FIFO (like /dev/stdout or /dev/null, which must never be renamed over) is written directly.
  const fs::path fifo = dir / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  const int reader = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);  // a reader, so opening it to write won't block
  REQUIRE(reader >= 0);
  CHECK(run({"--sizes", "3,2", "--json-out", fifo.string()}).code == 0);
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = ::read(reader, buf, sizeof buf)) > 0;) got.append(buf, static_cast<std::size_t>(n));
  ::close(reader);
  CHECK(fs::is_fifo(fifo));
  REQUIRE(!got.empty());
  CHECK(nlohmann::json::parse(got)["total_ops"] == 23);
  CHECK(entries(dir) == 3);
  fs::remove_all(dir);
}

TEST_CASE("a failing stdout is an error, and then no output file is published") {
  const fs::path dir = scratch_dir();
  FailingBuf buf;
  std::ostream out(&buf);
  std::ostringstream err;
  CHECK(run_trace_cli({"--sizes", "3,2", "--json-out", (dir / "o.json").string()}, out, err) == 2);
  const std::string message = err.str();
  CHECK(message.rfind("strata-trace: error: cannot write standard output", 0) == 0);
  CHECK(std::count(message.begin(), message.end(), '\n') == 1);
  CHECK(fs::is_empty(dir));
  std::ostream help_out(&buf);
  std::ostringstream help_err;
  CHECK(run_trace_cli({"--help"}, help_out, help_err) == 2);
  fs::remove_all(dir);
}

TEST_CASE("non-finite values in --dump-tensors are written as Python's json.dumps writes them") {
  nlohmann::ordered_json j;
  j["a"] = std::vector<double>{1.5, std::nan(""), -std::nan(""), HUGE_VAL, -HUGE_VAL, 0.0};
  j["s"] = "x\"y";
  j["i"] = -3;
  CHECK(dump_python_json(j) == R"({"a":[1.5,NaN,NaN,Infinity,-Infinity,0.0],"s":"x\"y","i":-3})");
  const fs::path dir = scratch_dir();
  // lr 1e300 is finite, but is infinite in float32: the step's parameters become inf or nan.
  const Run r = run({"--sizes", "3,4,2", "--batch", "4", "--lr", "1e300", "--dump-tensors", (dir / "t.json").string()});
  CHECK(r.code == 0);
  const std::string text = testing::read_text((dir / "t.json").string());
  CHECK(text.find("null") == std::string::npos);
  CHECK(text.find("Infinity") != std::string::npos);
  CHECK(text.find("\"lr\":1e+300") != std::string::npos);
  // Python reads it; nlohmann reads it once the three tokens are spelled as JSON strings.
  std::string strict = text;
  for (const std::string token : {"-Infinity", "Infinity", "NaN"})
    for (std::size_t at; (at = strict.find(token)) != std::string::npos;)
      strict.replace(at, token.size(), token == "NaN" ? "\"nan\"" : token == "Infinity" ? "\"inf\"" : "\"-inf\"");
  const nlohmann::json parsed = nlohmann::json::parse(strict);
  CHECK(parsed["params_after"].size() == 4);
  CHECK(parsed["loss"].is_number());
  fs::remove_all(dir);
}

TEST_CASE("the temporary files are registered while they exist, for the signal handler") {
  const fs::path dir = scratch_dir();
  {
    AtomicFile a((dir / "a.json").string(), "--json-out");
    const std::string temp = a.temp_path();
    CHECK(temp.rfind((dir / "a.json.tmp.").string(), 0) == 0);
    CHECK(fs::exists(temp));
    const auto registered = registered_temp_files();
    CHECK(std::find(registered.begin(), registered.end(), fs::path(temp).filename()) != registered.end());
    remove_registered_temp_files();  // what SIGTERM does
    CHECK(!fs::exists(temp));
  }
  CHECK(registered_temp_files().empty());
  {
    AtomicFile b((dir / "b.json").string());
    b.commit("{}\n");
    CHECK(registered_temp_files().empty());
  }
  CHECK(testing::read_text((dir / "b.json").string()) == "{}\n");
  CHECK(entries(dir) == 1);
  fs::remove_all(dir);
}

#ifdef STRATA_TRACE_EXE
TEST_CASE("strata-trace > /dev/full exits non-zero with one line on stderr") {
  const fs::path dir = scratch_dir();
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--sizes", "3,2"}, {"--help"}, {"--sizes", "3,2", "--json-out", (dir / "o.json").string()}}) {
    std::vector<std::string> argv{STRATA_TRACE_EXE};
    argv.insert(argv.end(), extra.begin(), extra.end());
    INFO(extra[0]);
    const pid_t pid = testing::spawn_child(argv, "/dev/full", (dir / "err").string());
    REQUIRE(pid > 0);
    const testing::ChildExit e = testing::wait_child(pid);
    CHECK(!e.signaled);
    CHECK(e.code == 2);
    CHECK(testing::read_text((dir / "err").string()) ==
          "strata-trace: error: cannot write standard output: No space left on device\n");
    CHECK(!fs::exists(dir / "o.json"));
  }
  fs::remove_all(dir);
}
#endif

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

}  // namespace test_trace_cli
