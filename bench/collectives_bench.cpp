// bench/collectives_bench.cpp: strata-bench-collectives, the collectives' timings in nccl-tests'
// format (size count type redop time algbw busbw), 8 B to 64 MiB doubling, for all_reduce (out of
// place, and in place with all_reduce_), all_gather and reduce_scatter on 2 and 4 thread ranks, beside the machine's memcpy bandwidth measured in the
// same run; under `mpirun -np N`, the MPI backend's all_reduce beside raw MPI_Allreduce. With --json,
// the same rows as JSON. Each row is the median, on rank 0, of a collective
// issued and waited for (wait_tensor) by every rank; bus bandwidth is nccl-tests' (algbw times
// 2(n-1)/n for all_reduce, (n-1)/n for all_gather and reduce_scatter).
#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#ifdef STRATA_HAVE_MPI
#include <mpi.h>
#endif

#include "distributed/functional_collectives.h"
#include "distributed/mpi_backend.h"
#include "distributed/process_group.h"
#include "distributed/thread_backend.h"
#include "ops/functions.h"

using namespace strata;

namespace {

using clock_type = std::chrono::steady_clock;

// Iterations for a message of `bytes`: enough to take a few milliseconds, at least 5.
int iterations_for(std::int64_t bytes) { return static_cast<int>(std::clamp<std::int64_t>((std::int64_t{64} << 20) / std::max<std::int64_t>(bytes, 1), 5, 200)); }

double memcpy_gb_per_s() {
  const std::size_t bytes = std::size_t{64} << 20;
  std::vector<char> a(bytes, 1), b(bytes, 0);
  std::vector<double> samples;
  for (int i = 0; i < 9; ++i) {
    const auto t0 = clock_type::now();
    std::memcpy(b.data(), a.data(), bytes);
    samples.push_back(std::chrono::duration<double>(clock_type::now() - t0).count());
    a[static_cast<std::size_t>(i)] = b[static_cast<std::size_t>(i) + 1];  // keep both buffers live
  }
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  return static_cast<double>(bytes) / samples[samples.size() / 2] / 1e9;
}

struct Row {
  std::string collective;
  int ranks;
  std::int64_t bytes, count;
  double time_us, algbw, busbw;
};

// Times `collective` on every size for `ranks` thread ranks; rank 0's medians.
std::vector<Row> measure(const std::string& collective, int ranks) {
  std::vector<Row> rows;
  distributed::spawn(ranks, [&](int rank) {
    for (std::int64_t bytes = 8; bytes <= (std::int64_t{64} << 20); bytes *= 2) {
      // all_gather's size is the output's, as nccl-tests counts it; reduce_scatter's the input's.
      const std::int64_t count = bytes / 4;
      const std::int64_t input_count = collective == "all_gather" ? std::max<std::int64_t>(count / ranks, 1) : count;
      if (collective == "reduce_scatter" && count % ranks != 0) continue;
      const Tensor input = full({input_count}, 1.0);
      auto once = [&] {
        if (collective == "all_reduce") return distributed::wait_tensor(distributed::all_reduce(input, "sum", "0"));
        if (collective == "all_reduce_") return distributed::wait_tensor(distributed::all_reduce_(input, "max", "0"));
        if (collective == "all_gather") return distributed::wait_tensor(distributed::all_gather_into_tensor(input, ranks, "0"));
        return distributed::wait_tensor(distributed::reduce_scatter_tensor(input, "sum", ranks, "0"));
      };
      once();  // warm-up
      const int n = iterations_for(bytes);
      std::vector<double> samples;
      for (int i = 0; i < n; ++i) {
        const auto t0 = clock_type::now();
        once();
        samples.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t0).count());
      }
      if (rank != 0) continue;
      std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
      const double us = samples[samples.size() / 2];
      const double algbw = static_cast<double>(bytes) / us / 1e3;
      const double factor = collective.rfind("all_reduce", 0) == 0 ? 2.0 * (ranks - 1) / ranks : double(ranks - 1) / ranks;
      rows.push_back(Row{collective, ranks, bytes, count, us, algbw, algbw * factor});
    }
  });
  return rows;
}

#ifdef STRATA_HAVE_MPI
// Under mpirun: all_reduce, all_gather and reduce_scatter through strata (issued and waited for)
// beside the raw non-blocking MPI call it makes (then MPI_Wait) and the blocking one, on the same
// buffers, alternated per iteration; rank 0 prints the rows. The targets: from 1 MiB strata's bus
// bandwidth at least 0.9x raw MPI's, and at 8 B at most 2 us more per call.
int run_mpi(bool json, int argc, char** argv) {
  distributed::init_mpi(&argc, &argv);
  const distributed::ProcessGroup& world = distributed::resolve_process_group("0");
  const int ranks = world.size();
  nlohmann::ordered_json out;
  out["backend"] = "mpi";
  out["ranks"] = ranks;
  auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  for (const std::string collective : {"all_reduce", "all_gather", "reduce_scatter"}) {
    if (!json && world.rank() == 0)
      std::cout << "#\n# strata MPI backend, " << collective << " on " << ranks
                << " ranks, beside the raw non-blocking MPI call it makes (and MPI_Wait) and the blocking one\n#"
                << std::setw(12) << "size" << std::setw(14) << "count" << std::setw(8) << "type" << std::setw(8) << "redop"
                << std::setw(11) << "time" << std::setw(9) << "busbw" << std::setw(11) << "raw time" << std::setw(9) << "raw bw"
                << std::setw(11) << "blocking" << "\n#" << std::setw(61) << "(us)" << std::setw(9) << "(GB/s)" << std::setw(11)
                << "(us)" << std::setw(9) << "(GB/s)" << std::setw(11) << "(us)\n";
    for (std::int64_t bytes = 8; bytes <= (std::int64_t{64} << 20); bytes *= 2) {
      // nccl-tests' sizes: all_gather's is the output's, reduce_scatter's the input's.
      const std::int64_t count = bytes / 4;
      if (count % ranks != 0) continue;
      const std::int64_t in_count = collective == "all_gather" ? count / ranks : count;
      const std::int64_t out_count = collective == "reduce_scatter" ? count / ranks : count;
      const int per_rank = static_cast<int>(count / ranks);
      const Tensor input = full({in_count}, 1.0), raw_out = empty({out_count});
      void* in = input.impl()->data();
      void* raw = raw_out.impl()->data();
      auto ours = [&] {
        if (collective == "all_reduce") return distributed::wait_tensor(distributed::all_reduce(input, "sum", "0"));
        if (collective == "all_gather") return distributed::wait_tensor(distributed::all_gather_into_tensor(input, ranks, "0"));
        return distributed::wait_tensor(distributed::reduce_scatter_tensor(input, "sum", ranks, "0"));
      };
      auto nonblocking = [&] {
        MPI_Request r;
        if (collective == "all_reduce") MPI_Iallreduce(in, raw, static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &r);
        else if (collective == "all_gather") MPI_Iallgather(in, per_rank, MPI_FLOAT, raw, per_rank, MPI_FLOAT, MPI_COMM_WORLD, &r);
        else MPI_Ireduce_scatter_block(in, raw, per_rank, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
      };
      auto blocking = [&] {
        if (collective == "all_reduce") MPI_Allreduce(in, raw, static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        else if (collective == "all_gather") MPI_Allgather(in, per_rank, MPI_FLOAT, raw, per_rank, MPI_FLOAT, MPI_COMM_WORLD);
        else MPI_Reduce_scatter_block(in, raw, per_rank, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      };
      auto timed = [](auto&& fn) {
        MPI_Barrier(MPI_COMM_WORLD);
        const auto t0 = clock_type::now();
        fn();
        return std::chrono::duration<double, std::micro>(clock_type::now() - t0).count();
      };
      std::vector<double> a, b, c;
      const int n = iterations_for(bytes);
      for (int i = 0; i < n + 1; ++i) {  // the three alternate, so they see the same load; the first is a warm-up
        const double ta = timed(ours), tb = timed(nonblocking), tc = timed(blocking);
        if (i == 0) continue;
        a.push_back(ta);
        b.push_back(tb);
        c.push_back(tc);
      }
      const double us = median(a), raw_us = median(b), blocking_us = median(c);
      const double factor = collective == "all_reduce" ? 2.0 * (ranks - 1) / ranks : double(ranks - 1) / ranks;
      const double busbw = static_cast<double>(bytes) / us / 1e3 * factor;
      const double raw_busbw = static_cast<double>(bytes) / raw_us / 1e3 * factor;
      out["rows"].push_back({{"collective", collective}, {"size", bytes}, {"count", count}, {"type", "float"}, {"time_us", us},
                             {"busbw", busbw}, {"raw_time_us", raw_us}, {"raw_busbw", raw_busbw},
                             {"busbw_vs_raw", busbw / raw_busbw}, {"added_us", us - raw_us}, {"blocking_time_us", blocking_us}});
      if (!json && world.rank() == 0)
        std::cout << std::setw(13) << bytes << std::setw(14) << count << std::setw(8) << "float" << std::setw(8)
                  << (collective == "all_gather" ? "none" : "sum") << std::fixed << std::setprecision(2) << std::setw(11) << us
                  << std::setw(9) << busbw << std::setw(11) << raw_us << std::setw(9) << raw_busbw << std::setw(11) << blocking_us
                  << "\n";
    }
  }
  if (json && world.rank() == 0) std::cout << out.dump(1) << "\n";
  distributed::finalize_mpi();
  return 0;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  const bool json = argc > 1 && std::string(argv[1]) == "--json";
  if (argc > 2 || (argc == 2 && !json)) {
    std::cerr << "usage: strata-bench-collectives [--json]\n";
    return 2;
  }
  try {
#ifdef STRATA_HAVE_MPI
    if (std::getenv("OMPI_COMM_WORLD_SIZE")) return run_mpi(json, argc, argv);  // launched by mpirun
#endif
    const double memcpy_bw = memcpy_gb_per_s();
    std::vector<Row> rows;
    for (const char* collective : {"all_reduce", "all_reduce_", "all_gather", "reduce_scatter"})
      for (const int ranks : {2, 4}) {
        const std::vector<Row> r = measure(collective, ranks);
        rows.insert(rows.end(), r.begin(), r.end());
      }
    if (json) {
      nlohmann::ordered_json out;
      out["backend"] = "threads";
      out["memcpy_64mib_gb_per_s"] = memcpy_bw;
      for (const Row& r : rows)
        out["rows"].push_back({{"collective", r.collective}, {"ranks", r.ranks}, {"size", r.bytes}, {"count", r.count},
                               {"type", "float"}, {"time_us", r.time_us}, {"algbw", r.algbw}, {"busbw", r.busbw}});
      // The target's figure: in place, as nccl-tests' in-place column, so that it times the collective
      // and not a fresh 64 MiB output's page faults.
      for (const Row& r : rows)
        if (r.ranks == 2 && r.bytes == (std::int64_t{64} << 20)) out[r.collective + "_64mib_2ranks_busbw_vs_memcpy"] = r.busbw / memcpy_bw;
      std::cout << out.dump(1) << "\n";
      return 0;
    }
    std::cout << "# strata thread backend; memcpy (64 MiB, same run): " << std::fixed << std::setprecision(2) << memcpy_bw
              << " GB/s\n";
    std::string current;
    for (const Row& r : rows) {
      const std::string title = (r.collective == "all_reduce_" ? std::string("all_reduce_ (in place)") : r.collective) + " on " +
                                std::to_string(r.ranks) + " ranks";
      if (title != current) {
        current = title;
        std::cout << "#\n# " << title << "\n#" << std::setw(12) << "size" << std::setw(14) << "count" << std::setw(8) << "type"
                  << std::setw(8) << "redop" << std::setw(11) << "time" << std::setw(9) << "algbw" << std::setw(9) << "busbw\n"
                  << "#" << std::setw(12) << "(B)" << std::setw(14) << "(elements)" << std::setw(27) << "(us)" << std::setw(9)
                  << "(GB/s)" << std::setw(9) << "(GB/s)\n";
      }
      std::cout << std::setw(13) << r.bytes << std::setw(14) << r.count << std::setw(8) << "float" << std::setw(8)
                << (r.collective == "all_gather" ? "none" : r.collective == "all_reduce_" ? "max" : "sum") << std::setw(11) << std::setprecision(2) << r.time_us
                << std::setw(9) << r.algbw << std::setw(9) << r.busbw << "\n";
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "strata-bench-collectives: error: " << e.what() << "\n";
    return 2;
  }
}
