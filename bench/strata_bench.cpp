// bench/strata_bench.cpp: strata-bench. Times the dispatch path of a tiny op, matrix products, MLP
// training steps, MLP inference, loading weights, the cached sharding propagation
// (bench/sharding_bench.cpp), the DTensor op overhead (bench/dtensor_bench.cpp) and strata-lm's model
// (bench/lm_bench.cpp), each beside the same work hand-written in Eigen (or done with plain read(), a
// plain hash-map lookup, the op on plain tensors, or run.c's loops) in the same run, and prints one flat JSON object (medians; ratios are strata time /
// baseline time unless named otherwise). `strata-bench --only dtensor` runs one group.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <new>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "autograd/backward.h"
#include "autograd/grad_mode.h"
#include "autograd/variable.h"
#include "bench/dtensor_bench.h"
#include "bench/eigen_baselines.h"
#include "bench/lm_bench.h"
#include "bench/parallel_step_bench.h"
#include "bench/sharding_bench.h"
#include "bench/timing.h"
#include "core/inference_mode.h"
#include "core/parallel.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "nn/safetensors.h"
#include "ops/functions.h"
#include "optim/sgd.h"
#include "modes/fake_tensor.h"
#include "modes/flop_counter.h"
#include "modes/debug_mode.h"
#include "modes/logging_tensor.h"
#include "modes/op_counter.h"
#include "tracer/cli/mlp_experiment.h"

// Count every allocation made through operator new (tensors, storages, nodes, boxed lists).
// (GCC's -Wmismatched-new-delete cannot see that these replacements pair malloc with free.)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  strata::bench::allocation_count.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, std::align_val_t a) {
  strata::bench::allocation_count.fetch_add(1, std::memory_order_relaxed);
  const std::size_t align = static_cast<std::size_t>(a);
  if (void* p = std::aligned_alloc(align, (n + align - 1) / align * align)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace {

using namespace strata;
using strata::bench::median_ns;
namespace F = strata::nn::functional;

using strata::bench::keep;
using strata::bench::round3;

bench::RowMatrix eigen_random(Eigen::Index r, Eigen::Index c) { return bench::RowMatrix::Random(r, c); }

void dispatch_benchmarks(nlohmann::ordered_json& out) {
  const Tensor a = tensor<float>({1.5f}), b = tensor<float>({2.5f});
  Eigen::ArrayXf ea(1), eb(1);
  ea << 1.5f;
  eb << 2.5f;
  const bench::Paired add_1 = bench::paired_median_ns([&] { keep(add(a, b)); },
                                                      [&] {
                                                        Eigen::ArrayXf c = ea + eb;
                                                        keep(c);
                                                      });
  out["dispatch_add_1elem_ns"] = round3(add_1.a_ns);
  out["add_1elem_eigen_ns"] = round3(add_1.b_ns);
  const Tensor g = tensor<float>({1.5f});
  requires_grad_(g);
  out["dispatch_add_1elem_grad_ns"] = round3(median_ns([&] { keep(add(g, b)); }));
}

void mm_benchmarks(nlohmann::ordered_json& out) {
  struct Shape {
    const char* key;
    std::int64_t n, k, p;
  };
  for (const Shape s : {Shape{"mm_8x16x32", 8, 16, 32}, Shape{"mm_256x512x512", 256, 512, 512}}) {
    const Tensor x = randn({s.n, s.k}), w = randn({s.k, s.p});
    const bench::RowMatrix ex = eigen_random(s.n, s.k), ew = eigen_random(s.k, s.p);
    const bench::Paired r = bench::paired_median_ns([&] { keep(mm(x, w)); },
                                                    [&] {
                                                      bench::RowMatrix c = ex * ew;
                                                      keep(c);
                                                    },
                                                    15);
    const std::string key = s.key;
    out[key + "_us"] = round3(r.a_ns / 1000);
    out[key + "_eigen_us"] = round3(r.b_ns / 1000);
    out[key + "_speed_vs_eigen"] = round3(1 / r.ratio);
  }
  // _scaled_mm on float8 operands of the same shape and layout, paired with the float32 mm in the
  // same run (Note [_scaled_mm on CPU]: it dequantizes both operands, then runs the float32 product).
  const Tensor x = randn({256, 512}), w = randn({512, 512});
  const Tensor xq = x.to(ScalarType::Float8_e4m3fn), wq = w.to(ScalarType::Float8_e4m3fn);
  const Tensor one = scalar_tensor(1.0, ScalarType::Float32);
  const bench::Paired r = bench::paired_median_ns([&] { keep(_scaled_mm(xq, wq, one, one, {}, {}, ScalarType::Float32)); },
                                                  [&] { keep(mm(x, w)); }, 15);
  out["scaled_mm_256x512x512_us"] = round3(r.a_ns / 1000);
  out["scaled_mm_256x512x512_float_mm_us"] = round3(r.b_ns / 1000);
  out["scaled_mm_256x512x512_vs_float_mm"] = round3(r.ratio);
}

struct StepSetup {
  std::shared_ptr<nn::Sequential> model;
  Tensor x, y;
  std::vector<std::int64_t> labels;
};

StepSetup make_step(const std::vector<std::int64_t>& sizes, std::int64_t batch) {
  const tracer::MlpConfig config{0, sizes, batch, 0.1};
  StepSetup s;
  manual_seed(0);
  s.model = nn::make_mlp(sizes);
  std::tie(s.x, s.y) = tracer::make_batch(config);
  s.labels = s.y.to_vector<std::int64_t>();
  return s;
}

// zero_grad, forward, cross_entropy, backward, SGD step: the seed's training step.
void train_step(nn::Module& model, optim::SGD& opt, const Tensor& x, const Tensor& y) {
  opt.zero_grad();
  const Tensor loss = F::cross_entropy(model(x), y);
  backward(loss);
  opt.step();
}

bench::RowMatrix to_eigen(const Tensor& t) {
  const std::vector<float> v = t.to_vector<float>();
  return Eigen::Map<const bench::RowMatrix>(v.data(), t.size(0), t.size(1));
}

void step_benchmarks(nlohmann::ordered_json& out) {
  // The seed: 16-32-4, batch 8.
  StepSetup seed = make_step({16, 32, 4}, 8);
  optim::SGD opt(seed.model->parameters(), {.lr = 0.1});
  bench::EigenMlp eigen_seed({16, 32, 4}, 1);
  const bench::RowMatrix ex = to_eigen(seed.x);
  const bench::Paired seed_step = bench::paired_median_ns([&] { train_step(*seed.model, opt, seed.x, seed.y); },
                                                          [&] { keep(eigen_seed.train_step(ex, seed.labels, 0.1f)); });
  const double step = seed_step.a_ns / 1000;
  out["seed_step_us"] = round3(step);
  out["seed_step_eigen_us"] = round3(seed_step.b_ns / 1000);
  out["seed_step_vs_eigen"] = round3(seed_step.ratio);
  out["seed_step_allocations"] =
      round3(bench::allocations_per_call([&] { train_step(*seed.model, opt, seed.x, seed.y); }));
  bench::parallel_step_benchmarks(out, step);

  const bench::Paired forward = bench::paired_median_ns(
      [&] {
        autograd::NoGradGuard no_grad;
        keep((*seed.model)(seed.x));
      },
      [&] { keep(eigen_seed.forward(ex)); });
  out["seed_forward_us"] = round3(forward.a_ns / 1000);
  out["seed_forward_eigen_us"] = round3(forward.b_ns / 1000);

  // The same step under an OpCounter (paired with the plain step), and with LoggingTensor parameters.
  const bench::Paired counted = bench::paired_median_ns(
      [&] {
        tracer::OpCounter counter;
        ModeGuard mode(counter);
        train_step(*seed.model, opt, seed.x, seed.y);
      },
      [&] { train_step(*seed.model, opt, seed.x, seed.y); });
  out["seed_step_opcounter_us"] = round3(counted.a_ns / 1000);
  auto log = std::make_shared<tracer::LoggingTensor::Log>();
  std::vector<Tensor> params;
  for (const Tensor& p : seed.model->parameters())
    params.push_back(tracer::LoggingTensor::wrap(clone(p), log, /*requires_grad=*/true));
  optim::SGD wrapped_opt(params, {.lr = 0.1});
  const Tensor wx = tracer::LoggingTensor::wrap(seed.x, log), wy = tracer::LoggingTensor::wrap(seed.y, log);
  out["seed_step_loggingtensor_us"] = round3(median_ns([&] {
                                              wrapped_opt.zero_grad();
                                              const Tensor h = F::relu(F::linear(wx, params[0], params[1]));
                                              backward(F::cross_entropy(F::linear(h, params[2], params[3]), wy));
                                              wrapped_opt.step();
                                              log->clear();
                                            }) /
                                            1000);
  out["opcounter_overhead"] = round3(counted.ratio);

  // The same step on fake parameters and batch, under FakeTensorMode (meta functions only, no data),
  // and the real step under a FlopCounterMode; each paired with the plain step.
  tracer::FakeTensorMode fake;
  std::shared_ptr<nn::Sequential> fake_model;
  Tensor fx, fy;
  {
    ModeGuard mode(fake);
    manual_seed(0);
    fake_model = nn::make_mlp({16, 32, 4});
    fx = fake.from_tensor(seed.x), fy = fake.from_tensor(seed.y);
  }
  optim::SGD fake_opt(fake_model->parameters(), {.lr = 0.1});
  const bench::Paired faked = bench::paired_median_ns(
      [&] {
        ModeGuard mode(fake);
        train_step(*fake_model, fake_opt, fx, fy);
      },
      [&] { train_step(*seed.model, opt, seed.x, seed.y); });
  out["seed_step_fake_us"] = round3(faked.a_ns / 1000);
  out["seed_step_fake_vs_plain"] = round3(faked.ratio);
  const bench::Paired flops = bench::paired_median_ns(
      [&] {
        tracer::FlopCounterMode counter;
        tracer::FlopCounterMode::Guard guard(counter);  // with its module tracker, as upstream's `with`
        train_step(*seed.model, opt, seed.x, seed.y);
      },
      [&] { train_step(*seed.model, opt, seed.x, seed.y); });
  out["seed_step_flops_us"] = round3(flops.a_ns / 1000);
  out["seed_step_flops_vs_plain"] = round3(flops.ratio);
  // The same step under DebugMode: every option off but recording itself (upstream's record_output is
  // on by default; the CLI's plain log has it off), paired with the plain step.
  const bench::Paired debugged = bench::paired_median_ns(
      [&] {
        tracer::DebugMode mode({.record_output = false});
        tracer::DebugMode::Guard guard(mode);
        train_step(*seed.model, opt, seed.x, seed.y);
      },
      [&] { train_step(*seed.model, opt, seed.x, seed.y); });
  out["seed_step_debugmode_us"] = round3(debugged.a_ns / 1000);
  out["seed_step_debugmode_plain_us"] = round3(debugged.b_ns / 1000);
  out["debugmode_overhead"] = round3(debugged.ratio);

  // A wider MLP where the matrix products dominate: 784-512-512-10, batch 256.
  StepSetup wide = make_step({784, 512, 512, 10}, 256);
  optim::SGD wide_opt(wide.model->parameters(), {.lr = 0.01});
  bench::EigenMlp eigen_wide({784, 512, 512, 10}, 2);
  const bench::RowMatrix wx_eigen = to_eigen(wide.x);
  const bench::Paired wide_step = bench::paired_median_ns(
      [&] { train_step(*wide.model, wide_opt, wide.x, wide.y); },
      [&] { keep(eigen_wide.train_step(wx_eigen, wide.labels, 0.01f)); }, 15, 20);
  out["mlp784_b256_step_us"] = round3(wide_step.a_ns / 1000);
  out["mlp784_b256_step_eigen_us"] = round3(wide_step.b_ns / 1000);
  out["mlp784_b256_step_speed_vs_eigen"] = round3(1 / wide_step.ratio);
}

// A 784-128-10 MLP forward under InferenceMode, at batch 1 (latency) and batch 64 (throughput),
// beside the same forward hand-written in Eigen.
void inference_benchmarks(nlohmann::ordered_json& out) {
  manual_seed(0);
  const std::shared_ptr<nn::Sequential> model = nn::make_mlp({784, 128, 10});
  bench::EigenMlp eigen({784, 128, 10}, 3);
  for (const std::int64_t batch : {1, 64}) {
    const Tensor x = randn({batch, 784});
    const bench::RowMatrix ex = to_eigen(x);
    const bench::Paired r = bench::paired_median_ns(
        [&] {
          InferenceMode guard;
          keep((*model)(x));
        },
        [&] { keep(eigen.forward(ex)); });
    const std::string key = "mlp784_128_10_b" + std::to_string(batch) + "_inference";
    out[key + "_us"] = round3(r.a_ns / 1000);
    out[key + "_eigen_us"] = round3(r.b_ns / 1000);
    out[key + "_vs_eigen"] = round3(r.ratio);
  }
}

// Loading 100 MB of weights from safetensors (the file is mapped and the data used in place) beside
// reading the same file into memory with read(); then each followed by a pass over every element,
// which makes the mapping fault its pages in. The file sits in the page cache for both.
void load_benchmarks(nlohmann::ordered_json& out) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("strata-bench-" + std::to_string(::getpid()) + ".safetensors");
  constexpr std::int64_t kFloats = std::int64_t{25} << 20;  // 100 MiB of float32
  save_safetensors(path.string(), {{"weight", randn({kFloats})}});
  const auto file_bytes = static_cast<std::size_t>(std::filesystem::file_size(path));
  std::vector<char> buffer(file_bytes);
  auto read_all = [&] {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    std::size_t done = 0;
    while (fd >= 0 && done < file_bytes) {
      const ssize_t n = ::read(fd, buffer.data() + done, file_bytes - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    if (fd >= 0) ::close(fd);
    if (done != file_bytes) throw std::runtime_error("strata-bench: could not read " + path.string());
  };
  auto sum_floats = [](const float* p, std::int64_t n) {
    float s = 0;
    for (std::int64_t i = 0; i < n; ++i) s += p[i];
    return s;
  };
  const std::int64_t header = 8 + static_cast<std::int64_t>(*reinterpret_cast<const std::uint64_t*>(buffer.data()));
  const bench::Paired load = bench::paired_median_ns([&] { keep(load_safetensors(path.string())); }, read_all, 9);
  const bench::Paired touched = bench::paired_median_ns(
      [&] {
        const SafetensorsFile f = load_safetensors(path.string());
        keep(sum_floats(f.tensors.at("weight").data_ptr<float>(), kFloats));
      },
      [&] {
        read_all();
        keep(sum_floats(reinterpret_cast<const float*>(buffer.data() + header), kFloats));
      },
      9);
  std::filesystem::remove(path);
  out["safetensors_load_100mb_us"] = round3(load.a_ns / 1000);
  out["read_100mb_us"] = round3(load.b_ns / 1000);
  out["safetensors_load_vs_read"] = round3(load.ratio);
  out["safetensors_load_and_sum_100mb_us"] = round3(touched.a_ns / 1000);
  out["read_and_sum_100mb_us"] = round3(touched.b_ns / 1000);
  out["safetensors_load_and_sum_vs_read_and_sum"] = round3(touched.ratio);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc >= 2 && std::string(argv[1]) == "--peak-rss") return bench::peak_rss_main(argc, argv);
    // --only GROUP: dispatch, mm, step, inference, load, sharding, dtensor or lm.
    const std::string only = argc == 3 && std::string(argv[1]) == "--only" ? argv[2] : "";
    if (argc != 1 && only.empty()) {
      std::cerr << "usage: strata-bench [--only dispatch|mm|step|inference|load|sharding|dtensor|lm]\n";
      return 2;
    }
    const auto want = [&](const char* group) { return only.empty() || only == group; };
    nlohmann::ordered_json out;
    out["threads"] = get_num_threads();
    if (want("dispatch")) dispatch_benchmarks(out);
    if (want("mm")) mm_benchmarks(out);
    if (want("step")) step_benchmarks(out);
    if (want("inference")) inference_benchmarks(out);
    if (want("load")) load_benchmarks(out);
    if (want("sharding")) bench::sharding_benchmarks(out);
    if (want("dtensor")) bench::dtensor_benchmarks(out);
    if (want("lm")) bench::lm_benchmarks(out);
    std::cout << out.dump(2) << std::endl;
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "strata-bench: error: " << e.what() << "\n";
    return 2;
  }
}
