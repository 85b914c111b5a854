// tests/install/app/app.cpp: the smallest strata app, built by tests/install/test_install.sh against
// the installed prefix in each supported way. It has folders core/ and ops/ of its own, on its
// include path, which strata's installed headers must never pick up.
#include <iostream>

#include <strata/strata.h>

#include "core/tensor.h"
#include "ops/functions.h"

int main() {
  using namespace strata;
  manual_seed(0);
  auto model = nn::make_mlp({4, 8, 3});
  Tensor x = randn({5, 4});
  Tensor loss = nn::functional::cross_entropy((*model)(x), tensor<std::int64_t>({0, 1, 2, 1, 0}));
  backward(loss);  // the autograd registrations made it into the link
  std::cout << app::core_name() << " " << app::ops_name() << " " << add(tensor({1.0f, 2.0f}), tensor({3.0f, 4.0f}))
            << " grad " << model->parameters()[0].grad().numel() << "\n";
}
