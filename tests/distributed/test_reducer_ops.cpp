// tests/distributed/test_reducer_ops.cpp: the ops DistributedDataParallel's reducer dispatches,
// aten::mul.out and c10d::allreduce_ (distributed/reducer_ops.h): what they compute, the names a mode
// sees, and their errors.
#include "autograd/variable.h"
#include "distributed/fake_process_group.h"
#include "distributed/process_group.h"
#include "distributed/reducer_ops.h"
#include "distributed/thread_backend.h"
#include "modes/fake_tensor.h"
#include "modes/op_counter.h"
#include "ops/functions.h"
#include "ops/native/type_promotion.h"
#include "tests/distributed/collective_inputs.h"
#include "tests/test_helpers.h"

namespace test_reducer_ops {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::distributed;

TEST_CASE("mul.out writes the product into out, bumps its version, and a mode sees aten.mul.out") {
  const Tensor grad = tensor({1.0f, -3.0f, 5.0f, 7.0f}, {2, 2});
  const Tensor bucket = zeros({6});
  const Tensor slot = view(narrow(bucket, 0, 2, 4), {2, 2});
  const std::uint32_t version = bucket.impl()->version();
  tracer::OpCounter counter;
  {
    const ModeGuard mode(counter);
    const Tensor& result = mul_out(slot, grad, ops::wrapped_scalar_tensor(1.0 / 3));
    CHECK(result.impl() == slot.impl());
  }
  CHECK(counter.sequence("forward") == std::vector<std::string>{"aten.mul.out"});
  CHECK(bucket.to_vector<float>() == std::vector<float>{0, 0, 1.0f * float(1.0 / 3), -3.0f * float(1.0 / 3),
                                                        5.0f * float(1.0 / 3), 7.0f * float(1.0 / 3)});
  CHECK(bucket.impl()->version() == version + 1);
}

TEST_CASE("mul.out refuses an out of another shape or dtype, and inputs that require grad") {
  const Tensor a = ones({2, 3});
  CHECK_THROWS_WITH_AS(mul_out(zeros({3, 2}), a, a),
                       "[aten::mul] out has shape [3, 2] but self [2, 3] * other [2, 3] has shape [2, 3] (an out= "
                       "argument is not resized)",
                       Error);
  CHECK_THROWS_WITH_AS(mul_out(zeros({2, 3}, {ScalarType::Float64, std::nullopt}), a, a),
                       "[aten::mul] out has dtype float64 but the result has dtype float32", Error);
  const Tensor w = requires_grad_(ones({2, 3}));
  CHECK_THROWS_WITH_AS(mul_out(zeros({2, 3}), w, a),
                       "[aten::mul] mul(): functions with out=... arguments don't support automatic "
                       "differentiation, but one of the arguments requires grad.",
                       Error);
}

TEST_CASE("c10d::allreduce_ reduces the tensor in place and returns its Work" * doctest::test_suite("threads")) {
  std::vector<std::vector<double>> got(3);
  std::vector<std::vector<std::string>> seen(3);
  spawn(3, [&](int rank) {
    const Tensor x = testing::input_of(rank, {5});
    tracer::OpCounter counter;
    std::shared_ptr<Work> work;
    {
      const ModeGuard mode(counter);
      work = allreduce_(x, resolve_process_group("0"), ReduceOp::Sum);
    }
    work->wait();
    got[static_cast<std::size_t>(rank)] = x.to_vector<double>();
    seen[static_cast<std::size_t>(rank)] = counter.sequence("forward");
  });
  for (std::size_t r = 0; r < 3; ++r) {
    CHECK(got[r] == testing::reduced("sum", 3, 5));
    CHECK(seen[r] == std::vector<std::string>{"c10d.allreduce_.default"});
  }
  std::string message;
  try {
    spawn(1, [](int) { (void)allreduce_(t(ones({2, 3})), resolve_process_group("0"), ReduceOp::Sum); });
  } catch (const Error& e) {
    message = e.what();
  }
  CHECK(message == "spawn: rank 0 failed: [c10d::allreduce_] the tensor must be contiguous to be reduced in place");
}

TEST_CASE("c10d::allreduce_ on fake tensors: run on the fake group, refused on a real one" * doctest::test_suite("threads")) {
  {
    const FakeWorld world(3, 1024);
    tracer::FakeTensorMode fake;
    const ModeGuard guard(fake);
    const Tensor bucket = zeros({1 << 20, 1 << 12});  // 16 GB of float32 that do not exist
    std::shared_ptr<Work> work = allreduce_(bucket, resolve_process_group("0"), ReduceOp::Sum);
    work->wait();
    CHECK(tracer::FakeTensor::is_fake(bucket));
  }
  std::string message;
  try {
    spawn(1, [](int) {
      tracer::FakeTensorMode fake;
      const ModeGuard guard(fake);
      (void)allreduce_(zeros({4}), resolve_process_group("0"), ReduceOp::Sum);
    });
  } catch (const Error& e) {
    message = e.what();
  }
  CHECK(message == "spawn: rank 0 failed: [c10d::allreduce_] c10d::allreduce_ runs on CPU tensors only (or any on the "
                   "fake process group), got a meta tensor on group '0'");
}

}  // namespace test_reducer_ops
