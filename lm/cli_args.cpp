// lm/cli_args.cpp: parse_cli_args. Numbers are parsed whole (run.c's atoi and atof take "12abc" as
// 12; here it is an error), and out-of-range values are refused rather than silently replaced.
#include "cli_args.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include <strata/core/util/error.h>

#include "cli_inside_args.h"

namespace lm {

namespace {

std::int64_t parse_integer(const std::string& flag, const std::string& text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  STRATA_CHECK(error == std::errc() && end == text.data() + text.size() && !text.empty(), "strata-lm: ", flag,
               " expects an integer, got \"", text, "\"");
  return value;
}

double parse_number(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  STRATA_CHECK(!text.empty() && end == text.c_str() + text.size() && std::isfinite(value), "strata-lm: ", flag,
               " expects a number, got \"", text, "\"");
  return value;
}

}  // namespace

const char* cli_usage() {
  return "Usage:   strata-lm MODEL [options]\n"
         "         strata-lm --fake --config <config.json> [-n <int>]\n"
         "Example: strata-lm stories15M.bin -n 256 -i \"Once upon a time\"\n"
         "MODEL is llama2.c's checkpoint (.bin: float32, or int8 version 2 as runq.c reads) or a Hugging\n"
         "Face folder (config.json, model.safetensors, tokenizer.model).\n"
         "Options:\n"
         "  -t <float>    temperature in [0, inf), default 1.0 (0: greedy)\n"
         "  -p <float>    p in top-p (nucleus) sampling, in [0, 1], default 0.9\n"
         "  -s <int>      random seed, default time(NULL)\n"
         "  -n <int>      number of steps (positions, the prompt's included), default 256; 0 = the model's seq_len\n"
         "  -i <string>   input prompt\n"
         "  -z <string>   tokenizer: a tokenizer.bin or a SentencePiece .model; default the folder's\n"
         "                tokenizer.model, else tokenizer.bin\n"
         "  --threads <n> threads for strata's kernels\n"
         "  --int8        quantize float weights to int8 at load (groups of 64, as runq.c)\n"
         "Seeing inside:\n"
         "  --debug-step  print the DebugMode log (modules, functions and ops) of the first decode step:\n"
         "                the forward of the first token sampled after the prompt (the prompt's prefill runs\n"
         "                first, unlogged); nothing is generated\n"
         "  --flops       print the FLOPs per token per module (FlopCounterMode) of that decode step and of\n"
         "                the prompt's prefill; nothing is generated (with --debug-step: after the log)\n"
         "  --profile <file>  write a Chrome trace of the generation (strata's profiler) to <file>,\n"
         "                replaced only once complete\n"
         "  --fake --config <config.json>  no MODEL: build the model of a Hugging Face config.json under\n"
         "                FakeTensorMode (no weights, no data) and print its parameters, KV-cache bytes per\n"
         "                token and the FLOPs per module of a decode step attending to -n positions\n";
}

CliOptions parse_cli_args(std::span<const std::string> args) {
  CliOptions o;
  bool have_model = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      o.help = true;
      continue;
    }
    if (a == "--int8") {
      o.int8 = true;
      continue;
    }
    if (parse_inside_flag(args, i, o)) continue;
    if (a.empty() || a[0] != '-') {
      STRATA_CHECK(!have_model, "strata-lm: unexpected argument \"", a, "\" (one MODEL, then options; see --help)");
      o.model = a;
      have_model = true;
      continue;
    }
    const bool known = a == "-i" || a == "-n" || a == "-t" || a == "-p" || a == "-s" || a == "-z" || a == "--threads";
    STRATA_CHECK(known, "strata-lm: unknown option ", a, " (see --help)");
    STRATA_CHECK(i + 1 < args.size(), "strata-lm: ", a, " needs a value");
    const std::string& v = args[++i];
    if (a == "-i") {
      o.prompt = v;
    } else if (a == "-z") {
      o.tokenizer = v;
    } else if (a == "-n") {
      o.steps = parse_integer(a, v);
      STRATA_CHECK(o.steps >= 0, "strata-lm: -n expects a number of steps >= 0 (0: the model's seq_len), got ", o.steps);
    } else if (a == "-s") {
      const std::int64_t seed = parse_integer(a, v);
      STRATA_CHECK(seed >= 0, "strata-lm: -s expects a seed >= 0 (0: time(NULL)), got ", seed);
      o.seed = static_cast<std::uint64_t>(seed);
    } else if (a == "-t") {
      o.temperature = parse_number(a, v);
      STRATA_CHECK(o.temperature >= 0, "strata-lm: -t expects a temperature >= 0, got ", v);
    } else if (a == "-p") {
      o.top_p = parse_number(a, v);
      STRATA_CHECK(o.top_p >= 0 && o.top_p <= 1, "strata-lm: -p expects a top-p in [0, 1], got ", v);
    } else {
      const std::int64_t threads = parse_integer(a, v);
      STRATA_CHECK(threads >= 1 && threads <= 1024, "strata-lm: --threads expects 1 to 1024, got ", threads);
      o.threads = static_cast<int>(threads);
    }
  }
  check_inside_flags(o, have_model);
  STRATA_CHECK(have_model || o.help || o.fake, "strata-lm: no MODEL given (usage: strata-lm MODEL [-i PROMPT] [-n STEPS] [-t TEMPERATURE] "
               "[-p TOP_P] [-s SEED] [-z TOKENIZER] [--threads N] [--int8])");
  return o;
}

}  // namespace lm
