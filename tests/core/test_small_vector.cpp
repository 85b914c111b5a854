// tests/core/test_small_vector.cpp: SmallVector, the inline-first vector behind DimVector, the boxed
// stack and the engine's buffers: elements survive the move to the heap, destruction order, and
// growth that stays amortised when a vector is resized one element at a time.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/util/small_vector.h"

namespace test_small_vector {  // Note [Test files in unity builds]

using namespace strata;

namespace {

// Records every destruction, to check order and count.
struct Tracked {
  int id;
  std::vector<int>* destroyed;
  Tracked(int i, std::vector<int>* log) : id(i), destroyed(log) {}
  Tracked(const Tracked&) = default;
  Tracked(Tracked&& other) noexcept : id(other.id), destroyed(other.destroyed) { other.destroyed = nullptr; }
  ~Tracked() {
    if (destroyed) destroyed->push_back(id);
  }
};

}  // namespace

TEST_CASE("SmallVector keeps its elements when it moves from inline to the heap") {
  SmallVector<std::string, 2> v;
  for (int i = 0; i < 9; ++i) v.emplace_back("element " + std::to_string(i));
  REQUIRE(v.size() == 9);
  for (int i = 0; i < 9; ++i) CHECK(v[static_cast<std::size_t>(i)] == "element " + std::to_string(i));
  SmallVector<std::string, 2> moved(std::move(v));
  CHECK(moved.size() == 9);
  CHECK(moved[8] == "element 8");
  SmallVector<std::string, 2> copied(moved);
  CHECK(copied == moved);
}

TEST_CASE("SmallVector truncates last element first and destroys each element once") {
  std::vector<int> destroyed;
  {
    SmallVector<Tracked, 2> v;
    for (int i = 0; i < 5; ++i) v.emplace_back(i, &destroyed);  // goes to the heap at the third
    v.truncate(2);
    CHECK(destroyed == std::vector<int>{4, 3, 2});
    destroyed.clear();
  }
  CHECK(destroyed.size() == 2);
}

TEST_CASE("SmallVector::resize grows the capacity geometrically; reserve is exact") {
  SmallVector<std::int64_t, 4> v;
  std::size_t reallocations = 0;
  std::size_t capacity = v.capacity();
  bool always_fits = true;
  for (std::size_t n = 1; n <= 100000; ++n) {
    v.resize(n);
    if (v.capacity() != capacity) ++reallocations;
    capacity = v.capacity();
    always_fits = always_fits && capacity >= n;
  }
  CHECK(always_fits);
  // Doubling from 8 reaches 100000 in 14 steps; an exact resize would reallocate 99996 times.
  CHECK(reallocations <= 15);
  CHECK(v[99999] == 0);

  SmallVector<std::int64_t, 4> r;
  r.reserve(37);
  CHECK(r.capacity() == 37);
  r.resize_for_overwrite(38);
  CHECK(r.capacity() >= 74);
}

}  // namespace test_small_vector
