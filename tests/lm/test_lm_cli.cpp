// tests/lm/test_lm_cli.cpp: strata-lm's command line: run.c's loop and output on the tiny model (the
// greedy tokens of the plain-loop reference, decoded and printed as run.c prints them), one-line
// errors with exit code 2, and the built executable's streams and exit codes.
#include <doctest/doctest.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "../../lm/cli.h"
#include "../../lm/tokenizer.h"
#include "cli_run.h"
#include "lm_test_files.h"
#include "reference_forward.h"
#include "test_vocabulary.h"

namespace test_lm_cli {

using lm_cli_run::Run;
using lm_cli_run::run;

// The 512-piece vocabulary of tests/lm/test_vocabulary.h, for the tiny model.
const std::string& tokenizer_path() {
  static const std::string path =
      lm_test_files::write_bytes("tok512_test.bin", lm_test_vocabulary::tokenizer_bytes(lm_test_vocabulary::vocabulary(512)));
  return path;
}

// What run.c prints for `prompt` at temperature 0 with `steps`, from the reference's logits: the
// prompt's tokens forced, then argmax tokens, each decoded after its predecessor, until steps or BOS.
std::string expected_greedy_output(const std::string& prompt, int steps) {
  const lm::Config c = lm_synthetic::tiny();
  const lm::Tokenizer t = lm::Tokenizer::load(tokenizer_path(), c.vocab_size);
  std::vector<int> tokens = t.encode(prompt, true, false);
  const std::size_t n = tokens.size();
  std::string out;
  for (int pos = 0; pos < steps; ++pos) {
    int next;
    if (static_cast<std::size_t>(pos) + 1 < n) {
      next = tokens[static_cast<std::size_t>(pos) + 1];
    } else {
      const std::vector<double> logits = lm_reference::forward(c, tokens).back();
      next = static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
      tokens.push_back(next);
    }
    if (next == 1) break;
    const std::string_view piece = t.decode(tokens[static_cast<std::size_t>(pos)], next);
    if (lm::is_printable_piece(piece)) out += piece;
  }
  return out + "\n";
}

TEST_CASE("greedy generation prints run.c's text and one tok/s line") {
  const std::string model = lm_test_files::checkpoint("tiny");
  for (const auto& run_case : std::vector<std::pair<std::string, int>>{{"abc", 12}, {"", 6}, {"ab \xC3\xBC c", 9}, {"abc", 3}}) {
    const std::string& prompt = run_case.first;  // not a structured binding: CAPTURE captures it (clang 14)
    const int steps = run_case.second;
    CAPTURE(prompt);
    const Run r = run({model, "-z", tokenizer_path(), "-i", prompt, "-n", std::to_string(steps), "-t", "0"});
    CHECK(r.code == 0);
    CHECK(r.out == expected_greedy_output(prompt, steps));
    CHECK(r.err.rfind("achieved tok/s: ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("-n 0 and -n past seq_len run the model's seq_len positions") {
  const std::string model = lm_test_files::checkpoint("tiny");
  const Run zero = run({model, "-z", tokenizer_path(), "-n", "0", "-t", "0"});
  const Run past = run({model, "-z", tokenizer_path(), "-n", "1000", "-t", "0"});
  CHECK(zero.code == 0);
  CHECK(zero.out == past.out);
  CHECK(zero.out == expected_greedy_output("", 64));
}

TEST_CASE("bad arguments and files: one line on stderr, exit code 2") {
  const std::string model = lm_test_files::checkpoint("tiny");
  const std::string missing = lm_test_files::temp_path("missing.bin");
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const std::vector<Case> cases = {
      {{}, "strata-lm: no MODEL given (usage: strata-lm MODEL [-i PROMPT] [-n STEPS] [-t TEMPERATURE] [-p TOP_P] [-s SEED] "
           "[-z TOKENIZER] [--threads N] [--int8])"},
      {{model, "-x", "1"}, "strata-lm: unknown option -x (see --help)"},
      {{model, "-n"}, "strata-lm: -n needs a value"},
      {{model, "-n", "12abc"}, "strata-lm: -n expects an integer, got \"12abc\""},
      {{model, "-n", "-1"}, "strata-lm: -n expects a number of steps >= 0 (0: the model's seq_len), got -1"},
      {{model, "-t", "-0.5"}, "strata-lm: -t expects a temperature >= 0, got -0.5"},
      {{model, "-t", "hot"}, "strata-lm: -t expects a number, got \"hot\""},
      {{model, "-p", "1.5"}, "strata-lm: -p expects a top-p in [0, 1], got 1.5"},
      {{model, "-s", "-3"}, "strata-lm: -s expects a seed >= 0 (0: time(NULL)), got -3"},
      {{model, "--threads", "0"}, "strata-lm: --threads expects 1 to 1024, got 0"},
      {{model, model}, "strata-lm: unexpected argument \"" + model + "\" (one MODEL, then options; see --help)"},
      {{missing, "-z", tokenizer_path()}, "strata-lm: " + missing + ": cannot open: No such file or directory"},
      {{model, "-z", missing}, "strata-lm: " + missing + ": cannot open: No such file or directory"},
  };
  for (const Case& k : cases) {
    CAPTURE(k.err);
    const Run r = run(k.args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err == k.err + "\n");
  }
  const Run help = run({"--help"});
  CHECK(help.code == 0);
  CHECK(help.out.rfind("Usage:   strata-lm MODEL [options]\n", 0) == 0);
}

#ifdef STRATA_LM_EXE
// Runs the built executable with `args` (already quoted for sh), its streams into files.
Run run_executable(const std::string& args) {
  const std::string out = lm_test_files::temp_path("exe.out"), err = lm_test_files::temp_path("exe.err");
  const int status = std::system((std::string(STRATA_LM_EXE) + " " + args + " >" + out + " 2>" + err).c_str());
  const auto text = [](const std::string& path) {
    const std::vector<char> bytes = lm_test_files::read_bytes(path);
    return std::string(bytes.begin(), bytes.end());
  };
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text(out), text(err)};
}

TEST_CASE("the strata-lm executable: streams, exit codes") {
  const Run ok = run_executable(lm_test_files::checkpoint("tiny") + " -z " + tokenizer_path() + " -i abc -n 12 -t 0");
  CHECK(ok.code == 0);
  CHECK(ok.out == expected_greedy_output("abc", 12));
  CHECK(ok.err.rfind("achieved tok/s: ", 0) == 0);
  const Run bad = run_executable(lm_test_files::checkpoint("tiny") + " -n many");
  CHECK(bad.code == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err == "strata-lm: -n expects an integer, got \"many\"\n");
}
#endif

}  // namespace test_lm_cli
