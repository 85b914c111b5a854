// tests/core/test_dispatch_keys.cpp: key-set algebra and the thread-local key guards.
#include <doctest/doctest.h>

#include "core/dispatch/local_dispatch_keys.h"

namespace test_dispatch_keys {  // Note [Test files in unity builds]

using namespace strata;

TEST_CASE("keys run in the order they are declared") {
  const DispatchKeySet all{DispatchKey::Meta, DispatchKey::CPU, DispatchKey::Python, DispatchKey::Autograd};
  CHECK(all.highest_priority() == DispatchKey::Autograd);
  CHECK(all.after(DispatchKey::Autograd).highest_priority() == DispatchKey::Python);
  CHECK(all.after(DispatchKey::Python).highest_priority() == DispatchKey::Meta);
  CHECK(all.after(DispatchKey::Meta).highest_priority() == DispatchKey::CPU);
  CHECK(all.after(DispatchKey::CPU).empty());
}

TEST_CASE("key sets combine as bitsets") {
  const DispatchKeySet a{DispatchKey::Autograd, DispatchKey::CPU};
  const DispatchKeySet b{DispatchKey::Python, DispatchKey::CPU};
  CHECK((a | b) == DispatchKeySet{DispatchKey::Autograd, DispatchKey::Python, DispatchKey::CPU});
  CHECK((a & b) == DispatchKeySet(DispatchKey::CPU));
  CHECK((a - b) == DispatchKeySet(DispatchKey::Autograd));
  CHECK(a.has(DispatchKey::CPU));
  CHECK_FALSE(a.has(DispatchKey::Python));
  CHECK(a.add(DispatchKey::Python).remove(DispatchKey::Autograd) == b);
  CHECK(DispatchKeySet().empty());
  CHECK(a.has_any(b));
  CHECK_FALSE(DispatchKeySet(DispatchKey::Meta).has_any(a));
  CHECK(a.str() == "[Autograd, CPU]");
  CHECK(DispatchKeySet::from_raw(a.raw()) == a);
  CHECK(backend_key(Device::Meta) == DispatchKey::Meta);
}

TEST_CASE("key guards restore the thread's sets on normal exit") {
  const LocalDispatchKeys before = local_dispatch_keys();
  {
    ExcludeKeyGuard exclude(DispatchKey::Autograd);
    IncludeKeyGuard include(DispatchKey::Python);
    CHECK(local_dispatch_keys().excluded.has(DispatchKey::Autograd));
    CHECK(local_dispatch_keys().included.has(DispatchKey::Python));
    {
      ExcludeKeyGuard again(DispatchKey::Autograd);  // nested: the outer guard's bit survives the inner exit
    }
    CHECK(local_dispatch_keys().excluded.has(DispatchKey::Autograd));
    SetIncludedKeyGuard off(DispatchKey::Python, false);
    CHECK_FALSE(local_dispatch_keys().included.has(DispatchKey::Python));
  }
  CHECK(local_dispatch_keys().included == before.included);
  CHECK(local_dispatch_keys().excluded == before.excluded);
}

TEST_CASE("key guards restore the thread's sets when an exception passes through") {
  const LocalDispatchKeys before = local_dispatch_keys();
  CHECK_THROWS_AS(
      [] {
        ExcludeKeyGuard exclude(DispatchKey::Autograd);
        IncludeKeyGuard include(DispatchKey::Python);
        throw std::runtime_error("boom");
      }(),
      std::runtime_error);
  CHECK(local_dispatch_keys().included == before.included);
  CHECK(local_dispatch_keys().excluded == before.excluded);
}

}  // namespace test_dispatch_keys
