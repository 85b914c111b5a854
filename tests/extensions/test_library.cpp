// tests/extensions/test_library.cpp: custom ops from user code (Library, PyTorch's TORCH_LIBRARY):
// CPU, Meta and Autograd kernels, what modes and the dispatch trace see, and the registration errors.
#include <doctest/doctest.h>

#include <sstream>

#include "autograd/backward.h"
#include "autograd/custom_function.h"
#include "autograd/variable.h"
#include "core/dispatch/dispatch_trace.h"
#include "ops/functions.h"
#include "ops/library.h"
#include "ops/typed_operator.h"
#include "tests/test_helpers.h"

namespace test_library {  // Note [Test files in unity builds]

using namespace strata;
using autograd::AutogradContext;
using autograd::variable_list;
using testing::OpLog;

namespace {
// The worked example: exttest::scale(Tensor x, float s) -> Tensor.
Tensor scale_cpu(const Tensor& x, double s) {
  STRATA_CHECK(x.dtype() == ScalarType::Float32, "scale: expected a float32 tensor, got ", x.dtype());
  const Tensor in = contiguous(x);
  Tensor out = empty_like(in);
  const float* src = in.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  for (std::int64_t i = 0; i < in.numel(); ++i) dst[i] = static_cast<float>(src[i] * s);
  return out;
}
Tensor scale_meta(const Tensor& x, double) { return empty_like(x); }

Tensor scale(const Tensor& x, double s) {
  static const TypedOperator<Tensor(const Tensor&, double)> op("exttest::scale");
  return op(x, s);
}

struct ScaleFn : autograd::Function<ScaleFn> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x, double s) {
    ctx->saved_data["s"] = s;
    const ExcludeKeyGuard below_autograd(DispatchKey::Autograd);  // the op itself, below this kernel
    return scale(x, s);
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    return {scale(g[0], ctx->saved_data["s"].to_double()), Tensor()};
  }
};
Tensor scale_autograd(const Tensor& x, double s) { return ScaleFn::apply(x, s); }

void register_scale() {
  static const bool once = [] {
    Library m("exttest");
    m.def("scale(Tensor x, float s) -> Tensor");
    m.impl<&scale_cpu>("scale", DispatchKey::CPU);
    m.impl<&scale_meta>("scale", DispatchKey::Meta);
    m.impl<&scale_autograd>("scale", DispatchKey::Autograd);
    return true;
  }();
  (void)once;
}

// Kernels with the wrong signature for "scale".
Tensor takes_int(const Tensor& x, std::int64_t) { return x; }
Tensor takes_one(const Tensor& x) { return x; }
std::tuple<Tensor, Tensor> returns_two(const Tensor& x, double) { return {x, x}; }
}  // namespace

TEST_CASE("Library: a user op runs its CPU and Meta kernels and is seen by modes as exttest.scale.default") {
  register_scale();
  CHECK(scale(tensor<float>({1, 2, 3}), 2.0).to_vector<float>() == std::vector<float>{2, 4, 6});
  Tensor m = scale(empty({2, 3}, {ScalarType::Float32, Device::Meta}), 2.0);
  CHECK(m.is_meta());
  CHECK(testing::sizes_of(m) == std::vector<std::int64_t>{2, 3});
  OpLog log;
  {
    ModeGuard guard(log);
    scale(tensor<float>({1.0f}), 3.0);
  }
  // The literal is lifted first, as torch.tensor([1.]) is in PyTorch (Note [A tensor from values is lifted]).
  CHECK(log.ops == std::vector<std::string>{"aten.lift_fresh.default", "exttest.scale.default"});
  const std::string table = Dispatcher::singleton().dump_table(ops::op("exttest::scale"));
  CHECK(table.find("CPU      kernel exttest::scale (CPU)") != std::string::npos);
  CHECK(table.find("Autograd kernel exttest::scale (Autograd)") != std::string::npos);
}

TEST_CASE("Library: an Autograd kernel records through Function<T>; the trace shows every key") {
  register_scale();
  Tensor x = tensor<float>({1, 2});
  requires_grad_(x);
  std::ostringstream trace;
  Tensor y;
  {
    DispatchTraceGuard guard(trace);
    y = scale(x, 3.0);
  }
  CHECK(trace.str() ==
        "exttest.scale.default(f32[2]) [Autograd, CPU] -> Autograd: kernel exttest::scale (Autograd)\n"
        "  exttest.scale.default(f32[2]) [CPU] -> CPU: kernel exttest::scale (CPU)\n"
        "    aten.empty_like.default(f32[2]) [CPU] -> CPU: kernel empty_like\n");  // the kernel's own allocation
  REQUIRE(y.grad_fn() != nullptr);
  CHECK(y.grad_fn()->name() == "ScaleFnBackward");
  OpLog log;
  {
    ModeGuard guard(log);
    backward(sum(scale(x, 3.0)));
  }
  CHECK(x.grad().to_vector<float>() == std::vector<float>{3, 3});
  CHECK(log.ops == std::vector<std::string>{"exttest.scale.default", "aten.sum.default", "aten.ones_like.default",
                                            "aten.expand.default", "exttest.scale.default", "aten.detach.default",
                                            "aten.detach.default"});
}

TEST_CASE("Library: registration errors") {
  register_scale();
  Library m("exttest");
  CHECK_THROWS_WITH_AS(m.def("scale(Tensor x, float s) -> Tensor"),
                       doctest::Contains("Tried to register an operator (exttest::scale(Tensor x, float s) -> Tensor) with the "
                                         "same name and overload name multiple times"),
                       Error);
  CHECK_THROWS_WITH_AS(m.impl<&takes_int>("scale", DispatchKey::CPU),
                       "Inferred operator schema for a C++ kernel function differs from the schema in the operator definition: "
                       "the CPU kernel of exttest::scale takes std::int64_t as argument #1 's' where the schema "
                       "(scale(Tensor x, float s) -> Tensor) has float",
                       Error);
  CHECK_THROWS_WITH_AS(m.impl<&scale_cpu>("scale", DispatchKey::CPU),
                       "Library(\"exttest\").impl: exttest::scale already has a CPU kernel; a kernel is registered once per key",
                       Error);
  CHECK_THROWS_WITH_AS(m.impl<&takes_one>("scale", DispatchKey::Meta), doctest::Contains("has 1 arguments but the schema"), Error);
  CHECK_THROWS_WITH_AS(m.impl<&returns_two>("scale", DispatchKey::CPU), doctest::Contains("has 2 returns but the schema"), Error);
  CHECK_THROWS_WITH_AS(m.impl<&scale_cpu>("nothing", DispatchKey::CPU),
                       "Library(\"exttest\").impl: no operator exttest::nothing is defined; define its schema with def() first", Error);
  CHECK_THROWS_WITH_AS(m.impl<&scale_cpu>("scale", DispatchKey::Python),
                       "Library(\"exttest\").impl: exttest::scale cannot have a kernel at the Python key: it is the "
                       "interposer's, where dispatch modes and tensor subclasses see every op",
                       Error);
  CHECK_THROWS_WITH_AS(Library("aten"), doctest::Contains("the namespace aten is strata's own"), Error);
  CHECK_THROWS_WITH_AS(Library("a::b"), doctest::Contains("the namespace must be a plain name"), Error);
  // The op still works: a refused kernel changed nothing.
  CHECK(scale(tensor<float>({1.0f}), 2.0).to_vector<float>() == std::vector<float>{2});
}

namespace {
Tensor twice_cpu(const Tensor& x) { return x + x; }
// A boxed Meta kernel: reads its argument from the stack and leaves its result in its place.
void twice_meta_boxed(const OperatorHandle&, DispatchKeySet, Stack& stack) {
  Tensor out = empty_like(stack.back().to_tensor());
  stack.back() = IValue(std::move(out));
}
}  // namespace

TEST_CASE("Library: a key without a kernel is PyTorch's \"Could not run\"; no autograd kernel, no gradient") {
  Library m("exttest_missing");
  m.def("exttest_missing::twice(Tensor x) -> Tensor");  // the namespace prefix is accepted
  const OperatorHandle op = ops::op("exttest_missing::twice");
  CHECK_THROWS_WITH_AS(detail::call_op(op, tensor<float>({1.0f})),
                       "[exttest_missing::twice] Could not run 'exttest_missing::twice' with arguments from the 'CPU' backend: no "
                       "kernel or fallback is registered at CPU (keys [CPU])",
                       Error);
  m.impl<&twice_cpu>("twice", DispatchKey::CPU);
  CHECK(detail::call_op(op, tensor<float>({1.0f})).to_vector<float>() == std::vector<float>{2});
  CHECK_THROWS_WITH_AS(detail::call_op(op, empty({1}, {ScalarType::Float32, Device::Meta})),
                       doctest::Contains("Could not run 'exttest_missing::twice' with arguments from the 'Meta' backend"), Error);
  m.impl_boxed("twice", DispatchKey::Meta, &twice_meta_boxed);
  CHECK(detail::call_op(op, empty({4}, {ScalarType::Float32, Device::Meta})).is_meta());
  Tensor x = tensor<float>({1.0f});
  requires_grad_(x);
  CHECK_THROWS_WITH_AS(detail::call_op(op, x),
                       "[exttest_missing::twice] the derivative for 'exttest_missing::twice' is not implemented (no derivative row)",
                       Error);
  CHECK_THROWS_AS(m.def("other::f(Tensor x) -> Tensor"), Error);
}

}  // namespace test_library
