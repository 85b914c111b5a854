// tests/lm/test_lm_inside.cpp: seeing inside strata-lm (issue 30): the first decode step's DebugMode
// log against the structure the model's code implies (its module scopes in order, the same ops in the
// same order in every layer, the products' shapes), FLOPs per module against the analytic count,
// the profile's Chrome trace, the fake Llama-2-7B's numbers, and the flags' one-line errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../../lm/cli.h"
#include "../../lm/fake_model.h"
#include "../../lm/hf_checkpoint.h"
#include "../../lm/inspect.h"
#include "../../lm/model.h"
#include "../../lm/profile_output.h"
#include "../../lm/sampler.h"
#include "../../lm/tokenizer.h"
#include "cli_run.h"
#include "lm_test_files.h"
#include "test_vocabulary.h"

namespace test_lm_inside {

using strata::tracer::DebugCall;

using lm_cli_run::Run;
using lm_cli_run::run;

const std::string& tokenizer_path() {
  static const std::string path = lm_test_files::write_bytes(
      "tok512_inside.bin", lm_test_vocabulary::tokenizer_bytes(lm_test_vocabulary::vocabulary(512)));
  return path;
}

std::string data_file(const std::string& name) { return std::string(STRATA_LM_DATA_DIR) + "/" + name; }

// An error run: exit 2 and one line on stderr, which holds `part`.
void check_error(const std::vector<std::string>& args, const std::string& part) {
  const Run r = run(args);
  CAPTURE(r.err);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.rfind("strata-lm: ", 0) == 0);
  CHECK(r.err.find(part) != std::string::npos);
}

// The analytic FLOPs of the model's products (2*m*k*n each): per token, every weight matrix of the
// layers once; the attention's two bmms over `seen` cached positions (each 2 * dim * seen per query
// token: n_heads * head_size = dim); the head once per forward (Logits::Last).
std::int64_t projections(const lm::Config& c) { return 2 * (2 * c.dim * c.dim + 2 * c.dim * c.kv_dim()); }
std::int64_t feed_forward(const lm::Config& c) { return 2 * 3 * c.dim * c.hidden_dim; }
std::int64_t scores_and_mix(const lm::Config& c, std::int64_t tokens, std::int64_t seen) { return 2 * 2 * c.dim * tokens * seen; }
std::int64_t head(const lm::Config& c) { return 2 * c.dim * c.vocab_size; }
// A forward of `tokens` tokens at positions pos .. pos + tokens - 1: a batched call's bmms score each
// token against all pos + tokens positions (the mask hides the later ones after the product).
std::int64_t analytic_total(const lm::Config& c, std::int64_t tokens, std::int64_t pos) {
  return c.n_layers * (tokens * (projections(c) + feed_forward(c)) + scores_and_mix(c, tokens, pos + tokens)) + head(c);
}

std::map<std::string, std::int64_t> by_module(const lm::ForwardFlops& f) {
  std::map<std::string, std::int64_t> m;
  for (const lm::ModuleFlops& x : f.modules) m[x.module] = x.flops;
  return m;
}

// The modules a forward enters, in order, as the model's code opens them.
std::vector<std::string> expected_modules(const lm::Config& c) {
  std::vector<std::string> m{"Transformer", "Transformer.tok_embeddings"};
  for (std::int64_t l = 0; l < c.n_layers; ++l) {
    const std::string layer = "Transformer.layers." + std::to_string(l);
    m.push_back(layer);
    for (const char* part : {"attention_norm", "attention", "ffn_norm", "feed_forward"}) m.push_back(layer + "." + part);
  }
  m.push_back("Transformer.norm");
  m.push_back("Transformer.output");
  return m;
}

lm::StepInspection inspect(const std::string& config, const std::vector<int>& prompt, bool debug, bool flops) {
  lm::Model model = lm::Model::load(lm_test_files::checkpoint(config));
  lm::Sampler greedy(lm::SamplerOptions{0.0, 0.9, 1});
  return lm::inspect_first_decode_step(model, greedy, prompt, {debug, flops});
}

// The module a call runs in: its nearest Module ancestor ("" for none).
std::string module_of(const std::vector<DebugCall>& calls, std::size_t i) {
  for (std::optional<std::size_t> p = calls[i].parent; p; p = calls[*p].parent)
    if (calls[*p].kind == DebugCall::Kind::Module) return calls[*p].name;
  return "";
}

// The ops of the log by the module they run in (not its submodules'), in order.
std::map<std::string, std::vector<std::string>> ops_by_module(const std::vector<DebugCall>& calls) {
  std::map<std::string, std::vector<std::string>> m;
  for (std::size_t i = 0; i < calls.size(); ++i)
    if (calls[i].kind == DebugCall::Kind::Op) m[module_of(calls, i)].push_back(calls[i].name);
  return m;
}

std::vector<std::string> only(const std::vector<std::string>& ops, const std::vector<std::string>& keep) {
  std::vector<std::string> out;
  for (const std::string& op : ops)
    if (std::find(keep.begin(), keep.end(), op) != keep.end()) out.push_back(op);
  return out;
}

// The first op named `name` in `module`, rendered.
std::string first_op(const std::vector<DebugCall>& calls, const std::string& module, const std::string& name) {
  for (std::size_t i = 0; i < calls.size(); ++i)
    if (calls[i].kind == DebugCall::Kind::Op && calls[i].name == name && module_of(calls, i) == module) return calls[i].render();
  return "";
}

std::string shape(std::initializer_list<std::int64_t> sizes) {
  std::string out = "t: f32[";
  for (auto it = sizes.begin(); it != sizes.end(); ++it) out += (it == sizes.begin() ? "" : ", ") + std::to_string(*it);
  return out + "]";
}

TEST_CASE("--debug-step: the decode step's log follows the model's structure") {
  for (const char* name : {"tiny", "tiny_gqa"}) {
    CAPTURE(name);
    const lm::Config c = lm_synthetic::config_named(name);
    const std::vector<int> prompt{1, 7, 42, 300, 5};
    const auto n = static_cast<std::int64_t>(prompt.size());
    const lm::StepInspection s = inspect(name, prompt, true, false);
    const std::vector<DebugCall>& calls = s.debug_calls;
    REQUIRE(!calls.empty());

    // The module scopes, in the order the forward opens them, each below its parent.
    std::vector<std::string> modules;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      if (calls[i].kind != DebugCall::Kind::Module) continue;
      modules.push_back(calls[i].name);
      const std::string parent = module_of(calls, i);
      CHECK(calls[i].name.rfind(parent.empty() ? "Transformer" : parent + ".", 0) == 0);
    }
    CHECK(modules == expected_modules(c));
    CHECK(calls.front().kind == DebugCall::Kind::Module);  // nothing runs before the forward's scope

    const auto ops = ops_by_module(calls);
    CHECK(ops.count("") == 0);  // every op runs inside the model
    // RMSNorm, as lm::Model::rms_norm writes it: x * rsqrt(mean(x^2) + eps), then *= weight.
    const std::vector<std::string> rms_norm{"aten::pow.Tensor_Scalar", "aten::mean.dim", "aten::add.Scalar",
                                            "aten::rsqrt", "aten::mul.Tensor", "aten::mul_.Tensor"};
    CHECK(ops.at("Transformer.norm") == rms_norm);
    CHECK(ops.at("Transformer.tok_embeddings") == std::vector<std::string>{"aten::embedding"});
    CHECK(only(ops.at("Transformer.output"), {"aten::mm"}).size() == 1);
    const std::string layer0 = "Transformer.layers.0";
    for (std::int64_t l = 0; l < c.n_layers; ++l) {
      const std::string layer = "Transformer.layers." + std::to_string(l);
      CAPTURE(layer);
      CHECK(ops.at(layer + ".attention_norm") == rms_norm);
      CHECK(ops.at(layer + ".ffn_norm") == rms_norm);
      // The residual adds belong to the block, after each part.
      CHECK(ops.at(layer) == std::vector<std::string>{"aten::add_.Tensor", "aten::add_.Tensor"});
      // q, k and v's products, the cache writes, scores, softmax, the weighted sum, the output product.
      CHECK(only(ops.at(layer + ".attention"), {"aten::mm", "aten::bmm", "aten::copy_", "aten::_softmax"}) ==
            std::vector<std::string>{"aten::mm", "aten::mm", "aten::mm", "aten::copy_", "aten::copy_", "aten::bmm",
                                     "aten::_softmax", "aten::bmm", "aten::mm"});
      CHECK(ops.at(layer + ".feed_forward") ==
            std::vector<std::string>{"aten::mm", "aten::silu", "aten::mm", "aten::mul_.Tensor", "aten::mm"});
      // Every layer runs the same ops in the same order.
      CHECK(ops.at(layer + ".attention") == ops.at(layer0 + ".attention"));
    }
    // The shapes of one token's step at position n: h [1, dim] @ wq^T [dim, dim]; the grouped queries
    // [kv, group, hs] against the n + 1 cached keys [kv, hs, n + 1].
    const std::int64_t hs = c.head_size(), kv = c.n_kv_heads, group = c.n_heads / c.n_kv_heads;
    CHECK(first_op(calls, layer0 + ".attention", "aten::mm") ==
          "aten::mm(" + shape({1, c.dim}) + ", " + shape({c.dim, c.dim}) + ")  ->  " + shape({1, c.dim}));
    CHECK(first_op(calls, layer0 + ".attention", "aten::bmm") == "aten::bmm(" + shape({kv, group, hs}) + ", " +
                                                                     shape({kv, hs, n + 1}) + ")  ->  " +
                                                                     shape({kv, group, n + 1}));
    CHECK(first_op(calls, "Transformer.output", "aten::mm") ==
          "aten::mm(" + shape({1, c.dim}) + ", " + shape({c.dim, c.vocab_size}) + ")  ->  " + shape({1, c.vocab_size}));
    // The functions the model calls are in the log, each above its ops.
    std::size_t mm_functions = 0;
    for (std::size_t i = 0; i < calls.size(); ++i)
      if (calls[i].kind == DebugCall::Kind::Function && calls[i].name == "torch.mm" && module_of(calls, i) == layer0 + ".attention")
        ++mm_functions;
    CHECK(mm_functions == 4);
  }
}

TEST_CASE("--debug-step prints the log of the first decode step after the prompt") {
  const lm::Config c = lm_synthetic::tiny();
  const std::string model_path = lm_test_files::checkpoint("tiny");
  const Run r = run({model_path, "-z", tokenizer_path(), "-i", "abc", "-t", "0", "--debug-step"});
  CAPTURE(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  // The token is the greedy one after the prompt's tokens.
  lm::Model model = lm::Model::load(model_path);
  const std::vector<int> prompt = lm::Tokenizer::load(tokenizer_path(), c.vocab_size).encode("abc", true, false);
  const std::vector<float> logits = model.forward(prompt, 0).to_vector<float>();
  const auto token = std::max_element(logits.begin(), logits.end()) - logits.begin();
  const std::string header = "# DebugMode log of the first decode step: token " + std::to_string(token) + " at position " +
                             std::to_string(prompt.size()) + ", after the prompt's " + std::to_string(prompt.size()) + " tokens\n";
  CHECK(r.out.rfind(header, 0) == 0);
  std::size_t module_lines = 0, pos = 0;
  while ((pos = r.out.find("[nn.Mod] Transformer", pos)) != std::string::npos) ++module_lines, ++pos;
  CHECK(module_lines == expected_modules(c).size());
  CHECK(r.out.find("  [nn.Mod] Transformer\n") != std::string::npos);
  CHECK(r.out.find("[nn.Mod] Transformer.layers.1.feed_forward\n") != std::string::npos);
  CHECK(r.out.find("torch.mm(t: f32[1, 64], t: f32[64, 192])") != std::string::npos);  // w1's product
  CHECK(r.out.find("aten::_softmax(") != std::string::npos);
}

TEST_CASE("--flops: FLOPs per module equal the analytic count, decode and prefill") {
  for (const char* name : {"tiny", "tiny_gqa"}) {
    CAPTURE(name);
    const lm::Config c = lm_synthetic::config_named(name);
    const std::vector<int> prompt{1, 7, 42, 300, 5};
    const auto n = static_cast<std::int64_t>(prompt.size());
    const lm::StepInspection s = inspect(name, prompt, false, true);
    CHECK(s.prompt_tokens == n);
    CHECK(s.decode.tokens == 1);
    CHECK(s.decode.position == n);
    CHECK(s.decode.total == analytic_total(c, 1, n));
    CHECK(s.prefill.total == analytic_total(c, n, 0));
    // 2 x (the layers' matrices + the head) plus attention: "2 x parameters, roughly".
    CHECK(s.decode.total == 2 * (c.n_layers * (2 * c.dim * c.dim + 2 * c.dim * c.kv_dim() + 3 * c.dim * c.hidden_dim) +
                                 c.dim * c.vocab_size) + c.n_layers * 4 * c.dim * (n + 1));

    std::vector<std::string> modules;
    for (const lm::ModuleFlops& m : s.decode.modules) modules.push_back(m.module);
    CHECK(modules == expected_modules(c));
    const auto decode = by_module(s.decode), prefill = by_module(s.prefill);
    CHECK(decode.at("Transformer") == s.decode.total);
    CHECK(prefill.at("Transformer") == s.prefill.total);
    CHECK(decode.at("Transformer.tok_embeddings") == 0);
    CHECK(decode.at("Transformer.norm") == 0);
    CHECK(decode.at("Transformer.output") == head(c));
    CHECK(prefill.at("Transformer.output") == head(c));
    for (std::int64_t l = 0; l < c.n_layers; ++l) {
      const std::string layer = "Transformer.layers." + std::to_string(l);
      CHECK(decode.at(layer + ".attention_norm") == 0);
      CHECK(decode.at(layer + ".ffn_norm") == 0);
      CHECK(decode.at(layer + ".attention") == projections(c) + scores_and_mix(c, 1, n + 1));
      CHECK(decode.at(layer + ".feed_forward") == feed_forward(c));
      CHECK(decode.at(layer) == decode.at(layer + ".attention") + decode.at(layer + ".feed_forward"));
      CHECK(prefill.at(layer + ".attention") == n * projections(c) + scores_and_mix(c, n, n));
      CHECK(prefill.at(layer + ".feed_forward") == n * feed_forward(c));
    }
  }
}

TEST_CASE("--flops prints the table: every module, the decode and prefill columns") {
  const lm::Config c = lm_synthetic::tiny();
  const Run r = run({lm_test_files::checkpoint("tiny"), "-z", tokenizer_path(), "-i", "abc", "-t", "0", "--flops"});
  CAPTURE(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());  // no generation: no tok/s line
  CHECK(r.out.find("decode FLOPs/token") != std::string::npos);
  CHECK(r.out.find("prefill FLOPs/token") != std::string::npos);
  // One row per module; the first is the whole model.
  std::istringstream lines(r.out);
  std::string line;
  std::vector<std::string> rows;
  bool in_table = false;
  while (std::getline(lines, line)) {
    if (in_table) rows.push_back(line);
    if (line.rfind("-----", 0) == 0) in_table = true;
  }
  REQUIRE(rows.size() == expected_modules(c).size());
  CHECK(rows[0].rfind("Transformer ", 0) == 0);
  CHECK(rows[2].rfind(" layers.0 ", 0) == 0);
  CHECK(rows[3].rfind("  attention_norm ", 0) == 0);
  CHECK(rows.back().rfind(" output ", 0) == 0);
}

// The names of the files in `folder`.
std::vector<std::string> files_in(const std::filesystem::path& folder) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST_CASE("--profile writes the generation's Chrome trace, and its text is the unprofiled run's") {
  const std::filesystem::path folder = lm_test_files::temp_dir() / "profile";
  std::filesystem::create_directories(folder);
  const std::string trace = (folder / "trace.json").string();
  const std::vector<std::string> args{lm_test_files::checkpoint("tiny"), "-z", tokenizer_path(), "-i", "abc", "-n", "9", "-t", "0"};
  const Run plain = run(args);
  std::vector<std::string> profiled_args = args;
  profiled_args.insert(profiled_args.end(), {"--profile", trace});
  const Run profiled = run(profiled_args);
  CAPTURE(profiled.err);
  REQUIRE(profiled.code == 0);
  CHECK(profiled.out == plain.out);
  CHECK(files_in(folder) == std::vector<std::string>{"trace.json"});  // no temporary file left

  std::ifstream in(trace);
  const nlohmann::json doc = nlohmann::json::parse(in);  // throws if it is not whole JSON
  REQUIRE(doc.contains("traceEvents"));
  std::map<std::string, int> count;
  std::map<std::string, std::string> category;
  for (const nlohmann::json& e : doc.at("traceEvents")) {
    CHECK(e.at("ph") == "X");
    CHECK(e.at("dur").get<double>() >= 0);
    count[e.at("name").get<std::string>()]++;
    category[e.at("name").get<std::string>()] = e.at("cat").get<std::string>();
  }
  // One Transformer scope per forward: the prefill, then one per sampled token but the last.
  const int forwards = count["Transformer"];
  CHECK(forwards >= 2);
  CHECK(forwards <= 9);
  for (const std::string& module : expected_modules(lm_synthetic::tiny())) {
    CAPTURE(module);
    CHECK(count[module] == forwards);
    CHECK(category[module] == "user_annotation");
  }
  // Per forward: 4 + 3 products per layer and the head's.
  CHECK(count["aten::mm"] == forwards * (2 * 7 + 1));
  CHECK(count["aten::bmm"] == forwards * 2 * 2);
  CHECK(category["aten::mm"] == "cpu_op");
}

TEST_CASE("--profile: a bad path fails before the generation; a failed run leaves the file as it was") {
  const std::filesystem::path folder = lm_test_files::temp_dir() / "profile_errors";
  std::filesystem::create_directories(folder);
  const std::vector<std::string> args{lm_test_files::checkpoint("tiny"), "-z", tokenizer_path(), "-n", "4", "-t", "0"};
  const auto with_profile = [&](const std::string& path) {
    std::vector<std::string> a = args;
    a.insert(a.end(), {"--profile", path});
    return a;
  };
  check_error(with_profile((folder / "missing" / "trace.json").string()), "--profile: cannot write");
  check_error(with_profile(folder.string()), "is a directory");
  check_error(with_profile(""), "--profile needs a file name");
  check_error({lm_test_files::checkpoint("tiny"), "--profile"}, "--profile needs a value");
  check_error(with_profile("/dev/null"), "is not a regular file");
  // The trace file exists; the run fails after the file was opened (no such tokenizer).
  const std::string trace = (folder / "old.json").string();
  std::ofstream(trace) << "old";
  check_error({lm_test_files::checkpoint("tiny"), "-z", (folder / "no_tokenizer.bin").string(), "--profile", trace},
              "no_tokenizer.bin");
  CHECK(lm_test_files::read_bytes(trace) == std::vector<char>{'o', 'l', 'd'});
  CHECK(files_in(folder) == std::vector<std::string>{"old.json"});
}

TEST_CASE("AtomicOutputFile replaces the file only when committed") {
  const std::string path = lm_test_files::temp_path("atomic.txt");
  std::ofstream(path) << "before";
  {
    lm::AtomicOutputFile file(path, "test");
    CHECK(std::filesystem::exists(file.temp_path()));
    CHECK(lm_test_files::read_bytes(path) == std::vector<char>{'b', 'e', 'f', 'o', 'r', 'e'});
  }  // dropped: the temporary file goes, the old file stays
  CHECK(lm_test_files::read_bytes(path).size() == 6);
  lm::AtomicOutputFile file(path, "test");
  const std::string temp = file.temp_path();
  file.commit("after!!");
  CHECK(!std::filesystem::exists(temp));
  CHECK(lm_test_files::read_bytes(path).size() == 7);
}

TEST_CASE("--fake --config: Llama-2-7B's parameters, KV cache and FLOPs without its weights") {
  const std::string config_path = data_file("llama2_7b_config.json");
  const lm::Config c = lm::read_hf_config(config_path);
  const lm::FakeModelReport r = lm::inspect_fake_model(c, 256);
  CHECK(r.parameters == 6738415616);  // Meta's published count for Llama-2-7B
  CHECK(r.kv_bytes_per_token == 2 * 32 * 4096 * 4);  // a float32 key and value per layer: 1 MiB
  CHECK(r.decode.position == 255);
  CHECK(r.decode.total == analytic_total(c, 1, 255));
  CHECK(r.decode.total == 2 * (6738415616 - 2 * 32000 * 4096 - 65 * 4096) + 2 * 32000 * 4096 + 32 * 4 * 4096 * 256);
  const auto modules = by_module(r.decode);
  CHECK(modules.size() == expected_modules(c).size());
  CHECK(modules.at("Transformer.layers.31.feed_forward") == 6LL * 4096 * 11008);

  const Run cli = run({"--fake", "--config", config_path});
  CAPTURE(cli.err);
  REQUIRE(cli.code == 0);
  CHECK(cli.out.find("parameters: 6738415616 ") != std::string::npos);
  CHECK(cli.out.find("KV cache: 1048576 bytes per token") != std::string::npos);
  CHECK(cli.out.find("attending to 256 positions") != std::string::npos);  // -n's default
  const Run longest = run({"--fake", "--config", config_path, "-n", "0"});
  CHECK(longest.out.find("attending to 4096 positions") != std::string::npos);
}

TEST_CASE("--help names the seeing-inside flags and which step --debug-step logs") {
  const Run r = run({"--help"});
  CHECK(r.code == 0);
  for (const char* flag : {"--debug-step", "--flops", "--profile <file>", "--fake --config <config.json>"}) {
    CAPTURE(flag);
    CHECK(r.out.find(flag) != std::string::npos);
  }
  CHECK(r.out.find("the first decode step") != std::string::npos);
}

TEST_CASE("the fake model's numbers are the real model's") {
  for (const char* name : {"tiny", "tiny_gqa"}) {  // a tied head, then an untied one
    CAPTURE(name);
    const lm::Config c = lm_synthetic::config_named(name);
    const std::vector<int> prompt{1, 7, 42};
    const lm::Model real = lm::Model::load(lm_test_files::checkpoint(name));
    const lm::FakeModelReport fake = lm::inspect_fake_model(c, static_cast<std::int64_t>(prompt.size()) + 1);
    CHECK(fake.parameters == lm::parameter_count(real.weights()));
    CHECK(fake.parameters == c.vocab_size * c.dim * (c.tied_output ? 1 : 2) + c.dim +
                                 c.n_layers * (2 * c.dim + 2 * c.dim * c.dim + 2 * c.dim * c.kv_dim() + 3 * c.dim * c.hidden_dim));
    CHECK(fake.kv_bytes_per_token == real.kv_cache_bytes_per_token());
    CHECK(fake.weight_bytes_per_token == real.weight_bytes_per_token());
    const lm::StepInspection step = inspect(name, prompt, false, true);
    CHECK(fake.decode.position == step.decode.position);
    CHECK(by_module(fake.decode) == by_module(step.decode));
    CHECK(fake.decode.total == step.decode.total);
  }
}

TEST_CASE("--fake, --config and the inspection flags: one-line errors, exit 2") {
  const std::string model = lm_test_files::checkpoint("tiny");
  const std::string config = data_file("llama2_7b_config.json");
  check_error({"--fake"}, "--fake needs --config");
  check_error({model, "--config", config}, "--config is read only with --fake");
  check_error({model, "--fake", "--config", config}, "give no MODEL");
  check_error({"--fake", "--config", config, "--flops"}, "does not combine");
  check_error({model, "--flops", "--profile", lm_test_files::temp_path("x.json")}, "choose one");
  check_error({"--fake", "--config", lm_test_files::temp_path("no_such_config.json")}, "cannot read");
  check_error({"--fake", "--config", lm_test_files::temp_dir().string()}, "is a folder");
  const auto bad = [](const std::string& name, const std::string& text) {
    const std::string path = lm_test_files::temp_path(name);
    std::ofstream(path) << text;
    return path;
  };
  check_error({"--fake", "--config", bad("not_json.json", "{\"hidden_size\": 4096,")}, "not_json.json");
  check_error({"--fake", "--config", bad("no_layers.json", R"({"hidden_size": 64, "intermediate_size": 128,
      "num_attention_heads": 4, "vocab_size": 100, "max_position_embeddings": 32})")},
              "no \"num_hidden_layers\"");
  check_error({"--fake", "--config", bad("mistral.json", R"({"model_type": "mistral"})")}, "\"model_type\"");
  // A prompt that leaves no position for a decode step.
  std::string long_prompt;
  for (int i = 0; i < 100; ++i) long_prompt += std::to_string(i) + " ";  // digits are split: > 64 tokens
  check_error({model, "-z", tokenizer_path(), "-i", long_prompt, "--debug-step"}, "no position for a decode step");
}

}  // namespace test_lm_inside
