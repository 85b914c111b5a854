// tests/modes/test_fake_tensor.cpp: FakeTensorMode (torch/_subclasses/fake_tensor.py): the MLP step
// under it dispatches the real step's op sequence with fakes everywhere; from_tensor, factories, the
// rules for real and foreign inputs and their errors, random ops, and ops on fakes outside the mode.
#include <doctest/doctest.h>

#include <optional>

#include "autograd/backward.h"
#include "autograd/variable.h"
#include "core/generator.h"
#include "ops/functions.h"
#include "ops/native/type_promotion.h"
#include "ops/typed_operator.h"
#include "tests/test_helpers.h"
#include "modes/fake_tensor.h"
#include "modes/logging_tensor.h"
#include "tracer/cli/mlp_experiment.h"

namespace test_fake_tensor {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::tracer;

namespace {
const std::vector<MlpConfig> kConfigs = {
    MlpConfig{0, {16, 32, 4}, 8, 0.1}, MlpConfig{1, {4, 3}, 3, 0.1}, MlpConfig{2, {8, 16, 16, 3}, 5, 0.1},
    MlpConfig{3, {5, 7}, 1, 0.1},      MlpConfig{7, {20, 10, 10, 10, 5}, 2, 0.1}, MlpConfig{4, {300, 200, 10}, 64, 0.5},
};

void check_all_fake(const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts) {
    REQUIRE(FakeTensor::is_fake(t));
    CHECK(t.device() == Device::CPU);
    CHECK(FakeTensor::meta_of(t).is_meta());
  }
}
}  // namespace

TEST_CASE("the fake MLP step dispatches the real step's ops, in order, for several depths, sizes and batches") {
  for (const MlpConfig& config : kConfigs) {
    INFO("sizes ", nlohmann::json(config.sizes).dump(), " batch ", config.batch);
    const TracedStep real = traced_step(config);
    FakeTensorMode mode;
    const TracedStep fake = traced_step(config, &mode);
    for (const char* phase : {"forward", "backward", "optimizer"}) {
      INFO(phase);
      CHECK(fake.counter.sequence(phase) == real.counter.sequence(phase));
    }
    CHECK(fake.counter.total() == real.counter.total());
    // Everything the fake step made is fake: parameters, batch, logits, loss, gradients, updates.
    check_all_fake({fake.step.x, fake.step.y, fake.step.logits, fake.step.loss});
    check_all_fake(fake.step.init_params);
    check_all_fake(fake.step.grads);
    check_all_fake(fake.step.params_after);
    CHECK(fake.step.loss.dim() == 0);
    CHECK(fake.step.y.dtype() == ScalarType::Int64);
    for (std::size_t i = 0; i < fake.step.grads.size(); ++i) CHECK(fake.step.grads[i].sizes() == real.step.grads[i].sizes());
  }
}

TEST_CASE("the fake MLP-step report has the plain report's counts and log, and null where values are compared") {
  const MlpConfig config;
  const nlohmann::ordered_json real = experiment_report(config, true);
  const nlohmann::ordered_json fake = experiment_report(config, true, /*fake=*/true);
  REQUIRE(fake.size() == real.size());
  for (const auto& item : real.items()) {
    INFO(item.key());
    if (item.key().ends_with("_matches")) CHECK(fake[item.key()].is_null());
    else CHECK(fake[item.key()] == item.value());
  }
}

TEST_CASE("from_tensor: a leaf fake with the real tensor's geometry, dtype, device and requires_grad, memoised") {
  FakeTensorMode mode;
  const Tensor real = requires_grad_(randn({3, 4}));
  const Tensor f = mode.from_tensor(real);
  REQUIRE(FakeTensor::is_fake(f));
  CHECK(f.sizes() == real.sizes());
  CHECK(f.strides() == real.strides());
  CHECK(f.dtype() == ScalarType::Float32);
  CHECK(f.device() == Device::CPU);
  CHECK(f.requires_grad());
  CHECK(f.is_leaf());
  CHECK(mode.from_tensor(real).is_same(f));
  CHECK(mode.from_tensor(f).is_same(f));
  const Tensor tr = mode.from_tensor(t(randn({4, 3})));  // a transposed view keeps its strides
  CHECK(tr.strides() == IntArrayRef(std::vector<std::int64_t>{1, 3}));
  CHECK(f.str() == "FakeTensor(..., size=(3, 4), requires_grad=True)");
  CHECK(mode.from_tensor(randint(0, 3, {8})).str() == "FakeTensor(..., size=(8,), dtype=torch.int64)");
  CHECK_THROWS_WITH_AS(f.to_vector<float>(), "cannot access the data of a FakeTensor tensor: it has no data", Error);
  CHECK_THROWS_WITH_AS(mode.from_tensor(empty({2}, {.device = Device::Meta})),
                       doctest::Contains("from_tensor: expected a real tensor, got a meta tensor"), Error);
}

TEST_CASE("factories under the mode make fakes on the requested device, with no data") {
  FakeTensorMode mode;
  ModeGuard guard(mode);
  const Tensor e = empty({1000, 1000, 1000});  // 4 GB if it were real
  REQUIRE(FakeTensor::is_fake(e));
  CHECK(e.device() == Device::CPU);
  CHECK(e.sizes() == IntArrayRef(std::vector<std::int64_t>{1000, 1000, 1000}));
  const Tensor m = empty({2}, {.device = Device::Meta});
  CHECK(m.device() == Device::Meta);
  const Tensor z = zeros_like(e, {.dtype = ScalarType::Float64});
  CHECK(FakeTensor::is_fake(z));
  CHECK(z.dtype() == ScalarType::Float64);
  // In-place ops return their argument itself; views and new results are new fakes.
  const Tensor r = randn({3, 4});
  CHECK(mul_(r, ops::wrapped_scalar_tensor(2.0)).is_same(r));  // a wrapped number (a C++ scalar) is allowed
  CHECK(FakeTensor::is_fake(t(r)));
  CHECK(t(r).sizes() == IntArrayRef(std::vector<std::int64_t>{4, 3}));
  CHECK(FakeTensor::is_fake(add(r, 1.5)));
}

TEST_CASE("random ops under the mode draw nothing: the generator does not advance, as upstream's meta kernels") {
  Generator g;
  g.manual_seed(5);
  {
    FakeTensorMode mode;
    ModeGuard guard(mode);
    const Tensor x = randn({1000}, {}, &g);
    CHECK(FakeTensor::is_fake(x));
    manual_seed(3);
    const Tensor w = uniform_(empty({10, 10}), -1, 1);
    CHECK(FakeTensor::is_fake(w));
  }
  Generator fresh;
  fresh.manual_seed(5);
  CHECK(randn({4}, {}, &g).to_vector<float>() == randn({4}, {}, &fresh).to_vector<float>());
  const std::vector<float> after_fake_init = randn({4}).to_vector<float>();  // the default generator too
  manual_seed(3);
  CHECK(after_fake_init == randn({4}).to_vector<float>());
}

TEST_CASE("an in-place op bumps a fake's version once, as PyTorch's ADInplaceOrView does") {
  // PyTorch 1.13: under FakeTensorMode, x = torch.empty(3); x.add_(1); x.mul_(2) leaves x._version == 2;
  // a LoggingTensor written under LoggingTensorMode (a mode that calls through to the subclass) is at 1.
  // Note [A written wrapper is bumped once per op].
  {
    FakeTensorMode mode;
    ModeGuard guard(mode);
    const Tensor x = empty({3});
    add_(x, ones_like(x));
    mul_(x, ops::wrapped_scalar_tensor(2.0));
    CHECK(x.impl()->version() == 2);
  }
  auto log = std::make_shared<LoggingTensor::Log>();
  const Tensor y = LoggingTensor::wrap(randn({3}), log);
  const Tensor one = ones_like(randn({3}));
  testing::OpLog through;
  {
    ModeGuard guard(through);
    add_(y, one);
  }
  CHECK(through.ops == std::vector<std::string>{"aten.add_.Tensor"});
  CHECK(y.impl()->version() == 1);
}

TEST_CASE("a fake is a meta tensor reporting its device: its views and meta_of share its version counter") {
  FakeTensorMode mode;
  const Tensor x = mode.from_tensor(randn({2, 3}));
  // One TensorImpl: the Meta backend key (its kernels are the meta functions), the Python key (the
  // payload's), a storage without data, and the device it stands for.
  CHECK(x.key_set() == DispatchKeySet{DispatchKey::Python, DispatchKey::Meta});
  CHECK(x.device() == Device::CPU);
  CHECK_FALSE(x.is_meta());
  REQUIRE(x.impl()->storage());
  CHECK_FALSE(x.impl()->has_data());
  CHECK_THROWS_WITH_AS(x.data_ptr<float>(), "cannot access the data of a FakeTensor tensor: it has no data", Error);
  const Tensor meta = FakeTensor::meta_of(x);
  CHECK(meta.is_meta());
  CHECK_FALSE(meta.subclass());
  CHECK(meta.key_set() == DispatchKeySet(DispatchKey::Meta));
  CHECK(meta.impl()->storage() == x.impl()->storage());
  const FlattenedTensor flat = x.subclass()->flatten(x);
  REQUIRE(flat.inner.size() == 1);
  CHECK(flat.inner[0].impl()->storage() == x.impl()->storage());
  const Tensor back = x.subclass()->unflatten(flat, x.sizes(), x.strides());
  CHECK(FakeTensor::of(back)->belongs_to(mode));
  CHECK(back.device() == Device::CPU);
  CHECK(back.impl()->storage() == x.impl()->storage());
  ModeGuard guard(mode);
  // A view of a fake is a fake over the same meta storage. PyTorch 1.13: under FakeTensorMode,
  // y = torch.empty(2, 3); w = y.t(); y.mul_(2) leaves w._version == 1.
  const Tensor v = t(x);
  REQUIRE(FakeTensor::is_fake(v));
  CHECK(v.device() == Device::CPU);
  CHECK(v.impl()->storage() == x.impl()->storage());
  mul_(x, ops::wrapped_scalar_tensor(2.0));
  CHECK(v.impl()->version() == 1);
  CHECK(meta.impl()->version() == 1);
  CHECK(back.impl()->version() == 1);
}

TEST_CASE("real tensors under the mode are refused with upstream's words, unless allow_non_fake_inputs") {
  const Tensor real = ones_like(randn({3, 4}));
  SUBCASE("refused, a 0-d real tensor too") {
    FakeTensorMode mode;
    const Tensor f = mode.from_tensor(real);
    ModeGuard guard(mode);
    CHECK_THROWS_WITH_AS(add(f, real),
                         "[aten::add] Please convert all Tensors to FakeTensors first or instantiate FakeTensorMode with "
                         "'allow_non_fake_inputs'. Found in aten.add.Tensor(FakeTensor(..., size=(3, 4)), "
                         "tensor(..., size=(3, 4)), 1)",
                         Error);
    CHECK_THROWS_WITH_AS(add(f, scalar_tensor(2.0, ScalarType::Float32)), doctest::Contains("Please convert all Tensors to FakeTensors"), Error);
    CHECK_THROWS_WITH_AS(relu(real), doctest::Contains("Found in aten.relu.default(tensor(..., size=(3, 4)))"), Error);
  }
  SUBCASE("converted") {
    FakeTensorMode mode({.allow_non_fake_inputs = true});
    ModeGuard guard(mode);
    const Tensor r = add(mode.from_tensor(real), real);
    CHECK(FakeTensor::is_fake(r));
    CHECK(FakeTensor::is_fake(relu(real)));
  }
}

TEST_CASE("a fake outlives its mode, and is never taken for a later mode's fake") {
  // Note [A fake keeps its mode by number]: the second mode is built where the first one was.
  std::optional<FakeTensorMode> mode;
  mode.emplace(FakeTensorModeOptions{.allow_non_fake_inputs = true});
  const Tensor old_fake = mode->from_tensor(randn({2, 2}));
  mode.reset();
  // Outside any mode the fake still runs its op as its mode would, with its options.
  const Tensor sum = add(old_fake, randn({2, 2}));
  CHECK(FakeTensor::is_fake(sum));
  mode.emplace();
  CHECK_FALSE(FakeTensor::of(old_fake)->belongs_to(*mode));
  CHECK(FakeTensor::of(mode->from_tensor(randn({1})))->belongs_to(*mode));
  ModeGuard guard(*mode);
  CHECK_THROWS_WITH_AS(add(old_fake, mode->from_tensor(randn({2, 2}))), "[aten::add] Mixing fake modes NYI (aten.add.Tensor)",
                       Error);
}

TEST_CASE("fakes of two modes do not mix; devices propagate as _find_common_device says") {
  FakeTensorMode a, b;
  const Tensor fa = a.from_tensor(randn({2, 2}));
  const Tensor fb = b.from_tensor(randn({2, 2}));
  {
    ModeGuard guard(b);
    CHECK_THROWS_WITH_AS(add(fa, fb), "[aten::add] Mixing fake modes NYI (aten.add.Tensor)", Error);
  }
  const Tensor on_meta = a.from_meta_and_device(empty({2, 2}, {.device = Device::Meta}), Device::Meta);
  const Tensor scalar = a.from_tensor(scalar_tensor(1.0, ScalarType::Float32));  // a cpu 0-d fake
  ModeGuard guard(a);
  // A cpu and a meta fake reach the mode (both run meta functions), which refuses to pick a device
  // for the result in upstream's words; copy_ may mix devices, and returns its (cpu) self.
  CHECK_THROWS_WITH_AS(add(fa, on_meta),
                       "[aten::add] Unhandled FakeTensor Device Propagation for aten.add.Tensor, found two different "
                       "devices cpu, meta",
                       Error);
  CHECK(copy_(fa, on_meta).is_same(fa));
  // A cpu 0-d fake defers to the other device.
  CHECK(add(on_meta, scalar).device() == Device::Meta);
  CHECK(add(scalar, on_meta).device() == Device::Meta);
}

TEST_CASE("ops on fakes outside the mode run as under it (FakeTensor.__torch_dispatch__)") {
  FakeTensorMode mode;
  const Tensor w = mode.from_tensor(requires_grad_(randn({4, 3})));
  const Tensor x = mode.from_tensor(randn({2, 4}));
  const Tensor loss = sum(mm(x, w));
  CHECK(FakeTensor::is_fake(loss));
  CHECK(loss.grad_fn() != nullptr);
  backward(loss);
  REQUIRE(FakeTensor::is_fake(w.grad()));
  CHECK(w.grad().sizes() == w.sizes());
  CHECK_THROWS_WITH_AS(add(x, randn({2, 4})), doctest::Contains("Please convert all Tensors to FakeTensors first"), Error);
}

namespace {
// A Meta kernel that allocates on its input's device(): real data for a fake, which reports cpu.
Tensor pad_on_input_device(const Tensor& x) { return empty({x.size(0) + 1}, {.dtype = x.dtype(), .device = x.device()}); }
Tensor pad(const Tensor& x) { return testing::call_user_op<&pad_on_input_device, &pad_on_input_device>("faketest_pad", "pad", x); }
}  // namespace

TEST_CASE("a Meta kernel that makes a real result under the mode is a clear error naming it") {
  CHECK(pad(empty({2}, {.device = Device::Meta})).is_meta());  // on a plain meta tensor it is right
  FakeTensorMode mode;
  const Tensor f = mode.from_tensor(randn({2}));
  ModeGuard guard(mode);
  CHECK_THROWS_WITH_AS(pad(f),
                       "[faketest_pad::pad] the Meta kernel of faketest_pad.pad.default returned a cpu tensor with data; under "
                       "FakeTensorMode a Meta kernel must make its results on the meta device (a fake's device() is the "
                       "device it stands for, not meta)",
                       Error);
}

TEST_CASE("below the mode, a tensor with data mixed with a fake is refused, never written as if meta") {
  // Upstream's fake reads as meta inside a kernel, so its device check names cpu and meta.
  FakeTensorMode mode;
  const Tensor f = mode.from_tensor(randn({3}));
  const Tensor real = tensor<float>({1, 2, 3});
  {
    const ExcludeKeyGuard below(DispatchKey::Python);
    CHECK_THROWS_WITH_AS(add_(real, f),
                         "[aten::add_] Expected all tensors to be on the same device, but found at least two devices, cpu "
                         "and meta!",
                         Error);
    CHECK_THROWS_WITH_AS(add(real, f),
                         "[aten::add] Expected all tensors to be on the same device, but found at least two devices, cpu "
                         "and meta!",
                         Error);
    CHECK_THROWS_WITH_AS(copy_(real, f), "[aten::copy_] Cannot copy out of meta tensor; no data!", Error);
  }
  CHECK(real.to_vector<float>() == std::vector<float>{1, 2, 3});
  CHECK(real.impl()->version() == 0);
}

namespace {
Tensor cpu_only_cpu(const Tensor& x) { return clone(x); }
Tensor cpu_only(const Tensor& x) { return testing::call_user_op<&cpu_only_cpu>("faketest", "cpu_only", x); }
}  // namespace

TEST_CASE("an op without a meta kernel is a clear error naming it") {
  CHECK(cpu_only(tensor<float>({1, 2})).to_vector<float>() == std::vector<float>{1, 2});
  FakeTensorMode mode;
  const Tensor f = mode.from_tensor(randn({2}));
  ModeGuard guard(mode);
  CHECK_THROWS_WITH_AS(cpu_only(f),
                       "[faketest::cpu_only] faketest.cpu_only.default has no Meta kernel, so it cannot run on fake tensors "
                       "(FakeTensorMode runs only meta functions; register a Meta kernel for it)",
                       Error);
}

TEST_CASE("another subclass among the arguments: the mode returns NotImplemented and the subclass handles it") {
  // The LoggingTensor step under the mode wraps fakes: its log is the real one's (seed report test),
  // and what it returns is fake.
  FakeTensorMode mode;
  const SubclassStep s = subclass_step(MlpConfig{}, &mode);
  check_all_fake({s.logits});
  check_all_fake(s.grads);
  CHECK(s.grad_type == "LoggingTensor");
}

namespace {
// A mode inside a FakeTensorMode that hands the op a fresh fake it alone holds, lets the op fail below
// it, and reads the arguments it handed on after the failure.
struct ReadAfterFailure final : DispatchMode {
  std::vector<std::vector<std::int64_t>> seen;
  std::string_view name() const override { return "ReadAfterFailure"; }
  void dispatch(const OperatorHandle& op, Stack& stack) override {
    const std::size_t base = stack.size() - op.schema().arguments().size();
    stack[base] = IValue(relu(std::as_const(stack[base]).to_tensor()));  // reaches the FakeTensorMode
    try {
      op.call(stack);
    } catch (const Error&) {
      for (std::size_t i = base; i < stack.size(); ++i) {
        const IntArrayRef sizes = std::as_const(stack[i]).to_tensor().sizes();
        seen.emplace_back(sizes.begin(), sizes.end());
      }
      throw;
    }
  }
};
}  // namespace

TEST_CASE("a meta kernel that throws leaves the arguments it was given readable") {
  // The meta kernel runs on the fakes themselves; when it throws, a mode above still reads the
  // arguments it was given.
  FakeTensorMode fake;
  const Tensor a = fake.from_tensor(randn({2, 3})), b = fake.from_tensor(randn({4, 5}));
  ModeGuard outer(fake);
  ReadAfterFailure reader;
  ModeGuard inner(reader);
  CHECK_THROWS_WITH_AS(mm(a, b), doctest::Contains("cannot be multiplied"), Error);
  CHECK(reader.seen == std::vector<std::vector<std::int64_t>>{{2, 3}, {4, 5}});
}

TEST_CASE("chunk of a fake gives fakes with PyTorch's shapes, strides and offsets, and a backward through them") {
  // PyTorch 1.13: FakeTensorMode's from_tensor(randn(5, 3)).chunk(2) is two FakeTensors of [3, 3] and
  // [2, 3], the second with strides (3, 1) and storage offset 9.
  FakeTensorMode mode;
  const Tensor x = mode.from_tensor(randn({5, 3}));
  requires_grad_(x);
  ModeGuard guard(mode);  // entered: the backward's zeros, which has no fake argument, is a fake too
  const std::vector<Tensor> pieces = x.chunk(2);
  REQUIRE(pieces.size() == 2);
  CHECK(FakeTensor::is_fake(pieces[0]));
  CHECK(FakeTensor::is_fake(pieces[1]));
  CHECK(testing::sizes_of(pieces[1]) == std::vector<std::int64_t>{2, 3});
  CHECK(testing::strides_of(pieces[1]) == std::vector<std::int64_t>{3, 1});
  CHECK(pieces[1].storage_offset() == 9);
  backward(sum(pieces[1]));  // SplitBackward0's zeros and cat run on meta
  REQUIRE(x.grad().defined());
  CHECK(FakeTensor::is_fake(x.grad()));
  CHECK(testing::sizes_of(x.grad()) == std::vector<std::int64_t>{5, 3});
}

}  // namespace test_fake_tensor
