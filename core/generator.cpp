// core/generator.cpp: seeding and the default generator.
#include "core/generator.h"

namespace strata {

void GeneratorImpl::set_seed(std::uint64_t seed) {
  seed_ = seed;
  engine_.seed(static_cast<std::uint32_t>(seed & 0xffffffffULL));
  next_double_normal_.reset();
  next_float_normal_.reset();
}

Generator& default_generator() {
  static Generator* generator = new Generator();  // never destroyed, like PyTorch's default generator
  return *generator;
}

void manual_seed(std::uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace strata
