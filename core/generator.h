// core/generator.h: PyTorch's CPU random generator, bit for bit: a 32-bit Mersenne Twister seeded
// like at::mt19937, random() / random64() draws, and the cached second Box-Muller normal sample.
// The distributions built on it (uniform, normal, randint) are in ops/native/random_ops.cpp.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <random>

#include "dispatch/ivalue.h"

namespace strata {

class GeneratorImpl : public BoxedObject {
 public:
  explicit GeneratorImpl(std::uint64_t seed = 67280421310721ULL) { set_seed(seed); }

  // Reseeds and drops cached normal samples (PyTorch's set_current_seed).
  void set_seed(std::uint64_t seed);
  std::uint64_t seed() const { return seed_; }

  std::uint32_t random() { return engine_(); }
  // Two draws; the first becomes the high half (at::detail::make64BitsFrom32Bits).
  std::uint64_t random64() {
    const std::uint32_t hi = engine_();
    const std::uint32_t lo = engine_();
    return (static_cast<std::uint64_t>(hi) << 32) | lo;
  }

  std::optional<double>& next_double_normal_sample() { return next_double_normal_; }
  std::optional<float>& next_float_normal_sample() { return next_float_normal_; }
  std::mutex& mutex() { return mutex_; }

 private:
  std::mt19937 engine_;  // seeded with the low 32 bits, exactly as at::mt19937(seed)
  std::uint64_t seed_ = 0;
  std::optional<double> next_double_normal_;
  std::optional<float> next_float_normal_;
  std::mutex mutex_;
};

// A handle to a generator (PyTorch's torch.Generator).
class Generator {
 public:
  Generator() : impl_(IntrusivePtr<GeneratorImpl>::make()) {}
  explicit Generator(IntrusivePtr<GeneratorImpl> impl) : impl_(std::move(impl)) {}
  Generator& manual_seed(std::uint64_t seed) {
    impl_->set_seed(seed);
    return *this;
  }
  std::uint64_t initial_seed() const { return impl_->seed(); }
  GeneratorImpl* impl() const { return impl_.get(); }
  const IntrusivePtr<GeneratorImpl>& impl_ptr() const { return impl_; }

 private:
  IntrusivePtr<GeneratorImpl> impl_;
};

// What an op's Generator? argument receives for a front end's `const Generator*`: null for None.
inline GeneratorImpl* generator_of(const Generator* g) { return g ? g->impl() : nullptr; }

// The process-wide default CPU generator, used when an op gets no generator.
Generator& default_generator();
// Seeds the default generator (torch.manual_seed).
void manual_seed(std::uint64_t seed);

}  // namespace strata
