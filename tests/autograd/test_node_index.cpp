// tests/autograd/test_node_index.cpp: NodeIndex, the address-to-task map of a backward pass.
#include <doctest/doctest.h>

#include <array>
#include <cstddef>

#include "autograd/node_index.h"

namespace test_node_index {  // Note [Test files in unity builds]

using strata::autograd::Node;
using strata::autograd::NodeIndex;

namespace {
// Addresses laid out as the node pool lays nodes out (64-byte aligned, adjacent); never dereferenced.
alignas(64) std::array<std::array<std::byte, 64>, 1000> addresses;
const Node* node_at(std::size_t i) { return reinterpret_cast<const Node*>(addresses[i].data()); }
}  // namespace

TEST_CASE("NodeIndex keeps the first number it was given for each address, past its inline room") {
  NodeIndex index;
  for (std::size_t i = 0; i < addresses.size(); ++i) {
    bool added = false;
    CHECK(index.find_or_add(node_at(i), static_cast<std::int32_t>(i), added) == static_cast<std::int32_t>(i));
    CHECK(added);
  }
  CHECK(index.size() == addresses.size());
  for (std::size_t i = 0; i < addresses.size(); ++i) {
    bool added = true;
    CHECK(index.find_or_add(node_at(i), -7, added) == static_cast<std::int32_t>(i));  // the stored number wins
    CHECK_FALSE(added);
    CHECK(index.find(node_at(i)) == static_cast<std::int32_t>(i));
  }
  CHECK(index.size() == addresses.size());
}

TEST_CASE("NodeIndex answers -1 for an address it does not hold") {
  NodeIndex index;
  CHECK(index.find(node_at(0)) == -1);
  bool added = false;
  index.find_or_add(node_at(1), 5, added);
  CHECK(index.find(node_at(0)) == -1);
  CHECK(index.find(node_at(2)) == -1);
  CHECK(index.find(node_at(1)) == 5);
}

}  // namespace test_node_index
