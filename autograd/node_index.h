// autograd/node_index.h: NodeIndex, the map from a node's address to its number in one backward
// pass (PyTorch's engine keeps the same map as an unordered_map, dependencies_). A flat table with
// room for the few dozen nodes of a training step's graph, growing on the heap past that.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../core/util/small_vector.h"

namespace strata::autograd {

class Node;

// Note [A pass finds its nodes through a flat table]
// A backward pass looks up every node it reaches once per edge leading to it, while it walks the
// graph (GraphTask, graph_task.h). std::unordered_map allocates a list node per entry and reduces each
// hash modulo a prime, an integer division, in every lookup; for a graph of tens of nodes those
// allocations and divisions were a measurable part of a training step's backward. NodeIndex is open
// addressing with linear probing over a power-of-two array of (address, number) slots, kept at most
// half full: the slot is the top bits of the address times a 64-bit odd constant (Fibonacci hashing,
// which spreads the pool's 64-byte-aligned addresses), a lookup that misses stops at the first empty
// slot, and the table doubles and reinserts everything when it would be more than half full.
// Entries are never removed: a pass drops the whole index when it ends.
class NodeIndex {
 public:
  NodeIndex() { clear_slots(kInlineSlots); }

  // The number stored for `node`, or -1.
  std::int32_t find(const Node* node) const {
    for (std::size_t i = home(node);; i = next(i)) {
      if (slots_[i].node == node) return slots_[i].number;
      if (slots_[i].node == nullptr) return -1;
    }
  }

  // The number stored for `node`; if there is none, stores `number` for it and returns that. `added`
  // tells which.
  std::int32_t find_or_add(const Node* node, std::int32_t number, bool& added) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    std::size_t i = home(node);
    for (; slots_[i].node != nullptr; i = next(i))
      if (slots_[i].node == node) {
        added = false;
        return slots_[i].number;
      }
    slots_[i] = Slot{node, number};
    ++size_;
    added = true;
    return number;
  }

  std::size_t size() const { return size_; }

 private:
  struct Slot {
    const Node* node;  // null: empty
    std::int32_t number;
  };
  static_assert(std::is_trivially_copyable_v<Slot>);
  static constexpr std::size_t kInlineSlots = 64;  // room for 32 nodes

  std::size_t home(const Node* node) const {
    return static_cast<std::size_t>((reinterpret_cast<std::uintptr_t>(node) * 0x9E3779B97F4A7C15ULL) >> shift_);
  }
  std::size_t next(std::size_t i) const { return (i + 1) & (slots_.size() - 1); }

  void clear_slots(std::size_t count) {
    slots_.resize_for_overwrite(count);
    std::memset(slots_.data(), 0, count * sizeof(Slot));  // every slot empty
    shift_ = 64 - static_cast<unsigned>(std::countr_zero(count));
  }

  void grow() {
    const SmallVector<Slot, kInlineSlots> old(std::move(slots_));
    clear_slots(old.size() * 2);
    for (const Slot& s : old) {
      if (s.node == nullptr) continue;
      std::size_t i = home(s.node);
      while (slots_[i].node != nullptr) i = next(i);
      slots_[i] = s;
    }
  }

  SmallVector<Slot, kInlineSlots> slots_;
  unsigned shift_ = 0;  // 64 - log2(slots_.size())
  std::size_t size_ = 0;
};

}  // namespace strata::autograd
