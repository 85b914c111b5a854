// tracer/cli/trace_args.cpp: strata-trace's command line: the flags, their values and limits, the
// combinations refused, the usage text, and errors kept to one line. Running what was asked is
// trace_cli.cpp's.
#include "tracer/cli/trace_cli.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string_view>
#include <system_error>
#include <utility>

#include "core/util/error.h"
#include "tracer/cli/tensor_parallel_step.h"

namespace strata::tracer {

namespace {

// Note [Limits of strata-trace]
// Every flag value is checked before anything is allocated, so a typo like --batch 1000000000 is an
// error, not minutes of swapping. The limits are on what grows with the flags: layers (65 sizes),
// parameters in total (weights and biases: 2^26 float32 values are 256 MB, and a run holds a few
// copies: parameters, gradients, clones before and after the step), and activations: --batch times
// the sum of --sizes is every layer's input or output for the whole batch, 2^26 elements again.
// The default MLP (16,32,4, batch 8) is 676 parameters and 416 activations. With --world-size N every
// rank holds its own model (parameters, gradients, DDP's bucket), so the parameter limit counts all
// N copies: at the limit a run takes no more than the one-rank run's memory whatever N (peak RSS:
// 16 ranks of 4.2M parameters 0.86 GB, 64 ranks of 1M 0.83 GB, one rank of 2^24 1.0 GB), where
// counting one copy let 64 ranks of 2^26 parameters take every gigabyte of the machine. The batch is split across the ranks,
// so the activation limit holds as it is.
// Under --fake no tensor has data, so parameters and activations may reach 2^40 each (a 10^9-
// parameter model fits; int64 sizes and FLOP counts stay far from overflowing in the meta
// functions, and the FLOP formulas check theirs); with --world-size one rank runs, so one copy counts.
constexpr std::int64_t kMaxLayers = 64;
constexpr std::int64_t kMaxParameters = std::int64_t{1} << 26;
constexpr std::int64_t kMaxActivations = std::int64_t{1} << 26;
constexpr std::int64_t kMaxFake = std::int64_t{1} << 40;
// Ranks: threads of this process, or under --fake one rank of a world that exists only in name (its
// size costs nothing but the meshes' group lists, Note [One fake rank of a large world]).
constexpr std::int64_t kMaxThreadRanks = 64;
constexpr std::int64_t kMaxFakeRanks = std::int64_t{1} << 20;
constexpr std::int64_t kSaturated = std::numeric_limits<std::int64_t>::max();

std::int64_t add_sat(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? kSaturated : r;
}
std::int64_t mul_sat(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? kSaturated : r;
}
std::string count_text(std::int64_t n) { return n == kSaturated ? "more than 2^63" : std::to_string(n); }

std::int64_t parse_int(const std::string& flag, const std::string& text, std::int64_t min) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  const bool syntax_ok = !text.empty() && end == text.data() + text.size() &&
                         (ec == std::errc() || ec == std::errc::result_out_of_range);
  STRATA_CHECK(syntax_ok, flag, ": expected an integer, got '", escape_control_chars(text), "'");
  STRATA_CHECK(ec == std::errc(), flag, ": '", text, "' is out of range (integers up to ",
               std::numeric_limits<std::int64_t>::max(), ")");
  STRATA_CHECK(v >= min, flag, ": expected an integer >= ", min, ", got ", v);
  return v;
}

std::uint64_t parse_seed(const std::string& text) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  STRATA_CHECK(ec == std::errc() && end == text.data() + text.size() && !text.empty(),
               "--seed: expected an integer from 0 to 18446744073709551615, got '", escape_control_chars(text), "'");
  return v;
}

// Note [Parsing --lr]
// std::from_chars, not strtod: no leading space or '+', no hex floats, no locale. It also reads "nan"
// and "inf", which are then rejected as not finite, like anything out of range (1e400). A value too
// small for a double (1e-400) is 0, as Python's float() makes it, and so is lr=0 for PyTorch's SGD. A
// negative lr is refused, as PyTorch's SGD does ("Invalid learning rate: -0.1"); -0.0 is not negative.
double parse_lr(const std::string& text) {
  double v = 0;
  const char* const last = text.data() + text.size();
  auto [end, ec] = std::from_chars(text.data(), last, v);
  if (ec == std::errc::result_out_of_range && end == last) {
    char* strtod_end = nullptr;  // overflow or underflow? strtod says which (from_chars checked the syntax)
    const double r = std::strtod(text.c_str(), &strtod_end);
    if (strtod_end == last && r == 0) ec = std::errc(), v = r;
  }
  STRATA_CHECK(!text.empty() && ec == std::errc() && end == last && std::isfinite(v) && v >= 0,
               "--lr: expected a finite number >= 0, got '", escape_control_chars(text), "'");
  return v;
}

std::vector<std::int64_t> parse_sizes(const std::string& text) {
  std::vector<std::int64_t> sizes;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    sizes.push_back(parse_int("--sizes", text.substr(start, comma - start), 1));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  STRATA_CHECK(sizes.size() >= 2, "--sizes: expected at least two sizes (input and output, e.g. 16,32,4), got '",
               escape_control_chars(text), "'");
  return sizes;
}

// The flags without a value, and the option each turns on.
constexpr std::pair<std::string_view, bool TraceOptions::*> kSwitches[] = {
    {"--sequences", &TraceOptions::sequences},         {"--fake", &TraceOptions::fake},
    {"--flops", &TraceOptions::flops},                 {"--json", &TraceOptions::json},
    {"--debug", &TraceOptions::debug},                 {"--record-output", &TraceOptions::record_output},
    {"--ids", &TraceOptions::ids},                     {"--hashes", &TraceOptions::hashes},
    {"--explain", &TraceOptions::explain},             {"--torchfunction", &TraceOptions::torchfunction},
    {"--nn-module", &TraceOptions::nn_module},         {"--trace", &TraceOptions::trace},
    {"--logging", &TraceOptions::logging},             {"--scaled", &TraceOptions::scaled},
};

// The flags with a value, and how each reads it into the options.
using ReadValue = void (*)(TraceOptions&, const std::string&);
constexpr std::pair<std::string_view, ReadValue> kValueFlags[] = {
    {"--seed", [](TraceOptions& o, const std::string& v) { o.config.seed = parse_seed(v); }},
    {"--sizes", [](TraceOptions& o, const std::string& v) { o.config.sizes = parse_sizes(v); }},
    {"--batch", [](TraceOptions& o, const std::string& v) { o.config.batch = parse_int("--batch", v, 1); }},
    {"--lr", [](TraceOptions& o, const std::string& v) { o.config.lr = parse_lr(v); }},
    {"--world-size",
     [](TraceOptions& o, const std::string& v) {
       const std::int64_t n = parse_int("--world-size", v, 1);  // at most 64 without --fake: check_ranks
       STRATA_CHECK(n <= kMaxFakeRanks, "--world-size: at most ", kMaxFakeRanks, " ranks (2^20, with --fake; ",
                    kMaxThreadRanks, " threads without), got ", n);
       o.config.world_size = static_cast<int>(n);
       o.world_size_given = true;
     }},
    {"--rank", [](TraceOptions& o, const std::string& v) { o.rank = parse_int("--rank", v, 0); }},
    {"--dtensor-example",
     [](TraceOptions& o, const std::string& v) {
       o.dtensor_example = dtensor_example_named(v);
       STRATA_CHECK(o.dtensor_example, "--dtensor-example: expected mm or einsum, got '", escape_control_chars(v), "'");
     }},
    {"--placement-format",
     [](TraceOptions& o, const std::string& v) {
       STRATA_CHECK(v == "lists" || v == "joined", "--placement-format: expected lists or joined, got '",
                    escape_control_chars(v), "'");
       o.placement_format = v == "lists" ? PlacementFormat::Lists : PlacementFormat::Joined;
     }},
    {"--tp", [](TraceOptions& o, const std::string& v) { o.tp = parse_int("--tp", v, 1); }},
    {"--mesh",
     [](TraceOptions& o, const std::string& v) {
       const std::size_t comma = v.find(',');
       STRATA_CHECK(comma != std::string::npos && v.find(',', comma + 1) == std::string::npos,
                    "--mesh: expected D,T (the data-parallel and tensor-parallel sizes, e.g. 2,2), got '",
                    escape_control_chars(v), "'");
       o.mesh = {parse_int("--mesh", v.substr(0, comma), 1), parse_int("--mesh", v.substr(comma + 1), 1)};
     }},
    {"--json-out", [](TraceOptions& o, const std::string& v) { o.json_out = v; }},
    {"--dump-tensors", [](TraceOptions& o, const std::string& v) { o.dump_tensors = v; }},
    {"--profile", [](TraceOptions& o, const std::string& v) { o.profile = v; }},
    {"--graph", [](TraceOptions& o, const std::string& v) { o.graph = v; }},
    {"--html", [](TraceOptions& o, const std::string& v) { o.html = v; }},
};

// The table's entry for `flag`, or null.
template <typename Entry, std::size_t N>
const Entry* find_flag(const Entry (&table)[N], std::string_view flag) {
  for (const Entry& entry : table)
    if (entry.first == flag) return &entry;
  return nullptr;
}

// --tp and --mesh: the tensor-parallel size into config.tp, the mesh agreeing with --world-size, and
// only for the report and --html (Note [The tensor-parallel step]).
void check_mesh(TraceOptions& o) {
  if (!o.tp && !o.mesh) return;
  const char* const flag = o.mesh ? "--mesh" : "--tp";
  STRATA_CHECK(o.world_size_given, flag, ": only with --world-size (the ranks the mesh lays out)");
  for (const std::pair<bool, const char*>& other :
       {std::pair{o.debug, "--debug"}, std::pair{o.trace, "--trace"}, std::pair{o.flops, "--flops"},
        std::pair{o.explain, "--explain"}, std::pair{o.profile || o.graph, o.profile ? "--profile" : "--graph"}})
    STRATA_CHECK(!other.first, flag, ": not with ", other.second, " (the tensor-parallel step runs in the report and --html only)");
  if (o.mesh) {
    const std::int64_t d = o.mesh->first, t = o.mesh->second;
    STRATA_CHECK(mul_sat(d, t) == o.config.world_size, "--mesh: ", d, " x ", t, " = ", count_text(mul_sat(d, t)),
                 " ranks, but --world-size is ", o.config.world_size);
    STRATA_CHECK(!o.tp || *o.tp == t, "--tp: ", o.tp.value_or(0), " is not the tensor-parallel size of --mesh ", d, ",", t);
  }
  STRATA_CHECK(o.mesh || *o.tp <= o.config.world_size, "--tp: the tensor-parallel size (", *o.tp,
               ") must divide --world-size (", o.config.world_size, ")");
  o.config.tp = static_cast<int>(o.mesh ? o.mesh->second : *o.tp);
  check_tensor_parallel(o.config);
}

// Thread ranks are threads of this process; a fake world is one rank in a world of names.
void check_ranks(const TraceOptions& o) {
  STRATA_CHECK(o.fake || o.config.world_size <= kMaxThreadRanks, "--world-size: at most ", kMaxThreadRanks,
               " ranks (threads of this process; up to 2^20 with --fake), got ", o.config.world_size);
}

void check_limits(const MlpConfig& c, bool fake) {  // Note [Limits of strata-trace]
  const std::int64_t max_parameters = fake ? kMaxFake : kMaxParameters;
  const std::int64_t max_activations = fake ? kMaxFake : kMaxActivations;
  const char* const power = fake ? "2^40" : "2^26";
  const auto layers = static_cast<std::int64_t>(c.sizes.size()) - 1;
  STRATA_CHECK(layers <= kMaxLayers, "--sizes: ", c.sizes.size(), " sizes make ", layers,
               " layers, over strata-trace's limit of ", kMaxLayers, " layers");
  std::int64_t parameters = 0, widths = 0;
  for (std::size_t i = 0; i + 1 < c.sizes.size(); ++i)
    parameters = add_sat(parameters, mul_sat(add_sat(c.sizes[i], 1), c.sizes[i + 1]));  // weight and bias
  for (std::int64_t s : c.sizes) widths = add_sat(widths, s);
  STRATA_CHECK(parameters <= max_parameters, "--sizes: ", count_text(parameters),
               " parameters, over strata-trace's limit of ", max_parameters, " (", power, ") in total");
  const std::int64_t ranks = c.world_size, on_all_ranks = mul_sat(parameters, fake ? 1 : ranks);
  STRATA_CHECK(on_all_ranks <= max_parameters, "--world-size: ", ranks, " ranks x ", parameters, " parameters = ",
               count_text(on_all_ranks), " (each rank holds its own copy of the model), over strata-trace's limit of ",
               max_parameters, " (", power, ") in total");
  const std::int64_t activations = mul_sat(c.batch, widths);
  STRATA_CHECK(activations <= max_activations, "--batch: ", c.batch, " x ", widths, " (the sum of --sizes) = ",
               count_text(activations), " activations, over strata-trace's limit of ", max_activations, " (", power, ")");
}

// Note [Views of strata-trace]
// strata-trace prints one view: the experiment's report (JSON), --flops' tables, --debug's log, or
// --explain's dispatch trace (of the plain step, printed alone); --fake
// changes what the report or --flops runs on. Flags that only make sense for another view are
// refused, naming the first flag at fault, so a typo does not silently print something else:
// --json shapes --flops' or --debug's output (the report is JSON already); --record-output, --ids,
// --hashes, --torchfunction and --nn-module shape the DebugMode log; --sequences belongs to the report; --json-out writes the JSON
// printed, so with --flops it needs --json, and --debug prints to stdout only; --dump-tensors writes
// the values of a plain run, which neither --fake nor --debug prints. --debug --fake logs the fake
// step (its tensors print as `ft`); --hashes reads data, so not under --fake. --profile (the profiled
// step's table on stdout, its trace in the file) and --graph (a file only) replace the report, and
// may go together; nothing that shapes another view goes with them. --trace prints the program
// traces (--logging and --json shape them) and takes only the model's shape with it. --world-size N
// runs the report's traced step, or --debug's or --trace's step, on N ranks; --rank R picks the rank
// whose --debug or --trace log is printed (Note [One rank's view of the data-parallel step]).
void check_combinations(const TraceOptions& o) {
  STRATA_CHECK(!(o.flops && o.debug), "--flops: not with --debug (one view at a time)");
  if (o.explain) {
    // (Not a structured binding: clang before 16 cannot capture one in STRATA_CHECK's lambda.)
    for (const std::pair<bool, const char*>& flag :
         {std::pair{o.debug, "--debug"}, std::pair{o.flops, "--flops"}, std::pair{o.fake, "--fake"},
          std::pair{o.sequences, "--sequences"}, std::pair{o.json_out.has_value(), "--json-out"},
          std::pair{o.dump_tensors.has_value(), "--dump-tensors"}})
      STRATA_CHECK(!flag.first, flag.second, ": not with --explain (it prints the dispatch trace of the plain step)");
  }
  if (o.profile || o.graph) {
    const char* const view = o.profile ? "--profile" : "--graph";
    for (const std::pair<bool, const char*>& flag :
         {std::pair{o.debug, "--debug"}, std::pair{o.explain, "--explain"}, std::pair{o.flops, "--flops"},
          std::pair{o.fake, "--fake"}, std::pair{o.sequences, "--sequences"}, std::pair{o.json, "--json"},
          std::pair{o.json_out.has_value(), "--json-out"}, std::pair{o.dump_tensors.has_value(), "--dump-tensors"}})
      STRATA_CHECK(!flag.first, flag.second, ": not with ", view, " (it writes its own file instead of the report)");
  }
  if (o.html) {  // --html: the page of the step (on every rank with --world-size), instead of the report
    for (const std::pair<bool, const char*>& flag :
         {std::pair{o.debug, "--debug"}, std::pair{o.explain, "--explain"}, std::pair{o.flops, "--flops"},
          std::pair{o.trace, "--trace"}, std::pair{o.profile || o.graph, o.profile ? "--profile" : "--graph"},
          std::pair{o.sequences, "--sequences"}, std::pair{o.json, "--json"}, std::pair{o.json_out.has_value(), "--json-out"},
          std::pair{o.dump_tensors.has_value(), "--dump-tensors"}, std::pair{o.rank.has_value(), "--rank"},
          std::pair{o.fake && o.config.world_size > 1, "--fake --world-size"}})
      STRATA_CHECK(!flag.first, flag.second, ": not with --html (it writes the explorer page instead of the report)");
  }
  if (o.trace) {
    for (const std::pair<bool, const char*>& flag :
         {std::pair{o.debug, "--debug"}, std::pair{o.explain, "--explain"}, std::pair{o.flops, "--flops"},
          std::pair{o.fake, "--fake"}, std::pair{o.sequences, "--sequences"}, std::pair{o.json_out.has_value(), "--json-out"},
          std::pair{o.dump_tensors.has_value(), "--dump-tensors"}, std::pair{o.profile.has_value(), "--profile"},
          std::pair{o.graph.has_value(), "--graph"}})
      STRATA_CHECK(!flag.first, flag.second, ": not with --trace (it prints the program traces instead of the report)");
  }
  STRATA_CHECK(!o.logging || o.trace, "--logging: only with --trace");
  STRATA_CHECK(!o.scaled || o.trace, "--scaled: only with --trace");
  STRATA_CHECK(!(o.scaled && o.logging), "--scaled: not with --logging (one subclass at a time)");
  STRATA_CHECK(!o.dtensor_example || o.debug, "--dtensor-example: only with --debug");
  STRATA_CHECK(!o.placement_format || o.dtensor_example, "--placement-format: only with --dtensor-example");
  if (o.dtensor_example) {  // Note [The DTensor examples]: one rank of a fake world of 8, plain tensors
    for (const std::pair<bool, const char*>& flag :
         {std::pair{o.world_size_given, "--world-size"}, std::pair{o.fake, "--fake"}, std::pair{o.hashes, "--hashes"},
          std::pair{o.nn_module, "--nn-module"}})
      STRATA_CHECK(!flag.first, flag.second, ": not with --dtensor-example (it runs on a fake world of ",
                   kDTensorExampleWorld, ")");
    STRATA_CHECK(o.rank.value_or(0) < kDTensorExampleWorld, "--rank: expected a rank below ", kDTensorExampleWorld,
                 " (the world of --dtensor-example), got ", *o.rank);
  } else if (o.rank) {  // Note [One rank's view of the data-parallel step]
    STRATA_CHECK(o.world_size_given, "--rank: only with --world-size (the rank of the world whose log is printed)");
    STRATA_CHECK(o.debug || o.trace || o.fake,
                 "--rank: only with --debug, --trace or --fake (the report is rank 0's, but under --fake any rank's)");
    STRATA_CHECK(*o.rank < o.config.world_size, "--rank: expected a rank below --world-size (", o.config.world_size,
                 "), got ", *o.rank);
  }
  if (o.config.world_size > 1) {
    for (const std::pair<bool, const char*>& flag :
         {std::pair{o.explain, "--explain"}, std::pair{o.flops, "--flops"}, std::pair{o.fake && o.debug, "--fake --debug"},
          std::pair{o.logging, "--logging"}, std::pair{o.scaled, "--scaled"}, std::pair{o.profile.has_value(), "--profile"},
          std::pair{o.graph.has_value(), "--graph"}, std::pair{o.dump_tensors.has_value(), "--dump-tensors"}})
      STRATA_CHECK(!flag.first, "--world-size: not with ", flag.second,
                   " (the report's traced step, --debug and --trace run on several ranks)");
    STRATA_CHECK(o.config.tp > 1 || o.config.batch % o.config.world_size == 0, "--world-size: the batch (", o.config.batch,
                 ") must be divisible by the world size (", o.config.world_size, ")");
  }
  STRATA_CHECK(!o.json || o.flops || o.debug || o.trace,
               "--json: only with --flops, --debug or --trace (the report is JSON already)");
  for (const std::pair<bool, const char*>& flag :
       {std::pair{o.record_output, "--record-output"}, std::pair{o.ids, "--ids"}, std::pair{o.hashes, "--hashes"},
        std::pair{o.torchfunction, "--torchfunction"}, std::pair{o.nn_module, "--nn-module"}})
    STRATA_CHECK(!flag.first || o.debug, flag.second, ": only with --debug");
  if (o.debug) {
    STRATA_CHECK(!(o.fake && o.hashes), "--hashes: not with --fake (fake tensors have no values to hash)");
    STRATA_CHECK(!o.sequences, "--sequences: not with --debug (it adds to the report, which --debug replaces)");
    STRATA_CHECK(!o.json_out, "--json-out: not with --debug (redirect standard output instead)");
    STRATA_CHECK(!o.dump_tensors, "--dump-tensors: not with --debug (run without --debug for the tensors)");
  }
  STRATA_CHECK(!o.sequences || !o.flops, "--sequences: not with --flops (the FLOP table has no op sequences)");
  STRATA_CHECK(!o.json_out || !o.flops || o.json, "--json-out: with --flops, only with --json (the table is not JSON)");
  STRATA_CHECK(!o.dump_tensors || !o.fake, "--dump-tensors: not with --fake (fake tensors have no values to dump)");
}

}  // namespace

// Note [One line per error]
// Values are echoed in errors so the user sees what was parsed, but a value may hold a newline or an
// escape sequence ($'1\n2', a pasted path): control characters are written as \n, \t, \r or \xHH, so an
// error is one line whatever was typed. Other bytes (UTF-8 included) and the backslash stay as typed:
// escaping is then idempotent, and run_trace_cli applies it once more to the whole message, which
// covers messages from elsewhere (file names in AtomicFile's errors).
std::string escape_control_chars(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else out += ch;
  }
  return out;
}

TraceOptions parse_trace_args(const std::vector<std::string>& args) {
  TraceOptions o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag == "--help" || flag == "-h") {
      o.help = true;
      continue;
    }
    if (const auto* on = find_flag(kSwitches, flag)) {
      o.*on->second = true;
      continue;
    }
    const auto* with_value = find_flag(kValueFlags, flag);
    STRATA_CHECK(with_value, "unknown argument '", escape_control_chars(flag), "' (see --help)");
    STRATA_CHECK(i + 1 < args.size(), flag, ": missing value");
    with_value->second(o, args[++i]);
  }
  check_ranks(o);
  check_mesh(o);
  check_combinations(o);
  check_limits(o.config, o.fake);
  return o;
}

}  // namespace strata::tracer
