// tests/modes/test_dispatch_views.cpp: the observable machinery on real ops, as golden text: the
// dispatch table of aten::addmm once autograd is registered, and the dispatch trace of a forward
// step under a dispatch mode, where relu's saved output shows up as a detach sent to the Python key
// from inside the Autograd handler.
#include <sstream>

#include "autograd/registration.h"
#include "autograd/variable.h"
#include "ops/functions.h"
#include "ops/op_table.h"
#include "tests/test_helpers.h"
#include "modes/op_counter.h"

namespace test_dispatch_views {  // Note [Test files in unity builds]

using namespace strata;

TEST_CASE("the dispatch table of addmm lists what runs at each key") {
  autograd::register_autograd();
  register_interposer();  // as the first mode or wrapper tensor does
  CHECK(Dispatcher::singleton().dump_table(ops::op("aten::addmm")) ==
        "aten.addmm.default: addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor\n"
        "  Autograd fallback autograd\n"
        "  Python   fallback interposer\n"
        "  Meta     kernel meta\n"
        "  CPU      kernel addmm\n");
}

TEST_CASE("the dispatch trace of linear + relu under a mode matches the golden text") {
  const Tensor w = randn({4, 3}), b = randn({4}), x = randn({2, 3});
  requires_grad_(w);
  requires_grad_(b);
  tracer::OpCounter counter;
  std::ostringstream out;
  {
    ModeGuard mode(counter);
    DispatchTraceGuard trace(out);
    relu(addmm(b, x, t(w)));
  }
  CHECK(out.str() == testing::read_text(testing::golden_path("dispatch_trace_linear_relu.txt")));
}

}  // namespace test_dispatch_views
