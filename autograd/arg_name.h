// autograd/arg_name.h: the name a backward formula reads an argument, saved tensor or geometry by
// ("mat2", "alpha", "result"), hashed when the formula is compiled.
#pragma once

#include <cstdint>
#include <string_view>

namespace strata::autograd {

// Note [Formulas name what they read; rows resolve the names once]
// Formulas read what they need by name, as derivatives.yaml does (c.saved("mat2"), c.integer("dim")),
// which keeps each row next to the yaml line it copies. Comparing strings on every backward call
// would cost more than some formulas' own work, so the names are hashed instead: a formula's name
// when it is compiled (ArgName's constructor is consteval, so only literals can be names), and a
// row's non-tensor schema argument, saved and geometry names once, when the derivative table is
// built, which also checks that no two names of one row share a hash. A lookup then compares a few
// integers. (A node keeps only the non-tensor arguments; a tensor a formula reads is saved by name.)
constexpr std::uint32_t hash_name(std::string_view name) {
  std::uint32_t h = 2166136261u;  // FNV-1a
  for (const char c : name) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return h;
}

class ArgName {
 public:
  consteval ArgName(const char* name) : name_(name), hash_(hash_name(name)) {}  // implicit: c.saved("mat2")
  std::string_view str() const { return name_; }
  std::uint32_t hash() const { return hash_; }

 private:
  std::string_view name_;
  std::uint32_t hash_;
};

}  // namespace strata::autograd
