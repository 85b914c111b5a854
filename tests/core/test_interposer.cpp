// tests/core/test_interposer.cpp: the mode stack (push/pop, nesting, popped while handling, restored
// after a throw, Python key tracking) and wrapper subclasses at the core level.
#include <doctest/doctest.h>

#include <sstream>

#include "core/interpose/checked_wrapper.h"
#include "core/interpose/interposer.h"
#include "ops/tensor_literal.h"
#include "tests/core/toy_ops.h"

namespace test_interposer {  // Note [Test files in unity builds]

using namespace strata;
using strata::testing::call_twice;
using strata::testing::toy_ops;

namespace {

struct RecordingMode : DispatchMode {
  std::string label;
  std::vector<std::string>* log;
  int calls_per_op = 1;
  RecordingMode(std::string l, std::vector<std::string>* lg) : label(std::move(l)), log(lg) {}
  std::string_view name() const override { return label; }
  void dispatch(const OperatorHandle& op, Stack& stack) override {
    log->push_back(label + ":" + op.str() + " top=" + (current_mode() ? std::string(current_mode()->name()) : "none"));
    const std::size_t n = op.schema().arguments().size();
    for (int i = 1; i < calls_per_op; ++i) {  // call again on a copy of the arguments
      Stack copy;
      for (std::size_t k = stack.size() - n; k < stack.size(); ++k) copy.push_back(stack[k]);
      op.call(copy);
    }
    op.call(stack);
  }
};

struct ThrowingMode : DispatchMode {
  std::string_view name() const override { return "ThrowingMode"; }
  void dispatch(const OperatorHandle&, Stack&) override { throw Error("mode refused"); }
};

}  // namespace

TEST_CASE("entering a mode pushes it and includes the Python key; leaving pops it") {
  std::vector<std::string> log;
  RecordingMode mode("A", &log);
  CHECK(current_mode() == nullptr);
  {
    ModeGuard guard(mode);
    CHECK(current_mode() == &mode);
    CHECK(mode_stack_size() == 1);
    CHECK(local_dispatch_keys().included.has(DispatchKey::Python));
  }
  CHECK(current_mode() == nullptr);
  CHECK_FALSE(local_dispatch_keys().included.has(DispatchKey::Python));
}

TEST_CASE("a mode is popped while it handles an op, so the op reaches the next mode, then the kernel") {
  std::vector<std::string> log;
  RecordingMode outer("outer", &log), inner("inner", &log);
  const Tensor x = tensor<float>({1, 2});  // made outside the modes, which would log its aten::lift_fresh
  Tensor y;
  {
    ModeGuard a(outer);
    ModeGuard b(inner);
    y = call_twice(x);
  }
  CHECK(y.to_vector<float>() == std::vector<float>{2, 4});
  CHECK(log == std::vector<std::string>{"inner:test.twice.default top=outer", "outer:test.twice.default top=none"});
}

TEST_CASE("two nested counters see the same ops; a mode that calls the op twice doubles what the next sees") {
  std::vector<std::string> log;
  RecordingMode outer("outer", &log), inner("inner", &log);
  inner.calls_per_op = 2;
  const Tensor x = tensor<float>({1});
  {
    ModeGuard a(outer);
    ModeGuard b(inner);
    call_twice(x);
  }
  CHECK(log.size() == 3);
  CHECK(log[0].starts_with("inner:"));
  CHECK(log[1].starts_with("outer:"));
  CHECK(log[2].starts_with("outer:"));
}

TEST_CASE("modes see ops without tensor arguments") {
  std::vector<std::string> log;
  RecordingMode mode("A", &log);
  {
    ModeGuard guard(mode);
    Stack stack;
    stack.emplace_back(std::int64_t{1});
    toy_ops().ping.call(stack);
    CHECK(stack.back().to_int() == 2);
  }
  CHECK(log == std::vector<std::string>{"A:test.ping.default top=none"});
}

TEST_CASE("a mode that throws leaves the mode stack and key sets as they were") {
  ThrowingMode bad;
  std::vector<std::string> log;
  RecordingMode outer("outer", &log);
  const Tensor x = tensor<float>({1});
  ModeGuard a(outer);
  {
    ModeGuard b(bad);
    CHECK_THROWS_WITH_AS(call_twice(x), "[test::twice] mode refused", Error);
    CHECK(current_mode() == &bad);
    CHECK(mode_stack_size() == 2);
  }
  CHECK(current_mode() == &outer);
  CHECK(local_dispatch_keys().included.has(DispatchKey::Python));
}

TEST_CASE("the dispatch trace shows the interposer between the caller and the kernel") {
  std::vector<std::string> log;
  RecordingMode mode("A", &log);
  std::ostringstream out;
  const Tensor x = tensor<float>({1});
  {
    ModeGuard guard(mode);
    DispatchTraceGuard trace(out);
    call_twice(x);
  }
  CHECK(out.str() ==
        "test.twice.default(f32[1]) [Python, CPU] -> Python: fallback interposer\n"
        "  interposer: handed to the dispatch mode A\n"
        "  test.twice.default(f32[1]) [CPU] -> CPU: kernel twice\n");
}

namespace {
// A wrapper whose ops run on its inner tensor and whose results stay unwrapped.
struct PassThrough final : TensorSubclass {
  Tensor inner;
  int* seen;
  PassThrough(Tensor t, int* s) : inner(std::move(t)), seen(s) {}
  std::string_view type_name() const override { return "PassThrough"; }
  void dispatch(const OperatorHandle& op, Stack& stack) override {
    ++*seen;
    for (IValue& v : stack)
      if (v.is_tensor() && v.to_tensor().subclass() == this) v = IValue(inner);
    op.call(stack);
  }
  FlattenedTensor flatten(const Tensor&) const override { return {{"inner"}, {inner}, nullptr}; }
  Tensor unflatten(const FlattenedTensor& flat, IntArrayRef, IntArrayRef) const override {
    return make_wrapper_tensor(IntrusivePtr<TensorSubclass>(new PassThrough(flat.inner[0], seen)), flat.inner[0].sizes(),
                               flat.inner[0].strides(), 0, flat.inner[0].dtype(), flat.inner[0].device());
  }
};
}  // namespace

TEST_CASE("a wrapper subclass handles ops on it; inside a mode the mode runs first") {
  int seen = 0;
  const Tensor inner = tensor<float>({3, 4});
  const Tensor w = make_wrapper_tensor(IntrusivePtr<TensorSubclass>(new PassThrough(inner, &seen)), inner.sizes(),
                                       inner.strides(), 0, inner.dtype(), inner.device());
  CHECK(w.key_set().has(DispatchKey::Python));
  CHECK(w.sizes() == inner.sizes());
  CHECK_THROWS_WITH_AS(w.data_ptr<float>(), "cannot access the data of a PassThrough wrapper tensor; unwrap it first", Error);
  CHECK(call_twice(w).to_vector<float>() == std::vector<float>{6, 8});
  CHECK(seen == 1);

  std::vector<std::string> log;
  RecordingMode mode("M", &log);
  {
    ModeGuard guard(mode);
    call_twice(w);
  }
  CHECK(log.size() == 1);
  CHECK(seen == 2);

  const FlattenedTensor flat = w.subclass()->flatten(w);
  CHECK(flat.names == std::vector<std::string>{"inner"});
  const Tensor again = w.subclass()->unflatten(flat, w.sizes(), w.strides());
  CHECK(call_twice(again).to_vector<float>() == std::vector<float>{6, 8});
  CHECK(interposer_sees(w));
  CHECK_FALSE(interposer_sees(inner));
}

TEST_CASE("a handler outlives the overwrite of the one slot that held its wrapper") {
  // Note [A call's subclasses are borrowed where their tensors are]: an owned argument slot may hold
  // the only reference to the payload whose handler runs; the interposer keeps it alive meanwhile.
  struct Dropping final : TensorSubclass {
    Tensor inner;
    bool* destroyed;
    Dropping(Tensor t, bool* d) : inner(std::move(t)), destroyed(d) {}
    ~Dropping() override { *destroyed = true; }
    std::string_view type_name() const override { return "Dropping"; }
    void dispatch(const OperatorHandle& op, Stack& stack) override {
      bool* const flag = destroyed;
      const Tensor mine = inner;
      stack.back() = IValue(mine);  // the wrapper's slot, which owned it
      CHECK_FALSE(*flag);
      op.call(stack);
    }
    FlattenedTensor flatten(const Tensor&) const override { return {{"inner"}, {inner}, nullptr}; }
    Tensor unflatten(const FlattenedTensor&, IntArrayRef, IntArrayRef) const override { return Tensor(); }
  };
  bool destroyed = false;
  Stack stack;
  {
    const Tensor inner = tensor<float>({3, 4});
    stack.emplace_back(make_wrapper_tensor(IntrusivePtr<TensorSubclass>::adopt(new Dropping(inner, &destroyed)),
                                           inner.sizes(), inner.strides(), 0, inner.dtype(), inner.device()));
  }
  toy_ops().twice.call(stack);
  CHECK(destroyed);
  CHECK(stack.back().to_tensor().to_vector<float>() == std::vector<float>{6, 8});
}

TEST_CASE("make_wrapper_tensor takes the geometry and dtype it is given, without storage") {
  int seen = 0;
  const Tensor meta(IntrusivePtr<TensorImpl>::make(Storage(), 3, DimVector{2, 3}, DimVector{1, 2}, ScalarType::Float64,
                                                   Device::Meta));
  const Tensor t = make_wrapper_tensor(IntrusivePtr<TensorSubclass>(new PassThrough(meta, &seen)), meta.sizes(),
                                       meta.strides(), 3, ScalarType::Float64, Device::CPU);
  CHECK(t.sizes() == meta.sizes());
  CHECK(t.strides() == meta.strides());
  CHECK(t.storage_offset() == 3);
  CHECK(t.numel() == 6);
  CHECK_FALSE(t.is_contiguous());
  CHECK(t.dtype() == ScalarType::Float64);
  CHECK(t.device() == Device::CPU);
  CHECK_FALSE(t.impl()->has_data());
  CHECK(t.key_set() == DispatchKeySet(DispatchKey::CPU).add(DispatchKey::Python));
}

TEST_CASE("a wrapper of checked geometry: the checks make_wrapper_tensor makes, once") {
  // Note [A wrapper of checked geometry]: check_wrapper_geometry throws what make_wrapper_tensor
  // would; make_checked_wrapper_tensor then gives the same tensor without checking again.
  const std::int64_t big = std::int64_t{1} << 62;
  CHECK_THROWS_WITH_AS(check_wrapper_geometry(IntArrayRef{2, -1}, IntArrayRef{1, 1}, 4),
                       "Trying to create tensor with negative dimension -1: [2, -1]", Error);
  CHECK_THROWS_WITH_AS(check_wrapper_geometry(IntArrayRef{2}, IntArrayRef{1, 1}, 4),
                       "make_wrapper_tensor: sizes [2] and strides [1, 1] differ in length", Error);
  CHECK_THROWS_WITH_AS(check_wrapper_geometry(IntArrayRef{4}, IntArrayRef{big}, 4),
                       doctest::Contains("Storage size calculation overflowed"), Error);
  CHECK_NOTHROW(check_wrapper_geometry(IntArrayRef{4}, IntArrayRef{big / 8}, 1));
  const CheckedGeometry empty = check_wrapper_geometry(IntArrayRef{0, 3}, IntArrayRef{3, 1}, 8);
  CHECK(empty.itemsize == 8);
  CHECK(empty.numel == 0);
  CHECK(empty.contiguous);
  // What it returns is the geometry's element count and contiguity, which the wrapper takes.
  const CheckedGeometry geometry = check_wrapper_geometry(IntArrayRef{2, 3}, IntArrayRef{1, 2}, 4);
  CHECK(geometry.numel == 6);
  CHECK_FALSE(geometry.contiguous);
  int seen = 0;
  const Tensor inner = tensor<float>({{1, 2, 3}, {4, 5, 6}});
  const Tensor checked = make_checked_wrapper_tensor(IntrusivePtr<TensorSubclass>(new PassThrough(inner, &seen)),
                                                     IntArrayRef{2, 3}, IntArrayRef{1, 2}, geometry, ScalarType::Float32,
                                                     Device::CPU);
  const Tensor plain = make_wrapper_tensor(IntrusivePtr<TensorSubclass>(new PassThrough(inner, &seen)), IntArrayRef{2, 3},
                                           IntArrayRef{1, 2}, 0, ScalarType::Float32, Device::CPU);
  CHECK(checked.sizes() == plain.sizes());
  CHECK(checked.strides() == plain.strides());
  CHECK(checked.storage_offset() == 0);
  CHECK(checked.is_contiguous() == plain.is_contiguous());
  CHECK(checked.numel() == plain.numel());
  CHECK(checked.key_set() == plain.key_set());
  CHECK(checked.subclass() != nullptr);
}

TEST_CASE("a mode that leaves the wrong values on the stack is a clear error") {
  struct Forgetful : DispatchMode {
    bool push_int = false;
    std::string_view name() const override { return "Forgetful"; }
    void dispatch(const OperatorHandle& op, Stack& stack) override {  // drops the arguments, never runs the op
      stack.resize(stack.size() - op.schema().arguments().size());
      if (push_int) stack.emplace_back(std::int64_t{3});
    }
  };
  Forgetful mode;
  const Tensor x = tensor<float>({1});
  ModeGuard guard(mode);
  CHECK_THROWS_WITH_AS(call_twice(x),
                       "[test::twice] the dispatch mode Forgetful handled test.twice.default but left 0 values on the stack; "
                       "expected 1 (the op's returns, in place of its arguments)",
                       Error);
  mode.push_int = true;
  CHECK_THROWS_WITH_AS(call_twice(x),
                       "[test::twice] the dispatch mode Forgetful handled test.twice.default but return #0 is int; expected a Tensor",
                       Error);
}

}  // namespace test_interposer
