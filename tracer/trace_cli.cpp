// tracer/trace_cli.cpp: flags, validation and output of strata-trace.
#include "tracer/trace_cli.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <new>

#include "tracer/atomic_file.h"

namespace strata::tracer {

namespace {

constexpr std::int64_t kMaxElements = std::int64_t{1} << 27;  // per weight or activation: 512 MB of float32

std::int64_t parse_int(const std::string& flag, const std::string& text, std::int64_t min) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  STRATA_CHECK(ec == std::errc() && end == text.data() + text.size() && !text.empty(), flag,
               ": expected an integer, got '", text, "'");
  STRATA_CHECK(v >= min, flag, ": expected an integer >= ", min, ", got ", v);
  return v;
}

std::uint64_t parse_seed(const std::string& text) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  STRATA_CHECK(ec == std::errc() && end == text.data() + text.size() && !text.empty(),
               "--seed: expected a non-negative integer, got '", text, "'");
  return v;
}

double parse_lr(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  STRATA_CHECK(!text.empty() && end == text.c_str() + text.size() && std::isfinite(v) && v >= 0, "--lr: expected a finite number >= 0, got '",
               text, "'");
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
  STRATA_CHECK(sizes.size() >= 2, "--sizes: expected at least two sizes (input and output, e.g. 16,32,4), got '", text,
               "'");
  return sizes;
}

void check_limits(const SeedConfig& c) {
  for (std::size_t i = 0; i + 1 < c.sizes.size(); ++i)
    STRATA_CHECK(c.sizes[i] <= kMaxElements / c.sizes[i + 1], "--sizes: a ", c.sizes[i], "x", c.sizes[i + 1],
                 " layer exceeds strata-trace's limit of ", kMaxElements, " elements per tensor");
  for (std::int64_t s : c.sizes)
    STRATA_CHECK(c.batch <= kMaxElements / s, "--batch: ", c.batch, " rows of ", s,
                 " features exceed strata-trace's limit of ", kMaxElements, " elements per tensor");
}

}  // namespace

std::string trace_usage() {
  return "usage: strata-trace [--seed N] [--sizes A,B,...] [--batch N] [--lr X] [--sequences]\n"
         "                    [--json-out FILE] [--dump-tensors FILE] [--help]\n"
         "\n"
         "Runs one SGD step of an MLP (Linear -> ReLU -> ... -> Linear, cross-entropy) three ways on\n"
         "strata's dispatcher: eager, under an op-counting dispatch mode (per phase), and with\n"
         "LoggingTensor wrapper-subclass parameters; prints the seed experiment's JSON.\n"
         "\n"
         "  --seed N             parameters from manual_seed(N), batch from Generator(N + 1) [0]\n"
         "  --sizes A,B,...      layer widths, at least two [16,32,4]\n"
         "  --batch N            batch size [8]\n"
         "  --lr X               SGD learning rate [0.1]\n"
         "  --sequences          add forward_seq, backward_seq, optimizer_seq and subclass_log\n"
         "  --json-out FILE      also write the JSON to FILE\n"
         "  --dump-tensors FILE  write x, y, init_params, logits, loss, grads, params_after to FILE\n"
         "  --help               show this help\n";
}

TraceOptions parse_trace_args(const std::vector<std::string>& args) {
  TraceOptions o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag == "--help" || flag == "-h") {
      o.help = true;
      continue;
    }
    if (flag == "--sequences") {
      o.sequences = true;
      continue;
    }
    const bool takes_value = flag == "--seed" || flag == "--sizes" || flag == "--batch" || flag == "--lr" ||
                             flag == "--json-out" || flag == "--dump-tensors";
    STRATA_CHECK(takes_value, "unknown argument '", flag, "' (see --help)");
    STRATA_CHECK(i + 1 < args.size(), flag, ": missing value");
    const std::string& value = args[++i];
    if (flag == "--seed") o.config.seed = parse_seed(value);
    else if (flag == "--sizes") o.config.sizes = parse_sizes(value);
    else if (flag == "--batch") o.config.batch = parse_int("--batch", value, 1);
    else if (flag == "--lr") o.config.lr = parse_lr(value);
    else if (flag == "--json-out") o.json_out = value;
    else o.dump_tensors = value;
  }
  check_limits(o.config);
  return o;
}

int run_trace_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    const TraceOptions o = parse_trace_args(args);
    if (o.help) {
      out << trace_usage();
      return 0;
    }
    // Open outputs first: an unwritable path fails before any work, and nothing half-written remains.
    std::optional<AtomicFile> json_file, tensors_file;
    if (o.json_out) json_file.emplace(*o.json_out);
    if (o.dump_tensors) tensors_file.emplace(*o.dump_tensors);

    const std::string report = seed_report(o.config, o.sequences).dump(2);
    if (tensors_file) tensors_file->commit(tensors_report(o.config, plain_step(o.config)).dump() + "\n");
    if (json_file) json_file->commit(report + "\n");
    out << report << "\n";
    return 0;
  } catch (const std::bad_alloc&) {
    err << "strata-trace: error: out of memory (try smaller --sizes or --batch)\n";
  } catch (const std::exception& e) {
    err << "strata-trace: error: " << e.what() << "\n";
  }
  return 2;
}

}  // namespace strata::tracer
