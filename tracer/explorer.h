// tracer/explorer.h: the dispatch explorer: records a region of a program (every op's call, dispatch
// path, autograd node, FLOPs and time) and writes it as one self-contained HTML page that shows the
// call tree, each op's journey through the dispatch keys, the autograd graph, per-phase charts and
// the profiler's timeline, linked to each other (docs/explorer.md).
//
//   tracer::ExplorerRecorder recorder;          // records this thread from here on
//   Tensor loss = cross_entropy(model(x), y);
//   recorder.set_phase("backward");
//   backward(loss);
//   recorder.set_phase("optimizer");
//   opt.step();
//   tracer::write_explorer_html("step.html", {recorder.finish()});
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "../core/util/non_copyable.h"

namespace strata::tracer {

struct ExplorerOptions {
  std::string phase = "forward";  // the first phase's name
  // Run the profiler meanwhile, for the timeline (there is one profiler at a time: false when the
  // program profiles itself). Its times include the recording's own cost.
  bool profile = true;
  int rank = 0;  // the lane this record is drawn in, with several ranks
};

// Note [What the explorer records]
// The recorder composes what strata already has, and adds nothing to the dispatch path of a program
// that does not record: a DebugMode (modules, function calls, ops with their arguments, tensor ids and
// outputs), the thread's dispatch trace (each key an op passed and what ran there, Autograd's note of
// the node it recorded and the interposer's of whom it handed the op to: Note [The trace names the
// handler]), node pre- and post-hooks on every autograd node its ops' arguments lead to (which
// backward ops each node ran, in the engine's order), the registered FLOP formulas (read in
// DebugModeOptions::before_op, before the op runs, so no argument is held) and the profiler. An op the
// DebugMode saw but did not record (record_function's, or one on a wrapper subclass it leaves to the
// subclass) is still in the record, from its trace step. The ops are the program's: recording changes
// no use count an op's behaviour depends on (tests/tracer/test_explorer.cpp compares the step's ops).
// Records this thread's ops from construction until finish() (or destruction).
class ExplorerRecorder : NonCopyable {
 public:
  explicit ExplorerRecorder(ExplorerOptions options = {});
  ~ExplorerRecorder();
  // Starts the next phase: the ops from here on count for it ("backward", "optimizer").
  void set_phase(std::string_view phase);
  // Stops recording (at the first call) and gives the record (schema "strata.explorer.rank",
  // docs/explorer.md). Throws strata::Error when called again.
  nlohmann::ordered_json finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The page for `ranks` (one record per rank, from ExplorerRecorder::finish), titled `title`: one HTML
// file, its script, style and data inline (the data as JSON, escaped so that no name can end the
// script element), that loads nothing else.
std::string explorer_html(const std::vector<nlohmann::ordered_json>& ranks, std::string_view title = "strata step");
// Writes explorer_html to `path` atomically (the file appears whole or not at all).
void write_explorer_html(const std::string& path, const std::vector<nlohmann::ordered_json>& ranks,
                         std::string_view title = "strata step");

}  // namespace strata::tracer
