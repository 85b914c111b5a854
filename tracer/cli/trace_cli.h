// tracer/cli/trace_cli.h: strata-trace, the main job: the MLP experiment's JSON for any MLP shape.
// Parsing is separate from running so tests can check every error without a subprocess.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "dtensor_examples.h"
#include "mlp_experiment.h"

namespace strata::tracer {

struct TraceOptions {
  MlpConfig config;
  bool sequences = false;
  bool fake = false;   // the counted steps under FakeTensorMode
  bool flops = false;  // the FLOP table (FlopCounterMode) instead of the experiment's JSON
  bool json = false;   // with --flops or --debug: their output as JSON
  std::optional<std::string> json_out;
  std::optional<std::string> dump_tensors;
  bool help = false;
  // --debug: the MLP step's DebugMode log instead of the report; the next five only with it.
  bool debug = false;
  bool record_output = false;
  bool ids = false;
  bool hashes = false;
  bool torchfunction = false;
  bool nn_module = false;
  bool explain = false;  // --explain: the plain step's dispatch trace instead of the report
  // --profile FILE: the profiled step's Chrome trace to FILE and its table on stdout, instead of the
  // report; --graph FILE: the loss's autograd graph as DOT to FILE. Either or both.
  std::optional<std::string> profile;
  std::optional<std::string> graph;
  // --html FILE: the step recorded by the explorer, as one HTML page, instead of the report.
  std::optional<std::string> html;
  // --trace: the MLP loss's forward and backward program traces instead of the report (as JSON with
  // --json); --logging: with every input a LoggingTensor, its dispatch unrolled in the traces.
  bool trace = false;
  bool logging = false;
  bool scaled = false;  // --scaled: with --trace, every Linear weight a float8 ScaledTensor
  // --world-size N (config.world_size): the traced step, or --debug's and --trace's step,
  // data-parallel on N ranks; --rank R: the rank whose log --debug or --trace prints [0].
  bool world_size_given = false;
  std::optional<std::int64_t> rank;
  // --dtensor-example mm|einsum (with --debug): that program of PR 162665 on DTensors over a fake
  // world of 8, as rank --rank [1], instead of the MLP step (Note [The DTensor examples]);
  // --placement-format lists|joined: how its log writes placements [lists].
  std::optional<DTensorExample> dtensor_example;
  std::optional<PlacementFormat> placement_format;
  // --tp T and --mesh D,T: the report's step tensor-parallel on a (D, T) mesh of --world-size = D x T
  // ranks (config.tp; Note [The tensor-parallel step]); --mesh names both sizes, --tp the second.
  std::optional<std::int64_t> tp;
  std::optional<std::pair<std::int64_t, std::int64_t>> mesh;
};

// Throws strata::Error with a one-line message for a bad flag or value.
TraceOptions parse_trace_args(const std::vector<std::string>& args);
std::string trace_usage();
// `text` with control characters written as \n, \t, \r or \xHH: an echoed value keeps an error on one line.
std::string escape_control_chars(std::string_view text);

// Runs strata-trace: JSON on `out`, errors as one line on `err`. Returns the exit code (0, or 2). A
// failure to write `out` is an error too (`out` is flushed and checked).
int run_trace_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace strata::tracer
