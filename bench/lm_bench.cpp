// bench/lm_bench.cpp: the `lm` group of strata-bench. At stories15M dimensions (dim 288, hidden 768,
// 6 layers, 6 heads, vocab 32000, seq 256) with the deterministic weights of tests/lm, written as a
// llama2.c float32 `.bin` to a temporary file that both models map:
//   - decode tokens/s, greedy, 256 positions, measured as run.c measures it (from the second token
//     on), of lm::generate and of the run.c-style baseline, at 1 and 2 threads, rounds alternating;
//     the two must emit the same tokens (else the benchmark fails);
//   - the same for the int8 model (--int8: the float weights quantized at load, groups of 32 here),
//     interleaved with the two: its tokens/s against the float model's (issue 30: at least 1.8x) and
//     the baseline's, and which kernel ran its products (Note [The grouped product's kernel]);
//   - prefill tokens/s of a 64-token prompt: strata's one batched pass against the baseline feeding
//     it a token at a time, as run.c does;
//   - STREAM copy bandwidth at 1 and 2 threads, and weight bytes per token x decode tokens/s as a
//     share of it (the target: at least 0.7);
//   - start-up to the first token (map the file, build the model, one forward, argmax), warm page cache;
//   - the strata-lm executable's peak RSS (wait4's rusage of the child; Note [Peak RSS from a small
//     parent]) against the checkpoint's size + KV cache + 30 MB.
#include "bench/lm_bench.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/lm_baseline.h"
#include "bench/stream_copy.h"
#include "bench/timing.h"
#include <strata/core/parallel.h>
#include "lm/generate.h"
#include "lm/int8_weights.h"
#include "lm/model.h"
#include "lm/sampler.h"
#include "modes/scaled_groups_kernel.h"
#include "tests/lm/synthetic_weights.h"

extern char** environ;

namespace strata::bench {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kSteps = 256;
constexpr int kBos = 1;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// A file in the temporary directory, removed when this goes out of scope.
struct TempFile {
  std::filesystem::path path;
  explicit TempFile(const std::string& name)
      : path(std::filesystem::temp_directory_path() / ("strata-bench-" + std::to_string(::getpid()) + "-" + name)) {}
  ~TempFile() {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
};

// A tokenizer.bin of `vocab` pieces (<unk>, <s>, </s>, the 256 byte pieces, then "t<i>"), enough for
// strata-lm to decode what the random weights emit.
void write_tokenizer(const std::filesystem::path& path, int vocab) {
  std::ofstream f(path, std::ios::binary);
  const std::int32_t max_len = 16;
  f.write(reinterpret_cast<const char*>(&max_len), sizeof max_len);
  for (int i = 0; i < vocab; ++i) {
    char piece[24];
    if (i < 3)
      std::snprintf(piece, sizeof piece, "%s", i == 0 ? "<unk>" : i == 1 ? "<s>" : "</s>");
    else if (i < 259)
      std::snprintf(piece, sizeof piece, "<0x%02X>", i - 3);
    else
      std::snprintf(piece, sizeof piece, "t%d", i);
    const float score = 0;
    const auto len = static_cast<std::int32_t>(std::char_traits<char>::length(piece));
    f.write(reinterpret_cast<const char*>(&score), sizeof score);
    f.write(reinterpret_cast<const char*>(&len), sizeof len);
    f.write(piece, len);
  }
  if (!f) throw std::runtime_error("strata-bench: cannot write " + path.string());
}

struct Greedy {
  std::vector<int> tokens;
  double tokens_per_second = 0;
};

Greedy strata_greedy(lm::Model& model, int steps) {
  lm::SamplerOptions options;
  options.temperature = 0;
  lm::Sampler sampler(options);
  Greedy run;
  const lm::GenerationStats stats = lm::generate(model, sampler, std::span<const int>(&kBos, 1), steps,
                                                 [&](int, int token) { run.tokens.push_back(token); });
  run.tokens_per_second = stats.tokens_per_second;
  return run;
}

void check_same_tokens(const Greedy& strata_run, const BaselineRun& baseline_run) {
  const std::vector<int>& a = strata_run.tokens;
  const std::vector<int>& b = baseline_run.tokens;
  if (a == b) return;
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  throw std::runtime_error("lm: strata-lm and the baseline emit different greedy tokens from token " +
                           std::to_string(i) + " on (" + std::to_string(a.size()) + " and " +
                           std::to_string(b.size()) + " tokens)");
}

// Decode tokens/s at `threads`, rounds alternating between strata's float model, its int8 model
// (--int8: the float weights quantized at load) and the baseline, the two strata models in turns
// first; returns the float model's median. Ratios are taken within a round, then their median.
double decode_benchmark(nlohmann::ordered_json& out, lm::Model& model, lm::Model& int8_model, LmBaseline& baseline,
                        int threads) {
  set_num_threads(threads);
  strata_greedy(model, 16), strata_greedy(int8_model, 16), baseline_greedy(baseline, 16);  // warm up
  std::vector<double> s, q, b, ratio, int8_vs_float, int8_vs_baseline;
  std::size_t tokens = 0;
  for (int round = 0; round < 5; ++round) {
    Greedy sr, qr;
    if (round % 2 == 0) sr = strata_greedy(model, kSteps), qr = strata_greedy(int8_model, kSteps);
    else qr = strata_greedy(int8_model, kSteps), sr = strata_greedy(model, kSteps);
    const BaselineRun br = baseline_greedy(baseline, kSteps);
    check_same_tokens(sr, br);
    tokens = sr.tokens.size();
    s.push_back(sr.tokens_per_second), q.push_back(qr.tokens_per_second), b.push_back(br.tokens_per_second);
    ratio.push_back(sr.tokens_per_second / br.tokens_per_second);
    int8_vs_float.push_back(qr.tokens_per_second / sr.tokens_per_second);
    int8_vs_baseline.push_back(qr.tokens_per_second / br.tokens_per_second);
  }
  const std::string key = "lm_decode_t" + std::to_string(threads);
  out[key + "_tok_s"] = round3(median(s));
  out[key + "_baseline_tok_s"] = round3(median(b));
  out[key + "_vs_baseline"] = round3(median(ratio));
  out[key + "_tokens_match"] = true;
  out[key + "_int8_tok_s"] = round3(median(q));
  out[key + "_int8_vs_float"] = round3(median(int8_vs_float));
  out[key + "_int8_vs_float_min"] = round3(*std::min_element(int8_vs_float.begin(), int8_vs_float.end()));
  out[key + "_int8_vs_baseline"] = round3(median(int8_vs_baseline));
  out["lm_decode_positions"] = tokens + 1;
  return median(s);
}

// The prompt as one batched forward against a token at a time (with each token's logits, as run.c).
void prefill_benchmark(nlohmann::ordered_json& out, lm::Model& model, LmBaseline& baseline, int threads) {
  set_num_threads(threads);
  std::vector<int> prompt(64);
  for (std::size_t i = 0; i < prompt.size(); ++i) prompt[i] = i == 0 ? kBos : static_cast<int>(3 + (i * 7919) % 31000);
  const double n = static_cast<double>(prompt.size());
  std::vector<double> s, b, ratio;
  for (int round = 0; round < 5; ++round) {
    auto t0 = Clock::now();
    keep(model.forward(prompt, 0));
    const double ts = seconds_since(t0);
    t0 = Clock::now();
    for (std::size_t i = 0; i < prompt.size(); ++i) keep(baseline.forward(prompt[i], static_cast<int>(i)));
    const double tb = seconds_since(t0);
    s.push_back(n / ts), b.push_back(n / tb), ratio.push_back(tb / ts);
  }
  const std::string key = "lm_prefill64_t" + std::to_string(threads);
  out[key + "_tok_s"] = round3(median(s));
  out[key + "_baseline_tok_s"] = round3(median(b));
  out[key + "_vs_baseline"] = round3(median(ratio));
}

// Map the file, build the model, one forward of BOS, its argmax: each side's time to its first token.
void startup_benchmark(nlohmann::ordered_json& out, const std::string& path) {
  set_num_threads(1);
  std::vector<double> s, b, ratio;
  for (int round = 0; round < 5; ++round) {
    auto t0 = Clock::now();
    {
      lm::Model model = lm::Model::load(path);
      lm::SamplerOptions options;
      options.temperature = 0;
      lm::Sampler sampler(options);
      keep(sampler.sample(model.forward(std::span<const int>(&kBos, 1), 0)));
    }
    const double ts = seconds_since(t0);
    t0 = Clock::now();
    {
      LmBaseline baseline(path);
      baseline.forward(kBos, 0);
      keep(baseline.argmax());
    }
    const double tb = seconds_since(t0);
    s.push_back(ts), b.push_back(tb), ratio.push_back(ts / tb);
  }
  out["lm_startup_ms"] = round3(median(s) * 1000);
  out["lm_startup_baseline_ms"] = round3(median(b) * 1000);
  out["lm_startup_vs_baseline"] = round3(median(ratio));
}

// Note [Peak RSS from a small parent]
// Linux carries a process's peak RSS across exec, and a child made by fork or vfork starts from its
// parent's memory: strata-lm spawned by strata-bench itself would report strata-bench's hundreds of
// megabytes. So strata-bench re-runs itself as `strata-bench --peak-rss EXE ARGS...` (a fresh process
// of a few megabytes, below strata-lm's own peak), which spawns EXE and prints the ru_maxrss that
// wait4 gives for it, in KiB.

// Spawns argv[0] with stdout to the file `out` (nullptr: /dev/null) and stderr to `err` (nullptr:
// inherited); its exit status and rusage.
int spawn_and_wait(char* const* argv, const char* out, const char* err, rusage& usage) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (err) posix_spawn_file_actions_addopen(&actions, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) throw std::runtime_error(std::string("lm: cannot run ") + argv[0]);
  int status = 0;
  if (::wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status))
    throw std::runtime_error(std::string("lm: ") + argv[0] + " did not exit normally");
  return WEXITSTATUS(status);
}

// Runs the strata-lm executable on the checkpoint (greedy, 256 steps, 1 thread) through the
// --peak-rss helper and returns its peak RSS in bytes; its `achieved tok/s` goes to `cli_tok_s`.
double strata_lm_peak_rss(const std::string& model, const std::string& tokenizer, double& cli_tok_s) {
  const TempFile out("lm-rss.txt"), err("lm-stderr.txt");
  std::vector<std::string> args = {"/proc/self/exe", "--peak-rss", STRATA_LM_EXE, model, "-n", std::to_string(kSteps),
                                   "-t", "0", "-z", tokenizer, "--threads", "1"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  rusage usage{};
  if (spawn_and_wait(argv.data(), out.path.c_str(), err.path.c_str(), usage) != 0)
    throw std::runtime_error("lm: " + std::string(STRATA_LM_EXE) + " " + model + " failed");
  std::ifstream rss_in(out.path), err_in(err.path);
  double kib = 0;
  rss_in >> kib;
  std::string line;
  cli_tok_s = 0;
  while (std::getline(err_in, line))
    if (line.rfind("achieved tok/s: ", 0) == 0) cli_tok_s = std::stod(line.substr(16));
  if (kib <= 0) throw std::runtime_error("lm: no peak RSS from the --peak-rss helper");
  return kib * 1024;
}

}  // namespace

void lm_benchmarks(nlohmann::ordered_json& out) {
  const int threads_before = get_num_threads();
  const lm::Config c = lm_synthetic::stories15m();
  const TempFile bin("stories15M.bin"), tok("tokenizer.bin");
  lm_synthetic::write_llama2c_bin(bin.path.string(), c);
  write_tokenizer(tok.path, static_cast<int>(c.vocab_size));
  lm::Model model = lm::Model::load(bin.path.string());
  lm::Model int8_model = lm::Model::load(bin.path.string(), /*int8=*/true);
  LmBaseline baseline(bin.path.string());
  const double weight_bytes = static_cast<double>(model.weight_bytes_per_token());
  out["lm_weight_mb_per_token"] = round3(weight_bytes / 1e6);
  out["lm_int8_weight_mb_per_token"] = round3(static_cast<double>(int8_model.weight_bytes_per_token()) / 1e6);
  out["lm_int8_kernel"] = tracer::scaled_groups::product_kernel_name(lm::int8_group_size(c, bin.path.string()));
  for (const int threads : {1, 2}) {
    const double tok_s = decode_benchmark(out, model, int8_model, baseline, threads);
    const double bandwidth = stream_copy_bytes_per_second(threads);
    const std::string key = "lm_decode_t" + std::to_string(threads);
    out["stream_copy_t" + std::to_string(threads) + "_gb_s"] = round3(bandwidth / 1e9);
    out[key + "_bandwidth_share"] = round3(weight_bytes * tok_s / bandwidth);
    prefill_benchmark(out, model, baseline, threads);
  }
  startup_benchmark(out, bin.path.string());
  double cli_tok_s = 0;
  const double rss = strata_lm_peak_rss(bin.path.string(), tok.path.string(), cli_tok_s);
  const double kv_cache = 2.0 * static_cast<double>(c.n_layers * c.seq_len * c.kv_dim()) * sizeof(float);
  const double budget = static_cast<double>(std::filesystem::file_size(bin.path)) + kv_cache + 30e6;
  out["lm_cli_t1_tok_s"] = round3(cli_tok_s);
  out["lm_peak_rss_mb"] = round3(rss / 1e6);
  out["lm_rss_budget_mb"] = round3(budget / 1e6);
  out["lm_rss_vs_budget"] = round3(rss / budget);
  set_num_threads(threads_before);
}

int peak_rss_main(int argc, char** argv) {
  if (argc < 3) return 2;
  rusage usage{};
  const int status = spawn_and_wait(argv + 2, nullptr, nullptr, usage);
  std::printf("%ld\n", usage.ru_maxrss);
  return status;
}

}  // namespace strata::bench
