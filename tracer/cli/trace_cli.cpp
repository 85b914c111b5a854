// tracer/cli/trace_cli.cpp: running strata-trace: each view of the MLP step (the report, --flops,
// --debug, --explain, --profile and --graph, --trace) and its output, published in order. The flags
// are read and checked by trace_args.cpp.
#include "tracer/cli/trace_cli.h"

#include <cerrno>
#include <cstring>
#include <new>

#include "distributed/process_group.h"
#include "distributed/thread_backend.h"
#include "io/atomic_file.h"
#include "io/python_json.h"
#include "modes/flop_counter.h"
#include "tracer/cli/debug_step.h"
#include "tracer/cli/explain.h"
#include "tracer/cli/html_step.h"
#include "tracer/cli/mlp_traces.h"
#include "tracer/cli/profile_step.h"
#include "tracer/cli/rank_views.h"
#include "tracer/cli/run_header.h"

namespace strata::tracer {

namespace {

// The --trace view: the MLP loss's forward and backward traces, as Python text or JSON.
std::string program_traces_text(const TraceOptions& o) {
  if (o.config.world_size > 1) {  // Note [One rank's view of the data-parallel step]
    const std::optional<Trace> step = trace_data_parallel_step(o.config, static_cast<int>(o.rank.value_or(0)));
    if (!step) return "";  // another process prints it
    if (!o.json) return to_python(*step);
    nlohmann::ordered_json j;
    j["step"] = to_json(*step);
    return with_run_header(std::move(j), o.config.seed).dump(1) + "\n";
  }
  const RecordedProgram r = record_mlp_traces(
      o.config, o.logging ? MlpTraceKind::Logging : o.scaled ? MlpTraceKind::Scaled : MlpTraceKind::Plain);
  if (!o.json) return to_python(r.forward) + "\n" + to_python(*r.backward);
  nlohmann::ordered_json j;
  j["forward"] = to_json(r.forward);
  j["backward"] = to_json(*r.backward);
  return with_run_header(std::move(j), o.config.seed).dump(1) + "\n";
}

// The --flops view: one counted step (under FakeTensorMode with --fake), as a table or JSON.
std::string flops_report(const TraceOptions& o) {
  std::optional<FakeTensorMode> fake;
  if (o.fake) fake.emplace();
  FlopCounterMode flops;
  run_step(o.config, PhasedMode::of(flops), fake ? &*fake : nullptr);
  if (o.json) return with_run_header(flops.to_json(), o.config.seed).dump(2) + "\n";
  return flops.get_table() + "\n\n" + flops.get_phase_table() + "\n";
}

std::string debug_text(const TraceOptions& o) {
  DebugModeOptions options;
  options.record_output = o.record_output;
  options.record_ids = o.ids;
  options.record_torchfunction = o.torchfunction;
  options.record_nn_module = o.nn_module;
  options.record_faketensor = o.fake;  // as upstream's DebugMode(record_faketensor=True) inside a FakeTensorMode
  if (o.dtensor_example) {  // as upstream's test: DebugMode(record_torchfunction=True), rank 1 as the PR's log
    options.record_torchfunction = true;
    options.placement_format = o.placement_format.value_or(PlacementFormat::Lists);
    const auto mode = debug_dtensor_example(*o.dtensor_example, options, static_cast<int>(o.rank.value_or(1)));
    return (o.json ? with_run_header(mode->to_json(), o.config.seed).dump(2) : mode->debug_string()) + "\n";
  }
  std::optional<FakeTensorMode> fake;
  if (o.fake) fake.emplace();
  const auto hashes = o.hashes ? std::optional(TensorHash::Norm) : std::nullopt;
  const auto mode = o.config.world_size > 1
                        ? debug_data_parallel_step(o.config, options, hashes, static_cast<int>(o.rank.value_or(0)))
                        : debug_step(o.config, options, hashes, {}, fake ? &*fake : nullptr);
  if (!mode) return "";  // another process prints it (Note [One rank's view of the data-parallel step])
  return (o.json ? with_run_header(mode->to_json(), o.config.seed).dump(2) : mode->debug_string()) + "\n";
}

// Note [Output order]
// Nothing is published until everything has worked: the output files are created (as temporaries)
// before the run, so a bad path fails first; after the run both are written and synced, then stdout is
// written and flushed, and only then are the files renamed into place. A full disk, a closed stdout or a
// signal (Note [Temporary files and signals]) before that point leaves no file at all.
void write_stdout(std::ostream& out, const std::string& text) {
  errno = 0;
  out << text;
  out.flush();
  if (!out) {
    const int err = errno;
    STRATA_CHECK(false, "cannot write standard output", err ? std::string(": ") + std::strerror(err) : "");
  }
}

// The file an option names, opened as a temporary before any work (Note [Output order]).
void open_output(std::optional<AtomicFile>& file, const std::optional<std::string>& path, const char* option) {
  if (path) file.emplace(*path, option);
}

// Moves a written file into place. Under mpirun every rank opens and writes its temporary, so that a
// path that cannot be written stops every rank alike, before any collective that would wait for the
// failed one, and rank 0 alone publishes (Note [strata-trace under mpirun]); the others' temporaries
// go with their AtomicFile.
void publish(std::optional<AtomicFile>& file) {
  const distributed::ProcessGroup* world = distributed::find_process_group(distributed::kWorldGroupName);
  if (file && (!world || world->rank() == 0)) file->publish();
}

// The --profile and --graph views (Note [Output order]): the files first, then the run, then stdout.
void write_profile_and_graph(const TraceOptions& o, std::ostream& out) {
  std::optional<AtomicFile> profile_file, graph_file;
  open_output(profile_file, o.profile, "--profile");
  open_output(graph_file, o.graph, "--graph");
  if (profile_file && graph_file)
    STRATA_CHECK(!profile_file->same_file_as(*graph_file), "--graph: '", *o.graph, "' is the same file as --profile");
  std::string table;
  if (profile_file) {
    const std::vector<profiler::Event> events = profile_step(o.config, {.record_shapes = true});
    profile_file->write(with_run_header(profiler::chrome_trace(events), o.config.seed).dump(1) + "\n");
    table = profiler::table(profiler::key_averages(events), "self_cpu_time_total", -1);
  }
  if (graph_file) graph_file->write(mlp_graph_dot(o.config));
  if (!table.empty()) write_stdout(out, table);
  publish(profile_file);
  publish(graph_file);
}

}  // namespace

int run_trace_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    const TraceOptions o = parse_trace_args(args);
    if (o.help) {
      write_stdout(out, trace_usage());
      return 0;
    }
    if (o.debug || o.explain) {
      write_stdout(out, o.debug ? debug_text(o) : explain_step(o.config));
      return 0;
    }
    if (o.html) {  // Note [Output order]: the file exists (as a temporary) before the run
      std::optional<AtomicFile> page;
      open_output(page, o.html, "--html");
      page->write(html_step(o.config, o.fake));
      publish(page);
      return 0;
    }
    if (o.profile || o.graph) {
      write_profile_and_graph(o, out);
      return 0;
    }
    if (o.trace) {
      write_stdout(out, program_traces_text(o));
      return 0;
    }
    // Note [Output order]: the files exist (as temporaries) before any work.
    std::optional<AtomicFile> json_file, tensors_file;
    open_output(json_file, o.json_out, "--json-out");
    open_output(tensors_file, o.dump_tensors, "--dump-tensors");
    // Resolved as open() resolves them: "o.json", "./o.json", "d/../o.json", a symlink or a hard link.
    if (json_file && tensors_file)
      STRATA_CHECK(!json_file->same_file_as(*tensors_file), "--dump-tensors: '", *o.dump_tensors,
                   "' is the same file as --json-out");

    const std::string report =
        o.flops ? flops_report(o)
                : with_run_header(experiment_report(o.config, o.sequences, o.fake, static_cast<int>(o.rank.value_or(0))),
                                  o.config.seed).dump(2) + "\n";
    if (tensors_file)
      tensors_file->write(
          dump_python_json(with_run_header(tensors_report(o.config, plain_step(o.config)), o.config.seed)) + "\n");
    if (json_file) json_file->write(report);
    write_stdout(out, report);
    publish(tensors_file);
    publish(json_file);
    return 0;
  } catch (const Error& e) {
    err << "strata-trace: error: " << escape_control_chars(e.what()) << "\n";  // Note [One line per error]
  } catch (const std::bad_alloc&) {
    err << "strata-trace: error: out of memory (try smaller --sizes or --batch)\n";
  } catch (const std::exception& e) {  // a bug: still one line and exit code 2, but named as one
    err << "strata-trace: internal error: " << escape_control_chars(e.what()) << "\n";
  } catch (...) {
    err << "strata-trace: internal error: unknown exception\n";
  }
  return 2;
}

}  // namespace strata::tracer
