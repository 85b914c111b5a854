// lm/cli_args.h: strata-lm's command line, with run.c's flags and defaults where they overlap.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace lm {

struct CliOptions {
  std::string model;                      // MODEL: a llama2.c .bin (float32 or int8 version 2) or a Hugging Face folder
  std::string prompt;                     // -i (run.c: none, i.e. "")
  std::int64_t steps = 256;               // -n: positions, the prompt's included; 0 = seq_len
  double temperature = 1.0;               // -t: 0 = greedy
  double top_p = 0.9;                     // -p: outside (0, 1) = no nucleus
  std::uint64_t seed = 0;                 // -s: 0 = time(NULL), as run.c
  std::string tokenizer;                  // -z; empty: the model's (TextTokenizer::default_path)
  std::optional<int> threads;             // --threads: strata's default (OpenMP's) when absent
  bool int8 = false;                      // --int8: quantize float weights at load (Q8_0, as runq.c)
  bool help = false;                      // -h, --help
  // Seeing inside (lm/cli_inside_args.cpp parses these).
  bool debug_step = false;                // --debug-step: the first decode step's DebugMode log
  bool flops = false;                     // --flops: FLOPs per token per module
  std::string profile;                    // --profile FILE: a Chrome trace of the generation
  bool fake = false;                      // --fake: the model of --config under FakeTensorMode
  std::string config;                     // --config CONFIG.json (Hugging Face), with --fake
};

// The usage text (several lines, for --help).
const char* cli_usage();

// Parses the arguments after the program's name. A strata::Error with a one-line message for a
// missing model, an unknown flag, a flag without its value, or a value that is not a number in range.
CliOptions parse_cli_args(std::span<const std::string> args);

}  // namespace lm
