// tests/tracer/explorer_fixtures.h: explorer pages the tests make (tests/tracer/test_explorer.cpp and
// the browser test's tests/browser/explorer_pages.cpp): one whose module and subclass names try to
// break out of the page, and one of a long step (about `ops` ops).
#pragma once

#include <string>

#include "autograd/backward.h"
#include "autograd/variable.h"
#include "core/interpose/interposer.h"
#include "modes/debug_mode.h"
#include "ops/functions.h"
#include "tracer/explorer.h"

namespace explorer_fixtures {

using namespace strata;

// A module name and a subclass name with a script, comment and quotes, and bytes that are not UTF-8.
inline const std::string kHostile = "</script><script>window.pwned=1</script><!-- \"'&<b>\xff\xfe";

// A wrapper subclass that runs every op on its inner tensor, named kHostile.
class HostileTensor final : public TensorSubclass {
 public:
  static Tensor wrap(const Tensor& elem) {
    IntrusivePtr<TensorSubclass> payload(new HostileTensor(elem));
    return make_wrapper_tensor(std::move(payload), elem.sizes(), elem.strides(), elem.storage_offset(), elem.dtype(),
                               elem.device());
  }
  std::string_view type_name() const override { return kHostile; }
  void dispatch(const OperatorHandle& op, Stack& stack) override {
    for_each_argument_tensor(op, stack, [&](Tensor& t) {
      if (const auto* h = dynamic_cast<const HostileTensor*>(t.subclass())) t = h->elem_;
    });
    op.call(stack);
    for_each_return_tensor(op, stack, [&](Tensor& t) {
      if (t.defined()) t = wrap(t);
    });
  }
  FlattenedTensor flatten(const Tensor&) const override { return FlattenedTensor{{"elem"}, {elem_}, nullptr}; }
  Tensor unflatten(const FlattenedTensor& flat, IntArrayRef, IntArrayRef) const override { return wrap(flat.inner.at(0)); }

 private:
  explicit HostileTensor(Tensor elem) : elem_(std::move(elem)) {}
  Tensor elem_;
};

// A module call named kHostile around an op on a HostileTensor, and a backward.
inline nlohmann::ordered_json hostile_record() {
  const Tensor x = requires_grad_(randn({2, 3}));
  tracer::ExplorerRecorder recorder({.profile = false});
  Tensor loss;
  {
    auto scope = tracer::get_active_debug_mode()->record_module_call(kHostile);
    const Tensor h = HostileTensor::wrap(ones({2, 3}));
    (void)add(h, 1.0);
    loss = sum(mul(x, 2.0));
  }
  recorder.set_phase("backward");
  backward(loss);
  return recorder.finish();
}

// A step of about `ops` ops: a chain of multiplications, and its backward (one mul per node).
inline nlohmann::ordered_json long_record(int ops) {
  const Tensor x = requires_grad_(randn({4}));
  tracer::ExplorerRecorder recorder;
  Tensor y = x;
  for (int i = 0; i < ops / 2; ++i) y = mul(y, 1.0001);
  const Tensor loss = sum(y);
  recorder.set_phase("backward");
  backward(loss);
  return recorder.finish();
}

}  // namespace explorer_fixtures
