// tests/tracer/test_autograd_dot.cpp: to_dot's text, read structurally (no Graphviz needed): a node
// per autograd node with PyTorch's name, an edge per next edge, leaves and saved tensors with sizes.
#include <doctest/doctest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "autograd/node.h"
#include "autograd/variable.h"
#include "core/generator.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "ops/functions.h"
#include "tests/test_helpers.h"
#include "tracer/autograd_dot.h"
#include "tracer/cli/profile_step.h"

namespace test_autograd_dot {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::tracer;

namespace {

struct Dot {
  std::map<std::string, std::string> labels;  // id -> label (escapes kept)
  std::map<std::string, std::string> fills;   // id -> fillcolor
  std::vector<std::pair<std::string, std::string>> edges;
  std::vector<bool> undirected;
};

Dot parse(const std::string& text) {
  Dot d;
  const std::regex node_re(R"re(^\t(\d+) \[label="((?:[^"\\]|\\.)*)"(?: fillcolor=(\w+))?\]$)re");
  const std::regex edge_re(R"re(^\t(\d+) -> (\d+)( \[dir=none\])?$)re");
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  CHECK(line == "digraph {");
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, node_re)) {
      d.labels[m[1]] = m[2];
      if (m[3].matched) d.fills[m[1]] = m[3];
    } else if (std::regex_match(line, m, edge_re)) {
      d.edges.emplace_back(m[1], m[2]);
      d.undirected.push_back(m[3].matched);
    }
  }
  return d;
}

// The nodes reachable from `root`, each once, and how many valid next edges they have in all.
std::pair<std::set<const autograd::Node*>, std::size_t> walk(autograd::Node* root) {
  std::set<const autograd::Node*> seen{root};
  std::vector<autograd::Node*> stack{root};
  std::size_t edges = 0;
  while (!stack.empty()) {
    autograd::Node* n = stack.back();
    stack.pop_back();
    for (const autograd::Edge& e : n->next_edges()) {
      if (!e.valid()) continue;
      ++edges;
      if (seen.insert(e.function.get()).second) stack.push_back(e.function.get());
    }
  }
  return {seen, edges};
}

}  // namespace

TEST_CASE("the seed loss's graph: PyTorch's node names, an edge per next edge, leaves and saved tensors") {
  manual_seed(0);
  const auto model = nn::make_mlp({16, 32, 4});
  const Tensor x = randn({8, 16});
  const Tensor y = randint(0, 4, {8});
  const Tensor loss = nn::functional::cross_entropy((*model)(x), y);
  const Dot d = parse(to_dot(loss, model->named_parameters()));
  const auto [nodes, next_edges] = walk(loss.grad_fn());

  std::multiset<std::string> names;
  std::size_t leaves = 0, saved = 0;
  for (const auto& [id, label] : d.labels) {
    const auto fill = d.fills.find(id);
    if (fill == d.fills.end()) names.insert(label);
    else if (fill->second == "lightblue") ++leaves;
    else if (fill->second == "orange") ++saved;
  }
  CHECK(names.size() == nodes.size());
  CHECK(names.count("NllLossBackward0") == 1);
  CHECK(names.count("LogSoftmaxBackward0") == 1);
  CHECK(names.count("AddmmBackward0") == 2);
  CHECK(names.count("ReluBackward0") == 1);
  CHECK(names.count("TBackward0") == 2);
  CHECK(names.count("AccumulateGrad") == 4);
  CHECK(leaves == 4);  // one per parameter, named as named_parameters() names it
  std::set<std::string> leaf_labels;
  for (const auto& [id, fill] : d.fills)
    if (fill == "lightblue") leaf_labels.insert(d.labels.at(id));
  CHECK(leaf_labels == std::set<std::string>{"0.weight\\n (32, 16)", "0.bias\\n (32)", "2.weight\\n (4, 32)", "2.bias\\n (4)"});
  // Every next edge, a leaf -> AccumulateGrad edge per leaf, a dotted edge per saved tensor, and the
  // edge into the loss.
  std::size_t undirected = 0;
  for (const bool u : d.undirected) undirected += u;
  CHECK(undirected == saved);
  CHECK(d.edges.size() == next_edges + leaves + saved + 1);
  // What each node keeps, by PyTorch's attribute names (_saved_mat2 -> "mat2"): the first Linear's
  // addmm keeps mat1 only (its mat2's formula needs it; the input needs no gradient, so mat2 is not
  // kept), as PyTorch's guards decide.
  std::multiset<std::string> saved_labels;
  for (const auto& [id, fill] : d.fills)
    if (fill == "orange") saved_labels.insert(d.labels.at(id));
  CHECK(saved_labels == std::multiset<std::string>{"self\\n (8, 4)", "target\\n (8)", "total_weight\\n ()",
                                                   "result\\n (8, 4)", "mat2\\n (32, 4)", "mat1\\n (8, 32)",
                                                   "result\\n (8, 32)", "mat1\\n (8, 16)"});
  // The root is the loss: a 0-d tensor, in green.
  CHECK(d.fills.at("0") == "darkolivegreen1");
  CHECK(d.labels.at("0") == "\\n ()");
}

TEST_CASE("a tensor without history is a graph of itself; the text is the same every time") {
  const Tensor t = randn({2, 3});
  CHECK(to_dot(t).find("0 [label=\"\\n (2, 3)\" fillcolor=darkolivegreen1]") != std::string::npos);
  CHECK(to_dot(t).find("->") == std::string::npos);
  CHECK(mlp_graph_dot(MlpConfig{}) == mlp_graph_dot(MlpConfig{}));
}

}  // namespace test_autograd_dot
