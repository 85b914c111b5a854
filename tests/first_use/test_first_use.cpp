// tests/first_use/test_first_use.cpp: a subclass tensor made and used in a process where nothing has
// registered the interposer yet (Note [Registration on first use]): a fake used outside its mode
// before any mode was entered, and a make_subclass tensor before any wrapper or mode. Registration
// happens once per process, so meson runs each test case in a process of its own (--test-case).
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/interpose/subclass.h"
#include "ops/functions.h"
#include "modes/fake_tensor.h"
#include "tests/test_helpers.h"

using namespace strata;

TEST_CASE("a fake made before any mode was entered runs ops outside the mode") {
  tracer::FakeTensorMode mode;
  const Tensor x = mode.from_tensor(randn({2, 3}));
  const Tensor y = add(x, x);
  CHECK(tracer::FakeTensor::is_fake(y));
  CHECK(y.sizes() == x.sizes());
}

TEST_CASE("a make_subclass tensor made before any wrapper or mode reaches its handler") {
  auto* payload = new testing::LoggingSubclass("Logged", /*rewraps=*/false);
  const std::shared_ptr<std::vector<std::string>> log = payload->log;
  const Tensor x = make_subclass(IntrusivePtr<TensorSubclass>(payload), tensor<float>({1, -2}));
  CHECK(relu(x).to_vector<float>() == std::vector<float>{1, 0});
  CHECK(*log == std::vector<std::string>{"aten.relu.default"});
}
