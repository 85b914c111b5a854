// bench/overlap_bench.cpp: strata-bench-overlap, what asynchronous collectives buy: a layer's
// backward step (its three matrix products, in row blocks) with a gradient bucket's all_reduce in
// flight, against the same step without communication, in one run (Note [Measuring overlap]). Under
// `mpirun -np N` on the MPI backend, otherwise on N thread ranks (--ranks N, default 2); --dim,
// --batch (a multiple of 8) and --bucket (floats) size the layer and the bucket. Prints one
// JSON object of medians (rank 0's) and ratios; no target: on a machine without a spare core the
// ranks' compute and MPI's copies share the cores, and the ratio says so rather than failing.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/generator.h"
#include "core/parallel.h"
#include "distributed/functional_collectives.h"
#include "distributed/mpi_backend.h"
#include "distributed/process_group.h"
#include "distributed/thread_backend.h"
#include "ops/functions.h"

using namespace strata;

namespace {

// Note [Measuring overlap]
// The step is a Linear layer's backward as autograd runs it for a [batch, dim] input and a [dim, dim]
// weight: grad_input = grad_out W, grad_weight = grad_out^T x (plus the forward's x W^T, so three
// products), each split into `blocks` row blocks, so that the program has points between ops where
// it may let MPI progress. Communication is the all_reduce (sum) of a bucket of `bucket` floats, as
// DistributedDataParallel issues for the layers after this one before this layer's backward runs.
// Five variants, alternated per iteration so all see the same load, each between two barriers:
//   compute        the step alone
//   comm           the all_reduce issued and waited for alone
//   serial         the all_reduce waited for, then the step (no overlap)
//   overlap_wait   issued, the step, then waited for: MPI progresses only inside MPI calls, so here
//                  only at the issue and at the wait
//   overlap_tested issued, the step with mpi_progress() between its blocks (MPI_Test on the pending
//                  request, Note [How MPI collectives make progress]), then waited for
// The ratios are each variant over `compute`: 1 would be communication entirely hidden, and
// serial's is what no overlap costs. On threads the reduction is done by the ranks' own threads at
// the wait (Note [A round computes at wait]), so the overlap variants cannot hide it there.
struct Config {
  std::int64_t batch = 256, dim = 512, bucket = std::int64_t{1} << 21;
  int blocks = 8, iterations = 15;
};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// The variants' medians on this rank, in milliseconds.
std::vector<double> measure(const Config& c, int rank, bool mpi) {
  Generator g;  // each rank its own (the default generator is shared by thread ranks)
  g.manual_seed(static_cast<std::uint64_t>(rank));
  const Tensor x = randn({c.batch, c.dim}, {}, &g), w = randn({c.dim, c.dim}, {}, &g), grad_out = randn({c.batch, c.dim}, {}, &g);
  const Tensor bucket = full({c.bucket}, 1.0), flag = zeros({1});
  const std::int64_t rows = c.batch / c.blocks;
  auto barrier = [&] { (void)distributed::wait_tensor(distributed::all_reduce(flag, "sum", "0")); };
  auto step = [&](bool progress) {
    for (int b = 0; b < c.blocks; ++b) {
      const Tensor xs = narrow(x, 0, b * rows, rows), gs = narrow(grad_out, 0, b * rows, rows);
      (void)mm(xs, t(w));  // the forward's product, as the backward's saved activations came from it
      if (progress && mpi) distributed::mpi_progress();
      (void)mm(gs, w);  // grad_input
      if (progress && mpi) distributed::mpi_progress();
      (void)mm(t(gs), xs);  // this block's share of grad_weight
      if (progress && mpi) distributed::mpi_progress();
    }
  };
  auto reduce = [&] { return distributed::all_reduce(bucket, "sum", "0"); };
  const std::vector<std::function<void()>> variants{
      [&] { step(false); },
      [&] { (void)distributed::wait_tensor(reduce()); },
      [&] {
        (void)distributed::wait_tensor(reduce());
        step(false);
      },
      [&] {
        const Tensor out = reduce();
        step(false);
        (void)distributed::wait_tensor(out);
      },
      [&] {
        const Tensor out = reduce();
        step(true);
        (void)distributed::wait_tensor(out);
      }};
  std::vector<std::vector<double>> samples(variants.size());
  for (int i = 0; i < c.iterations + 1; ++i)  // the first is a warm-up
    for (std::size_t v = 0; v < variants.size(); ++v) {
      barrier();
      const auto t0 = std::chrono::steady_clock::now();
      variants[v]();
      barrier();  // the step ends when every rank has its result
      if (i > 0) samples[v].push_back(ms_since(t0));
    }
  std::vector<double> medians;
  for (const std::vector<double>& s : samples) medians.push_back(median(s));
  return medians;
}

std::int64_t flag_value(const std::vector<std::string>& args, const std::string& flag, std::int64_t fallback) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == flag) {
      const std::int64_t v = std::stoll(args[i + 1]);
      if (v < 1) throw std::invalid_argument(flag + ": expected an integer >= 1");
      return v;
    }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const bool mpi = distributed::mpi_available() && std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr;
  try {
    const std::vector<std::string> args(argv + 1, argv + argc);
    for (std::size_t i = 0; i < args.size(); i += 2) {
      if (args[i] != "--ranks" && args[i] != "--dim" && args[i] != "--batch" && args[i] != "--bucket")
        throw std::invalid_argument("unknown argument '" + args[i] + "' (flags: --ranks N --dim N --batch N --bucket N)");
      if (i + 1 == args.size()) throw std::invalid_argument(args[i] + ": missing value");
    }
    Config c;
    c.dim = flag_value(args, "--dim", c.dim);
    c.batch = flag_value(args, "--batch", c.batch);
    c.bucket = flag_value(args, "--bucket", c.bucket);
    if (c.batch % c.blocks != 0) throw std::invalid_argument("--batch: expected a multiple of 8");
    set_num_threads(1);  // one core per rank: the ranks are the parallelism
    int ranks = static_cast<int>(flag_value(args, "--ranks", 2)), rank = 0;
    std::vector<double> ms;
    if (mpi) {
      distributed::init_mpi(&argc, &argv);
      rank = distributed::resolve_process_group("0").rank();
      ranks = distributed::resolve_process_group("0").size();
      ms = measure(c, rank, true);
      distributed::finalize_mpi();
    } else {
      distributed::spawn(ranks, [&](int r) {
        std::vector<double> mine = measure(c, r, false);
        if (r == 0) ms = std::move(mine);
      });
    }
    if (rank != 0) return 0;
    const unsigned cores = std::thread::hardware_concurrency();
    nlohmann::ordered_json out;
    out["benchmark"] = "overlap";
    out["backend"] = mpi ? "mpi" : "threads";
    out["ranks"] = ranks;
    out["cores"] = cores;
    out["intra_op_threads_per_rank"] = 1;
    out["spare_core"] = cores > static_cast<unsigned>(ranks);
    out["progress"] = mpi ? "inside MPI calls only (no progress thread): at the issue, at the wait, and in overlap_tested "
                            "mpi_progress() (MPI_Test) between the step's ops"
                          : "the ranks' own threads do the reduction at the wait";
    out["batch"] = c.batch;
    out["dim"] = c.dim;
    out["bucket_floats"] = c.bucket;
    const char* names[] = {"compute", "comm", "serial", "overlap_wait", "overlap_tested"};
    for (std::size_t v = 0; v < ms.size(); ++v) out[std::string(names[v]) + "_ms"] = ms[v];
    for (std::size_t v = 2; v < ms.size(); ++v) out[std::string(names[v]) + "_vs_compute"] = ms[v] / ms[0];
    // What overlap could at best give: the longer of the two, over compute.
    out["ideal_vs_compute"] = std::max(ms[0], ms[1]) / ms[0];
    out["target"] = nullptr;  // none: see the file's header
    std::cout << out.dump(1) << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "strata-bench-overlap: error: " << e.what() << "\n";
    return 2;
  }
}
