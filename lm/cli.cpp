// lm/cli.cpp: run_cli, the strata-lm app's whole job.
#include "cli.h"

#include <cstdio>
#include <ctime>
#include <exception>
#include <new>
#include <optional>

#include <strata/core/parallel.h>
#include <strata/core/util/error.h>

#include "cli_args.h"
#include "cli_inside.h"
#include "generate.h"
#include "model.h"
#include "profile_output.h"
#include "sampler.h"
#include "text_tokenizer.h"

namespace lm {

namespace {

// One line, whatever the message holds.
std::string one_line(std::string message) {
  for (char& ch : message)
    if (ch == '\n' || ch == '\r') ch = ' ';
  return message;
}

int run(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.threads) strata::set_num_threads(*o.threads);
  if (o.fake) return run_fake(o, out);
  std::optional<GenerationProfile> profile;
  if (!o.profile.empty()) profile.emplace(o.profile);  // its file first: a bad path fails before any work
  Model model = Model::load(o.model, o.int8);
  const TextTokenizer tokenizer = TextTokenizer::load(
      o.tokenizer.empty() ? TextTokenizer::default_path(o.model) : o.tokenizer, model.config().vocab_size);
  SamplerOptions sampling;
  sampling.temperature = o.temperature;
  sampling.top_p = o.top_p;
  sampling.seed = o.seed != 0 ? o.seed : static_cast<std::uint64_t>(std::time(nullptr));
  Sampler sampler(sampling);
  const std::vector<int> prompt = tokenizer.encode(o.prompt, /*bos=*/true, /*eos=*/false);
  if (o.debug_step || o.flops) return run_inspection(o, model, sampler, prompt, out);
  if (profile) profile->start();
  const GenerationStats stats = generate(model, sampler, prompt, o.steps, [&](int prev, int token) {
    const std::string_view piece = tokenizer.decode(prev, token);
    if (tokenizer.printable(piece)) out.write(piece.data(), static_cast<std::streamsize>(piece.size()));
    out.flush();
  });
  if (profile) profile->finish();
  out << '\n';
  out.flush();
  if (stats.positions > 1) {
    char line[64];
    std::snprintf(line, sizeof line, "achieved tok/s: %f\n", stats.tokens_per_second);
    err << line;
  }
  return 0;
}

}  // namespace

int run_cli(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  try {
    const CliOptions o = parse_cli_args(args);
    if (o.help) {
      out << cli_usage();
      return 0;
    }
    return run(o, out, err);
  } catch (const std::bad_alloc&) {
    err << "strata-lm: out of memory\n";
  } catch (const std::exception& e) {
    const std::string message = one_line(e.what());
    err << (message.rfind("strata-lm: ", 0) == 0 ? "" : "strata-lm: ") << message << '\n';
  }
  return 2;
}

}  // namespace lm
