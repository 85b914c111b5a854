// autograd/node.cpp: tearing a graph down.
#include "autograd/node.h"

#include "autograd/hooks.h"

namespace strata::autograd {

// Note [Deep graphs are torn down without recursion]
// A node owns the nodes its edges point at, so dropping the last reference to the head of a chain
// of a million ops would destroy a million nodes recursively, each from inside the one before, and
// overflow the stack. (PyTorch's deleteNode solves the same problem.) So recursion is bounded: the
// first kRecursiveTeardownDepth nodes of a chain die nested, each inside the destructor of the one
// above as it releases its edge (this thread's teardown_depth counts the levels), and a node that
// many levels down moves every edge it holds the last reference to onto a local work list and lets
// them die one at a time from the loop: each of those finds its own edges already taken, so the
// nesting grows by two at most. Saved tensors also hold nodes (a saved input's grad_fn), so a node
// on the work list releases them before its edges are taken; for a node being destroyed the derived
// class has already done so. A node without edges (a leaf's AccumulateGrad, the commonest one)
// cannot continue a chain and dies as its edge is released. A training step's graph (tens of nodes)
// thus dies without the work list, which would cost each node another virtual release_variables, a
// move of each edge and a push and pop; the work list is set up out of line.
namespace {
// How deep a chain dies by plain recursion: some hundred bytes of stack a level.
constexpr std::uint32_t kRecursiveTeardownDepth = 64;
// How many destructors of this thread are releasing an edge that continues a chain, one inside the other.
thread_local std::uint32_t teardown_depth = 0;

// Releases each edge; one holding the last reference to a node with edges of its own is kept in
// `out` instead of dying here. Edges are released in turn, so of two edges to the same node
// (mul(y, y)) the second is the last.
using WorkList = SmallVector<NodePtr, 8>;  // a chain keeps one or two; no heap for those

bool continues_chain(const NodePtr& f) { return f && f.use_count() == 1 && !f->next_edges().empty(); }

void take_sole_edges(Edge* first, Edge* last, WorkList& out) {
  for (; first != last; ++first) {
    NodePtr f = std::move(first->function);
    if (continues_chain(f)) out.push_back(std::move(f));
  }
}
}  // namespace

Node::~Node() {
  delete hooks_;
  for (Edge& e : next_edges_) {
    if (continues_chain(e.function)) {
      if (teardown_depth == kRecursiveTeardownDepth) [[unlikely]] {
        tear_down_from(&e);
        return;
      }
      ++teardown_depth;
      e.function.reset();  // the node below dies here, one level deeper
      --teardown_depth;
      continue;
    }
    e.function.reset();
  }
}

void Node::tear_down_from(Edge* first) {
  WorkList dying;
  take_sole_edges(first, next_edges_.end(), dying);
  while (!dying.empty()) {
    NodePtr node = std::move(dying.back());
    dying.pop_back();
    node->release_variables();  // saved tensors may hold the nodes below through their grad_fn
    take_sole_edges(node->next_edges_.begin(), node->next_edges_.end(), dying);
  }  // `node` dies at the end of each iteration, its sole-owned edges already taken
}

}  // namespace strata::autograd
