// tests/install/app/app.cpp: an app that uses each public capability of an installed strata, built
// by tests/install/test_install.sh in each supported way. It prints a line (or a block) per
// capability, which the test compares with expected_output.txt exactly. Its own folders named like
// strata's (core/, ops/, modes/, tracer/, distributed/) are on its include path, and strata's
// installed headers must never pick them up.
#include <cstdint>
#include <iostream>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <strata/strata.h>

#include "core/tensor.h"
#include "ddp_check.h"
#include "distributed/data_parallel.h"
#include "modes/debug_mode.h"
#include "ops/functions.h"
#include "tracer/program_trace.h"

using namespace strata;

namespace {

// The ops of a trace's symbols, depth first, space-separated.
void append_ops(const std::vector<tracer::BoundSymbol>& symbols, std::string& out) {
  for (const tracer::BoundSymbol& sym : symbols) {
    if (sym.kind == tracer::BoundSymbol::Kind::Op) out += " " + sym.name;
    append_ops(sym.subsymbols, out);
  }
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

}  // namespace

int main() {
  std::cout << "app headers: " << app::core_name() << " " << app::ops_name() << " " << app::modes_name() << " "
            << app::tracer_name() << " " << app::distributed_name() << "\n";

  // nn and autograd: the registrations made it into the link.
  manual_seed(0);
  auto model = nn::make_mlp({4, 8, 3});
  backward(nn::functional::cross_entropy((*model)(randn({5, 4})), tensor<std::int64_t>({0, 1, 2, 1, 0})));
  std::cout << "autograd: " << add(tensor({1.0f, 2.0f}), tensor({3.0f, 4.0f})) << " grad of "
            << model->parameters()[0].grad().numel() << " elements\n";

  const Tensor a = tensor<float>({1, -2, 3, -4, 5, -6}, {2, 3});
  const Tensor b = ones({3, 2});

  // DebugMode: each op as a log line, and as JSON.
  tracer::DebugMode debug;
  {
    tracer::DebugMode::Guard guard(debug);
    relu(mm(a, b));
  }
  const nlohmann::ordered_json debug_json = debug.to_json();
  std::cout << "DebugMode (" << debug_json["schema"].get<std::string>() << ", " << debug_json["calls"].size()
            << " calls):\n" << debug.debug_string() << "\n";

  // FakeTensorMode: a 40 GB matrix product without a byte of data.
  {
    tracer::FakeTensorMode fake;
    ModeGuard guard(fake);
    const Tensor y = mm(randn({100000, 100000}), randn({100000, 10}));
    std::cout << "FakeTensorMode: " << y.str() << " on " << y.device() << ", fake "
              << tracer::FakeTensor::is_fake(y) << "\n";
  }

  // FlopCounterMode: 2 * 8 * 16 * 32 for the product, per phase as JSON.
  tracer::FlopCounterMode flops;
  {
    tracer::FlopCounterMode::Guard guard(flops);
    mm(ones({8, 16}), ones({16, 32}));
  }
  std::cout << "FlopCounterMode: " << flops.get_total_flops() << " " << flops.to_json()["phases"].dump() << "\n";

  // The profiler: a user scope and the ops in it, in the order they first ran.
  {
    profiler::Profiler prof;
    {
      profiler::record_function scope("app_scope");
      relu(mm(a, b));
    }
    std::vector<std::string> rows;
    for (const profiler::EventAverage& row : prof.key_averages()) rows.push_back(row.key + " x" + std::to_string(row.count));
    std::cout << "profiler: " << joined(rows) << ", " << prof.chrome_trace()["traceEvents"].size() << " trace events\n";
  }

  // A program trace: the forward as the program ran it, the backward autograd ran for it.
  {
    const tracer::RecordedProgram r = tracer::record_program(
        [](std::span<const Tensor> in) { return std::vector<Tensor>{sum(mul(in[0], in[1]))}; },
        {{"x", tensor({1.0f, 2.0f, 3.0f})}, {"w", requires_grad_(tensor({4.0f, 5.0f, 6.0f}))}}, "app");
    std::string forward, backward_ops;
    append_ops(r.forward.symbols, forward);
    append_ops(r.backward->symbols, backward_ops);
    std::cout << "program trace: forward" << forward << "; backward" << backward_ops << "; grad w "
              << r.gradients[1] << "\n";
  }

  // LoggingTensor: a wrapper subclass that logs each op reaching it.
  {
    auto log = std::make_shared<tracer::LoggingTensor::Log>();
    const Tensor x = tracer::LoggingTensor::wrap(tensor({1.0f, -2.0f, 3.0f}), log);
    const Tensor y = relu(mul(x, x));
    std::cout << "LoggingTensor: " << y.str() << " logged " << joined(*log) << "\n";
  }

  // ScaledTensor: float8 data with a float32 scale (448 / max |x|); mm on it runs aten::_scaled_mm on
  // the float8 data, so 3 counts as 320 / 112.
  {
    const Tensor s = tracer::ScaledTensor::from_float(tensor({1.0f, 2.0f, 3.0f, 4.0f}, {1, 4}));
    std::cout << "ScaledTensor: scale " << tracer::ScaledTensor::of(s)->scale() << ", value "
              << tracer::ScaledTensor::to_float(s) << ", mm with ones " << mm(s, ones({4, 1})) << "\n";
  }

  // Collectives on threads: two ranks, one all_reduce.
  {
    std::vector<std::string> got(2);
    distributed::spawn(2, [&](int rank) {
      const Tensor mine = full({2}, static_cast<double>(rank + 1));
      got[static_cast<std::size_t>(rank)] = distributed::wait_tensor(distributed::all_reduce(mine, "sum", "0")).str();
    });
    std::cout << "all_reduce on 2 threads: rank 0 " << got[0] << ", rank 1 " << got[1] << "\n";
  }

  // DistributedDataParallel on two thread ranks (ddp_check.h).
  {
    const app::DdpCase ddp_case = app::make_ddp_case();
    std::vector<std::shared_ptr<nn::Module>> models{app::rank_model(ddp_case, 0), app::rank_model(ddp_case, 1)};
    std::vector<std::string> verdicts(2);
    distributed::spawn(2, [&](int rank) {
      verdicts[static_cast<std::size_t>(rank)] = app::check_ddp(ddp_case, models[static_cast<std::size_t>(rank)], rank, 2);
    });
    std::cout << "DistributedDataParallel on 2 threads: rank 0 " << verdicts[0] << ", rank 1 " << verdicts[1] << "\n";
  }
}
