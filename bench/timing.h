// bench/timing.h: timing helpers for strata-bench. A measurement runs `fn` in batches sized to take
// about a millisecond, and reports the median time per call over the batches (the machine is shared
// and noisy: medians, not means). Allocations are counted by the benchmark's operator new.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <vector>

namespace strata::bench {

inline std::atomic<std::uint64_t> allocation_count{0};

// Keeps a result alive so the compiler cannot drop the work.
template <typename T>
void keep(const T& value) {
  asm volatile("" : : "g"(&value) : "memory");
}

// Three significant digits, for the JSON.
inline double round3(double x) {
  if (x == 0 || !std::isfinite(x)) return x;
  const double scale = std::pow(10.0, 2 - static_cast<int>(std::floor(std::log10(std::abs(x)))));
  return std::round(x * scale) / scale;
}

// Median nanoseconds per call of fn(), over `batches` batches.
template <typename Fn>
double median_ns(Fn&& fn, int batches = 31, double batch_ms = 2.0) {
  using clock = std::chrono::steady_clock;
  // Calibrate the batch size so one batch takes about batch_ms.
  std::int64_t per_batch = 1;
  while (true) {
    const auto t0 = clock::now();
    for (std::int64_t i = 0; i < per_batch; ++i) fn();
    const double ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    if (ms >= batch_ms || per_batch >= (std::int64_t{1} << 24)) break;
    per_batch *= ms < batch_ms / 8 ? 8 : 2;
  }
  std::vector<double> samples;
  for (int b = 0; b < batches; ++b) {
    const auto t0 = clock::now();
    for (std::int64_t i = 0; i < per_batch; ++i) fn();
    samples.push_back(std::chrono::duration<double, std::nano>(clock::now() - t0).count() / static_cast<double>(per_batch));
  }
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  return samples[samples.size() / 2];
}

struct Paired {
  double a_ns;   // median per call of a()
  double b_ns;   // median per call of b()
  double ratio;  // median over rounds of a/b, measured back to back
  // The least batch of each, a/b: load only ever lengthens a batch, so on a machine others load
  // heavily this is the steadier figure.
  double min_ratio;
};

// Times a() and b() in alternating batches, so both see the same machine load; on a shared, noisy
// machine the per-round ratio is steadier than either time.
template <typename FnA, typename FnB>
Paired paired_median_ns(FnA&& a, FnB&& b, int rounds = 31, double batch_ms = 2.0) {
  using clock = std::chrono::steady_clock;
  auto calibrate = [&](auto& fn) {
    std::int64_t n = 1;
    while (true) {
      const auto t0 = clock::now();
      for (std::int64_t i = 0; i < n; ++i) fn();
      const double ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
      if (ms >= batch_ms || n >= (std::int64_t{1} << 24)) return n;
      n *= ms < batch_ms / 8 ? 8 : 2;
    }
  };
  const std::int64_t na = calibrate(a), nb = calibrate(b);
  auto batch = [&](auto& fn, std::int64_t n) {
    const auto t0 = clock::now();
    for (std::int64_t i = 0; i < n; ++i) fn();
    return std::chrono::duration<double, std::nano>(clock::now() - t0).count() / static_cast<double>(n);
  };
  std::vector<double> as, bs, ratios;
  for (int r = 0; r < rounds; ++r) {
    const double ta = batch(a, na), tb = batch(b, nb);
    as.push_back(ta);
    bs.push_back(tb);
    ratios.push_back(ta / tb);
  }
  auto median = [](std::vector<double>& v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  const double min_ratio = *std::min_element(as.begin(), as.end()) / *std::min_element(bs.begin(), bs.end());
  return {median(as), median(bs), median(ratios), min_ratio};
}

// Allocations (operator new calls) per call of fn().
template <typename Fn>
double allocations_per_call(Fn&& fn, int calls = 100) {
  fn();  // warm up lazily initialised state
  const std::uint64_t before = allocation_count.load();
  for (int i = 0; i < calls; ++i) fn();
  return static_cast<double>(allocation_count.load() - before) / calls;
}

}  // namespace strata::bench
