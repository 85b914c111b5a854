// tests/ops/test_operand.cpp: Operand (ops/native/operand.h) borrows a tensor already in the form a kernel
// reads and otherwise owns a contiguous copy with the same values, converted where asked
// (Note [Operands are read where they are]).
#include <doctest/doctest.h>

#include "ops/functions.h"
#include "ops/native/operand.h"

namespace test_operand {  // Note [Test files in unity builds]

using namespace strata;
using ops::Operand;

TEST_CASE("Operand::contiguous borrows a contiguous or undefined tensor and copies a strided one") {
  manual_seed(0);
  const Tensor x = randn({3, 5});
  const Operand same = Operand::contiguous(x);
  CHECK(&*same == &x);

  const Tensor none;
  const Operand undefined = Operand::contiguous(none);
  CHECK(&*undefined == &none);
  CHECK_FALSE(undefined->defined());

  const Tensor xt = t(x);
  const Operand copy = Operand::contiguous(xt);
  CHECK(&*copy != &xt);
  CHECK(copy->is_contiguous());
  CHECK(copy->dtype() == xt.dtype());
  CHECK(copy->sizes() == xt.sizes());
  CHECK(copy->to_vector<float>() == xt.to_vector<float>());
}

TEST_CASE("Operand::in_dtype borrows a tensor of that dtype and converts one of another") {
  manual_seed(1);
  const Tensor x = randn({4, 3});
  const Operand same = Operand::in_dtype(x, ScalarType::Float32);
  CHECK(&static_cast<const Tensor&>(same) == &x);

  for (const Tensor& src : {x, t(x)}) {  // contiguous and transposed sources
    const Operand wide = Operand::in_dtype(src, ScalarType::Float64);
    CHECK(wide->dtype() == ScalarType::Float64);
    CHECK(wide->is_contiguous());
    CHECK(wide->sizes() == src.sizes());
    CHECK(wide->to_vector<double>() == src.to_vector<double>());
  }
}

}  // namespace test_operand
