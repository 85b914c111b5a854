// tracer/autograd_dot.cpp: walks the graph from the root's grad_fn, as torchviz's make_dot does.
#include "tracer/autograd_dot.h"

#include <map>
#include <sstream>

#include "autograd/accumulate_grad.h"
#include "autograd/formula_node.h"
#include "autograd/node.h"

namespace strata::tracer {

namespace {

// torchviz's size_to_str: "(32, 16)".
std::string size_text(IntArrayRef sizes) {
  std::string out = "(";
  for (std::size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
  return out + ")";
}

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') out += "\\n";
    else out += c;
  }
  return out + "\"";
}

class DotWriter {
 public:
  explicit DotWriter(const std::vector<std::pair<std::string, Tensor>>& params) {
    for (const auto& [name, t] : params)
      if (t.defined()) param_names_.emplace(t.impl(), name);
  }

  std::string run(const Tensor& root) {
    out_ << "digraph {\n\tgraph [size=\"12,12\"]\n"
         << "\tnode [align=left fontname=monospace fontsize=10 height=0.2 ranksep=0.1 shape=box style=filled]\n";
    const std::string root_id = new_id();
    node(root_id, var_label(root, ""), "darkolivegreen1");
    if (autograd::Node* fn = root.defined() ? root.grad_fn() : nullptr) {
      edge(visit(fn), root_id);
      while (!pending_.empty()) {
        autograd::Node* n = pending_.back();
        pending_.pop_back();
        expand(n);
      }
    }
    out_ << "}\n";
    return out_.str();
  }

 private:
  std::string new_id() { return std::to_string(next_id_++); }
  void node(const std::string& id, const std::string& label, const char* fill = nullptr) {
    out_ << "\t" << id << " [label=" << quoted(label);
    if (fill) out_ << " fillcolor=" << fill;
    out_ << "]\n";
  }
  void edge(const std::string& from, const std::string& to, bool undirected = false) {
    out_ << "\t" << from << " -> " << to << (undirected ? " [dir=none]" : "") << "\n";
  }
  // torchviz's get_var_name: the parameter's name (or nothing), then the sizes.
  std::string var_label(const Tensor& t, const std::string& fallback) const {
    std::string name = fallback;
    if (t.defined())
      if (auto it = param_names_.find(t.impl()); it != param_names_.end()) name = it->second;
    return name + "\n " + (t.defined() ? size_text(t.sizes()) : std::string("None"));
  }
  // The id of `n`, declaring it (and queuing it to expand) the first time.
  std::string visit(autograd::Node* n) {
    auto [it, fresh] = ids_.try_emplace(n, "");
    if (fresh) {
      it->second = new_id();
      node(it->second, std::string(n->name()));
      pending_.push_back(n);
    }
    return it->second;
  }
  void expand(autograd::Node* n) {
    const std::string id = ids_.at(n);
    if (const auto* f = dynamic_cast<const autograd::FormulaNode*>(n)) {
      for (const auto& [name, sizes] : f->saved_sizes()) {
        const std::string saved_id = new_id();
        node(saved_id, name + "\n " + size_text(sizes), "orange");
        edge(saved_id, id, /*undirected=*/true);
      }
    }
    if (const auto* acc = dynamic_cast<const autograd::AccumulateGrad*>(n)) {
      const std::string var_id = new_id();
      node(var_id, var_label(acc->variable(), ""), "lightblue");
      edge(var_id, id);
    }
    for (const autograd::Edge& e : n->next_edges())
      if (e.valid()) edge(visit(e.function.get()), id);
  }

  std::ostringstream out_;
  std::map<const void*, std::string> param_names_;
  std::map<const autograd::Node*, std::string> ids_;
  std::vector<autograd::Node*> pending_;
  int next_id_ = 0;
};

}  // namespace

std::string to_dot(const Tensor& root, const std::vector<std::pair<std::string, Tensor>>& params) {
  return DotWriter(params).run(root);
}

}  // namespace strata::tracer
